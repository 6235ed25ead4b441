"""What the jit knows about each primitive, one row per op: the single place a new primitive is taught.

The primitives themselves (forward, VJP, JVP) are in `minigrad.ops` and listed in
`minigrad.ops.PRIMITIVES`; this table adds what the backends and drawings need, for the ops that have it:

* `elementwise`: output element i depends on element i of each (broadcast) operand only, so the op
  can join a fusion group (`ELEMENTWISE`);
* `view`: inside a fused body, a view of its operand (`broadcast_to`, `reshape`; `VIEWS`);
* `expression`: the op on one element, as Python source for a generated kernel. A format string:
  `{0}`, `{1}`, `{2}` are the operands, `{one}` and `{zero}` literals of the node's dtype, `{exp}`,
  `{tanh}`, ... the math function of that name, other fields the node's params (`{exponent}`). An op
  whose code depends on its params' values (clip's missing bounds) has a function instead,
  `expression(operands, params, context)` with `context.literal(value)` and `context.dtype`;
* `into`: numpy computing the op straight into a planned buffer, `into(*inputs, out=, **params)`;
* `commutative`: the order of the operands does not matter (drawings number the others' edges).

`EXPRESSIONS` is the table chapter 9's students generate kernels with: each template with plain
`math` functions and float literals, ready for `EXPRESSIONS[op].format(*operands, **params)`.
"""

import dataclasses
import string

import numpy as np


@dataclasses.dataclass(frozen=True)
class OpFacts:
    """One row of `TABLE` (see the module docstring for each field)."""

    elementwise: bool = False
    view: bool = False
    expression: object = None  # a format string, or a function (operands, params, context) -> str
    into: object = None
    commutative: bool = False


def _sigmoid_into(x, out):
    """The primitive's stable form: e^−|x| / (1 + e^−|x|) for x < 0, 1 / (1 + e^−|x|) otherwise."""
    np.abs(x, out=out)
    np.negative(out, out=out)
    with np.errstate(under="ignore"):
        np.exp(out, out=out)  # e = e^−|x| in (0, 1]
    denominator = out + 1.0
    np.copyto(out, 1.0, where=x >= 0)  # numerator: 1 where x >= 0, e elsewhere (out never aliases x)
    np.divide(out, denominator, out=out)


def _where_into(x, y, out, condition):
    np.copyto(out, y)
    np.copyto(out, x, where=condition)


def _clip_expression(a, params, context):
    x = a[0]
    if params["high"] is not None:
        high = context.literal(params["high"])
        x = f"({high} if {a[0]} > {high} else {x})"
    if params["low"] is not None:
        low = context.literal(params["low"])
        x = f"({low} if {a[0]} < {low} else {x})"
    return x


def _clip_mask_expression(a, params, context):
    tests = [f"{a[0]} >= {context.literal(params['low'])}"] if params["low"] is not None else []
    tests += [f"{a[0]} <= {context.literal(params['high'])}"] if params["high"] is not None else []
    one, zero = context.literal(1), context.literal(0)
    return f"{one} if {' and '.join(tests)} else {zero}" if tests else one


def _astype_expression(a, params, context):
    return f"{a[0]} != 0" if context.dtype == "bool" else f"np.{context.dtype}({a[0]})"


def _unary(function, into):
    return OpFacts(elementwise=True, expression=f"{{{function}}}({{0}})", into=into)


# 1 / (1 + e^-x) right of 0, e^x / (1 + e^x) left of it: e^(-|x|) never overflows, and unlike
# (tanh(x/2) + 1) / 2 nothing cancels in the left tail (which that form rounds to 0)
_SIGMOID = "{one} / ({one} + {exp}(-{0})) if {0} >= {zero} else {exp}({0}) / ({one} + {exp}({0}))"

TABLE = {
    "add": OpFacts(elementwise=True, expression="{0} + {1}", into=np.add, commutative=True),
    "sub": OpFacts(elementwise=True, expression="{0} - {1}", into=np.subtract),
    "mul": OpFacts(elementwise=True, expression="{0} * {1}", into=np.multiply, commutative=True),
    "div": OpFacts(elementwise=True, expression="{0} / {1}", into=np.true_divide),
    "neg": OpFacts(elementwise=True, expression="-{0}", into=np.negative),
    "exp": _unary("exp", np.exp),
    "log": _unary("log", np.log),
    "sin": _unary("sin", np.sin),
    "cos": _unary("cos", np.cos),
    "tanh": _unary("tanh", np.tanh),
    "sigmoid": OpFacts(elementwise=True, expression=_SIGMOID, into=_sigmoid_into),
    "power": OpFacts(
        elementwise=True,
        expression="{0} ** {exponent}",
        into=lambda x, out, exponent: np.power(x, exponent, out=out),
    ),
    # NaN < 0 is False: NaN passes through, as with np.maximum(x, 0)
    "relu": OpFacts(elementwise=True, expression="{zero} if {0} < {zero} else {0}", into=lambda x, out: np.maximum(x, 0, out=out)),
    "abs": OpFacts(elementwise=True, expression="abs({0})", into=np.absolute),
    "clip": OpFacts(elementwise=True, expression=_clip_expression),
    "astype": OpFacts(
        elementwise=True,
        expression=_astype_expression,
        into=lambda x, out, dtype: np.copyto(out, x, casting="unsafe"),
    ),
    "where": OpFacts(elementwise=True, expression="{0} if {2} else {1}", into=_where_into),
    # derivative factors that backward passes record
    "relu_mask": OpFacts(elementwise=True, expression="{one} if {0} > {zero} else {zero}"),
    "sign": OpFacts(
        elementwise=True,
        expression="{one} if {0} > {zero} else (-{one} if {0} < {zero} else {0})",
        into=np.sign,
    ),
    "clip_mask": OpFacts(elementwise=True, expression=_clip_mask_expression),
    "broadcast_to": OpFacts(view=True),
    "reshape": OpFacts(view=True),
    "matmul": OpFacts(into=np.matmul),
    "sum": OpFacts(into=lambda x, out, axis, keepdims: np.sum(x, axis=axis, keepdims=keepdims, out=out)),
    "max": OpFacts(into=lambda x, out, axis, keepdims: np.max(x, axis=axis, keepdims=keepdims, out=out)),
}

ELEMENTWISE = frozenset(op for op, facts in TABLE.items() if facts.elementwise)
VIEWS = frozenset(op for op, facts in TABLE.items() if facts.view)
INTO = {op: facts.into for op, facts in TABLE.items() if facts.into is not None}
COMMUTATIVE = frozenset(op for op, facts in TABLE.items() if facts.commutative)


class _PlainFields(dict):
    """The named fields of a template in plain Python: math functions, float literals; params stay fields."""

    def __missing__(self, name):
        return "{" + name + "}"


def _plain(template):
    fields = _PlainFields(one="1.0", zero="0.0", **{f: f"math.{f}" for f in ("exp", "log", "sin", "cos", "tanh")})
    return string.Formatter().vformat(template, ["{0}", "{1}", "{2}"], fields)


EXPRESSIONS = {op: _plain(facts.expression) for op, facts in TABLE.items() if isinstance(facts.expression, str)}
