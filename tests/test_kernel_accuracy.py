"""Accuracy of the math inside the generated Numba kernels, as `jit.compile(..., backend="numba")` makes them.

With no options, float32 kernels compute tanh, exp and sigmoid with `minigrad.jit.fastmath`'s
accurate vectorisable functions. Their documented bounds (`fastmath.MAX_ULP_ERROR`, in units in the
last place of the float32 result, against float64) were measured on every float32 input; here a
sample of 4.3 million inputs spread over the whole float32 range (every 997th bit pattern, so
every binade, both signs, subnormals, infinities and NaNs) plus every float32 around the
thresholds where the algorithms switch or saturate is held to them. Sigmoid's left tail, which
the former tanh-based formula rounded to 0 from x = -20 on (issue 12), is checked point by point
in float32 and float64, with and without fast_math. No timing here: speed is bench_fusion.py's.
"""

import math

import numpy as np
import pytest

from minigrad import jit
from minigrad.jit import fastmath

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
THRESHOLDS = [0.5, 9.25, 88.72283935546875, -87.3365478515625, -103.97, 1.0, 2.0**-12,  # where algorithms switch
              *(k * math.log(2) / 2 for k in range(1, 27))]  # or saturate; tanh's reduction goes from n = k - 1 to k
# at |x| = k ln(2)/2 (n = floor(2|x| log2 e) of a rounded product: one more just below, where it rounds up)


@pytest.fixture(autouse=True)
def kernel_cache_dir(request, monkeypatch):
    """Kernels go to pytest's cache (not the user's), shared with test_jit_fusion and reruns."""
    monkeypatch.setenv("MINIGRAD_CACHE_DIR", str(request.config.cache.mkdir("minigrad_kernels")))


def kernel(fn, dtype=np.float32, **options):
    """fn compiled by the numba backend (serial: the same math, a quicker compile), as a numpy function."""
    compiled = jit.compile(fn, backend="numba", parallel_threshold=1 << 62, **options)

    def run(x):
        with np.errstate(all="ignore"):  # the first call per shape traces fn eagerly, on these values
            return compiled(np.asarray(x, dtype)).data

    return run


def float32_sample():
    bits = np.arange(0, 2**32, 997, dtype=np.uint64).astype(np.uint32)
    near = []
    for t in THRESHOLDS:
        center = int(np.float32(abs(t)).view(np.uint32))
        around = np.arange(center - 20_000, center + 20_000, dtype=np.uint32)
        near += [around, around | np.uint32(1 << 31)]  # both signs
    return np.concatenate([bits] + near).view(np.float32)


SAMPLE = float32_sample()


def ulp_errors(got, exact):
    """|got - exact| in ulps of the float32 nearest to `exact` (float64); inf where got is wrong about
    NaN, infinity or overflow (float32 results must overflow to inf exactly when `exact` rounds to inf)."""
    got = got.astype(np.float64)
    rounded = exact.astype(np.float32)  # numpy rounds float64 -> float32 correctly, to inf past FLT_MAX
    _, exponent = np.frexp(np.abs(exact))
    ulp = np.ldexp(1.0, np.maximum(exponent - 1, -126) - 23)
    with np.errstate(invalid="ignore"):
        errors = np.abs(got - exact) / ulp
    special = np.isnan(exact) | np.isinf(rounded)
    errors[special] = np.where(
        (np.isnan(got) == np.isnan(exact)) & ((got == rounded) | np.isnan(exact)), 0.0, np.inf
    )[special]
    return errors


def exact_sigmoid(x):
    x = np.asarray(x, np.float64)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0, e) / (1.0 + e)


FUNCTIONS = {  # name: (minigrad function, float64 reference)
    "tanh": (lambda x: x.tanh(), np.tanh),
    "exp": (lambda x: x.exp(), np.exp),
    "sigmoid": (lambda x: x.sigmoid(), exact_sigmoid),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_default_kernels_meet_the_documented_ulp_bound_over_the_float32_range(name):
    fn, reference = FUNCTIONS[name]
    compiled = jit.compile(fn, backend="numba", parallel_threshold=1 << 62)
    with np.errstate(all="ignore"):  # the first call traces fn eagerly on the sample (overflows, NaNs)
        got = compiled(SAMPLE).data
    assert got.dtype == np.float32
    assert f"{name}_f32_accurate(" in compiled.source and f"math.{name}" not in compiled.source
    with np.errstate(all="ignore"):
        errors = ulp_errors(got, reference(SAMPLE.astype(np.float64)))
    worst = int(np.argmax(errors))
    bound = fastmath.MAX_ULP_ERROR[name]
    assert errors[worst] <= bound, (
        f"{name}: {errors[worst]:.3f} ulp at x = {SAMPLE[worst]!r} (got {got[worst]!r}), documented bound {bound}")


def test_special_values():
    tanh, exp, sigmoid = (kernel(FUNCTIONS[name][0]) for name in ("tanh", "exp", "sigmoid"))
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)
    np.testing.assert_array_equal(tanh(special), [np.nan, 1.0, -1.0, 0.0, -0.0])
    assert np.signbit(tanh(special)[4]), "tanh(-0) is -0"
    np.testing.assert_array_equal(exp(special), [np.nan, np.inf, 0.0, 1.0, 1.0])
    np.testing.assert_array_equal(sigmoid(special), [np.nan, 1.0, 0.0, 0.5, 0.5])
    # exp: finite up to log(FLT_MAX), inf after; subnormal results (gradual underflow), 0 below 2^-150
    assert np.isfinite(exp([88.72283])).all() and np.isinf(exp([88.7229])).all()
    tiny = np.finfo(np.float32).smallest_subnormal
    for x in (-88.0, -95.0, -100.0, -103.0):
        assert abs(float(exp([x])[0]) - math.exp(x)) <= tiny, f"exp({x}) in float32's subnormal range"
    assert exp([-104.0])[0] == 0.0


# fast_math changes float32 kernels only, so float64 runs without it alone.
@pytest.mark.parametrize("dtype, fast_math", [(np.float32, False), (np.float32, True), (np.float64, False)])
def test_sigmoid_left_tail_keeps_its_relative_accuracy(dtype, fast_math):
    """Issue 12: float32 relative error 1e-4 at -9, 44 % at -17, exactly 0 from -20 on, before."""
    sigmoid = kernel(lambda x: x.sigmoid(), dtype, fast_math=fast_math)
    x = np.array([-9.0, -17.0, -20.0, -40.0, -80.0, -100.0] + ([-700.0] if dtype == np.float64 else []))
    got, exact = sigmoid(x).astype(np.float64), exact_sigmoid(x)
    kept = x > -87 if fast_math else x < 0  # fast_math's exp flushes below float32's normal range
    assert (got[kept] > 0).all(), f"sigmoid({x}) = {got}: the tail must not vanish"
    relative = np.abs(got - exact) / exact
    if dtype == np.float64:
        assert relative.max() < 1e-15, relative
    elif fast_math:  # exp_f32 keeps 1e-6 down to -87.3 and flushes below: sigmoid(-100) = 0 is documented there
        assert relative[x > -87].max() < fastmath.MAX_RELATIVE_ERROR, relative
    else:
        normal = exact >= np.finfo(np.float32).tiny
        assert relative[normal].max() < 3e-7, relative
        # e^-100 = 3.7e-44 is subnormal in float32 (5 significant bits): within one step of the nearest
        assert np.all(np.abs(got - exact)[~normal] <= np.finfo(np.float32).smallest_subnormal), (got, exact)
    right = sigmoid(np.array([9.0, 17.0, 40.0, 100.0]))
    np.testing.assert_allclose(right, exact_sigmoid([9.0, 17.0, 40.0, 100.0]), rtol=3e-7 if dtype == np.float32 else 1e-15)


def gelu(x):
    return 0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044715 * x**3)).tanh())


def numpy_gelu(x):
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


GELU_BOUND = 3.0  # |error| <= GELU_BOUND * (2^-24 |x| + 2^-149), measured over the sample (see test)


@pytest.mark.parametrize("fast_math", [False, True])
def test_fused_gelu_error_is_float32_rounding_of_its_formula(fast_math):
    """The fused GELU kernel against the same formula in float64, over the whole float32 range.

    The formula itself loses relative accuracy left of -3 in any float32 evaluation (1 + tanh(u)
    subtracts nearly equal numbers), so the bound is normwise: |error| <= GELU_BOUND * (2^-24 |x| + 2^-149)
    (the second term: 0.5 x rounds to a subnormal step for subnormal x),
    which numpy's op-by-op float32 evaluation of the same formula meets as well (measured on this
    sample: 2.24 for the kernel, 2.02 for numpy, 4.32 with fast_math's tanh, whose bound is twice)."""
    fused = kernel(gelu, fast_math=fast_math)
    x = SAMPLE[np.isfinite(SAMPLE)]
    got = fused(x).astype(np.float64)
    x64 = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        exact = numpy_gelu(x64)
        numpy32 = numpy_gelu(x).astype(np.float64)  # numpy float32, one operation at a time
    scale = np.abs(x64) * 2.0**-24 + 2.0**-149
    ours, theirs = np.abs(got - exact) / scale, np.abs(numpy32 - exact) / scale
    bound = 2 * GELU_BOUND if fast_math else GELU_BOUND
    worst = int(np.argmax(ours))
    assert ours[worst] <= bound, f"GELU at x = {x[worst]!r}: error {ours[worst]:.2f} x 2^-24 |x| (bound {bound})"
    assert theirs.max() <= GELU_BOUND, "the yardstick: numpy's float32 evaluation of the formula"
