"""Operations on several tensors, and numerically careful compositions of primitives."""

import numpy as np

from . import ops
from .errors import ShapeError
from .tensor import Tensor


def _tensors(name, tensors):
    tensors = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    if not tensors:
        raise ShapeError(f"{name}: needs at least one tensor")
    return tensors


def concatenate(tensors, axis=0):
    """Join tensors along an existing axis."""
    tensors = _tensors("concatenate", tensors)
    return ops.concatenate(*tensors, axis=ops.normalize_axis(axis, tensors[0].ndim, "concatenate")[0])


def stack(tensors, axis=0):
    """Join tensors along a new axis."""
    tensors = _tensors("stack", tensors)
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise ShapeError(f"stack: all tensors need the same shape, got {sorted(shapes)}")
    axis = axis % (tensors[0].ndim + 1)
    return concatenate([t.expand_dims(axis) for t in tensors], axis=axis)


def where(condition, x, y):
    """Elementwise `x if condition else y`; the condition is a constant (no gradient)."""
    condition = condition.data if isinstance(condition, Tensor) else condition
    x = x if isinstance(x, Tensor) else Tensor(x)
    y = y if isinstance(y, Tensor) else Tensor(y, dtype=x.dtype)
    return ops.where(x, y, condition=np.asarray(condition, dtype=bool))  # lists and numpy bools too


def maximum(x, y):
    """Elementwise maximum; the gradient goes to the larger operand."""
    return where(x.data >= (y.data if isinstance(y, Tensor) else y), x, y)


def logsumexp(x, axis=-1, keepdims=False):
    """log Σ exp(x) without overflow: the maximum is subtracted first (as a constant)."""
    axes = ops.normalize_axis(axis, x.ndim, "logsumexp")  # an int, a tuple or None (all axes)
    shift = x.max(axis=axes, keepdims=True).detach()
    out = (x - shift).exp().sum(axis=axes, keepdims=True).log() + shift
    return out if keepdims else out.reshape([n for i, n in enumerate(x.shape) if axes is not None and i not in axes])


def log_softmax(x, axis=-1):
    """log softmax(x) along one axis: x minus its logsumexp, computed stably."""
    if x.ndim == 0:
        raise ShapeError("log_softmax: needs at least one dimension, got a 0-d tensor")
    return ops.log_softmax(x, axis=ops.normalize_axis(axis, x.ndim, "log_softmax")[0])


def softmax(x, axis=-1):
    return log_softmax(x, axis=axis).exp()
