"""Symbolic differentiation on tiny expression trees, for comparison with automatic differentiation.

An `Expr` is a formula: a constant, a variable, or an operation on sub-expressions. Python
operators and the `Tensor`-named methods (`sin`, `exp`, `tanh`, …) build expressions, so the same
Python function that runs on tensors or dual numbers, run on `var("x")`, returns its formula.
`symbolic_diff` turns a formula into the formula of its derivative by the rules of calculus —
exact, with no rounding, like SymPy or Mathematica do.

The price is *expression swell* (Baydin et al. 2018, §3.1): the product rule writes each factor
twice, so written out as a tree the derivative of a nested expression grows exponentially with
depth. Shared sub-expressions are the cure — `dag_size` counts the nodes of the same formula with
every repeated sub-expression stored once, and that count grows linearly, like the graph reverse
mode records. The two counters make that claim measurable.

Constructors simplify lightly as they build (constants fold; 0 and 1 vanish from sums and
products), which is what keeps derivatives readable; nothing else is rewritten.
"""

import numbers

import numpy as np

_BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_UNARY = {"neg", "sin", "cos", "exp", "log", "tanh"}
_NUMPY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "neg": np.negative,
    "sin": np.sin, "cos": np.cos, "exp": np.exp, "log": np.log, "tanh": np.tanh,
}  # fmt: skip
_PRECEDENCE = {"add": 1, "sub": 1, "mul": 2, "div": 2, "neg": 3}


class Expr:
    """A node of an expression: `op` with its sub-expressions `args`.

    `op` is "const" (a number in `value`), "var" (a name in `name`), one of the binary operations
    "add", "sub", "mul", "div" (two args) or one of the functions "neg", "sin", "cos", "exp",
    "log", "tanh" (one arg). Expressions are immutable; a sub-expression may be shared by several
    parents (that is what makes a tree a DAG).
    """

    __slots__ = ("op", "args", "value", "name")

    def __init__(self, op, args=(), value=None, name=None):
        if op not in _NUMPY and op not in ("const", "var"):
            raise ValueError(f"Expr: unknown operation {op!r}")
        self.op = op
        self.args = tuple(args)
        self.value = value
        self.name = name

    def __repr__(self):
        size = tree_size(self)
        if size > 200:
            return f"<Expr {self.op}: {size} nodes as a tree, {dag_size(self)} as a DAG>"
        return to_string(self)

    def __bool__(self):
        raise TypeError(
            "a symbolic expression has no truth value: a branch on it (if x > 0: ...) cannot be "
            "differentiated symbolically without piecewise expressions; automatic differentiation "
            "follows the branch actually taken"
        )

    # Operators (with Python numbers on either side) build simplified expressions.
    def __add__(self, other):
        return _add(self, lift(other))

    def __radd__(self, other):
        return _add(lift(other), self)

    def __sub__(self, other):
        return _sub(self, lift(other))

    def __rsub__(self, other):
        return _sub(lift(other), self)

    def __mul__(self, other):
        return _mul(self, lift(other))

    def __rmul__(self, other):
        return _mul(lift(other), self)

    def __truediv__(self, other):
        return _div(self, lift(other))

    def __rtruediv__(self, other):
        return _div(lift(other), self)

    def __neg__(self):
        if self.op == "const":
            return const(-self.value)
        return self.args[0] if self.op == "neg" else Expr("neg", (self,))

    def sin(self):
        return _function("sin", self)

    def cos(self):
        return _function("cos", self)

    def exp(self):
        return _function("exp", self)

    def log(self):
        return _function("log", self)

    def tanh(self):
        return _function("tanh", self)


def const(value):
    """The constant `value` as an expression."""
    return Expr("const", value=float(value))


def var(name):
    """The variable called `name` (its value is given at evaluation time)."""
    return Expr("var", name=name)


def lift(x):
    """An expression as is; a Python number as a constant."""
    if isinstance(x, Expr):
        return x
    if isinstance(x, numbers.Real):
        return const(x)
    raise TypeError(f"symbolic: cannot combine an expression with {type(x).__name__} {x!r}")


def _is(e, number):
    return e.op == "const" and e.value == number


def _node(op, *args):
    """`op(*args)`, folded into a constant when every argument is a constant."""
    if all(a.op == "const" for a in args):
        return const(_NUMPY[op](*[a.value for a in args]))
    return Expr(op, args)


def _add(a, b):
    if _is(a, 0):
        return b
    if _is(b, 0):
        return a
    return _node("add", a, b)


def _sub(a, b):
    if _is(b, 0):
        return a
    if _is(a, 0):
        return -b
    return _node("sub", a, b)


def _mul(a, b):
    if _is(a, 0) or _is(b, 0):
        return const(0.0)
    if _is(a, 1):
        return b
    if _is(b, 1):
        return a
    return _node("mul", a, b)


def _div(a, b):
    if _is(b, 1):
        return a
    if _is(a, 0) and not _is(b, 0):
        return const(0.0)
    return _node("div", a, b)


def _function(op, a):
    return _node(op, a)


def symbolic_diff(expr, var):
    """d expr / d var: a new expression, built by the differentiation rules applied recursively.

    Each rule writes the derivative of a node in terms of its arguments and their derivatives
    (the chain rule): (a·b)' = a'·b + a·b', sin(a)' = cos(a)·a', and so on. The arguments `a`, `b`
    are reused as they are, so the result shares them with `expr`; but the derivatives of a shared
    argument are recomputed on each visit, which is where the swell comes from. `var` is a
    variable expression (`var("x")`); other variables count as constants.
    """
    if expr.op == "const":
        return const(0.0)
    if expr.op == "var":
        return const(1.0 if expr.name == var.name else 0.0)
    a = expr.args[0]
    da = symbolic_diff(a, var)
    if expr.op in ("add", "sub", "mul", "div"):
        b = expr.args[1]
        db = symbolic_diff(b, var)
        if expr.op == "add":
            return da + db
        if expr.op == "sub":
            return da - db
        if expr.op == "mul":
            return da * b + a * db
        return (da * b - a * db) / (b * b)
    if expr.op == "neg":
        return -da
    if expr.op == "sin":
        return a.cos() * da
    if expr.op == "cos":
        return -a.sin() * da
    if expr.op == "exp":
        return expr * da
    if expr.op == "log":
        return da / a
    if expr.op == "tanh":
        return (1 - expr * expr) * da
    raise ValueError(f"symbolic_diff: no rule for operation {expr.op!r}")


def postorder(expr):
    """Every distinct node object below `expr` once, arguments before the nodes that use them.

    Iterative and memoised by identity, so it takes time linear in the number of node *objects*
    even when the tree they spell out is exponentially larger.
    """
    order, seen, stack = [], set(), [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
        elif id(node) not in seen:
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((arg, False) for arg in reversed(node.args))
    return order


def tree_size(expr):
    """The number of nodes of `expr` written out as a tree: a shared sub-expression counts once per use."""
    size = {}
    for node in postorder(expr):
        size[id(node)] = 1 + sum(size[id(arg)] for arg in node.args)
    return size[id(expr)]


def dag_size(expr):
    """The number of distinct sub-expressions of `expr`: its size with every repeat stored once.

    Two nodes are the same sub-expression when they have the same operation, the same constant
    or name, and the same arguments, whether or not they are the same Python object (common
    sub-expression elimination, as a computer-algebra system's hash-consing does it).
    """
    canonical, ids = {}, {}
    for node in postorder(expr):
        key = (node.op, node.value, node.name, tuple(ids[id(arg)] for arg in node.args))
        ids[id(node)] = canonical.setdefault(key, len(canonical))
    return len(canonical)


def evaluate(expr, env):
    """The value of `expr` with each variable's value taken from `env` (a dict name -> number or array)."""
    values = {}
    for node in postorder(expr):
        if node.op == "const":
            values[id(node)] = node.value
        elif node.op == "var":
            if node.name not in env:
                raise KeyError(f"evaluate: no value given for variable {node.name!r}")
            values[id(node)] = env[node.name]
        else:
            values[id(node)] = _NUMPY[node.op](*[values[id(arg)] for arg in node.args])
    return values[id(expr)]


def to_string(expr):
    """The formula in ordinary notation, with only the parentheses precedence requires."""
    text = {}
    for node in postorder(expr):
        if node.op == "const":
            text[id(node)] = f"{node.value:g}"
        elif node.op == "var":
            text[id(node)] = node.name
        elif node.op in _BINARY:
            a, b = node.args
            left = _wrapped(text[id(a)], a, _PRECEDENCE[node.op], strict=False)
            right = _wrapped(text[id(b)], b, _PRECEDENCE[node.op], strict=node.op in ("sub", "div"))
            text[id(node)] = f"{left} {_BINARY[node.op]} {right}"
        elif node.op == "neg":
            text[id(node)] = "-" + _wrapped(text[id(node.args[0])], node.args[0], _PRECEDENCE["neg"], strict=True)
        else:
            text[id(node)] = f"{node.op}({text[id(node.args[0])]})"
    return text[id(expr)]


def _wrapped(text, arg, precedence, strict):
    """`text` in parentheses when `arg` binds less tightly than its parent (or equally, on the right of - and /)."""
    inner = _PRECEDENCE.get(arg.op, 4)
    if arg.op == "const" and arg.value < 0:
        inner = _PRECEDENCE["neg"]
    return f"({text})" if inner < precedence or (strict and inner == precedence) else text


def to_sympy(expr):
    """The same formula as a SymPy expression (SymPy is optional; used only for cross-checks)."""
    import sympy

    functions = {"sin": sympy.sin, "cos": sympy.cos, "exp": sympy.exp, "log": sympy.log, "tanh": sympy.tanh}
    result = {}
    for node in postorder(expr):
        args = [result[id(arg)] for arg in node.args]
        if node.op == "const":
            result[id(node)] = sympy.Integer(int(node.value)) if node.value.is_integer() else sympy.Float(node.value)
        elif node.op == "var":
            result[id(node)] = sympy.Symbol(node.name)
        elif node.op == "add":
            result[id(node)] = args[0] + args[1]
        elif node.op == "sub":
            result[id(node)] = args[0] - args[1]
        elif node.op == "mul":
            result[id(node)] = args[0] * args[1]
        elif node.op == "div":
            result[id(node)] = args[0] / args[1]
        elif node.op == "neg":
            result[id(node)] = -args[0]
        else:
            result[id(node)] = functions[node.op](args[0])
    return result[id(expr)]
