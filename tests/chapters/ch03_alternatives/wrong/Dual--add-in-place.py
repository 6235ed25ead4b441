# __add__ updates its left operand in place and returns it (like +=): after a + b, a itself holds a + b.
import inspect

from minigrad import dual

exec(inspect.getsource(dual.Dual).replace('return Dual(self.primal + other.primal, self.tangent + other.tangent)', 'self.primal, self.tangent = self.primal + other.primal, self.tangent + other.tangent\n        return self'), namespace := {**vars(dual)})
Dual = namespace["Dual"]
