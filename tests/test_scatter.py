"""PyTorch's scatter and index writes, search and creation functions, in-place random initializers
and gradient hooks, against torch in float64: values, and gradients to second order where torch
differentiates (`oracles.compare_with_torch`)."""

import math

import numpy as np
import pytest
import torch
from oracles import compare_with_torch as _compare

import minigrad as mg
from minigrad.errors import DtypeError, GraphError, ShapeError


def _cut(src, index):
    """src's first index.shape elements: torch differentiates a scatter only with src that shape
    (minigrad takes the larger src itself, and its gradient is zero past them)."""
    return src[tuple(slice(n) for n in index.shape)]


def _rows_of_permutations(rng, rows, n, k):
    """(rows, k) indices, each row k distinct positions in [0, n): a scatter without repeats."""
    return np.stack([rng.permutation(n)[:k] for _ in range(rows)])


# --------------------------------------------------------------------------- the scatter family
def _scatter_cases(rng):
    """{name: (minigrad function, torch function, inputs)}: every writing function, along several
    dims (negative ones too), with repeated positions where the function accumulates, src larger
    than the index where torch allows it."""
    x, src = rng.standard_normal((4, 5)), rng.standard_normal((5, 6))
    unique_dim1 = _rows_of_permutations(rng, 3, 5, 4)  # (3, 4): along dim 1 of x, src (5, 6)
    unique_dim0 = _rows_of_permutations(rng, 5, 4, 3).T  # (3, 5): along dim 0, each column distinct
    repeats = rng.integers(0, 4, (6, 5))  # along dim 0 (4 rows), every column repeats
    mask = rng.random(5) < 0.5  # broadcast over the rows of x
    mask[:2] = True, False
    t = torch.from_numpy
    cases = {
        "scatter_dim1": (lambda a, s: mg.scatter(a, 1, unique_dim1, s), lambda a, s: torch.scatter(a, 1, t(unique_dim1), _cut(s, unique_dim1)), [x, src]),
        "scatter_dim-2": (lambda a, s: a.scatter(-2, unique_dim0, s), lambda a, s: a.scatter(-2, t(unique_dim0), _cut(s, unique_dim0)), [x, src]),
        "scatter_value": (lambda a: a.scatter(1, unique_dim1, value=2.5), lambda a: a.scatter(1, t(unique_dim1), value=2.5), [x]),
        "scatter_number": (lambda a: mg.scatter(a, 0, unique_dim0, -1.0), lambda a: torch.scatter(a, 0, t(unique_dim0), -1.0), [x]),
        "scatter_add": (lambda a, s: mg.scatter_add(a, 0, repeats, s), lambda a, s: torch.scatter_add(a, 0, t(repeats), _cut(s, repeats)), [x, rng.standard_normal((6, 7))]),
        "scatter_add_dim-1": (lambda a, s: a.scatter_add(-1, repeats.T[:4] % 5, s), lambda a, s: a.scatter_add(-1, t(repeats.T[:4] % 5), _cut(s, repeats.T[:4])), [x, src]),
        # torch differentiates neither deprecated form: compare with the scatter_reduce each one is
        "scatter_reduce_add": (lambda a, s: a.scatter(0, repeats, s, reduce="add"), lambda a, s: a.scatter_reduce(0, t(repeats), s, "sum"), [x, rng.standard_normal((6, 5))]),
        "scatter_reduce_multiply": (lambda a, s: a.scatter(0, repeats, s, reduce="multiply"), lambda a, s: a.scatter_reduce(0, t(repeats), s, "prod"), [x, rng.standard_normal((6, 5))]),
        "index_add": (lambda a, s: mg.index_add(a, 1, [4, 0, 4, 2], s, alpha=2.0), lambda a, s: torch.index_add(a, 1, t(np.array([4, 0, 4, 2])), s, alpha=2.0), [x, rng.standard_normal((4, 4))]),
        "index_add_dim-2": (lambda a, s: a.index_add(-2, np.array([3, 3, 1]), s), lambda a, s: a.index_add(-2, t(np.array([3, 3, 1])), s), [x, rng.standard_normal((3, 5))]),
        "index_copy": (lambda a, s: mg.index_copy(a, 0, np.array([2, 0]), s), lambda a, s: torch.index_copy(a, 0, t(np.array([2, 0])), s), [x, rng.standard_normal((2, 5))]),
        "index_fill_tensor_value": (lambda a, v: mg.index_fill(a, -1, np.array([4, 1]), v), lambda a, v: torch.index_fill(a, -1, t(np.array([4, 1])), v), [x, np.array(0.7)]),
        "index_fill_number": (lambda a: a.index_fill(0, np.array([1, 3, 1]), 4.0), lambda a: a.index_fill(0, t(np.array([1, 3, 1])), 4.0), [x]),
        "index_put": (lambda a, v: mg.index_put(a, (np.array([0, 3]), np.array([-1, 2])), v), lambda a, v: torch.index_put(a, (t(np.array([0, 3])), t(np.array([-1, 2]))), v), [x, rng.standard_normal(2)]),
        "index_put_broadcast": (lambda a, v: a.index_put((np.array([2, 0]),), v), lambda a, v: a.index_put((t(np.array([2, 0])),), v), [x, rng.standard_normal(5)]),
        "index_put_accumulate": (lambda a, v: a.index_put((np.array([1, 1, 2]), np.array([0, 0, 4])), v, accumulate=True),
                                 lambda a, v: a.index_put((t(np.array([1, 1, 2])), t(np.array([0, 0, 4]))), v, accumulate=True), [x, rng.standard_normal(3)]),
        "put": (lambda a, s: mg.put(a, np.array([[0, 19], [-2, 7]]), s), lambda a, s: torch.put(a, t(np.array([[0, 19], [-2, 7]])), s), [x, rng.standard_normal((2, 2))]),
        "put_accumulate": (lambda a, s: a.put(np.array([3, 3, -20]), s, accumulate=True), lambda a, s: a.put(t(np.array([3, 3, -20])), s, accumulate=True), [x, rng.standard_normal(3)]),
        "masked_scatter": (lambda a, s: mg.masked_scatter(a, mask, s), lambda a, s: torch.masked_scatter(a, t(mask), s), [x, rng.standard_normal(21)]),
    }
    return cases


_SCATTER_CASES = (
    "index_add", "index_add_dim-2", "index_copy", "index_fill_number", "index_fill_tensor_value", "index_put", "index_put_accumulate",
    "index_put_broadcast", "masked_scatter", "put", "put_accumulate", "scatter_add", "scatter_add_dim-1", "scatter_dim-2", "scatter_dim1",
    "scatter_number", "scatter_reduce_add", "scatter_reduce_multiply", "scatter_value",
)


@pytest.mark.parametrize("name", _SCATTER_CASES)
def test_scatter_family_matches_torch_to_second_order(name, rng):
    cases = _scatter_cases(rng)
    assert sorted(cases) == sorted(_SCATTER_CASES)
    mg_fn, torch_fn, arrays = cases[name]
    _compare(mg_fn, torch_fn, arrays, second=True)


@pytest.mark.parametrize("name", _SCATTER_CASES)
def test_scatter_family_forward_mode_matches_torchs_jacobian(name, rng):
    """mg.jvp (each primitive's JVP rule) against J v from torch's Jacobian (its reverse mode)."""
    mg_fn, torch_fn, arrays = _scatter_cases(rng)[name]
    tangents = [rng.standard_normal(a.shape) for a in arrays]
    _, got = mg.jvp(mg_fn, [mg.tensor(a) for a in arrays], [mg.tensor(t) for t in tangents])
    jacobians = torch.autograd.functional.jacobian(torch_fn, tuple(torch.tensor(a) for a in arrays))
    want = sum(np.tensordot(j.numpy(), t, axes=t.ndim) for j, t in zip(jacobians, tangents))
    np.testing.assert_allclose(got.data, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dim", [0, -1])
def test_scatter_reduce_with_repeated_positions_matches_torch_to_second_order(reduce, include_self, dim, rng):
    x, src = rng.standard_normal((4, 5)), rng.standard_normal((6, 7))
    index = rng.integers(0, 4, (6, 5)) if dim == 0 else rng.integers(0, 5, (4, 7))
    index[0, 0] = index[1, 0] if dim == 0 else index[0, 1]  # a repeated position, certainly
    _compare(
        lambda a, s: mg.scatter_reduce(a, dim, index, s, reduce, include_self=include_self),
        lambda a, s: torch.scatter_reduce(a, dim, torch.from_numpy(index), _cut(s, index), reduce, include_self=include_self),
        [x, src],
        second=True,
    )


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_amax_and_amin_share_the_gradient_between_ties_as_torch(reduce):
    x = np.array([[1.0, 2.0, 3.0], [3.0, -1.0, 0.0]])
    src = np.array([[3.0, 2.0, 0.0], [3.0, 2.0, -1.0], [1.0, -1.0, 3.0]])  # ties with each other and with x
    index = np.array([[0, 0, 1], [0, 1, 1], [1, 1, 0]])
    for include_self, a in [(True, x), (False, x + 100.0)]:  # excluded, x is kept out of the ties: see the next test
        _compare(
            lambda a, s: a.scatter_reduce(0, index, s, reduce, include_self=include_self),
            lambda a, s: a.scatter_reduce(0, torch.from_numpy(index), s, reduce, include_self=include_self),
            [a, src],
            second=True,
        )


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_an_excluded_self_takes_no_share_of_the_gradient_where_torch_gives_it_one(reduce):
    """With include_self=False, torch still counts an input element equal to the result among the
    ties (its rule's N_to_distribute ignores include_self), halving the gradient of a src element
    that alone attains the maximum; here it gets all of it, the derivative (central differences
    through the forward say 1)."""
    x, src, index = np.array([5.0, 0.0]), np.array([5.0, 3.0]), np.array([0, 1])
    s = mg.tensor(src, requires_grad=True)
    mg.scatter_reduce(mg.tensor(x), 0, index, s, reduce, include_self=False).sum().backward()
    np.testing.assert_array_equal(s.grad.data, [1.0, 1.0])
    ts = torch.tensor(src, requires_grad=True)
    torch.scatter_reduce(torch.tensor(x), 0, torch.from_numpy(index), ts, reduce, include_self=False).sum().backward()
    np.testing.assert_array_equal(ts.grad.numpy(), [0.5, 1.0])  # torch's, until it is fixed


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_through_zeros_matches_torch(include_self, rng):
    x, src = rng.standard_normal((3, 4)), rng.standard_normal((4, 4))
    x[1, 2] = src[0, 1] = src[2, 3] = 0.0
    index = np.array([[1, 0, 2, 2], [1, 2, 0, 2], [0, 0, 1, 1], [2, 1, 2, 0]])  # at most one zero to each position
    _compare(
        lambda a, s: a.scatter_reduce(0, index, s, "prod", include_self=include_self),
        lambda a, s: a.scatter_reduce(0, torch.from_numpy(index), s, "prod", include_self=include_self),
        [x, src],
        second=True,
    )


def test_two_zeros_to_one_position_give_prod_a_gradient_where_torch_has_only_the_first_order(rng):
    """torch refuses the double backward of a prod with two zeros sent to one position; minigrad's
    product is a tree of multiplications, whose second derivative exists: it is checked against
    torch's second derivative of the same product written out as a multiplication."""
    x, src = rng.standard_normal(2), np.array([0.0, 0.0, 1.5])
    index = np.array([1, 1, 1])
    _compare(lambda a, s: a.scatter_reduce(0, index, s, "prod"), lambda a, s: a.scatter_reduce(0, torch.from_numpy(index), s, "prod"), [x, src])
    _compare(
        lambda a, s: a.scatter_reduce(0, index, s, "prod"),
        lambda a, s: torch.stack([a[0], a[1] * s[0] * s[1] * s[2]]),
        [x, src],
        second=True,
    )


def test_integer_scatter_reduce_floors_the_mean_and_keeps_the_dtype_as_torch():
    x, src, index = np.array([1, 0, 7]), np.array([1, 2, -3, -4, 5]), np.array([0, 0, 1, 1, 1])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            got = mg.scatter_reduce(mg.tensor(x), 0, index, mg.tensor(src), reduce, include_self=include_self)
            want = torch.scatter_reduce(torch.from_numpy(x), 0, torch.from_numpy(index), torch.from_numpy(src), reduce, include_self=include_self)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got.data, want.numpy(), err_msg=f"{reduce}, include_self={include_self}")


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.uint8])
def test_indices_of_any_integer_dtype_and_shape(dtype, rng):
    x, src = rng.standard_normal((3, 4, 5)), rng.standard_normal((3, 2, 5))
    index = rng.integers(0, 4, (3, 2, 5)).astype(dtype)
    got = mg.scatter_add(mg.tensor(x), -2, mg.tensor(index), mg.tensor(src))
    want = torch.scatter_add(torch.tensor(x), -2, torch.from_numpy(index.astype(np.int64)), torch.tensor(src))
    np.testing.assert_allclose(got.data, want.numpy(), rtol=1e-12)
    picked = np.array([3, 0, 3], dtype=dtype)
    got = mg.index_add(mg.tensor(x), 1, mg.tensor(picked), mg.tensor(src[:, :1].repeat(3, axis=1)))
    want = torch.index_add(torch.tensor(x), 1, torch.from_numpy(picked.astype(np.int64)), torch.tensor(src[:, :1].repeat(3, axis=1)))
    np.testing.assert_allclose(got.data, want.numpy(), rtol=1e-12)


def test_repeated_positions_in_scatter_write_the_last_value_as_torch_and_it_alone_gets_the_gradient():
    """Where scatter's index repeats a position, torch's CPU kernel writes the last src element
    (its docs leave it undefined) and its rule hands every repeated element the position's
    gradient; here the element written gets it, the derivative of what was computed."""
    x, src, index = np.zeros(5), np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 1, 3])
    want = torch.zeros(5, dtype=torch.float64).scatter(0, torch.from_numpy(index), torch.from_numpy(src))
    s = mg.tensor(src, requires_grad=True)
    out = mg.scatter(mg.tensor(x), 0, index, s)
    np.testing.assert_array_equal(out.data, want.numpy())
    (out * mg.tensor([1.0, 10.0, 100.0, 1000.0, 1e4])).sum().backward()
    np.testing.assert_array_equal(s.grad.data, [0.0, 0.0, 10.0, 1000.0])
    a = mg.tensor(x, requires_grad=True)
    mg.index_copy(a, 0, np.array([2, 2]), mg.tensor([5.0, 6.0])).sum().backward()
    np.testing.assert_array_equal(a.grad.data, [1.0, 1.0, 0.0, 1.0, 1.0])


def test_one_hot_by_scatter_in_place_as_pytorch_code_writes_it(rng):
    labels = rng.integers(0, 4, 6)
    got = mg.zeros(6, 4).scatter_(1, mg.tensor(labels).unsqueeze(1), 1.0)
    want = torch.zeros(6, 4, dtype=torch.float64).scatter_(1, torch.from_numpy(labels).unsqueeze(1), 1.0)
    np.testing.assert_array_equal(got.data, want.numpy())


def _in_place_cases(rng):
    x = rng.standard_normal((3, 4))
    index = rng.integers(0, 3, (2, 4))
    src = rng.standard_normal((2, 4))
    mask = rng.random((3, 4)) < 0.5
    return x, [
        ("scatter_", (0, index, src)), ("scatter_", (1, index % 4, 2.0)), ("scatter_add_", (0, index, src)),
        ("scatter_reduce_", (0, index, src, "amax")), ("index_add_", (1, np.array([0, 3]), src.T[:3])),
        ("index_copy_", (0, np.array([2, 0]), src)), ("index_fill_", (1, np.array([1]), -3.0)),
        ("index_put_", ((np.array([0, 2]), np.array([1, 1])), src[0, :2], True)), ("put_", (np.array([0, 11]), src[1, :2])),
        ("masked_scatter_", (mask, rng.standard_normal(12))),
    ]


def _as_torch(value):
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value)
    return tuple(_as_torch(v) for v in value) if isinstance(value, tuple) else value


def _as_mg(value):
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return mg.tensor(value)
    return tuple(_as_mg(v) for v in value) if isinstance(value, tuple) else value


def test_in_place_forms_change_the_tensor_itself_as_torchs_do(rng):
    x, cases = _in_place_cases(rng)
    for name, args in cases:
        t, want = mg.tensor(x), torch.tensor(x)
        assert getattr(t, name)(*_as_mg(args)) is t, name
        getattr(want, name)(*_as_torch(args))
        np.testing.assert_allclose(t.data, want.numpy(), rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(getattr(mg.tensor(x), name[:-1])(*_as_mg(args)).data, want.numpy(), rtol=1e-12, err_msg=name[:-1])


def test_in_place_forms_are_refused_while_gradients_are_recorded_as_fill_is(rng):
    x, cases = _in_place_cases(rng)
    for name, args in cases:
        leaf = mg.tensor(x, requires_grad=True)
        with pytest.raises(GraphError, match=name):
            getattr(leaf, name)(*_as_mg(args))
        with mg.no_grad():
            getattr(leaf, name)(*_as_mg(args))
        assert leaf.is_leaf and leaf.requires_grad
    source = mg.tensor(np.ones((2, 4)), requires_grad=True)
    with pytest.raises(GraphError, match="scatter_add_"):
        mg.zeros(3, 4).scatter_add_(0, np.zeros((2, 4), dtype=np.int64), source)


def test_bad_indices_are_refused_naming_the_operation_the_index_and_the_shape():
    x = mg.zeros(3, 4)
    for call, name, value in [
        (lambda: x.scatter(1, np.array([[0], [4]]), 1.0), "scatter", 4),
        (lambda: x.scatter(0, np.array([[-1, 0]]), mg.ones(1, 2)), "scatter", -1),  # torch refuses negative ones too
        (lambda: x.scatter_add(0, np.array([[3]]), mg.ones(1, 1)), "scatter_add", 3),
        (lambda: x.scatter_reduce(1, np.array([[7]]), mg.ones(1, 1), "mean"), "scatter_reduce", 7),
        (lambda: x.index_add(1, np.array([0, 4]), mg.ones(3, 2)), "index_add", 4),
        (lambda: x.index_copy(0, np.array([-1]), mg.ones(1, 4)), "index_copy", -1),
        (lambda: x.index_fill(1, np.array([-5]), 0.0), "index_fill", -5),
        (lambda: x.put(np.array([12]), mg.ones(1)), "put", 12),
        (lambda: x.index_put((np.array([3]),), mg.ones(4)), "index_put", 3),
    ]:
        with pytest.raises(ShapeError, match=rf"{name}: .*index {value} is out of \S+ for .*\(3, 4\)"):
            call()
    np.testing.assert_array_equal(x.index_fill(1, np.array([-4, -1]), 1.0).data, torch.zeros(3, 4).index_fill(1, torch.tensor([-4, -1]), 1.0).numpy())
    np.testing.assert_array_equal(x.put(np.array([-12]), mg.ones(1)).data, torch.zeros(3, 4).put(torch.tensor([-12]), torch.ones(1)).numpy())


def test_bad_arguments_are_refused_as_torch_refuses_them():
    x = mg.zeros(3, 4)
    with pytest.raises(DtypeError, match="scatter: src has dtype float32"):
        x.scatter(0, np.zeros((1, 4), dtype=np.int64), mg.ones(1, 4, dtype=np.float32))
    with pytest.raises(DtypeError, match="index_add: source"):
        x.index_add(0, np.array([0]), mg.ones(1, 4, dtype=np.float32))
    with pytest.raises(ShapeError, match=r"scatter_add: index \(shape \(1, 5\)\)"):
        x.scatter_add(0, np.zeros((1, 5), dtype=np.int64), mg.ones(1, 5))  # longer than x outside dim 0
    with pytest.raises(ShapeError, match="no longer than src"):
        x.scatter(0, np.zeros((2, 4), dtype=np.int64), mg.ones(1, 4))
    with pytest.raises(ShapeError, match="index must hold integers"):
        x.scatter(0, np.zeros((1, 4)), 1.0)
    with pytest.raises(ShapeError, match=r"index_copy: source needs the shape \(2, 4\)"):
        x.index_copy(0, np.array([0, 1]), mg.ones(4, 2))
    with pytest.raises(ValueError, match="scatter_reduce: reduce must be one of"):
        x.scatter_reduce(0, np.zeros((1, 4), dtype=np.int64), mg.ones(1, 4), "max")
    with pytest.raises(ValueError, match="scatter: reduce must be"):
        x.scatter(0, np.zeros((1, 4), dtype=np.int64), mg.ones(1, 4), reduce="mean")
    with pytest.raises(TypeError, match="src .* or value="):
        x.scatter(0, np.zeros((1, 4), dtype=np.int64))
    with pytest.raises(ShapeError, match="masked_scatter: the mask has 12 true elements but source only 3"):
        x.masked_scatter(np.ones((3, 4), dtype=bool), mg.ones(3))
    with pytest.raises(ShapeError, match="put: source has 2 elements and index 1"):
        x.put(np.array([0]), mg.ones(2))
    with pytest.raises(ShapeError, match="masked_scatter_: cannot write a value of shape"):
        mg.zeros(4).masked_scatter_(np.ones((2, 4), dtype=bool), mg.ones(8))  # the result would not fit x


def test_empty_indices_leave_a_copy():
    x = mg.tensor([[1.0, 2.0]], requires_grad=True)
    for out in (x.scatter_add(0, np.zeros((0, 2), dtype=np.int64), mg.ones(0, 2)), x.scatter_reduce(1, np.zeros((1, 0), dtype=np.int64), mg.ones(1, 0), "amax")):
        assert out is not x
        np.testing.assert_array_equal(out.data, x.data)
        np.testing.assert_array_equal(mg.gradients(out.sum(), [x])[0].data, [[1.0, 1.0]])


# --------------------------------------------------------------------------- search and creation
def _same(got, want):
    """A minigrad result (a tensor or a tuple of them) equal to torch's, dtype for dtype."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert isinstance(got, mg.Tensor) and got.shape == tuple(want.shape), (got, want)
    assert got.dtype == want.numpy().dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.data, want.numpy())


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_unique_and_unique_consecutive_match_torch(dim, rng):
    data = rng.integers(0, 3, (6, 4))
    data[1] = data[0]  # a repeated row (along dim 0), next to the first
    if dim is not None:
        data[:, 3] = data[:, 1]  # a repeated column, not next to the first
    for inverse in (False, True):
        for counts in (False, True):
            for name in ("unique", "unique_consecutive"):
                keywords = dict(return_inverse=inverse, return_counts=counts, dim=dim)
                _same(getattr(mg, name)(mg.tensor(data), **keywords), getattr(torch, name)(torch.from_numpy(data), **keywords))
    _same(mg.tensor(data.astype(float)).unique(sorted=True, return_counts=True), torch.from_numpy(data.astype(float)).unique(sorted=True, return_counts=True))
    _same(mg.tensor(data.astype(float)).unique_consecutive(return_inverse=True), torch.from_numpy(data.astype(float)).unique_consecutive(return_inverse=True))


def test_bucketize_and_searchsorted_match_torch(rng):
    boundaries = np.array([-1.0, 0.0, 0.0, 1.5, 3.0])
    values = np.concatenate([rng.uniform(-2, 4, 13), boundaries]).reshape(3, 2, -1)
    rows = np.sort(rng.standard_normal((3, 2, 6)), axis=-1)
    t = torch.from_numpy
    for right in (False, True):
        _same(mg.bucketize(mg.tensor(values), mg.tensor(boundaries), right=right), torch.bucketize(t(values), t(boundaries), right=right))
        _same(mg.bucketize(1.5, mg.tensor(boundaries), right=right, out_int32=True), torch.bucketize(1.5, t(boundaries), right=right, out_int32=True))
        _same(mg.searchsorted(mg.tensor(boundaries), mg.tensor(values), right=right), torch.searchsorted(t(boundaries), t(values), right=right))
        _same(mg.searchsorted(mg.tensor(rows), mg.tensor(values[..., :4]), right=right), torch.searchsorted(t(rows), t(values[..., :4]), right=right))
    for side in ("left", "right"):
        _same(mg.searchsorted(mg.tensor(boundaries), 0.0, side=side), torch.searchsorted(t(boundaries), 0.0, side=side))
    shuffled = rng.permutation(boundaries)
    sorter = np.argsort(shuffled, kind="stable")
    _same(mg.searchsorted(mg.tensor(shuffled), mg.tensor(values), sorter=mg.tensor(sorter)), torch.searchsorted(t(shuffled), t(values), sorter=t(sorter)))
    with pytest.raises(ValueError, match="side"):
        mg.searchsorted(mg.tensor(boundaries), mg.tensor(values), right=True, side="left")
    with pytest.raises(ShapeError, match="leading dims"):
        mg.searchsorted(mg.tensor(rows), mg.tensor(values[:2]))
    with pytest.raises(ShapeError, match="boundaries must be 1-D"):
        mg.bucketize(mg.tensor(values), mg.tensor(rows))


def test_cartesian_prod_and_combinations_match_torch_to_second_order(rng):
    a, b, c = rng.standard_normal(3), rng.standard_normal(2), rng.standard_normal(4)
    _compare(mg.cartesian_prod, torch.cartesian_prod, [a, b, c], second=True)
    _compare(mg.cartesian_prod, torch.cartesian_prod, [a], second=True)
    for r in (1, 2, 3):
        for replacement in (False, True):
            _compare(lambda x: mg.combinations(x, r, replacement), lambda x: torch.combinations(x, r, replacement), [c], second=True)
    _same(mg.combinations(mg.tensor([1, 2, 3]), r=2), torch.combinations(torch.tensor([1, 2, 3]), r=2))
    assert mg.combinations(mg.tensor(a), r=4).shape == tuple(torch.combinations(torch.tensor(a), r=4).shape) == (0, 4)
    assert mg.combinations(mg.tensor(a), r=0).shape == tuple(torch.combinations(torch.tensor(a), r=0).shape) == (0,)


@pytest.mark.parametrize("name", ["trapezoid", "trapz"])
def test_trapezoid_matches_torch_to_second_order(name, rng):
    y = rng.standard_normal((3, 5))
    mg_fn, torch_fn = getattr(mg, name), getattr(torch, name)
    _compare(mg_fn, torch_fn, [y], second=True)
    _compare(lambda v: mg_fn(v, dx=0.3, dim=0), lambda v: torch_fn(v, dx=0.3, dim=0), [y], second=True)
    _compare(lambda v, x: mg_fn(v, x), lambda v, x: torch_fn(v, x), [y, np.sort(rng.standard_normal(5))], second=True)
    _compare(lambda v, x: mg_fn(v, x, dim=-2), lambda v, x: torch_fn(v, x, dim=-2), [y, rng.standard_normal(3)], second=True)
    _compare(lambda v, x: mg_fn(v, x, dim=1), lambda v, x: torch_fn(v, x, dim=1), [y, rng.standard_normal((3, 5))], second=True)
    _compare(lambda v, x: mg_fn(v, x), lambda v, x: torch_fn(v, x), [y, rng.standard_normal((1, 5))], second=True)  # x broadcast
    with pytest.raises(ShapeError, match="1-D x needs the 5 points"):
        mg_fn(mg.tensor(y), mg.tensor(np.arange(4.0)))


def test_vander_matches_torch_to_second_order_at_zero_too(rng):
    """torch's own vander has no working backward (2.13 reports an in-place change of a saved
    tensor): the derivatives are compared with torch's of the powers written out."""
    x = rng.standard_normal(4)
    x[1] = 0.0

    def powers(v, n, increasing):
        columns = [v**k for k in range(len(v) if n is None else n)]
        return torch.stack(columns if increasing else columns[::-1], dim=1)

    for n in (None, 1, 3, 6):
        for increasing in (False, True):
            np.testing.assert_allclose(mg.vander(mg.tensor(x), n, increasing).data, torch.vander(torch.from_numpy(x), n, increasing).numpy(), rtol=1e-14)
            if n != 1:  # a constant column of ones, which torch will not differentiate
                _compare(lambda v: mg.vander(v, n, increasing), lambda v: powers(v, n, increasing), [x], second=True)
    _same(mg.vander(mg.tensor([1, 2, 3])), torch.vander(torch.tensor([1, 2, 3])))
    assert mg.vander(mg.tensor(x), N=0).shape == tuple(torch.vander(torch.tensor(x), N=0).shape) == (4, 0)


def test_atleast_nd_shape_as_torch():
    shapes = [(), (3,), (2, 3), (2, 3, 4), (1, 2, 3, 4)]
    for ndim in (1, 2, 3):
        mg_fn, torch_fn = getattr(mg, f"atleast_{ndim}d"), getattr(torch, f"atleast_{ndim}d")
        tensors = [np.zeros(s) for s in shapes]
        for a in tensors:
            got, want = mg_fn(mg.tensor(a)), torch_fn(torch.from_numpy(a))
            assert isinstance(got, mg.Tensor) and got.shape == tuple(want.shape), (ndim, a.shape)
        for args in ([mg.tensor(a) for a in tensors], [[mg.tensor(a) for a in tensors]]):
            got = mg_fn(*args)
            want = torch_fn(*([torch.from_numpy(a) for a in tensors] if len(args) > 1 else [[torch.from_numpy(a) for a in tensors]]))
            assert isinstance(got, tuple) and [g.shape for g in got] == [tuple(w.shape) for w in want]
    x = mg.tensor(2.0, requires_grad=True)
    mg.atleast_3d(x).sum().backward()
    assert x.grad.item() == 1.0


@pytest.mark.parametrize("offset, dim1, dim2", [(0, -2, -1), (1, 0, 2), (-2, -1, 0), (2, 1, -3)])
def test_diag_embed_matches_torch_to_second_order(offset, dim1, dim2, rng):
    _compare(lambda x: mg.diag_embed(x, offset, dim1, dim2), lambda x: torch.diag_embed(x, offset, dim1, dim2), [rng.standard_normal((2, 3))], second=True)
    _compare(lambda x: x.diag_embed(offset) * x.sum(), lambda x: x.diag_embed(offset) * x.sum(), [rng.standard_normal(4)], second=True)
    with pytest.raises(ShapeError, match="repeated dim"):
        mg.diag_embed(mg.zeros(3), 0, 0, -2)


def test_logspace_matches_torch():
    for start, end, steps, base in [(0, 2, 3, 10.0), (-1.5, 3.0, 7, 2.0), (1, 1, 1, 10.0), (0, 1, 0, 10.0)]:
        got, want = mg.logspace(start, end, steps, base=base), torch.logspace(start, end, steps, base=base, dtype=torch.float64)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got.data, want.numpy(), rtol=1e-13)
    assert mg.logspace(0, 1, 4, dtype=mg.float32).dtype == np.float32


@pytest.mark.parametrize("dim, keepdim", [(-1, False), (0, True), (1, False)])
def test_mode_matches_torch_smallest_of_ties_at_its_last_occurrence(dim, keepdim, rng):
    data = rng.integers(0, 4, (5, 7))
    got, want = mg.mode(mg.tensor(data), dim, keepdim), torch.mode(torch.from_numpy(data), dim, keepdim)
    _same(tuple(got), tuple(want))
    floats = data.astype(float) + 0.25
    _compare(lambda x: x.mode(dim, keepdim).values, lambda x: x.mode(dim, keepdim).values, [floats])
    _same(tuple(mg.mode(mg.tensor(floats), dim, keepdim)), tuple(torch.mode(torch.from_numpy(floats), dim, keepdim)))
    _same(tuple(mg.mode(mg.tensor(3.0))), tuple(torch.mode(torch.tensor(3.0, dtype=torch.float64))))


def test_histc_matches_torch(rng):
    x = rng.standard_normal(200)
    for bins, low, high in [(10, 0, 0), (7, -1.0, 1.0), (4, 0.0, 0.5), (1, 0, 0)]:
        got, want = mg.histc(mg.tensor(x), bins, low, high), torch.histc(torch.from_numpy(x), bins, low, high)
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got.data, want.numpy(), err_msg=f"bins={bins}, [{low}, {high}]")
    for data in ([1.0, 1.0, 1.0], []):
        np.testing.assert_array_equal(mg.tensor(data).histc(bins=4).data, torch.tensor(data).histc(bins=4).numpy())
    with pytest.raises(ValueError, match="min 1.0 is greater than max 0.0"):
        mg.histc(mg.tensor(x), 3, 1.0, 0.0)


def _ks_distance(sample, cdf):
    """The Kolmogorov–Smirnov distance between a sample and a distribution's CDF (torch's)."""
    s = np.sort(np.asarray(sample, dtype=np.float64).reshape(-1))
    f = cdf(torch.from_numpy(s)).numpy()
    n = len(s)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


def _f64(*values):
    return [torch.tensor(v, dtype=torch.float64) for v in values]


_KS = 1.63 / math.sqrt(20_000)  # the 1% critical distance for 20 000 draws: a wrong distribution lands far beyond


def test_normal_takes_torchs_forms_and_draws_normal_samples():
    mg.manual_seed(3)
    mean, std = mg.tensor(np.linspace(-2.0, 2.0, 20_000)), mg.tensor(np.linspace(0.5, 3.0, 20_000))
    draws = mg.normal(mean, std)
    assert draws.shape == (20_000,) and draws.dtype == np.float64 and not draws.requires_grad
    assert _ks_distance((draws.data - mean.data) / std.data, torch.distributions.Normal(*_f64(0.0, 1.0)).cdf) < _KS
    assert _ks_distance(mg.normal(1.5, 2.0, (100, 200)).data, torch.distributions.Normal(*_f64(1.5, 2.0)).cdf) < _KS
    assert _ks_distance(mg.normal(mg.full((20_000,), -1.0)).data, torch.distributions.Normal(*_f64(-1.0, 1.0)).cdf) < _KS
    assert _ks_distance(mg.normal(0.0, mg.full((20_000,), 0.1)).data, torch.distributions.Normal(*_f64(0.0, 0.1)).cdf) < _KS
    assert mg.normal(mg.zeros(2, 1), mg.ones(3)).shape == tuple(torch.normal(torch.zeros(2, 1), torch.ones(3)).shape)
    assert mg.normal(mg.zeros(3, dtype=mg.float32), 1.0).dtype == np.float32
    mg.manual_seed(11)
    first = mg.normal(0.0, 1.0, (5,))
    mg.manual_seed(11)
    np.testing.assert_array_equal(mg.normal(0.0, 1.0, (5,)).data, first.data)
    np.testing.assert_array_equal(mg.normal(0.0, 1.0, (5,), generator=mg.Generator().manual_seed(4)).data, mg.normal(0.0, 1.0, (5,), rng=np.random.default_rng(4)).data)
    with pytest.raises(TypeError, match="size"):
        mg.normal(0.0, 1.0)
    with pytest.raises(ValueError, match="std must be non-negative"):
        mg.normal(mg.zeros(3), -1.0)


# --------------------------------------------------------------------------- in-place initializers
_INITIALIZERS = {  # method, its arguments, the distribution's CDF (torch's)
    "normal_": ((0.5, 2.0), torch.distributions.Normal(*_f64(0.5, 2.0)).cdf),
    "uniform_": ((-1.0, 3.0), torch.distributions.Uniform(*_f64(-1.0, 3.0)).cdf),
    "exponential_": ((2.5,), torch.distributions.Exponential(*_f64(2.5)).cdf),
    "log_normal_": ((0.3, 0.7), torch.distributions.LogNormal(*_f64(0.3, 0.7)).cdf),
}


@pytest.mark.parametrize("name", sorted(_INITIALIZERS))
def test_continuous_initializers_draw_their_distribution_and_reproduce_under_manual_seed(name):
    args, cdf = _INITIALIZERS[name]
    mg.manual_seed(5)
    x = mg.zeros(100, 200)
    assert getattr(x, name)(*args) is x
    assert _ks_distance(x.data, cdf) < _KS
    y = mg.zeros(100, 200, dtype=mg.float32)
    mg.manual_seed(5)
    getattr(y, name)(*args)
    np.testing.assert_allclose(y.data, x.data, rtol=1e-6)  # the same draws, stored in float32
    a, b = mg.zeros(7), mg.zeros(7)
    getattr(a, name)(*args, generator=mg.Generator().manual_seed(9))
    getattr(b, name)(*args, generator=mg.Generator().manual_seed(9))
    np.testing.assert_array_equal(a.data, b.data)
    with pytest.raises(DtypeError, match=f"{name}: a float64 value cannot be stored in place in a tensor of dtype int64"):
        getattr(mg.zeros(3, dtype=mg.int64), name)(*args)


def test_discrete_initializers_draw_their_distribution(rng):
    mg.manual_seed(6)
    n = 40_000
    bernoulli = mg.zeros(n).bernoulli_(0.3)
    assert set(np.unique(bernoulli.data)) == {0.0, 1.0} and abs(bernoulli.data.mean() - 0.3) < 4 * math.sqrt(0.21 / n)
    probabilities = rng.uniform(0, 1, n)
    varying = mg.zeros(n, dtype=mg.int64).bernoulli_(mg.tensor(probabilities))
    assert varying.dtype == np.int64 and abs(varying.data.sum() - probabilities.sum()) < 4 * math.sqrt((probabilities * (1 - probabilities)).sum())
    geometric = mg.zeros(n, dtype=mg.int32).geometric_(0.25).data
    assert geometric.min() == 1 and abs(geometric.mean() - 4.0) < 4 * math.sqrt(0.75 / 0.25**2 / n)
    counts = np.bincount(mg.zeros(n).random_(3, 8).data.astype(np.int64), minlength=8)[3:]
    assert counts.sum() == n and np.abs(counts - n / 5).max() < 4 * math.sqrt(n / 5)
    assert set(np.unique(mg.zeros(1000, dtype=mg.int64).random_(4).data)) == {0, 1, 2, 3}
    top = mg.zeros(1000, dtype=mg.float32).random_().data
    assert top.min() >= 0 and top.max() <= 2**24 and top.max() > 2**23  # up to 2^24, float32's last exact integer
    assert mg.zeros(1000, dtype=np.uint8).random_().data.max() > 200
    assert mg.zeros(1000).random_(-5, None).data.max() > 2**52


def test_initializers_refuse_what_torch_refuses():
    for call, message in [
        (lambda x: x.normal_(0.0, -1.0), "normal_: expects std >= 0"),
        (lambda x: x.uniform_(2.0, 1.0), "uniform_: expects from <= to"),
        (lambda x: x.exponential_(0.0), "exponential_: expects lambd > 0"),
        (lambda x: x.geometric_(1.5), "geometric_: expects p in"),
        (lambda x: x.log_normal_(0.0, 0.0), "log_normal_: expects std > 0"),
        (lambda x: x.bernoulli_(1.2), "bernoulli_: expects probabilities"),
        (lambda x: x.random_(3, 2), "random_: expects from < to"),
    ]:
        with pytest.raises(ValueError, match=message):
            call(mg.zeros(3))
    with pytest.raises(ValueError, match="inside the range of uint8"):
        mg.zeros(3, dtype=np.uint8).random_(0, 1000)
    with pytest.raises(TypeError, match="random_: takes"):
        mg.zeros(3).random_(1, 2, 3)


def test_initializers_are_refused_on_a_parameter_while_gradients_are_recorded_and_run_under_no_grad():
    w = mg.zeros(4, 3, requires_grad=True)
    for name, args in [("normal_", ()), ("uniform_", (-0.1, 0.1)), ("bernoulli_", ()), ("exponential_", ()), ("geometric_", (0.5,)),
                       ("log_normal_", ()), ("random_", (5,)), ("fill_diagonal_", (1.0,))]:
        with pytest.raises(GraphError, match=f"{name}: in-place change of a leaf tensor"):
            getattr(w, name)(*args)
        with mg.no_grad():
            assert getattr(w, name)(*args) is w
        assert w.is_leaf and w.requires_grad


def test_nn_init_style_code_fills_weights_reproducibly():
    def init():
        mg.manual_seed(0)
        w = mg.zeros(8, 4, requires_grad=True)
        with mg.no_grad():
            bound = 1 / math.sqrt(4)
            w.uniform_(-bound, bound)
        return w

    first, second = init(), init()
    np.testing.assert_array_equal(first.data, second.data)
    assert np.abs(first.data).max() <= 0.5 and len(np.unique(first.data)) == 32


@pytest.mark.parametrize("shape, wrap", [((3, 3), False), ((5, 3), False), ((5, 3), True), ((7, 2), True), ((3, 5), True), ((2, 2, 2), False)])
def test_fill_diagonal_matches_torch(shape, wrap, rng):
    x = rng.standard_normal(shape)
    got, want = mg.tensor(x), torch.from_numpy(x.copy())
    assert got.fill_diagonal_(-7.0, wrap=wrap) is got
    want.fill_diagonal_(-7.0, wrap=wrap)
    np.testing.assert_array_equal(got.data, want.numpy())
    integers = mg.zeros(*shape, dtype=mg.int64).fill_diagonal_(3, wrap=wrap)
    np.testing.assert_array_equal(integers.data, torch.zeros(shape, dtype=torch.long).fill_diagonal_(3, wrap=wrap).numpy())
    with pytest.raises(ShapeError, match="all equal"):
        mg.zeros(2, 3, 2).fill_diagonal_(1.0)


# --------------------------------------------------------------------------- register_hook
def _hooked_gradients(lib, x0, hooks_for, create_graph=False):
    """Run the same small computation in minigrad or torch with the hooks `hooks_for(lib, x, z)`
    registers: the gradients of x (a leaf) and of z (an intermediate, retained) after backward."""
    x = lib.tensor(x0, requires_grad=True)
    z = x * x + x
    z.retain_grad()
    hooks_for(lib, x, z)
    loss = (z * z.sin()).sum()
    if create_graph:
        (g,) = (mg.gradients if lib is mg else torch.autograd.grad)(loss, [x], create_graph=True)
        second = (mg.gradients if lib is mg else torch.autograd.grad)((g * g).sum(), [x])[0]
        return g.detach().numpy(), second.numpy()
    loss.backward()
    return x.grad.numpy(), z.grad.numpy()


_HOOKS = {
    "double the leaf's gradient": lambda lib, x, z: x.register_hook(lambda g: g * 2),
    "clip the intermediate's gradient": lambda lib, x, z: z.register_hook(lambda g: g.clamp(-0.5, 0.5)),
    "both, then a hook that only looks": lambda lib, x, z: (x.register_hook(lambda g: g * 2), z.register_hook(lambda g: g.clamp(-0.5, 0.5)), z.register_hook(lambda g: None)),
    "two on one tensor, in order": lambda lib, x, z: (z.register_hook(lambda g: g + 1.0), z.register_hook(lambda g: g * 3.0)),
    "one that reads the graph": lambda lib, x, z: z.register_hook(lambda g: g * z),
}


@pytest.mark.parametrize("name", sorted(_HOOKS))
@pytest.mark.parametrize("create_graph", [False, True])
def test_hooks_change_gradients_as_torchs_do(name, create_graph, rng):
    x0 = rng.standard_normal(5)
    got = _hooked_gradients(mg, x0, _HOOKS[name], create_graph)
    want = _hooked_gradients(torch, x0, _HOOKS[name], create_graph)
    unhooked = _hooked_gradients(mg, x0, lambda lib, x, z: None, create_graph)
    for g, w, plain in zip(got, want, unhooked):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    assert any(not np.allclose(g, plain) for g, plain in zip(got, unhooked)), "the hook changed nothing"


def test_a_hook_sees_the_complete_gradient_once_per_backward_and_its_handle_removes_it(rng):
    x = mg.tensor(rng.standard_normal(3), requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.data.copy()))
    (x * 2.0 + x * x).sum().backward()  # two uses of x: one call, with their sum
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], 2.0 + 2 * x.data)
    doubling = x.register_hook(lambda g: g * 2)
    x.grad = None
    np.testing.assert_allclose(mg.gradients(x.sum(), [x])[0].data, 2.0)  # gradients() returns the hooked value, as torch.autograd.grad
    handle.remove()
    doubling.remove()
    doubling.remove()  # a second remove does nothing, as torch's
    x.sum().backward()
    np.testing.assert_allclose(x.grad.data, 1.0)
    assert len(seen) == 2


def test_hooks_refuse_what_torch_refuses():
    with pytest.raises(GraphError, match="register_hook: the tensor .* does not require grad"):
        mg.tensor([1.0]).register_hook(lambda g: g)
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g[:1])
    with pytest.raises(ShapeError, match=r"register_hook: hook '<lambda>' returned a gradient of shape \(1,\) for a tensor of shape \(2,\)"):
        (x * x).sum().backward()
