# The quotient rule with + instead of −: (bc + ad)/c².
import inspect

from minigrad import dual

exec(inspect.getsource(dual.Dual).replace('(self.tangent - quotient * other.tangent)', '(self.tangent + quotient * other.tangent)'), namespace := {**vars(dual)})
Dual = namespace["Dual"]
