"""`minigrad.numerical` (finite differences) and `minigrad.gradcheck`, which is built on them."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import ops
from minigrad.numerical import EPSILON, central_difference, forward_difference, optimal_step


def test_central_difference_is_a_gradient_shaped_like_its_input(rng):
    x = rng.standard_normal((3, 2))
    grad = central_difference(lambda a: np.sum(np.sin(a) * a), x)
    assert grad.shape == (3, 2)
    np.testing.assert_allclose(grad, np.cos(x) * x + np.sin(x), rtol=1e-8, atol=1e-8)  # rounding ~ ε|f|/h ≈ 1e-9


def test_finite_differences_leave_their_input_untouched(rng):
    x = rng.standard_normal(4)
    before = x.copy()
    central_difference(lambda a: np.sum(a**2), x)
    forward_difference(lambda a: np.sum(a**2), x)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("scheme, order", [(central_difference, 2), (forward_difference, 1)])
def test_truncation_error_has_the_predicted_order(scheme, order):
    """Shrinking h tenfold shrinks the error 10^order times, while truncation dominates."""
    f, exact = (lambda a: float(np.exp(a).sum())), np.exp(0.5)
    errors = [abs(scheme(f, 0.5, h) - exact) for h in (1e-1, 1e-2)]
    assert errors[0] / errors[1] == pytest.approx(10.0**order, rel=0.2)


def test_central_difference_is_exact_on_quadratics_up_to_rounding():
    grad = central_difference(lambda a: 3 * a[0] ** 2 + a[0] * a[1], np.array([1.5, -2.0]), h=0.5)
    np.testing.assert_allclose(grad, [9.0 - 2.0, 1.5], rtol=1e-14)


@pytest.mark.parametrize("scheme, fn, best", [("forward", forward_difference, 0.5), ("central", central_difference, 2 / 3)])
def test_optimal_step_balances_truncation_and_rounding(scheme, fn, best):
    """At h*, the error is of order ε^(1/2) (forward) or ε^(2/3) (central), and 100x larger or
    smaller steps do worse: truncation error grows on one side, rounding error on the other."""
    h = optimal_step(scheme)
    assert h == pytest.approx(EPSILON ** {"forward": 1 / 2, "central": 1 / 3}[scheme])
    error = {step: abs(fn(np.sin, 1.0, step) - np.cos(1.0)) for step in (h / 100, h, h * 100)}
    assert error[h] < 10 * EPSILON**best, f"error {error[h]:.1e} at h* = {h:.1e}, expected about {EPSILON**best:.1e}"
    assert error[h] < min(error[h / 100], error[h * 100]), f"errors by step: {error}"
    with pytest.raises(ValueError, match="scheme must be 'forward' or 'central', got 'backward'"):
        optimal_step("backward")


def test_gradcheck_passes_a_correct_rule_and_reports_true_relative_error(rng):
    x, y = rng.standard_normal((3, 4)), rng.standard_normal(4)
    report = mg.gradcheck(lambda a, b: (a * b).tanh(), x, y)
    assert report and report.ok
    analytic, numeric = report.analytic, report.numeric
    assert report.absolute_error == abs(analytic - numeric)
    assert report.relative_error == pytest.approx(abs(analytic - numeric) / max(abs(analytic), abs(numeric)))
    assert report.relative_error < 1e-6
    assert "gradcheck passed" in str(report)


def test_gradcheck_catches_a_broken_rule_and_says_where(monkeypatch, rng):
    """A tanh VJP with the wrong sign fails; the report names the input, element and both values."""
    x, y = rng.standard_normal(3), rng.standard_normal((2, 3))
    monkeypatch.setattr(ops.tanh, "vjp", lambda g, out, x: (g * (1.0 + out * out),))
    report = mg.gradcheck(lambda a, b: (b * 0.1 + a.tanh()).sum(), x, y, raise_exception=False)
    assert not report
    assert report.input_index == 0 and report.element in {(0,), (1,), (2,)}
    t = np.tanh(x[report.element])  # the output is reduced by a random scalar u: both values carry it
    assert report.analytic / report.numeric == pytest.approx((1 + t**2) / (1 - t**2), rel=1e-6)
    scale = max(abs(report.analytic), abs(report.numeric))
    assert report.relative_error == pytest.approx(abs(report.analytic - report.numeric) / scale)
    with pytest.raises(mg.GradcheckError, match=r"gradcheck FAILED: worst element is input 0, element \(\d,\)"):
        mg.gradcheck(lambda a, b: (b * 0.1 + a.tanh()).sum(), x, y)


def test_gradcheck_judges_near_zero_gradients_by_atol():
    """A zero analytic gradient against finite-difference noise passes (relative error is then ~1)."""
    report = mg.gradcheck(lambda a: (a * 1e-12).sum(), np.ones(3), atol=1e-5)
    assert report.ok


def test_gradcheck_of_an_input_without_elements():
    report = mg.gradcheck(lambda a: a.sum(), np.zeros((0,)))
    assert report.ok and report.relative_error == 0.0
