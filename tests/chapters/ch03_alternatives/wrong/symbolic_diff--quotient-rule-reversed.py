# The quotient rule's numerator reversed: (a·b' − a'·b)/b².
import inspect

from minigrad import symbolic

exec(inspect.getsource(symbolic.symbolic_diff).replace('(da * b - a * db)', '(a * db - da * b)'), namespace := dict(vars(symbolic)))
symbolic_diff = namespace["symbolic_diff"]
