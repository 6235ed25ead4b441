"""Ways to make tensors: from data, filled with a constant, or random."""

import numpy as np

from .tensor import Tensor


def tensor(data, requires_grad=False, dtype=None):
    """`Tensor(data, ...)` under the name PyTorch users reach for."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def _shape(shape):
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


def zeros(*shape, requires_grad=False, dtype=np.float64):
    return Tensor(np.zeros(_shape(shape), dtype=dtype), requires_grad=requires_grad)


def ones(*shape, requires_grad=False, dtype=np.float64):
    return Tensor(np.ones(_shape(shape), dtype=dtype), requires_grad=requires_grad)


def zeros_like(t, requires_grad=False):
    return Tensor(np.zeros_like(t.data), requires_grad=requires_grad)


def ones_like(t, requires_grad=False):
    return Tensor(np.ones_like(t.data), requires_grad=requires_grad)


def randn(*shape, requires_grad=False, dtype=np.float64, rng=None):
    """Standard normal samples; pass `rng` (a numpy Generator) for reproducible draws."""
    rng = np.random.default_rng() if rng is None else rng
    return Tensor(rng.standard_normal(_shape(shape)).astype(dtype), requires_grad=requires_grad)


def arange(*args, dtype=np.float64):
    return Tensor(np.arange(*args, dtype=dtype))
