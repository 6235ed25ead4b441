"""Function transformations against closed forms, central differences and torch.autograd.functional."""

import numpy as np
import pytest
import torch
import torch.autograd.functional as F

import minigrad as mg
from minigrad.ops import Primitive
from oracles import FD_TOL, central_difference_jvp, numpy_fn

RNG = np.random.default_rng(20240702)
A = RNG.standard_normal((3, 4))


def scalar_fn(x):
    """A smooth f: R⁴ → R with a dense, non-diagonal Hessian (written for both libraries)."""
    return ((A @ x).tanh() ** 2).sum() + (x**4).sum() * 0.1 + (x[0] * x[3]).sin()


def torch_scalar_fn(x):
    return ((torch.from_numpy(A) @ x).tanh() ** 2).sum() + (x**4).sum() * 0.1 + (x[0] * x[3]).sin()


def vector_fn(x):
    """f: R⁴ → R³."""
    return (A @ x).sin() * x[:3]


def torch_vector_fn(x):
    return (torch.from_numpy(A) @ x).sin() * x[:3]


def point(seed=0):
    return np.random.default_rng(seed).standard_normal(4)


# --------------------------------------------------------------------------- grad and value_and_grad
def test_grad_matches_the_closed_form():
    x = point()
    g = mg.grad(lambda t: (t.sin() * t**2).sum())(x)
    assert isinstance(g, mg.Tensor) and g.shape == x.shape
    np.testing.assert_allclose(g.data, np.cos(x) * x**2 + 2 * x * np.sin(x), rtol=1e-12)


def test_grad_accepts_python_floats_and_leaves_inputs_untouched():
    np.testing.assert_allclose(mg.grad(lambda t: t * t * t)(2.0).data, 12.0)
    x = mg.tensor(point())
    mg.grad(lambda t: (t * t).sum())(x)
    assert x.grad is None and not x.requires_grad


def test_grad_argnums():
    x, y = point(1), point(2)
    f = lambda a, b: (a * b**2).sum()  # noqa: E731
    np.testing.assert_allclose(mg.grad(f, argnums=1)(x, y).data, 2 * x * y)
    gx, gy = mg.grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx.data, y**2)
    np.testing.assert_allclose(gy.data, 2 * x * y)


def test_value_and_grad():
    x = point(3)
    value, g = mg.value_and_grad(lambda t: (t.exp() * t).sum())(x)
    np.testing.assert_allclose(value.data, np.sum(np.exp(x) * x))
    np.testing.assert_allclose(g.data, np.exp(x) * (1 + x))


def test_grad_of_grad_matches_closed_forms():
    f = lambda t: t**3 * t.sin()  # noqa: E731
    x = 0.7
    second = 6 * x * np.sin(x) + 6 * x**2 * np.cos(x) - x**3 * np.sin(x)
    third = 6 * np.sin(x) + 18 * x * np.cos(x) - 9 * x**2 * np.sin(x) - x**3 * np.cos(x)
    np.testing.assert_allclose(mg.grad(mg.grad(f))(x).data, second, rtol=1e-12)
    np.testing.assert_allclose(mg.grad(mg.grad(mg.grad(f)))(x).data, third, rtol=1e-12)
    t = np.tanh(0.3)
    np.testing.assert_allclose(mg.grad(mg.grad(lambda s: s.tanh()))(0.3).data, -2 * t * (1 - t**2), rtol=1e-12)


# --------------------------------------------------------------------------- vjp and jvp
def test_vjp_matches_torch_and_can_be_called_twice(rng):
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    u = rng.standard_normal((2, 4))
    out, vjp_fn = mg.vjp(lambda a, b: (a @ b).tanh(), x, y)
    first = [g.data.copy() for g in vjp_fn(u)]
    second = [g.data for g in vjp_fn(mg.tensor(u))]
    t_out, t_grads = F.vjp(lambda a, b: (a @ b).tanh(), (torch.tensor(x), torch.tensor(y)), torch.tensor(u))
    np.testing.assert_allclose(out.data, t_out.numpy(), rtol=1e-12)
    for a, b, e in zip(first, second, t_grads):
        np.testing.assert_allclose(a, e.numpy(), rtol=1e-12)
        np.testing.assert_array_equal(a, b)


def test_jvp_matches_central_differences_and_torch():
    x, v = point(4), point(5)
    out, tangent = mg.jvp(vector_fn, (x,), (v,))
    np.testing.assert_allclose(out.data, numpy_fn(vector_fn)(x), rtol=1e-12)
    np.testing.assert_allclose(tangent.data, central_difference_jvp(numpy_fn(vector_fn), [x], [v]), **FD_TOL)
    _, t_tangent = F.jvp(torch_vector_fn, torch.tensor(x), torch.tensor(v))
    np.testing.assert_allclose(tangent.data, t_tangent.numpy(), rtol=1e-12)


def test_jvp_of_several_inputs_is_the_sum_of_partial_directional_derivatives(rng):
    x, y, vx, vy = rng.standard_normal((4, 3))
    _, tangent = mg.jvp(lambda a, b: a * b.exp(), (x, y), (vx, vy))
    np.testing.assert_allclose(tangent.data, vx * np.exp(y) + x * np.exp(y) * vy, rtol=1e-12)


# --------------------------------------------------------------------------- second order
def test_hessian_matches_torch_and_is_symmetric():
    x = point(6)
    h = mg.hessian(scalar_fn, x)
    expected = F.hessian(torch_scalar_fn, torch.tensor(x)).numpy()
    assert h.shape == (4, 4)
    np.testing.assert_allclose(h.data, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h.data, h.data.T, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("mode", ["forward-over-reverse", "reverse-over-reverse"])
def test_hvp_matches_explicit_hessian_and_torch(mode):
    x, v = point(7), point(8)
    hv = mg.hvp(scalar_fn, x, v, mode=mode)
    explicit = F.hessian(torch_scalar_fn, torch.tensor(x)).numpy() @ v
    _, t_hv = F.hvp(torch_scalar_fn, torch.tensor(x), torch.tensor(v))
    assert hv.shape == x.shape
    np.testing.assert_allclose(hv.data, explicit, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hv.data, t_hv.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hv.data, mg.hessian(scalar_fn, x).data @ v, rtol=1e-10, atol=1e-12)


def test_hvp_rejects_an_unknown_mode():
    with pytest.raises(ValueError, match="hvp: mode"):
        mg.hvp(scalar_fn, point(), point(), mode="sideways")


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize(
    "f, torch_f, shape",
    [
        (vector_fn, torch_vector_fn, (4,)),
        (lambda x: (x @ x.T).tanh(), lambda x: (x @ x.T).tanh(), (2, 3)),
        (scalar_fn, torch_scalar_fn, (4,)),
    ],
    ids=["R4->R3", "matrix->matrix", "R4->R"],
)
def test_jacobian_both_modes_match_torch(f, torch_f, shape, mode, rng):
    x = rng.standard_normal(shape)
    jac = mg.jacobian(f, x, mode=mode)
    expected = F.jacobian(torch_f, torch.tensor(x)).numpy()
    assert jac.shape == expected.shape
    np.testing.assert_allclose(jac.data, expected, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------- gradcheck
def test_gradcheck_passes_on_a_correct_function(rng):
    x, y = rng.standard_normal((2, 3)), rng.standard_normal(3)
    report = mg.gradcheck(lambda a, b: (a * b).tanh() @ b, x, y)
    assert report and report.ok, str(report)
    assert "passed" in str(report)


def _wrong_square(bad_element):
    """x² with a VJP rule that is wrong by 50% at one element only: the bug gradcheck must locate."""
    factor = np.ones((2, 3))
    factor[bad_element] = 1.5
    return Primitive(
        "wrong_square",
        forward=np.square,
        vjp=lambda g, out, x: (g * 2.0 * x * mg.tensor(factor),),
        jvp=lambda t, out, x: t[0] * 2.0 * x,
    )


def test_gradcheck_fails_and_names_the_input_and_element(rng):
    wrong_square = _wrong_square((1, 2))
    a, b = rng.uniform(0.5, 2.0, (2, 3)), rng.uniform(0.5, 2.0, (2, 3))
    f = lambda x, y: (x * wrong_square(y)).sum()  # noqa: E731
    report = mg.gradcheck(f, a, b, raise_exception=False)
    assert not report and not report.ok
    assert (report.input_index, report.element) == (1, (1, 2)), str(report)
    np.testing.assert_allclose(report.numeric, 2 * a[1, 2] * b[1, 2], rtol=1e-6)
    np.testing.assert_allclose(report.analytic, 1.5 * 2 * a[1, 2] * b[1, 2], rtol=1e-12)
    assert "input 1" in str(report) and "(1, 2)" in str(report) and "FAILED" in str(report)
    with pytest.raises(mg.GradcheckError, match=r"input 1, element \(1, 2\)"):
        mg.gradcheck(f, a, b)
    with pytest.raises(AssertionError):  # a failing check fails a plain test, too
        mg.gradcheck(f, a, b)


def test_gradcheck_checks_every_input_of_a_non_scalar_function(rng):
    wrong_square = _wrong_square((0, 0))
    a = rng.uniform(0.5, 2.0, (2, 3))
    report = mg.gradcheck(lambda x: wrong_square(x) + x, a, raise_exception=False)  # vector output
    assert not report.ok and (report.input_index, report.element) == (0, (0, 0)), str(report)


def test_grad_of_raw_arrays_keeps_their_float_dtype():
    f = lambda x: (x * x).sum()
    assert mg.grad(f)(np.ones(3, dtype=np.float32)).dtype == np.float32
    assert mg.grad(f)([1, 2]).dtype == np.float64, "integer lists become float64, as Tensor() does"
