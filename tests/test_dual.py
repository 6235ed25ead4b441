"""`minigrad.dual`: dual numbers follow the rules of calculus and agree with the library's forward mode."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.dual import Dual, jvp_dual

RNG = np.random.default_rng(11)
POINTS = RNG.uniform(0.3, 2.0, 5)

# method name -> (function of a dual or tensor, its derivative as a numpy function)
ELEMENTARY = {
    "sin": (lambda x: x.sin(), np.cos),
    "cos": (lambda x: x.cos(), lambda a: -np.sin(a)),
    "exp": (lambda x: x.exp(), np.exp),
    "log": (lambda x: x.log(), lambda a: 1 / a),
    "tanh": (lambda x: x.tanh(), lambda a: 1 - np.tanh(a) ** 2),
    "neg": (lambda x: -x, lambda a: -np.ones_like(a)),
}


@pytest.mark.parametrize("name", ELEMENTARY)
def test_elementary_functions_carry_their_derivative(name):
    f, derivative = ELEMENTARY[name]
    for a in POINTS:
        out = f(Dual(a, 0.7))
        np.testing.assert_allclose(out.primal, f(mg.tensor(a)).item(), rtol=1e-15, err_msg=f"{name}({a}) value")
        np.testing.assert_allclose(out.tangent, derivative(a) * 0.7, rtol=1e-14, err_msg=f"{name}'({a}) tangent")


# operation -> (function of two duals/numbers, d/da, d/db)
BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: 1.0, lambda a, b: 1.0),
    "sub": (lambda a, b: a - b, lambda a, b: 1.0, lambda a, b: -1.0),
    "mul": (lambda a, b: a * b, lambda a, b: b, lambda a, b: a),
    "div": (lambda a, b: a / b, lambda a, b: 1 / b, lambda a, b: -a / b**2),
}


@pytest.mark.parametrize("name", BINARY)
def test_binary_rules_with_duals_and_plain_numbers_on_either_side(name):
    op, d_left, d_right = BINARY[name]
    a, b = 1.3, -0.6
    both = op(Dual(a, 2.0), Dual(b, 5.0))
    assert both.primal == pytest.approx(op(a, b))
    assert both.tangent == pytest.approx(2.0 * d_left(a, b) + 5.0 * d_right(a, b), rel=1e-14)
    left = op(Dual(a, 1.0), b)  # __add__ & co. with a float on the right
    assert isinstance(left, Dual) and left.primal == pytest.approx(op(a, b))
    assert left.tangent == pytest.approx(d_left(a, b), rel=1e-14)
    right = op(a, Dual(b, 1.0))  # __radd__ & co. with a float on the left
    assert isinstance(right, Dual) and right.primal == pytest.approx(op(a, b))
    assert right.tangent == pytest.approx(d_right(a, b), rel=1e-14)


def test_numpy_arrays_on_the_left_defer_to_dual():
    """`ndarray * Dual` must not become an object array of per-element Duals."""
    out = np.array([1.0, 2.0]) * Dual(3.0, 1.0) + np.array([0.5, 0.5])
    assert isinstance(out, Dual)
    np.testing.assert_array_equal(out.primal, [3.5, 6.5])
    np.testing.assert_array_equal(out.tangent, [1.0, 2.0])


def _composite(x, y):
    """Written once with operators and Tensor-named methods: runs on Duals and on Tensors."""
    z = x * y + x.sin() / (1.0 + y.exp())
    return (z * z).tanh() - 3.0 * x.log() + (2.0 - y).cos() * z


def test_dual_agrees_with_library_forward_mode(rng):
    for _ in range(5):
        x, y = rng.uniform(0.5, 2.0, 2)
        vx, vy = rng.standard_normal(2)
        value, tangent = jvp_dual(_composite, [x, y], [vx, vy])
        out, expected = mg.jvp(_composite, (mg.tensor(x), mg.tensor(y)), (mg.tensor(vx), mg.tensor(vy)))
        np.testing.assert_allclose(value, out.item(), rtol=1e-14)
        np.testing.assert_allclose(tangent, expected.item(), rtol=1e-12)


def test_elementwise_duals_agree_with_library_forward_mode_on_arrays(rng):
    x, y, vx, vy = rng.uniform(0.5, 2.0, (4, 6))
    value, tangent = jvp_dual(_composite, [x, y], [vx, vy])
    out, expected = mg.jvp(_composite, (mg.tensor(x), mg.tensor(y)), (mg.tensor(vx), mg.tensor(vy)))
    np.testing.assert_allclose(value, out.data, rtol=1e-14)
    np.testing.assert_allclose(tangent, expected.data, rtol=1e-12)


def test_jvp_dual_is_the_directional_derivative(rng):
    """J v = ∇f · v, with the gradient from reverse mode: both modes, one answer."""
    x, v = rng.uniform(0.5, 2.0, 2), rng.standard_normal(2)
    _, tangent = jvp_dual(_composite, list(x), list(v))
    gradient = mg.grad(_composite, argnums=(0, 1))(mg.tensor(x[0]), mg.tensor(x[1]))
    np.testing.assert_allclose(tangent, sum(g.item() * vi for g, vi in zip(gradient, v)), rtol=1e-12)


def test_jvp_dual_of_a_constant_is_zero():
    assert jvp_dual(lambda x: 4.0, [1.0], [1.0]) == (4.0, 0.0)


def test_jvp_dual_rejects_mismatched_tangents():
    with pytest.raises(ValueError, match="2 primals but 1 tangents"):
        jvp_dual(_composite, [1.0, 2.0], [1.0])


def test_repr_shows_both_parts():
    assert repr(Dual(1.5, -2.0)) == "Dual(1.5, -2.0)"
