"""PyTorch's indexing, shape and matrix functions as compositions of minigrad's primitives, against
PyTorch in float64: values, gradients and (all of them being linear in the input) second derivatives,
the method forms, exact int64 results, and an error for bad input."""

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import jit
from minigrad.errors import ShapeError
from oracles import compare_with_torch as _compare


def rng(seed=0):
    return np.random.default_rng(20261207 + seed)


def _same_ints(out, expected):
    """An integer result equal to PyTorch's, dtype included."""
    assert out.dtype == np.int64 and expected.dtype == torch.int64
    np.testing.assert_array_equal(out.data, expected.numpy())


X = rng().standard_normal((3, 4, 5))


# --------------------------------------------------------------------------- indexing
@pytest.mark.parametrize("dim, index", [(0, [2, 0, 2]), (1, [3]), (-1, [4, 0, 1, 1]), (2, [])])
def test_index_select(dim, index):
    i = np.array(index, dtype=np.int64)
    _compare(lambda x: mg.index_select(x, dim, i), lambda x: torch.index_select(x, dim, torch.tensor(i)), [X], second=True)
    _compare(lambda x: x.index_select(dim, mg.tensor(i)), lambda x: x.index_select(dim, torch.tensor(i)), [X])


def test_index_select_of_a_scalar():
    _compare(lambda x: mg.index_select(x, 0, [0]), lambda x: torch.index_select(x, 0, torch.tensor([0])), [np.array(2.5)])


def test_index_select_rejects_out_of_range_and_2d_indices():
    with pytest.raises(ShapeError, match=r"index_select.*\[0, 4\).*\(3, 4, 5\)"):
        mg.index_select(X, 1, [4])
    with pytest.raises(ShapeError, match="index_select: index must be 1-D"):
        mg.index_select(X, 1, [[0]])
    with pytest.raises(ShapeError, match="index_select: index must hold integers"):
        mg.index_select(X, 1, [0.0])


@pytest.mark.parametrize("mask_shape", [(3, 4, 5), (4, 1), (5,)])
def test_masked_select(mask_shape):
    mask = rng(1).random(mask_shape) > 0.5
    _compare(lambda x: mg.masked_select(x, mask), lambda x: torch.masked_select(x, torch.tensor(mask)), [X], second=True)
    _compare(lambda x: x.masked_select(mg.tensor(mask)), lambda x: x.masked_select(torch.tensor(mask)), [X])


def test_masked_select_broadcasts_the_input_too():
    mask = rng(2).random((3, 4)) > 0.3
    x = rng(3).standard_normal((4,))
    _compare(lambda x: mg.masked_select(x, mask), lambda x: torch.masked_select(x, torch.tensor(mask)), [x])


def test_masked_select_rejects_bad_masks():
    with pytest.raises(ShapeError, match=r"masked_select.*\(3,\).*\(3, 4, 5\)"):
        mg.masked_select(X, np.ones(3, dtype=bool))
    with pytest.raises(ShapeError, match="masked_select: mask must be a bool"):
        mg.masked_select(X, np.ones(5))


@pytest.mark.parametrize("dim, index_shape", [(0, (2, 4, 5)), (1, (3, 6, 5)), (-1, (1, 4, 3)), (2, (3, 1, 2))])
def test_take_along_dim(dim, index_shape):
    i = rng(4).integers(0, X.shape[dim], index_shape)
    _compare(lambda x: mg.take_along_dim(x, i, dim), lambda x: torch.take_along_dim(x, torch.tensor(i), dim), [X], second=True)
    _compare(lambda x: x.take_along_dim(mg.tensor(i), dim=dim), lambda x: x.take_along_dim(torch.tensor(i), dim=dim), [X])


def test_take_along_dim_flattened():
    i = rng(5).integers(0, X.size, (7,))
    _compare(lambda x: mg.take_along_dim(x, i), lambda x: torch.take_along_dim(x, torch.tensor(i)), [X])


def test_take_along_dim_rejects_other_ranks_and_shapes():
    with pytest.raises(ShapeError, match=r"take_along_dim.*\(3, 4, 5\) and \(2,\)"):
        mg.take_along_dim(X, np.zeros(2, dtype=np.int64), 0)
    with pytest.raises(ShapeError, match=r"take_along_dim.*do not broadcast outside dim 0"):
        mg.take_along_dim(X, np.zeros((1, 3, 5), dtype=np.int64), 0)


@pytest.mark.parametrize("dim, start, length", [(0, 1, 2), (1, -3, 3), (2, 0, 0), (-1, 4, 1)])
def test_narrow(dim, start, length):
    _compare(lambda x: mg.narrow(x, dim, start, length), lambda x: torch.narrow(x, dim, start, length), [X], second=True)
    _compare(lambda x: x.narrow(dim, start, length), lambda x: x.narrow(dim, start, length), [X])


def test_narrow_rejects_a_slice_past_the_end():
    with pytest.raises(ShapeError, match=r"narrow: start 3 and length 2 do not fit dim 1 of length 4"):
        mg.narrow(X, 1, 3, 2)


# --------------------------------------------------------------------------- shapes
@pytest.mark.parametrize("source, destination", [(0, 2), (-1, 0), ((0, 1), (2, 0)), ((2, 0), (0, 1)), ([], [])])
def test_movedim(source, destination):
    _compare(lambda x: mg.movedim(x, source, destination), lambda x: torch.movedim(x, source, destination), [X], second=True)
    _compare(lambda x: x.movedim(source, destination), lambda x: x.movedim(source, destination), [X])
    _compare(lambda x: x.moveaxis(source, destination), lambda x: x.moveaxis(source, destination), [X])
    _compare(lambda x: mg.moveaxis(x, source, destination), lambda x: torch.moveaxis(x, source, destination), [X])


def test_movedim_rejects_repeats_and_mismatched_lengths():
    with pytest.raises(ShapeError, match=r"movedim: repeated dim in \[0, -3\]"):
        mg.movedim(X, [0, -3], [1, 2])
    with pytest.raises(ShapeError, match="movedim: source .* need the same number"):
        mg.movedim(X, (0, 1), (2,))
    with pytest.raises(ShapeError, match="movedim: axis 3 is out of range"):
        mg.movedim(X, 3, 0)


def test_swapaxes_and_swapdims():
    _compare(lambda x: mg.swapaxes(x, 0, -1), lambda x: torch.swapaxes(x, 0, -1), [X], second=True)
    _compare(lambda x: mg.swapdims(x, 2, 1), lambda x: torch.swapdims(x, 2, 1), [X])
    _compare(lambda x: x.swapdims(0, 1), lambda x: x.swapdims(0, 1), [X])
    with pytest.raises(ShapeError, match=r"swapaxes: cannot swap axes \(0, 3\)"):
        mg.swapdims(X, 0, 3)


@pytest.mark.parametrize("dim, sizes", [(1, (2, 2)), (-1, (5, 1)), (0, (-1, 3)), (2, [1, -1, 1])])
def test_unflatten(dim, sizes):
    _compare(lambda x: mg.unflatten(x, dim, sizes), lambda x: torch.unflatten(x, dim, sizes), [X], second=True)
    _compare(lambda x: x.unflatten(dim, sizes), lambda x: x.unflatten(dim, sizes), [X])


@pytest.mark.parametrize("sizes", [(3, 2), (-1, -1), (-1, 3), ()])
def test_unflatten_rejects_sizes_that_do_not_split(sizes):
    with pytest.raises(ShapeError, match=r"unflatten: sizes .* do not split dim 1 of length 4"):
        mg.unflatten(X, 1, sizes)


def test_clone():
    _compare(mg.clone, torch.clone, [X], second=True)
    x = mg.tensor([1.0, 2.0])
    y = mg.clone(x)
    y.data[0] = 5.0
    assert x.data[0] == 1.0  # its own data


# --------------------------------------------------------------------------- nonzero
INTS = np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]])


@pytest.mark.parametrize("data", [INTS, INTS.astype(float) - 1.0, INTS > 1, np.array(3.0), np.array(0), np.zeros((2, 0))])
def test_nonzero_and_argwhere(data):
    _same_ints(mg.nonzero(data), torch.nonzero(torch.tensor(data)))
    _same_ints(mg.tensor(data).nonzero(), torch.tensor(data).nonzero())
    _same_ints(mg.argwhere(data), torch.argwhere(torch.tensor(data)))
    _same_ints(mg.tensor(data).argwhere(), torch.tensor(data).argwhere())
    ours, theirs = mg.nonzero(data, as_tuple=True), torch.nonzero(torch.tensor(data), as_tuple=True)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        _same_ints(o, t)


@pytest.mark.parametrize("fn", [mg.nonzero, mg.count_nonzero, lambda x: mg.masked_select(x, x > 0)])
def test_nonzero_count_nonzero_and_masked_select_refuse_a_traced_tensor(fn):
    with pytest.raises(mg.TracerError, match="nonzero|masked_select"):
        jit.compile(lambda x: fn(x).sum() * x)(np.array([1.0, 0.0]))


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1)])
def test_count_nonzero(dim):
    _same_ints(mg.count_nonzero(INTS, dim), torch.count_nonzero(torch.tensor(INTS), dim))
    _same_ints(mg.tensor(INTS).count_nonzero(dim=dim), torch.tensor(INTS).count_nonzero(dim=dim))


def test_count_nonzero_rejects_an_axis_out_of_range():
    with pytest.raises(ShapeError, match="count_nonzero: axis 2 is out of range"):
        mg.count_nonzero(INTS, 2)


# --------------------------------------------------------------------------- roll, diff
@pytest.mark.parametrize("shifts, dims", [(2, None), (-7, None), (1, 0), ((1, -2), (0, 2)), ((3, 3), (1, 1)), (13, -1)])
def test_roll(shifts, dims):
    _compare(lambda x: mg.roll(x, shifts, dims), lambda x: torch.roll(x, shifts, dims), [X], second=True)
    _compare(lambda x: x.roll(shifts, dims), lambda x: x.roll(shifts, dims), [X])


def test_roll_rejects_mismatched_shifts_and_dims():
    with pytest.raises(ShapeError, match=r"roll: needs one shift per dim, got shifts \[1, 2\] and dims \[0\]"):
        mg.roll(X, (1, 2), 0)
    with pytest.raises(ShapeError, match="roll: without dims"):
        mg.roll(X, (1, 2))


@pytest.mark.parametrize("n, dim", [(1, -1), (2, 0), (0, 1), (3, 2), (6, 2)])
def test_diff(n, dim):
    _compare(lambda x: mg.diff(x, n, dim), lambda x: torch.diff(x, n, dim), [X], second=True)
    _compare(lambda x: x.diff(n=n, dim=dim), lambda x: x.diff(n=n, dim=dim), [X])


def test_diff_with_prepend_and_append():
    before, after = rng(6).standard_normal((3, 2, 5)), rng(7).standard_normal((3, 1, 5))
    _compare(lambda x, b, a: mg.diff(x, 2, 1, b, a), lambda x, b, a: torch.diff(x, 2, 1, b, a), [X, before, after], second=True)
    _compare(lambda x, a: mg.diff(x, dim=1, append=a), lambda x, a: torch.diff(x, dim=1, append=a), [X, after])


def test_diff_rejects_a_prepend_of_another_shape():
    with pytest.raises(ShapeError, match=r"diff: prepend and append must match the input's shape \(3, 4, 5\) except along dim 1"):
        mg.diff(X, dim=1, prepend=np.zeros((3, 1, 4)))
    with pytest.raises(ShapeError, match="diff: needs at least one dimension"):
        mg.diff(np.array(1.0))


# --------------------------------------------------------------------------- diagonals
@pytest.mark.parametrize("shape", [(4,), (3, 5), (5, 3), (0,)])
@pytest.mark.parametrize("k", [0, 1, -2, 4])
def test_diag(shape, k):
    x = rng(8).standard_normal(shape)
    _compare(lambda x: mg.diag(x, k), lambda x: torch.diag(x, k), [x], second=True)
    _compare(lambda x: x.diag(k), lambda x: x.diag(k), [x])


def test_diag_rejects_three_dimensions():
    with pytest.raises(ShapeError, match=r"diag: expects a vector or a matrix, got shape \(3, 4, 5\)"):
        mg.diag(X)


@pytest.mark.parametrize("offset, dim1, dim2", [(0, 0, 1), (1, 0, 2), (-2, 2, 1), (2, -1, 0), (7, 0, 1), (-3, 1, 2)])
def test_diagonal(offset, dim1, dim2):
    _compare(lambda x: mg.diagonal(x, offset, dim1, dim2), lambda x: torch.diagonal(x, offset, dim1, dim2), [X], second=True)
    _compare(lambda x: x.diagonal(offset, dim1, dim2), lambda x: x.diagonal(offset, dim1, dim2), [X])


def test_diagonal_rejects_the_same_dim_twice():
    with pytest.raises(ShapeError, match="diagonal: repeated dim"):
        mg.diagonal(X, 0, 1, -2)
    with pytest.raises(ShapeError, match=r"diagonal: needs at least 2 dimensions, got shape \(4,\)"):
        mg.diagonal(np.ones(4))


@pytest.mark.parametrize("shape", [(4, 4), (2, 5), (5, 3)])
def test_trace(shape):
    a = rng(9).standard_normal(shape)
    _compare(mg.trace, torch.trace, [a], second=True)
    _compare(lambda a: a.trace(), lambda a: a.trace(), [a])


def test_trace_rejects_other_ranks():
    with pytest.raises(ShapeError, match=r"trace: expects tensors with 2 dimensions, got shapes \(3, 4, 5\)"):
        mg.trace(X)


@pytest.mark.parametrize("row, col, offset", [(4, 4, 0), (3, 5, 1), (5, 3, -1), (4, 6, -5), (2, 3, 4), (0, 3, 0)])
def test_tril_and_triu_indices(row, col, offset):
    _same_ints(mg.tril_indices(row, col, offset), torch.tril_indices(row, col, offset))
    _same_ints(mg.triu_indices(row, col, offset), torch.triu_indices(row, col, offset))


def test_tril_indices_pick_the_lower_triangle():
    a = rng(10).standard_normal((4, 5))
    rows, cols = mg.tril_indices(4, 5, 1)
    _compare(lambda a: a[rows, cols], lambda a: a[torch.tril_indices(4, 5, 1).unbind()], [a])


@pytest.mark.parametrize("fn", [mg.tril_indices, mg.triu_indices])
def test_tril_and_triu_indices_reject_a_negative_size(fn):
    with pytest.raises(ShapeError, match=rf"{fn.__name__}: col must be a non-negative int, got -1"):
        fn(3, -1)


# --------------------------------------------------------------------------- stacking, broadcasting
SHAPE_SETS = [[(), ()], [(3,), (2,)], [(2, 3), (4, 3)], [(2, 3, 1), (2, 3, 2)], [(3,), (1, 3)]]


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack"])
@pytest.mark.parametrize("shapes", SHAPE_SETS)
def test_stacks(name, shapes):
    arrays = [rng(i).standard_normal(s) for i, s in enumerate(shapes)]
    try:
        getattr(torch, name)([torch.tensor(a) for a in arrays])
    except RuntimeError:  # a combination PyTorch refuses: minigrad refuses it too
        with pytest.raises(ShapeError, match="concatenate"):
            getattr(mg, name)(arrays)
        return
    _compare(lambda *xs: getattr(mg, name)(xs), lambda *ts: getattr(torch, name)(ts), arrays, second=True)


def test_stacks_reject_no_tensors():
    for name in ["hstack", "vstack", "dstack", "column_stack"]:
        with pytest.raises(ShapeError, match=f"{name}: needs at least one tensor"):
            getattr(mg, name)([])


def test_broadcast_tensors():
    arrays = [rng(1).standard_normal((3, 1)), rng(2).standard_normal((4,)), rng(3).standard_normal(())]
    _compare(lambda *xs: mg.stack(mg.broadcast_tensors(*xs)), lambda *ts: torch.stack(torch.broadcast_tensors(*ts)), arrays, second=True)
    with pytest.raises(ShapeError, match=r"broadcast_tensors: shapes \[\(3,\), \(4,\)\] do not broadcast"):
        mg.broadcast_tensors(np.ones(3), np.ones(4))


def test_block_diag():
    arrays = [rng(1).standard_normal((2, 3)), rng(2).standard_normal(()), rng(3).standard_normal((4,)), rng(4).standard_normal((0, 2))]
    _compare(lambda *xs: mg.block_diag(*xs), lambda *ts: torch.block_diag(*ts), arrays, second=True)
    assert mg.block_diag().shape == tuple(torch.block_diag().shape)
    with pytest.raises(ShapeError, match=r"block_diag: takes tensors of at most 2 dimensions, got shapes \[\(3, 4, 5\)\]"):
        mg.block_diag(X)


@pytest.mark.parametrize("shapes", [[(2, 3), (4, 5)], [(3,), (2, 2)], [(2, 1, 3), (2,)], [(), (3,)]])
def test_kron(shapes):
    arrays = [rng(i).standard_normal(s) for i, s in enumerate(shapes)]
    _compare(mg.kron, torch.kron, arrays, second=True)
    _compare(lambda a, b: a.kron(b), lambda a, b: a.kron(b), arrays)


# --------------------------------------------------------------------------- elementwise
def test_lerp():
    a, b, w = rng(1).standard_normal((3, 4)), rng(2).standard_normal((4,)), rng(3).random((3, 1))
    _compare(mg.lerp, torch.lerp, [a, b, w], second=True)
    _compare(lambda a, b: a.lerp(b, 0.3), lambda a, b: a.lerp(b, 0.3), [a, np.broadcast_to(b, a.shape).copy()], second=True)
    with pytest.raises(ShapeError, match=r"lerp: input, end and weight of shapes \[\(3,\), \(4,\), \(\)\] do not broadcast"):
        mg.lerp(np.ones(3), mg.tensor(np.ones(4)), 0.5)


@pytest.mark.parametrize("eps", [None, 0.2])
def test_logit(eps):
    p = rng(4).random((3, 5)) * 0.98 + 0.01
    _compare(lambda p: mg.logit(p, eps), lambda p: torch.logit(p, eps), [p], second=True)
    _compare(lambda p: p.logit(eps), lambda p: p.logit(eps), [p])


@pytest.mark.parametrize("kwargs", [{}, {"nan": 1.5}, {"posinf": 9.0, "neginf": -8.0}, {"nan": -1.0, "posinf": 2.0}])
def test_nan_to_num(kwargs):
    x = np.array([[1.0, np.nan, np.inf], [-np.inf, -2.0, 0.5]])
    _compare(lambda x: mg.nan_to_num(x, **kwargs), lambda x: torch.nan_to_num(x, **kwargs), [x], second=True)
    _compare(lambda x: x.nan_to_num(**kwargs), lambda x: x.nan_to_num(**kwargs), [x])
    ints = mg.nan_to_num(np.array([1, 2]))
    assert ints.dtype == np.int64 and ints.tolist() == [1, 2]


@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, False), ((0, 2), True), (-1, True)])
def test_amax_amin_aminmax(dim, keepdim):
    x = np.round(rng(5).standard_normal((3, 4, 5)), 1)  # ties share the gradient, as in PyTorch
    args = () if dim is None else (dim,)
    _compare(lambda x: mg.amax(x, *args, keepdim=keepdim), lambda x: torch.amax(x, *args, keepdim=keepdim), [x], second=True)
    _compare(lambda x: mg.amin(x, *args, keepdim=keepdim), lambda x: torch.amin(x, *args, keepdim=keepdim), [x])
    if not isinstance(dim, tuple):  # PyTorch's aminmax takes one dim
        for k in range(2):
            _compare(lambda x: mg.aminmax(x, dim=dim, keepdim=keepdim)[k], lambda x: torch.aminmax(x, dim=dim, keepdim=keepdim)[k], [x])
        values = mg.tensor(x).aminmax(dim=dim, keepdim=keepdim)
        np.testing.assert_array_equal(values.max.data, torch.tensor(x).aminmax(dim=dim, keepdim=keepdim).max.numpy())
    with pytest.raises(ShapeError, match="axis 3 is out of range"):
        mg.aminmax(x, dim=3)


# --------------------------------------------------------------------------- products
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, -2.0), (0, 3.0)])
def test_addmm_and_baddbmm(beta, alpha):
    c, a, b = rng(1).standard_normal((4,)), rng(2).standard_normal((3, 2)), rng(3).standard_normal((2, 4))
    _compare(lambda c, a, b: mg.addmm(c, a, b, beta=beta, alpha=alpha), lambda c, a, b: torch.addmm(c, a, b, beta=beta, alpha=alpha), [c, a, b], second=True)
    _compare(lambda c, a, b: c.addmm(a, b, beta=beta), lambda c, a, b: c.addmm(a, b, beta=beta), [rng(4).standard_normal((3, 4)), a, b])
    c, a, b = rng(5).standard_normal((2, 1, 4)), rng(6).standard_normal((2, 3, 5)), rng(7).standard_normal((2, 5, 4))
    _compare(lambda c, a, b: mg.baddbmm(c, a, b, beta=beta, alpha=alpha), lambda c, a, b: torch.baddbmm(c, a, b, beta=beta, alpha=alpha), [c, a, b], second=True)
    _compare(lambda c, a, b: c.baddbmm(a, b, alpha=alpha), lambda c, a, b: c.baddbmm(a, b, alpha=alpha), [c, a, b])


def test_addmm_with_beta_0_ignores_nan_in_input():
    out = mg.addmm(np.full((2, 2), np.nan), np.eye(2), np.eye(2), beta=0)
    np.testing.assert_array_equal(out.data, np.eye(2))


def test_addmm_and_baddbmm_reject_bad_shapes():
    with pytest.raises(ShapeError, match=r"addmm: input of shape \(3,\) does not broadcast to the product's shape \(2, 4\)"):
        mg.addmm(np.ones(3), np.ones((2, 3)), np.ones((3, 4)))
    with pytest.raises(ShapeError, match="mm: expects tensors with 2 and 2 dimensions"):
        mg.addmm(np.ones(4), np.ones(3), np.ones((3, 4)))
    with pytest.raises(ShapeError, match="bmm: the batch sizes differ"):
        mg.baddbmm(np.ones(4), np.ones((2, 3, 3)), np.ones((3, 3, 4)))


@pytest.mark.parametrize("shapes", [[(3,), (3,)], [(2, 3), (4, 3)], [(2, 1, 3), (3,)], [(), (2, 3)], [(4,), ()]])
def test_inner(shapes):
    arrays = [rng(i).standard_normal(s) for i, s in enumerate(shapes)]
    _compare(mg.inner, torch.inner, arrays, second=True)
    _compare(lambda a, b: a.inner(b), lambda a, b: a.inner(b), arrays)
    with pytest.raises(ShapeError, match=r"inner: the last dimensions differ, shapes \(3,\) and \(4,\)"):
        mg.inner(np.ones(3), np.ones(4))


@pytest.mark.parametrize("shapes, dims", [
    ([(3, 4, 5), (4, 5, 2)], 2), ([(3, 4), (4, 2)], 1), ([(3, 2), (4,)], 0), ([(2, 3, 4), (4, 2, 5)], ([0, 2], [1, 0])),
    ([(3, 4), (3, 4)], ([1, 0], [1, 0])), ([(), ()], 0),
])
def test_tensordot(shapes, dims):
    arrays = [rng(i).standard_normal(s) for i, s in enumerate(shapes)]
    _compare(lambda a, b: mg.tensordot(a, b, dims), lambda a, b: torch.tensordot(a, b, dims), arrays, second=True)


def test_tensordot_rejects_mismatched_axes():
    with pytest.raises(ShapeError, match=r"tensordot: axes \[1\] of shape \(3, 4\) do not match axes \[0\] of shape \(5, 2\)"):
        mg.tensordot(np.ones((3, 4)), np.ones((5, 2)), 1)
    with pytest.raises(ShapeError, match=r"tensordot: dims 3 must be in \[0, 2\]"):
        mg.tensordot(np.ones((3, 4)), np.ones((3, 4)), 3)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_matrix_power(n):
    a = rng(6).standard_normal((2, 3, 3)) * 0.7
    _compare(lambda a: mg.matrix_power(a, n), lambda a: torch.linalg.matrix_power(a, n), [a], second=True)
    _compare(lambda a: a.matrix_power(n), lambda a: a.matrix_power(n), [a])


def test_matrix_power_0_is_the_identity():
    a = rng(7).standard_normal((2, 3, 3))
    np.testing.assert_array_equal(mg.matrix_power(a, 0).data, torch.linalg.matrix_power(torch.tensor(a), 0).numpy())


def test_matrix_power_rejects_non_square_matrices_and_fractional_powers():
    with pytest.raises(ShapeError, match=r"matrix_power: needs square matrices .* got shape \(2, 3\)"):
        mg.matrix_power(np.ones((2, 3)), 2)
    with pytest.raises(ShapeError, match="matrix_power: n must be an int, got 0.5"):
        mg.matrix_power(np.eye(2), 0.5)
    with pytest.raises(mg.LinAlgError, match="inv: the matrix is singular"):  # a negative power inverts first
        mg.matrix_power(np.ones((2, 2)), -1)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, np.inf])
def test_cdist(p):
    a, b = rng(1).standard_normal((2, 4, 3)), rng(2).standard_normal((1, 5, 3))
    _compare(lambda a, b: mg.cdist(a, b, p), lambda a, b: torch.cdist(a, b, p), [a, b])
    if p != np.inf:  # PyTorch's cdist has no second derivative: its formula's
        _compare(lambda a, b: mg.cdist(a, b, p), lambda a, b: ((a[..., :, None, :] - b[..., None, :, :]).abs() ** p).sum(-1) ** (1 / p), [a, b], second=True)
    b[0, 1] = a[1, 2]  # a zero distance, and zero differences: gradient 0 there, as in PyTorch
    b[0, 2, 0] = a[0, 3, 0]
    _compare(lambda a, b: mg.cdist(a, b, p), lambda a, b: torch.cdist(a, b, p), [a, b])


def test_cdist_with_p_0_counts_the_differing_coordinates():
    a, b = np.array([[1.0, 2.0, 3.0]]), np.array([[1.0, 0.0, 3.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(mg.cdist(a, b, 0).data, torch.cdist(torch.tensor(a), torch.tensor(b), 0).numpy())


def test_cdist_rejects_mismatched_rows_and_negative_p():
    with pytest.raises(ShapeError, match=r"cdist: needs .* got shapes \(4, 3\) and \(5, 2\)"):
        mg.cdist(np.ones((4, 3)), np.ones((5, 2)))
    with pytest.raises(ShapeError, match="cdist: p must be non-negative, got -1"):
        mg.cdist(np.ones((4, 3)), np.ones((5, 3)), -1)


def test_compositions_compile_and_recompute_their_masks():
    """The jit traces the compositions: on new inputs (a zero distance, NaN and ±∞ only at trace
    time), values and gradients equal eager minigrad's."""

    def loss(a, b, c):
        m = mg.diagonal(mg.roll(a, 1, 0), 1) + mg.diff(a, dim=0).sum(0)[:3]
        m = mg.kron(m, mg.trace(mg.matrix_power(b, 3)).reshape(1)) + mg.take_along_dim(a, np.array([[1, 0, 3]]), 1).sum()
        return (m**2).sum() + mg.cdist(a, b).sum() + (mg.nan_to_num(c, 1.0, 5.0, -5.0) * mg.logit(mg.sigmoid(a))).sum()

    compiled = jit.compile(loss, backward=True)
    a, b, c = rng(1).standard_normal((3, 4)), rng(2).standard_normal((4, 4)), rng(3).standard_normal((3, 4))
    b[0], c[0, :3] = a[1], [np.nan, np.inf, -np.inf]
    for arrays in [(a, b, c), tuple(rng(4 + i).standard_normal(s) for i, s in enumerate([(3, 4), (4, 4), (3, 4)]))]:
        value, grads = compiled(*arrays)
        xs = [mg.tensor(x, requires_grad=True) for x in arrays]
        expected = loss(*xs)
        np.testing.assert_allclose(np.asarray(value), expected.data, rtol=1e-12)
        for g, eg in zip(grads, mg.gradients(expected, xs), strict=True):
            np.testing.assert_allclose(np.asarray(g), eg.data, rtol=1e-12)
    assert len(compiled.programs) == 1


# --------------------------------------------------------------------------- running products, order statistics
ZEROS = X[0].copy()
ZEROS[1, 2] = ZEROS[2, 0] = ZEROS[2, 4] = 0.0  # one zero in a row, two in another


@pytest.mark.parametrize("x", [X[0], ZEROS], ids=["no-zeros", "zeros"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumprod_is_exact_at_zeros_to_second_order(x, dim):
    _compare(lambda t: t.cumprod(dim), lambda t: t.cumprod(dim), [x], second=True)
    _compare(lambda t: mg.cumprod(t, dim=dim), lambda t: torch.cumprod(t, dim=dim), [x])


def test_cumprod_flattens_without_an_axis_and_keeps_float32():
    np.testing.assert_allclose(mg.cumprod(X[0]).data, np.cumprod(X[0]), rtol=1e-13)
    x = mg.tensor(np.linspace(0.5, 1.5, 33, dtype=np.float32), requires_grad=True)
    y = x.cumprod(0)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.data, np.cumprod(x.data), rtol=1e-5)


@pytest.mark.parametrize("dim, keepdim", [(None, False), (0, False), (1, True), (-1, False)])
def test_median_and_kthvalue(dim, keepdim):
    x = X[1]  # distinct values: the picked element is unique
    if dim is None:
        _compare(lambda t: t.median(), lambda t: t.median(), [x], second=True)
        return
    _compare(lambda t: t.median(dim, keepdim).values, lambda t: t.median(dim, keepdim).values, [x], second=True)
    _same_ints(mg.median(x, dim, keepdim).indices, torch.median(torch.tensor(x), dim, keepdim).indices)
    for k in (1, 3):
        _compare(lambda t: mg.kthvalue(t, k, dim, keepdim).values, lambda t: torch.kthvalue(t, k, dim, keepdim).values, [x])
        _same_ints(mg.kthvalue(x, k, dim, keepdim).indices, torch.kthvalue(torch.tensor(x), k, dim, keepdim).indices)


def test_median_of_a_row_with_nan_is_nan():
    x = X[2].copy()
    x[1, 3] = np.nan
    got, want = mg.median(x, 1), torch.median(torch.tensor(x), 1)
    np.testing.assert_array_equal(got.values.data, want.values.numpy())
    _same_ints(got.indices, want.indices)
    assert np.isnan(mg.median(x).item()) and np.isnan(mg.quantile(x, 0.5).item())


# X[1] with NaN scattered: row 0 holds two, row 2 one, row 3 none (4 × 5)
GAPS = X[1].copy()
GAPS[0, 1] = GAPS[0, 4] = GAPS[2, 0] = np.nan
ALL_NAN_ROW = np.vstack([GAPS, np.full((1, 5), np.nan)])


@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, False), (1, True), (0, False)])
def test_nanmedian_skips_nan_as_torch(dim, keepdim):
    if dim is None:
        _compare(lambda t: t.nanmedian(), lambda t: t.nanmedian(), [GAPS], second=True)
        return
    _compare(lambda t: t.nanmedian(dim, keepdim).values, lambda t: t.nanmedian(dim, keepdim).values, [GAPS], second=True)
    _same_ints(mg.nanmedian(GAPS, dim, keepdim).indices, torch.nanmedian(torch.tensor(GAPS), dim, keepdim).indices)
    got = mg.nanmedian(ALL_NAN_ROW, 1)  # a row of NaN only: NaN, at its first index (torch's index there is arbitrary)
    np.testing.assert_array_equal(got.values.data, torch.nanmedian(torch.tensor(ALL_NAN_ROW), 1).values.numpy())
    assert got.indices.data[-1] == 0


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("q", [0.3, [0.0, 0.25, 0.9, 1.0]], ids=["0.3", "four"])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, False), (0, True)])
def test_nanquantile_skips_nan_as_torch(interpolation, q, dim, keepdim):
    qq = torch.tensor(q, dtype=torch.float64) if isinstance(q, list) else q
    _compare(
        lambda t: mg.nanquantile(t, q, dim, keepdim, interpolation=interpolation),
        lambda t: torch.nanquantile(t, qq, dim, keepdim, interpolation=interpolation),
        [GAPS], second=True,
    )
    got = mg.nanquantile(ALL_NAN_ROW, q, 1, interpolation=interpolation)
    np.testing.assert_allclose(got.data, torch.nanquantile(torch.tensor(ALL_NAN_ROW), qq, 1, interpolation=interpolation).numpy(), rtol=1e-12)


@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, False), ((0, 1), True)])
def test_nansum_and_nanmean_as_torch(dim, keepdim):
    _compare(lambda t: t.nansum(dim, keepdim), lambda t: t.nansum(dim, keepdim), [GAPS], second=True)
    _compare(lambda t: t.nanmean(dim, keepdim), lambda t: t.nanmean(dim, keepdim), [GAPS], second=True)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(mg.nanmean(ALL_NAN_ROW, 1).data, torch.nanmean(torch.tensor(ALL_NAN_ROW), 1).numpy(), rtol=1e-12)
    assert mg.nansum(np.array([1, 2, 3])).item() == 6

    def f(t):
        return (t.nanmean(1) * mg.tensor([1.0, 2.0, 3.0, 4.0])).sum() + t.nansum(0).sum()

    compiled = jit.compile(f, backward=True)
    elsewhere = X[1].copy()
    elsewhere[3, 2] = np.nan
    for data in (GAPS, elsewhere):  # the trace counts the NaN of each call, not those of the first
        value, (grad,) = compiled(data)
        want_value, (want_grad,) = mg.value_and_grad(f, argnums=(0,))(mg.tensor(data))
        np.testing.assert_allclose(value.data, want_value.data, rtol=1e-12)
        np.testing.assert_allclose(grad.data, want_grad.data, rtol=1e-12)
    with pytest.raises(ShapeError, match="nanmean: needs a floating-point tensor, got int64"):
        mg.nanmean(np.array([1, 2, 3]))


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("q", [0.3, 0.5, [0.0, 0.25, 0.9, 1.0]], ids=["0.3", "0.5", "four"])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (None, True), (1, False), (0, True)])
def test_quantile(interpolation, q, dim, keepdim):
    qq = torch.tensor(q, dtype=torch.float64) if isinstance(q, list) else q
    _compare(
        lambda t: mg.quantile(t, q, dim, keepdim, interpolation=interpolation),
        lambda t: torch.quantile(t, qq, dim, keepdim, interpolation=interpolation),
        [X[1]],
    )


def test_quantile_rejects_bad_q_and_interpolation():
    with pytest.raises(ShapeError, match=r"quantile: q must be .* in \[0, 1\]"):
        mg.quantile(X, 1.5)
    with pytest.raises(ShapeError, match="quantile: interpolation must be one of"):
        mg.quantile(X, 0.5, interpolation="cubic")
    with pytest.raises(ShapeError, match=r"kthvalue: k must be an int in \[1, 5\]"):
        mg.kthvalue(X, 6)


def test_orders_computed_from_values_are_refused_while_tracing():
    """A compiled program could not recompute a sort's permutation: jit.compile refuses it rather
    than replay the trace-time order on new data."""
    for fn in (lambda t: mg.sort(t).values.sum(), lambda t: t.median(), lambda t: mg.quantile(t, 0.5), lambda t: t.topk(2).values.sum(),
               lambda t: t.nanmedian(), lambda t: t.nanquantile(0.5)):
        with pytest.raises(mg.TracerError, match="topk.*the order is computed from the values"):
            jit.compile(fn)(np.array([3.0, 1.0, 2.0]))


def test_order_statistics_and_cumprod_of_a_scalar_as_torch():
    x, t = mg.tensor(2.5), torch.tensor(2.5, dtype=torch.float64)
    assert x.cumprod(0).item() == t.cumprod(0).item() and x.cumprod(0).shape == ()
    for ours, theirs in [(mg.median(x, 0), torch.median(t, 0)), (mg.kthvalue(x, 1, 0), torch.kthvalue(t, 1, 0)),
                         (mg.median(x, 0, keepdim=True), torch.median(t, 0, keepdim=True)), (mg.nanmedian(x, 0, True), torch.nanmedian(t, 0, True))]:
        assert ours.values.shape == () and ours.values.item() == theirs.values.item()
        _same_ints(ours.indices, theirs.indices)


def test_rounding_functions_as_torch():
    """floor, ceil, trunc (fix), round (halves to even, `decimals=`) and frac as torch's, on halves,
    signed zeros, ±inf and NaN; integers keep their dtype; the gradient of a step is zeros (not
    None) and frac's is 1; compiled, the same."""
    values = np.array([-2.5, -1.5, -0.5, -0.0, 0.0, 0.49999999999999994, 0.5, 1.5, 2.5, 1e300, np.inf, -np.inf, np.nan, -3.7, 3.7])
    x, t = mg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    for name in ("floor", "ceil", "trunc", "fix", "round", "frac"):
        y, want = getattr(x, name)(), getattr(t, name)()
        np.testing.assert_array_equal(y.data, want.detach().numpy(), err_msg=name)
        np.testing.assert_array_equal(np.signbit(y.data), np.signbit(want.detach().numpy()), err_msg=f"{name}: signs of zeros")
        np.testing.assert_array_equal(getattr(mg, name)(x).data, y.data)
        (grad,), (their_grad,) = mg.gradients(y.sum(), [x]), torch.autograd.grad(want.sum(), [t])
        np.testing.assert_array_equal(grad.data, their_grad.numpy(), err_msg=f"{name}: gradient")
    np.testing.assert_array_equal(mg.round(x, decimals=2).data, torch.round(t, decimals=2).detach().numpy())
    np.testing.assert_array_equal(mg.tensor([1.2345, -2.675]).round(decimals=3).data, torch.tensor([1.2345, -2.675], dtype=torch.float64).round(decimals=3).numpy())
    integers = mg.tensor(np.array([-3, 0, 7]))
    for name in ("floor", "ceil", "trunc", "round"):
        assert getattr(integers, name)().dtype == np.int64 and getattr(torch.tensor([-3, 0, 7]), name)().dtype == torch.int64
    assert mg.tensor(np.float32([1.5])).floor().dtype == np.float32
    x.grad = None
    (x.round() * x + x.frac()).sum().backward()
    t.grad = None
    (t.round() * t + t.frac()).sum().backward()
    np.testing.assert_array_equal(x.grad.data, t.grad.numpy())
    finite = values[np.isfinite(values)]
    value, (grad,) = jit.compile(lambda v: (v.floor() * v + v.ceil() + v.round() * v.trunc()).sum(), backend="numba", backward=True)(finite)
    want_value, (want,) = mg.value_and_grad(lambda v: (v.floor() * v + v.ceil() + v.round() * v.trunc()).sum(), argnums=(0,))(mg.tensor(finite))
    np.testing.assert_array_equal(value.data, want_value.data)
    np.testing.assert_array_equal(grad.data, want.data)
