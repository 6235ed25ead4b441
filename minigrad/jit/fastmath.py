"""Vectorisable float32 `tanh`, `exp` and `sigmoid` for generated Numba kernels.

Why these exist: inside a Numba loop, `math.tanh` and `math.exp` become calls into the C library
(`tanhf`, `expf`), one element at a time. LLVM cannot turn a loop that calls an opaque function into
SIMD code, so a fused GELU kernel would spend its time in `tanhf` instead of moving memory. (Intel's
SVML would supply vector versions, but Numba uses it only with an SVML-patched LLVM, which the
llvmlite wheels from the package index do not have: `numba -s` says "SVML operational: False" even
with `intel-cmplr-lib-rt` installed.) The functions below use only additions, multiplications,
fused multiply-adds, one division, comparisons and bit casts, all of which LLVM vectorises: a fused
kernel using them runs at memory speed.

Two families, both float32 only (float64 kernels keep the C library's functions):

* **accurate, the default** — `tanh_f32_accurate`, `exp_f32_accurate`, `sigmoid_f32_accurate`.
  Errors in units in the last place (ulp) of the float32 result, against the float64 result, over
  *every* float32 input (all 2^32 of them, `benchmarks/README.md` says how it was measured), are
  below MAX_ULP_ERROR. Special values behave as numpy's: NaN stays NaN, exp overflows to inf above
  88.72 and underflows gradually (subnormal results, 0 below -103.97), tanh(±inf) = ±1,
  tanh(-0) = -0, sigmoid's left tail keeps its relative accuracy down to the subnormals.
* **fast** (`fast_math=True`) — `tanh_f32`, `exp_f32`, `sigmoid_f32`: fewer operations, relative
  error below MAX_RELATIVE_ERROR (about 8 ulp) for normal results; exp flushes results below
  float32's smallest normal number (1.18e-38) to 0.

How the accurate ones work (Muller, "Elementary Functions", ch. 11; the same scheme as SLEEF and
ARM's optimized-routines):

* `exp`: x = n ln 2 + f with n an integer and |f| <= ln(2)/2 (Cody-Waite: ln 2 split in two parts,
  the first with trailing zero bits so that n * LN2_HI is exact); e^f - 1 = f + f^2 P(f) with P a
  degree-5 minimax polynomial (relative error 2e-9), evaluated with fused multiply-adds;
  e^x = 2^n + 2^n (e^f - 1), one rounding. 2^n is written straight into the exponent bits, as two
  factors so that subnormal results and the overflow to inf come out of the arithmetic itself.
* `tanh`: tanh(a) = h / (1 + h) with h = (e^(2a) - 1) / 2, a = |x|, one formula over the whole
  range (a second polynomial for small |x|, computed beside it and selected, cost a sixth of a
  fused GELU's time on Zen 4). e^(2a) = 2^n e^f is reduced with n = floor(2a / ln 2), so 0 <= f < ln 2 and
  h = 2^(n-1) (1 + (e^f - 1)) - 1/2 adds two positive terms for n >= 1 (nothing cancels), and is
  (e^f - 1) / 2 exactly for n = 0, where e^f - 1 = f + f^2 D(f) keeps its relative accuracy however
  small f is. Where h is small, 1 + h rounds away the low bits of h, so the quotient t is corrected
  once with t = h - h t (one fused multiply-add; for a >= 0.5 the plain quotient is the better one).
  The code works with g = f / 2 = a - n ln(2)/2 rather than f and 2a, the factors of 2 folded into
  the constants (2 log2(e), ln(2)/2, D's coefficients times 2^(k+1)): two vector additions fewer.
  On one core a fused GELU is bound by the latency of this chain of dependent operations more than
  by their number, so the chain is kept short: n is the floor of the float32 product a 2 log2(e)
  (one rounding instruction; where the product rounds up to an integer, n is one more and f a tiny
  negative number, inside D's fitted range), and D is evaluated in Estrin's form, three dependent
  fused multiply-adds where Horner's rule has five, with as many operations in all. The worst error
  over all 2^32 inputs went from 1.717 to 1.742 ulp (`benchmarks/README.md` has the timings).
* `sigmoid`: e = e^-|x| (never overflows), then 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0.
  The usual (tanh(x/2) + 1) / 2 subtracts nearly equal numbers left of 0 and returns exactly 0 for
  x <= -20 in float32; this form keeps the relative error at a few ulp down to x = -103.

`prefer_wide_vectors()` is a no-op call generated kernels make inside their loops: it asks LLVM to
vectorise the enclosing function with 512-bit registers where the CPU has AVX-512 (LLVM's default
on Intel server cores is 256 bits); with twice the lanes per instruction a fused kernel with tanh
keeps up with memory on one core.
"""

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

MAX_RELATIVE_ERROR = 1e-6  # the fast functions, normal results
MAX_ULP_ERROR = {"tanh": 1.75, "exp": 1.0, "sigmoid": 2.5}  # the accurate functions, every float32 input

_I32, _F32 = ir.IntType(32), ir.FloatType()
_WIDE_VECTORS = '"prefer-vector-width"="512"'


# --------------------------------------------------------------------------- building blocks (LLVM)
@intrinsic
def fma(typingctx, a, b, c):
    """a * b + c with one rounding (LLVM's llvm.fma: one vectorisable instruction on CPUs with FMA,
    which x86 has had since 2013; elsewhere a correct, slower library call). Same-type floats only."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return a(a, b, c), codegen


@intrinsic
def prefer_wide_vectors(typingctx):
    """Marks the function being compiled with LLVM's "prefer-vector-width"="512" (no instruction is
    emitted). Called inside a kernel's loop, it reaches the function the loop ends up in, which for a
    `prange` loop is the one Numba outlines for its threads. llvmlite's `attributes.add` accepts only
    the attribute names it lists, so the string attribute goes in through the underlying set; if a
    future llvmlite stores attributes differently, the kernel simply keeps LLVM's default width."""

    def codegen(context, builder, signature, args):
        try:
            set.add(builder.function.attributes, _WIDE_VECTORS)
        except TypeError:
            pass
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def _float32_from_bits(typingctx, bits):
    """Reinterpret an int32's bits as a float32 (LLVM `bitcast`, vectorisable, unlike a call)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], _F32)

    return types.float32(types.int32), codegen


def _power_of_two(builder, k):
    """IR for the float32 2^k, for an int32 -126 <= k <= 127: k + 127 in the exponent field."""
    return builder.bitcast(builder.shl(builder.add(k, ir.Constant(_I32, 127)), ir.Constant(_I32, 23)), _F32)


_SHIFT = np.float32(1.5 * 2**23)  # x + SHIFT rounds x to an integer n, kept in the low bits: SHIFT + n
_SHIFT_BITS = int(np.array([_SHIFT]).view(np.int32)[0])


@intrinsic
def _scale_and_half(typingctx, shifted):
    """(2^n, 2^(n-1)) from `shifted` = SHIFT + n, for -125 <= n <= 127: integer operations on the
    exponent bits, where computing SHIFT + n - 1 first would cost a floating-point addition."""

    def codegen(context, builder, signature, args):
        n = builder.sub(builder.bitcast(args[0], _I32), ir.Constant(_I32, _SHIFT_BITS))
        pair = [_power_of_two(builder, n), _power_of_two(builder, builder.sub(n, ir.Constant(_I32, 1)))]
        return context.make_tuple(builder, signature.return_type, pair)

    return types.UniTuple(types.float32, 2)(types.float32), codegen


@intrinsic
def _scale_pair(typingctx, shifted):
    """(2^(n - n // 2), 2^(n // 2)) from `shifted` = SHIFT + n, for -252 <= n <= 254: two normal
    factors whose product is 2^n, also where 2^n itself is subnormal or overflows."""

    def codegen(context, builder, signature, args):
        n = builder.sub(builder.bitcast(args[0], _I32), ir.Constant(_I32, _SHIFT_BITS))
        low = builder.ashr(n, ir.Constant(_I32, 1))
        factors = [_power_of_two(builder, builder.sub(n, low)), _power_of_two(builder, low)]
        return context.make_tuple(builder, signature.return_type, factors)

    return types.UniTuple(types.float32, 2)(types.float32), codegen


# --------------------------------------------------------------------------- the accurate functions
_ONE, _ZERO, _HALF = np.float32(1.0), np.float32(0.0), np.float32(0.5)
_LOG2E = np.float32(1.4426950408889634)
_LN2_HI = np.float32(0.693145751953125)  # 16 significant bits: n * _LN2_HI is exact for |n| < 256
_LN2_LO = np.float32(1.428606765330187e-06)  # ln 2 - _LN2_HI
# e^f - 1 = f + f^2 (E0 + E1 f + ... + E5 f^5) on |f| <= ln(2)/2: minimax for the relative error
_E0, _E1, _E2 = np.float32(0.5), np.float32(0.1666666567325592), np.float32(0.041666362434625626)
_E3, _E4, _E5 = np.float32(0.008333389647305012), np.float32(0.0013940626522526145), np.float32(0.00019845877250190824)
# tanh's e^f - 1 = f + f^2 (D0 + D1 f + ... + D5 f^5) on -0.01 <= f <= 0.7 (its reduction's range,
# with a margin for n off by one at the edges): minimax for the relative error, 5e-9 with the
# coefficients rounded to float32
_D0, _D1, _D2 = np.float32(0.4999999701976776), np.float32(0.1666674017906189), np.float32(0.041659463196992874)
_D3, _D4, _D5 = np.float32(0.008364756591618061), np.float32(0.0013210574397817254), np.float32(0.00026805323432199657)
_LN2 = np.float32(0.6931471824645996)  # one constant suffices: n <= 26, and n (ln 2 - _LN2) < 5e-8 only
# moves e^(2a) where tanh hardly depends on it (relative sensitivity 2 / (e^(2a) + 1))
_EXP_HIGH = np.float32(89.0)  # clamps: beyond them the result is inf (e^89 > FLT_MAX) or 0 (e^-104 < 2^-150)
_EXP_LOW = np.float32(-104.0)
_TANH_A_MAX = np.float32(9.25)  # |x| from which tanh(x) rounds to ±1 (1 - tanh(9.25) < 2^-25)
# tanh's reduction in halves, g = f / 2 (the module's docstring says why): exact scalings by powers of 2
_TWO_LOG2E, _HALF_LN2 = _LOG2E * np.float32(2.0), _LN2 * np.float32(0.5)
# 2 D(2g) = sum over k of (D_k 2^(k+1)) g^k
_G0, _G1, _G2, _G3, _G4, _G5 = (d * np.float32(2.0 ** (k + 1)) for k, d in enumerate((_D0, _D1, _D2, _D3, _D4, _D5)))


@njit(inline="always", error_model="numpy")
def _expm1_reduced(x):
    """(e^f - 1, SHIFT + n) for x = n ln 2 + f, |f| <= ln(2)/2; |x| < 2^22."""
    shifted = fma(x, _LOG2E, _SHIFT)
    n = shifted - _SHIFT
    f = fma(n, -_LN2_HI, x)  # exact (Sterbenz): x and n * _LN2_HI are within a factor 2 of each other
    f = fma(n, -_LN2_LO, f)
    p = fma(fma(fma(fma(fma(_E5, f, _E4), f, _E3), f, _E2), f, _E1), f, _E0)
    return fma(f * f, p, f), shifted


@njit(inline="always", error_model="numpy")
def exp_f32_accurate(x):
    """e^x for float32 x, within MAX_ULP_ERROR["exp"] ulp; gradual underflow, inf above 88.72; vectorisable."""
    c = _EXP_HIGH if x > _EXP_HIGH else x  # written so that NaN passes through both clamps
    c = _EXP_LOW if c < _EXP_LOW else c
    em1, shifted = _expm1_reduced(c)
    high, low = _scale_pair(shifted)
    return fma(em1, high, high) * low


@njit(inline="always", error_model="numpy")
def tanh_f32_accurate(x):
    """tanh(x) for float32 x, within MAX_ULP_ERROR["tanh"] ulp; vectorisable."""
    a = abs(x)
    a = _TANH_A_MAX if a > _TANH_A_MAX else a  # NaN passes through
    n = np.floor(a * _TWO_LOG2E)  # floor(2a / ln 2), or one more where the product rounds up
    g = fma(n, -_HALF_LN2, a)  # f / 2
    g2 = g * g
    d2 = fma(fma(fma(_G5, g, _G4), g2, fma(_G3, g, _G2)), g2, fma(_G1, g, _G0))  # 2 D(f), Estrin's form
    em1_half = fma(g2, d2, g)  # (e^f - 1) / 2
    scale, half_scale = _scale_and_half(n + _SHIFT)  # 2^n, 2^(n-1), from bits (a NaN is never cast to int)
    h = fma(em1_half, scale, half_scale - _HALF)  # (e^(2a) - 1) / 2, rounded once
    t = h / (h + _ONE)
    t = fma(-h, t, h) if a < _HALF else t  # h - h t: the same value, without the rounding of 1 + h
    return math.copysign(t, x)


@njit(inline="always", error_model="numpy")
def sigmoid_f32_accurate(x):
    """1 / (1 + e^-x) for float32 x, within MAX_ULP_ERROR["sigmoid"] ulp, both tails; vectorisable."""
    e = exp_f32_accurate(-abs(x))
    return (_ONE if x >= _ZERO else e) / (_ONE + e)


# --------------------------------------------------------------------------- the fast functions
# tanh: Eigen's rational approximation (the one XLA and TensorFlow use on CPU): an odd polynomial of
# degree 13 over an even one of degree 6, on x clamped to [-7.9053, 7.9053].
TANH_CLAMP = np.float32(7.90531110763549805)
TANH_SMALL = np.float32(0.0004)  # below this tanh(x) = x to float32 precision
_A1, _A3, _A5 = np.float32(4.89352455891786e-03), np.float32(6.37261928875436e-04), np.float32(1.48572235717979e-05)
_A7, _A9 = np.float32(5.12229709037114e-08), np.float32(-8.60467152213735e-11)
_A11, _A13 = np.float32(2.00018790482477e-13), np.float32(-2.76076847742355e-16)
_B0, _B2 = np.float32(4.89352518554385e-03), np.float32(2.26843463243900e-03)
_B4, _B6 = np.float32(1.18534705686654e-04), np.float32(1.19825839466702e-06)

# exp: Cody-Waite reduction, a degree-7 polynomial for e^r (Cephes' `expf` coefficients), 2^k built
# in the exponent bits; results below float32's smallest normal number are flushed to 0.
EXP_HIGH = np.float32(88.72283935546875)  # log(FLT_MAX): above, e^x overflows to inf
EXP_LOW = np.float32(-87.3365478515625)  # log(FLT_MIN): below, e^x is subnormal; flushed to 0
_LN2_HI_C, _LN2_LO_C = np.float32(0.693359375), np.float32(-2.12194440e-4)
_P0, _P1, _P2 = np.float32(5.0000001201e-1), np.float32(1.6666665459e-1), np.float32(4.1665795894e-2)
_P3, _P4, _P5 = np.float32(8.3334519073e-3), np.float32(1.3981999507e-3), np.float32(1.9875691500e-4)
_INF = np.float32(np.inf)
_BIAS, _MANTISSA_BITS = np.int32(127), np.int32(23)


# Compiled lazily, where a kernel calls them (and inlined there): importing this module costs
# nothing, a kernel loaded from Numba's disk cache needs no compilation at all, and no cache file is
# written next to this module (which may sit in a read-only place).
@njit(inline="always")
def _power_of_two_int(k):
    """2.0**k for an integer -126 <= k <= 127, built in the exponent field of a float32."""
    return _float32_from_bits((np.int32(k) + _BIAS) << _MANTISSA_BITS)


@njit(inline="always", error_model="numpy")
def tanh_f32(x):
    """tanh(x) for float32 x, relative error below MAX_RELATIVE_ERROR, vectorisable (fast_math)."""
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
    """exp(x) for float32 x, relative error below MAX_RELATIVE_ERROR for normal results, vectorisable (fast_math)."""
    c = min(max(x, EXP_LOW), EXP_HIGH)
    k = np.floor(c * _LOG2E + _HALF)
    r = c - k * _LN2_HI_C - k * _LN2_LO_C
    p = _P5
    p = p * r + _P4
    p = p * r + _P3
    p = p * r + _P2
    p = p * r + _P1
    p = p * r + _P0
    p = p * r * r + r + _ONE
    ki = np.int32(k)
    half = np.int32(ki >> np.int32(1))  # 2^k as 2^half * 2^(k - half): each factor stays a normal number
    y = p * _power_of_two_int(half) * _power_of_two_int(np.int32(ki - half))
    y = _ZERO if x < EXP_LOW else y
    y = _INF if x > EXP_HIGH else y
    return x if x != x else y


@njit(inline="always", error_model="numpy")
def sigmoid_f32(x):
    """1 / (1 + e^-x) for float32 x from the fast exp: relative error below MAX_RELATIVE_ERROR down to
    x = -87.3, 0 below (fast_math). The left tail is e / (1 + e), never 1 minus something."""
    e = exp_f32(-abs(x))
    return (_ONE if x >= _ZERO else e) / (_ONE + e)
