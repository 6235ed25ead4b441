"""`torch.linalg` for minigrad: inverses, solves, determinants, Cholesky, QR and singular value
decompositions, symmetric eigendecompositions, pseudo-inverses, least squares and norms, on a
matrix or a stack of them (..., m, n), differentiable to every order.

The primitives of `minigrad.ops`' linear-algebra sections do the numerical work (numpy's LAPACK
routines forward; Giles', Townsend's and Golub-Pereyra's matrix derivatives backward, each rule
written with primitives); everything else here is built from them. A singular matrix, or one that
is not positive definite for `cholesky`, raises `minigrad.LinAlgError` naming the operation. Not
here: eig and eigvals of general (non-symmetric) matrices, whose results are complex, which
minigrad's tensors are not.
"""

import collections
import functools
import math
import operator

import numpy as np

from . import ops
from .errors import LinAlgError, ShapeError
from .functional import _dims, _tensor, matrix_power, stack, tril, triu
from .tensor import Tensor

__all__ = [
    "EigH", "LstsqResult", "QR", "SVD", "SignLogAbsDet",
    "cholesky", "cond", "cross", "det", "eigh", "eigvalsh", "inv", "lstsq", "matrix_exp", "matrix_norm", "matrix_power",
    "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm",
]


def _square(name, a):
    a = _tensor(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{name}: needs square matrices (..., n, n), got shape {a.shape}")
    if a.dtype.kind != "f":
        raise ShapeError(f"{name}: needs floating-point matrices, got {a.dtype} (use .double() or .float())")
    return a


def inv(A):  # noqa: N803  (PyTorch's argument names)
    """A⁻¹ for each matrix of A (`torch.linalg.inv`)."""
    return ops.inv(_square("inv", A))


def det(A):  # noqa: N803
    """The determinant of each matrix of A, shape A.shape[:-2] (`torch.linalg.det`)."""
    return ops.det(_square("det", A))


class SignLogAbsDet(collections.namedtuple("SignLogAbsDet", ["sign", "logabsdet"])):
    """What `slogdet` returns, as PyTorch's: (sign, logabsdet), also by name."""

    __slots__ = ()


def slogdet(A):  # noqa: N803
    """(sign, log |det A|) (`torch.linalg.slogdet`): the log-determinant without the overflow of det
    itself (det of a 500 × 500 covariance is often beyond float64). The sign is a constant."""
    A = _square("slogdet", A)  # noqa: N806
    sign = Tensor(np.linalg.slogdet(A.data)[0])
    return SignLogAbsDet(sign, ops.logabsdet(A))


def logdet(A):  # noqa: N803
    """log det A (`torch.logdet`): NaN where the determinant is negative, −inf where it is 0."""
    sign, logabsdet = slogdet(A)
    with np.errstate(invalid="ignore", divide="ignore"):
        return logabsdet + Tensor(np.log(sign.data))


def _right_hand_side(name, A, B):  # noqa: N803
    """B as a stack of matrices (..., n, k), and whether it was a vector (PyTorch's rule: B is a
    vector, or a stack of them, when B.ndim == 1 or B.shape == A.shape[:-1])."""
    B = _tensor(B)  # noqa: N806
    vector = B.ndim == 1 or (B.ndim >= 2 and B.shape == A.shape[:-1])
    B = B.unsqueeze(-1) if vector else B  # noqa: N806
    if B.ndim < 2 or B.shape[-2] != A.shape[-1]:
        raise ShapeError(f"{name}: A of shape {A.shape} and B of shape {B.shape if not vector else B.shape[:-1]} do not match")
    try:
        np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    except ValueError:
        raise ShapeError(f"{name}: the batch dimensions of A {A.shape} and B {B.shape} do not broadcast") from None
    return B, vector


def solve(A, B, *, left=True):  # noqa: N803
    """X with A X = B (`torch.linalg.solve`); `left=False` solves X A = B. B is a vector, a matrix
    or a stack of either; faster and more accurate than inv(A) @ B."""
    A = _square("solve", A)  # noqa: N806
    if not left:
        return solve(A.mT, _tensor(B).mT).mT
    B, vector = _right_hand_side("solve", A, B)  # noqa: N806
    X = ops.solve(A, B)  # noqa: N806
    return X.squeeze(-1) if vector else X


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):  # noqa: N803
    """X with A X = B for a triangular A (`torch.linalg.solve_triangular`): only A's upper (or
    lower) triangle is read, and with `unitriangular=True` its diagonal is taken to be ones."""
    A = _square("solve_triangular", A)  # noqa: N806
    B = _tensor(B)  # noqa: N806
    if B.ndim < 2:
        raise ShapeError(f"solve_triangular: B must be a matrix or a stack of them, got shape {B.shape}")
    T = triu(A, 1 if unitriangular else 0) if upper else tril(A, -1 if unitriangular else 0)  # noqa: N806
    if unitriangular:
        T = T + Tensor(np.eye(A.shape[-1], dtype=A.dtype))  # noqa: N806
    return solve(T, B, left=left)


def cholesky_solve(B, L, upper=False):  # noqa: N803  (PyTorch's argument names)
    """X with A X = B for A = L Lᵀ given its Cholesky factor L (`torch.cholesky_solve`; with
    `upper=True` L is the upper factor U, A = Uᵀ U): two triangular solves, differentiable in B and L.
    A top-level torch name, kept out of `__all__`, which lists torch.linalg's."""
    L = _square("cholesky_solve", L)  # noqa: N806
    first, second = (L.mT, L) if upper else (L, L.mT)
    return solve_triangular(second, solve_triangular(first, B, upper=False), upper=True)


def cholesky_inverse(L, upper=False):  # noqa: N803  (PyTorch's argument names)
    """A⁻¹ for A = L Lᵀ (or Uᵀ U with `upper=True`) given its Cholesky factor (`torch.cholesky_inverse`).
    Only L's triangle is read, so the gradient is zero off it, where PyTorch's has the entries of
    the full-matrix formula (its cholesky_solve reads the triangle, as here)."""
    L = _square("cholesky_inverse", L)  # noqa: N806
    return cholesky_solve(Tensor(np.broadcast_to(np.eye(L.shape[-1], dtype=L.dtype), L.shape).copy()), L, upper)


def cholesky(A, *, upper=False):  # noqa: N803
    """The lower-triangular L with L Lᵀ = A for a symmetric positive-definite A, read from A's lower
    triangle (`torch.linalg.cholesky`); `upper=True` gives Lᵀ."""
    L = ops.cholesky(_square("cholesky", A))  # noqa: N806
    return L.mT if upper else L


class EigH(collections.namedtuple("EigH", ["eigenvalues", "eigenvectors"])):
    """What `eigh` returns, as PyTorch's: (eigenvalues, eigenvectors), also by name."""

    __slots__ = ()


def eigvalsh(A, UPLO="L"):  # noqa: N803  (PyTorch's argument names)
    """The eigenvalues of each symmetric matrix, ascending (`torch.linalg.eigvalsh`), read from its
    lower triangle (`UPLO="U"`: the upper). Their gradient is well defined where they are distinct."""
    return ops.eigvalsh(_triangle("eigvalsh", A, UPLO))


def eigh(A, UPLO="L"):  # noqa: N803
    """(eigenvalues, eigenvectors) of each symmetric matrix (`torch.linalg.eigh`): A = Q diag(λ) Qᵀ,
    λ ascending, the columns of Q orthonormal. Each eigenvector is defined up to its sign (numpy's
    and PyTorch's LAPACK may pick different ones), so a loss should not depend on the sign (q qᵀ,
    Q f(Λ) Qᵀ, q²); the gradient through Q divides by the gaps between eigenvalues, and is
    infinite where two coincide, as in PyTorch."""
    A = _triangle("eigh", A, UPLO)  # noqa: N806
    return EigH(ops.eigvalsh(A), ops.eigh_vectors(A))


def _triangle(name, A, UPLO):  # noqa: N803
    """A, or (UPLO="U") Aᵀ, whose lower triangle, the one LAPACK reads, is A's upper one. (As in
    PyTorch, the gradient is the symmetric matrix, whichever triangle was read.)"""
    A = _square(name, A)  # noqa: N806
    if UPLO not in ("L", "U"):
        raise ShapeError(f"{name}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return A if UPLO == "L" else A.mT


# --------------------------------------------------------------------------- QR, SVD and what needs them
def _matrices(name, a):
    """a as a float matrix or stack of them (..., m, n), of any shape."""
    a = _tensor(a)
    if a.ndim < 2:
        raise ShapeError(f"{name}: needs a matrix or a stack of them (..., m, n), got shape {a.shape}")
    if a.dtype.kind != "f":
        raise ShapeError(f"{name}: needs floating-point matrices, got {a.dtype} (use .double() or .float())")
    return a


class QR(collections.namedtuple("QR", ["Q", "R"])):
    """What `qr` returns, as PyTorch's: (Q, R), also by name."""

    __slots__ = ()


def qr(A, mode="reduced"):  # noqa: N803
    """A = Q R (`torch.linalg.qr`), k = min(m, n): "reduced" gives Q (m, k) with orthonormal columns
    and an upper-triangular R (k, n); "complete" Q (m, m) and R (m, n); "r" R alone (Q is empty).
    R's diagonal may be negative (LAPACK's Householder signs, as in numpy and PyTorch). Gradients
    need A of full rank k; through a complete Q of a tall A they must not reach Q's last m − n
    columns, which are one basis of many for the same complement (PyTorch refuses complete Q too),
    and in forward mode those columns' tangent is NaN."""
    A = _matrices("qr", A)  # noqa: N806
    if mode not in ("reduced", "complete", "r"):
        raise ShapeError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    Q = ops.qr_q(A, complete=mode == "complete")  # noqa: N806
    R = triu(Q.mT @ A)  # noqa: N806  (Qᵀ A is R; triu makes its zeros exact)
    return QR(_empty(A.dtype) if mode == "r" else Q, R)


class SVD(collections.namedtuple("SVD", ["U", "S", "Vh"])):
    """What `svd` returns, as PyTorch's: (U, S, Vh), also by name."""

    __slots__ = ()


def svd(A, full_matrices=True):  # noqa: N803
    """A = U diag(S) Vh (`torch.linalg.svd`): S descending, the columns of U and the rows of Vh
    orthonormal; k = min(m, n) of each, or all m and n with `full_matrices=True` (PyTorch's
    default). Each pair (u_i, v_i) is defined up to one sign, so a loss should not depend on it
    (U diag(S) Vh, u_i v_iᵀ, products of U with Uᵀ). Gradients through U and Vh divide by the gaps
    s_j² − s_i² and by S: infinite where two singular values coincide or one is zero, as in
    PyTorch; through a full U or Vh they must not reach the extra columns or rows (PyTorch drops
    what reaches them; minigrad refuses), whose tangent in forward mode is NaN. Three LAPACK calls,
    one per factor."""
    A = _matrices("svd", A)  # noqa: N806
    return SVD(ops.svd_u(A, full_matrices=full_matrices), ops.svdvals(A), ops.svd_vh(A, full_matrices=full_matrices))


def svdvals(A):  # noqa: N803
    """The singular values of each matrix, descending (`torch.linalg.svdvals`). Their gradient
    u_i v_iᵀ is well defined where they are distinct and nonzero."""
    return ops.svdvals(_matrices("svdvals", A))


def _empty(dtype):
    """What PyTorch returns for a result it does not compute (`qr`'s Q in mode "r", `lstsq`'s per driver)."""
    return Tensor(np.zeros(0, dtype=dtype))


def _tolerances(name, A, atol, rtol):  # noqa: N803
    """(atol, rtol) as PyTorch defaults them: rtol = eps · max(m, n) unless atol > 0 is given alone."""
    for label, value in (("atol", atol), ("rtol", rtol)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            raise ShapeError(f"{name}: {label} must be a number ≥ 0 (one tolerance for every matrix), got {value!r}")
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else float(np.finfo(A.dtype).eps) * max(A.shape[-2:])
    return float(atol or 0.0), float(rtol)


def _lower_symmetric(A):  # noqa: N803
    """The symmetric matrix A's lower triangle defines (what `hermitian=True` reads)."""
    return tril(A) + tril(A, -1).mT


def matrix_exp(A):  # noqa: N803  (PyTorch's argument names)
    """e^A = Σₖ Aᵏ/k! for each matrix of A (`torch.linalg.matrix_exp`): scaling and squaring with
    the [13/13] Padé approximant (Higham 2005), within a few ulp of the series; its derivatives, of
    every order, through the Fréchet derivative (an exponential of twice the size)."""
    return ops.matrix_exp(_square("matrix_exp", A))


def pinv(A, *, atol=None, rtol=None, hermitian=False):  # noqa: N803
    """The Moore-Penrose pseudo-inverse A⁺ (`torch.linalg.pinv`): V S⁺ Uᵀ, singular values at or
    below max(atol, rtol · s_max) treated as zero. With `hermitian=True` only A's lower triangle is
    read, as in PyTorch (the gradient is then that triangle's: PyTorch's is the whole matrix's). The
    gradient holds where the rank stays the same nearby."""
    A = _matrices("pinv", A)  # noqa: N806
    atol, rtol = _tolerances("pinv", A, atol, rtol)
    return ops.pinv(_lower_symmetric(_square("pinv", A)) if hermitian else A, atol=atol, rtol=rtol)


def pinverse(input, rcond=1e-15):  # noqa: A002  (PyTorch's names)
    """`torch.pinverse`, the older spelling of `pinv` (`mg.pinverse`, `A.pinverse()`; not in
    torch.linalg): singular values at or below rcond · s_max are dropped."""
    return pinv(input, atol=0.0, rtol=rcond)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):  # noqa: N803
    """The number of singular values above max(atol, rtol · s_max) (`torch.linalg.matrix_rank`),
    an int64 tensor; `hermitian=True` reads A's lower triangle. Not differentiable."""
    A = _matrices("matrix_rank", A)  # noqa: N806
    atol, rtol = _tolerances("matrix_rank", A, atol, rtol)
    data = _lower_symmetric(_square("matrix_rank", A)).data if hermitian else A.data
    kept = ops.kept_singular_values(np.linalg.svd(data, compute_uv=False), atol, rtol)
    return Tensor(kept.sum(axis=-1).astype(np.int64))


class LstsqResult(collections.namedtuple("LstsqResult", ["solution", "residuals", "rank", "singular_values"])):
    """What `lstsq` returns, as PyTorch's: (solution, residuals, rank, singular_values), also by name."""

    __slots__ = ()


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None):  # noqa: N803
    """The X minimizing ‖A X − B‖ (`torch.linalg.lstsq`), the one of least norm where A is rank
    deficient: A⁺ B, with rcond the relative cutoff of A's singular values (eps · max(m, n) by
    default). B is (..., m, k), or (..., m) for one right-hand side. `driver` names PyTorch's LAPACK
    routine only to return what PyTorch returns with it: residuals ‖A X − B‖² per column where m >
    n, A has full rank and the driver is not "gelsy" (PyTorch's default), the rank except for
    "gels", the singular values for "gelsd" and "gelss"; the others are empty tensors. Differentiable
    in A and B where A's rank stays the same nearby."""
    A = _matrices("lstsq", A)  # noqa: N806
    B = _tensor(B)  # noqa: N806
    if driver not in (None,) + _LSTSQ_DRIVERS:
        raise ShapeError(f"lstsq: driver must be one of {_LSTSQ_DRIVERS} or None, got {driver!r}")
    vector = B.ndim == A.ndim - 1  # PyTorch's rule: one dimension fewer than A is a stack of vectors
    if not A.ndim - 1 <= B.ndim <= A.ndim or B.shape[-1 if vector else -2] != A.shape[-2]:
        raise ShapeError(f"lstsq: B must be (..., m, k) or (..., m) for A of shape (..., m, n) = {A.shape}, got shape {B.shape}")
    columns = B.unsqueeze(-1) if vector else B
    if rcond is not None and (isinstance(rcond, bool) or not isinstance(rcond, (int, float)) or rcond < 0):
        raise ShapeError(f"lstsq: rcond must be a number ≥ 0, got {rcond!r}")
    _, rtol = _tolerances("lstsq", A, None, rcond)
    X = pinv(A, rtol=rtol) @ columns  # noqa: N806
    m, n = A.shape[-2:]
    driver = driver or "gelsy"
    rank = matrix_rank(A, rtol=rtol)
    if driver != "gelsy" and m > n and bool((rank.data == n).all()):
        residuals = ((A @ X - columns) ** 2).sum(axis=-2)
    else:
        residuals = _empty(A.dtype)
    return LstsqResult(
        X.squeeze(-1) if vector else X,
        residuals,
        _empty(np.int64) if driver == "gels" else rank,
        svdvals(A) if driver in ("gelsd", "gelss") else _empty(A.dtype),
    )


def cond(A, p=None):  # noqa: N803
    """The condition number of each matrix (`torch.linalg.cond`): s_max / s_min for p None or 2
    (s_min / s_max for −2), of any shape; for p "fro", "nuc", 1, −1, inf or −inf, ‖A‖ ‖A⁻¹‖ of
    square matrices. inf where a matrix is singular (for a stack holding one, the whole result is
    then a constant, without a gradient)."""
    A = _matrices("cond", A)  # noqa: N806
    if p in (None, 2, -2):
        s = ops.svdvals(A)
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    A = _square("cond", A)  # noqa: N806
    try:
        inverse = ops.inv(A)
    except LinAlgError:
        return _singular_cond(A.data, p)
    return matrix_norm(A, p) * matrix_norm(inverse, p)


def _singular_cond(a, p):
    """cond of a stack holding a singular matrix: inf for those, the value for the others, as constants."""
    values = []
    for matrix in a.reshape((-1,) + a.shape[-2:]):
        try:
            values.append(np.linalg.norm(matrix, p) * np.linalg.norm(np.linalg.inv(matrix), p))
        except np.linalg.LinAlgError:
            values.append(np.inf)
    return Tensor(np.array(values, dtype=a.dtype).reshape(a.shape[:-2]))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002  (PyTorch's names)
    """(Σ |x|^ord)^(1/ord) over `dim` (all of x by default; `torch.linalg.vector_norm`): ord inf is
    the largest |x|, −inf the smallest, 0 the count of nonzero entries. The gradient at 0 is 0."""
    x = _tensor(x) if dtype is None else _tensor(x).astype(dtype)
    dims = None if dim is None else tuple(_dims("vector_norm", dim, x.ndim))
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise ShapeError(f"vector_norm: ord must be a number (inf included), got {ord!r}")
    if ord == -math.inf:
        return x.abs().amin(dim=dims, keepdim=keepdim)
    return x.norm(ord, axis=dims, keepdims=keepdim)


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False):  # noqa: N803, A002
    """The norm of each matrix (`torch.linalg.matrix_norm`): "fro" (√Σ a²), "nuc" (the sum of
    the singular values), 2 and −2 (the largest and smallest singular value), 1 and −1 (the largest
    and smallest column sum of |a|), inf and −inf (the same for rows)."""
    A = _tensor(A)  # noqa: N806
    dims = _dims("matrix_norm", dim, A.ndim)
    if len(dims) != 2:
        raise ShapeError(f"matrix_norm: dim must name 2 dimensions, got {dim!r}")
    rows, cols = dims
    if isinstance(ord, bool) or ord not in _MATRIX_ORDS:
        raise ShapeError(f"matrix_norm: ord={ord!r} is not a matrix norm; use one of {_MATRIX_ORDS}")
    if ord in ("nuc", 2, -2):
        s = svdvals(A.movedim((rows, cols), (-2, -1)))
        out = s.sum(axis=-1) if ord == "nuc" else s[..., 0] if ord == 2 else s[..., -1]
        return out.unsqueeze(min(rows, cols)).unsqueeze(max(rows, cols)) if keepdim else out
    if ord == "fro":
        return vector_norm(A, 2, dim=(rows, cols), keepdim=keepdim)
    summed, over = (rows, cols) if ord in (1, -1) else (cols, rows)  # sum down the columns, or along the rows
    sums = A.abs().sum(axis=summed, keepdims=True)
    extreme = sums.amax if ord > 0 else sums.amin
    out = extreme(dim=over, keepdim=True)
    return out if keepdim else out.squeeze((rows, cols))


def norm(A, ord=None, dim=None, keepdim=False):  # noqa: N803, A002
    """`torch.linalg.norm`: a vector norm, or a matrix norm when `ord` is a matrix norm's name or
    `dim` names two dimensions; with neither, the 2-norm of all of A (the Frobenius norm of a matrix)."""
    A = _tensor(A)  # noqa: N806
    two_dims = (dim is not None and not isinstance(dim, int) and len(dim) == 2) or (dim is None and ord is not None and A.ndim == 2)
    if isinstance(ord, str) or (ord is not None and two_dims):
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim)


def vecdot(x, y, *, dim=-1):
    """Σ x y along `dim`, with broadcasting (`torch.linalg.vecdot`, real tensors)."""
    x, y = _tensor(x), _tensor(y)
    return (x * y).sum(axis=dim)


def cross(input, other, *, dim=-1):  # noqa: A002
    """The cross product of 3-vectors along `dim` (`torch.linalg.cross`), with broadcasting."""
    a, b = _tensor(input), _tensor(other)
    for t in (a, b):
        if t.ndim == 0 or t.shape[dim] != 3:
            raise ShapeError(f"cross: needs 3 entries along dim {dim}, got shapes {a.shape} and {b.shape}")
    a, b = a.movedim(dim, 0), b.movedim(dim, 0)
    parts = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    return stack(parts, dim=0).movedim(0, dim)


def torch_cross(input, other, dim=None):  # noqa: A002
    """`torch.cross`: as `cross`, but with no `dim` along the first dimension of length 3."""
    if dim is None:
        shape = np.broadcast_shapes(_tensor(input).shape, _tensor(other).shape)
        dim = next((i for i, n in enumerate(shape) if n == 3), -1)
    return cross(input, other, dim=dim)


def multi_dot(tensors):
    """A @ B @ C ... (`torch.linalg.multi_dot`): the first may be a vector (a row), the last a
    vector (a column). Multiplied left to right."""
    tensors = [_tensor(t) for t in tensors]
    if len(tensors) < 2:
        raise ShapeError(f"multi_dot: needs at least two tensors, got {len(tensors)}")
    if any(t.ndim not in (1, 2) for t in tensors) or any(t.ndim != 2 for t in tensors[1:-1]):
        raise ShapeError(f"multi_dot: the first and last may be 1-D, the others must be 2-D; got {[t.shape for t in tensors]}")
    return functools.reduce(operator.matmul, tensors)
