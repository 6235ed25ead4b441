"""log Γ(x) and the polygamma functions ψ⁽ⁿ⁾(x) = dⁿ⁺¹ log Γ(x) / dxⁿ⁺¹ on numpy arrays.

numpy has neither and scipy is not a dependency; the Gamma, Beta and Dirichlet densities need
log Γ, and its derivatives of every order are the polygamma functions (ψ = ψ⁽⁰⁾ is the digamma).

* `lgamma` is the C library's (Python's `math.lgamma`), entry by entry: accurate near its zeros
  x = 1 and 2, where a formula in numpy (Lanczos') loses its relative accuracy. Its poles (0, −1,
  −2, ...) give +inf, as in PyTorch.
* `polygamma(x, n)`, from two classical identities (Abramowitz and Stegun 6.3.5, 6.4.6, 6.4.11):
  the recurrence ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x + 1) − (−1)ⁿ n! / xⁿ⁺¹ moves x up to y ≥ 10 + n, where the
  asymptotic series in 1/y (the Bernoulli numbers' below) is accurate to float64's precision; left
  of 0 the reflection (−1)ⁿ ψ⁽ⁿ⁾(1 − x) − ψ⁽ⁿ⁾(x) = π dⁿ/dxⁿ cot(πx) brings x to 1 − x first, the
  n-th derivative of the cotangent being a polynomial in cot(πx). At the poles 0, −1, −2, ... ψ
  is −inf at 0 and NaN left of it, ψ⁽ⁿ⁾ (−1)ⁿ⁺¹ ∞, as in PyTorch.
Both compute in float64 and return the input's floating dtype.
"""

import math

import numpy as np

# B₂, B₄, ..., B₁₆: the asymptotic series' coefficients
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _lgamma_entry(x):
    try:
        return math.lgamma(x)
    except ValueError:  # a pole: 0, −1, −2, ...
        return math.inf


_lgamma_entries = np.frompyfunc(_lgamma_entry, 1, 1)


def _float(x):
    """x in float64, and the floating dtype to return (an integer input gives float64)."""
    x = np.asarray(x)
    return x.astype(np.float64), np.result_type(x.dtype, np.float16)


def lgamma(x):
    """log |Γ(x)|, entry by entry."""
    values, dtype = _float(x)
    return np.asarray(_lgamma_entries(values), dtype=np.float64).astype(dtype)


def polygamma(x, order):
    """ψ⁽ⁿ⁾(x) for an integer n = order ≥ 0, entry by entry (order 0: the digamma function)."""
    n = order
    values, dtype = _float(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        left = values < 0.0
        out = _polygamma_right(np.where(left, 1.0 - values, values), n)
        if left.any():
            out[left] = (-1) ** n * out[left] - math.pi * _cot_derivative(values[left], n)
            # the poles −1, −2, ...: tan(πx) rounds to a tiny number there, not 0; as at 0 and in
            # PyTorch, ψ has no limit (NaN) and ψ⁽ⁿ⁾ tends to (−1)ⁿ⁺¹ ∞ from the right
            out[left & (values == np.floor(values))] = np.nan if n == 0 else (-1) ** (n + 1) * np.inf
    return out.astype(dtype)


def _polygamma_right(x, n):
    """ψ⁽ⁿ⁾(x) for x ≥ 0 (and NaN, inf), by the recurrence up to 10 + n, then the asymptotic series."""
    sign, factorial = (-1.0) ** (n + 1), math.factorial(n)
    threshold = 10.0 + n
    y, total = x.copy(), np.zeros_like(x)
    small = y < threshold
    while small.any():  # at most 11 + n rounds: each moves every small y up by one
        term = 1.0 / y[small] if n == 0 else sign * factorial / y[small] ** (n + 1)
        total[small] += -term if n == 0 else term
        y[small] += 1.0
        small = y < threshold
    return total + _asymptotic(y, n)


def _asymptotic(y, n):
    """The asymptotic series of ψ⁽ⁿ⁾(y) for large y."""
    inverse = 1.0 / y
    if n == 0:
        series = np.log(y) - 0.5 * inverse
        for k, b in enumerate(_BERNOULLI, start=1):
            series -= b / (2 * k) * inverse ** (2 * k)
        return series
    series = math.factorial(n - 1) * inverse**n + 0.5 * math.factorial(n) * inverse ** (n + 1)
    for k, b in enumerate(_BERNOULLI, start=1):
        series += b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) * inverse ** (2 * k + n)
    return (-1.0) ** (n + 1) * series


def _cot_derivative(x, n):
    """dⁿ/dxⁿ cot(πx) = (−π)ⁿ Qₙ(cot πx), with Q₀(c) = c and Qₖ₊₁(c) = Qₖ'(c) (1 + c²)."""
    q = np.polynomial.Polynomial([0.0, 1.0])
    for _ in range(n):
        q = q.deriv() * np.polynomial.Polynomial([1.0, 0.0, 1.0])
    return (-math.pi) ** n * q(1.0 / np.tan(math.pi * x))
