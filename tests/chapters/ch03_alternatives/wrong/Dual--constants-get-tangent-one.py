# A plain number is lifted with tangent 1, as if every constant were the variable.
import inspect

from minigrad import dual

exec(inspect.getsource(dual.Dual).replace('else Dual(x, 0.0)', 'else Dual(x, 1.0)'), namespace := {**vars(dual)})
Dual = namespace["Dual"]
