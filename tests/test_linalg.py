"""minigrad.linalg against torch.linalg in float64: values, gradients and second derivatives through
the public functions (square, tall and wide matrices where the function takes any shape) (the primitives' own rules are also in the tables of test_higher_order and
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


def _matrices(*shape, rng=RNG):
    """Well-conditioned square matrices: random, plus twice the identity."""
    return rng.standard_normal(shape) + 2 * np.eye(shape[-1])


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


def test_solve_on_the_right(rng):
    b = rng.standard_normal((2, 4))
    _compare(lambda x, y: mg.linalg.solve(x, y, left=False), lambda x, y: torch.linalg.solve(x, y, left=False), [A, b], second=True)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [True, False])
def test_solve_triangular_reads_one_triangle(upper, left, unitriangular, rng):
    b = rng.standard_normal((4, 2) if left else (2, 4))
    kw = dict(upper=upper, left=left, unitriangular=unitriangular)
    _compare(lambda x, y: mg.linalg.solve_triangular(x, y, **kw), lambda x, y: torch.linalg.solve_triangular(x, y, **kw), [A, b], second=True)


def test_matrix_power_of_negative_exponents():
    _compare(lambda x: mg.linalg.matrix_power(x, -3), lambda x: torch.linalg.matrix_power(x, -3), [A3], second=True)


# --------------------------------------------------------------------------- cholesky
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_matches_torch(upper, rng):
    def make(lib):
        return lambda x: lib.linalg.cholesky(x @ x.mT + lib.eye(3, dtype=x.dtype), upper=upper)

    _compare(make(mg), make(torch), [rng.standard_normal((2, 3, 3))], second=True)


def test_cholesky_reads_only_the_lower_triangle(rng):
    spd = A @ A.T + np.eye(4)
    garbage_above = np.tril(spd) + np.triu(rng.standard_normal((4, 4)), 1)
    np.testing.assert_allclose(mg.linalg.cholesky(garbage_above).data, np.linalg.cholesky(spd), rtol=1e-12)
    np.testing.assert_allclose(mg.tensor(spd).cholesky(upper=True).data, np.linalg.cholesky(spd).T, rtol=1e-12)


def test_a_gaussian_log_likelihood_through_cholesky(rng):
    """What a Gaussian process fits: −½ yᵀ K⁻¹ y − Σ log diag L, K = L Lᵀ, gradient in the kernel's parameters."""
    x, y = np.linspace(0.0, 1.0, 6), rng.standard_normal(6)

    def nll(lib, log_scale, log_noise):
        d = (lib.tensor(x)[:, None] - lib.tensor(x)[None, :]) ** 2
        k = (-(d / (2 * log_scale.exp() ** 2))).exp() + lib.eye(6, dtype=d.dtype) * log_noise.exp()
        low = lib.linalg.cholesky(k)
        alpha = lib.linalg.solve_triangular(low, lib.tensor(y)[:, None], upper=False)
        return 0.5 * (alpha * alpha).sum() + lib.log(lib.diagonal(low)).sum()

    _compare(lambda s, n: nll(mg, s, n), lambda s, n: nll(torch, s, n), [np.array(-1.0), np.array(-2.0)], second=True)


# --------------------------------------------------------------------------- norms and products
@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, math.inf, -math.inf, -1])
def test_vector_norm(ord, rng):  # noqa: A002
    x = rng.standard_normal((3, 4)) + 0.1
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
def test_cross_vecdot_multi_dot(rng):
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((1, 3))
    _compare(mg.linalg.cross, torch.linalg.cross, [a, b], second=True)
    _compare(lambda x, y: mg.linalg.cross(x.T, y.T, dim=0), lambda x, y: torch.linalg.cross(x.T, y.T, dim=0), [a, b])
    _compare(mg.cross, torch.cross, [a.T, np.ones((3, 4)) * b.T])  # torch.cross without dim: the first of length 3
    _compare(mg.linalg.vecdot, torch.linalg.vecdot, [a, b], second=True)
    m = [rng.standard_normal(s) for s in [(3,), (3, 4), (4, 2), (2,)]]
    _compare(lambda *t: mg.linalg.multi_dot(t), lambda *t: torch.linalg.multi_dot(t), m, second=True)


def test_linalg_compiles(rng):
    """A solve and a log-determinant traced once, rerun on new matrices."""

    def f(a, b):
        return mg.linalg.solve(a, b).sum() + mg.linalg.slogdet(a @ a.mT).logabsdet + mg.linalg.inv(a).trace()

    compiled = jit.compile(f, backward=True)
    for seed in range(2):
        a, b = _matrices(3, 3, rng=rng) + seed, rng.standard_normal((3, 2))
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
    with pytest.raises(ShapeError, match="matrix_norm: ord=3 is not a matrix norm; use one of"):
        mg.linalg.matrix_norm(A, 3)
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


def test_cholesky_of_an_unsymmetric_input_differentiates_as_torch(rng):
    spd = A @ A.T + np.eye(4)
    garbage_above = np.tril(spd) + np.triu(rng.standard_normal((4, 4)), 1)
    _compare(mg.linalg.cholesky, torch.linalg.cholesky, [garbage_above], second=True)


# --------------------------------------------------------------------------- QR, SVD, pseudo-inverse, least squares
TALL, WIDE = RNG.standard_normal((2, 5, 3)), RNG.standard_normal((3, 5))
SHAPES = pytest.mark.parametrize("a", [TALL, WIDE, A], ids=["tall-batch", "wide", "square"])


@SHAPES
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_matches_torch(a, mode):
    m, n = a.shape[-2:]
    if mode == "reduced" or (mode == "complete" and m <= n):
        _compare(lambda x: mg.linalg.qr(x, mode).R, lambda x: torch.linalg.qr(x, mode).R, [a], second=True)
        _compare(lambda x: mg.linalg.qr(x, mode).Q, lambda x: torch.linalg.qr(x, mode).Q, [a], second=True)
        return
    # torch differentiates neither mode="r" nor a tall complete QR: minigrad's R is the reduced one's
    np.testing.assert_allclose(mg.linalg.qr(a, mode).R.data, torch.linalg.qr(torch.tensor(a), mode).R.numpy(), atol=1e-12)
    _compare(lambda x: mg.linalg.qr(x, mode).R[..., :n, :], lambda x: torch.linalg.qr(x).R, [a], second=True)


@SHAPES
def test_qr_decomposes(a):
    for mode in ("reduced", "complete"):
        q, r = mg.linalg.qr(a, mode)
        np.testing.assert_allclose(q.data @ r.data, a, atol=1e-12)
        np.testing.assert_allclose(q.data.swapaxes(-1, -2) @ q.data, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), atol=1e-12)
        assert not np.tril(r.data, -1).any(), "R's zeros are exact"
        assert (q.shape, r.shape) == tuple(t.shape for t in torch.linalg.qr(torch.tensor(a), mode))
    assert mg.linalg.qr(a, "r").Q.shape == (0,)


def test_a_complete_q_differentiates_only_in_its_unique_columns():
    """Q's last m − n columns of a tall A are one basis of many: a loss that reaches them is refused
    (PyTorch refuses every gradient through a tall complete Q); one that does not is the reduced Q's."""
    x = mg.tensor(TALL[0], requires_grad=True)
    q = mg.linalg.qr(x, "complete").Q
    (q[:, :3] ** 3).sum().backward()
    (reduced,) = mg.gradients((mg.linalg.qr(x).Q ** 3).sum(), [x])
    np.testing.assert_allclose(x.grad.data, reduced.data, rtol=1e-12)
    with pytest.raises(LinAlgError, match=r"qr: the gradient reaches the 2 extra columns of the full factor \(shape \(5, 5\)\).*mode='reduced'"):
        mg.linalg.qr(x, "complete").Q[:, 3:].sum().backward()


def _polar(lib):
    """U Vh, the orthogonal factor nearest A (orthogonal Procrustes): independent of the pairs' signs."""

    def f(x):
        u, _, vh = lib.linalg.svd(x, full_matrices=False)
        return u @ vh

    return f


def _low_rank(lib):
    """The best rank-2 approximation U₂ diag(S₂) Vh₂, also sign-independent."""

    def f(x):
        u, s, vh = lib.linalg.svd(x, full_matrices=False)
        return (u[..., :, :2] * s[..., None, :2]) @ vh[..., :2, :]

    return f


@SHAPES
def test_svd_matches_torch(a):
    _compare(mg.linalg.svdvals, torch.linalg.svdvals, [a], second=True)
    _compare(lambda x: mg.linalg.svd(x).S, lambda x: torch.linalg.svd(x).S, [a])
    _compare(_polar(mg), _polar(torch), [a], second=True)
    _compare(_low_rank(mg), _low_rank(torch), [a], second=True)
    for factor in ("U", "Vh"):
        _compare(lambda x: getattr(mg.linalg.svd(x, full_matrices=False), factor) ** 2,
                 lambda x: getattr(torch.linalg.svd(x, full_matrices=False), factor) ** 2, [a], second=True)


@SHAPES
def test_svd_decomposes(a):
    for full in (True, False):
        u, s, vh = mg.linalg.svd(a, full_matrices=full)
        k = s.shape[-1]
        np.testing.assert_allclose((u.data[..., :k] * s.data[..., None, :]) @ vh.data[..., :k, :], a, atol=1e-12)
        np.testing.assert_allclose(u.data.swapaxes(-1, -2) @ u.data, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2), atol=1e-12)
        np.testing.assert_allclose(vh.data @ vh.data.swapaxes(-1, -2), np.broadcast_to(np.eye(vh.shape[-2]), vh.shape[:-2] + (vh.shape[-2],) * 2), atol=1e-12)
        assert np.all(np.diff(s.data, axis=-1) <= 0)
        assert (u.shape, s.shape, vh.shape) == tuple(t.shape for t in torch.linalg.svd(torch.tensor(a), full_matrices=full))


def test_a_full_svd_differentiates_only_in_its_unique_part():
    """PyTorch's default full_matrices=True: what reaches U's first k columns and Vh's first k rows
    matches torch; what reaches the others, which PyTorch drops silently, is refused."""
    _compare(lambda x: (mg.linalg.svd(x).U[..., :3] ** 2).sum(-1), lambda x: (torch.linalg.svd(x).U[..., :3] ** 2).sum(-1), [TALL])
    _compare(lambda x: mg.linalg.svd(x).Vh[:3] ** 2, lambda x: torch.linalg.svd(x).Vh[:3] ** 2, [WIDE])
    with pytest.raises(LinAlgError, match=r"svd: the gradient reaches the 2 extra columns.*full_matrices=False"):
        mg.linalg.svd(mg.tensor(TALL, requires_grad=True)).U.sum().backward()
    with pytest.raises(LinAlgError, match=r"svd: the gradient reaches the 2 extra rows.*full_matrices=False"):
        mg.linalg.svd(mg.tensor(WIDE, requires_grad=True)).Vh.sum().backward()
    # forward mode cannot know whether they will be used: their tangent is NaN, the others' as reduced
    for lib_fn, reduced_fn, k in [(lambda x: mg.linalg.svd(x).U, lambda x: mg.linalg.svd(x, full_matrices=False).U, 3),
                                  (lambda x: mg.linalg.qr(x, "complete").Q, lambda x: mg.linalg.qr(x).Q, 3)]:
        _, tangent = mg.jvp(lib_fn, (TALL,), (TALL[::-1],))
        _, want = mg.jvp(reduced_fn, (TALL,), (TALL[::-1],))
        assert tangent.shape == (2, 5, 5) and np.isnan(tangent.data[..., k:]).all()
        np.testing.assert_allclose(tangent.data[..., :k], want.data, rtol=1e-12)


def test_the_gradient_through_singular_vectors_is_infinite_at_a_repeated_singular_value():
    """As in PyTorch: u_i moves by ∂A/(s_j² − s_i²), and the identity's singular values coincide."""
    x = mg.tensor(np.eye(3), requires_grad=True)
    with np.errstate(divide="ignore", invalid="ignore"):  # numpy's warnings say it too
        (mg.linalg.svd(x).U[:, 0] * mg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert not np.isfinite(x.grad.data).all()
    (g,) = mg.gradients(mg.linalg.svdvals(x).sum(), [x])  # the values themselves are fine
    np.testing.assert_allclose(g.data, np.eye(3), atol=1e-12)


@SHAPES
def test_pinv_matches_torch(a, rng):
    _compare(mg.linalg.pinv, torch.linalg.pinv, [a], second=True)
    # hermitian=True reads the lower triangle (the gradients differ above it: torch's is the whole
    # matrix's), so both differentiate through the same symmetric matrix
    _compare(lambda x: mg.linalg.pinv(x + x.mT, hermitian=True), lambda x: torch.linalg.pinv(x + x.mT, hermitian=True), [A3], second=True)
    garbage_above = np.tril(A3 + A3.swapaxes(-1, -2)) + np.triu(rng.standard_normal(A3.shape), 1)
    np.testing.assert_allclose(mg.linalg.pinv(garbage_above, hermitian=True).data, torch.linalg.pinv(torch.tensor(garbage_above), hermitian=True).numpy(), atol=1e-12)


def test_pinv_of_a_rank_deficient_matrix_drops_the_small_singular_values(rng):
    b, c, b1, c1 = (rng.standard_normal(shape) for shape in [(5, 2), (2, 4), (5, 2), (2, 4)])
    low_rank = b @ c  # rank 2
    for kw in (dict(), dict(rtol=1e-8), dict(atol=1e-6), dict(atol=1e-6, rtol=0.5)):
        got = mg.linalg.pinv(low_rank, **kw).data
        np.testing.assert_allclose(got, torch.linalg.pinv(torch.tensor(low_rank), **kw).numpy(), atol=1e-10)
        assert mg.linalg.matrix_rank(low_rank, **kw).item() == torch.linalg.matrix_rank(torch.tensor(low_rank), **kw).item()
    np.testing.assert_allclose(low_rank @ mg.linalg.pinv(low_rank).data @ low_rank, low_rank, atol=1e-12)
    # the gradient where the rank is constant: along the rank-2 curve (b + h b1)(c + h c1), by central differences
    direction = b1 @ c + b @ c1
    weights = rng.standard_normal((4, 5))
    x = mg.tensor(low_rank, requires_grad=True)
    (g,) = mg.gradients((mg.linalg.pinv(x, rtol=1e-8) * mg.tensor(weights)).sum(), [x])
    h = 1e-6
    moved = [(np.linalg.pinv((b + sign * h * b1) @ (c + sign * h * c1), rtol=1e-8) * weights).sum() for sign in (1, -1)]
    assert (g.data * direction).sum() == pytest.approx((moved[0] - moved[1]) / (2 * h), rel=1e-5)


def test_matrix_rank_matches_torch():
    stack = np.stack([np.eye(4), np.diag([1.0, 1e-9, 0.0, 2.0]), np.ones((4, 4))])
    for kw in (dict(), dict(atol=1e-6), dict(rtol=1e-12), dict(hermitian=True)):
        got = mg.linalg.matrix_rank(stack, **kw)
        assert got.dtype == np.int64 and got.data.tolist() == torch.linalg.matrix_rank(torch.tensor(stack), **kw).tolist()
    assert mg.linalg.matrix_rank(WIDE).item() == 3


LSTSQ_SHAPES = {"tall-batch": ((2, 5, 3), (2, 5, 2)), "tall-vector": ((5, 3), (5,)), "wide": ((3, 5), (3, 2)), "broadcast": ((1, 4, 4), (3, 4, 2))}


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", LSTSQ_SHAPES.values(), ids=LSTSQ_SHAPES.keys())
def test_lstsq_returns_what_torch_returns(driver, shapes):
    # each case its own draws (the module's generator hands out others in each worker's order), and a
    # square matrix made well conditioned: a random one near singular gave gradients of 1e8, equal to
    # torch's to 5e-10 only, and failed now and then
    rng = np.random.default_rng(404)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    if shapes[0][-1] == shapes[0][-2]:
        a = a + 2.0 * np.eye(shapes[0][-1])
    got, want = mg.linalg.lstsq(a, b, driver=driver), torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    for name in ("solution", "residuals", "rank", "singular_values"):
        g, w = getattr(got, name), getattr(want, name)
        assert g.shape == tuple(w.shape), f"{name}: {g.shape} against torch's {tuple(w.shape)}"
        np.testing.assert_allclose(g.data, w.numpy(), atol=1e-10, err_msg=name)
    _compare(lambda x, y: mg.linalg.lstsq(x, y, driver=driver).solution, lambda x, y: torch.linalg.lstsq(x, y, driver=driver).solution, [a, b], second=True)


def test_lstsq_fits_a_polynomial_as_numpy_and_finds_the_least_norm_solution(rng):
    x = np.linspace(-1.0, 1.0, 20)
    y = 1.0 - 2.0 * x + 0.5 * x**3 + 0.01 * rng.standard_normal(20)
    vandermonde = np.vander(x, 4)
    np.testing.assert_allclose(mg.linalg.lstsq(vandermonde, y).solution.data, np.polyfit(x, y, 3), rtol=1e-10)
    twice = np.hstack([vandermonde, vandermonde])  # rank 4 of 8 columns: the least-norm solution halves the weights
    np.testing.assert_allclose(mg.linalg.lstsq(twice, y).solution.data, np.tile(np.polyfit(x, y, 3) / 2, 2), rtol=1e-8)


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
def test_matrix_norms_from_the_singular_values(ord):  # noqa: A002
    _compare(lambda t: mg.linalg.matrix_norm(t, ord), lambda t: torch.linalg.matrix_norm(t, ord), [TALL], second=True)
    _compare(lambda t: mg.linalg.matrix_norm(t, ord, dim=(0, 2), keepdim=True), lambda t: torch.linalg.matrix_norm(t, ord, dim=(0, 2), keepdim=True), [TALL])
    _compare(lambda t: mg.linalg.norm(t, ord), lambda t: torch.linalg.norm(t, ord), [WIDE])


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf])
def test_cond_matches_torch(p):
    if p in (None, 2, -2):
        _compare(lambda t: mg.linalg.cond(t, p), lambda t: torch.linalg.cond(t, p), [TALL], second=True)
    else:  # torch.linalg.cond has no gradient for these (an in-place inverse): its formula does
        np.testing.assert_allclose(mg.linalg.cond(A3, p).data, torch.linalg.cond(torch.tensor(A3), p).numpy(), rtol=1e-12)
        _compare(lambda t: mg.linalg.cond(t, p), lambda t: torch.linalg.matrix_norm(t, p) * torch.linalg.matrix_norm(torch.linalg.inv(t), p), [A3], second=True)
        one_singular = np.stack([A, np.ones((4, 4))])
        np.testing.assert_allclose(mg.linalg.cond(one_singular, p).data, torch.linalg.cond(torch.tensor(one_singular), p).numpy(), rtol=1e-12)
        assert mg.linalg.cond(np.ones((2, 2)), p).item() == math.inf == torch.linalg.cond(torch.ones(2, 2, dtype=torch.float64), p).item()


def test_decompositions_compile_and_stay_float32():
    def f(a):
        u, s, vh = mg.linalg.svd(a, full_matrices=False)
        return (u @ vh).sum() + mg.linalg.qr(a).R.sum() + mg.linalg.pinv(a).sum() + mg.linalg.matrix_norm(a, "nuc").sum()

    compiled = jit.compile(f, backward=True)
    for seed in range(2):
        a = np.random.default_rng(seed).standard_normal((4, 3))
        value, (grad,) = compiled(a)
        want_value, (want_grad,) = mg.value_and_grad(f, argnums=(0,))(mg.tensor(a))
        np.testing.assert_allclose(value.data, want_value.data, rtol=1e-10)
        np.testing.assert_allclose(grad.data, want_grad.data, rtol=1e-8)
    a = mg.tensor(TALL.astype(np.float32), requires_grad=True)
    out = f(a)
    (g,) = mg.gradients(out, [a])
    assert out.dtype == np.float32 and g.dtype == np.float32


def test_decompositions_name_bad_input():
    with pytest.raises(ShapeError, match=r"svd: needs a matrix or a stack of them \(\.\.\., m, n\), got shape \(3,\)"):
        mg.linalg.svd(np.ones(3))
    with pytest.raises(ShapeError, match="qr: mode must be 'reduced', 'complete' or 'r', got 'full'"):
        mg.linalg.qr(A, "full")
    with pytest.raises(ShapeError, match="pinv: needs floating-point matrices, got int64"):
        mg.linalg.pinv(np.eye(2, dtype=np.int64))
    with pytest.raises(ShapeError, match="pinv: atol must be a number ≥ 0"):
        mg.linalg.pinv(A, atol=-1.0)
    with pytest.raises(ShapeError, match=r"lstsq: B must be \(\.\.\., m, k\) or \(\.\.\., m\) for A of shape \(\.\.\., m, n\) = \(5, 3\), got shape \(4, 2\)"):
        mg.linalg.lstsq(TALL[0], np.ones((4, 2)))
    with pytest.raises(ShapeError, match="lstsq: driver must be one of"):
        mg.linalg.lstsq(TALL[0], np.ones(5), driver="gesvd")
    with pytest.raises(ShapeError, match=r"cond: needs square matrices.*\(5, 3\)"):
        mg.linalg.cond(TALL[0], "fro")


def test_matrix_exp_against_40_digit_arithmetic_torch_and_its_exact_cases(rng):
    """e^A within 1e-14 of 40-digit arithmetic (relative to its largest entry) from ‖A‖ ~ 0.01, where
    torch's is 1e-12 off, to ~30, where the result is squared three times; exact where the series
    ends (a nilpotent matrix), exp of a diagonal, the identity at 0; a batch, float32 kept, the
    method and mg.matrix_exp; gradients to second order as torch's (oracles' linalg cases)."""
    import mpmath

    mpmath.mp.dps = 40
    for scale in (0.01, 0.5, 2.0, 8.0):
        a = rng.standard_normal((4, 4)) * scale
        want = np.array(mpmath.expm(mpmath.matrix(a.tolist())).tolist(), dtype=float)
        got = mg.linalg.matrix_exp(a).data
        assert np.abs(got - want).max() <= 1e-14 * np.abs(want).max(), scale
        np.testing.assert_allclose(got, torch.linalg.matrix_exp(torch.tensor(a)).numpy(), rtol=1e-10, atol=1e-11 * np.abs(want).max())
    np.testing.assert_array_equal(mg.linalg.matrix_exp(np.array([[0.0, 2.0], [0.0, 0.0]])).data, [[1.0, 2.0], [0.0, 1.0]])
    np.testing.assert_allclose(mg.linalg.matrix_exp(np.diag([1.0, -2.0, 30.0])).data, np.diag(np.exp([1.0, -2.0, 30.0])), rtol=1e-14)
    np.testing.assert_array_equal(mg.matrix_exp(np.zeros((2, 3, 3))).data, np.broadcast_to(np.eye(3), (2, 3, 3)))
    batch = rng.standard_normal((2, 3, 3))
    np.testing.assert_allclose(mg.tensor(batch).matrix_exp().data, [mg.linalg.matrix_exp(m).data for m in batch], rtol=1e-15)
    assert mg.linalg.matrix_exp(batch.astype(np.float32)).dtype == np.float32
    with pytest.raises(ShapeError, match="matrix_exp"):
        mg.linalg.matrix_exp(np.ones((2, 3)))
