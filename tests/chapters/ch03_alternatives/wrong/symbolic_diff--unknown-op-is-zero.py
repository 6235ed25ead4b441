# An operation without a rule silently differentiates to 0 instead of raising.
import inspect

from minigrad import symbolic

exec(inspect.getsource(symbolic.symbolic_diff).replace('raise ValueError(f"symbolic_diff: no rule for operation {expr.op!r}")', 'return const(0.0)'), namespace := dict(vars(symbolic)))
symbolic_diff = namespace["symbolic_diff"]
