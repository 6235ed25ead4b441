"""The `Tensor`: a numpy array that remembers the operation that produced it.

A tensor made by an operation points to a `Node` (the operation, its input tensors and its
parameters). The node never points back to the tensor it produced, so a graph holds no reference
cycles: Python frees it by reference counting alone and the cyclic garbage collector never has to
walk it (micrograd's closures capture their output and pay for exactly that).

Operators and methods here only translate Python syntax into the primitives of `minigrad.ops`,
where each operation's forward, VJP and JVP live together.
"""

import numpy as np

import collections
import math
import os
import sys
import weakref

from .broadcasting import unbroadcast
from .errors import DtypeError, GraphError, MinigradError, ShapeError
from .grad_mode import state as _grad_state


class TracerError(MinigradError, TypeError):
    """A traced function needs the value of a tensor it is being traced on (`minigrad.jit.compile`).

    Tracing records operations, not values: a Python `if` on a tensor, `.item()`, `float()` or a
    boolean-mask index would be decided once, with the first call's data, and silently reused for
    every later call. Like JAX's ConcretizationTypeError, the tracer refuses instead.
    """


class _Versions:
    """PyTorch's version counter, kept off the hot path.

    Every in-place change of a tensor (`w -= ...` under no_grad, `add_`, `x[i] = v`, ...) advances
    `clock` and records, for that tensor, the clock of its latest change (`changed`: id -> (weak
    reference, clock)). Each `Node` remembers the clock when it was recorded. Before running a
    node's VJP rule, the engine asks `check`: a rule reading a tensor changed after its node was
    recorded would compute with the new values, so it raises instead. The engine's cost is one
    comparison per node (`node.epoch < clock`, false unless something changed since).
    """

    clock = 0
    changed = {}

    def bump(self, tensor):
        self.clock += 1
        key = id(tensor)
        entry = self.changed.get(key)
        if entry is not None and entry[0]() is tensor:  # changed before (an optimizer's every step): keep its weakref
            self.changed[key] = (entry[0], self.clock)
            return
        self.changed[key] = (weakref.ref(tensor, lambda _, key=key: self.changed.pop(key, None)), self.clock)

    def changed_since(self, tensor, epoch):
        entry = self.changed.get(id(tensor))
        return entry is not None and entry[0]() is tensor and entry[1] > epoch

    def check(self, out, node):
        """GraphError if `out` or an input of `node` changed in place after `node` was recorded."""
        name = node.op.name
        for role, tensor in [("output", out), *((f"input {i}", t) for i, t in enumerate(node.inputs or ()))]:
            if self.changed_since(tensor, node.epoch):
                raise GraphError(
                    f"backward: the {role} of '{name}' (shape {tensor.shape}) was changed in place after "
                    f"'{name}' used it, so its gradient would be computed from the new values. Run the "
                    f"forward pass again after the update (or update a copy: w = w - lr * g)"
                )


versions = _Versions()


class _Hooks:
    """The gradient hooks of tensors (`Tensor.register_hook`): id -> (weak reference, {token: hook}),
    kept off the tensor as the version counter is, so that tensors pay nothing for them; the
    backward pass looks a tensor up only while some hook exists (`table` is not empty)."""

    table = {}

    def add(self, tensor, hook):
        key = id(tensor)
        entry = self.table.get(key)
        if entry is None or entry[0]() is not tensor:
            entry = self.table[key] = (weakref.ref(tensor, lambda _, key=key: self.table.pop(key, None)), {})
        token = object()
        entry[1][token] = hook
        return RemovableHandle(self.table, key, token)

    def run(self, tensor, grad, raw):
        """The gradient of `tensor` after its hooks, in registration order: each gets the previous
        one's result (a Tensor) and may return a replacement. `raw`: `grad` is a bare array (a
        backward pass that records nothing), and so is the result."""
        ref, hooks = self.table[id(tensor)]
        if ref() is not tensor:
            return grad
        for hook in list(hooks.values()):
            replaced = hook(_result(grad, None) if raw else grad)
            if replaced is None:
                continue
            replaced = replaced if isinstance(replaced, Tensor) else Tensor(replaced)
            if replaced.shape != tensor.shape:
                raise ShapeError(
                    f"register_hook: hook {getattr(hook, '__name__', hook)!r} returned a gradient of shape "
                    f"{replaced.shape} for a tensor of shape {tensor.shape}"
                )
            grad = replaced.data if raw else replaced
        return grad


hooks = _Hooks()


class RemovableHandle:
    """What `register_hook` returns, as torch.utils.hooks.RemovableHandle: `remove()` takes that hook
    off the tensor (a second call does nothing)."""

    __slots__ = ("_table", "_key", "_token")

    def __init__(self, table, key, token):
        self._table, self._key, self._token = table, key, token

    def remove(self):
        entry = self._table.get(self._key)
        if entry is not None:
            entry[1].pop(self._token, None)
            if not entry[1]:
                del self._table[self._key]


class _Tracing:
    """`depth` > 0 while `minigrad.jit.compile` traces: traced tensors (those that require grad:
    the inputs, the parameters read at call time and everything computed from them) refuse to give
    up their values, and comparisons and `.detach()` record operations instead of constants."""

    depth = 0


tracing = _Tracing()
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_line():
    """'file:line: source' of the innermost caller outside minigrad (where the user wrote it)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:
        return "an unknown line"
    import linecache

    source = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" + (f": {source}" if source else "")


def _refuse_while_tracing(tensor, operation, advice):
    raise TracerError(
        f"jit.compile: {operation} needs the value of a tensor (shape {tensor.shape}) computed from the "
        f"compiled function's inputs or parameters, at {_user_line()}. A trace records operations, "
        f"not values: this value would be the first call's, reused by every later call. {advice}"
    )


_BRANCH_ADVICE = (
    "Compute both branches and choose with mg.where(condition, a, b), or run the function without jit.compile."
)
_VALUE_ADVICE = "Keep the value as a tensor (tensor operations are recorded), or run the function without jit.compile."


class Node:
    """How a tensor was computed: `op(*inputs, **params)`; what backward walks.

    `inputs` becomes None once a backward pass has freed the graph (unless `retain_graph=True`),
    which is how a second backward knows to fail loudly instead of doubling gradients.
    """

    __slots__ = ("op", "inputs", "params", "epoch")

    def __init__(self, op, inputs, params):
        self.op = op
        self.inputs = inputs
        self.params = params
        self.epoch = versions.clock  # in-place changes after this one make backward refuse (see versions)
        if _grad_state.record_hooks:  # a memory tracker or a jit trace is watching
            for hook in _grad_state.record_hooks:
                hook(self)

    def __repr__(self):
        return f"Node({self.op.name}, {len(self.inputs or ())} inputs, params={self.params})"

    @property
    def next_functions(self):
        """PyTorch's walk down the graph (`loss.grad_fn.next_functions[0][0]`): a pair per input,
        (its node, 0). A leaf that requires grad has no node; it stands in its own place (PyTorch
        puts an `AccumulateGrad` there, which accumulates into that tensor), and an input that needs
        no gradient gives None, as there."""
        if self.inputs is None:
            raise GraphError(
                f"next_functions: the inputs of this '{self.op.name}' node were freed by an earlier "
                f"backward(); pass retain_graph=True to it to walk the graph afterwards"
            )
        return tuple((t.node if t.node is not None else t if t.requires_grad else None, 0) for t in self.inputs)


def _as_array(data, dtype=None):
    """Float64 unless the data already has a float dtype (or `dtype` says otherwise)."""
    if isinstance(data, Tensor):
        data = data.data
    if isinstance(data, np.ndarray) and data.dtype.kind in "fiub":
        array = data  # the common case, checked for nothing more
    else:
        array = _checked_array(data)
    if dtype is not None:
        return np.asarray(array, dtype=dtype)
    if array.dtype.kind == "f":
        return array
    if isinstance(data, (np.ndarray, np.generic)) and array.dtype.kind in "iub":
        return array  # integer and boolean arrays stay as they are (labels, masks)
    return array.astype(np.float64)


def _checked_array(data):
    """`np.asarray(data)`, refusing what would silently become wrong numbers (None -> NaN, a
    complex number's lost imaginary part) or a raw numpy error (ragged lists, strings)."""
    try:
        array = np.asarray(data)
    except ValueError:  # numpy >= 1.24: an inhomogeneous nested sequence
        raise ShapeError(f"Tensor: the data is a ragged nested sequence, not a rectangular array: {_ragged(data)}") from None
    kind = array.dtype.kind
    if kind in "fiub":
        return array
    if kind == "c":
        raise DtypeError(
            f"Tensor: complex data (dtype {array.dtype}, shape {array.shape}) is not supported; minigrad "
            f"tensors are real. Pass the real part (data.real) and the imaginary part (data.imag) separately"
        )
    if kind in "US":
        raise DtypeError(f"Tensor: strings are not numbers: got {_preview(data)} (dtype {array.dtype}, shape {array.shape})")
    if kind == "O":
        if data is None:
            raise DtypeError("Tensor: the data is None; pass numbers, a (nested) list of numbers or a numpy array")
        if array.size and not any(v is None for v in array.flat):
            try:  # an object array of real numbers (Fractions, Decimals, mixed Python numbers) converts
                return array.astype(np.float64)
            except (TypeError, ValueError):
                pass
        raise DtypeError(
            f"Tensor: cannot make a numeric array of {_preview(data)} (numpy gives dtype object, shape "
            f"{array.shape}); the data must be numbers, nested lists of numbers of equal lengths, or an array"
        )
    raise DtypeError(f"Tensor: data of dtype {array.dtype} (shape {array.shape}) is not numeric")


def _preview(data, width=60):
    text = repr(data)
    return text if len(text) <= width else text[: width - 1] + "…"


def _ragged(data, path=()):
    """Where a nested sequence stops being rectangular, in words."""
    if not isinstance(data, (list, tuple)):
        return "(no rectangular shape)"
    lengths = [len(d) if isinstance(d, (list, tuple, np.ndarray)) else None for d in data]
    where = "".join(f"[{i}]" for i in path) or "the data"
    if len(set(lengths)) > 1:
        shown = ", ".join(f"element {i} {'has length ' + str(n) if n is not None else 'is a scalar'}" for i, n in enumerate(lengths[:4]))
        return f"in {where}, {shown}{', ...' if len(lengths) > 4 else ''}"
    for i, d in enumerate(data):
        if isinstance(d, (list, tuple)):
            found = _ragged(d, path + (i,))
            if not found.startswith("("):
                return found
    return "(no rectangular shape)"


class Tensor:
    """An n-dimensional array with reverse-mode automatic differentiation.

    `Tensor(data, requires_grad=False)` wraps `numpy.asarray(data)`: 0-d for scalars, float64
    unless `data` already has a float dtype. Leaves that require grad accumulate `.grad` over
    backward calls, as in PyTorch: call `zero_grad()` (or set `.grad = None`) between steps.
    """

    __slots__ = ("data", "grad", "requires_grad", "node", "_retains_grad", "_tangent", "__weakref__")

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        """numpy meeting a tensor. An operator with an array or numpy scalar on the left
        (`array * t`, `array < t`) is the tensor's reflected operator, recorded in the graph. An
        in-place operator on an array (`p.data += -lr * p.grad`, PyTorch's manual update, `.data`
        being the array here) writes the tensor's values into the array, outside any graph, as
        PyTorch's `.data` does. Any other numpy ufunc is refused: its array result would silently
        leave the graph."""
        if method == "__call__" and out is not None and not any(isinstance(o, Tensor) for o in out):
            for x in inputs:
                if tracing.depth and isinstance(x, Tensor) and x.requires_grad:
                    _refuse_while_tracing(x, f"an in-place numpy operation on an array ({ufunc.__name__} with out=)", _VALUE_ADVICE)
            return ufunc(*(x.data if isinstance(x, Tensor) else x for x in inputs), out=out, **kwargs)
        names = _NUMPY_OPERATORS.get(ufunc)
        if method == "__call__" and out is None and not kwargs and names and len(inputs) == 2:
            a, b = inputs
            return getattr(a, names[0])(b) if isinstance(a, Tensor) else getattr(b, names[1])(a)
        raise TypeError(
            f"numpy's {ufunc.__name__} does not take minigrad Tensors: its result would be an array outside the graph. "
            f"Use the tensor's own operation (mg.{ufunc.__name__}(t) or t.{ufunc.__name__}() where minigrad has it), "
            f"or compute on the values, t.detach().numpy()"
        )

    def __array__(self, dtype=None, copy=None):
        """The values for numpy (`np.asarray(t)`, matplotlib's `plt.plot(t)`), as PyTorch's: only
        for a tensor that does not require grad, whose graph the array would silently leave.
        `np.array(t)` copies (numpy asks with `copy=True`); `np.asarray(t)` shares the memory."""
        if self.requires_grad:
            raise TypeError(
                f"numpy cannot take a tensor that requires grad (shape {self.shape}) without leaving its graph: "
                f"pass t.detach() (or t.detach().numpy())"
            )
        if dtype is not None:
            return self.data.astype(dtype, copy=bool(copy))
        return self.data.copy() if copy else self.data

    def __init__(self, data, requires_grad=False, dtype=None):
        if tracing.depth and isinstance(data, Tensor) and data.requires_grad:
            _refuse_while_tracing(data, "Tensor(t) (a new leaf holding t's values)", "Use t itself, or t.detach().")
        self.data = _as_array(data, dtype)
        if requires_grad and self.data.dtype.kind != "f":
            raise DtypeError(
                f"Tensor: only floating-point tensors can require gradients, got dtype "
                f"{self.data.dtype} with shape {self.data.shape}; convert with .astype(float) first"
            )
        self.grad = None
        self.requires_grad = bool(requires_grad)
        self.node = None
        self._retains_grad = False
        self._tangent = None

    # Tensor._result(data, node), the fast constructor of operation results, is the module-level
    # _result below the class (attached after it, since it names the class).

    # ----------------------------------------------------------------- array facts
    shape = property(lambda self: self.data.shape, doc="The shape of the underlying array.")
    dtype = property(lambda self: self.data.dtype, doc="The numpy dtype of the underlying array.")
    ndim = property(lambda self: self.data.ndim, doc="Number of dimensions.")
    size = property(lambda self: _Size(self.data.size), doc="Number of elements (an int; the shape is `.shape`).")

    @property
    def is_leaf(self):
        """True for tensors not produced by a recorded operation (inputs and parameters)."""
        return self.node is None

    @property
    def op(self):
        """The name of the operation that produced this tensor, or None for a leaf."""
        return None if self.node is None else self.node.op.name

    @property
    def device(self):
        """Where the data lives, PyTorch's `x.device`: always "cpu" (a numpy array in host memory)."""
        return "cpu"

    @property
    def grad_fn(self):
        """PyTorch's name for `.node`: the recorded operation that made this tensor (None for a leaf)."""
        return self.node

    @property
    def parents(self):
        """The input tensors of the operation that produced this tensor (empty for a leaf)."""
        if self.node is None:
            return ()
        if self.node.inputs is None:
            raise GraphError(_freed_message(self))
        return self.node.inputs

    # Not attributes of a tensor: `x.max(1).values` meets a PyTorch habit with numpy's meaning of
    # x.max(1). Properties, not a __getattr__, which would slow every attribute lookup on tensors.
    @property
    def values(self):
        raise AttributeError(_PAIR_HINT.format(name="values"))

    @property
    def indices(self):
        raise AttributeError(_PAIR_HINT.format(name="indices"))

    def __len__(self):
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self.data)

    def __iter__(self):
        """The sub-tensors along the first axis, each `self[i]` (recorded, so gradients flow), as in
        PyTorch. Without this method Python would iterate by indexing until an IndexError, and an
        index past the end is a ShapeError here."""
        if self.data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(len(self.data)))

    def __repr__(self):
        body = np.array2string(self.data, precision=4, separator=", ", prefix="tensor(")
        extra = f", op={self.op}" if self.node is not None else ""
        extra += ", requires_grad=True" if self.requires_grad and self.node is None else ""
        return f"tensor({body}{extra})"

    __hash__ = object.__hash__  # tensors are dictionary keys by identity, like PyTorch's

    # ----------------------------------------------------------------- conversion
    def numpy(self):
        """The underlying numpy array (shared, not copied)."""
        if tracing.depth and self.requires_grad:
            _refuse_while_tracing(self, ".numpy()", _VALUE_ADVICE)
        return self.data

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if tracing.depth and self.requires_grad:
            _refuse_while_tracing(self, ".item()", _VALUE_ADVICE)
        if self.data.size != 1:
            raise ValueError(f"item(): tensor of shape {self.shape} has {self.size} elements, not 1")
        return self.data.item()

    def tolist(self):
        """The values as (nested) Python lists of numbers, like `numpy.ndarray.tolist`."""
        if tracing.depth and self.requires_grad:
            _refuse_while_tracing(self, ".tolist()", _VALUE_ADVICE)
        return np.asarray(self.data).tolist()

    def __float__(self):
        if tracing.depth and self.requires_grad:
            _refuse_while_tracing(self, "float()", _VALUE_ADVICE)
        return float(self.item())

    def __format__(self, spec):
        """f"{loss:.4f}" formats a one-element tensor's value, as PyTorch does; other tensors take
        no format spec."""
        if not spec:
            return str(self)
        if self.data.size != 1:
            raise TypeError(f"format: only a one-element tensor takes a format spec ({spec!r}), got shape {self.shape}")
        return format(self.item(), spec)

    def __int__(self):
        if tracing.depth and self.requires_grad:
            _refuse_while_tracing(self, "int()", _VALUE_ADVICE)
        if self.data.size != 1:
            raise TypeError(f"int(): only a one-element tensor converts to a Python int, got shape {self.shape}")
        return int(self.data.item())

    def detach(self):
        """The same data, cut from the graph: gradients do not flow through the result."""
        if tracing.depth and self.requires_grad:  # jit.compile: recompute it per call, never freeze it
            return _ops.stop_gradient(self)
        return Tensor._result(self.data, None)

    def detach_(self):
        """Cut this tensor from the graph in place (PyTorch's `detach_`): it becomes a leaf that
        requires no grad, and returns itself. Unlike PyTorch, where operations already recorded on
        it keep their path to the graph, minigrad's walk back from them now stops here."""
        if tracing.depth and self.requires_grad:
            _refuse_while_tracing(self, "detach_() (an in-place change)", "Write x = x.detach() inside a compiled function.")
        self.node, self.requires_grad, self._tangent = None, False, None
        return self

    def astype(self, dtype):
        """A copy converted to `dtype` (differentiable between float dtypes)."""
        return _ops.astype(self, dtype=np.dtype(dtype))

    def requires_grad_(self, flag=True):
        """Mark a leaf as a parameter (or freeze it with False); returns self."""
        if not self.is_leaf:
            raise GraphError(
                f"requires_grad_(): only leaves can change requires_grad; this tensor came from "
                f"'{self.op}'. Use .detach() to cut it from the graph."
            )
        if flag and self.data.dtype.kind != "f":
            raise DtypeError(f"requires_grad_(): integer tensor of dtype {self.dtype} cannot require grad")
        self.requires_grad = bool(flag)
        return self

    def retain_grad(self):
        """Keep `.grad` on this intermediate tensor after backward (leaves always keep it)."""
        self._retains_grad = True
        return self

    def register_hook(self, hook):
        """Call `hook(grad)` whenever a backward pass has this tensor's gradient complete, before it
        is used (accumulated into a leaf's `.grad`, passed on to an intermediate's inputs, returned
        by `gradients`), as PyTorch's: a tensor it returns replaces the gradient, None keeps it.
        With `create_graph=True` the hook's arithmetic is recorded too. Returns a handle whose
        `remove()` takes the hook off."""
        if not self.requires_grad:
            raise GraphError(f"register_hook: the tensor (shape {self.shape}) does not require grad, so it never gets a gradient")
        return hooks.add(self, hook)

    def zero_grad(self):
        """Forget the accumulated gradient."""
        self.grad = None

    def backward(self, grad=None, retain_graph=None, create_graph=False, *, gradient=None):
        """Accumulate d(self)/d(leaf) into the `.grad` of every leaf that requires grad.

        A non-scalar tensor needs `grad` (the vector of the vector-Jacobian product; `gradient=` is
        PyTorch's name for it). The graph is freed afterwards unless `retain_graph=True` (which
        `create_graph=True` implies); `create_graph=True` records the backward pass itself so that
        the gradients can be differentiated again (Hessian-vector products).
        """
        if gradient is not None:
            if grad is not None:
                raise TypeError("backward: pass grad= or gradient= (the same thing), not both")
            grad = gradient
        _autograd.backward(self, grad, retain_graph=retain_graph, create_graph=create_graph)

    # ----------------------------------------------------------------- arithmetic
    def _lift(self, other):
        """Python numbers and arrays join an operation as constants of this tensor's dtype."""
        if isinstance(other, Tensor):
            if other.data.dtype.kind in "iub" and self.data.dtype.kind == "f" and not other.requires_grad:
                return _as_float(other, self.data.dtype)
            return other
        if isinstance(other, (int, float)):
            # A numpy scalar rather than a 0-d array: arithmetic between numpy scalars skips the
            # ufunc machinery (see ops.add), and making one costs half as much.
            dtype = self.data.dtype
            if dtype.kind != "f":  # promote like numpy: integer tensor + 0.5 is float, not truncated
                dtype = np.result_type(dtype, other)
            return Tensor._result(dtype.type(other), None)
        return Tensor(other)

    def _pair(self, other):
        """(self, other) as the operands of `self op other`: `other` lifted, and this tensor, when
        it is an integer or boolean one meeting a float tensor, as a constant of that float dtype."""
        if isinstance(other, Tensor) and other.data.dtype is self.data.dtype:
            return self, other  # the common case, where neither needs lifting: one call fewer per operation
        other = self._lift(other)
        if self.data.dtype.kind in "iub" and other.data.dtype.kind == "f" and not self.requires_grad:
            return _as_float(self, other.data.dtype), other
        return self, other

    def __add__(self, other):
        return _ops.add(*self._pair(other))

    def __radd__(self, other):
        return _ops.add(self._lift(other), self)

    def __sub__(self, other):
        return _ops.sub(*self._pair(other))

    def __rsub__(self, other):
        return _ops.sub(self._lift(other), self)

    def __mul__(self, other):
        return _ops.mul(*self._pair(other))

    def __rmul__(self, other):
        return _ops.mul(self._lift(other), self)

    def __truediv__(self, other):
        return _ops.div(*self._pair(other))

    def __rtruediv__(self, other):
        return _ops.div(self._lift(other), self)

    def __neg__(self):
        return _ops.neg(self)

    def __pow__(self, exponent):
        if isinstance(exponent, (int, float, np.integer, np.floating)):  # x ** np.int64(2) works for x < 0
            return _ops.power(self, exponent=float(exponent))
        return _ops.pow(*self._pair(exponent))  # a tensor exponent: the binary power primitive

    def __rpow__(self, base):
        return _ops.pow(self._lift(base), self)

    def __matmul__(self, other):
        return _ops.matmul_any(*self._pair(other))

    def __rmatmul__(self, other):
        return _ops.matmul_any(self._lift(other), self)

    # `mask & other_mask`, `|`, `^`, `~`: logical on bool tensors, bitwise on integer ones, as in
    # PyTorch; no gradient, and a float operand is refused by name (bitwise_and & co.)
    def __and__(self, other):
        return _functional.bitwise_and(self, other)

    def __rand__(self, other):
        return _functional.bitwise_and(other, self)

    def __or__(self, other):
        return _functional.bitwise_or(self, other)

    def __ror__(self, other):
        return _functional.bitwise_or(other, self)

    def __xor__(self, other):
        return _functional.bitwise_xor(self, other)

    def __rxor__(self, other):
        return _functional.bitwise_xor(other, self)

    def __invert__(self):
        return _functional.bitwise_not(self)

    # ----------------------------------------------------------------- in-place updates
    # `w -= lr * w.grad` under no_grad (the manual SGD step), `add_`, `zero_`, `x[i] = v`: the data
    # changes in place (views of it, like .numpy(), see the change, as in PyTorch) and the tensor
    # stays the same object, so a parameter stays a leaf. While gradients are recorded, an in-place
    # change of a tensor taking part in a graph is refused (a leaf parameter) or, for the operators
    # (`h += x @ w`), computed out of place as before: Python rebinds the name to the new tensor.
    def _inplace(self, name, other, compute, operator=None):
        other_grad = isinstance(other, Tensor) and other.requires_grad
        if tracing.depth and (self.requires_grad or other_grad):
            if operator is not None:
                return None  # `x += 1` in a compiled function: recorded out of place, like any operation
            _refuse_while_tracing(self, f"{name} (an in-place change)", "Write x = x + y inside a compiled function.")
        if _grad_state.grad_enabled and (self.requires_grad or other_grad):
            if operator is not None and not (self.requires_grad and self.node is None):
                return None  # out of place: the caller returns the new tensor
            if self.requires_grad and self.node is None:
                raise GraphError(
                    f"{name}: in-place change of a leaf tensor (shape {self.shape}) that requires grad while "
                    f"gradients are recorded. Update parameters under `with mg.no_grad():` (as an optimizer "
                    f"step does), or make a new tensor: w = w {operator or '-'} ..."
                )
            raise GraphError(
                f"{name}: in-place change of a tensor (shape {self.shape}) that is part of a recorded graph"
                f"{' (made by ' + repr(self.op) + ')' if self.op else ''} or of a value that requires grad; "
                f"minigrad records no in-place operations. Write x = x {operator or '+'} y, or use no_grad()"
            )
        values = compute(self.data, other.data if isinstance(other, Tensor) else other)
        self._write(name, values)
        return self

    def _write(self, name, values, index=None):
        values = np.asarray(values)
        data = self.data
        if index is None and values.shape != self.shape:
            if np.broadcast_shapes(values.shape, self.shape) != self.shape:
                raise ShapeError(f"{name}: cannot write a value of shape {values.shape} into a tensor of shape {self.shape}")
        if values.dtype.kind == "c" or (values.dtype.kind == "f" and data.dtype.kind in "iub"):
            raise DtypeError(f"{name}: a {values.dtype} value cannot be stored in place in a tensor of dtype {data.dtype}")
        if not (isinstance(data, np.ndarray) and data.flags.writeable):
            data = self.data = np.array(data)  # a numpy scalar or a read-only view: take an array of our own
        try:
            if index is None:
                np.copyto(data, values, casting="same_kind")
            else:
                data[index] = values
        except (ValueError, IndexError, TypeError) as error:
            raise ShapeError(f"{name}: cannot write a value of shape {values.shape} into a tensor of shape {self.shape}: {error}") from None
        versions.bump(self)

    def __iadd__(self, other):
        result = self._inplace("+=", other, np.add, "+")
        return self + other if result is None else result

    def __isub__(self, other):
        result = self._inplace("-=", other, np.subtract, "-")
        return self - other if result is None else result

    def __imul__(self, other):
        result = self._inplace("*=", other, np.multiply, "*")
        return self * other if result is None else result

    def __itruediv__(self, other):
        result = self._inplace("/=", other, np.true_divide, "/")
        return self / other if result is None else result

    def add_(self, other, alpha=1):
        """self += alpha * other, in place (under no_grad for tensors in a graph); returns self."""
        return self._inplace("add_", other, lambda a, b: a + alpha * np.asarray(b))

    def sub_(self, other, alpha=1):
        """self -= alpha * other, in place; returns self."""
        return self._inplace("sub_", other, lambda a, b: a - alpha * np.asarray(b))

    def mul_(self, other):
        """self *= other, in place; returns self."""
        return self._inplace("mul_", other, np.multiply)

    def div_(self, other):
        """self /= other, in place; returns self."""
        return self._inplace("div_", other, np.true_divide)

    def copy_(self, source):
        """Overwrite the values with `source`'s (broadcast to this shape), in place; returns self."""
        return self._inplace("copy_", source, lambda a, b: np.broadcast_to(np.asarray(b), np.shape(a)))

    def fill_(self, value):
        """Set every element to `value`, in place; returns self."""
        return self._inplace("fill_", value, lambda a, b: np.full(np.shape(a), b))

    def zero_(self):
        """Set every element to 0, in place (`p.grad.zero_()`); returns self."""
        return self._inplace("zero_", 0, lambda a, b: np.zeros(np.shape(a), dtype=np.asarray(a).dtype))

    def fill_diagonal_(self, fill_value, wrap=False):
        """Set the main diagonal to `fill_value`, in place (`torch.Tensor.fill_diagonal_`): of a
        matrix, or of a tensor whose dimensions are all equal (the elements [i, i, ..., i]). A tall
        matrix's diagonal stops at its last column unless `wrap=True` starts it again one row below."""
        if self.ndim < 2 or (self.ndim > 2 and len(set(self.shape)) > 1):
            raise ShapeError(f"fill_diagonal_: needs a matrix, or a tensor whose dimensions are all equal, got shape {self.shape}")

        def fill(a, value):
            a = np.array(a)
            np.fill_diagonal(a, value, wrap=wrap)
            return a

        return self._inplace("fill_diagonal_", fill_value, fill)

    # The in-place random initializers (what `nn.init` calls, and PyTorch code writes to fill a
    # weight), drawn from `generator` (a `mg.Generator`) or else the one `mg.manual_seed` seeded.
    # Each checks its parameters as PyTorch does; a float draw into an integer tensor is refused.
    def _draw_(self, name, draw, generator):
        """Fill self with `draw(rng, shape)` in place, refused as `fill_` is while gradients are recorded."""
        rng = _creation.generator_for(name, generator=generator)
        return self._inplace(name, None, lambda a, _: draw(rng, np.shape(a)))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Normal samples of mean `mean` and standard deviation `std`, in place; returns self."""
        _check_parameter("normal_", std >= 0, f"std >= 0, got {std}")
        return self._draw_("normal_", lambda rng, shape: rng.normal(mean, std, shape), generator)

    def uniform_(self, from_=0.0, to=1.0, *, generator=None):
        """Samples uniform on [from_, to), in place (PyTorch's `from`, a Python keyword here `from_`)."""
        _check_parameter("uniform_", from_ <= to, f"from <= to, got from={from_} > to={to}")
        return self._draw_("uniform_", lambda rng, shape: rng.uniform(from_, to, shape), generator)

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        """Samples e^z for z normal of mean `mean` and standard deviation `std`, in place."""
        _check_parameter("log_normal_", std > 0, f"std > 0, got {std}")
        return self._draw_("log_normal_", lambda rng, shape: rng.lognormal(mean, std, shape), generator)

    def exponential_(self, lambd=1.0, *, generator=None):
        """Exponential samples of rate `lambd` (mean 1 / lambd), in place."""
        _check_parameter("exponential_", lambd > 0, f"lambd > 0, got {lambd}")
        return self._draw_("exponential_", lambda rng, shape: rng.exponential(1.0 / lambd, shape), generator)

    def geometric_(self, p, *, generator=None):
        """The number of Bernoulli(p) trials up to the first success (1, 2, ...), in place."""
        _check_parameter("geometric_", 0 < p < 1, f"p in (0, 1), got {p}")
        return self._draw_("geometric_", lambda rng, shape: rng.geometric(p, shape), generator)

    def bernoulli_(self, p=0.5, *, generator=None):
        """1 with probability p, else 0, in place; `p` a number or a tensor of probabilities that
        broadcasts to this shape (an integer tensor takes the draws too)."""
        p = p.data if isinstance(p, Tensor) else p
        _check_parameter("bernoulli_", np.all((np.asarray(p) >= 0) & (np.asarray(p) <= 1)), "probabilities in [0, 1]")
        return self._draw_("bernoulli_", lambda rng, shape: rng.random(shape) < p, generator)

    def random_(self, *bounds, generator=None):
        """Integers uniform on [from, to), in place, as `torch.Tensor.random_`: `random_(to)`,
        `random_(from, to)`, or `random_()` (and `random_(from, None)`) up to the largest integer the
        dtype holds exactly, included: 2^(mantissa digits) for a float, the maximum for an integer."""
        if len(bounds) > 2:
            raise TypeError(f"random_: takes (), (to) or (from, to), got {len(bounds)} arguments")
        low, high = (0, bounds[0]) if len(bounds) == 1 else (bounds + (0, None))[:2]
        dtype, kind = self.dtype, self.dtype.kind
        largest = 2 ** (np.finfo(dtype).nmant + 1) if kind == "f" else 1 if kind == "b" else int(np.iinfo(dtype).max)
        last = largest if high is None else high - 1
        _check_parameter("random_", low <= last, f"from < to, got from={low} >= to={high}")
        if kind != "f":
            smallest = 0 if kind == "b" else int(np.iinfo(dtype).min)
            _check_parameter("random_", smallest <= low and last <= largest, f"[from, to) inside the range of {dtype}, got [{low}, {high})")
        integers = dtype if kind != "f" else np.int64
        return self._draw_("random_", lambda rng, shape: rng.integers(low, last, shape, dtype=integers, endpoint=True), generator)

    def __setitem__(self, index, value):
        """x[index] = value, in place (under no_grad for tensors in a graph)."""
        value_grad = isinstance(value, Tensor) and value.requires_grad
        if _grad_state.grad_enabled and (self.requires_grad or value_grad):
            raise GraphError(
                f"item assignment: in-place change of a tensor (shape {self.shape}) that "
                f"{'requires grad' if self.requires_grad else 'would take a value that requires grad'} while "
                f"gradients are recorded; minigrad records no in-place operations. Do it under `with mg.no_grad():`, "
                f"or build the result out of place (mg.where(mask, value, x), mg.concatenate)"
            )
        if tracing.depth and (self.requires_grad or value_grad):
            _refuse_while_tracing(self, "item assignment", "Build the result with mg.where or mg.concatenate.")
        self._write("item assignment", value.data if isinstance(value, Tensor) else value, index=_ops.plain_index(index))

    # Comparisons give constant boolean tensors (masks), never part of the graph; while jit.compile
    # traces, a comparison of a traced tensor is an operation of the graph (ops.greater & co.).
    def _compare(self, other, fn, name):
        if tracing.depth and (self.requires_grad or (isinstance(other, Tensor) and other.requires_grad)):
            return getattr(_ops, name)(self, self._lift(other))
        other = other.data if isinstance(other, Tensor) else other
        return Tensor._result(fn(self.data, other), None)

    def __lt__(self, other):
        return self._compare(other, np.less, "less")

    def __le__(self, other):
        return self._compare(other, np.less_equal, "less_equal")

    def __gt__(self, other):
        return self._compare(other, np.greater, "greater")

    def __ge__(self, other):
        return self._compare(other, np.greater_equal, "greater_equal")

    def __eq__(self, other):
        return self._compare(other, np.equal, "equal")

    def __ne__(self, other):
        return self._compare(other, np.not_equal, "not_equal")

    def __bool__(self):
        if tracing.depth and self.requires_grad:
            _refuse_while_tracing(self, "a Python `if`, `while`, `and`/`or` or bool() on a tensor", _BRANCH_ADVICE)
        if self.data.size != 1:
            raise ValueError(
                f"the truth value of a tensor of shape {self.shape} is ambiguous; use .all() or .any()"
            )
        return bool(self.data)

    def all(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Whether every element (along `axis`/`dim`) is nonzero: a bool tensor, as PyTorch's, which
        `if x.all():` reads. Refused while tracing a tensor that needs grad, whose answer a trace
        would keep for every later input."""
        return self._truth("all", axis, keepdims, dim, keepdim)

    def any(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Whether any element (along `axis`/`dim`) is nonzero: a bool tensor, as `all`."""
        return self._truth("any", axis, keepdims, dim, keepdim)

    def _truth(self, name, axis, keepdims, dim, keepdim):
        if tracing.depth and self.requires_grad:
            _refuse_while_tracing(self, f".{name}()", _BRANCH_ADVICE)
        axis, keepdims = _axis_args(name, axis, keepdims, dim, keepdim)
        return Tensor._result(np.asarray(getattr(self.data, name)(axis=axis, keepdims=keepdims)), None)

    # ----------------------------------------------------------------- reductions and shapes
    # Reductions take numpy's axis=/keepdims= and PyTorch's dim=/keepdim= alike.
    def sum(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        axis, keepdims = _axis_args("sum", axis, keepdims, dim, keepdim)
        return _ops.reduce_sum(self, axis=_ops.normalize_axis(axis, self.ndim, "sum"), keepdims=keepdims)

    def mean(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        axis, keepdims = _axis_args("mean", axis, keepdims, dim, keepdim)
        axes = _ops.normalize_axis(axis, self.ndim, "mean")
        count = int(np.prod([self.shape[a] for a in axes])) if axes is not None else self.data.size
        return self.sum(axis=axes, keepdims=keepdims) / max(count, 1)

    def max(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """The largest element(s): a tensor, as numpy's `max`, over all elements or `axis`.

        With PyTorch's keyword `dim=`, PyTorch's answer: the pair `(values, indices)`, so that
        `values, indices = x.max(dim=1)` means what it does there (`amax` is the values alone).
        """
        if dim is not None:
            return _values_and_indices(self, "max", dim, keepdim, axis)
        axis, keepdims = _axis_args("max", axis, keepdims, dim, keepdim)
        return _ops.reduce_max(self, axis=_ops.normalize_axis(axis, self.ndim, "max"), keepdims=keepdims)

    def prod(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """The product of the elements (over `axis`, or all of them).

        Computed as a tree of elementwise products of halves (log2 n multiplications of ever smaller
        tensors, n − 1 products in all), so every derivative, of any order, is the product rule's
        own: exact where elements are 0, where out / x would divide by zero.
        """
        axis, keepdims = _axis_args("prod", axis, keepdims, dim, keepdim)
        axes = _ops.normalize_axis(axis, self.ndim, "prod")
        axes = tuple(range(self.ndim)) if axes is None else axes
        kept = [i for i in range(self.ndim) if i not in axes]
        x = self.transpose(kept + list(axes)) if self.ndim else self
        x = x.reshape([self.shape[i] for i in kept] + [-1] if self.data.size else [self.shape[i] for i in kept] + [0])
        if x.shape[-1] == 0:  # the empty product
            x = _ops.reshape(x.sum(axis=-1, keepdims=True) * 0.0 + 1.0, shape=x.shape[:-1] + (1,))
        while x.shape[-1] > 1:
            n = x.shape[-1]
            half = n // 2
            product = x[..., :half] * x[..., half : 2 * half]
            x = product if n % 2 == 0 else _ops.concatenate(product, x[..., 2 * half :], axis=x.ndim - 1)
        shape = [1 if i in axes else n for i, n in enumerate(self.shape)] if keepdims else [self.shape[i] for i in kept]
        return x.reshape(shape)

    def min(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """The smallest element(s): -max(-x), so ties share the gradient as in max; with `dim=`,
        `(values, indices)` as in `max`."""
        if dim is not None:
            return _values_and_indices(self, "min", dim, keepdim, axis)
        axis, keepdims = _axis_args("min", axis, keepdims, dim, keepdim)
        return -(-self).max(axis=axis, keepdims=keepdims)

    def amax(self, dim=None, keepdim=False):
        """PyTorch's values-only max: over all elements, or `dim` (an int or a tuple)."""
        return self.max(axis=dim, keepdims=keepdim)

    def amin(self, dim=None, keepdim=False):
        """PyTorch's values-only min: over all elements, or `dim` (an int or a tuple)."""
        return self.min(axis=dim, keepdims=keepdim)

    def argmax(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """The index of the largest element (over all elements, flattened, when axis is None), an integer tensor."""
        axis, keepdims = _axis_args("argmax", axis, keepdims, dim, keepdim)
        if axis is not None:
            axis = _ops.single_axis(axis, self.ndim, "argmax")
        if tracing.depth and self.requires_grad:
            return _ops.argmax(self, axis=axis, keepdims=keepdims)
        return Tensor._result(np.asarray(np.argmax(self.data, axis=axis, keepdims=keepdims)), None)

    def argmin(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """The index of the smallest element (see argmax)."""
        return (-self).argmax(axis, keepdims, dim=dim, keepdim=keepdim)

    def cumsum(self, axis=None, *, dim=None):
        """Running sums along one axis (numpy's axis=None flattens first)."""
        axis, _ = _axis_args("cumsum", axis, False, dim, None)
        if axis is None:
            return _ops.cumsum(self.reshape(-1), axis=0)
        return _ops.cumsum(self, axis=_ops.single_axis(axis, self.ndim, "cumsum"))

    def cumprod(self, axis=None, *, dim=None):
        """Running products along one axis (numpy's axis=None flattens first).

        A parallel prefix product (Hillis and Steele's scan): log2 n steps, each multiplying by
        the products so far shifted along by 1, 2, 4, ... places. Like `prod`, only elementwise
        products, so every derivative is the product rule's, exact where elements are 0 (where
        the textbook rule, a running sum of g · out divided by x, divides by zero).
        """
        axis, _ = _axis_args("cumprod", axis, False, dim, None)
        if axis is None:
            return self.reshape(-1).cumprod(0)
        axis = _ops.single_axis(axis, self.ndim, "cumprod")
        out, n, shift = self, self.shape[axis] if self.ndim else 1, 1
        before = (slice(None),) * axis
        while shift < n:
            shifted = out[before + (slice(0, n - shift),)]
            out = _ops.concatenate(out[before + (slice(0, shift),)], out[before + (slice(shift, n),)] * shifted, axis=axis)
            shift *= 2
        return out

    def var(self, axis=None, keepdims=False, *, dim=None, keepdim=None, correction=1, unbiased=None, ddof=None):
        """The variance, divided by N - correction: 1 by default (PyTorch's unbiased estimate);
        `ddof=0` (numpy's default) or `unbiased=False` for the population variance."""
        axis, keepdims = _axis_args("var", axis, keepdims, dim, keepdim)
        correction = ddof if ddof is not None else (int(unbiased) if unbiased is not None else correction)
        axes = _ops.normalize_axis(axis, self.ndim, "var")
        count = int(np.prod([self.shape[a] for a in axes])) if axes is not None else self.data.size
        centred = self - self.mean(axis=axes, keepdims=True)
        return (centred * centred).sum(axis=axes, keepdims=keepdims) / max(count - correction, 0)

    def std(self, axis=None, keepdims=False, *, dim=None, keepdim=None, correction=1, unbiased=None, ddof=None):
        """The standard deviation, sqrt(var(...)) with the same arguments."""
        return self.var(axis, keepdims, dim=dim, keepdim=keepdim, correction=correction, unbiased=unbiased, ddof=ddof) ** 0.5

    def norm(self, p=2, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """The p-norm over all elements (or an axis): (Σ |x|^p)^(1/p); p=2 by default."""
        axis, keepdims = _axis_args("norm", axis, keepdims, dim, keepdim)
        if p == 0:  # the count of nonzero entries, as PyTorch's; piecewise constant, so no gradient
            return Tensor._result(np.asarray((self.data != 0).sum(axis=axis, keepdims=keepdims), dtype=self.dtype), None)
        if p == 1:
            return self.abs().sum(axis=axis, keepdims=keepdims)
        if p == float("inf"):
            return self.abs().max(axis=axis, keepdims=keepdims)
        powered = self * self if p == 2 else self.abs() ** float(p)
        return _root_or_zero(powered.sum(axis=axis, keepdims=keepdims), 1.0 / p)

    def nelement(self):
        """The number of elements (PyTorch's other name for `numel`)."""
        return self.numel()

    def numel(self):
        """The number of elements (PyTorch's name for `.size`)."""
        return int(self.data.size)

    def dim(self):
        """The number of dimensions (PyTorch's name for `.ndim`)."""
        return self.data.ndim

    def view(self, *shape):
        """`reshape` under PyTorch's name (a new tensor; minigrad does not track views)."""
        return self.reshape(*shape)

    def view_as(self, other):
        """`reshape` to `other`'s shape."""
        return self.reshape(other.shape)

    reshape_as = view_as

    def sum_to_size(self, *size):
        """The sums that undo broadcasting from `size` to this shape (PyTorch's `sum_to_size`, the
        gradient of a broadcast): the added axes and those of length 1 in `size` summed away."""
        size = _shape_arguments(size)
        try:
            fits = np.broadcast_shapes(size, self.shape) == self.shape
        except ValueError:
            fits = False
        if not fits:
            raise ShapeError(f"sum_to_size: size {size} does not broadcast to the tensor's shape {self.shape}")
        return unbroadcast(self, size)

    def tile(self, *dims):
        """`mg.tile(self, dims)`: `tile(2, 2)` or `tile((2, 2))`."""
        return _functional.tile(self, _shape_arguments(dims))

    def expand(self, *sizes):
        """Broadcast to `sizes` (PyTorch's name for `broadcast_to`): -1 keeps an axis's length, and
        new axes may be added in front."""
        sizes = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
        new = len(sizes) - self.ndim
        if new < 0 or any(n == -1 for n in sizes[:new]):
            raise ShapeError(f"expand: cannot expand a tensor of shape {self.shape} to {sizes} (fewer axes, or -1 for a new one)")
        return self.broadcast_to(tuple(self.shape[i - new] if n == -1 else n for i, n in enumerate(sizes)))

    def expand_as(self, other):
        """`broadcast_to` `other`'s shape."""
        return self.broadcast_to(other.shape)

    def t(self):
        """The transpose of a matrix; a tensor with fewer than 2 axes is returned as it is (PyTorch's `.t()`)."""
        if self.ndim > 2:
            raise ShapeError(f"t(): expects at most 2 dimensions, got shape {self.shape}; use .mT or .transpose(...)")
        return self.transpose() if self.ndim == 2 else self

    def to(self, target):
        """`.to(dtype)` converts (as `astype`); `.to("cpu")` (or a torch.device for the CPU) is the
        tensor itself: minigrad computes with numpy, in host memory."""
        return self if _is_cpu(target, "Tensor.to") else self.astype(target)

    # PyTorch's x.new_zeros(...) and its kin: a new leaf, in this tensor's dtype unless dtype= says otherwise.
    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        """A copy of `data` in this tensor's dtype (PyTorch's `new_tensor`: the dtype is self's
        whatever the data's, so [1.5] beside an int64 tensor becomes [1]), cut from any graph."""
        data = np.array(data.data if isinstance(data, Tensor) else data)
        return self._new("new_tensor", lambda dtype: data.astype(dtype), dtype, device, requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        """Zeros of shape `size` (`new_zeros(2, 3)` or `new_zeros((2, 3))`)."""
        return self._new("new_zeros", lambda dtype: np.zeros(_shape_arguments(size), dtype), dtype, device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        """Ones of shape `size`."""
        return self._new("new_ones", lambda dtype: np.ones(_shape_arguments(size), dtype), dtype, device, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        """A tensor of shape `size` to be filled: zeros, as `mg.empty` (uninitialised memory read
        by mistake would be arbitrary numbers)."""
        return self._new("new_empty", lambda dtype: np.zeros(_shape_arguments(size), dtype), dtype, device, requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        """`fill_value` everywhere in shape `size` (a tuple, as PyTorch's)."""
        return self._new("new_full", lambda dtype: np.full(tuple(size), fill_value, dtype), dtype, device, requires_grad)

    def _new(self, name, make, dtype, device, requires_grad):
        if device is not None and not _is_cpu(device, name):
            raise TypeError(f"{name}: device={device!r} is not a device (a dtype goes in dtype=)")
        return Tensor(make(self.data.dtype if dtype is None else np.dtype(dtype)), requires_grad=requires_grad)

    def type(self, dtype):
        """A copy converted to `dtype` (PyTorch's `.type(torch.float)` is `.type(mg.float32)`)."""
        return self.astype(dtype)

    def cpu(self):
        """The tensor itself (minigrad's tensors live in host memory)."""
        return self

    def contiguous(self):
        """The tensor itself (minigrad does not track views)."""
        return self

    def is_contiguous(self):
        """True: minigrad does not track views, so every tensor is its own contiguous copy."""
        return True

    def is_floating_point(self):
        """Whether the dtype is a floating-point one (PyTorch's `is_floating_point`)."""
        return self.data.dtype.kind == "f"

    def element_size(self):
        """The bytes of one element (PyTorch's `element_size`: 4 for float32)."""
        return self.data.itemsize

    itemsize = property(lambda self: self.data.itemsize, doc="The bytes of one element (PyTorch's `itemsize`, `element_size()`).")
    nbytes = property(lambda self: self.data.nbytes, doc="The bytes of all the elements (PyTorch's `nbytes`).")
    is_cpu = property(lambda self: True, doc="True: minigrad's tensors live on the CPU (PyTorch's `is_cpu`).")
    is_cuda = property(lambda self: False, doc="False: minigrad's tensors live on the CPU (PyTorch's `is_cuda`).")
    retains_grad = property(
        lambda self: self._retains_grad and self.node is not None,
        doc="Whether `retain_grad()` was called on this non-leaf (False for leaves, which keep `.grad` anyway, as PyTorch's).",
    )

    def ndimension(self):
        """The number of dimensions (PyTorch's older name for `dim()`)."""
        return self.data.ndim

    def is_signed(self):
        """Whether the dtype holds negative numbers: floats and signed integers, not bool or uint8 (PyTorch's `is_signed`)."""
        return self.data.dtype.kind in "fi"

    def is_complex(self):
        """False: minigrad has no complex dtypes (PyTorch's `is_complex`)."""
        return False

    # The dtype conversions, x.half() to x.long(), are made below the class (_conversion).

    def type_as(self, other):
        """A copy in `other`'s dtype (a tensor or an array), PyTorch's `.type_as`."""
        return self.astype(other.dtype)

    # PyTorch's method forms of the operators and of minigrad's functions, so that code written for
    # torch.Tensor runs as it is.
    def pow(self, exponent):
        """self ** exponent (a number or a tensor)."""
        return self ** exponent

    def square(self):
        return self * self

    def neg(self):
        return -self

    def add(self, other, alpha=1):
        """self + alpha * other."""
        return self + (other if alpha == 1 else self._lift(other) * alpha)

    def sub(self, other, alpha=1):
        """self - alpha * other."""
        return self - (other if alpha == 1 else self._lift(other) * alpha)

    def mul(self, other):
        return self * other

    def matmul(self, other):
        return self @ other

    def reciprocal(self):
        return 1.0 / self

    def rsqrt(self):
        """1 / √self."""
        return _ops.power(self, exponent=-0.5)

    def sign(self):
        """−1, 0 or 1 elementwise; its gradient is zero."""
        return _ops.sign(self)

    def round(self, decimals=0):
        """Each entry rounded to `decimals` decimal places, halves to even (2.5 → 2), as torch.round."""
        return _ops.round(self, decimals=int(decimals))

    def frac(self):
        """The fractional part x − trunc(x), with the sign of x; its derivative is 1."""
        return self - _ops.trunc(self)

    def eq(self, other):
        return self == other

    def ne(self, other):
        return self != other

    def lt(self, other):
        return self < other

    def le(self, other):
        return self <= other

    def gt(self, other):
        return self > other

    def ge(self, other):
        return self >= other

    def clamp(self, min=None, max=None):  # noqa: A002  (PyTorch's keyword names)
        """`clip` under PyTorch's name and keywords."""
        return self.clip(min, max)

    def masked_fill(self, mask, value):
        """`value` where `mask` is true, self elsewhere (no gradient flows to the filled places)."""
        return _functional.where(mask, self._lift(value), self)

    def where(self, condition, other):
        """self where `condition` is true, `other` elsewhere: `mg.where(condition, self, other)`."""
        return _functional.where(condition, self, other)

    def hardshrink(self, lambd=0.5):
        """self where |self| > lambd, 0 elsewhere (`nn.functional.hardshrink`)."""
        from .nn.functional import hardshrink  # minigrad.nn loads on first use

        return hardshrink(self, lambd)

    def prelu(self, weight):
        """`minigrad.nn.functional.prelu(self, weight)` (imported here, since nn loads on first use)."""
        from .nn.functional import prelu

        return prelu(self, weight)

    def gather(self, dim, index):
        return _functional.gather(self, dim, index)

    def kthvalue(self, k, dim=-1, keepdim=False):
        return _functional.kthvalue(self, k, dim, keepdim)

    def median(self, dim=None, keepdim=False):
        return _functional.median(self, dim, keepdim)

    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return _functional.quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanmedian(self, dim=None, keepdim=False):
        return _functional.nanmedian(self, dim, keepdim)

    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return _functional.nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    def nansum(self, dim=None, keepdim=False, *, dtype=None):
        return _functional.nansum(self, dim, keepdim, dtype=dtype)

    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        return _functional.nanmean(self, dim, keepdim, dtype=dtype)

    def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002  (PyTorch's keyword)
        return _functional.topk(self, k, dim, largest, sorted)

    def split(self, split_size_or_sections, dim=0):
        return _functional.split(self, split_size_or_sections, dim)

    def chunk(self, chunks, dim=0):
        return _functional.chunk(self, chunks, dim)

    def repeat(self, *sizes):
        return _functional.repeat(self, *sizes)

    def repeat_interleave(self, repeats, dim=None):
        return _functional.repeat_interleave(self, repeats, dim)

    def tril(self, diagonal=0):
        return _functional.tril(self, diagonal)

    def triu(self, diagonal=0):
        return _functional.triu(self, diagonal)

    def index_select(self, dim, index):
        return _functional.index_select(self, dim, index)

    def masked_select(self, mask):
        return _functional.masked_select(self, mask)

    def take_along_dim(self, indices, dim=None):
        return _functional.take_along_dim(self, indices, dim)

    def narrow(self, dim, start, length):
        return _functional.narrow(self, dim, start, length)

    def movedim(self, source, destination):
        return _functional.movedim(self, source, destination)

    def moveaxis(self, source, destination):
        return _functional.movedim(self, source, destination)

    def swapdims(self, dim0, dim1):
        return _functional.swapdims(self, dim0, dim1)

    def unflatten(self, dim, sizes):
        return _functional.unflatten(self, dim, sizes)

    def nonzero(self, *, as_tuple=False):
        return _functional.nonzero(self, as_tuple=as_tuple)

    def argwhere(self):
        return _functional.argwhere(self)

    def count_nonzero(self, dim=None):
        return _functional.count_nonzero(self, dim)

    def roll(self, shifts, dims=None):
        return _functional.roll(self, shifts, dims)

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        return _functional.diff(self, n, dim, prepend, append)

    def diag(self, diagonal=0):
        return _functional.diag(self, diagonal)

    def diagonal(self, offset=0, dim1=0, dim2=1):
        return _functional.diagonal(self, offset, dim1, dim2)

    def trace(self):
        return _functional.trace(self)

    def kron(self, other):
        return _functional.kron(self, other)

    def lerp(self, end, weight):
        return _functional.lerp(self, end, weight)

    def logit(self, eps=None):
        return _functional.logit(self, eps)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return _functional.nan_to_num(self, nan, posinf, neginf)

    def digamma(self):
        return _functional.digamma(self)

    def polygamma(self, n):
        return _functional.polygamma(n, self)

    def mvlgamma(self, p):
        return _functional.mvlgamma(self, p)

    def aminmax(self, *, dim=None, keepdim=False):
        return _functional.aminmax(self, dim=dim, keepdim=keepdim)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        return _functional.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return _functional.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def inner(self, other):
        return _functional.inner(self, other)

    def matrix_power(self, n):
        return _functional.matrix_power(self, n)

    def softmax(self, dim=-1):
        return _functional.softmax(self, dim=dim)

    def log_softmax(self, dim=-1):
        return _functional.log_softmax(self, dim=dim)

    def logsumexp(self, dim=-1, keepdim=False):
        return _functional.logsumexp(self, dim=dim, keepdim=keepdim)

    def permute(self, *dims):
        """Reorder the axes: `dims` is a permutation, `permute(2, 0, 1)` or `permute((2, 0, 1))`."""
        return self._permute("permute", dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims)

    def unsqueeze(self, dim):
        """A new axis of length 1 at `dim`."""
        return self.expand_dims(dim)

    def squeeze(self, dim=None):
        """Axes of length 1 removed: all of them, or `dim` (left alone if its length is not 1, as in PyTorch)."""
        if dim is None:
            return self.reshape([n for n in self.shape if n != 1])
        axes = _ops.normalize_axis(dim, self.ndim, "squeeze")
        return self.reshape([n for i, n in enumerate(self.shape) if not (i in axes and n == 1)])

    def flip(self, dims):
        """The elements in reverse order along `dims` (an int or a tuple)."""
        axes = _ops.normalize_axis(dims, self.ndim, "flip")
        return self[tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(self.ndim))]

    def clone(self):
        """A copy with its own data, in the graph (gradients flow through it)."""
        return _ops.astype(self, dtype=self.dtype)

    def maximum(self, other):
        """Elementwise maximum with `other` (see minigrad.maximum)."""
        return _ops.maximum(self, self._lift(other))

    def minimum(self, other):
        """Elementwise minimum with `other` (see minigrad.minimum)."""
        return _ops.minimum(self, self._lift(other))

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return _ops.reshape(self, shape=_ops.resolve_shape(self, shape))

    def transpose(self, *axes):
        """The axes permuted, as numpy's `transpose`: `transpose(2, 0, 1)` or `transpose((2, 0, 1))`,
        all of them reversed by `transpose()`. Two ints swap those two axes, as PyTorch's
        `transpose(dim0, dim1)`: on a matrix the two readings differ only where numpy's would be
        the identity, `transpose(0, 1)`, which only PyTorch code writes (and means a transpose)."""
        if len(axes) == 2 and all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axes):
            return self._swap(*axes, "transpose")
        return self._permute("transpose", axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes)

    def _permute(self, name, axes):
        axes = tuple(axes) if axes else tuple(reversed(range(self.ndim)))
        perm = tuple(a % self.ndim if -self.ndim <= a < self.ndim else a for a in axes)
        if sorted(perm) != list(range(self.ndim)):
            raise ShapeError(f"{name}: axes {axes} are not a permutation of the axes of a tensor of shape {self.shape}")
        return _ops.transpose(self, axes=perm)

    def _swap(self, a, b, name):
        if not all(-self.ndim <= axis < self.ndim for axis in (a, b)):
            raise ShapeError(f"{name}: cannot swap axes ({a}, {b}) of a tensor of shape {self.shape}")
        axes = list(range(self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return _ops.transpose(self, axes=tuple(axes))

    @property
    def T(self):
        """All axes reversed (numpy's `.T`)."""
        return self.transpose()

    @property
    def mT(self):
        """The last two axes swapped: the matrix transpose of a batch of matrices."""
        # The permutation is built here rather than by swapaxes(), whose checks cost more than the
        # transpose itself: every recorded matmul VJP takes two of these.
        n = self.ndim
        if n < 2:
            raise ShapeError(f"mT: needs a tensor with at least 2 dimensions, got shape {self.shape}")
        return _ops.transpose(self, axes=(*range(n - 2), n - 1, n - 2))

    mH = property(lambda self: self.mT, doc="The conjugate transpose of the last two axes: `mT`, tensors being real (PyTorch's `mH`).")

    def adjoint(self):
        """`mH` as a method (PyTorch's `adjoint()`): the last two axes swapped."""
        return self.mT

    def swapaxes(self, a, b):
        return self._swap(a, b, "swapaxes")

    def broadcast_to(self, shape):
        shape = tuple(shape)
        return self if shape == self.shape else _ops.broadcast_to(self, shape=shape)

    def expand_dims(self, axis):
        try:
            shape = np.expand_dims(np.empty(self.shape, dtype=bool), axis).shape
        except ValueError as error:  # numpy's AxisError
            raise ShapeError(f"expand_dims: {error} (a tensor of shape {self.shape})") from None
        return self.reshape(shape)

    def flatten(self, start_dim=0, end_dim=-1):
        """The axes `start_dim`..`end_dim` (both included) merged into one: all of them by default, as
        numpy's `flatten`; `flatten(1)` keeps the batch axis, as PyTorch's `torch.flatten(x, 1)`."""
        shape, n = self.shape, max(self.ndim, 1)  # a 0-d tensor flattens to shape (1,), as in PyTorch
        if not (-n <= start_dim < n and -n <= end_dim < n):
            raise ShapeError(f"flatten: dims ({start_dim}, {end_dim}) are out of range for a tensor of shape {shape}")
        start, end = start_dim % n, end_dim % n
        if start > end:
            raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} for a tensor of shape {shape}")
        return self.reshape(shape[:start] + (math.prod(shape[start : end + 1]),) + shape[end + 1 :])

    def __getitem__(self, index):
        if tracing.depth:
            _check_traced_index(index)
        return _ops.getitem(self, index=_ops.plain_index(index))

    # ----------------------------------------------------------------- elementwise functions
    def exp(self):
        return _ops.exp(self)

    def log(self):
        return _ops.log(self)

    def log2(self):
        return _ops.log(self) * (1.0 / math.log(2.0))

    def log10(self):
        return _ops.log(self) * (1.0 / math.log(10.0))

    def tanh(self):
        return _ops.tanh(self)

    def sigmoid(self):
        return _ops.sigmoid(self)

    def relu(self):
        return _ops.relu(self)

    def sin(self):
        return _ops.sin(self)

    def cos(self):
        return _ops.cos(self)

    def sqrt(self):
        return _ops.power(self, exponent=0.5)

    def abs(self):
        return _ops.absolute(self)

    def clip(self, low=None, high=None):
        return _ops.clip(self, low=low, high=high)


_new_object = object.__new__


# numpy's ufuncs behind Python's operators: (the method for `tensor op x`, the one for `x op tensor`)
_NUMPY_OPERATORS = {
    np.add: ("__add__", "__radd__"),
    np.subtract: ("__sub__", "__rsub__"),
    np.multiply: ("__mul__", "__rmul__"),
    np.true_divide: ("__truediv__", "__rtruediv__"),
    np.power: ("__pow__", "__rpow__"),
    np.matmul: ("__matmul__", "__rmatmul__"),
    np.less: ("__lt__", "__gt__"),
    np.less_equal: ("__le__", "__ge__"),
    np.greater: ("__gt__", "__lt__"),
    np.greater_equal: ("__ge__", "__le__"),
    np.equal: ("__eq__", "__eq__"),
    np.not_equal: ("__ne__", "__ne__"),
}


def _as_float(t, dtype):
    """Integer or boolean tensor `t` (labels, counts, masks) that requires no grad as a constant of
    float `dtype`, as PyTorch promotes it: numpy would make int64 with float32 a float64 result, and
    so a float32 parameter's gradient."""
    return _result(t.data.astype(dtype), None)


def _result(data, node):
    """Fast constructor for operation results (`Tensor._result`): no conversion, no checks.

    A module-level function calling `object.__new__` directly: every operation makes one, forward
    and backward, and a classmethod call plus `cls.__new__` lookup cost more than the six stores.
    """
    out = _new_object(Tensor)
    out.data = data
    out.grad = None
    out.requires_grad = node is not None
    out.node = node
    out._retains_grad = False
    out._tangent = None
    return out


Tensor._result = staticmethod(_result)


def _check_traced_index(index):
    for part in index if isinstance(index, tuple) else (index,):
        if isinstance(part, Tensor) and part.requires_grad:
            kind = "a boolean mask (t[t > 0])" if part.dtype.kind == "b" else "indices"
            _refuse_while_tracing(
                part,
                f"indexing with {kind} computed from the traced values",
                "The result's shape or elements would be the first call's. Keep the shape with "
                "mg.where(mask, t, 0) (then .sum() or .max() over it), or index with constant indices.",
            )


def _root_or_zero(total, exponent):
    """total ** exponent, with the gradient 0 where total is 0 (PyTorch's choice for a norm at the
    origin) instead of ∞ · 0 = NaN: the root is taken of 1 there and its result replaced by 0."""
    at_zero = _ops.equal(total, total._lift(0.0))
    safe = _ops.select(at_zero, total._lift(1.0), total)
    return _ops.select(at_zero, total._lift(0.0), safe**exponent)


class ValuesIndices(collections.namedtuple("ValuesIndices", ["values", "indices"])):
    """What `x.max(dim=...)`, `x.min(dim=...)` and `x.topk(...)` return, as PyTorch's
    `torch.return_types`: the values (differentiable) and the integer indices where they are."""


def _check_parameter(name, holds, expected):
    if not holds:
        raise ValueError(f"{name}: expects {expected}")


def _values_and_indices(tensor, name, dim, keepdim, axis):
    if axis is not None:
        raise TypeError(f"{name}: pass axis= or dim= (the same axis), not both")
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(
            f"{name}: dim={dim!r}: PyTorch's {name}(dim=) takes one int and returns (values, indices); "
            f"for the values over several axes write a{name}(dim={dim!r}) or {name}(axis={dim!r})"
        )
    keepdims = bool(keepdim)
    values = getattr(tensor, name)(axis=dim, keepdims=keepdims)
    return ValuesIndices(values, getattr(tensor, f"arg{name}")(axis=dim, keepdims=keepdims))


def _axis_args(name, axis, keepdims, dim, keepdim):
    """axis=/keepdims= (numpy) or dim=/keepdim= (PyTorch), not both."""
    if dim is not None:
        if axis is not None:
            raise TypeError(f"{name}: pass axis= or dim= (the same thing), not both")
        axis = dim
    if keepdim is not None:
        keepdims = keepdim
    return axis, bool(keepdims)


class _Size(int):
    """`Tensor.size`: the number of elements, an int, as in numpy. PyTorch's `x.size()` is the shape;
    calling this int says so instead of failing with "'int' object is not callable"."""

    __slots__ = ()

    def __call__(self, *dim):
        where = f"x.shape[{dim[0]}]" if dim else "x.shape"
        raise TypeError(
            f"Tensor.size is the number of elements ({int(self)}), an int as in numpy, not a method: "
            f"PyTorch's x.size({', '.join(map(str, dim))}) is {where} here"
        )


_PAIR_HINT = (
    "'Tensor' object has no attribute {name!r}: x.max(1) (or x.min(1)) with a positional axis is numpy's and "
    "gives the values alone; write x.max(dim=1).{name}, PyTorch's (values, indices) pair"
)


def _is_cpu(target, name):
    """Whether `.to(target)` names a device rather than a dtype: True for the CPU ("cpu",
    "cpu:0", torch.device("cpu")), an error for any other device, False for a dtype."""
    device = getattr(target, "type", target)  # a torch.device has .type
    if isinstance(device, str):
        try:
            np.dtype(device)
            return False
        except TypeError:
            pass
        if device == "cpu" or device.startswith("cpu:"):
            return True
        raise MinigradError(
            f"{name}: device {target!r}: minigrad's tensors live in host memory and compute with numpy, on "
            f"the CPU; for a GPU, compile a function with minigrad.jit.compile(fn, backend='cuda')"
        )
    return False


def _shape_arguments(size):
    """A shape given as ints, `f(2, 3)`, or as one sequence, `f((2, 3))`, as PyTorch's methods take it."""
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)


def _freed_message(tensor):
    return (
        f"backward through a graph that was already freed: the tensor of shape {tensor.shape} made "
        f"by '{tensor.node.op.name}' lost its saved inputs in an earlier backward(). Pass "
        f"retain_graph=True to the first backward() to differentiate the same graph twice."
    )


from . import ops as _ops  # noqa: E402  (ops needs Tensor and Node defined above)
from . import functional as _functional  # noqa: E402  (the same: it builds on ops and Tensor)
from . import linalg as _linalg  # noqa: E402  (the same)
from . import creation as _creation, special as _special  # noqa: E402  (the same; creation's generator serves the initializers)
from . import autograd as _autograd  # noqa: E402  (a module-level name: an import inside backward() costs 0.6 µs a call)


def _elementwise_method(primitive, binary=False):
    """A Tensor method that applies `primitive`, PyTorch's `x.asin()` or `y.atan2(x)`."""
    if binary:

        def method(self, other):
            return primitive(self, self._lift(other))

    else:

        def method(self):
            return primitive(self)

    method.__name__ = method.__qualname__ = primitive.name
    method.__doc__ = f"`torch.{primitive.name}`, entry by entry (the primitive `minigrad.ops.{primitive.name}`)."
    return method


# PyTorch's other elementwise functions, each a primitive of its own name, and their numpy spellings
# (`arcsin`, which torch also accepts).
for _primitive in _ops.UNARY_FUNCTIONS:
    setattr(Tensor, _primitive.name, _elementwise_method(_primitive))
for _primitive in _ops.BINARY_FUNCTIONS:
    setattr(Tensor, _primitive.name, _elementwise_method(_primitive, binary=True))
for _name in ("asin", "acos", "atan", "asinh", "acosh", "atanh", "atan2"):
    setattr(Tensor, "arc" + _name[1:], getattr(Tensor, _name))
Tensor.fix = Tensor.trunc  # PyTorch's other name
del _primitive, _name


def _in_place_form(function):
    """The in-place method `x.name_(...)` of the function `name(x, ...)`: computed on the values and
    written into x, refused as `fill_` is while gradients are recorded; returns x."""
    name = function.__name__ + "_"

    def method(self, *args, **kwargs):
        recorded = next((a for a in (*args, *kwargs.values()) if isinstance(a, Tensor) and a.requires_grad), None)
        return self._inplace(name, recorded, lambda a, _: function(self.detach(), *args, **kwargs).data)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"`x.{function.__name__}(...)` written into x, in place; returns x (see `minigrad.{function.__name__}`)."
    return method


# PyTorch's writing methods (x.scatter(...), x.index_add_(...), ...): the functions of
# minigrad.functional, and their in-place forms; then the other functions torch has as methods.
for _function in (
    _functional.scatter, _functional.scatter_add, _functional.scatter_reduce, _functional.index_add, _functional.index_copy,
    _functional.index_fill, _functional.index_put, _functional.put, _functional.masked_scatter,
):
    setattr(Tensor, _function.__name__, _function)
    setattr(Tensor, _function.__name__ + "_", _in_place_form(_function))
for _function in (_functional.unique, _functional.unique_consecutive, _functional.histc, _functional.mode, _functional.diag_embed):
    setattr(Tensor, _function.__name__, _function)
del _function


# PyTorch's matrix methods (x.inverse(), x.det(), ...): the functions of minigrad.linalg.
Tensor.inverse, Tensor.det, Tensor.logdet, Tensor.slogdet = _linalg.inv, _linalg.det, _linalg.logdet, _linalg.slogdet
Tensor.cholesky, Tensor.cross, Tensor.matrix_exp = _linalg.cholesky, _linalg.torch_cross, _linalg.matrix_exp


# PyTorch's methods that are minigrad's functions with the tensor first (x.remainder(y) is
# mg.remainder(x, y)): the functions themselves, as the matrix methods above.
for _function in (
    _functional.addcdiv, _functional.addcmul, _functional.allclose, _functional.argsort, _functional.bmm, _functional.clamp_max,
    _functional.clamp_min, _functional.copysign, _functional.cummax, _functional.cummin, _functional.deg2rad, _functional.dot,
    _functional.equal, _functional.fliplr, _functional.flipud, _functional.floor_divide, _functional.fmod, _functional.heaviside,
    _functional.histogram, _functional.isclose, _functional.isfinite, _functional.isinf, _functional.isnan, _functional.logaddexp,
    _functional.logaddexp2, _functional.logcumsumexp, _functional.mm, _functional.msort, _functional.mv, _functional.outer,
    _functional.rad2deg, _functional.ravel, _functional.remainder, _functional.rot90, _functional.select, _functional.signbit,
    _functional.sort, _functional.take, _functional.unbind, _creation.multinomial, _linalg.pinverse, _special.sinc, _special.xlogy,
):
    setattr(Tensor, _function.__name__, _function)
Tensor.ger, Tensor.negative, Tensor.absolute, Tensor.true_divide = Tensor.outer, Tensor.neg, Tensor.abs, _functional.true_divide
for _function in (
    _functional.addbmm, _functional.addmv, _functional.addr, _functional.bincount, _functional.corrcoef, _functional.cov,
    _functional.diagflat, _functional.dist, _functional.div, _functional.dsplit, _functional.float_power,
    _functional.fmax, _functional.fmin, _functional.hsplit, _functional.isneginf, _functional.isposinf, _functional.isreal,
    _functional.logical_and, _functional.logical_not, _functional.logical_or, _functional.logical_xor, _functional.positive,
    _functional.sgn, _functional.split_with_sizes, _functional.tensor_split, _functional.vdot, _functional.vsplit,
):
    setattr(Tensor, _function.__name__, _function)
Tensor.greater, Tensor.greater_equal, Tensor.less, Tensor.less_equal = Tensor.gt, Tensor.ge, Tensor.lt, Tensor.le
Tensor.not_equal, Tensor.multiply, Tensor.subtract, Tensor.divide = Tensor.ne, Tensor.mul, Tensor.sub, Tensor.div
for _function in (
    _functional.bitwise_and, _functional.bitwise_left_shift, _functional.bitwise_not, _functional.bitwise_or,
    _functional.bitwise_right_shift, _functional.bitwise_xor, _functional.conj, _functional.diagonal_scatter, _functional.frexp,
    _functional.gcd, _functional.lcm, _functional.ldexp, _functional.nextafter, _functional.renorm, _functional.select_scatter,
    _functional.slice_scatter, _functional.unfold, _linalg.cholesky_inverse, _linalg.cholesky_solve,
):
    setattr(Tensor, _function.__name__, _function)
Tensor.resolve_conj = Tensor.resolve_neg = _functional.conj
del _function


def _conversion(name, dtype):
    """PyTorch's `x.float()` and its kin: a copy in `dtype`, in the graph (differentiable between float dtypes)."""

    def method(self):
        return self.astype(dtype)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"A {np.dtype(dtype)} copy (PyTorch's `.{name}()`; in the graph)."
    return method


# bfloat16() is not among them: numpy has no bfloat16 dtype.
for _name, _dtype in {"half": np.float16, "float": np.float32, "double": np.float64, "bool": np.bool_, "byte": np.uint8,
                      "char": np.int8, "short": np.int16, "int": np.int32, "long": np.int64}.items():
    setattr(Tensor, _name, _conversion(_name, _dtype))
del _name, _dtype


def _inplace_form(name):
    """PyTorch's in-place `x.exp_()` for the method `x.exp()`: its values (the same forward, so the
    same numbers) written into x, refused as `add_` is while gradients are recorded through x or
    through a tensor argument (`masked_fill_`'s value, `pow_`'s exponent)."""

    def method(self, *args, **kwargs):
        recorded = next((a for a in (*args, *kwargs.values()) if isinstance(a, Tensor) and a.requires_grad), None)
        return self._inplace(f"{name}_", recorded, lambda data, _: getattr(_result(data, None), name)(*args, **kwargs).data)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"`x.{name}(...)` written into x, in place (under no_grad for tensors in a graph); returns x."
    return method


for _name in ("abs", "clamp", "exp", "log", "masked_fill", "neg", "pow", "relu", "sigmoid", "sqrt", "tanh"):
    setattr(Tensor, f"{_name}_", _inplace_form(_name))
del _name
