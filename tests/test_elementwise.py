"""The elementwise functions beyond exp, log, sin, cos, tanh and sigmoid (erfc, log1p, expm1, exp2,
tan, the inverse trigonometric and the hyperbolic functions, atan2, hypot), against PyTorch in
float64 to second order, by their torch and numpy names, in float32, and through the jit."""

import math

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import jit
from oracles import compare_with_torch as _compare
from oracles import elementwise_cases

RNG = np.random.default_rng(20261207)


# --------------------------------------------------------------------------- elementwise functions
@pytest.mark.parametrize("name, case", sorted(elementwise_cases(RNG, (2, 3)).items()))
def test_elementwise_functions_match_torch_to_second_order(name, case):
    mg_fn, torch_fn, arrays = case
    _compare(mg_fn, torch_fn, arrays, second=True)
    _compare(getattr(mg, name), torch_fn, arrays)  # the module-level form, torch.asin(x) as mg.asin(x)


def test_elementwise_functions_are_accurate_where_compositions_are_not():
    tiny = np.array([1e-20, -1e-12, 3e-9])
    for name in ("log1p", "expm1", "sinh", "asinh", "atanh", "tan", "asin", "atan"):
        want = [getattr(math, name)(v) for v in tiny]
        np.testing.assert_allclose(getattr(mg, name)(tiny).data, want, rtol=1e-15, err_msg=name)
    assert mg.log1p(mg.tensor(1e-20)).item() == 1e-20 and mg.log(1.0 + mg.tensor(1e-20)).item() == 0.0
    np.testing.assert_allclose(mg.erfc(mg.tensor([10.0, 26.0])).data, [math.erfc(10.0), math.erfc(26.0)], rtol=1e-14)
    assert mg.hypot(mg.tensor(3e200), mg.tensor(4e200)).item() == pytest.approx(5e200)


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


def test_elementwise_functions_compile():
    def f(x, y):
        return (x.asin() + x.atanh() * mg.atan2(y, x) + x.expm1().log1p() + mg.hypot(x, y).cosh()).sum()

    x, y = RNG.uniform(-0.8, 0.8, 5), RNG.standard_normal(5)
    want_value, want_grads = mg.value_and_grad(f, argnums=(0, 1))(mg.tensor(x), mg.tensor(y))
    for backend in ("numpy", "numba"):
        value, grads = jit.compile(f, backend=backend, backward=True)(x, y)
        np.testing.assert_allclose(value.data, want_value.data, rtol=1e-12)
        for g, want in zip(grads, want_grads):
            np.testing.assert_allclose(g.data, want.data, rtol=1e-12)
