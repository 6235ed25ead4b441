"""`minigrad.symbolic`: exact derivatives of expression trees, and the expression swell they suffer."""

import numpy as np
import pytest

from minigrad.numerical import central_difference
from minigrad.symbolic import Expr, const, dag_size, evaluate, symbolic_diff, to_string, tree_size, var

x, y = var("x"), var("y")

# Each formula uses every operation at least once across the list; written with the same methods
# a Tensor or a Dual has, so the functions are ordinary Python functions of one argument.
FORMULAS = {
    "polynomial": lambda x: 3 * x * x * x - 2 * x + 1,
    "quotient": lambda x: (x * x + 1) / (x - 3),
    "nested_sin": lambda x: (x * x.sin()).sin(),
    "exp_log": lambda x: (x.exp() + x * x).log(),
    "tanh_cos": lambda x: (2 * x).tanh() * x.cos() - (-x).exp(),
    "reciprocal": lambda x: 1 / (1 + (-x).exp()),
}
POINTS = np.random.default_rng(5).uniform(0.2, 2.5, 4)


@pytest.mark.parametrize("name", FORMULAS)
def test_symbolic_derivative_matches_finite_differences(name):
    f = FORMULAS[name]
    derivative = symbolic_diff(f(x), x)
    for a in POINTS:
        numeric = central_difference(lambda v: evaluate(f(x), {"x": v}), a, h=1e-6)
        np.testing.assert_allclose(evaluate(derivative, {"x": a}), numeric, rtol=1e-7, atol=1e-9, err_msg=f"{name} at {a}")


@pytest.mark.parametrize("name", FORMULAS)
def test_symbolic_derivative_matches_sympy(name):
    sympy = pytest.importorskip("sympy")
    from minigrad.symbolic import to_sympy

    expr = FORMULAS[name](x)
    difference = to_sympy(symbolic_diff(expr, x)) - sympy.diff(to_sympy(expr), sympy.Symbol("x"))
    assert sympy.simplify(difference) == 0, f"{name}: d/dx {expr} differs from SymPy by {difference}"


def test_other_variables_are_constants():
    f = x * y + y.sin()
    np.testing.assert_allclose(evaluate(symbolic_diff(f, x), {"x": 0.3, "y": 2.0}), 2.0)
    np.testing.assert_allclose(evaluate(symbolic_diff(f, y), {"x": 0.3, "y": 2.0}), 0.3 + np.cos(2.0))


def test_constructors_simplify_lightly():
    assert to_string(symbolic_diff(x, x)) == "1"
    assert to_string(symbolic_diff(const(7.0), x)) == "0"
    assert to_string(symbolic_diff(3 * x, x)) == "3"  # 0·x + 3·1 folds away
    assert to_string(x * 1 + 0) == "x"
    assert to_string(0 * x.sin()) == "0"
    assert to_string((const(2) + 3) * x) == "5 * x"
    assert to_string(-(-x)) == "x"


def test_to_string_parenthesises_only_where_needed():
    z = var("z")
    assert to_string((x + y) * z) == "(x + y) * z"
    assert to_string(x + y * z) == "x + y * z"
    assert to_string(x - (y - z)) == "x - (y - z)"
    assert to_string((x - y) - z) == "x - y - z"
    assert to_string(x / (y * z)) == "x / (y * z)"
    assert to_string(-(x * y)) == "-(x * y)"
    assert to_string((x + 1).sin()) == "sin(x + 1)"


def test_tree_and_dag_sizes_of_a_small_shared_expression():
    """(x + 1) * (x + 1): 7 nodes written out, 4 distinct (mul, add, x, 1), shared or rebuilt."""
    shared = x + 1
    assert (tree_size(shared * shared), dag_size(shared * shared)) == (7, 4)
    rebuilt = (var("x") + 1) * (var("x") + 1)  # equal sub-expressions, distinct objects
    assert (tree_size(rebuilt), dag_size(rebuilt)) == (7, 4)


def _logistic(x, n):
    """The logistic map l_{k+1} = 4 l_k (1 − l_k) (Baydin et al. 2018, table 1)."""
    for _ in range(n):
        x = 4 * x * (1 - x)
    return x


def test_expression_swell_tree_exponential_dag_linear():
    depths = range(2, 11)
    derivatives = [symbolic_diff(_logistic(x, n), x) for n in depths]
    trees = np.array([tree_size(d) for d in derivatives])
    dags = np.array([dag_size(d) for d in derivatives])
    growth = trees[1:] / trees[:-1]
    assert growth.min() > 2.0, f"tree size should more than double per level, grew by {growth}"
    steps = np.diff(dags)
    assert steps.min() > 0 and steps.max() == steps.min(), f"DAG size should grow by a constant step, got steps {steps}"


def test_sizes_are_counted_without_expanding_the_tree():
    """A DAG whose tree has ~2^61 nodes is counted in linear time."""
    e = x
    for _ in range(60):
        e = e * e
    assert tree_size(e) == 2**61 - 1
    assert dag_size(e) == 61


def test_evaluate_broadcasts_over_arrays_and_names_missing_variables():
    values = np.linspace(0.5, 1.5, 7)
    np.testing.assert_allclose(evaluate((x * y).exp(), {"x": values, "y": 2.0}), np.exp(2 * values))
    with pytest.raises(KeyError, match="no value given for variable 'y'"):
        evaluate(x + y, {"x": 1.0})


def test_a_branch_on_an_expression_is_refused_with_a_reason():
    with pytest.raises(TypeError, match="no truth value"):
        bool(x + 1)


def test_bad_operands_and_operations_are_named():
    with pytest.raises(TypeError, match="cannot combine an expression with str 'a'"):
        x + "a"
    with pytest.raises(ValueError, match="unknown operation 'pow'"):
        Expr("pow", (x, x))


def test_repr_summarises_large_expressions():
    assert repr(x * x.sin()) == "x * sin(x)"
    assert repr(symbolic_diff(_logistic(x, 6), x)).startswith("<Expr add: ")
