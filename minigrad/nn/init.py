"""Weight initialisation, in place, under PyTorch's names: `nn.init.xavier_uniform_(layer.weight)`.

Each function fills a tensor's data from a numpy Generator (`rng=`, else the one `minigrad.manual_seed`
set, else a fresh one) and returns the tensor. Fans follow minigrad's layout: a `Linear` weight is
(in_features, out_features), so fan_in is its first dimension, not its second as in PyTorch's
(out, in) layout; for more dimensions (in, out, *kernel) the kernel size multiplies both.
"""

import math

import numpy as np

from ..creation import default_rng
from ..grad_mode import no_grad


def _fans(tensor):
    if tensor.ndim < 2:
        raise ValueError(f"nn.init: fan_in and fan_out need a tensor with at least 2 dimensions, got shape {tensor.shape}")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[0] * receptive, tensor.shape[1] * receptive


def _fill(tensor, values):
    if isinstance(tensor, np.ndarray):  # a parameter's .data, as PyTorch code writes `nn.init.normal_(m.weight.data, ...)`
        tensor[...] = values
        return tensor
    with no_grad():
        tensor.copy_(values.astype(tensor.dtype))
    return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended scale for an activation, as in PyTorch (tanh 5/3, relu √2, leaky_relu √(2/(1+a²)))."""
    gains = {"linear": 1.0, "identity": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 3.0 / 4}
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity not in gains:
        raise ValueError(f"nn.init.calculate_gain: unknown nonlinearity {nonlinearity!r}; one of {sorted(gains) + ['leaky_relu']}")
    return gains[nonlinearity]


def uniform_(tensor, a=0.0, b=1.0, rng=None):
    return _fill(tensor, (default_rng() if rng is None else rng).uniform(a, b, tensor.shape))


def normal_(tensor, mean=0.0, std=1.0, rng=None):
    return _fill(tensor, (default_rng() if rng is None else rng).normal(mean, std, tensor.shape))


def constant_(tensor, value):
    return _fill(tensor, np.full(tensor.shape, value))


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor, gain=1.0, rng=None):
    """Glorot & Bengio (2010): uniform in ±gain·√(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, rng)


def xavier_normal_(tensor, gain=1.0, rng=None):
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), rng)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan_in, fan_out = _fans(tensor)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"nn.init: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    return calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", rng=None):
    """He et al. (2015): uniform in ±√3 · gain / √fan."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, rng)


def kaiming_normal_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", rng=None):
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), rng)
