"""The elementwise functions beyond exp, log, sin, cos, tanh and sigmoid (erfc, erfinv, ndtri, log1p,
expm1, exp2, tan, the inverse trigonometric and the hyperbolic functions, atan2, hypot, lgamma and
the polygamma functions), against PyTorch in float64 to second order, by their torch and numpy
names, in float32, and through the jit; the polygamma functions also against the series they sum,
erfinv against 30-digit arithmetic."""

import math

import mpmath
import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import jit
from oracles import compare_with_torch as _compare
from oracles import ORACLE_RTOL, elementwise_cases

RNG = np.random.default_rng(20261207)


# --------------------------------------------------------------------------- elementwise functions
@pytest.mark.parametrize("name, case", sorted(elementwise_cases(RNG, (2, 3)).items()))
def test_elementwise_functions_match_torch_to_second_order(name, case):
    mg_fn, torch_fn, arrays = case
    rtol = ORACLE_RTOL.get(name, 1e-10)
    _compare(mg_fn, torch_fn, arrays, second=True, rtol=rtol)
    _compare(getattr(mg, name), torch_fn, arrays, rtol=rtol)  # the module-level form, torch.asin(x) as mg.asin(x)


def test_elementwise_functions_are_accurate_where_compositions_are_not():
    tiny = np.array([1e-20, -1e-12, 3e-9])
    for name in ("log1p", "expm1", "sinh", "asinh", "atanh", "tan", "asin", "atan"):
        want = [getattr(math, name)(v) for v in tiny]
        np.testing.assert_allclose(getattr(mg, name)(tiny).data, want, rtol=1e-15, err_msg=name)
    assert mg.log1p(mg.tensor(1e-20)).item() == 1e-20 and mg.log(1.0 + mg.tensor(1e-20)).item() == 0.0
    np.testing.assert_allclose(mg.erfc(mg.tensor([10.0, 26.0])).data, [math.erfc(10.0), math.erfc(26.0)], rtol=1e-14)
    assert mg.hypot(mg.tensor(3e200), mg.tensor(4e200)).item() == pytest.approx(5e200)
    x = mg.tensor([-40.0, -745.0, 1e-20], requires_grad=True)  # expm1′ = eˣ, which 1 + expm1(x) rounds to 0 (torch's)
    (grad,) = mg.gradients(x.expm1().sum(), [x])
    np.testing.assert_allclose(grad.data, np.exp(x.data), rtol=1e-15)


def test_numpy_spellings_and_methods():
    x = mg.tensor([0.25, -0.5])
    for numpy_name, torch_name in [("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("arcsinh", "asinh"), ("arctanh", "atanh")]:
        np.testing.assert_array_equal(getattr(x, numpy_name)().data, getattr(mg, torch_name)(x).data)
        np.testing.assert_array_equal(getattr(mg, numpy_name)(x).data, getattr(np, numpy_name)(x.data))
    np.testing.assert_array_equal(x.arctan2(2.0).data, np.arctan2(x.data, 2.0))
    assert mg.acosh(mg.tensor([2.0])).item() == pytest.approx(math.acosh(2.0))
    assert mg.Tensor.asin.__doc__.startswith("`torch.asin`")


def test_atan2_covers_every_quadrant():
    y, x = np.array([1.0, 1.0, -1.0, -1.0, 0.0]), np.array([1.0, -1.0, -1.0, 1.0, -1.0])
    _compare(mg.atan2, torch.atan2, [y, x], second=True)
    assert mg.atan2(y, x).data[-1] == pytest.approx(math.pi)


@pytest.mark.parametrize("name", ["expm1", "asinh", "atan", "erfc", "log1p"])
def test_elementwise_functions_keep_float32(name):
    x = mg.tensor(np.linspace(0.1, 0.9, 5, dtype=np.float32), requires_grad=True)
    y = getattr(x, name)()
    (g,) = mg.gradients(y.sum(), [x])
    assert y.dtype == np.float32 and g.dtype == np.float32, (y.dtype, g.dtype)
    want = getattr(torch, name)(torch.tensor(x.data)).numpy()
    np.testing.assert_allclose(y.data, want, rtol=1e-6)


def test_elementwise_functions_compile(rng):
    def f(x, y):
        return (x.asin() + x.atanh() * mg.atan2(y, x) + x.expm1().log1p() + mg.hypot(x, y).cosh()).sum()

    x, y = rng.uniform(-0.8, 0.8, 5), rng.standard_normal(5)
    want_value, want_grads = mg.value_and_grad(f, argnums=(0, 1))(mg.tensor(x), mg.tensor(y))
    for backend in ("numpy", "numba"):
        value, grads = jit.compile(f, backend=backend, backward=True)(x, y)
        np.testing.assert_allclose(value.data, want_value.data, rtol=1e-12)
        for g, want in zip(grads, want_grads):
            np.testing.assert_allclose(g.data, want.data, rtol=1e-12)


def test_erfinv_within_one_ulp_of_mpmath_and_at_its_edges():
    """erfinv to float64's precision over (−1, 1), the tails next to ±1 and the subnormals included
    (the normal quantiles of tiny and near-one probabilities are built on it), ±inf at ±1 and NaN
    outside, as torch.erfinv; float32 stays float32 and the function compiles."""
    mpmath.mp.dps = 30
    ys = np.concatenate([np.linspace(-0.999, 0.999, 41), 1.0 - np.logspace(-16, -1, 16), -np.logspace(-310, -2, 12)])
    want = np.array([float(mpmath.erfinv(mpmath.mpf(float(y)))) for y in ys])
    got = mg.erfinv(ys).data
    assert np.all(np.abs(got - want) <= np.spacing(np.abs(want))), ys[np.abs(got - want) > np.spacing(np.abs(want))]
    edges = np.array([0.0, 1.0, -1.0, 1.0 + 1e-16 * 4, -3.0, np.nan])
    np.testing.assert_array_equal(mg.erfinv(edges).data, torch.erfinv(torch.tensor(edges)).numpy())
    np.testing.assert_allclose(mg.erf(mg.erfinv(ys)).data, ys, rtol=1e-15, atol=1e-300)
    x32 = mg.tensor(np.linspace(-0.9, 0.9, 5, dtype=np.float32), requires_grad=True)
    (g,) = mg.gradients(x32.erfinv().sum(), [x32])
    assert x32.erfinv().dtype == np.float32 and g.dtype == np.float32
    for scalar in (0.3, np.float32(-0.999), 1.0):  # 0-d inputs too
        assert mg.erfinv(scalar).shape == () and mg.ndtri(np.float32(0.3)).dtype == np.float32
        np.testing.assert_allclose(mg.erfinv(scalar).item(), float(mpmath.erfinv(float(scalar))) if scalar != 1.0 else np.inf, rtol=1e-7)
    value, (grad,) = jit.compile(lambda t: t.erfinv().sum(), backward=True)(ys[:41])
    np.testing.assert_allclose(grad.data, math.sqrt(math.pi) / 2 * np.exp(want[:41] ** 2), rtol=1e-13)


# --------------------------------------------------------------------------- log Γ and the polygamma functions
def _series(n, x, terms=200_000):
    """ψ⁽ⁿ⁾(x) = (−1)ⁿ⁺¹ n! Σₖ 1/(x + k)ⁿ⁺¹ for n ≥ 1, summed exactly (math.fsum) with the
    Euler-Maclaurin tail: the reference that torch's ~1e-9 trigamma cannot be."""
    head = math.fsum(1.0 / (x + k) ** (n + 1) for k in range(terms))
    y = x + terms
    tail = 1.0 / (n * y**n) + 1.0 / (2 * y ** (n + 1)) + (n + 1) / (12 * y ** (n + 2))
    return (-1) ** (n + 1) * math.factorial(n) * (head + tail)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_polygamma_against_its_series(n):
    points = [0.013, 0.5, 1.1364804139119298, 3.7, 9.99, 10.5 + n, 42.0, -0.5, -2.25, -7.8]
    got = mg.polygamma(n, np.array(points)).data
    np.testing.assert_allclose(got, [_series(n, x) for x in points], rtol=2e-14)


def test_lgamma_and_digamma_as_the_c_library_and_torch_at_their_poles():
    x = np.array([0.5, 1.0, 2.0, 1e-300, 171.5, 1e10, -0.5, -2.5])
    np.testing.assert_array_equal(mg.lgamma(x).data, [math.lgamma(v) for v in x])  # exact near its zeros 1 and 2
    digamma = mg.digamma(np.concatenate([x, [1e-8, 30.0]])).data
    np.testing.assert_allclose(digamma, torch.digamma(torch.tensor(np.concatenate([x, [1e-8, 30.0]]))).numpy(), rtol=1e-14)
    special = np.array([0.0, -1.0, -3.0, np.inf, -np.inf, np.nan])
    with np.errstate(all="ignore"):
        for name in ("lgamma", "digamma"):
            np.testing.assert_array_equal(getattr(mg, name)(special).data, getattr(torch, name)(torch.tensor(special)).numpy(), err_msg=name)
        np.testing.assert_array_equal(mg.polygamma(1, special[:3]).data, [np.inf] * 3)
        np.testing.assert_array_equal(mg.polygamma(2, special[:3]).data, [-np.inf] * 3)


def test_polygamma_matches_torch_and_names_bad_orders():
    x = np.concatenate([np.linspace(0.05, 40.0, 400), -np.linspace(0.05, 12.0, 97) - 1e-3])
    for n in range(6):
        want = torch.polygamma(n, torch.tensor(x)).numpy()
        np.testing.assert_allclose(mg.polygamma(n, x).data, want, rtol=1e-8, atol=1e-12, err_msg=f"polygamma({n}, x)")
    np.testing.assert_array_equal(mg.tensor(x).polygamma(2).data, mg.polygamma(2, x).data)
    with pytest.raises(mg.ShapeError, match="polygamma: n must be an integer ≥ 0, got -1"):
        mg.polygamma(-1, x)
    with pytest.raises(mg.ShapeError, match="polygamma: n must be an integer ≥ 0, got 1.5"):
        mg.polygamma(1.5, x)


def test_mvlgamma_matches_torch(rng):
    x = rng.uniform(2.0, 6.0, (2, 3))
    for p in (1, 2, 4):
        _compare(lambda t: t.mvlgamma(p), lambda t: t.mvlgamma(p), [x], second=True, rtol=1e-8)
    with pytest.raises(ValueError, match=r"mvlgamma: all of x must exceed \(p - 1\) / 2 = 1.5"):
        mg.mvlgamma(np.array([1.0, 3.0]), 4)


def test_lgamma_keeps_float32_and_compiles(rng):
    x = mg.tensor(np.linspace(0.5, 4.0, 6, dtype=np.float32), requires_grad=True)
    y = x.lgamma() + x.digamma()
    (g,) = mg.gradients(y.sum(), [x])
    assert y.dtype == np.float32 and g.dtype == np.float32

    def f(t):
        return (t.lgamma() * t.digamma() + mg.polygamma(1, t)).sum()

    data = rng.uniform(0.5, 4.0, 5)
    want_value, (want,) = mg.value_and_grad(f, argnums=(0,))(mg.tensor(data))
    value, (grad,) = jit.compile(f, backward=True)(data)
    np.testing.assert_allclose(value.data, want_value.data, rtol=1e-13)
    np.testing.assert_allclose(grad.data, want.data, rtol=1e-13)


# --------------------------------------------------------------------------- the modified Bessel functions
def test_bessel_functions_within_eight_ulp_of_mpmath_over_the_float64_range():
    """I₀, I₁ and their scaled forms over both series' ranges (|x| = 20 is where they switch), near
    0 (subnormals), near I's overflow at |x| ≈ 713 and at ±inf: within 8 ulp of 40-digit arithmetic
    (torch.special's Chebyshev fits: 8), inf and 0 where torch gives NaN for i0(±inf)."""
    mpmath.mp.dps = 40
    xs = np.concatenate([np.linspace(-30.0, 30.0, 601), np.geomspace(1e-300, 713.0, 400), [19.999999, 20.0, 20.000001, 709.5]])
    for name, order, scaled in (("i0", 0, False), ("i0e", 0, True), ("i1", 1, False), ("i1e", 1, True)):
        exact = [mpmath.besseli(order, mpmath.mpf(float(x))) * (mpmath.exp(-abs(mpmath.mpf(float(x)))) if scaled else 1) for x in xs]
        want = np.array([float(v) for v in exact])
        got = getattr(mg, name)(xs).data
        np.testing.assert_array_less(np.abs(got - want), 8.5 * np.spacing(np.abs(want)) + 1e-320, err_msg=name)
    edges = np.array([np.inf, -np.inf, 0.0, -0.0, 714.0, np.nan])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(mg.i0(edges).data, [np.inf, np.inf, 1.0, 1.0, np.inf, np.nan])
        np.testing.assert_array_equal(mg.i1(edges).data, [np.inf, -np.inf, 0.0, 0.0, np.inf, np.nan])
        for name in ("i0e", "i1e"):
            exact = np.delete(edges, 4)
            np.testing.assert_array_equal(getattr(mg, name)(exact).data, getattr(torch.special, name)(torch.tensor(exact)).numpy())


def test_bessel_functions_keep_float32_and_compile():
    x = mg.tensor(np.linspace(-25.0, 25.0, 7, dtype=np.float32), requires_grad=True)
    for name in ("i0", "i0e", "i1", "i1e"):
        y = getattr(mg, name)(x)
        (g,) = mg.gradients(y.sum(), [x])
        assert y.dtype == np.float32 and g.dtype == np.float32, name
        np.testing.assert_allclose(y.data, getattr(torch.special, name)(torch.tensor(x.data)).numpy(), rtol=1e-6, err_msg=name)
    assert mg.tensor([1.0]).i0().item() == pytest.approx(1.2660658777520082)

    def f(t):  # the von Mises log-normalizer and its mean resultant length
        return (t.i0().log() + mg.i1e(t) / mg.i0e(t) + mg.i1(t)).sum()

    data = np.array([0.0, 0.5, 3.0, 21.0, -4.0])
    want_value, (want,) = mg.value_and_grad(f, argnums=(0,))(mg.tensor(data))
    for backend in ("numpy", "numba"):
        value, (grad,) = jit.compile(f, backend=backend, backward=True)(data)
        np.testing.assert_allclose(value.data, want_value.data, rtol=1e-13)
        np.testing.assert_allclose(grad.data, want.data, rtol=1e-13)
