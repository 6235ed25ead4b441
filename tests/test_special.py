"""`minigrad.special` as `torch.special`: the names PyTorch programs use, the compositions written
there (xlogy, xlog1py, entr, sinc, ndtr, log_ndtr) against torch to second order and against
40-digit arithmetic in the tails."""

import math

import mpmath
import numpy as np
import pytest
import torch

import minigrad as mg
from oracles import compare_with_torch as _compare

S, T = mg.special, torch.special


def test_every_name_is_torch_specials_and_the_aliases_are_minigrads_functions():
    assert set(S.__all__) <= set(dir(T))
    assert (S.expit, S.gammaln, S.psi, S.multigammaln, S.modified_bessel_i0) == (mg.sigmoid, mg.lgamma, mg.digamma, mg.mvlgamma, mg.i0)
    x = np.array([0.3, 1.7, 4.0])
    for name in ("expit", "gammaln", "psi", "i0", "i0e", "i1", "i1e", "ndtri", "erfinv", "logit", "expm1", "exp2", "log1p"):
        inputs = x / 5 if name in ("ndtri", "erfinv", "logit") else x
        np.testing.assert_allclose(getattr(S, name)(inputs).data, getattr(T, name)(torch.tensor(inputs)).numpy(), rtol=1e-13, err_msg=name)
    np.testing.assert_allclose(S.multigammaln(x + 1, 2).data, T.multigammaln(torch.tensor(x + 1), 2).numpy(), rtol=1e-13)
    np.testing.assert_allclose(S.polygamma(2, x).data, T.polygamma(2, torch.tensor(x)).numpy(), rtol=1e-8)
    np.testing.assert_allclose(S.log_softmax(x, dim=0).data, T.log_softmax(torch.tensor(x), dim=0).numpy(), rtol=1e-14)


COMPOSITIONS = {  # name: (inputs, where the second derivatives are compared)
    "xlogy": ([np.array([0.0, 0.5, 2.0, 1.0, 3.0]), np.array([0.3, 1.5, 0.7, 2.0, 4.0])]),
    "xlog1py": ([np.array([0.0, 0.5, 2.0, 1.0, 3.0]), np.array([0.3, 1.5, -0.7, 1e-9, 4.0])]),
    "entr": ([np.array([0.1, 0.5, 1.0, 2.0, 7.0])]),
    "sinc": ([np.array([-2.3, -0.5, 1e-3, 0.25, 1.5, 3.0])]),
    "ndtr": ([np.array([-9.0, -2.0, 0.0, 0.5, 3.0])]),
    "log_ndtr": ([np.array([-45.0, -30.0, -3.0, -1.0, -0.2, 0.0, 2.0, 9.0])]),
}


@pytest.mark.parametrize("name", COMPOSITIONS)
def test_compositions_match_torch_to_second_order(name):
    _compare(getattr(S, name), getattr(T, name), COMPOSITIONS[name], second=True)


def test_where_the_compositions_have_edges():
    """xlogy and xlog1py are 0 where x = 0, NaN for a NaN y, −∞ for x > 0 at y = 0 (log 0), with
    torch's gradients there; entr is 0 at 0 and −∞ below; sinc is 1 at 0 with the true derivatives
    0 and −π²/3 there (torch's second is 0); the subnormal Φ(−38) is kept (torch's is 0)."""
    x, y = np.array([0.0, 0.0, 2.0, 0.0]), np.array([0.0, np.nan, 0.0, 5.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for name in ("xlogy", "xlog1py"):
            np.testing.assert_array_equal(getattr(S, name)(x, y - (name == "xlog1py")).data,
                                          getattr(T, name)(torch.tensor(x), torch.tensor(y - (name == "xlog1py"))).numpy(), err_msg=name)
        np.testing.assert_array_equal(S.entr(np.array([0.0, -1.0, np.nan])).data, T.entr(torch.tensor([0.0, -1.0, np.nan])).numpy())
    a, b = mg.tensor([0.0, 0.0], requires_grad=True), mg.tensor([0.5, 3.0], requires_grad=True)
    grads = mg.gradients(S.xlogy(a, b).sum(), [a, b])
    ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in ([0.0, 0.0], [0.5, 3.0]))
    for got, want in zip(grads, torch.autograd.grad(T.xlogy(ta, tb).sum(), [ta, tb])):
        np.testing.assert_array_equal(got.data, want.numpy())
    zero = mg.tensor(0.0, requires_grad=True)
    value = S.sinc(zero)
    (first,) = mg.gradients(value, [zero], create_graph=True)
    (second,) = mg.gradients(first, [zero])
    assert (value.item(), first.item()) == (1.0, 0.0) and second.item() == pytest.approx(-math.pi**2 / 3, rel=1e-14)
    assert S.ndtr(-38.0).item() == pytest.approx(float(mpmath.ncdf(-38)), rel=1e-12) and T.ndtr(torch.tensor(-38.0, dtype=torch.float64)).item() == 0.0


def test_log_ndtr_within_a_few_ulp_of_40_digit_arithmetic_in_both_tails():
    """log Φ(x) from −10⁴ to 40 across its three branches (−37.5 and −1 are where they meet), as
    accurate as x itself is: above 0, log Φ(x) ≈ −Φ(−x), whose relative condition number in x is
    x², so the bound is 8 ulp times max(1, x²)."""
    mpmath.mp.dps = 40
    x = np.concatenate([-np.geomspace(1e4, 1e-3, 300), [-37.5, -37.5 + 1e-12, -1.0, -1.0 - 1e-15], np.linspace(0.0, 40.0, 100)])
    # log1p(−Φ(−x)) above 0: 40 digits of Φ(x) itself would round 1 − 1e-300 to 1
    want = np.array([float(mpmath.log1p(-mpmath.ncdf(-mpmath.mpf(v))) if v > 0 else mpmath.log(mpmath.ncdf(mpmath.mpf(v)))) for v in x])
    got = S.log_ndtr(x).data
    assert np.all(np.abs(got - want) <= 8 * np.spacing(np.abs(want)) * np.maximum(1.0, np.where(x > 0, x * x, 1.0)))
