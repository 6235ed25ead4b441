# No reflected operators (__radd__, __rsub__, __rmul__, __rtruediv__): 10.0 + x and 5.0 * x raise TypeError.
import inspect

from minigrad import dual

exec(inspect.getsource(dual.Dual), namespace := dict(vars(dual)))
Dual = namespace["Dual"]
del Dual.__radd__, Dual.__rsub__, Dual.__rmul__, Dual.__rtruediv__
