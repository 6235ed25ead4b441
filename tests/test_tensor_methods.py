"""PyTorch's Tensor methods and functions added for ported programs, against PyTorch: the elementwise
ones (remainder, fmod, floor_divide, logaddexp, copysign, heaviside, ...), scans (logcumsumexp,
cummax, cummin), views and selections (rot90, take, select, tile, sum_to_size, ...), the method
forms of minigrad's functions, new_zeros and its kin, dtype conversions and the in-place forms.
Values and gradients to second order in float64 (`compare_with_torch`), dtypes where PyTorch's rule
decides them, edge values (negative divisors, zeros of both signs, ±∞, NaN) and errors."""

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad.errors import DtypeError, GraphError, ShapeError
from oracles import compare_with_torch as _compare

INF, NAN = np.inf, np.nan


def _same_values(out, expected):
    """Equal values, NaN where PyTorch has NaN and the same sign everywhere else (−0.0 is not +0.0)."""
    expected = expected.numpy()
    np.testing.assert_array_equal(out.data, expected)
    numbers = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(out.data)[numbers], np.signbit(expected)[numbers])


def _away_from_zero(rng, shape, low=0.5, high=2.0):
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(low, high, shape)


# --------------------------------------------------------------------------- remainder, fmod, floor_divide
DIVISIONS = ["remainder", "fmod", "floor_divide"]
# Every sign of dividend and divisor, zeros of both signs, exact multiples, infinities and NaN.
DIVIDENDS = np.array([5.0, -5.0, 5.0, -5.0, 4.0, -4.0, -0.0, 0.0, 0.0, 1.0, -1.0, INF, 1.0, 1.0, 1.0, -1.0, NAN, 3.0, 1e30, -7.5])
DIVISORS = np.array([3.0, 3.0, -3.0, -3.0, 2.0, 2.0, 2.0, -2.0, 0.0, 0.0, 0.0, 2.0, INF, -INF, 0.1, INF, 2.0, NAN, 7.0, 2.5])


@pytest.mark.parametrize("name", DIVISIONS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_divisions_match_torch_at_edge_values(name, dtype):
    x, y = DIVIDENDS.astype(dtype), DIVISORS.astype(dtype)
    expected = getattr(torch, name)(torch.from_numpy(x), torch.from_numpy(y))
    for out in (getattr(mg, name)(mg.tensor(x), mg.tensor(y)), getattr(mg.tensor(x), name)(mg.tensor(y))):
        assert out.dtype == dtype
        _same_values(out, expected)


def test_floor_divide_floors_the_exact_quotient():
    """1.0 / 0.1 rounds to 10.0, but 0.1 is a little above a tenth: the quotient floors to 9, and the
    remainder is fmod's exact 0.1 − 5.5e-17, where 1.0 − 9 · 0.1 gives 0.1 − 2.8e-17."""
    x, y = mg.tensor(1.0), mg.tensor(0.1)
    assert mg.floor_divide(x, y).item() == 9.0 == torch.floor_divide(torch.tensor(1.0, dtype=torch.float64), 0.1).item()
    assert mg.remainder(x, y).item() == torch.remainder(torch.tensor(1.0, dtype=torch.float64), 0.1).item() != 1.0 - 9 * 0.1


@pytest.mark.parametrize("name", DIVISIONS)
def test_divisions_of_integers_are_integers_and_refuse_zero(name):
    x, y = np.array([5, -5, 7, -7, 0, 6]), np.array([3, 3, -2, -2, 4, -3])
    out = getattr(mg, name)(mg.tensor(x), mg.tensor(y))
    expected = getattr(torch, name)(torch.from_numpy(x), torch.from_numpy(y))
    assert out.dtype == np.int64 and expected.dtype == torch.int64
    np.testing.assert_array_equal(out.data, expected.numpy())
    with pytest.raises(ZeroDivisionError, match=f"{name}: integer division by zero"):
        getattr(mg, name)(mg.tensor(x), mg.tensor(np.array(0)))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):  # PyTorch refuses it too
        getattr(torch, name)(torch.from_numpy(x), torch.tensor(0))


@pytest.mark.parametrize("name", DIVISIONS)
def test_divisions_promote_as_torch(name):
    ints = np.array([5, -5, 7, -7])
    # an int tensor and a float32 one: float32 (numpy would make it float64)
    out = getattr(mg, name)(mg.tensor(ints), mg.tensor(np.array([2.5, 2.5, -1.5, 1.5], dtype=np.float32)))
    expected = getattr(torch, name)(torch.from_numpy(ints), torch.tensor([2.5, 2.5, -1.5, 1.5]))
    assert out.dtype == np.float32 and expected.dtype == torch.float32
    _same_values(out, expected)
    # an int tensor and a Python float: a float (minigrad's default float64, PyTorch's float32)
    out = getattr(mg, name)(mg.tensor(ints), 2.5)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.data, getattr(torch, name)(torch.from_numpy(ints).double(), 2.5).numpy())
    # a Python int beside an int tensor stays an int, on either side
    assert getattr(mg, name)(mg.tensor(ints), 3).dtype == np.int64
    np.testing.assert_array_equal(mg.remainder(7, mg.tensor(ints)).data, torch.remainder(7, torch.from_numpy(ints)).numpy())


@pytest.mark.parametrize("name", ["remainder", "fmod"])
def test_remainders_differentiate_as_torch(name, rng):
    x = rng.uniform(-6, 6, (3, 4))
    y = _away_from_zero(rng, (4,), 0.7, 2.5)
    _compare(getattr(mg, name), getattr(torch, name), [x, y], second=True)
    _compare(lambda a, b: getattr(a, name)(b), lambda a, b: getattr(a, name)(b), [x, y])
    _compare(lambda a: getattr(mg, name)(a, -1.5), lambda a: getattr(torch, name)(a, -1.5), [x], second=True)


def test_floor_divide_passes_back_zeros(rng):
    x = mg.tensor(rng.uniform(-5, 5, (2, 3)), requires_grad=True)
    y = mg.tensor(_away_from_zero(rng, (3,)), requires_grad=True)
    gx, gy = mg.gradients((mg.floor_divide(x, y) * 2.0).sum(), [x, y])
    assert gx.shape == x.shape and gy.shape == y.shape and not gx.data.any() and not gy.data.any()
    expected = torch.div(torch.from_numpy(x.data), torch.from_numpy(y.data), rounding_mode="floor")
    np.testing.assert_array_equal(x.floor_divide(y).data, expected.numpy())


# --------------------------------------------------------------------------- logaddexp, logaddexp2
@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_differentiates_as_torch(name, rng):
    x, y = rng.standard_normal((3, 4)) * 3, rng.standard_normal((4,)) * 3
    _compare(getattr(mg, name), getattr(torch, name), [x, y], second=True)
    _compare(lambda a, b: getattr(a, name)(b), lambda a, b: getattr(a, name)(b), [x, y], second=True)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_at_ties_is_smooth(name, rng):
    """x = y exactly: 1/2 of the gradient each and a second derivative of 1/4 · (ln 2 for base 2),
    PyTorch's too; max + log1p(e^−|x−y|) would give a second derivative of 0 there."""
    x = rng.standard_normal(5)
    _compare(getattr(mg, name), getattr(torch, name), [x, x.copy()], second=True)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_values_at_extremes(name):
    x = np.array([0.0, -40.0, 1e4, -1e4, 800.0, -INF, -INF, INF, INF, -INF, 1.0, NAN, 3.0])
    y = np.array([-40.0, 0.0, 1e4 - 1, -1e4, 801.0, -INF, 2.0, INF, -INF, INF, INF, 1.0, NAN])
    out = getattr(mg, name)(mg.tensor(x), mg.tensor(y))
    expected = getattr(torch, name)(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    np.testing.assert_allclose(out.data, expected, rtol=1e-15, atol=0)  # the tiny term's 4.2e-18 too
    assert out.data[1] > 0


def test_logaddexp_dtypes(rng):
    x32 = rng.standard_normal(4).astype(np.float32)
    out = mg.logaddexp(mg.tensor(x32), 1.0)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.data, torch.logaddexp(torch.from_numpy(x32), torch.tensor(1.0)).numpy(), rtol=1e-6)
    assert mg.logaddexp(mg.tensor(x32), mg.tensor(x32.astype(np.float64))).dtype == np.float64
    # integers: float64 here; PyTorch refuses them
    ints = np.array([1, -2, 30])
    out = mg.logaddexp(mg.tensor(ints), mg.tensor(np.array([0, 5, 30])))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.data, np.logaddexp(ints, [0, 5, 30]), rtol=1e-15)
    with pytest.raises(NotImplementedError):
        torch.logaddexp(torch.from_numpy(ints), torch.from_numpy(ints))


def test_logaddexp_gradient_is_finite_beside_infinities():
    x = mg.tensor([-INF, -INF, 1.0, INF], requires_grad=True)
    y = mg.tensor([-INF, 2.0, -INF, 3.0], requires_grad=True)
    out = mg.logaddexp(x, y)
    np.testing.assert_array_equal(out.data, [-INF, 2.0, 1.0, INF])
    gx, gy = mg.gradients(out, [x, y], grad=mg.tensor(np.ones(4)))
    np.testing.assert_array_equal(gx.data, [1.0, 0.0, 1.0, 1.0])  # at −∞ and −∞ the input's (PyTorch: NaN)
    np.testing.assert_array_equal(gy.data, [0.0, 1.0, 0.0, 0.0])


# --------------------------------------------------------------------------- signbit, copysign, heaviside
SIGNED = np.array([-0.0, 0.0, -1.5, 2.0, NAN, -NAN, -INF, INF])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_signbit_sees_negative_zero_and_nan(dtype):
    x = SIGNED.astype(dtype)
    for out in (mg.signbit(mg.tensor(x)), mg.tensor(x).signbit()):
        assert out.dtype == np.bool_
        np.testing.assert_array_equal(out.data, torch.signbit(torch.from_numpy(x)).numpy())
    assert out.data[0] and not out.data[1] and out.data[5]
    ints = np.array([-3, 0, 4])
    np.testing.assert_array_equal(mg.signbit(mg.tensor(ints)).data, [True, False, False])


def test_copysign_values_at_zeros_and_nan():
    x = np.array([1.0, 0.0, -2.0, 3.0, -0.0, NAN, INF, 5.0, -NAN])
    y = np.array([-0.0, -1.0, 0.0, NAN, 1.0, -1.0, -2.0, -NAN, 1.0])
    for out in (mg.copysign(mg.tensor(x), mg.tensor(y)), mg.tensor(x).copysign(mg.tensor(y))):
        expected = torch.copysign(torch.from_numpy(x), torch.from_numpy(y)).numpy()
        np.testing.assert_array_equal(out.data, expected)
        np.testing.assert_array_equal(np.signbit(out.data), np.signbit(expected))  # a NaN's sign too
    np.testing.assert_array_equal(mg.copysign(mg.tensor(x), -1).data, torch.copysign(torch.from_numpy(x), -1).numpy())


def test_copysign_differentiates_as_torch(rng):
    x, y = rng.standard_normal((3, 4)), rng.standard_normal(4)
    _compare(mg.copysign, torch.copysign, [x, y], second=True)
    x[0, 0] = 0.0  # the gradient at 0 is 0 in both (PyTorch's second derivative is NaN there)
    _compare(mg.copysign, torch.copysign, [x, y])


def test_copysign_dtypes():
    ints = mg.tensor(np.array([5, -5, 7])), mg.tensor(np.array([3, -3, 0]))
    out = mg.copysign(*ints)
    assert out.dtype == np.float64  # PyTorch's float32: minigrad's default float is float64
    np.testing.assert_array_equal(out.data, [5.0, -5.0, 7.0])
    assert mg.copysign(mg.tensor(np.ones(2, dtype=np.float32)), mg.tensor(np.array([-1, 1]))).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_heaviside_matches_torch(dtype):
    x = np.array([-1.0, 0.0, 2.0, -0.0, 0.0, NAN, -INF, INF])
    x = x if dtype != np.int64 else np.array([-1, 0, 2, 0, 0, 3, -4, 5])
    values = np.array([0.5, 0.25, 3.0, -2.0, NAN, 1.0, 1.0, 1.0]).astype(dtype) if dtype != np.int64 else np.arange(8) + 10
    x = x.astype(dtype)
    for out in (mg.heaviside(mg.tensor(x), mg.tensor(values)), mg.tensor(x).heaviside(mg.tensor(values))):
        assert out.dtype == dtype
        np.testing.assert_array_equal(out.data, torch.heaviside(torch.from_numpy(x), torch.from_numpy(values)).numpy())


def test_heaviside_broadcasts_and_differentiates_in_values():
    x = mg.tensor([[0.0, 1.0, -2.0], [0.0, 0.0, 3.0]], requires_grad=True)
    values = mg.tensor([2.0, 3.0, 4.0], requires_grad=True)
    out = mg.heaviside(x, values)
    np.testing.assert_array_equal(out.data, [[2.0, 1.0, 0.0], [2.0, 3.0, 1.0]])
    gx, gv = mg.gradients((out * mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum(), [x, values])
    np.testing.assert_array_equal(gv.data, [1.0 + 4.0, 5.0, 0.0])  # the places where x is 0
    assert not gx.data.any()
    assert mg.heaviside(mg.tensor([0.0, 1.0]), 0.5).data.tolist() == [0.5, 1.0]


def test_heaviside_promotes_where_torch_refuses():
    out = mg.heaviside(mg.tensor(np.array([0.0, 1.0], dtype=np.float32)), mg.tensor(np.array([7])))
    assert out.dtype == np.float32 and out.data.tolist() == [7.0, 1.0]
    with pytest.raises(RuntimeError, match="different dtypes"):
        torch.heaviside(torch.tensor([0.0, 1.0]), torch.tensor([7]))


# --------------------------------------------------------------------------- more elementwise functions
@pytest.mark.parametrize("name", ["deg2rad", "rad2deg"])
def test_angle_conversions(name, rng):
    x = rng.uniform(-400, 400, (2, 3))
    _compare(getattr(mg, name), getattr(torch, name), [x], second=True)
    _compare(lambda a: getattr(a, name)(), lambda a: getattr(a, name)(), [x])
    ints = np.array([180, -90, 0])
    out = getattr(mg, name)(mg.tensor(ints))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.data, getattr(torch, name)(torch.from_numpy(ints).double()).numpy(), rtol=1e-15)
    assert getattr(mg, name)(mg.tensor(np.ones(2, dtype=np.float32))).dtype == np.float32


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("value", [1, 0.5, -2])
def test_addcmul_addcdiv(name, value, rng):
    x, a, b = rng.standard_normal((3, 1)), rng.standard_normal((4,)), _away_from_zero(rng, (3, 4))
    _compare(lambda *t: getattr(mg, name)(*t, value=value), lambda *t: getattr(torch, name)(*t, value=value), [x, a, b], second=True)
    _compare(lambda x, a, b: getattr(x, name)(a, b, value=value), lambda x, a, b: getattr(x, name)(a, b, value=value), [x, a, b])
    with pytest.raises(ShapeError, match=rf"{name}: shapes \(3,\), \(2, 1\), \(4,\) do not broadcast together"):
        getattr(mg, name)(np.ones(3), np.ones((2, 1)), np.ones(4))


def test_addcmul_of_integers():
    i, j = np.array([5, -5, 7]), np.array([3, 3, -2])
    out = mg.addcmul(mg.tensor(i), mg.tensor(i), mg.tensor(j), value=2)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.data, torch.addcmul(torch.from_numpy(i), torch.from_numpy(i), torch.from_numpy(j), value=2).numpy())
    # a true division, where PyTorch refuses integer tensors
    np.testing.assert_allclose(mg.addcdiv(mg.tensor(i), mg.tensor(i), mg.tensor(j)).data, i + i / j)


@pytest.mark.parametrize("name, kwargs", [("clamp_min", {"min": -0.3}), ("clamp_max", {"max": 0.4})])
def test_clamp_min_and_max(name, kwargs, rng):
    x = rng.uniform(-1, 1, (3, 4))
    bound = next(iter(kwargs.values()))
    x[np.abs(x - bound) < 0.05] += 0.1  # no element at the kink
    _compare(lambda a: getattr(mg, name)(a, bound), lambda a: getattr(torch, name)(a, bound), [x], second=True)
    _compare(lambda a: getattr(a, name)(**kwargs), lambda a: getattr(a, name)(**kwargs), [x])


def test_hardshrink_method(rng):
    x = _away_from_zero(rng, (3, 4), 0.1, 1.0)
    x[np.abs(np.abs(x) - 0.3) < 0.05] = 0.8
    _compare(lambda a: a.hardshrink(0.3), lambda a: a.hardshrink(0.3), [x], second=True)
    _compare(lambda a: a.hardshrink(), lambda a: a.hardshrink(), [x])


@pytest.mark.parametrize("name, torch_name", [("negative", "negative"), ("absolute", "absolute"), ("sinc", "sinc")])
def test_unary_aliases(name, torch_name, rng):
    x = _away_from_zero(rng, (2, 3))
    _compare(lambda a: getattr(a, name)(), lambda a: getattr(a, torch_name)(), [x], second=True)
    _compare(getattr(mg, name), getattr(torch, torch_name), [x], second=True)


def test_true_divide_and_xlogy(rng):
    x, y = rng.standard_normal((2, 3)), _away_from_zero(rng, (3,))
    _compare(lambda a, b: a.true_divide(b), lambda a, b: a.true_divide(b), [x, y], second=True)
    _compare(mg.true_divide, torch.true_divide, [x, y])
    out = mg.true_divide(mg.tensor(np.array([1, 2])), mg.tensor(np.array([2, 4])))
    assert out.dtype == np.float64 and out.data.tolist() == [0.5, 0.5]
    p, q = rng.uniform(0, 1, 4), rng.uniform(0.5, 2, 4)
    p[0] = 0.0
    _compare(lambda a, b: a.xlogy(b), lambda a, b: a.xlogy(b), [p, q], second=True)
    _compare(mg.xlogy, torch.xlogy, [p, q])


# --------------------------------------------------------------------------- scans
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_logcumsumexp_differentiates_as_torch(dim, rng):
    x = rng.standard_normal((5, 7)) * 3  # 7: a scan length that is not a power of two
    _compare(lambda a: mg.logcumsumexp(a, dim), lambda a: torch.logcumsumexp(a, dim), [x], second=True)
    _compare(lambda a: a.logcumsumexp(dim), lambda a: a.logcumsumexp(dim), [x])


def test_logcumsumexp_keeps_small_early_terms():
    """A shift by the maximum alone would underflow e^(−1000 − 0) to 0 and give −∞ for the first term."""
    x = np.array([-1000.0, -999.0, 0.0, 800.0, -INF, 801.0])
    out = mg.logcumsumexp(mg.tensor(x), 0)
    np.testing.assert_allclose(out.data, torch.logcumsumexp(torch.from_numpy(x), 0).numpy(), rtol=1e-15)
    assert out.data[0] == -1000.0


def test_logcumsumexp_gradient_beside_minus_infinity():
    """Padding with −∞ (log 0): the gradient of the rest is PyTorch's, and no NaN reaches it; at the
    −∞ themselves PyTorch's is NaN, minigrad's finite."""
    x = np.array([-INF, -INF, 0.0, -1000.0, 1.0])
    t = torch.tensor(x, requires_grad=True)
    (expected,) = torch.autograd.grad(torch.logcumsumexp(t, 0).sum(), t)
    a = mg.tensor(x, requires_grad=True)
    out = mg.logcumsumexp(a, 0)
    np.testing.assert_array_equal(out.data, torch.logcumsumexp(torch.from_numpy(x), 0).numpy())
    (got,) = mg.gradients(out.sum(), [a])
    np.testing.assert_allclose(got.data[2:], expected.numpy()[2:], rtol=1e-14)
    assert np.isfinite(got.data).all()
    assert np.isnan(expected.numpy()[:2]).all()


def test_logcumsumexp_dtypes_and_scalars():
    out = mg.logcumsumexp(mg.tensor(np.array([1, 2, 3])), 0)
    assert out.dtype == np.float64  # PyTorch refuses integers
    np.testing.assert_allclose(out.data, np.logaddexp.accumulate([1.0, 2.0, 3.0]), rtol=1e-15)
    assert mg.logcumsumexp(mg.tensor(np.ones(3, dtype=np.float32)), 0).dtype == np.float32
    assert mg.logcumsumexp(mg.tensor(2.5), 0).item() == torch.logcumsumexp(torch.tensor(2.5), 0).item()


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_values_indices_and_ties(name, rng):
    x = rng.integers(-3, 4, (4, 9)).astype(np.float64)  # many ties: the later index wins
    for dim in (0, 1, -1):
        for out in (getattr(mg, name)(mg.tensor(x), dim), getattr(mg.tensor(x), name)(dim)):
            expected = getattr(torch, name)(torch.from_numpy(x), dim)
            np.testing.assert_array_equal(out.values.data, expected.values.numpy())
            np.testing.assert_array_equal(out.indices.data, expected.indices.numpy())
            assert out.indices.dtype == np.int64
            values, indices = out  # a pair, as torch.return_types
            assert values is out.values and indices is out.indices


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_with_nan_integers_and_scalars(name):
    x = np.array([1.0, NAN, 3.0, NAN, 0.0, -INF])
    out, expected = getattr(mg, name)(mg.tensor(x), 0), getattr(torch, name)(torch.from_numpy(x), 0)
    np.testing.assert_array_equal(out.values.data, expected.values.numpy())
    np.testing.assert_array_equal(out.indices.data, expected.indices.numpy())
    ints = np.array([5, -5, 7, 7, -9])
    out, expected = getattr(mg, name)(mg.tensor(ints), 0), getattr(torch, name)(torch.from_numpy(ints), 0)
    assert out.values.dtype == np.int64
    np.testing.assert_array_equal(out.values.data, expected.values.numpy())
    np.testing.assert_array_equal(out.indices.data, expected.indices.numpy())
    out = getattr(mg, name)(mg.tensor(2.0), 0)
    assert out.values.shape == () == out.indices.shape and out.values.item() == 2.0 and out.indices.item() == 0


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_differentiate_as_torch(name, rng):
    x = rng.standard_normal((4, 6))
    _compare(lambda a: getattr(mg, name)(a, 1).values, lambda a: getattr(torch, name)(a, 1).values, [x], second=True)
    _compare(lambda a: getattr(a, name)(0).values * a, lambda a: getattr(a, name)(0).values * a, [x], second=True)


def test_msort(rng):
    x = rng.standard_normal((5, 3))
    _compare(mg.msort, torch.msort, [x], second=True)
    _compare(lambda a: a.msort(), lambda a: a.msort(), [x])


# --------------------------------------------------------------------------- selections and views
def test_take_flat_indices(rng):
    x = rng.standard_normal((3, 4))
    index = np.array([[0, -1, 5], [5, 11, -12]])  # repeats add their gradients; negatives from the end
    _compare(lambda a: mg.take(a, index), lambda a: torch.take(a, torch.from_numpy(index)), [x], second=True)
    _compare(lambda a: a.take(mg.tensor(index)), lambda a: a.take(torch.from_numpy(index)), [x])
    assert mg.take(mg.tensor(5.0), np.array(0)).shape == ()
    with pytest.raises(ShapeError, match=r"take: index values must lie in \[-12, 12\) .*\(shape \(3, 4\)\); got 0\.\.12"):
        mg.take(x, np.array([0, 12]))
    with pytest.raises(ShapeError, match="take: index must hold integers"):
        mg.take(x, np.array([0.0]))


@pytest.mark.parametrize("dim, index", [(0, 1), (1, -1), (-1, 0), (2, 3)])
def test_select(dim, index, rng):
    x = rng.standard_normal((2, 3, 4))
    _compare(lambda a: mg.select(a, dim, index), lambda a: torch.select(a, dim, index), [x], second=True)
    _compare(lambda a: a.select(dim, index), lambda a: a.select(dim, index), [x])


def test_select_and_unbind_errors():
    x = mg.tensor(np.zeros((2, 3)))
    with pytest.raises(ShapeError, match=r"select: index 3 is out of range for dim 1 of length 3 \(shape \(2, 3\)\)"):
        x.select(1, 3)
    with pytest.raises(ShapeError, match="select: a 0-d tensor has no dimension 0"):
        mg.select(mg.tensor(1.0), 0, 0)
    with pytest.raises(ShapeError, match="unbind: a 0-d tensor has no dimension 0"):
        mg.tensor(1.0).unbind()
    with pytest.raises(ShapeError, match="unbind: axis 2 is out of range"):
        x.unbind(2)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unbind(dim, rng):
    x = rng.standard_normal((2, 3, 4))
    pieces, expected = mg.unbind(mg.tensor(x), dim), torch.unbind(torch.from_numpy(x), dim)
    assert isinstance(pieces, tuple) and len(pieces) == len(expected)
    weights = [rng.standard_normal(p.shape) for p in expected]
    _compare(
        lambda a: sum(p * mg.tensor(w) for p, w in zip(a.unbind(dim), weights)),
        lambda a: sum(p * torch.from_numpy(w) for p, w in zip(a.unbind(dim), weights)),
        [x],
        second=True,
    )


@pytest.mark.parametrize("size", [(4,), (3, 1), (1, 4), (2, 3, 4), (2, 1, 1), (1,), ()])
def test_sum_to_size(size, rng):
    x = rng.standard_normal((2, 3, 4))
    _compare(lambda a: a.sum_to_size(size), lambda a: a.sum_to_size(size), [x], second=True)
    if size:
        _compare(lambda a: a.sum_to_size(*size), lambda a: a.sum_to_size(*size), [x])


def test_sum_to_size_refuses_a_size_that_does_not_broadcast():
    with pytest.raises(ShapeError, match=r"sum_to_size: size \(2,\) does not broadcast to the tensor's shape \(2, 3\)"):
        mg.tensor(np.ones((2, 3))).sum_to_size(2)
    with pytest.raises(ShapeError, match="sum_to_size"):
        mg.tensor(np.ones((2, 3))).sum_to_size(1, 2, 3)


@pytest.mark.parametrize("dims", [(2,), (2, 1), (1, 2, 3), (2, 1, 1, 2), ()])
def test_tile(dims, rng):
    x = rng.standard_normal((2, 3))
    _compare(lambda a: mg.tile(a, dims), lambda a: torch.tile(a, dims), [x], second=True)
    _compare(lambda a: a.tile(dims), lambda a: a.tile(dims), [x])
    if dims:
        _compare(lambda a: a.tile(*dims), lambda a: a.tile(*dims), [x])


@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 3, 5])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (1, 2), (2, 0), (-1, -2)])
def test_rot90(k, dims, rng):
    x = rng.standard_normal((2, 3, 4))
    _compare(lambda a: mg.rot90(a, k, dims), lambda a: torch.rot90(a, k, dims), [x], second=True)
    _compare(lambda a: a.rot90(k, dims), lambda a: a.rot90(k, dims), [x])


def test_rot90_quarter_turn_and_errors():
    m = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(mg.rot90(mg.tensor(m)).data, [[2, 5], [1, 4], [0, 3]])  # counter-clockwise
    np.testing.assert_array_equal(mg.tensor(m).rot90().data, torch.rot90(torch.from_numpy(m)).numpy())
    out = mg.rot90(mg.tensor(m), 0)
    assert out.data is not m and out.dtype == np.int64
    with pytest.raises(ShapeError, match=r"rot90: repeated dim in \(0, 0\)"):
        mg.rot90(m, 1, (0, 0))
    with pytest.raises(ShapeError, match=r"rot90: needs two dims.*got dims \(0,\)"):
        mg.rot90(m, 1, (0,))
    with pytest.raises(ShapeError, match=r"rot90: needs two dims.*shape \(3,\)"):
        mg.rot90(np.ones(3))


def test_fliplr_flipud(rng):
    x = rng.standard_normal((2, 3, 4))
    _compare(mg.fliplr, torch.fliplr, [x], second=True)
    _compare(mg.flipud, torch.flipud, [x], second=True)
    _compare(lambda a: a.fliplr(), lambda a: a.fliplr(), [x])
    _compare(lambda a: a.flipud(), lambda a: a.flipud(), [rng.standard_normal(3)])
    with pytest.raises(ShapeError, match=r"fliplr: needs at least 2 dimensions, got shape \(3,\)"):
        mg.fliplr(np.ones(3))
    with pytest.raises(ShapeError, match="flipud: needs at least 1 dimension, got a 0-d tensor"):
        mg.flipud(mg.tensor(1.0))


def test_ravel_reshape_as_where(rng):
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((3,))
    _compare(mg.ravel, torch.ravel, [x], second=True)
    _compare(lambda a: a.ravel(), lambda a: a.ravel(), [x])
    assert mg.ravel(mg.tensor(3.0)).shape == (1,)
    _compare(lambda a: a.reshape_as(mg.tensor(np.zeros((3, 2)))), lambda a: a.reshape_as(torch.zeros(3, 2)), [x])
    mask = x > 0
    _compare(lambda a, b: a.where(mg.tensor(mask), b), lambda a, b: a.where(torch.from_numpy(mask), b), [x, y], second=True)
    _compare(lambda a: a.where(mg.tensor(mask), 0.0), lambda a: a.where(torch.from_numpy(mask), 0.0), [x])


# --------------------------------------------------------------------------- method forms of minigrad's functions
def test_matrix_products_as_methods(rng):
    a, b, v, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal(4), rng.standard_normal(3)
    batch1, batch2 = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    _compare(lambda x, y: x.mm(y), lambda x, y: x.mm(y), [a, b], second=True)
    _compare(lambda x, y: x.bmm(y), lambda x, y: x.bmm(y), [batch1, batch2], second=True)
    _compare(lambda x, y: x.mv(y), lambda x, y: x.mv(y), [a, v], second=True)
    _compare(mg.mv, torch.mv, [a, v], second=True)
    _compare(lambda x, y: x.dot(y), lambda x, y: x.dot(y), [v, v[::-1].copy()], second=True)
    _compare(lambda x, y: x.outer(y), lambda x, y: x.outer(y), [v, w], second=True)
    _compare(lambda x, y: x.ger(y), lambda x, y: x.ger(y), [v, w])
    _compare(mg.ger, torch.ger, [v, w])


def test_mv_refuses_mismatched_shapes():
    with pytest.raises(ShapeError, match=r"mv: the matrix has 3 columns and the vector 4 elements \(shapes \(2, 3\) and \(4,\)\)"):
        mg.mv(np.ones((2, 3)), np.ones(4))
    with pytest.raises(ShapeError, match="mv: expects tensors with 2 and 1 dimensions"):
        mg.tensor(np.ones(3)).mv(mg.tensor(np.ones(3)))


def test_sort_and_argsort_methods(rng):
    x = rng.standard_normal((3, 5))
    for kwargs in ({}, {"dim": 0}, {"descending": True}, {"dim": 0, "descending": True}):
        out, expected = mg.tensor(x).sort(**kwargs), torch.from_numpy(x).sort(**kwargs)
        np.testing.assert_array_equal(out.indices.data, expected.indices.numpy())
        np.testing.assert_array_equal(mg.tensor(x).argsort(**kwargs).data, torch.from_numpy(x).argsort(**kwargs).numpy())
        _compare(lambda a: a.sort(**kwargs).values, lambda a: a.sort(**kwargs).values, [x], second=True)


def test_predicates_as_methods():
    x = np.array([1.0, NAN, INF, -INF, 0.0])
    for name in ("isnan", "isinf", "isfinite"):
        np.testing.assert_array_equal(getattr(mg.tensor(x), name)().data, getattr(torch.from_numpy(x), name)().numpy())
    y = x + np.array([1e-9, 0.0, 0.0, 0.0, 1e-7])
    for kwargs in ({}, {"equal_nan": True}, {"atol": 1e-6}):
        np.testing.assert_array_equal(mg.tensor(x).isclose(mg.tensor(y), **kwargs).data, torch.from_numpy(x).isclose(torch.from_numpy(y), **kwargs).numpy())
        assert mg.tensor(x).allclose(mg.tensor(y), **kwargs) == torch.from_numpy(x).allclose(torch.from_numpy(y), **kwargs)


def test_equal_is_a_bool_of_shape_and_values():
    cases = [
        ([1.0, 2.0], [1.0, 2.0]),
        ([1.0, 2.0], [1.0, 2.5]),
        ([1.0], [[1.0]]),  # the same values, broadcastable, but another shape
        ([NAN], [NAN]),
        (np.array([1, 2]), np.array([1.0, 2.0])),  # the same numbers in different dtypes
        (np.zeros((0, 2)), np.zeros((0, 2))),
    ]
    for a, b in cases:
        expected = torch.equal(torch.tensor(np.asarray(a)), torch.tensor(np.asarray(b)))
        for out in (mg.equal(mg.tensor(a), mg.tensor(b)), mg.tensor(a).equal(mg.tensor(b))):
            assert out is expected, (a, b)


def test_pinverse(rng):
    a = rng.standard_normal((2, 3, 5))
    _compare(mg.pinverse, torch.pinverse, [a], second=True, atol=1e-9, rtol=1e-9)
    _compare(lambda x: x.pinverse(), lambda x: x.pinverse(), [a], atol=1e-9, rtol=1e-9)
    nearly_singular = np.diag([1.0, 1e-10])
    np.testing.assert_array_equal(mg.tensor(nearly_singular).pinverse(rcond=1e-5).data, np.diag([1.0, 0.0]))
    np.testing.assert_allclose(mg.pinverse(nearly_singular).data, np.diag([1.0, 1e10]))


def test_multinomial_and_histogram_methods():
    probs = mg.tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]])
    drawn = probs.multinomial(4, replacement=True, generator=mg.Generator().manual_seed(3))
    assert drawn.dtype == np.int64 and drawn.shape == (2, 4)
    assert (drawn.data[0] == 1).all() and set(drawn.data[1]) <= {0, 2}
    again = probs.multinomial(4, True, generator=mg.Generator().manual_seed(3))
    np.testing.assert_array_equal(drawn.data, again.data)
    x = np.array([0.1, 0.4, 0.45, 0.9])
    hist, edges = mg.tensor(x).histogram(2, range=(0.0, 1.0))
    expected = torch.from_numpy(x).histogram(2, range=(0.0, 1.0))
    np.testing.assert_array_equal(hist.data, expected.hist.numpy())
    np.testing.assert_array_equal(edges.data, expected.bin_edges.numpy())


# --------------------------------------------------------------------------- new tensors, dtype facts, conversions
DTYPES = [(np.float16, torch.float16), (np.float32, torch.float32), (np.float64, torch.float64), (np.int8, torch.int8),
          (np.uint8, torch.uint8), (np.int16, torch.int16), (np.int32, torch.int32), (np.int64, torch.int64), (np.bool_, torch.bool)]


@pytest.mark.parametrize("np_dtype, torch_dtype", DTYPES)
def test_new_tensors_take_the_dtype_of_self(np_dtype, torch_dtype):
    x, t = mg.tensor(np.zeros(2, dtype=np_dtype)), torch.zeros(2, dtype=torch_dtype)
    pairs = [
        (x.new_zeros(2, 3), t.new_zeros(2, 3)),
        (x.new_zeros((2, 3)), t.new_zeros((2, 3))),
        (x.new_ones([3]), t.new_ones([3])),
        (x.new_empty(2), t.new_empty(2).zero_()),
        (x.new_full((2, 2), 3.7), t.new_full((2, 2), 3.7)),
        (x.new_tensor([1.5, 0.0, 2.0]), t.new_tensor([1.5, 0.0, 2.0])),  # [1.5] into an integer dtype is [1]
        (x.new_zeros(2, dtype=mg.float32), t.new_zeros(2, dtype=torch.float32)),
        (x.new_tensor([1, 2], dtype=mg.int64), t.new_tensor([1, 2], dtype=torch.int64)),
    ]
    for out, expected in pairs:
        assert out.dtype == expected.numpy().dtype
        np.testing.assert_array_equal(out.data, expected.numpy())
        assert out.is_leaf and not out.requires_grad
    assert x.is_floating_point() == t.is_floating_point() == mg.is_floating_point(x)
    assert x.element_size() == t.element_size()
    assert x.is_contiguous()


def test_new_tensors_take_requires_grad_and_device():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    out = x.new_ones(3, requires_grad=True, device="cpu")
    assert out.requires_grad and out.is_leaf and out.shape == (3,)
    copy = x.new_tensor(x)
    assert not copy.requires_grad and copy.data is not x.data
    np.testing.assert_array_equal(copy.data, [1.0, 2.0])
    with pytest.raises(TypeError, match="new_zeros: device='float32' is not a device"):
        x.new_zeros(2, device="float32")
    with pytest.raises(mg.MinigradError, match="new_ones: device 'cuda'"):
        x.new_ones(2, device="cuda")
    with pytest.raises(DtypeError, match="only floating-point tensors can require gradients"):
        x.new_zeros(2, dtype=mg.int64, requires_grad=True)


@pytest.mark.parametrize("name", ["half", "float", "double", "char", "byte", "short", "int", "long", "bool"])
def test_conversions_match_torch(name):
    x = np.array([1.7, 2.2, 0.0, 100.0, 0.5])  # non-negative: PyTorch's byte() of a negative float is undefined
    out, expected = getattr(mg.tensor(x), name)(), getattr(torch.from_numpy(x), name)()
    assert out.dtype == expected.numpy().dtype
    np.testing.assert_array_equal(out.data, expected.numpy())


def test_conversions_between_floats_are_differentiable():
    x = mg.tensor([1.5, -2.0], requires_grad=True)
    (g,) = mg.gradients((x.half().double() * x.float().double()).sum(), [x])
    np.testing.assert_allclose(g.data, 2 * x.data)
    assert not hasattr(mg.Tensor, "bfloat16")  # numpy has no bfloat16


# --------------------------------------------------------------------------- in place
IN_PLACE = [
    ("abs_", (), lambda x: x),
    ("clamp_", (-0.5, 0.7), lambda x: x),
    ("exp_", (), lambda x: x),
    ("log_", (), np.abs),
    ("neg_", (), lambda x: x),
    ("sqrt_", (), np.abs),
    ("pow_", (3,), lambda x: x),
    ("sigmoid_", (), lambda x: x),
    ("tanh_", (), lambda x: x),
    ("relu_", (), lambda x: x),
]


@pytest.mark.parametrize("name, args, domain", IN_PLACE)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_in_place_forms_match_torch(name, args, domain, dtype, rng):
    data = domain(rng.standard_normal((2, 3))).astype(dtype)
    x = mg.tensor(data)
    shared = x.numpy()
    out = getattr(x, name)(*args)
    expected = getattr(torch.from_numpy(data.copy()), name)(*args)
    assert out is x and x.dtype == dtype
    np.testing.assert_allclose(x.data, expected.numpy(), rtol=1e-6 if dtype == np.float32 else 1e-15)
    np.testing.assert_array_equal(shared, x.data)  # the same memory, as a PyTorch view would see it


def test_in_place_forms_with_tensor_arguments():
    x = mg.tensor([1.0, 2.0, 3.0])
    assert x.masked_fill_(mg.tensor([True, False, True]), -1.0) is x
    np.testing.assert_array_equal(x.data, [-1.0, 2.0, -1.0])
    x.pow_(mg.tensor([2.0, 3.0, 0.0]))
    np.testing.assert_array_equal(x.data, [1.0, 8.0, 1.0])
    x.clamp_(max=4.0)
    np.testing.assert_array_equal(x.data, [1.0, 4.0, 1.0])
    ints = mg.tensor(np.array([-3, 4]))
    np.testing.assert_array_equal(ints.abs_().data, [3, 4])
    assert ints.dtype == np.int64


def test_in_place_forms_refuse_what_add_refuses():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(GraphError, match="exp_: in-place change of a leaf tensor"):
        w.exp_()
    with mg.no_grad():
        w.mul_(2.0).exp_()  # an update of a parameter, as an optimizer makes
    np.testing.assert_allclose(w.data, np.exp([2.0, 4.0]))
    assert w.is_leaf and w.requires_grad
    h = w * 2.0
    with pytest.raises(GraphError, match="sigmoid_: in-place change of a tensor .* part of a recorded graph"):
        h.sigmoid_()
    value = mg.tensor(5.0, requires_grad=True)
    with pytest.raises(GraphError, match="masked_fill_"):
        mg.tensor([1.0, 2.0]).masked_fill_(mg.tensor([True, False]), value)
    with pytest.raises(DtypeError, match="sqrt_: a float64 value cannot be stored in place in a tensor of dtype int64"):
        mg.tensor(np.array([4, 9])).sqrt_()


def test_in_place_change_of_a_saved_input_stops_backward():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1.0
    y = (h * h).sum()
    with mg.no_grad():
        h.tanh_()
    with pytest.raises(GraphError, match="changed in place"):
        y.backward()


def test_detach_in_place():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3.0
    assert h.detach_() is h
    assert h.is_leaf and not h.requires_grad and h.grad_fn is None
    np.testing.assert_array_equal(h.data, [3.0, 6.0])
    w = mg.tensor([1.0], requires_grad=True)
    w.detach_()
    assert not w.requires_grad
    (g,) = mg.gradients((h * x).sum(), [x])
    np.testing.assert_array_equal(g.data, [3.0, 6.0])  # h is a constant now: not 3x's h + 3x = [6, 12]


def test_the_compositions_compile(rng):
    """The new functions built from primitives trace: a compiled program recomputes them on new
    inputs, gradients too (cummax and the like, which choose from the values, refuse by name)."""
    from minigrad import jit

    def f(x, y):
        return (mg.remainder(x, y) * mg.fmod(x, y) + mg.floor_divide(x, y) * x + mg.logaddexp(x, y) + mg.logcumsumexp(x, 0)).sum()

    compiled = jit.compile(f, backward=True)
    compiled(rng.standard_normal(5), _away_from_zero(rng, (5,)))
    x, y = rng.standard_normal(5), _away_from_zero(rng, (5,))
    value, grads = compiled(x, y)
    xs = [mg.tensor(x, requires_grad=True), mg.tensor(y, requires_grad=True)]
    expected = f(*xs)
    np.testing.assert_allclose(value.data, expected.data, rtol=1e-13)
    for g, want in zip(grads, mg.gradients(expected, xs)):
        np.testing.assert_allclose(g.data, want.data, rtol=1e-13)
    with pytest.raises(mg.TracerError, match="cummax needs the value of a tensor"):
        jit.compile(lambda t: mg.cummax(t, 0).values.sum())(x)
