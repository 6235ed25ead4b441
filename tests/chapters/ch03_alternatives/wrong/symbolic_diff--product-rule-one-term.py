# The product rule keeps only a'·b and drops a·b'.
import inspect

from minigrad import symbolic

exec(inspect.getsource(symbolic.symbolic_diff).replace('return da * b + a * db', 'return da * b'), namespace := dict(vars(symbolic)))
symbolic_diff = namespace["symbolic_diff"]
