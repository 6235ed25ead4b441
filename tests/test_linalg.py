"""minigrad.linalg against torch.linalg in float64: values, gradients and second derivatives through
the public functions (the primitives' own rules are also in the tables of test_higher_order and
test_forward_mode), PyTorch's argument conventions, the jit, float32, and clear errors for bad
input."""

import math

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import jit
from minigrad.errors import LinAlgError, ShapeError
from oracles import compare_with_torch as _compare

RNG = np.random.default_rng(20261207)


def _matrices(*shape):
    """Well-conditioned square matrices: random, plus twice the identity."""
    return RNG.standard_normal(shape) + 2 * np.eye(shape[-1])


A, A3 = _matrices(4, 4), _matrices(2, 3, 3)


# --------------------------------------------------------------------------- inverse, solve, determinants
@pytest.mark.parametrize("a", [A, A3], ids=["matrix", "batch"])
def test_inv_det_slogdet_match_torch(a):
    _compare(mg.linalg.inv, torch.linalg.inv, [a], second=True)
    _compare(mg.linalg.det, torch.linalg.det, [a], second=True)
    _compare(lambda x: mg.linalg.slogdet(x).logabsdet, lambda x: torch.linalg.slogdet(x).logabsdet, [a], second=True)
    _compare(lambda x: x.inverse() * x.det().unsqueeze(-1).unsqueeze(-1), lambda x: x.inverse() * x.det()[..., None, None], [a])


def test_slogdet_sign_and_logdet_of_a_negative_determinant():
    a = np.diag([2.0, -3.0, 1.0])
    sign, logabsdet = mg.linalg.slogdet(a)
    assert sign.item() == -1.0 and logabsdet.item() == pytest.approx(math.log(6.0))
    assert math.isnan(mg.logdet(a).item()) and math.isnan(torch.logdet(torch.tensor(a)).item())
    assert mg.logdet(np.zeros((2, 2))).item() == -math.inf
    spd = A @ A.T + np.eye(4)
    _compare(mg.logdet, torch.logdet, [spd], second=True)


def test_slogdet_does_not_overflow_where_det_does():
    a = np.eye(400) * 10.0
    with np.errstate(over="ignore"):
        assert mg.linalg.det(a).item() == math.inf
    assert mg.linalg.slogdet(a).logabsdet.item() == pytest.approx(400 * math.log(10.0))


@pytest.mark.parametrize(
    "a, b",
    [(A, RNG.standard_normal((4, 3))), (A, RNG.standard_normal(4)), (A3, RNG.standard_normal((2, 3))),
     (A3, RNG.standard_normal((3, 5))), (A, RNG.standard_normal((2, 4, 1)))],
    ids=["matrix", "vector", "batch-of-vectors", "broadcast-B", "broadcast-A"],
)
def test_solve_matches_torch(a, b):
    _compare(mg.linalg.solve, torch.linalg.solve, [a, b], second=True)


def test_solve_on_the_right():
    b = RNG.standard_normal((2, 4))
    _compare(lambda x, y: mg.linalg.solve(x, y, left=False), lambda x, y: torch.linalg.solve(x, y, left=False), [A, b], second=True)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [True, False])
def test_solve_triangular_reads_one_triangle(upper, left, unitriangular):
    b = RNG.standard_normal((4, 2) if left else (2, 4))
    kw = dict(upper=upper, left=left, unitriangular=unitriangular)
    _compare(lambda x, y: mg.linalg.solve_triangular(x, y, **kw), lambda x, y: torch.linalg.solve_triangular(x, y, **kw), [A, b], second=True)


def test_matrix_power_of_negative_exponents():
    _compare(lambda x: mg.linalg.matrix_power(x, -3), lambda x: torch.linalg.matrix_power(x, -3), [A3], second=True)


# --------------------------------------------------------------------------- cholesky
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_matches_torch(upper):
    def make(lib):
        return lambda x: lib.linalg.cholesky(x @ x.mT + lib.eye(3, dtype=x.dtype), upper=upper)

    _compare(make(mg), make(torch), [RNG.standard_normal((2, 3, 3))], second=True)


def test_cholesky_reads_only_the_lower_triangle():
    spd = A @ A.T + np.eye(4)
    garbage_above = np.tril(spd) + np.triu(RNG.standard_normal((4, 4)), 1)
    np.testing.assert_allclose(mg.linalg.cholesky(garbage_above).data, np.linalg.cholesky(spd), rtol=1e-12)
    np.testing.assert_allclose(mg.tensor(spd).cholesky(upper=True).data, np.linalg.cholesky(spd).T, rtol=1e-12)


def test_a_gaussian_log_likelihood_through_cholesky():
    """What a Gaussian process fits: −½ yᵀ K⁻¹ y − Σ log diag L, K = L Lᵀ, gradient in the kernel's parameters."""
    x, y = np.linspace(0.0, 1.0, 6), RNG.standard_normal(6)

    def nll(lib, log_scale, log_noise):
        d = (lib.tensor(x)[:, None] - lib.tensor(x)[None, :]) ** 2
        k = (-(d / (2 * log_scale.exp() ** 2))).exp() + lib.eye(6, dtype=d.dtype) * log_noise.exp()
        low = lib.linalg.cholesky(k)
        alpha = lib.linalg.solve_triangular(low, lib.tensor(y)[:, None], upper=False)
        return 0.5 * (alpha * alpha).sum() + lib.log(lib.diagonal(low)).sum()

    _compare(lambda s, n: nll(mg, s, n), lambda s, n: nll(torch, s, n), [np.array(-1.0), np.array(-2.0)], second=True)


# --------------------------------------------------------------------------- norms and products
@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, math.inf, -math.inf, -1])
def test_vector_norm(ord):  # noqa: A002
    x = RNG.standard_normal((3, 4)) + 0.1
    _compare(lambda t: mg.linalg.vector_norm(t, ord), lambda t: torch.linalg.vector_norm(t, ord), [x], second=True)
    _compare(lambda t: mg.linalg.vector_norm(t, ord, dim=1, keepdim=True), lambda t: torch.linalg.vector_norm(t, ord, dim=1, keepdim=True), [x])


def test_vector_norm_has_gradient_zero_at_zero():
    x = mg.zeros(3, requires_grad=True)
    mg.linalg.vector_norm(x).backward()
    np.testing.assert_array_equal(x.grad.data, np.zeros(3))
    assert mg.linalg.vector_norm(mg.tensor([0.0, 2.0, -1.0]), 0).item() == 2.0


@pytest.mark.parametrize("ord", ["fro", 1, -1, math.inf, -math.inf])
def test_matrix_norm(ord):  # noqa: A002
    _compare(lambda t: mg.linalg.matrix_norm(t, ord), lambda t: torch.linalg.matrix_norm(t, ord), [A3], second=True)
    _compare(lambda t: mg.linalg.matrix_norm(t, ord, dim=(0, 2), keepdim=True), lambda t: torch.linalg.matrix_norm(t, ord, dim=(0, 2), keepdim=True), [A3])


@pytest.mark.parametrize(
    "args",
    [dict(), dict(ord=1), dict(ord="fro"), dict(dim=1), dict(dim=(1, 2)), dict(ord=math.inf, dim=(0, 1)), dict(ord=3, dim=0)],
)
def test_norm_picks_the_vector_or_matrix_norm_as_torch(args):
    x = A3 if "dim" in args and args["dim"] in (1, (1, 2)) else A
    _compare(lambda t: mg.linalg.norm(t, **args), lambda t: torch.linalg.norm(t, **args), [x])


@pytest.mark.filterwarnings("ignore:Using torch.cross without specifying the dim arg")
def test_cross_vecdot_multi_dot():
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((1, 3))
    _compare(mg.linalg.cross, torch.linalg.cross, [a, b], second=True)
    _compare(lambda x, y: mg.linalg.cross(x.T, y.T, dim=0), lambda x, y: torch.linalg.cross(x.T, y.T, dim=0), [a, b])
    _compare(mg.cross, torch.cross, [a.T, np.ones((3, 4)) * b.T])  # torch.cross without dim: the first of length 3
    _compare(mg.linalg.vecdot, torch.linalg.vecdot, [a, b], second=True)
    m = [RNG.standard_normal(s) for s in [(3,), (3, 4), (4, 2), (2,)]]
    _compare(lambda *t: mg.linalg.multi_dot(t), lambda *t: torch.linalg.multi_dot(t), m, second=True)


def test_linalg_compiles():
    """A solve and a log-determinant traced once, rerun on new matrices."""

    def f(a, b):
        return mg.linalg.solve(a, b).sum() + mg.linalg.slogdet(a @ a.mT).logabsdet + mg.linalg.inv(a).trace()

    compiled = jit.compile(f, backward=True)
    for seed in range(2):
        a, b = _matrices(3, 3) + seed, RNG.standard_normal((3, 2))
        value, grads = compiled(a, b)
        want_value, want_grads = mg.value_and_grad(f, argnums=(0, 1))(mg.tensor(a), mg.tensor(b))
        np.testing.assert_allclose(value.data, want_value.data, rtol=1e-10)
        for g, want in zip(grads, want_grads):
            np.testing.assert_allclose(g.data, want.data, rtol=1e-10)


def test_float32_stays_float32():
    a = mg.tensor(A.astype(np.float32), requires_grad=True)
    out = mg.linalg.inv(a).sum() + mg.linalg.det(a) + mg.linalg.cholesky(a @ a.mT).sum()
    (g,) = mg.gradients(out, [a])
    assert out.dtype == np.float32 and g.dtype == np.float32


# --------------------------------------------------------------------------- bad input
def test_singular_and_indefinite_matrices_are_named():
    with pytest.raises(LinAlgError, match=r"inv: the matrix is singular.*\(2, 2\)"):
        mg.linalg.inv(np.ones((2, 2)))
    with pytest.raises(LinAlgError, match="solve: the matrix A is singular"):
        mg.linalg.solve(np.zeros((3, 3)), np.ones(3))
    with pytest.raises(LinAlgError, match="cholesky: the matrix is not positive definite"):
        mg.linalg.cholesky(-np.eye(2))
    singular = mg.tensor(np.ones((2, 2)), requires_grad=True)
    assert mg.linalg.det(singular).item() == 0.0  # the value is fine; its derivative here is refused
    with pytest.raises(LinAlgError, match="det: no derivative at a singular matrix"):
        mg.linalg.det(singular).backward()
    assert issubclass(LinAlgError, ValueError)


def test_shapes_and_arguments_are_checked():
    with pytest.raises(ShapeError, match=r"det: needs square matrices.*\(2, 3\)"):
        mg.linalg.det(np.ones((2, 3)))
    with pytest.raises(ShapeError, match="inv: needs floating-point matrices, got int64"):
        mg.linalg.inv(np.eye(2, dtype=np.int64))
    with pytest.raises(ShapeError, match=r"solve: A of shape \(4, 4\) and B of shape \(3,\) do not match"):
        mg.linalg.solve(A, np.ones(3))
    with pytest.raises(ShapeError, match="solve: the batch dimensions"):
        mg.linalg.solve(A3, np.ones((4, 3, 1)))
    with pytest.raises(ShapeError, match="matrix_norm: ord='nuc' is not supported.*SVD"):
        mg.linalg.matrix_norm(A, "nuc")
    with pytest.raises(ShapeError, match="matrix_norm: dim must name 2 dimensions"):
        mg.linalg.matrix_norm(A3, dim=0)
    with pytest.raises(ShapeError, match="cross: needs 3 entries along dim -1"):
        mg.linalg.cross(np.ones(4), np.ones(4))
    with pytest.raises(ShapeError, match="multi_dot: needs at least two tensors"):
        mg.linalg.multi_dot([A])


# --------------------------------------------------------------------------- symmetric eigenproblems
SYMMETRIC = RNG.standard_normal((2, 4, 4))


def _matrix_exponential(lib):
    """Q e^Λ Qᵀ of the symmetric part: independent of the eigenvectors' signs."""

    def f(x):
        values, vectors = lib.linalg.eigh(x + x.mT)
        return (vectors * values.unsqueeze(-2).exp()) @ vectors.mT

    return f


def test_a_matrix_function_through_eigh_matches_torch():
    _compare(_matrix_exponential(mg), _matrix_exponential(torch), [SYMMETRIC], second=True)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_reads_one_triangle_and_differentiates_as_torch(uplo):
    """On a matrix that is not symmetric, both read one triangle and give the symmetric gradient."""
    _compare(lambda x: mg.linalg.eigvalsh(x, uplo), lambda x: torch.linalg.eigvalsh(x, uplo), [SYMMETRIC], second=True)
    _compare(lambda x: mg.linalg.eigh(x, uplo).eigenvectors ** 2, lambda x: torch.linalg.eigh(x, uplo).eigenvectors ** 2, [SYMMETRIC], second=True)


def test_eigh_decomposes():
    s = SYMMETRIC[0] + SYMMETRIC[0].T
    values, vectors = mg.linalg.eigh(s)
    np.testing.assert_allclose((vectors.data * values.data) @ vectors.data.T, s, atol=1e-12)
    np.testing.assert_allclose(vectors.data.T @ vectors.data, np.eye(4), atol=1e-12)
    assert np.all(np.diff(values.data) > 0)
    with pytest.raises(ShapeError, match="eigh: UPLO must be 'L' or 'U'"):
        mg.linalg.eigh(s, "upper")


def test_cholesky_of_an_unsymmetric_input_differentiates_as_torch():
    spd = A @ A.T + np.eye(4)
    garbage_above = np.tril(spd) + np.triu(RNG.standard_normal((4, 4)), 1)
    _compare(mg.linalg.cholesky, torch.linalg.cholesky, [garbage_above], second=True)
