"""Vectorisable float32 `tanh` and `exp` for generated Numba kernels (`fast_math=True`).

Why these exist: inside a Numba loop, `math.tanh` and `math.exp` become calls into the C library
(`tanhf`, `expf`), one element at a time. LLVM cannot turn a loop that calls an opaque function into
SIMD code, so a fused GELU kernel spends its time in `tanhf` instead of moving memory. (Intel's SVML
would supply vector versions; it is not available here.) The functions below use only additions,
multiplications, one division, comparisons and a bit cast, all of which LLVM vectorises: a fused
kernel using them runs at memory speed.

Both are for float32 only; float64 kernels keep the exact library functions.

* `tanh_f32`: Eigen's rational approximation (the one XLA and TensorFlow use on CPU): an odd
  polynomial of degree 13 over an even one of degree 6, on x clamped to [-7.9053, 7.9053], where
  float32 tanh is already ±1 to within half an ulp.
* `exp_f32`: Cody-Waite range reduction x = k ln 2 + r with |r| <= ln(2)/2, a degree-7 polynomial for
  e^r (Cephes' `expf` coefficients) and 2^k built directly in the exponent bits. Inputs below
  -87.3365 (where e^x drops below float32's smallest normal number, 1.18e-38) give 0, above
  88.7228 give inf, NaN gives NaN.

MAX_RELATIVE_ERROR is the documented bound against the correctly rounded float64 result, for every
float32 input whose result is a normal float32 number; tests/test_jit_fusion.py measures both
functions on millions of points against it (measured: about 4e-7 for tanh, 1e-7 for exp; float32's
own rounding is 6e-8).
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

MAX_RELATIVE_ERROR = 1e-6

# tanh: numerator coefficients (odd powers x^1 ... x^13) and denominator (x^0 ... x^6), from Eigen.
TANH_CLAMP = np.float32(7.90531110763549805)
TANH_SMALL = np.float32(0.0004)  # below this tanh(x) = x to float32 precision
_A1, _A3, _A5 = np.float32(4.89352455891786e-03), np.float32(6.37261928875436e-04), np.float32(1.48572235717979e-05)
_A7, _A9 = np.float32(5.12229709037114e-08), np.float32(-8.60467152213735e-11)
_A11, _A13 = np.float32(2.00018790482477e-13), np.float32(-2.76076847742355e-16)
_B0, _B2 = np.float32(4.89352518554385e-03), np.float32(2.26843463243900e-03)
_B4, _B6 = np.float32(1.18534705686654e-04), np.float32(1.19825839466702e-06)

# exp: e^x = 2^k e^r, k = round(x / ln 2), r = x - k ln 2 computed in two parts (ln 2 = HI + LO) so
# that k * HI is exact; e^r = 1 + r + r^2 (P0 + P1 r + ... + P5 r^5) (Cephes).
EXP_HIGH = np.float32(88.72283935546875)  # log(FLT_MAX): above, e^x overflows to inf
EXP_LOW = np.float32(-87.3365478515625)  # log(FLT_MIN): below, e^x is subnormal; flushed to 0
_LOG2E = np.float32(1.4426950408889634)
_LN2_HI, _LN2_LO = np.float32(0.693359375), np.float32(-2.12194440e-4)
_P0, _P1, _P2 = np.float32(5.0000001201e-1), np.float32(1.6666665459e-1), np.float32(4.1665795894e-2)
_P3, _P4, _P5 = np.float32(8.3334519073e-3), np.float32(1.3981999507e-3), np.float32(1.9875691500e-4)
_HALF, _ONE, _ZERO, _INF = np.float32(0.5), np.float32(1.0), np.float32(0.0), np.float32(np.inf)
_BIAS, _MANTISSA_BITS = np.int32(127), np.int32(23)


@intrinsic
def _float32_from_bits(typingctx, bits):
    """Reinterpret an int32's bits as a float32 (LLVM `bitcast`, vectorisable, unlike a call)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


# Compiled lazily, where a kernel calls them (and inlined there): importing this module costs
# nothing, a kernel loaded from Numba's disk cache needs no compilation at all, and no cache file is
# written next to this module (which may sit in a read-only place).
@njit(inline="always")
def _power_of_two(k):
    """2.0**k for an integer -126 <= k <= 127, built in the exponent field of a float32."""
    return _float32_from_bits((np.int32(k) + _BIAS) << _MANTISSA_BITS)


@njit(inline="always", error_model="numpy")
def tanh_f32(x):
    """tanh(x) for float32 x, relative error below MAX_RELATIVE_ERROR, vectorisable."""
    c = min(max(x, -TANH_CLAMP), TANH_CLAMP)
    c2 = c * c
    p = _A13
    p = p * c2 + _A11
    p = p * c2 + _A9
    p = p * c2 + _A7
    p = p * c2 + _A5
    p = p * c2 + _A3
    p = p * c2 + _A1
    q = _B6
    q = q * c2 + _B4
    q = q * c2 + _B2
    q = q * c2 + _B0
    y = c * p / q
    y = x if abs(x) < TANH_SMALL else y
    return x if x != x else y  # NaN stays NaN (min/max above would have dropped it)


@njit(inline="always", error_model="numpy")
def exp_f32(x):
    """exp(x) for float32 x, relative error below MAX_RELATIVE_ERROR for normal results, vectorisable."""
    c = min(max(x, EXP_LOW), EXP_HIGH)
    k = np.floor(c * _LOG2E + _HALF)
    r = c - k * _LN2_HI - k * _LN2_LO
    p = _P5
    p = p * r + _P4
    p = p * r + _P3
    p = p * r + _P2
    p = p * r + _P1
    p = p * r + _P0
    p = p * r * r + r + _ONE
    ki = np.int32(k)
    half = np.int32(ki >> np.int32(1))  # 2^k as 2^half * 2^(k - half): each factor stays a normal number
    y = p * _power_of_two(half) * _power_of_two(np.int32(ki - half))
    y = _ZERO if x < EXP_LOW else y
    y = _INF if x > EXP_HIGH else y
    return x if x != x else y
