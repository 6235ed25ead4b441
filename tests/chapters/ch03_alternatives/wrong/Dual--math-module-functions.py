# sin, cos, exp, log and tanh from the math module, which fails on numpy-array duals.
import inspect
import math

from minigrad import dual

exec(inspect.getsource(dual.Dual).replace('np.', 'math.'), namespace := {**vars(dual), 'math': math})
Dual = namespace["Dual"]
