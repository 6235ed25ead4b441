"""log Γ(x), the polygamma functions ψ⁽ⁿ⁾(x) = dⁿ⁺¹ log Γ(x) / dxⁿ⁺¹, the inverse error functions
and the modified Bessel functions I₀, I₁, on numpy arrays.

numpy has none of them and scipy is not a dependency; the Gamma, Beta and Dirichlet densities need
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
* `standard_gamma_grad(alpha, z)`, the derivative dz/dα of a Gamma(α, 1) draw z at its fixed
  quantile u = P(α, z) (P the regularized lower incomplete gamma function): by the implicit function
  theorem, −(∂P/∂α) / (∂P/∂z), what the draws of `Gamma.rsample` are differentiated with (implicit
  reparameterization, Figurnov, Mohamed and Mnih 2018). ∂P/∂α comes from P's power series where
  z < α + 1 and from Legendre's continued fraction for 1 − P elsewhere, each differentiated in α
  term by term (as Moore's Algorithm AS 187, 1982): accurate to ~1e-14 for α ≤ 10³ (5e-13 at
  10⁵), where PyTorch's `_standard_gamma_grad`, a fitted approximation, is within ~4e-3. Both
  expansions need ~√α terms near z = α: α = 10⁶ costs ~8,000 rounds.
* `erfinv(y)` and `ndtri(p)` (Φ⁻¹, the normal quantile) by Halley's iteration on erf or erfc from
  Winitzki's closed form, within 1 and 2 ulp of 400-digit arithmetic: `ndtri` is −√2 erfcinv(2p)
  in the lower tail, which keeps the digits that √2 erfinv(2p − 1) loses.
* `i0`, `i1` and the scaled `i0e`, `i1e` (e^(−|x|) Iᵥ(x)): the power series below |x| = 20, the
  asymptotic expansion above, within 8 ulp of 40-digit arithmetic (torch's Chebyshev fits: 8).
All compute in float64 and return the input's floating dtype.
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


def standard_gamma_grad(alpha, z):
    """dz/dα for Gamma(α, 1) draws z, entry by entry (0 where z is 0: z log z tends to 0)."""
    (alpha, dtype), (z, _) = _float(alpha), _float(z)
    alpha, z = np.broadcast_arrays(alpha, z)
    out = np.zeros(z.shape)
    series, fraction = (z > 0) & (z < alpha + 1.0), z >= alpha + 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a, x = alpha[series], z[series]
        total, weighted = _gamma_series(a, x)
        out[series] = -(x / a) * (total * (np.log(x) - polygamma(a + 1.0, 0)) + weighted)
        a, x = alpha[fraction], z[fraction]
        f, df = _gamma_fraction(a, x)
        out[fraction] = x * (f * (np.log(x) - polygamma(a, 0)) + df)
    return out.astype(dtype)


def gammainc(a, x, upper=False):
    """The regularized incomplete gamma function P(a, x) = γ(a, x) / Γ(a) (Q = 1 − P if `upper`),
    entry by entry, for a ≥ 0 and x ≥ 0 (NaN elsewhere, as in PyTorch): from the series where
    x < a + 1, the continued fraction beyond, each for the side it is accurate on, the other as 1 − it."""
    (a, dtype), (x, _) = _float(a), _float(x)
    a, x = np.broadcast_arrays(a, x)
    out = np.where((a == 0) & (x > 0), 0.0 if upper else 1.0, np.nan)  # P(0, x) = 1: all mass at 0
    series, fraction = (a > 0) & (x >= 0) & (x < a + 1.0), (a > 0) & (x >= a + 1.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        b, y = a[series], x[series]
        lower = np.exp(b * np.log(y) - y - lgamma(b + 1.0)) * _gamma_series(b, y)[0]  # 0 at y = 0
        out[series] = 1.0 - lower if upper else lower
        b, y = a[fraction], x[fraction]
        tail = np.where(np.isinf(y), 0.0, np.exp(b * np.log(y) - y - lgamma(b)) * _gamma_fraction(b, y)[0])
        out[fraction] = tail if upper else 1.0 - tail
    return out.astype(dtype)


# Each expansion stops for an entry when its terms no longer move the sum, in either the value or
# its derivative (relative to float64's precision)
_EPS = np.finfo(np.float64).eps / 2


def _gamma_series(a, z):
    """(S, T) with P(a, z) = zᵃ e⁻ᶻ / Γ(a + 1) · S, S = Σₙ tₙ, tₙ = zⁿ / ((a + 1) ⋯ (a + n)), and
    T = Σₙ tₙ dₙ, dₙ = ∂ log tₙ / ∂a = −Σₖ≤ₙ 1 / (a + k). Then ∂P/∂a = P (log z − ψ(a + 1)) +
    zᵃ e⁻ᶻ / Γ(a + 1) · T, and as the density is zᵃ⁻¹ e⁻ᶻ / Γ(a), a draw's dz/da = −(z / a)
    (S (log z − ψ(a + 1)) + T): no power of z is ever formed, which for a tiny a and z would underflow."""
    t, d = np.ones_like(z), np.zeros_like(z)
    total, weighted = t.copy(), d.copy()
    going, n = np.ones(z.shape, bool), 0
    while going.any():
        n += 1
        t[going] *= z[going] / (a[going] + n)
        d[going] -= 1.0 / (a[going] + n)
        total[going] += t[going]
        weighted[going] += t[going] * d[going]
        going &= (t > _EPS * total) | (np.abs(t * d) > _EPS * np.abs(weighted))
    return total, weighted


def _gamma_fraction(a, z):
    """(f, ∂f/∂a) with 1 − P(a, z) = zᵃ e⁻ᶻ / Γ(a) · f, f = 1 / (b₀ + a₁ / (b₁ + a₂ / (b₂ + ⋯))),
    bₙ = z + 2n + 1 − a and aₙ = −n (n − a) (Legendre's; Numerical Recipes 6.2.7), evaluated by
    Wallis' recurrence for its convergents Aₙ / Bₙ carried with their derivatives in a and rescaled
    by Bₙ each round. Then ∂(1 − P)/∂a = (1 − P)(log z − ψ(a)) + zᵃ e⁻ᶻ / Γ(a) · ∂f/∂a, and a
    draw's dz/da = z (f (log z − ψ(a)) + ∂f/∂a)."""
    zeros = np.zeros_like(z)
    a_before, a_now, b_before, b_now = np.ones_like(z), zeros, zeros, np.ones_like(z)  # A₋₁, A₀, B₋₁, B₀
    da_before, da_now, db_before, db_now = zeros, zeros, zeros, zeros
    f, df = zeros, zeros
    going, n = np.ones(z.shape, bool), 0
    while going.any():
        numerator, d_numerator = (1.0, 0.0) if n == 0 else (-n * (n - a), float(n))
        denominator = z + (2 * n + 1) - a  # its derivative in a is −1
        a_next = denominator * a_now + numerator * a_before
        b_next = denominator * b_now + numerator * b_before
        da_next = denominator * da_now - a_now + numerator * da_before + d_numerator * a_before
        db_next = denominator * db_now - b_now + numerator * db_before + d_numerator * b_before
        scale = 1.0 / b_next
        a_before, a_now, b_before, b_now = a_now * scale, a_next * scale, b_now * scale, np.ones_like(z)
        da_before, da_now, db_before, db_now = da_now * scale, da_next * scale, db_now * scale, db_next * scale
        f_next, df_next = a_now, da_now - a_now * db_now  # (A′B − AB′) / B² with B = 1
        going &= (np.abs(f_next - f) > _EPS * np.abs(f_next)) | (np.abs(df_next - df) > _EPS * np.abs(df_next))
        f, df, n = f_next, df_next, n + 1
    return f, df


_erf_entries, _erfc_entries = np.frompyfunc(math.erf, 1, 1), np.frompyfunc(math.erfc, 1, 1)


def _erf_of(x):
    return np.asarray(_erf_entries(x), dtype=np.float64)


def _erfc_of(x):
    return np.asarray(_erfc_entries(x), dtype=np.float64)


def erfinv(y):
    """The x with erf(x) = y, entry by entry, for −1 ≤ y ≤ 1 (±inf at ±1, NaN outside, as in PyTorch)."""
    values, dtype = _float(y)
    magnitude = np.abs(values)
    return (np.sign(values) * _inverse_erf(magnitude, 1.0 - magnitude)).astype(dtype)  # |y| > 1: a negative complement, NaN


def ndtri(p):
    """The standard normal quantile Φ⁻¹(p), entry by entry, for 0 ≤ p ≤ 1 (∓inf at 0 and 1, NaN
    outside): −√2 erfcinv(2p) for p < 1/2, √2 erfcinv(2(1 − p)) above, where 1 − p is exact. The
    quantile of p = 1e-12 keeps its precision, which √2 erfinv(2p − 1) loses with 2p − 1's digits."""
    values, dtype = _float(p)
    tail = np.where(values < 0.5, values, 1.0 - values)  # the smaller of p and 1 − p, exactly
    x = math.sqrt(2.0) * _inverse_erf(1.0 - 2.0 * tail, 2.0 * tail)  # p outside [0, 1]: a negative tail, NaN
    return np.where(values < 0.5, -x, x).astype(dtype)


def _inverse_erf(magnitude, complement):
    """x ≥ 0 with erf(x) = magnitude ∈ [0, 1], given also its complement 1 − magnitude to full
    relative precision (in a tail, the only accurate one of the two): inf at 1.

    Winitzki's closed form (relative error ≤ 2e-3) starts Halley's iteration on f(x) = erf(x) − y,
    whose steps are x ← x − r / (1 + x r) with r = f / f′ (since f″ = −2x f′); where the magnitude is
    above 1/2 the residual is complement − erfc(x), which does not cancel. Each step triples the
    correct digits once they are few; the iteration stops when a step no longer moves x. Beyond
    x ≈ 26 (complements below 1e-300) f′ ∝ e^(−x²) underflows: `_inverse_erfc_tail` solves there."""
    shape = np.shape(magnitude)
    magnitude, complement = np.atleast_1d(magnitude), np.atleast_1d(complement)  # arrays, for the masks below
    inside = (complement > 0.0) & (magnitude <= 1.0)
    deep = inside & (complement < 1e-300)
    halley = inside & ~deep
    safe_complement = np.where(halley, complement, 0.5)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_complement = np.log(safe_complement) + np.log1p(1.0 - safe_complement)  # log(1 − y²)
        a = 0.147
        b = 2.0 / (math.pi * a) + 0.5 * log_complement
        x = np.sqrt(np.sqrt(b * b - log_complement / a) - b)
        near, far = halley & (magnitude > 0.5), halley & (magnitude <= 0.5)
        residual = np.zeros_like(x)
        for _ in range(_MAX_HALLEY_STEPS):
            residual[far] = _erf_of(x[far]) - magnitude[far]
            residual[near] = complement[near] - _erfc_of(x[near])
            r = residual / (2.0 / math.sqrt(math.pi) * np.exp(-x * x))
            step = np.where(halley, r / (1.0 + x * r), 0.0)
            x = x - step
            moving = np.abs(step) > _EPS * np.abs(x)
            if not moving.any():
                break
            near, far = near & moving, far & moving  # the entries that converged keep their residuals' 0
            residual[~moving] = 0.0
        x[deep] = _inverse_erfc_tail(complement[deep])
    return np.where(inside, x, np.where(complement == 0.0, np.inf, np.nan)).reshape(shape)


_MAX_HALLEY_STEPS = 12


def _inverse_erfc_tail(q):
    """x with erfc(x) = q for q < 1e-300 (x > 26), from erfc's asymptotic expansion
    log erfc(x) = −x² − log(x√π) + log Σₖ (−1)ᵏ (2k − 1)!! / (2x²)ᵏ: the fixed point of
    x² = −log q − log(x√π) + log Σ, a contraction by ~1/(2x²) < 1e-3, gains three digits a round."""
    x = np.sqrt(-np.log(q))
    for _ in range(8):
        inverse = 1.0 / (2.0 * x * x)
        series, term = np.ones_like(x), np.ones_like(x)
        for k in range(1, 9):
            term = -term * (2 * k - 1) * inverse
            series = series + term
        x = np.sqrt(-np.log(q) - np.log(x * math.sqrt(math.pi)) + np.log(series))
    return x


# The modified Bessel functions of the first kind, orders 0 and 1, and their exponentially scaled
# forms e^(−|x|) Iᵥ(x) (torch.special's i0, i0e, i1, i1e; the von Mises density's normalizer).
_BESSEL_SWITCH = 20.0  # below: the power series; above: the asymptotic series, exact to float64 there
# 1 / (k! (k + v)!), each rounded once: a term's error does not grow with k as a recurrence's does.
# (x/2)²ᵏ / (k! (k + v)!) falls below 1e-17 of the sum by k = 45 at x = 20.
_BESSEL_SERIES = [[1.0 / (math.factorial(k) * math.factorial(k + v)) for k in range(48)] for v in (0, 1)]
_BESSEL_ASYMPTOTIC_TERMS = 40  # its terms shrink while k < 2x; the 40th is < 1e-16 of the sum at x = 20


def _bessel_series(x, order):
    """Iᵥ(x) = Σₖ (x/2)²ᵏ⁺ᵛ / (k! (k + v)!) for 0 ≤ x ≤ 20: positive terms, so no cancellation."""
    half = x / 2.0
    return sum(np.power(half, 2 * k + order) * c for k, c in enumerate(_BESSEL_SERIES[order]))


def _bessel_asymptotic(x, order):
    """e^(−x) Iᵥ(x) ~ (2πx)^(−1/2) Σₖ (−1)ᵏ aₖ(v) / xᵏ, aₖ(v) = ∏ⱼ₌₁..ₖ (4v² − (2j − 1)²) / (k! 8ᵏ)
    (Abramowitz and Stegun 9.7.1), for x ≥ 20."""
    term = np.ones_like(x)
    expansion = term
    for k in range(1, _BESSEL_ASYMPTOTIC_TERMS):
        term = -term * (4 * order * order - (2 * k - 1) ** 2) / (k * 8.0 * x)
        expansion = expansion + term
    return expansion / np.sqrt(2.0 * math.pi * x)


def _bessel(x, order, scaled):
    """Iᵥ(x) (e^(−|x|) Iᵥ(x) if `scaled`) entry by entry: the power series below |x| = 20 and the
    asymptotic one above, each where it is accurate; I₀ is even, I₁ odd."""
    values, dtype = _float(x)
    magnitude = np.abs(values)
    small, large = np.minimum(magnitude, _BESSEL_SWITCH), np.maximum(magnitude, _BESSEL_SWITCH)
    series, asymptotic = _bessel_series(small, order), _bessel_asymptotic(large, order)
    with np.errstate(over="ignore", invalid="ignore"):  # past |x| ≈ 713 Iᵥ(x) is beyond float64: inf
        if scaled:
            value = np.where(magnitude < _BESSEL_SWITCH, series * np.exp(-small), np.where(magnitude == np.inf, 0.0, asymptotic))
        else:  # e^x as (e^(x/2))², which stays finite up to where Iᵥ(x) itself overflows
            growth = np.exp(large / 2.0)
            value = np.where(magnitude < _BESSEL_SWITCH, series, np.where(magnitude == np.inf, np.inf, asymptotic * growth * growth))
    return (np.sign(values) * value if order == 1 else value).astype(dtype)


def i0(x):
    """I₀(x), entry by entry (inf past |x| ≈ 713 and at ±inf)."""
    return _bessel(x, 0, scaled=False)


def i0e(x):
    """e^(−|x|) I₀(x): finite for every x, 0 at ±inf."""
    return _bessel(x, 0, scaled=True)


def i1(x):
    """I₁(x), odd (±inf past |x| ≈ 713 and at ±inf)."""
    return _bessel(x, 1, scaled=False)


def i1e(x):
    """e^(−|x|) I₁(x), odd: finite for every x, ±0 at ±inf."""
    return _bessel(x, 1, scaled=True)
