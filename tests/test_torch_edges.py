"""Edge cases where minigrad once gave silently wrong numbers, each against PyTorch in float64.

Negative bases of a tensor power, the power rule at 0, sigmoid's saturated tails (eager and in the
numpy backend), the binary cross-entropy's gradient at a logit of exactly 0, gradcheck on NaN or
infinite gradients, and data that used to become NaN or lose its imaginary part.
"""

import warnings

import numpy as np
import pytest
import torch

import minigrad as mg
import minigrad.jit as jit
from minigrad import ops


def _torch_grads(fn, arrays, cotangent):
    xs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*xs)
    grads = torch.autograd.grad(out, xs, torch.tensor(cotangent), allow_unused=True)
    return out.detach().numpy(), [np.zeros(np.shape(a)) if g is None else g.numpy() for a, g in zip(arrays, grads)]


def _minigrad_grads(fn, arrays, cotangent):
    xs = [mg.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*xs)
    return out.data, [g.data for g in mg.gradients(out, xs, grad=cotangent)]


# --------------------------------------------------------------------------- x ** y, c ** x
def test_tensor_exponent_with_negative_bases_matches_torch(rng):
    """Random signs and integer or fractional exponents: values and both gradients as PyTorch's
    (NaN exactly where PyTorch has NaN: a negative base to a fractional power, the exponent's
    gradient at a negative base)."""
    base = rng.choice([-1.0, 1.0], (4, 5)) * rng.uniform(0.2, 2.0, (4, 5))
    base[0, :2] = 0.0
    exponent = np.concatenate([rng.integers(-3, 4, 3).astype(float), rng.uniform(-2, 2, 2)])
    exponent[0] = 0.0
    u = rng.standard_normal((4, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # log of a negative base: NaN, on purpose
        value, grads = _minigrad_grads(lambda x, y: x**y, [base, exponent], u)
    t_value, t_grads = _torch_grads(torch.pow, [base, exponent], u)
    np.testing.assert_allclose(value, t_value, rtol=1e-12, atol=0)
    np.testing.assert_allclose(grads[0], t_grads[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads[1], t_grads[1], rtol=1e-10, atol=1e-12)
    assert mg.tensor([-2.0, -2.0]).__pow__(mg.tensor([2.0, 3.0])).data.tolist() == [4.0, -8.0]


def test_scalar_base_power_matches_torch(rng):
    x = rng.standard_normal(6)
    value, (grad,) = _minigrad_grads(lambda t: 2.5**t, [x], np.ones(6))
    t_value, (t_grad,) = _torch_grads(lambda t: 2.5**t, [x], np.ones(6))
    np.testing.assert_allclose(value, t_value, rtol=1e-14)
    np.testing.assert_allclose(grad, t_grad, rtol=1e-14)
    assert (2.0 ** mg.tensor([1.0, 3.0], requires_grad=True)).op == "pow"


def test_tensor_exponent_forward_mode_with_negative_base_has_no_nan():
    """Only the base carries a tangent: the exponent's NaN factor (log of a negative base) must not
    leak into it as 0 · NaN."""
    x = np.array([-2.0, -1.5, 3.0])
    y = mg.tensor([3.0, 2.0, 2.0])
    _, tangent = mg.jvp(lambda t: t**y, (x,), (np.ones(3),))
    _, t_tangent = torch.func.jvp(lambda t: t ** torch.tensor(y.data), (torch.tensor(x),), (torch.ones(3, dtype=torch.float64),))
    np.testing.assert_allclose(tangent.data, t_tangent.numpy(), rtol=1e-14)


def test_constant_power_keeps_its_op_and_graph():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x**2.0
    assert y.op == "power" and y.node.params == {"exponent": 2.0}


# --------------------------------------------------------------------------- the power rule at 0
@pytest.mark.parametrize(
    "name, f, torch_f",
    [
        ("x**0", lambda x: x**0, lambda x: x**0),
        ("x**2", lambda x: x**2, lambda x: x**2),
        ("x**3", lambda x: x**3, lambda x: x**3),
        ("relu(x)**2", lambda x: x.relu() ** 2, lambda x: torch.relu(x) ** 2),
    ],
)
def test_derivatives_at_zero_are_finite_and_match_torch(name, f, torch_f):
    """Up to the third derivative at x = 0, where c·x^(c−1) with c = 0 once gave 0·∞ = NaN."""
    got = mg.tensor(0.0)
    g = f
    derivatives = []
    for _ in range(3):
        g = mg.grad(g)
        derivatives.append(float(g(got).data))
    t = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    out, expected = torch_f(t), []
    for _ in range(3):
        if out.requires_grad:
            (out,) = torch.autograd.grad(out, t, create_graph=True, allow_unused=True, materialize_grads=True)
        else:  # torch saw a constant (the derivative of x ** 0) and recorded nothing: zero from here on
            out = torch.zeros((), dtype=torch.float64)
        expected.append(float(out.detach()))
    assert np.all(np.isfinite(derivatives)), f"{name}: {derivatives}"
    np.testing.assert_allclose(derivatives, expected, err_msg=name)


# --------------------------------------------------------------------------- sigmoid's tails
@pytest.mark.parametrize("dtype, torch_dtype", [(np.float32, torch.float32), (np.float64, torch.float64)])
def test_sigmoid_tails_keep_relative_precision(dtype, torch_dtype):
    x = np.concatenate([-np.geomspace(1e-3, 80 if dtype == np.float32 else 700, 200), np.geomspace(1e-3, 700, 50)]).astype(dtype)
    expected = 1.0 / (1.0 + np.exp(-x.astype(np.longdouble)))  # more precise than either
    got = mg.tensor(x).sigmoid().data
    assert got.dtype == dtype
    tiny = np.finfo(dtype).tiny
    normal = expected > tiny
    relative = np.abs(got[normal] - expected[normal]) / expected[normal]
    assert relative.max() < 8 * np.finfo(dtype).eps, f"worst relative error {relative.max():.3g}"
    t = torch.sigmoid(torch.tensor(x, dtype=torch_dtype)).numpy()
    np.testing.assert_allclose(got[normal], t[normal], rtol=8 * np.finfo(dtype).eps)


def test_log_sigmoid_far_left_is_finite_like_torch():
    x = mg.tensor([-40.0, -100.0, -700.0])
    np.testing.assert_allclose(x.sigmoid().log().data, torch.tensor(x.data).sigmoid().log().numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_backend_sigmoid_equals_eager(dtype):
    x = np.array([-800, -90, -40, -17, -9, -1, -0.0, 0, 1, 9, 17, 40, 800, np.nan], dtype=dtype)
    compiled = jit.compile(lambda t: t.sigmoid())
    with np.errstate(all="raise", invalid="ignore"):
        got = compiled(x).data
    np.testing.assert_array_equal(got, mg.tensor(x).sigmoid().data)
    assert got.dtype == dtype


# --------------------------------------------------------------------------- binary cross-entropy
def test_bce_with_logits_gradient_at_zero_logit():
    logits = np.array([0.0, 0.0, 0.0, 2.0, -3.0, 800.0, -800.0])
    targets = np.array([0.0, 1.0, 0.3, 0.0, 1.0, 0.0, 1.0])
    z = mg.tensor(logits, requires_grad=True)
    loss = mg.nn.binary_cross_entropy_with_logits(z, targets)
    loss.backward()
    tz = torch.tensor(logits, requires_grad=True)
    t_loss = torch.nn.functional.binary_cross_entropy_with_logits(tz, torch.tensor(targets))
    t_loss.backward()
    np.testing.assert_allclose(loss.item(), t_loss.item(), rtol=1e-14)
    np.testing.assert_allclose(z.grad.data, tz.grad.numpy(), rtol=1e-14, atol=1e-17)
    assert z.grad.data[0] == 0.5 / len(logits)


# --------------------------------------------------------------------------- gradcheck
@pytest.mark.parametrize(
    "name, f, x",
    [
        ("sqrt at 0", lambda t: t.sqrt(), [0.0, 1.0]),
        ("log at -1", lambda t: t.log(), [-1.0, 1.0]),
        ("x ** tensor 0 at 0", lambda t: t ** mg.tensor(-1.0), [0.0, 2.0]),
        ("1/x at 0", lambda t: 1.0 / t, [0.0, 1.0]),
    ],
)
def test_gradcheck_fails_on_nan_or_infinite_gradients(name, f, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        report = mg.gradcheck(f, np.array(x), raise_exception=False)
        assert not report.ok, f"{name}: {report}"
        assert "NaN or infinite" in str(report) and "never passes" in str(report)
        assert not (np.isfinite(report.analytic) and np.isfinite(report.numeric))
        with pytest.raises(mg.GradcheckError, match="FAILED"):
            mg.gradcheck(f, np.array(x))
        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        torch_f = {"sqrt at 0": torch.sqrt, "log at -1": torch.log, "x ** tensor 0 at 0": lambda v: v**-1.0, "1/x at 0": lambda v: 1.0 / v}[name]
        assert not torch.autograd.gradcheck(torch_f, (t,), raise_exception=False), "PyTorch fails it too"


def test_gradcheck_still_passes_finite_gradients():
    assert mg.gradcheck(lambda t: (t**3).sum(), np.array([0.0, 1.0, -2.0])).ok


# --------------------------------------------------------------------------- data and shapes
@pytest.mark.parametrize("axis", [3, 5, -4, 1.0])
def test_stack_refuses_an_axis_out_of_range(axis):
    with pytest.raises(mg.ShapeError, match=rf"stack: axis {axis!r} is out of range.*shape \(2, 3\).*\[-3, 2\]"):
        mg.stack([mg.zeros(2, 3), mg.zeros(2, 3)], axis=axis)
    assert mg.stack([mg.zeros(2, 3)] * 2, axis=-3).shape == torch.stack([torch.zeros(2, 3)] * 2, dim=-3).shape


@pytest.mark.parametrize(
    "data, error, message",
    [
        (None, mg.DtypeError, "data is None"),
        ([1.0, None], mg.DtypeError, r"cannot make a numeric array of \[1.0, None\]"),
        (1 + 2j, mg.DtypeError, "complex data"),
        (np.array([1 + 1j]), mg.DtypeError, r"complex data \(dtype complex128, shape \(1,\)\)"),
        ("abc", mg.DtypeError, "strings are not numbers"),
        ([[1.0, 2.0], [3.0]], mg.ShapeError, "ragged.*element 0 has length 2, element 1 has length 1"),
        ([[[1, 2]], [[1, 2], [3, 4]]], mg.ShapeError, "ragged.*element 0 has length 1, element 1 has length 2"),
    ],
)
def test_tensor_refuses_data_that_is_not_a_real_array(data, error, message):
    with pytest.raises(error, match=message):
        mg.tensor(data)
    with pytest.raises(error, match=message):
        mg.Tensor(data, requires_grad=True)


def test_arithmetic_with_complex_numbers_is_refused():
    with pytest.raises(mg.DtypeError, match="complex"):
        mg.tensor([1.0]) * 1j


# --------------------------------------------------------------------------- state dicts
def test_load_state_dict_names_missing_and_unexpected_keys():
    model = mg.nn.MLP([2, 3, 1], rng=np.random.default_rng(0))
    state = model.state_dict()
    before = {k: v.copy() for k, v in state.items()}
    state["layers.0.weights"] = state.pop("layers.0.weight")  # a typo
    state["layers.2.bias"] = state["layers.2.bias"] + 1.0
    with pytest.raises(mg.nn.StateDictError, match=r"missing key\(s\) 'layers.0.weight'; unexpected key\(s\) 'layers.0.weights'.*strict=False"):
        model.load_state_dict(state)
    np.testing.assert_array_equal(model.state_dict()["layers.2.bias"], before["layers.2.bias"])  # nothing loaded
    result = model.load_state_dict(state, strict=False)
    assert result.missing_keys == ["layers.0.weight"] and result.unexpected_keys == ["layers.0.weights"]
    np.testing.assert_array_equal(model.state_dict()["layers.2.bias"], before["layers.2.bias"] + 1.0)
    assert isinstance(mg.nn.StateDictError("x"), KeyError)


def test_load_state_dict_checks_shapes_and_types():
    model = mg.nn.Linear(2, 3)
    with pytest.raises(mg.ShapeError, match=r"weight has shape \(2, 3\), the state has \(3, 2\)"):
        model.load_state_dict({"weight": np.zeros((3, 2)), "bias": np.zeros(3)})
    with pytest.raises(TypeError, match="expected a dict"):
        model.load_state_dict([np.zeros((2, 3))])
    model.load_state_dict({"weight": [[1.0] * 3] * 2, "bias": mg.tensor([1.0, 2.0, 3.0])})  # lists and tensors
    np.testing.assert_array_equal(model.bias.data, [1.0, 2.0, 3.0])


# --------------------------------------------------------------------------- new primitives exist once
def test_new_primitives_keep_forward_vjp_and_jvp_together():
    for name in ["pow", "softplus", "maximum", "minimum", "select", "greater", "stop_gradient"]:
        primitive = getattr(ops, name)
        assert ops.PRIMITIVES[name] is primitive
        assert callable(primitive.forward) and callable(primitive.vjp) and callable(primitive.jvp)


def test_maximum_shares_ties_like_torch():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])
    _, grads = _minigrad_grads(mg.maximum, [x, y], np.ones(3))
    _, t_grads = _torch_grads(torch.maximum, [x, y], np.ones(3))
    np.testing.assert_array_equal(grads[0], t_grads[0])
    np.testing.assert_array_equal(grads[1], t_grads[1])
    _, grads = _minigrad_grads(mg.minimum, [x, y], np.ones(3))
    _, t_grads = _torch_grads(torch.minimum, [x, y], np.ones(3))
    np.testing.assert_array_equal(grads[0], t_grads[0])
    assert mg.maximum(mg.tensor([1.0, -1.0]), 0.0).data.tolist() == [1.0, 0.0]


def test_object_arrays_of_real_numbers_still_convert():
    from fractions import Fraction

    assert mg.tensor(np.array([1, 2.5, Fraction(1, 2)], dtype=object)).data.tolist() == [1.0, 2.5, 0.5]
    with pytest.raises(mg.DtypeError, match="cannot make a numeric array"):
        mg.tensor(np.array([1.0, None], dtype=object))
    with pytest.raises(mg.DtypeError, match="cannot make a numeric array"):
        mg.tensor(np.array([1 + 2j, 1.0], dtype=object))
