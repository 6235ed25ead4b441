"""Operations on several tensors, and numerically careful compositions of primitives."""

import numpy as np

from . import ops
from .errors import ShapeError
from .tensor import Tensor


def _dim(name, axis, dim, default):
    if dim is None:
        return axis
    if axis != default:
        raise TypeError(f"{name}: pass axis= or dim= (the same thing), not both")
    return dim


def _tensors(name, tensors):
    tensors = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    if not tensors:
        raise ShapeError(f"{name}: needs at least one tensor")
    return tensors


def concatenate(tensors, axis=0, *, dim=None):
    """Join tensors along an existing axis (`dim=` as in PyTorch)."""
    axis = _dim("concatenate", axis, dim, 0)
    tensors = _tensors("concatenate", tensors)
    return ops.concatenate(*tensors, axis=ops.normalize_axis(axis, tensors[0].ndim, "concatenate")[0])


def stack(tensors, axis=0, *, dim=None):
    """Join tensors along a new axis (`dim=` as in PyTorch)."""
    axis = _dim("stack", axis, dim, 0)
    tensors = _tensors("stack", tensors)
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise ShapeError(f"stack: all tensors need the same shape, got {sorted(shapes)}")
    ndim = tensors[0].ndim + 1  # the result's
    if not isinstance(axis, (int, np.integer)) or not -ndim <= axis < ndim:
        raise ShapeError(
            f"stack: axis {axis!r} is out of range for stacking tensors of shape {tensors[0].shape} "
            f"(the result has {ndim} dimensions: axis must be in [{-ndim}, {ndim - 1}])"
        )
    axis = int(axis) % ndim
    return concatenate([t.expand_dims(axis) for t in tensors], axis=axis)


def where(condition, x, y):
    """Elementwise `x if condition else y`; the condition is a constant (no gradient).

    A condition computed from a tensor that `minigrad.jit.compile` is tracing (`where(x > 0, ...)`)
    is an input of the `select` primitive instead, so the compiled program recomputes the mask.
    """
    x = x if isinstance(x, Tensor) else Tensor(x)
    y = y if isinstance(y, Tensor) else Tensor(y, dtype=x.dtype)
    if isinstance(condition, Tensor) and condition.requires_grad:  # a traced mask (see Tensor._compare)
        return ops.select(condition, x, y)
    condition = condition.data if isinstance(condition, Tensor) else condition
    return ops.where(x, y, condition=np.asarray(condition, dtype=bool))  # lists and numpy bools too


def tril(x, diagonal=0):
    """The lower triangle of the last two axes, the rest set to 0 (`torch.tril`): elements on and
    below the `diagonal`-th diagonal are kept. The gradient flows to the kept elements only."""
    return _triangle("tril", x, lambda rows, cols: np.tri(rows, cols, k=diagonal, dtype=bool))


def triu(x, diagonal=0):
    """The upper triangle of the last two axes, the rest set to 0 (`torch.triu`): elements on and
    above the `diagonal`-th diagonal are kept."""
    return _triangle("triu", x, lambda rows, cols: ~np.tri(rows, cols, k=diagonal - 1, dtype=bool))


def _triangle(name, x, mask):
    x = x if isinstance(x, Tensor) else Tensor(x)
    if x.ndim < 2:
        raise ShapeError(f"{name}: needs a matrix or a batch of them (at least 2 dimensions), got shape {x.shape}")
    return where(mask(*x.shape[-2:]), x, 0)


def _operands(x, y):
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = Tensor(x)
    x = x if isinstance(x, Tensor) else y._lift(x)
    y = y if isinstance(y, Tensor) else x._lift(y)
    return x, y


def maximum(x, y):
    """Elementwise maximum (broadcasting); the gradient goes to the larger operand, half each at ties."""
    return ops.maximum(*_operands(x, y))


def minimum(x, y):
    """Elementwise minimum (broadcasting); the gradient goes to the smaller operand, half each at ties."""
    return ops.minimum(*_operands(x, y))


def logsumexp(x, axis=-1, keepdims=False, *, dim=None, keepdim=None):
    """log Σ exp(x) without overflow: the maximum is subtracted first (as a constant)."""
    axis = _dim("logsumexp", axis, dim, -1)
    keepdims = keepdims if keepdim is None else keepdim
    axes = ops.normalize_axis(axis, x.ndim, "logsumexp")  # an int, a tuple or None (all axes)
    shift = x.max(axis=axes, keepdims=True).detach()
    out = (x - shift).exp().sum(axis=axes, keepdims=True).log() + shift
    return out if keepdims else out.reshape([n for i, n in enumerate(x.shape) if axes is not None and i not in axes])


def log_softmax(x, axis=-1, *, dim=None):
    """log softmax(x) along one axis: x minus its logsumexp, computed stably."""
    axis = _dim("log_softmax", axis, dim, -1)
    if x.ndim == 0:
        raise ShapeError("log_softmax: needs at least one dimension, got a 0-d tensor")
    return ops.log_softmax(x, axis=ops.normalize_axis(axis, x.ndim, "log_softmax")[0])


def softmax(x, axis=-1, *, dim=None):
    """Probabilities along one axis: exp(x − max) normalised, the same as exp(log_softmax(x))."""
    axis = _dim("softmax", axis, dim, -1)
    x = x if isinstance(x, Tensor) else Tensor(x)
    if x.ndim == 0:
        raise ShapeError("softmax: needs at least one dimension, got a 0-d tensor")
    return ops.softmax(x, axis=ops.normalize_axis(axis, x.ndim, "softmax")[0])


def softplus(x):
    """log(1 + e^x), without overflow; its derivative is sigmoid(x)."""
    return ops.softplus(x if isinstance(x, Tensor) else Tensor(x))


def cat(tensors, dim=0):
    """`concatenate` under PyTorch's name (`dim=` for `axis=`)."""
    return concatenate(tensors, axis=dim)


def matmul(x, y):
    """x @ y (numpy's matmul rules for every rank)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return x @ y


def _method(name):
    def function(x, *args, **kwargs):
        return getattr(x if isinstance(x, Tensor) else Tensor(x), name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"`x.{name}(...)` as a function of x (a Tensor, or data made into one): see `Tensor.{name}`."
    return function


# Module-level forms of the tensor methods, as `torch.exp(x)` or `np.exp(x)` are written.
exp, log, sin, cos, tanh, sigmoid, relu, sqrt, abs = map(_method, "exp log sin cos tanh sigmoid relu sqrt abs".split())  # noqa: A001
pow, square, sign = map(_method, "pow square sign".split())  # noqa: A001
sum, mean, min, max, prod, argmax, argmin, cumsum, var, std, norm = map(  # noqa: A001
    _method, "sum mean min max prod argmax argmin cumsum var std norm".split()
)
reshape, transpose, permute, flatten, unsqueeze, squeeze, flip, clip = map(
    _method, "reshape transpose permute flatten unsqueeze squeeze flip clip".split()
)
clamp = clip
