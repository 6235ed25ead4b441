"""Ways to make tensors: from data, filled with a constant, or random."""

import numpy as np

from .errors import DtypeError
from .tensor import Tensor, _checked_array


def tensor(data, requires_grad=False, dtype=None):
    """`Tensor(data, ...)` under the name PyTorch users reach for, with `torch.tensor`'s dtype rule:
    Python ints (labels, indices) give an int64 tensor and bools a bool tensor, where `Tensor(...)`
    makes every Python number float64 (as `torch.Tensor` makes it float32). Integer tensors cannot
    require grad: write `mg.tensor([1.0, 2.0], requires_grad=True)` for a float leaf."""
    if dtype is None and not isinstance(data, (Tensor, np.ndarray, np.generic)):
        data = _checked_array(data)  # Python ints become int64, bools bool: Tensor keeps integer arrays
        if requires_grad and data.dtype.kind in "iub":
            raise DtypeError(
                f"tensor: only floating-point tensors can require gradients, got Python "
                f"{'bools' if data.dtype.kind == 'b' else 'ints'} (dtype {data.dtype}, shape {data.shape}); "
                f"write the numbers as floats (1.0, not 1) or pass dtype=float"
            )
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


class _Seed:
    generator = None  # set by manual_seed: the Generator randn and nn's layers draw from by default


_seed = _Seed()


def manual_seed(seed):
    """Make later random draws reproducible (like `torch.manual_seed`): `randn` and the layers of
    `minigrad.nn` created without an `rng=` draw from one numpy Generator seeded with `seed`.
    Returns that Generator."""
    _seed.generator = np.random.default_rng(seed)
    return _seed.generator


def default_rng():
    """The Generator of the last `manual_seed`, or else a fresh, unseeded one."""
    return _seed.generator if _seed.generator is not None else np.random.default_rng()


def randn(*shape, requires_grad=False, dtype=np.float64, rng=None):
    """Standard normal samples; pass `rng` (a numpy Generator), or call `manual_seed` first, for
    reproducible draws."""
    rng = default_rng() if rng is None else rng
    return Tensor(rng.standard_normal(_shape(shape)).astype(dtype), requires_grad=requires_grad)


def arange(*args, dtype=np.float64):
    return Tensor(np.arange(*args, dtype=dtype))
