"""`torch.linalg` for minigrad: inverses, solves, determinants, Cholesky factors, symmetric
eigendecompositions and norms, on a matrix or a stack of them (..., n, n), differentiable to every
order.

Seven primitives do the numerical work (`minigrad.ops`: inv, solve, det, logabsdet, cholesky,
eigvalsh, eigh_vectors; numpy's LAPACK routines forward, Giles' matrix derivatives backward, each
rule written with primitives); everything else here is built from them. A singular matrix, or one
that is not positive definite for `cholesky`, raises `minigrad.LinAlgError` naming the operation.
Not here: svd, qr, eig (general matrices), and what needs them (pinv, lstsq, matrix_rank, the
nuclear and spectral norms).
"""

import collections
import functools
import math
import operator

import numpy as np

from . import ops
from .errors import ShapeError
from .functional import _dims, _tensor, matrix_power, stack, tril, triu
from .tensor import Tensor

__all__ = [
    "cholesky", "cross", "det", "eigh", "eigvalsh", "inv", "matrix_norm", "matrix_power", "multi_dot", "norm",
    "slogdet", "solve", "solve_triangular", "vecdot", "vector_norm",
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


_MATRIX_ORDS = ("fro", 1, -1, math.inf, -math.inf)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False):  # noqa: N803, A002
    """The norm of each matrix (`torch.linalg.matrix_norm`): "fro" (√Σ a²), 1 and −1 (the largest
    and smallest column sum of |a|), inf and −inf (the same for rows). "nuc", 2 and −2 need the
    singular values, which minigrad does not compute."""
    A = _tensor(A)  # noqa: N806
    dims = _dims("matrix_norm", dim, A.ndim)
    if len(dims) != 2:
        raise ShapeError(f"matrix_norm: dim must name 2 dimensions, got {dim!r}")
    rows, cols = dims
    if ord not in _MATRIX_ORDS:
        raise ShapeError(
            f"matrix_norm: ord={ord!r} is not supported; use one of {_MATRIX_ORDS} (the nuclear and spectral norms "
            f"need an SVD, which minigrad does not have)"
        )
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
