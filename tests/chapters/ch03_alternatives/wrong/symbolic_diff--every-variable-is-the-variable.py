# Every variable differentiates to 1, not only the one asked for.
import inspect

from minigrad import symbolic

exec(inspect.getsource(symbolic.symbolic_diff).replace('const(1.0 if expr.name == var.name else 0.0)', 'const(1.0)'), namespace := dict(vars(symbolic)))
symbolic_diff = namespace["symbolic_diff"]
