# exp drops the chain rule: its tangent is exp(a) instead of exp(a)·b.
import inspect

from minigrad import dual

exec(inspect.getsource(dual.Dual).replace('return Dual(value, value * self.tangent)', 'return Dual(value, value)'), namespace := {**vars(dual)})
Dual = namespace["Dual"]
