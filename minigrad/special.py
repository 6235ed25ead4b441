"""`torch.special` for minigrad (`mg.special`): PyTorch programs write `torch.special.i0e(x)` or
`torch.special.xlogy(p, q)`, so the functions are here under those names. Most are minigrad's own
(`mg.digamma` is `special.digamma`, `mg.sigmoid` is `special.expit`); the rest are compositions
written here, each differentiable to every order:

* `xlogy(x, y)` = x log y and `xlog1py(x, y)` = x log(1 + y), 0 where x = 0 (and y is not NaN),
  the terms of an entropy or a KL divergence, where 0 · log 0 is 0;
* `entr(x)` = −x log x (0 at 0, −∞ below);
* `sinc(x)` = sin(πx) / (πx), 1 at 0, its Taylor series near 0 so that its derivatives there are
  right to every order (PyTorch's second derivative at 0 is 0; it is −π²/3);
* `ndtr(x)` = Φ(x) = erfc(−x/√2)/2 and `log_ndtr(x)` = log Φ(x), accurate in both tails (log Φ of
  −40 is −804.6, where log(Φ(−40)) is log 0).
"""

import math

import numpy as np

from .functional import (
    _float_operands, digamma, erf, erfc, erfinv, exp2, expm1, gammainc, gammaincc, i0, i0e, i1, i1e, lgamma, log1p, log_softmax, logit,
    logsumexp, mvlgamma, ndtri, polygamma, round, sigmoid, softmax, where,
)
from .tensor import Tensor

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "i0", "i0e",
    "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
    "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy",
]

expit, gammaln, psi, multigammaln = sigmoid, lgamma, digamma, mvlgamma
modified_bessel_i0, modified_bessel_i1 = i0, i1

_SINC_SERIES_BELOW = 1e-2  # |πx| under which 1 − z²/6 + z⁴/120 − z⁶/5040 is sin z / z to 1e-22
_LOG_NDTR_ASYMPTOTIC_BELOW = -37.5  # where erfc(−x/√2) underflows; the series' next term is 3e-13 of its sum there


def _float(x):
    """x as a floating tensor (an integer one in float64, minigrad's default float)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return x if x.dtype.kind == "f" else x.astype(np.float64)


def _x_times(x, y, log, singular):
    """x · log(y), 0 where x = 0 and log(y) is infinite (`singular` y); elsewhere the product,
    so that its gradient in x is log(y) at x = 0 too, as PyTorch's. The singular branch's log gets
    a harmless argument, so no 0 · ∞ reaches a gradient."""
    x, y = _float_operands(x, y)
    zero = (x.data == 0) & (singular(y.data) | np.isinf(y.data))
    safe = where(zero, np.full((), 2.0, dtype=y.dtype), y)
    return where(zero, np.zeros((), dtype=x.dtype), x * log(safe) + 0.0)  # + 0: 0 · log 0.5 is −0, torch's +0


def xlogy(input, other):  # noqa: A002  (PyTorch's argument names)
    """x log y, 0 where x = 0 (also for y = 0 or ∞), NaN for a NaN y."""
    return _x_times(input, other, lambda y: y.log(), lambda y: y == 0)


def xlog1py(input, other):  # noqa: A002
    """x log(1 + y), 0 where x = 0 (also for y = −1 or ∞), log1p's accuracy for a small y."""
    return _x_times(input, other, lambda y: y.log1p(), lambda y: y == -1)


def entr(input):  # noqa: A002
    """−x log x for x > 0, 0 at 0, −∞ for x < 0 (NaN stays NaN). Its gradient at 0 is 0 here,
    PyTorch's +∞ (the one-sided derivative)."""
    x = _float(input)
    positive = x.data > 0
    safe = where(positive, x, np.ones((), dtype=x.dtype))
    outside = np.where(x.data == 0, 0.0, np.where(np.isnan(x.data), np.nan, -np.inf)).astype(x.dtype)
    return where(positive, -safe * safe.log(), outside)


def sinc(input):  # noqa: A002
    """sin(πx) / (πx), 1 at 0; its Taylor polynomial for |πx| < 1e-2, so derivatives at 0 are exact."""
    x = _float(input)
    z = x * math.pi
    near = np.abs(z.data) < _SINC_SERIES_BELOW
    far = where(near, np.ones((), dtype=x.dtype), z)
    z2 = where(near, z, np.zeros((), dtype=x.dtype)) ** 2
    series = 1.0 - z2 / 6.0 * (1.0 - z2 / 20.0 * (1.0 - z2 / 42.0))
    return where(near, series, far.sin() / far)


def ndtr(input):  # noqa: A002
    """Φ(x), the standard normal CDF, as erfc(−x/√2)/2: accurate in the lower tail, where
    (1 + erf(x/√2))/2 cancels."""
    x = _float(input)
    return 0.5 * erfc(-x / math.sqrt(2.0))


def log_ndtr(input):  # noqa: A002
    """log Φ(x): log1p(−Φ(−x)) above −1, log Φ(x) down to −37.5 and, below, where Φ underflows, the
    asymptotic series −x²/2 − log(−x √(2π)) + log(1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸)."""
    x = _float(input)
    upper = x.data > -1.0
    lower = x.data < _LOG_NDTR_ASYMPTOTIC_BELOW
    middle_x = where(upper | lower, np.full((), -2.0, dtype=x.dtype), x)
    upper_x = where(upper, x, np.zeros((), dtype=x.dtype))
    lower_x = where(lower, x, np.full((), -40.0, dtype=x.dtype))
    inverse = 1.0 / (lower_x * lower_x)
    series = 1.0 - inverse * (1.0 - 3.0 * inverse * (1.0 - 5.0 * inverse * (1.0 - 7.0 * inverse)))
    asymptotic = -0.5 * lower_x * lower_x - (-lower_x * math.sqrt(2.0 * math.pi)).log() + series.log()
    return where(upper, log1p(-ndtr(-upper_x)), where(lower, asymptotic, ndtr(middle_x).log()))
