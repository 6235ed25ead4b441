"""Operations on several tensors, and numerically careful compositions of primitives."""

import builtins
import collections
import itertools
import math

import numpy as np

from . import ops
from .errors import DtypeError, ShapeError
from .tensor import Tensor, ValuesIndices, _refuse_while_tracing, tracing


def _dim(name, axis, dim, default):
    if dim is None:
        return axis
    if axis != default:
        raise TypeError(f"{name}: pass axis= or dim= (the same thing), not both")
    return dim


def _tensors(name, tensors):
    tensors = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    if not tensors:
        raise ShapeError(f"{name}: needs at least one tensor")
    return tensors


def concatenate(tensors, axis=0, *, dim=None):
    """Join tensors along an existing axis (`dim=` as in PyTorch)."""
    axis = _dim("concatenate", axis, dim, 0)
    tensors = _tensors("concatenate", tensors)
    return ops.concatenate(*tensors, axis=ops.single_axis(axis, tensors[0].ndim, "concatenate"))


def stack(tensors, axis=0, *, dim=None):
    """Join tensors along a new axis (`dim=` as in PyTorch)."""
    axis = _dim("stack", axis, dim, 0)
    tensors = _tensors("stack", tensors)
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise ShapeError(f"stack: all tensors need the same shape, got {sorted(shapes)}")
    ndim = tensors[0].ndim + 1  # the result's
    if not isinstance(axis, (int, np.integer)) or not -ndim <= axis < ndim:
        raise ShapeError(
            f"stack: axis {axis!r} is out of range for stacking tensors of shape {tensors[0].shape} "
            f"(the result has {ndim} dimensions: axis must be in [{-ndim}, {ndim - 1}])"
        )
    axis = int(axis) % ndim
    return concatenate([t.expand_dims(axis) for t in tensors], axis=axis)


def where(condition, x, y):
    """Elementwise `x if condition else y`; the condition is a constant (no gradient).

    A condition computed from a tensor that `minigrad.jit.compile` is tracing (`where(x > 0, ...)`)
    is an input of the `select` primitive instead, so the compiled program recomputes the mask.
    """
    if isinstance(x, (bool, int, float)) and isinstance(y, Tensor):
        x = _scalar_like(x, y)
    x = x if isinstance(x, Tensor) else Tensor(x)
    y = y if isinstance(y, Tensor) else _scalar_like(y, x)
    if isinstance(condition, Tensor) and condition.requires_grad:  # a traced mask (see Tensor._compare)
        return ops.select(condition, x, y)
    condition = condition.data if isinstance(condition, Tensor) else condition
    return ops.where(x, y, condition=np.asarray(condition, dtype=bool))  # lists and numpy bools too


def _scalar_like(value, other):
    """`value` as a tensor beside the tensor `other`: a Python number takes other's dtype where it
    fits (numpy's rule for Python scalars: 0.0 beside float32 is float32, 1.5 beside int64 is
    float64), as a PyTorch scalar does; anything else is converted to other's dtype."""
    if isinstance(value, (bool, int, float)):
        return Tensor(np.asarray(value, dtype=np.result_type(other.dtype, value)))
    return Tensor(value, dtype=other.dtype)


def tril(x, diagonal=0):
    """The lower triangle of the last two axes, the rest set to 0 (`torch.tril`): elements on and
    below the `diagonal`-th diagonal are kept. The gradient flows to the kept elements only."""
    return _triangle("tril", x, lambda rows, cols: np.tri(rows, cols, k=diagonal, dtype=bool))


def triu(x, diagonal=0):
    """The upper triangle of the last two axes, the rest set to 0 (`torch.triu`): elements on and
    above the `diagonal`-th diagonal are kept."""
    return _triangle("triu", x, lambda rows, cols: ~np.tri(rows, cols, k=diagonal - 1, dtype=bool))


def _triangle(name, x, mask):
    x = x if isinstance(x, Tensor) else Tensor(x)
    if x.ndim < 2:
        raise ShapeError(f"{name}: needs a matrix or a batch of them (at least 2 dimensions), got shape {x.shape}")
    return where(mask(*x.shape[-2:]), x, 0)


def gather(x, dim, index):
    """Elements of x picked along `dim` by the integer `index` (`torch.gather`, numpy's
    `take_along_axis`): out[i][j] = x[index[i][j]][j] for dim 0. The gradient adds back into the
    picked places (repeats accumulate)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    index = np.asarray(index.data if isinstance(index, Tensor) else index)
    dim = ops.single_axis(dim, x.ndim, "gather")
    if index.dtype.kind not in "iu" or index.ndim != x.ndim or builtins.any(i != dim and m > n for i, (m, n) in enumerate(zip(index.shape, x.shape))):
        raise ShapeError(
            f"gather: index must be an integer array with the {x.ndim} dimensions of x, no longer than x on "
            f"the other axes; got dtype {index.dtype} and shape {index.shape} for x of shape {x.shape} along dim {dim}"
        )
    if index.size and not (0 <= index.min() and index.max() < x.shape[dim]):
        raise ShapeError(f"gather: index values must lie in [0, {x.shape[dim]}) along dim {dim}; got {index.min()}..{index.max()}")
    grids = list(np.ogrid[tuple(slice(n) for n in index.shape)])
    grids[dim] = index
    return x[tuple(grids)]


def topk(x, k, dim=-1, largest=True, sorted=True):  # noqa: A002  (PyTorch's keyword)
    """The k largest (or, `largest=False`, smallest) elements along `dim` and where they are:
    `(values, indices)` as `torch.topk`, in order (largest first). The values are differentiable."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    dim = ops.single_axis(dim, x.ndim, "topk")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= x.shape[dim]:
        raise ShapeError(f"topk: k must be an int in [0, {x.shape[dim]}] for dim {dim} of shape {x.shape}, got {k!r}")
    data = _constant("topk (and sort, median, quantile: the order is computed from the values)", x)
    order = np.argsort(-data if largest else data, axis=dim, kind="stable")
    indices = np.take(order, np.arange(k), axis=dim)
    return ValuesIndices(gather(x, dim, indices), Tensor._result(indices, None))


def sort(x, dim=-1, descending=False, stable=False):
    """The elements in order along `dim` and where they came from: `(values, indices)`, as
    `torch.sort` (ties keep their order: the sort is always stable). The values are differentiable."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    if x.ndim == 0:
        raise ShapeError("sort: needs at least one dimension, got a 0-d tensor")
    dim = ops.single_axis(dim, x.ndim, "sort")
    return topk(x, x.shape[dim], dim=dim, largest=descending)


def argsort(x, dim=-1, descending=False, stable=False):
    """The indices that sort `x` along `dim` (`sort(...).indices`)."""
    return sort(x, dim, descending).indices


def msort(input):  # noqa: A002  (PyTorch's names)
    """The values sorted along the first dimension (`torch.msort`, `sort(input, dim=0).values`)."""
    return sort(input, 0).values


def cummax(input, dim):  # noqa: A002  (PyTorch's names)
    """The running maximum along `dim` and where each was attained: `(values, indices)` as
    `torch.cummax`. A tie goes to the later index, and from a NaN on the values are NaN, at the
    latest NaN's index, as there. The values are gathered from the input, so the gradient goes to
    the element each came from (every order: a gather is linear)."""
    return _running_extreme("cummax", input, dim, np.maximum)


def cummin(input, dim):  # noqa: A002  (PyTorch's names)
    """The running minimum along `dim` and where each was attained: `(values, indices)` as
    `torch.cummin` (ties and NaN as in `cummax`)."""
    return _running_extreme("cummin", input, dim, np.minimum)


def _running_extreme(name, input, dim, extreme):  # noqa: A002  (PyTorch's names)
    x = _tensor(input)
    if x.ndim == 0:  # PyTorch takes a 0-d tensor as one element along dim 0
        values, indices = _running_extreme(name, x.reshape(1), 0, extreme)
        return ValuesIndices(values.reshape(()), indices.reshape(()))
    dim = ops.single_axis(dim, x.ndim, name)
    data = _constant(name, x)
    running = extreme.accumulate(data, axis=dim)  # NaN from the first NaN on
    # Where the running value is this element's (PyTorch's x >= running for cummax, or x a NaN);
    # each index is the latest such place so far.
    reached = (data == running) | np.isnan(data)
    positions = np.arange(x.shape[dim], dtype=np.int64).reshape([-1 if i == dim else 1 for i in range(x.ndim)])
    indices = np.maximum.accumulate(np.where(reached, positions, 0), axis=dim)
    return ValuesIndices(gather(x, dim, indices), Tensor(indices))


def kthvalue(x, k, dim=-1, keepdim=False):
    """The k-th smallest element along `dim` (k from 1) and its index: `(values, indices)`, as
    `torch.kthvalue`. The values are differentiable (the gradient goes to the element picked)."""
    x = _tensor(x)
    dim = ops.single_axis(dim, x.ndim, "kthvalue") if x.ndim else 0
    n = x.shape[dim] if x.ndim else 1
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise ShapeError(f"kthvalue: k must be an int in [1, {n}] for dim {dim} of shape {x.shape}, got {k!r}")
    values, indices = topk(x.reshape(1) if x.ndim == 0 else x, k, dim=dim, largest=False)
    pick = (slice(None),) * dim + (slice(k - 1, k),)
    values, indices = values[pick], indices[pick]
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return ValuesIndices(values, indices)


def median(x, dim=None, keepdim=False):
    """The median, the lower of the two middle elements for an even count (`torch.median`): of all
    elements with no `dim` (a tensor), or along `dim` the pair `(values, indices)`. Where a row
    holds NaN its median is NaN (at the first NaN's index), as in PyTorch."""
    return _median("median", x, dim, keepdim, skip_nan=False)


def nanmedian(x, dim=None, keepdim=False):
    """The median of the values that are not NaN, the lower middle one for an even count
    (`torch.nanmedian`): of all elements with no `dim`, or along `dim` the pair `(values,
    indices)`. NaN for a row of NaN only (at its first index). Differentiable in x."""
    return _median("nanmedian", x, dim, keepdim, skip_nan=True)


def _median(name, x, dim, keepdim, skip_nan):
    x = _tensor(x)
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}: keepdim=True needs dim=, the axis to keep")
        return _median(name, x.reshape(-1), 0, False, skip_nan).values
    axis = ops.single_axis(dim, x.ndim, name) if x.ndim else 0
    column = x.reshape(1) if x.ndim == 0 else x
    n = column.shape[axis]
    if n == 0:
        raise ShapeError(f"{name}: dim {dim} of shape {x.shape} is empty")
    values, indices = sort(column, axis)  # NaN last, stably: a row of NaN only keeps its order
    nan = np.isnan(_constant(name, column))
    count = (~nan if skip_nan else np.ones_like(nan)).sum(axis=axis, keepdims=True)  # the values counted
    pick = np.maximum((count - 1) // 2, 0)  # each row's lower middle one
    values, indices = gather(values, axis, pick), Tensor(np.take_along_axis(indices.data, pick, axis))
    if not skip_nan and nan.any():
        rows = nan.any(axis=axis, keepdims=True)
        values = where(rows, Tensor(np.array(np.nan, dtype=x.dtype)), values)
        indices = Tensor(np.where(rows, nan.argmax(axis=axis, keepdims=True), indices.data))
    if not keepdim or x.ndim == 0:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    return ValuesIndices(values, indices)



def mode(input, dim=-1, keepdim=False):  # noqa: A002  (PyTorch's names)
    """The most frequent value along `dim` and where it is: `(values, indices)`, as `torch.mode`,
    the smallest of equally frequent values and the index of its last occurrence. The values are
    differentiable (the gradient goes to that occurrence)."""
    x = _tensor(input)
    column = x.reshape(1) if x.ndim == 0 else x
    axis = ops.single_axis(dim, column.ndim, "mode")
    n = column.shape[axis]
    if n == 0:
        raise ShapeError(f"mode: dim {dim} of shape {x.shape} is empty")
    rows = np.moveaxis(_constant("mode", column), axis, -1).reshape(-1, n)
    order = np.argsort(rows, axis=1, kind="stable")  # equal values keep their order: a run ends at its last occurrence
    ordered = np.take_along_axis(rows, order, axis=1)
    starts = np.ones(rows.shape, dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    run = np.cumsum(starts, axis=1) - 1
    lengths = np.zeros(rows.shape, dtype=np.int64)
    np.add.at(lengths, (np.arange(len(rows))[:, None], run), 1)
    longest = lengths.argmax(axis=1)  # the first of the longest runs: the smallest value
    last = np.where(run == longest[:, None], np.arange(n), -1).max(axis=1)
    kept = column.shape[:axis] + (1,) + column.shape[axis + 1 :]
    indices = order[np.arange(len(rows)), last].reshape(kept[:axis] + kept[axis + 1 :] + (1,))
    indices = np.moveaxis(indices, -1, axis)
    values = gather(column, axis, indices)
    if not keepdim or x.ndim == 0:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    return ValuesIndices(values, Tensor(indices.astype(np.int64)))

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(x, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles (q in [0, 1], a number or a 1-D tensor) of all elements or along `dim`,
    interpolated between the two nearest order statistics as `torch.quantile` (and numpy's default
    "linear" method); with a 1-D q, the result's first dimension runs over q. Where a row holds NaN
    its quantiles are NaN (`nanquantile` skips them). Differentiable in x."""
    return _quantile("quantile", x, q, dim, keepdim, interpolation, skip_nan=False)


def nanquantile(x, q, dim=None, keepdim=False, *, interpolation="linear"):
    """`quantile` of the values that are not NaN (`torch.nanquantile`); NaN for a row of NaN only."""
    return _quantile("nanquantile", x, q, dim, keepdim, interpolation, skip_nan=True)


def _quantile(name, x, q, dim, keepdim, interpolation, skip_nan):
    x = _tensor(x)
    if interpolation not in _INTERPOLATIONS:
        raise ShapeError(f"{name}: interpolation must be one of {_INTERPOLATIONS}, got {interpolation!r}")
    qs = np.asarray(q.data if isinstance(q, Tensor) else q, dtype=np.float64)
    if qs.ndim > 1 or qs.size == 0 or np.any(np.isnan(qs) | (qs < 0) | (qs > 1)):
        raise ShapeError(f"{name}: q must be a number or a 1-D tensor of numbers in [0, 1], got {q!r}")
    if dim is None:
        out = _quantile(name, x.reshape(-1), q, 0, False, interpolation, skip_nan)
        return out.reshape(out.shape + (1,) * x.ndim) if keepdim else out
    dim = ops.single_axis(dim, x.ndim, name)
    n = x.shape[dim]
    if n == 0:
        raise ShapeError(f"{name}: dim {dim} of shape {x.shape} is empty")
    ordered = sort(x, dim).values.movedim(dim, -1)  # (..., n), NaN last
    nan = np.isnan(_constant(name, x)).sum(axis=dim)[..., None]  # (..., 1): NaN in each row
    count = n - nan if skip_nan else np.full_like(nan, n)  # the values each row's quantiles are taken over
    position = qs.reshape(-1) * np.maximum(count - 1, 0)  # (..., len(q))
    low, high = np.floor(position).astype(np.int64), np.ceil(position).astype(np.int64)
    if interpolation == "lower":
        high = low
    elif interpolation == "higher":
        low = high
    elif interpolation == "nearest":
        low = high = np.round(position).astype(np.int64)  # half to even, as torch.round
    weight = np.where(high > low, 0.5, 0.0) if interpolation == "midpoint" else position - low
    below, above = gather(ordered, -1, low), gather(ordered, -1, high)
    out = below + (above - below) * Tensor(weight.astype(x.dtype))  # (..., len(q))
    undefined = Tensor(np.broadcast_to(count == 0 if skip_nan else nan > 0, out.shape))
    out = where(undefined, Tensor(np.array(np.nan, dtype=x.dtype)), out)
    out = out.unsqueeze(dim) if keepdim else out  # the kept dim where it was, q's axis still last
    out = out.movedim(-1, 0)
    return out.squeeze(0) if qs.ndim == 0 else out


def nansum(x, dim=None, keepdim=False, *, dtype=None):
    """The sum over `dim` (all of x by default) with NaN taken as zero (`torch.nansum`); the
    gradient at a NaN is 0."""
    x = _tensor(x) if dtype is None else _tensor(x).astype(dtype)
    return where(isnan(x), Tensor(np.zeros((), dtype=x.dtype)), x).sum(dim=dim, keepdim=keepdim)


def nanmean(x, dim=None, keepdim=False, *, dtype=None):
    """The mean over `dim` of the values that are not NaN (`torch.nanmean`); NaN where all are."""
    x = _tensor(x) if dtype is None else _tensor(x).astype(dtype)
    if x.dtype.kind != "f":
        raise ShapeError(f"nanmean: needs a floating-point tensor, got {x.dtype} (integers hold no NaN: use mean)")
    count = (x == x).astype(x.dtype).sum(dim=dim, keepdim=keepdim)  # operations, not numbers: a trace recounts
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 / 0 is the NaN of a row of NaN only
        return nansum(x, dim, keepdim) / count


def _rank(name, tensors, ranks):
    """Tensors (or data made into them) of the given ranks, or an error naming their shapes."""
    tensors = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    if builtins.any(t.ndim != r for t, r in zip(tensors, ranks)):
        shapes = " and ".join(str(t.shape) for t in tensors)
        raise ShapeError(f"{name}: expects tensors with {' and '.join(map(str, ranks))} dimensions, got shapes {shapes}")
    return tensors


def mm(x, y):
    """The product of two matrices (`torch.mm`: 2-D only; `matmul` broadcasts)."""
    return matmul(*_rank("mm", (x, y), (2, 2)))


def bmm(x, y):
    """Products of two batches of matrices, (b, n, m) @ (b, m, p) (`torch.bmm`: 3-D only)."""
    x, y = _rank("bmm", (x, y), (3, 3))
    if x.shape[0] != y.shape[0]:
        raise ShapeError(f"bmm: the batch sizes differ, shapes {x.shape} and {y.shape}")
    return matmul(x, y)


def dot(x, y):
    """The inner product of two vectors (`torch.dot`: 1-D only)."""
    return matmul(*_rank("dot", (x, y), (1, 1)))


def outer(x, y):
    """The outer product of two vectors: x_i y_j, shape (len(x), len(y))."""
    x, y = _rank("outer", (x, y), (1, 1))
    return x.reshape(-1, 1) * y.reshape(1, -1)


ger = outer  # torch.ger, the older name


def mv(input, vec):  # noqa: A002  (PyTorch's names)
    """The product of a matrix and a vector (`torch.mv`: 2-D and 1-D only)."""
    a, v = _rank("mv", (input, vec), (2, 1))
    if a.shape[1] != v.shape[0]:
        raise ShapeError(f"mv: the matrix has {a.shape[1]} columns and the vector {v.shape[0]} elements (shapes {a.shape} and {v.shape})")
    return matmul(a, v)


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids of 1-D tensors, as `torch.meshgrid`: with `indexing="ij"` (PyTorch's default)
    grid k varies along axis k; with "xy" (numpy's default) the first two axes are swapped, the
    layout a contour plot takes. Each grid is a differentiable broadcast of its tensor."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    tensors = _rank("meshgrid", tensors, [1] * len(tensors))
    axes = list(range(len(tensors)))  # the axis along which each tensor varies
    if indexing == "xy" and len(tensors) >= 2:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(tensors)
    for t, axis in zip(tensors, axes):
        shape[axis] = len(t)
    return tuple(t.reshape([-1 if i == axis else 1 for i in range(len(shape))]).broadcast_to(tuple(shape)) for t, axis in zip(tensors, axes))


def histogram(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002  (PyTorch's names)
    """`torch.histogram`: `(hist, bin_edges)`, float tensors of the input's dtype, from numpy's
    histogram of the values (`bins` a count or the edges; `range=(low, high)`; `density=True` for a
    density). A count, not differentiated: for plots of activations and gradients."""
    x = input if isinstance(input, Tensor) else Tensor(input)
    if tracing.depth and x.requires_grad:
        _refuse_while_tracing(x, "histogram", "Draw the histogram outside the compiled function.")
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    bins = np.asarray(bins.data if isinstance(bins, Tensor) else bins)
    weights = None if weight is None else np.asarray(weight.data if isinstance(weight, Tensor) else weight).ravel()
    hist, edges = np.histogram(x.data.ravel(), bins=bins if bins.ndim else int(bins), range=range, weights=weights, density=density)
    return Tensor(hist.astype(dtype)), Tensor(edges.astype(dtype))



def histc(input, bins=100, min=0, max=0):  # noqa: A002  (PyTorch's names)
    """`torch.histc`: the counts of the elements in `bins` equal bins over [min, max] (a float
    tensor of the input's dtype), elements outside ignored; with min = max the data's own range,
    widened by 1 on each side if that is a single value. A count, not differentiated."""
    x = _tensor(input)
    data = _constant("histc", x).reshape(-1)
    low, high = float(min), float(max)
    if low > high:
        raise ValueError(f"histc: min {low} is greater than max {high}")
    if low == high and data.size:
        low, high = float(data.min()), float(data.max())
    if low == high:
        low, high = low - 1, high + 1
    counts, _ = np.histogram(data, bins=int(bins), range=(low, high))
    return Tensor(counts.astype(x.dtype if x.dtype.kind == "f" else np.float64))

def isnan(x):
    """Where x is NaN (a bool tensor): the elements unequal to themselves."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return x != x


def isinf(x):
    """Where x is +∞ or −∞ (a bool tensor)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return x.abs() == np.inf


def isfinite(x):
    """Where x is neither NaN nor ±∞ (a bool tensor): |x| < ∞ fails for both."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return x.abs() < np.inf


def signbit(input):  # noqa: A002  (PyTorch's names)
    """Where the sign bit is set (a bool tensor, `torch.signbit`): x < 0, and −0.0 and a NaN whose
    sign bit is set, which x < 0 misses."""
    return Tensor(np.signbit(_constant("signbit", _tensor(input))))


def heaviside(input, values):  # noqa: A002  (PyTorch's names)
    """The unit step (`torch.heaviside`): 0 where input < 0, 1 where input > 0 and `values`
    (broadcast) where input is 0 or −0.0; 0 at NaN, as PyTorch's `input == 0 ? values : input > 0`.
    Differentiable in `values`, where input is 0; a step in input, so constant in it. PyTorch has
    neither derivative, and refuses operands of different dtypes, which are promoted here."""
    x, v = _promoted(input, values)
    return where(x == 0, v, (x > 0).astype(np.result_type(x.dtype, v.dtype)))


def equal(input, other):  # noqa: A002  (PyTorch's names)
    """Whether the two have the same shape and the same values, a Python bool (`torch.equal`):
    NaN equals nothing, and values of different dtypes compare as numbers (1 equals 1.0)."""
    x, y = _tensor(input), _tensor(other)
    return x.shape == y.shape and bool(np.array_equal(_constant("equal", x), _constant("equal", y)))


def split(x, split_size_or_sections, dim=0):
    """Pieces of x along `dim`, as `torch.split`: of `split_size_or_sections` elements each (the last
    one shorter), or of the lengths listed. Each piece is a differentiable slice."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    dim = ops.single_axis(dim, x.ndim, "split")
    n = x.shape[dim]
    if isinstance(split_size_or_sections, (int, np.integer)):
        size = int(split_size_or_sections)
        if size < 1:
            raise ShapeError(f"split: the size of a piece must be a positive int, got {size}")
        sizes = [size] * (n // size) + ([n % size] if n % size else [])
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n or builtins.any(size < 0 for size in sizes):
            raise ShapeError(f"split: lengths {sizes} must be non-negative and add up to {n}, the length of dim {dim} of shape {x.shape}")
    starts = np.cumsum([0] + sizes[:-1])
    before = (slice(None),) * dim
    return tuple(x[before + (slice(int(start), int(start) + size),)] for start, size in zip(starts, sizes))


def chunk(x, chunks, dim=0):
    """`chunks` pieces of x along `dim` (fewer when it is short), as `torch.chunk`: each as long as
    ⌈length / chunks⌉, the last one shorter."""
    if isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)) or chunks < 1:
        raise ShapeError(f"chunk: chunks must be a positive int, got {chunks!r}")
    x = x if isinstance(x, Tensor) else Tensor(x)
    return split(x, builtins.max(1, -(-x.shape[ops.single_axis(dim, x.ndim, "chunk")] // int(chunks))), dim)


def repeat_interleave(x, repeats, dim=None):
    """Each slice along `dim` repeated in place, as `torch.repeat_interleave`: [a, b] with 2 is
    [a, a, b, b] (`repeat` would give [a, b, a, b]); `dim=None` flattens first. An int repeats every
    slice alike, by a broadcast and a reshape; a sequence gives each slice its own count, gathered by
    index. Either way the gradient sums over the copies."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    if dim is None:
        x, dim = x.reshape(-1), 0
    axis = ops.single_axis(dim, x.ndim, "repeat_interleave")
    n = x.shape[axis]
    counts = np.asarray(repeats.data if isinstance(repeats, Tensor) else repeats)
    if counts.dtype.kind not in "iu" or counts.ndim > 1 or (counts.ndim == 1 and counts.size not in (1, n)) or (counts < 0).any():
        raise ShapeError(f"repeat_interleave: repeats must be a non-negative int or one per slice ({n} along dim {dim} of shape {x.shape}), got {repeats!r}")
    if counts.size == 1:
        times = int(counts.reshape(()))
        shape = x.shape[: axis + 1] + (times,) + x.shape[axis + 1 :]
        return x.unsqueeze(axis + 1).broadcast_to(shape).reshape(x.shape[:axis] + (n * times,) + x.shape[axis + 1 :])
    return x[(slice(None),) * axis + (np.repeat(np.arange(n), counts),)]


def repeat(x, *sizes):
    """x tiled `sizes` times along each axis, as `torch.Tensor.repeat` (numpy's `tile`); extra leading
    sizes add axes. A broadcast and a reshape, so the gradient sums over the copies."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    sizes = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    if len(sizes) < x.ndim or builtins.any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0 for s in sizes):
        raise ShapeError(f"repeat: needs a non-negative int for each of the {x.ndim} axes of shape {x.shape} (or more, for new leading axes), got {sizes}")
    shape = (1,) * (len(sizes) - x.ndim) + x.shape
    spread = x.reshape([m for n in shape for m in (1, n)])
    tiled = spread.broadcast_to(tuple(m for s, n in zip(sizes, shape) for m in (s, n)))
    return tiled.reshape([s * n for s, n in zip(sizes, shape)])


def isclose(x, y, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Elementwise |x − y| ≤ atol + rtol·|y| as a boolean tensor (PyTorch's defaults)."""
    values = [v.data if isinstance(v, Tensor) else np.asarray(v) for v in (x, y)]
    return Tensor._result(np.isclose(*values, rtol=rtol, atol=atol, equal_nan=equal_nan), None)


def allclose(x, y, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Whether every element is close (`isclose`), as a Python bool."""
    return bool(isclose(x, y, rtol, atol, equal_nan).data.all())


def _operands(x, y):
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = Tensor(x)
    x = x if isinstance(x, Tensor) else y._lift(x)
    y = y if isinstance(y, Tensor) else x._lift(y)
    return x, y


def maximum(x, y):
    """Elementwise maximum (broadcasting); the gradient goes to the larger operand, half each at ties."""
    return ops.maximum(*_operands(x, y))


def minimum(x, y):
    """Elementwise minimum (broadcasting); the gradient goes to the smaller operand, half each at ties."""
    return ops.minimum(*_operands(x, y))


def _promoted(x, y):
    """x and y (either a number) as the operands of a binary function, promoted as PyTorch does:
    a Python number takes the tensor's dtype where it fits, and an integer tensor meeting a float
    one takes its dtype (numpy would make int64 with float32 float64)."""
    x, y = _operands(x, y)
    return x._pair(y)


def _float_operands(x, y):
    """`_promoted`, integers then made float64, minigrad's default float (where PyTorch's
    logaddexp refuses them and its copysign makes them float32)."""
    return tuple(t if t.dtype.kind == "f" else t.astype(np.float64) for t in _promoted(x, y))


def remainder(input, other):  # noqa: A002  (PyTorch's names)
    """input − ⌊input / other⌋ · other, with other's sign (Python's %, `torch.remainder`), exact;
    either may be a number. Integers give integers, and raise ZeroDivisionError for a zero divisor
    as in PyTorch (floats give NaN there). The gradient is 1 in input, −⌊input / other⌋ in other."""
    return ops.remainder(*_promoted(input, other))


def fmod(input, other):  # noqa: A002  (PyTorch's names)
    """input − trunc(input / other) · other, with input's sign (C's fmod, `torch.fmod`), exact.
    Integers as in `remainder`; the gradient is 1 in input, −trunc(input / other) in other."""
    return ops.fmod(*_promoted(input, other))


def floor_divide(input, other):  # noqa: A002  (PyTorch's names)
    """⌊input / other⌋ of the exact quotient (`torch.floor_divide`, which rounds toward −∞ since
    PyTorch 1.13; 1.0 // 0.1 is 9, where floor(1.0 / 0.1) is 10). Integers give integers (a zero
    divisor raises ZeroDivisionError). A step, so its gradient is zeros; PyTorch has none."""
    return ops.floor_divide(*_promoted(input, other))


def true_divide(input, other):  # noqa: A002  (PyTorch's names)
    """input / other, integers included (`torch.true_divide`, `torch.div`)."""
    x, y = _operands(input, other)
    return x / y


def logaddexp(input, other):  # noqa: A002  (PyTorch's names)
    """log(eˣ + eʸ) without overflow (`torch.logaddexp`): the larger operand plus softplus of
    the difference (never positive), so a tiny term keeps its digits (log1p's). Either way round
    the formula is smooth, so every derivative is exact, ties included (max + log1p(e^−|x−y|) has
    a kink there). The same infinity on both sides gives itself, ∞ − ∞ kept out of the formula
    (the gradient there is 1 in input, PyTorch's NaN). Integers are taken as float64 (PyTorch
    refuses them)."""
    x, y = _float_operands(input, other)
    tie = where(isinf(x), x == y, False)
    a, b = where(tie, 0.0, x), where(tie, 0.0, y)
    first = a >= b
    smooth = where(first, a, b) + softplus(where(first, b - a, a - b))
    return where(tie, x, smooth)


def logaddexp2(input, other):  # noqa: A002  (PyTorch's names)
    """log₂(2ˣ + 2ʸ) (`torch.logaddexp2`): `logaddexp` in units of ln 2."""
    x, y = _float_operands(input, other)
    return logaddexp(x * math.log(2.0), y * math.log(2.0)) * (1.0 / math.log(2.0))


def copysign(input, other):  # noqa: A002  (PyTorch's names)
    """|input| with the sign of other (`torch.copysign`), −0.0's and a NaN's sign bit included
    (copysign(1, −0.0) is −1); floating point always (integers as float64, PyTorch's float32).
    Chosen between |input| and −|input| rather than multiplied by ±1, which would leave a NaN's
    sign as it was. The gradient in input is ±1, 0 where input is 0, as PyTorch's; in other there
    is none."""
    x, y = _float_operands(input, other)
    magnitude = x.abs()
    return where(np.signbit(_constant("copysign", y)), -magnitude, magnitude)


def logsumexp(x, axis=-1, keepdims=False, *, dim=None, keepdim=None):
    """log Σ exp(x) without overflow: the maximum is subtracted first (as a constant)."""
    axis = _dim("logsumexp", axis, dim, -1)
    keepdims = keepdims if keepdim is None else keepdim
    x = x if isinstance(x, Tensor) else Tensor(x)
    axes = ops.normalize_axis(axis, x.ndim, "logsumexp")  # an int, a tuple or None (all axes)
    shift = x.max(axis=axes, keepdims=True).detach()
    out = (x - shift).exp().sum(axis=axes, keepdims=True).log() + shift
    return out if keepdims else out.reshape([n for i, n in enumerate(x.shape) if axes is not None and i not in axes])


def logcumsumexp(input, dim):  # noqa: A002  (PyTorch's names)
    """log Σ_{j ≤ i} exp(x_j) along `dim` (`torch.logcumsumexp`), without overflow or underflow:
    a parallel prefix scan of `logaddexp`, as `cumprod`'s of products (log₂ n steps, each adding
    the running values `shift` places back), where one shift by the maximum would underflow the
    small early terms. Integers are taken as float64 (PyTorch refuses them)."""
    x = _tensor(input)
    x = x if x.dtype.kind == "f" else x.astype(np.float64)
    if x.ndim == 0:
        return logcumsumexp(x.reshape(1), 0).reshape(())
    dim = ops.single_axis(dim, x.ndim, "logcumsumexp")
    out, n, shift = x, x.shape[dim], 1
    while shift < n:
        shifted = logaddexp(_along(out, dim, slice(shift, n)), _along(out, dim, slice(0, n - shift)))
        out = concatenate([_along(out, dim, slice(0, shift)), shifted], axis=dim)
        shift *= 2
    return out


def log_softmax(x, axis=-1, *, dim=None):
    """log softmax(x) along one axis: x minus its logsumexp, computed stably."""
    axis = _dim("log_softmax", axis, dim, -1)
    x = x if isinstance(x, Tensor) else Tensor(x)
    if x.ndim == 0:
        raise ShapeError("log_softmax: needs at least one dimension, got a 0-d tensor")
    return ops.log_softmax(x, axis=ops.single_axis(axis, x.ndim, "log_softmax"))


def softmax(x, axis=-1, *, dim=None):
    """Probabilities along one axis: exp(x − max) normalised, the same as exp(log_softmax(x))."""
    axis = _dim("softmax", axis, dim, -1)
    x = x if isinstance(x, Tensor) else Tensor(x)
    if x.ndim == 0:
        raise ShapeError("softmax: needs at least one dimension, got a 0-d tensor")
    return ops.softmax(x, axis=ops.single_axis(axis, x.ndim, "softmax"))


def softplus(x):
    """log(1 + e^x), without overflow; its derivative is sigmoid(x)."""
    return ops.softplus(x if isinstance(x, Tensor) else Tensor(x))


def cat(tensors, dim=0):
    """`concatenate` under PyTorch's name (`dim=` for `axis=`)."""
    return concatenate(tensors, axis=dim)


def matmul(x, y):
    """x @ y (numpy's matmul rules for every rank)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return x @ y


def _method(name):
    def function(x, *args, **kwargs):
        return getattr(x if isinstance(x, Tensor) else Tensor(x), name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"`x.{name}(...)` as a function of x (a Tensor, or data made into one): see `Tensor.{name}`."
    return function


# Module-level forms of the tensor methods, as `torch.exp(x)` or `np.exp(x)` are written.
exp, log, log2, log10, sin, cos, tanh, sigmoid, relu, sqrt, abs = map(_method, "exp log log2 log10 sin cos tanh sigmoid relu sqrt abs".split())  # noqa: A001
pow, square, sign = map(_method, "pow square sign".split())  # noqa: A001
floor, ceil, trunc, fix, round, frac = map(_method, "floor ceil trunc fix round frac".split())  # noqa: A001
erf, erfc, erfinv, log1p, expm1, exp2, tan, asin, acos, atan, atan2, sinh, cosh, asinh, acosh, atanh, hypot = map(
    _method, "erf erfc erfinv log1p expm1 exp2 tan asin acos atan atan2 sinh cosh asinh acosh atanh hypot".split()
)
arcsin, arccos, arctan, arctan2, arcsinh, arccosh, arctanh = asin, acos, atan, atan2, asinh, acosh, atanh
lgamma, i0 = _method("lgamma"), _method("i0")
negative, absolute, is_floating_point = _method("negative"), abs, _method("is_floating_point")


def deg2rad(input):  # noqa: A002  (PyTorch's names)
    """Angles in degrees as radians, input · π/180 (`torch.deg2rad`); integers give float64."""
    return _tensor(input) * (math.pi / 180.0)


def rad2deg(input):  # noqa: A002  (PyTorch's names)
    """Angles in radians as degrees, input · 180/π (`torch.rad2deg`); integers give float64."""
    return _tensor(input) * (180.0 / math.pi)


def ndtri(p):
    """Φ⁻¹(p), the standard normal quantile (`torch.special.ndtri`): accurate to 2 ulp in both tails
    (p = 1e-300 too), where √2 erfinv(2p − 1) loses p's digits; ∓inf at 0 and 1."""
    return ops.ndtri(_tensor(p))


def i0e(input):  # noqa: A002  (PyTorch's argument names)
    """e^(−|x|) I₀(x), the scaled modified Bessel function of order 0 (`torch.special.i0e`): finite
    where I₀ overflows (|x| > 713), so log I₀(x) = log i0e(x) + |x| everywhere."""
    return ops.i0e(_tensor(input))


def i1(input):  # noqa: A002
    """I₁(x), the modified Bessel function of the first kind of order 1 (`torch.special.i1`)."""
    return ops.i1(_tensor(input))


def i1e(input):  # noqa: A002
    """e^(−|x|) I₁(x) (`torch.special.i1e`); i1e(κ) / i0e(κ) = I₁(κ) / I₀(κ) without overflow."""
    return ops.i1e(_tensor(input))


def gammainc(input, other):  # noqa: A002  (PyTorch's argument names)
    """P(a, x) = γ(a, x) / Γ(a) for a = input, x = other (`torch.special.gammainc`): the Gamma(a, 1)
    CDF at x, ~1e-12 relative for a ≤ 10³. Differentiable in x to every order and in a to first
    order (where PyTorch has no derivative in a)."""
    return ops.gammainc(_tensor(input), _tensor(other))


def gammaincc(input, other):  # noqa: A002
    """Q(a, x) = 1 − P(a, x), the upper tail, accurate where P is near 1 (`torch.special.gammaincc`)."""
    return ops.gammaincc(_tensor(input), _tensor(other))


def digamma(x):
    """ψ(x) = Γ'(x)/Γ(x), the derivative of lgamma (`torch.digamma`): −inf at 0, NaN at −1, −2, ..."""
    return ops.polygamma(_tensor(x), order=0)


def polygamma(n, x):
    """ψ⁽ⁿ⁾(x), the n-th derivative of the digamma function (`torch.polygamma(n, x)`): n = 1 is the
    trigamma function, the variance of log of a Gamma draw."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ShapeError(f"polygamma: n must be an integer ≥ 0, got {n!r}")
    return ops.polygamma(_tensor(x), order=int(n))


def mvlgamma(x, p):
    """The log of the multivariate gamma function Γₚ(x) = π^(p(p−1)/4) Πᵢ Γ(x − i/2), i < p
    (`torch.mvlgamma`), which the Wishart density normalises by; needs x > (p − 1)/2."""
    x = _tensor(x)
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
        raise ShapeError(f"mvlgamma: p must be an integer ≥ 1, got {p!r}")
    if np.any(x.data <= (p - 1) / 2):
        raise ValueError(f"mvlgamma: all of x must exceed (p - 1) / 2 = {(p - 1) / 2}, got a minimum of {x.data.min()}")
    total = x.lgamma()
    for i in range(1, p):
        total = total + (x - i / 2).lgamma()
    return total + p * (p - 1) / 4 * math.log(math.pi)
sum, mean, prod, argmax, argmin, cumsum, cumprod, var, std, norm, all, any = map(  # noqa: A001
    _method, "sum mean prod argmax argmin cumsum cumprod var std norm all any".split()
)


def _torch_extreme(name, elementwise):
    """`torch.max` or `torch.min` as a function, in PyTorch's three forms.

    The method keeps numpy's meaning (`x.max(1)` is the values alone, as the chapters use it), but
    a PyTorch script calls the function, and its `_, predicted = torch.max(outputs, 1)` must not
    split the rows of the values into two silently wrong halves.
    """

    def function(x, dim=None, keepdim=False, **numpy_keywords):
        x = x if isinstance(x, Tensor) else Tensor(x)
        if isinstance(dim, (Tensor, np.ndarray)):  # torch.max(input, other)
            return elementwise(x, dim)
        if dim is None:
            if keepdim:
                raise TypeError(f"{name}: keepdim=True needs dim=, the axis to keep")
            return getattr(x, name)(**numpy_keywords)  # over every element, or numpy's axis=
        return getattr(x, name)(dim=dim, keepdim=keepdim, **numpy_keywords)  # (values, indices)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (
        f"PyTorch's `torch.{name}`: `{name}(x)` over every element; `{name}(x, dim)` the pair "
        f"(values, indices) along `dim`; `{name}(x, other)` with a tensor `other` the elementwise "
        f"{name}imum. numpy's `{name}(x, axis=...)` gives the values alone, as the method `x.{name}(...)` does."
    )
    return function


max, min = _torch_extreme("max", maximum), _torch_extreme("min", minimum)  # noqa: A001
reshape, transpose, permute, flatten, unsqueeze, squeeze, flip, clip = map(
    _method, "reshape transpose permute flatten unsqueeze squeeze flip clip".split()
)
clamp = clip


def clamp_min(input, min):  # noqa: A002  (PyTorch's names)
    """`clamp(input, min=min)`: input raised to at least `min` (`torch.clamp_min`)."""
    return _tensor(input).clip(min, None)


def clamp_max(input, max):  # noqa: A002  (PyTorch's names)
    """`clamp(input, max=max)`: input lowered to at most `max` (`torch.clamp_max`)."""
    return _tensor(input).clip(None, max)


def _tensor(x):
    return x if isinstance(x, Tensor) else Tensor(x)


def _integers(name, index, what="index"):
    """An integer index (a tensor or data) as a numpy array, or an error naming `name`."""
    index = np.asarray(index.data if isinstance(index, Tensor) else index)
    if index.dtype.kind not in "iu":
        raise ShapeError(f"{name}: {what} must hold integers, got dtype {index.dtype}")
    return index


def _along(x, dim, index):
    """x indexed by `index` (an int, a slice or an integer array) along the axis `dim`."""
    return x[(slice(None),) * dim + (index,)]


def index_select(input, dim, index):  # noqa: A002  (PyTorch's names)
    """The slices of input at the positions `index` (a 1-D integer tensor) along `dim`
    (`torch.index_select`); repeated positions add their gradients."""
    x = _tensor(input)
    dim = ops.single_axis(dim, x.ndim, "index_select")
    index = _integers("index_select", index)
    n = x.shape[dim] if x.ndim else 1
    if index.ndim > 1 or (index.size and not (0 <= index.min() and index.max() < n)) or (x.ndim == 0 and index.size != 1):
        raise ShapeError(f"index_select: index must be 1-D with values in [0, {n}) for dim {dim} of shape {x.shape}, got shape {index.shape} and {index.tolist()}")
    return _along(x, dim, index.reshape(-1)) if x.ndim else x  # a 0-d input is its only element


def masked_select(input, mask):  # noqa: A002  (PyTorch's names)
    """The elements of input where the boolean `mask` (broadcast with it) is true, as a 1-D tensor
    in row-major order (`torch.masked_select`)."""
    x, mask = _with_mask("masked_select", input, mask)
    return x[np.nonzero(mask)]


def _with_mask(name, input, mask):  # noqa: A002
    """(input, mask) broadcast together, the mask a bool array; a mask of another dtype or shape is
    refused, naming `name`."""
    x = _tensor(input)
    mask = np.asarray(_constant(name, mask) if isinstance(mask, Tensor) else mask)
    if mask.dtype != bool:
        raise ShapeError(f"{name}: mask must be a bool tensor, got dtype {mask.dtype}")
    try:
        shape = np.broadcast_shapes(x.shape, mask.shape)
    except ValueError:
        raise ShapeError(f"{name}: the mask's shape {mask.shape} does not broadcast with the input's {x.shape}") from None
    return x.broadcast_to(shape), np.broadcast_to(mask, shape)


def take_along_dim(input, indices, dim=None):  # noqa: A002  (PyTorch's names)
    """Elements picked along `dim` by `indices` (`torch.take_along_dim`): `gather` with the other
    axes broadcast; `dim=None` picks from the flattened input."""
    x = _tensor(input)
    index = _integers("take_along_dim", indices, "indices")
    if dim is None:
        return gather(x.reshape(-1), 0, index.reshape(-1))
    dim = ops.single_axis(dim, x.ndim, "take_along_dim")
    if index.ndim != x.ndim:
        raise ShapeError(f"take_along_dim: input and indices need the same number of dimensions, got shapes {x.shape} and {index.shape}")
    try:
        shape = list(np.broadcast_shapes(x.shape[:dim] + (1,) + x.shape[dim + 1 :], index.shape[:dim] + (1,) + index.shape[dim + 1 :]))
    except ValueError:
        raise ShapeError(f"take_along_dim: shapes {x.shape} and {index.shape} do not broadcast outside dim {dim}") from None
    x_shape, index_shape = list(shape), list(shape)
    x_shape[dim], index_shape[dim] = x.shape[dim], index.shape[dim]
    return gather(x.broadcast_to(tuple(x_shape)), dim, np.broadcast_to(index, index_shape))


# --------------------------------------------------------------------------- writing at indices
# scatter and its family (index_add, index_copy, index_fill, index_put, put, masked_scatter) find,
# from the constant index, the flat position in x each value goes to; `_into` then writes or
# reduces the values there with primitives: getitem picks, scatter adds (repeats accumulate),
# where keeps x elsewhere. Every derivative, to any order and in forward mode, is the composition's.
def _positions(x):
    """Each element's flat position in x, in x's shape: indexed as x would be, it says where each
    picked element lies."""
    return np.arange(x.data.size).reshape(x.shape)


def _check_range(name, index, n, dim, shape, negative=False):
    """Refuse an index outside [0, n) (or [−n, n) where PyTorch counts negative ones from the end)."""
    bad = (index < (-n if negative else 0)) | (index >= n)
    if bad.any():
        raise ShapeError(f"{name}: index {index[bad].flat[0]} is out of range for dim {dim} of size {n} (input of shape {shape})")


def _same_dtype(name, x, source, what="src"):
    if source.dtype != x.dtype:
        raise DtypeError(f"{name}: {what} has dtype {source.dtype} but the input {x.dtype}; PyTorch needs them equal (convert one with .to(...))")
    return source


def _values_for(name, x, values, shape, what="src"):
    """The values to write, as a tensor of `shape`: a number filled in (in x's dtype), a tensor of
    x's dtype broadcast (its gradient sums over the copies)."""
    if not isinstance(values, Tensor):
        return Tensor(np.full(shape, values, dtype=x.dtype))
    _same_dtype(name, x, values, what)
    try:
        np.broadcast_to(np.empty(values.shape, dtype=bool), shape)
    except ValueError:
        raise ShapeError(f"{name}: {what} of shape {values.shape} does not broadcast to the indexed shape {shape}") from None
    return values.broadcast_to(shape)


def _identity(reduce, dtype):
    """The value of `dtype` that changes no product, maximum or minimum: `_into` pads with it."""
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    return np.iinfo(dtype).min if reduce == "amax" else np.iinfo(dtype).max


def _into(x, positions, values, reduce=None, include_self=True):
    """x with `values` written at `positions` (a tensor and the flat position in x of each of its
    elements): with reduce=None each position takes the last value sent there in row-major order
    (what PyTorch's CPU kernels do), otherwise the "sum", "prod", "mean", "amax" or "amin" of those
    values, and of x's own with `include_self`. Sums are a scatter (np.add.at); prod, amax and amin
    reduce a table, (positions written) × (most values sent to one), of each position's values
    padded with the identity, so max's rule splits the gradient equally between the tied values,
    x's among them, as PyTorch's does (x left out takes no share, where PyTorch still gives it one)."""
    flat, src, x_flat = positions.reshape(-1), values.reshape(-1), x.reshape(-1)
    if reduce == "sum" and include_self:
        return (x_flat + ops.scatter(src, index=(flat,), shape=x_flat.shape)).reshape(x.shape)
    if not flat.size:
        return x.clone()
    order = np.argsort(flat, kind="stable")
    written, first, counts = np.unique(flat[order], return_index=True, return_counts=True)
    if reduce is None:
        new = src[order[first + counts - 1]]
    elif reduce in ("sum", "mean"):
        new = ops.scatter(src, index=(np.searchsorted(written, flat),), shape=written.shape)
        new = new + x_flat[written] if include_self else new
        if reduce == "mean":  # integers by floor division, as PyTorch's
            count = counts + include_self
            new = Tensor(new.data // count) if x.dtype.kind in "iu" else new / Tensor(count.astype(x.dtype))
    else:
        steps = np.arange(counts.max())
        pad = src.shape[0] + x_flat.shape[0]  # the identity's place in the pool
        table = np.where(steps < counts[:, None], order[np.minimum(first[:, None] + steps, flat.size - 1)], pad)
        if include_self:
            table = np.concatenate([src.shape[0] + written[:, None], table], axis=1)
        pool = concatenate([src, x_flat, Tensor(np.full(1, _identity(reduce, x.dtype), dtype=x.dtype))])
        new = getattr(pool[table], {"prod": "prod", "amax": "max", "amin": "min"}[reduce])(axis=1)
    mask = np.zeros(x_flat.shape, dtype=bool)
    mask[written] = True
    return where(mask, ops.scatter(new, index=(written,), shape=x_flat.shape), x_flat).reshape(x.shape)


def _scatter(name, input, dim, index, src, reduce=None, include_self=True):  # noqa: A002
    """The scatter family: src's elements (the first index.shape of them) or a number, sent along
    `dim` to index's positions."""
    x = _tensor(input)
    index = _integers(name, index)
    if x.ndim == 0:
        raise ShapeError(f"{name}: needs an input with at least one dimension, got a 0-d tensor")
    dim = ops.single_axis(dim, x.ndim, name)
    numeric = isinstance(src, (bool, int, float, np.number))
    src = src if numeric else _same_dtype(name, x, _tensor(src))
    if index.ndim != x.ndim or builtins.any(
        (i != dim and m > n) or (not numeric and m > src.shape[i]) for i, (m, n) in enumerate(zip(index.shape, x.shape))
    ) or (not numeric and src.ndim != x.ndim):
        raise ShapeError(
            f"{name}: index (shape {index.shape}) needs the {x.ndim} dimensions of the input (shape {x.shape}), no longer than "
            f"the input outside dim {dim}{'' if numeric else f' and no longer than src (shape {src.shape})'}"
        )
    _check_range(name, index, x.shape[dim], dim, x.shape)
    grids = list(np.ogrid[tuple(slice(n) for n in index.shape)])
    grids[dim] = index
    if numeric:
        values = Tensor(np.full(index.shape, src, dtype=x.dtype))
    else:
        values = src if src.shape == index.shape else src[tuple(slice(n) for n in index.shape)]
    return _into(x, _positions(x)[tuple(grids)], values, reduce, include_self)


def scatter(input, dim, index, src=None, reduce=None, *, value=None):  # noqa: A002  (PyTorch's names)
    """A copy of input with src's elements (or the number `value`) written along `dim` at `index`
    (`torch.scatter`): for dim 0, out[index[i][j]][j] = src[i][j]. Where index repeats a position
    the last element written wins (PyTorch's CPU result; its docs leave it undefined). The
    deprecated `reduce="add"` or `"multiply"` accumulates instead (`scatter_reduce`'s sum and prod).

    Differentiable, as the composition it is: the gradient reaches the input where nothing was
    written and each src element that was written. Where index repeats, PyTorch gives every
    repeated src element the gradient of the position; here only the element that won does, the
    derivative of what was computed. PyTorch has no derivative with `reduce=`; this one does."""
    if (src is None) == (value is None):
        raise TypeError("scatter: pass src (a tensor or a number) or value=, one of them")
    if reduce not in (None, "add", "multiply"):
        raise ValueError(f"scatter: reduce must be 'add' or 'multiply' (or scatter_reduce's reductions), got {reduce!r}")
    return _scatter("scatter", input, dim, index, value if src is None else src, {None: None, "add": "sum", "multiply": "prod"}[reduce])


def scatter_add(input, dim, index, src):  # noqa: A002  (PyTorch's names)
    """A copy of input with src's elements added along `dim` at `index`, repeats accumulating
    (`torch.scatter_add`): the gradient is the output's for the input and its gather for src."""
    return _scatter("scatter_add", input, dim, index, _tensor(src), "sum")


_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):  # noqa: A002  (PyTorch's names)
    """A copy of input with src's elements reduced along `dim` into the positions `index` names
    (`torch.scatter_reduce`), by "sum", "prod", "mean", "amax" or "amin", with input's own value
    (`include_self=True`) or without it; positions nothing is sent to keep input's value. A mean
    of integers is floored, as in PyTorch. Differentiable to any order: amax and amin share the
    gradient equally between the tied elements, as PyTorch's rule does."""
    if reduce not in _SCATTER_REDUCTIONS:
        raise ValueError(f"scatter_reduce: reduce must be one of {_SCATTER_REDUCTIONS}, got {reduce!r}")
    return _scatter("scatter_reduce", input, dim, index, _tensor(src), reduce, bool(include_self))


def _index_positions(name, x, dim, index, negative=False):
    """The flat positions of the slices of x at `index` (one int or a 1-D tensor) along `dim`."""
    index = _integers(name, index)
    if x.ndim == 0 or index.ndim > 1:
        raise ShapeError(f"{name}: needs an input with at least one dimension and a 0-d or 1-D index, got shapes {x.shape} and {index.shape}")
    dim = ops.single_axis(dim, x.ndim, name)
    _check_range(name, index, x.shape[dim], dim, x.shape, negative)
    return _along(_positions(x), dim, index.reshape(-1))


def _index_source(name, x, positions, source):
    source = _same_dtype(name, x, _tensor(source), "source")
    if source.shape != positions.shape:
        raise ShapeError(f"{name}: source needs the shape {positions.shape} (the input's, {x.shape}, with the index's length along dim), got {source.shape}")
    return source


def index_add(input, dim, index, source, *, alpha=1):  # noqa: A002  (PyTorch's names)
    """A copy of input with alpha · source's slices added at the positions `index` along `dim`
    (`torch.index_add`), repeats accumulating."""
    x = _tensor(input)
    positions = _index_positions("index_add", x, dim, index)
    source = _index_source("index_add", x, positions, source)
    return _into(x, positions, source if alpha == 1 else source * alpha, "sum")


def index_copy(input, dim, index, source):  # noqa: A002  (PyTorch's names)
    """A copy of input with source's slices written at the positions `index` along `dim`
    (`torch.index_copy`; where index repeats, the last slice wins)."""
    x = _tensor(input)
    positions = _index_positions("index_copy", x, dim, index)
    return _into(x, positions, _index_source("index_copy", x, positions, source))


def index_fill(input, dim, index, value):  # noqa: A002  (PyTorch's names)
    """A copy of input with the slices at `index` along `dim` set to `value`, a number or a 0-d
    tensor, which gets the gradient of every element it fills (`torch.index_fill`); negative
    indices count from the end, as there."""
    x = _tensor(input)
    positions = _index_positions("index_fill", x, dim, index, negative=True)
    if isinstance(value, Tensor):
        if value.ndim:
            raise ShapeError(f"index_fill: value must be a number or a 0-d tensor, got shape {value.shape}")
        value = value.astype(x.dtype) if value.dtype != x.dtype else value
    return _into(x, positions, _values_for("index_fill", x, value, positions.shape, "value"))


def _where_indexed(name, x, index):
    """x's flat positions picked by `index` as x[index] picks (negative indices count from the end)."""
    try:
        return _positions(x)[ops.plain_index(index)]
    except IndexError as error:
        raise ShapeError(f"{name}: {error} (input of shape {x.shape})") from None


def index_put(input, indices, values, accumulate=False):  # noqa: A002  (PyTorch's names)
    """A copy of input with input[indices] = values (broadcast), `indices` a tuple of index tensors
    as in indexing (`torch.index_put`); `accumulate=True` adds instead, repeats accumulating.
    Without it, a repeated position gets the last value."""
    x = _tensor(input)
    positions = _where_indexed("index_put", x, tuple(indices))
    return _into(x, positions, _values_for("index_put", x, values, positions.shape, "values"), "sum" if accumulate else None)


def put(input, index, source, accumulate=False):  # noqa: A002  (PyTorch's names)
    """A copy of input with the elements at `index` of its flattened self replaced by source's
    (`torch.put`, the inverse of `take`), or with `accumulate=True` added to; negative indices
    count from the end, as there."""
    x = _tensor(input)
    index = _integers("put", index)
    _check_range("put", index, x.data.size, "(flattened)", x.shape, negative=True)
    source = _same_dtype("put", x, _tensor(source), "source")
    if source.data.size != index.size:
        raise ShapeError(f"put: source has {source.data.size} elements and index {index.size}; they must match")
    return _into(x, _positions(x).reshape(-1)[index], source.reshape(index.shape), "sum" if accumulate else None)


def masked_scatter(input, mask, source):  # noqa: A002  (PyTorch's names)
    """A copy of input (broadcast with the bool `mask`) with source's elements, in row-major order,
    written where mask is true (`torch.masked_scatter`); source needs at least as many elements as
    mask has true ones, the rest unused."""
    x, mask = _with_mask("masked_scatter", input, mask)
    positions = _positions(x)[mask]
    source = _same_dtype("masked_scatter", x, _tensor(source), "source")
    if source.data.size < positions.size:
        raise ShapeError(f"masked_scatter: the mask has {positions.size} true elements but source only {source.data.size}")
    return _into(x, positions, source.reshape(-1)[: positions.size])


def narrow(input, dim, start, length):  # noqa: A002  (PyTorch's names)
    """The `length` slices from `start` (negative counts from the end) along `dim` (`torch.narrow`)."""
    x = _tensor(input)
    dim = ops.single_axis(dim, x.ndim, "narrow")
    n = x.shape[dim]
    start = int(start.item() if isinstance(start, Tensor) else start)
    begin = start + n if start < 0 else start
    if not (0 <= begin <= n and 0 <= length <= n - begin):
        raise ShapeError(f"narrow: start {start} and length {length} do not fit dim {dim} of length {n} (shape {x.shape})")
    return _along(x, dim, slice(begin, begin + length))


def select(input, dim, index):  # noqa: A002  (PyTorch's names)
    """The slice at `index` (negative from the end) along `dim`, that axis removed (`torch.select`:
    `select(x, 1, i)` is `x[:, i]`)."""
    x = _tensor(input)
    dim = _existing_axis("select", x, dim)
    n = x.shape[dim]
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not -n <= index < n:
        raise ShapeError(f"select: index {index!r} is out of range for dim {dim} of length {n} (shape {x.shape})")
    return _along(x, dim, int(index))


def unbind(input, dim=0):  # noqa: A002  (PyTorch's names)
    """The slices along `dim`, that axis removed, as a tuple (`torch.unbind`), each differentiable."""
    x = _tensor(input)
    dim = _existing_axis("unbind", x, dim)
    return tuple(_along(x, dim, i) for i in range(x.shape[dim]))


def _existing_axis(name, x, dim):
    """`dim` as a non-negative axis of x, which must have one (`single_axis` takes 0 for a 0-d tensor)."""
    if x.ndim == 0:
        raise ShapeError(f"{name}: a 0-d tensor has no dimension {dim}")
    return ops.single_axis(dim, x.ndim, name)


def take(input, index):  # noqa: A002  (PyTorch's names)
    """The elements at the flat (row-major) positions `index`, negative ones from the end, in
    index's shape (`torch.take`); repeated positions add their gradients."""
    x = _tensor(input)
    index = _integers("take", index)
    n = x.data.size
    if index.size and not (-n <= index.min() and index.max() < n):
        raise ShapeError(f"take: index values must lie in [{-n}, {n}) for a tensor of {n} elements (shape {x.shape}); got {index.min()}..{index.max()}")
    return x.reshape(-1)[index]


def ravel(input):  # noqa: A002  (PyTorch's names)
    """The elements as a 1-D tensor, row by row (`torch.ravel`; a 0-d tensor gives shape (1,))."""
    return _tensor(input).reshape(-1)


def tile(input, dims):  # noqa: A002  (PyTorch's names)
    """input repeated `dims` times along each axis (`torch.tile`, numpy's `tile`): `repeat` with
    1s put in front of a `dims` shorter than input's rank (where `repeat` refuses it)."""
    x = _tensor(input)
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    return repeat(x, *((1,) * (x.ndim - len(dims)) + dims))


def fliplr(input):  # noqa: A002  (PyTorch's names)
    """The columns in reverse order: the flip of dim 1 (`torch.fliplr`, at least 2-D)."""
    x = _tensor(input)
    if x.ndim < 2:
        raise ShapeError(f"fliplr: needs at least 2 dimensions, got shape {x.shape}")
    return x.flip(1)


def flipud(input):  # noqa: A002  (PyTorch's names)
    """The rows in reverse order: the flip of dim 0 (`torch.flipud`, at least 1-D)."""
    x = _tensor(input)
    if x.ndim < 1:
        raise ShapeError("flipud: needs at least 1 dimension, got a 0-d tensor")
    return x.flip(0)


def rot90(input, k=1, dims=(0, 1)):  # noqa: A002  (PyTorch's names)
    """input turned by k quarter turns in the plane of `dims`, from the first axis toward the
    second (`torch.rot90`; a negative k turns the other way): a flip and a transpose, as there."""
    x = _tensor(input)
    if len(dims) != 2 or x.ndim < 2:
        raise ShapeError(f"rot90: needs two dims of a tensor with at least 2 dimensions, got dims {tuple(dims)} for shape {x.shape}")
    a, b = _dims("rot90", dims, x.ndim)
    k = int(k) % 4
    if k == 1:
        return x.flip(b).swapaxes(a, b)
    if k == 2:
        return x.flip((a, b))
    if k == 3:
        return x.flip(a).swapaxes(a, b)
    return x.clone()


def _dims(name, dims, ndim):
    """`dims` (an int or a sequence) as a list of non-negative axes, in the order given, without repeats."""
    out = [ops.single_axis(d, ndim, name) for d in ([dims] if isinstance(dims, (int, np.integer)) else dims)]
    if len(set(out)) != len(out):
        raise ShapeError(f"{name}: repeated dim in {dims}")
    return out


def movedim(input, source, destination):  # noqa: A002  (PyTorch's names)
    """The axes `source` moved to the positions `destination`, the others keeping their order
    (`torch.movedim`, numpy's `moveaxis`): a permutation."""
    x = _tensor(input)
    src, dst = _dims("movedim", source, x.ndim), _dims("movedim", destination, x.ndim)
    if len(src) != len(dst):
        raise ShapeError(f"movedim: source {source} and destination {destination} need the same number of dims")
    order = [d for d in range(x.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x.permute(order) if x.ndim else x


moveaxis = movedim


def swapaxes(input, axis0, axis1):  # noqa: A002  (PyTorch's names)
    """The two axes exchanged (`torch.swapaxes`): a transpose."""
    return _tensor(input).swapaxes(axis0, axis1)


def swapdims(input, dim0, dim1):  # noqa: A002  (PyTorch's names)
    """`swapaxes` under PyTorch's other name."""
    return swapaxes(input, dim0, dim1)


def unflatten(input, dim, sizes):  # noqa: A002  (PyTorch's names)
    """The axis `dim` split into axes of the given `sizes` (one may be -1), the inverse of
    `flatten` (`torch.unflatten`): a reshape."""
    x = _tensor(input)
    dim = ops.single_axis(dim, x.ndim, "unflatten")
    sizes = [int(s) for s in sizes]
    known = int(np.prod([s for s in sizes if s != -1]))
    n = x.shape[dim]
    if not sizes or sizes.count(-1) > 1 or builtins.any(s < -1 for s in sizes) or (n != known if -1 not in sizes else known == 0 or n % known):
        raise ShapeError(f"unflatten: sizes {sizes} do not split dim {dim} of length {n} (shape {x.shape})")
    sizes = [n // known if s == -1 else s for s in sizes]
    return x.reshape(x.shape[:dim] + tuple(sizes) + x.shape[dim + 1 :])


def clone(input):  # noqa: A002  (PyTorch's names)
    """A copy with its own data, in the graph (`torch.clone`)."""
    return _tensor(input).clone()


def _constant(name, x):
    """x's data, refusing a traced tensor: a compiled program could not recompute what is made of it."""
    if tracing.depth and x.requires_grad:
        _refuse_while_tracing(x, name, f"Compute {name} outside the compiled function.")
    return x.data



def _unique_result(values, inverse, counts, return_inverse, return_counts):
    out = (Tensor(values),)
    out += (Tensor(inverse.astype(np.int64)),) if return_inverse else ()
    out += (Tensor(counts.astype(np.int64)),) if return_counts else ()
    return out[0] if len(out) == 1 else out


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002  (PyTorch's names)
    """The distinct elements (or, along `dim`, the distinct slices), in ascending order, as
    `torch.unique`; with `return_inverse` also where each element of the input went (the input's
    shape, or dim's length), with `return_counts` how often each occurs (int64 tensors). Always
    sorted (PyTorch's CPU result, whatever `sorted` says). Not differentiated, as there."""
    data = _constant("unique", _tensor(input))
    if dim is None:
        values, inverse, counts = np.unique(data.reshape(-1), return_inverse=True, return_counts=True)
        inverse = inverse.reshape(data.shape)
    else:
        values, inverse, counts = np.unique(data, axis=ops.single_axis(dim, data.ndim, "unique"), return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa: A002  (PyTorch's names)
    """The input with each run of equal consecutive elements (or slices along `dim`) kept once, as
    `torch.unique_consecutive` (numpy's and Unix's `uniq`); `return_inverse` and `return_counts`
    as in `unique`. Not differentiated."""
    data = _constant("unique_consecutive", _tensor(input))
    axis = 0 if dim is None else ops.single_axis(dim, data.ndim, "unique_consecutive")
    moved = data.reshape(-1) if dim is None else np.moveaxis(data, axis, 0)
    n = len(moved)
    rows = moved.reshape(n, -1)
    starts = np.ones(n, dtype=bool)
    starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    first = np.flatnonzero(starts)
    values = moved[first] if dim is None else np.moveaxis(moved[first], 0, axis)
    inverse = np.cumsum(starts) - 1
    return _unique_result(values, inverse.reshape(data.shape) if dim is None else inverse, np.diff(np.append(first, n)), return_inverse, return_counts)


def bucketize(input, boundaries, *, out_int32=False, right=False):  # noqa: A002  (PyTorch's names)
    """The bucket of each element among the ascending 1-D `boundaries` (`torch.bucketize`): i with
    boundaries[i−1] < x ≤ boundaries[i], or with `right=True` boundaries[i−1] ≤ x < boundaries[i];
    int64 (int32 with `out_int32`), of the input's shape (0-d for a number)."""
    edges = np.asarray(boundaries.data if isinstance(boundaries, Tensor) else boundaries)
    if edges.ndim != 1:
        raise ShapeError(f"bucketize: boundaries must be 1-D, got shape {edges.shape}")
    values = _constant("bucketize", _tensor(input))
    return Tensor(np.searchsorted(edges, values, side="right" if right else "left").astype(np.int32 if out_int32 else np.int64))


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None):
    """Where each of `values` would go in the ascending last axis of `sorted_sequence` to keep it
    sorted (`torch.searchsorted`): the first such place, or the last with `right=True` (or
    `side="right"`); an N-D sequence has one row per row of values (the leading dims equal).
    `sorter` holds the indices that sort the sequence, if it is not sorted itself."""
    if side not in (None, "left", "right") or (side == "left" and right):
        raise ValueError(f"searchsorted: side must be 'left' or 'right' and agree with right={right}, got {side!r}")
    side = side or ("right" if right else "left")
    sequence = np.asarray(sorted_sequence.data if isinstance(sorted_sequence, Tensor) else sorted_sequence)
    if sorter is not None:
        sequence = np.take_along_axis(sequence, _integers("searchsorted", sorter, "sorter"), axis=-1)
    found = _constant("searchsorted", _tensor(values))
    dtype = np.int32 if out_int32 else np.int64
    if sequence.ndim == 1:
        return Tensor(np.searchsorted(sequence, found, side=side).astype(dtype))
    if sequence.ndim == 0 or found.ndim != sequence.ndim or found.shape[:-1] != sequence.shape[:-1]:
        raise ShapeError(f"searchsorted: an N-D sequence (shape {sequence.shape}) needs values with the same leading dims, got shape {found.shape}")
    rows = zip(sequence.reshape(-1, sequence.shape[-1]), found.reshape(-1, found.shape[-1]))
    return Tensor(np.stack([np.searchsorted(s, v, side=side) for s, v in rows]).reshape(found.shape).astype(dtype))

def nonzero(input, *, as_tuple=False):  # noqa: A002  (PyTorch's names)
    """Where input is nonzero (`torch.nonzero`): an int64 (N, ndim) tensor of indices, or with
    `as_tuple=True` one 1-D int64 tensor per axis. Positions, not differentiated."""
    data = _constant("nonzero", _tensor(input))
    if as_tuple:
        return tuple(Tensor(i.astype(np.int64)) for i in np.nonzero(np.atleast_1d(data)))
    return Tensor(np.argwhere(data).astype(np.int64))


def argwhere(input):  # noqa: A002  (PyTorch's names)
    """`nonzero(input)`: the (N, ndim) int64 indices of the nonzero elements (`torch.argwhere`)."""
    return nonzero(input)


def count_nonzero(input, dim=None):  # noqa: A002  (PyTorch's names)
    """How many elements are nonzero, over every element or along `dim` (an int or a tuple), as
    int64 (`torch.count_nonzero`)."""
    x = _tensor(input)
    axes = ops.normalize_axis(dim, x.ndim, "count_nonzero")
    return Tensor(np.asarray(np.count_nonzero(_constant("count_nonzero", x), axis=axes), dtype=np.int64))


def roll(input, shifts, dims=None):  # noqa: A002  (PyTorch's names)
    """The elements shifted cyclically by `shifts` along `dims` (`torch.roll`); without `dims`, the
    flattened tensor rolled and put back in shape. A gather by index, one per axis."""
    x = _tensor(input)
    shifts = [shifts] if isinstance(shifts, (int, np.integer)) else list(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise ShapeError(f"roll: without dims, shifts must be one int, got {shifts}")
        return roll(x.reshape(-1), shifts, 0).reshape(x.shape)
    dims = [dims] if isinstance(dims, (int, np.integer)) else list(dims)
    if len(shifts) != len(dims) or not dims:
        raise ShapeError(f"roll: needs one shift per dim, got shifts {shifts} and dims {dims}")
    for shift, dim in zip(shifts, dims):
        dim = ops.single_axis(dim, x.ndim, "roll")
        n = x.shape[dim]
        x = _along(x, dim, (np.arange(n) - int(shift)) % builtins.max(n, 1))
    return x


def diff(input, n=1, dim=-1, prepend=None, append=None):  # noqa: A002  (PyTorch's names)
    """The n-th forward difference along `dim`, out[i] = x[i + 1] − x[i] applied n times
    (`torch.diff`), after `prepend` and `append` are joined on along `dim`."""
    x = _tensor(input)
    if x.ndim == 0:
        raise ShapeError("diff: needs at least one dimension, got a 0-d tensor")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ShapeError(f"diff: n must be a non-negative int, got {n!r}")
    dim = ops.single_axis(dim, x.ndim, "diff")
    extra = [_tensor(t) for t in (prepend, append) if t is not None]
    if builtins.any(t.ndim != x.ndim or t.shape[:dim] + t.shape[dim + 1 :] != x.shape[:dim] + x.shape[dim + 1 :] for t in extra):
        raise ShapeError(f"diff: prepend and append must match the input's shape {x.shape} except along dim {dim}, got {[t.shape for t in extra]}")
    x = concatenate([t for t in (prepend, x, append) if t is not None], axis=dim) if extra else x
    for _ in range(n):
        x = _along(x, dim, slice(1, None)) - _along(x, dim, slice(None, -1))
    return x



def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of y along `dim` by the trapezoidal rule (`torch.trapezoid`): at the points
    `x` (1-D along dim, or broadcasting with y), or spaced `dx` apart (1 by default).
    Differentiable in y and x."""
    y = _tensor(y)
    if x is not None and dx is not None:
        raise TypeError("trapezoid: pass x or dx, not both")
    dim = ops.single_axis(dim, y.ndim, "trapezoid")
    sides = _along(y, dim, slice(1, None)) + _along(y, dim, slice(None, -1))
    if x is None:
        return sides.sum(axis=dim) * (0.5 if dx is None else 0.5 * dx)
    x = _tensor(x)
    if x.ndim == 1:
        if len(x) != y.shape[dim]:
            raise ShapeError(f"trapezoid: a 1-D x needs the {y.shape[dim]} points of dim {dim} of y (shape {y.shape}), got {len(x)}")
        x = x.reshape([-1 if i == dim else 1 for i in range(y.ndim)])
    return (diff(x, dim=dim - y.ndim) * sides).sum(axis=dim) * 0.5


trapz = trapezoid


def vander(x, N=None, increasing=False):  # noqa: N803  (PyTorch's names)
    """The Vandermonde matrix of a 1-D x (`torch.vander`): column j is x^(N−1−j), or x^j with
    `increasing=True`; N = len(x) by default. Running products of x, so exact (and differentiable
    to every order) at x = 0."""
    (x,) = _rank("vander", (x,), (1,))
    n = len(x) if N is None else int(N)
    if n < 0:
        raise ShapeError(f"vander: N must be non-negative, got {N}")
    ones = Tensor(np.ones((len(x), builtins.min(n, 1)), dtype=x.dtype))
    powers = concatenate([ones, x.unsqueeze(1).broadcast_to((len(x), builtins.max(n - 1, 0)))], axis=1).cumprod(1)
    return powers if increasing else powers.flip(1)


def cartesian_prod(*tensors):
    """Every tuple of one element from each 1-D tensor, as the rows of a (N, k) tensor
    (`torch.cartesian_prod`; one tensor is returned as it is). Differentiable."""
    grids = meshgrid(*tensors, indexing="ij")
    return grids[0] if len(grids) == 1 else stack([g.reshape(-1) for g in grids], axis=1)


def combinations(input, r=2, with_replacement=False):  # noqa: A002  (PyTorch's names)
    """The r-element combinations of a 1-D tensor's elements, in itertools' order, as the rows of a
    (count, r) tensor (`torch.combinations`); r = 0 gives an empty 1-D tensor, as there. Differentiable."""
    (x,) = _rank("combinations", (input,), (1,))
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 0:
        raise ShapeError(f"combinations: r must be a non-negative int, got {r!r}")
    if r == 0:
        return Tensor(np.zeros(0, dtype=x.dtype))
    choose = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    picks = np.array(list(choose(range(len(x)), r)), dtype=np.int64).reshape(-1, r)
    return x[picks]

def diag(input, diagonal=0):  # noqa: A002  (PyTorch's names)
    """A vector made the `diagonal`-th diagonal of a square matrix of zeros, or a matrix's
    `diagonal`-th diagonal as a vector (`torch.diag`)."""
    x = _tensor(input)
    if x.ndim == 2:
        return x.diagonal(diagonal)
    if x.ndim != 1:
        raise ShapeError(f"diag: expects a vector or a matrix, got shape {x.shape}")
    n = len(x)
    rows, cols = np.ogrid[: n + builtins.abs(int(diagonal)), : n + builtins.abs(int(diagonal))]
    padded = concatenate([x, Tensor(np.zeros(1, dtype=x.dtype))])  # the off-diagonal places pick the zero
    return padded[np.where(cols - rows == diagonal, np.minimum(rows, cols), n)]



def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002  (PyTorch's names)
    """Each vector along input's last axis made the `offset`-th diagonal of a square matrix of
    zeros, whose two axes are `dim1` and `dim2` of the result (`torch.diag_embed`, the inverse of
    `diagonal`). Differentiable: a gather from the vectors padded with a zero."""
    x = _tensor(input)
    if x.ndim == 0:
        raise ShapeError("diag_embed: needs at least one dimension, got a 0-d tensor")
    dims = _dims("diag_embed", (dim1, dim2), x.ndim + 1)
    n = x.shape[-1]
    m = n + builtins.abs(int(offset))
    rows, cols = np.ogrid[:m, :m]
    padded = concatenate([x, Tensor(np.zeros(x.shape[:-1] + (1,), dtype=x.dtype))], axis=-1)  # off the diagonal, the zero
    return movedim(padded[..., np.where(cols - rows == offset, np.minimum(rows, cols), n)], (-2, -1), dims)

def diagonal(input, offset=0, dim1=0, dim2=1):  # noqa: A002  (PyTorch's names)
    """The `offset`-th diagonal of the matrices along `dim1` and `dim2`, as the last axis
    (`torch.diagonal`): above the main one for offset > 0, below for offset < 0."""
    x = _tensor(input)
    if x.ndim < 2:
        raise ShapeError(f"diagonal: needs at least 2 dimensions, got shape {x.shape}")
    dims = _dims("diagonal", (dim1, dim2), x.ndim)
    x = movedim(x, dims, (-2, -1))
    below, right = builtins.max(-offset, 0), builtins.max(offset, 0)
    steps = np.arange(builtins.max(builtins.min(x.shape[-2] - below, x.shape[-1] - right), 0))
    return x[(slice(None),) * (x.ndim - 2) + (steps + below, steps + right)]


def trace(input):  # noqa: A002  (PyTorch's names)
    """The sum of a matrix's main diagonal (`torch.trace`: 2-D only)."""
    (x,) = _rank("trace", (input,), (2,))
    return diagonal(x).sum()


def tril_indices(row, col, offset=0, *, dtype=np.int64):
    """The (2, N) indices, row by row, of the lower triangle (on and below the `offset`-th
    diagonal) of a row × col matrix (`torch.tril_indices`)."""
    return Tensor(np.stack(np.tril_indices(_size("tril_indices", row, "row"), offset, _size("tril_indices", col, "col"))).astype(dtype))


def triu_indices(row, col, offset=0, *, dtype=np.int64):
    """The (2, N) indices, row by row, of the upper triangle (on and above the `offset`-th
    diagonal) of a row × col matrix (`torch.triu_indices`)."""
    return Tensor(np.stack(np.triu_indices(_size("triu_indices", row, "row"), offset, _size("triu_indices", col, "col"))).astype(dtype))


def _size(name, n, what):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ShapeError(f"{name}: {what} must be a non-negative int, got {n!r}")
    return int(n)


def _at_least(tensors, ndim, name):
    """The tensors reshaped to at least `ndim` axes where numpy's `atleast_1d`/`_2d`/`_3d` put the
    new ones: (n,) becomes (1, n) and (1, n, 1), (m, n) becomes (m, n, 1)."""
    at_least = {1: np.atleast_1d, 2: np.atleast_2d, 3: np.atleast_3d}[ndim]
    return [t.reshape(at_least(np.broadcast_to(np.empty((), dtype=bool), t.shape)).shape) for t in _tensors(name, tensors)]



def _at_least_form(ndim):
    def at_least(*tensors):
        single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
        tensors = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
        out = tuple(_at_least(tensors, ndim, f"atleast_{ndim}d"))
        return out[0] if single else out

    at_least.__name__ = at_least.__qualname__ = f"atleast_{ndim}d"
    at_least.__doc__ = (
        f"`torch.atleast_{ndim}d`: each tensor reshaped to at least {ndim} dimensions (as numpy's: (n,) "
        f"becomes {['(n,)', '(1, n)', '(1, n, 1)'][ndim - 1]}); one tensor gives a tensor, several (or a list) a tuple."
    )
    return at_least


atleast_1d, atleast_2d, atleast_3d = map(_at_least_form, (1, 2, 3))

def hstack(tensors):
    """Tensors joined column-wise (`torch.hstack`): along axis 0 for vectors, 1 otherwise."""
    tensors = _at_least(tensors, 1, "hstack")
    return concatenate(tensors, axis=0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Tensors joined row-wise (`torch.vstack`): vectors become rows, then along axis 0."""
    return concatenate(_at_least(tensors, 2, "vstack"), axis=0)


def dstack(tensors):
    """Tensors joined depth-wise (`torch.dstack`): made at least 3-D, then along axis 2."""
    return concatenate(_at_least(tensors, 3, "dstack"), axis=2)


def column_stack(tensors):
    """Tensors joined as columns (`torch.column_stack`): scalars and vectors become columns, then
    along axis 1."""
    return concatenate([t.reshape(-1, 1) if t.ndim < 2 else t for t in _tensors("column_stack", tensors)], axis=1)


def broadcast_tensors(*tensors):
    """The tensors broadcast to their common shape (`torch.broadcast_tensors`)."""
    tensors = [_tensor(t) for t in tensors]
    try:
        shape = np.broadcast_shapes(*(t.shape for t in tensors))
    except ValueError:
        raise ShapeError(f"broadcast_tensors: shapes {[t.shape for t in tensors]} do not broadcast together") from None
    return tuple(t.broadcast_to(shape) for t in tensors)


def block_diag(*tensors):
    """The tensors (scalars, vectors as rows, matrices) down the diagonal of a matrix of zeros
    (`torch.block_diag`): each block is padded with zeros left and right, then the rows joined."""
    blocks = [t.reshape(1, -1) if t.ndim < 2 else t for t in (_tensor(t) for t in tensors)]
    if builtins.any(b.ndim > 2 for b in blocks):
        raise ShapeError(f"block_diag: takes tensors of at most 2 dimensions, got shapes {[b.shape for b in blocks]}")
    if not blocks:
        return Tensor(np.zeros((1, 0)))
    dtype = np.result_type(*(b.dtype for b in blocks))
    width, left, rows = builtins.sum(b.shape[1] for b in blocks), 0, []
    for b in blocks:
        pad = [Tensor(np.zeros((b.shape[0], n), dtype=dtype)) for n in (left, width - left - b.shape[1])]
        rows.append(concatenate([pad[0], b.astype(dtype), pad[1]], axis=1))
        left += b.shape[1]
    return concatenate(rows, axis=0)


def kron(input, other):  # noqa: A002  (PyTorch's names)
    """The Kronecker product (`torch.kron`): every element of input times the whole of other, the
    blocks laid out as input's elements are. A broadcast product of interleaved axes, reshaped."""
    a, b = _tensor(input), _tensor(other)
    ndim = builtins.max(a.ndim, b.ndim)
    a_shape, b_shape = (1,) * (ndim - a.ndim) + a.shape, (1,) * (ndim - b.ndim) + b.shape
    spread = a.reshape([m for n in a_shape for m in (n, 1)]) * b.reshape([m for n in b_shape for m in (1, n)])
    return spread.reshape([m * n for m, n in zip(a_shape, b_shape)])


def lerp(input, end, weight):  # noqa: A002  (PyTorch's names)
    """input + weight·(end − input), the linear interpolation (`torch.lerp`; weight a number or a tensor)."""
    x = _tensor(input)
    shapes = [v.shape if isinstance(v, Tensor) else np.shape(v) for v in (x, end, weight)]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError(f"lerp: input, end and weight of shapes {shapes} do not broadcast together") from None
    return x + weight * (end - x)


def logit(input, eps=None):  # noqa: A002  (PyTorch's names)
    """log(p / (1 − p)), the inverse of the sigmoid (`torch.logit`); with `eps`, p is clamped to
    [eps, 1 − eps] first (no gradient outside)."""
    p = _tensor(input)
    p = p if eps is None else p.clip(eps, 1 - eps)
    return (p / (1 - p)).log()


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):  # noqa: A002  (PyTorch's names)
    """NaN, +∞ and −∞ replaced by `nan`, `posinf` and `neginf` (by default the dtype's largest and
    smallest finite numbers), as `torch.nan_to_num`; the gradient flows to the other elements."""
    x = _tensor(input)
    if x.dtype.kind != "f":
        return x.clone()
    info = np.finfo(x.dtype)
    top, bottom = info.max if posinf is None else posinf, info.min if neginf is None else neginf
    return where(isnan(x), nan, where(x == np.inf, top, where(x == -np.inf, bottom, x)))


amax, amin = map(_method, ["amax", "amin"])
MinMax = collections.namedtuple("MinMax", ["min", "max"])


def aminmax(input, *, dim=None, keepdim=False):  # noqa: A002  (PyTorch's names)
    """The smallest and largest elements, over every element or along `dim`: `(min, max)` as
    `torch.aminmax`."""
    x = _tensor(input)
    return MinMax(x.amin(dim, keepdim), x.amax(dim, keepdim))


def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002  (PyTorch's names)
    """beta·input + alpha·(mat1 @ mat2), input broadcast (`torch.addmm`); with beta=0 input is ignored."""
    return _scaled_sum("addmm", input, mm(mat1, mat2), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002  (PyTorch's names)
    """beta·input + alpha·(batch1 @ batch2) for batches of matrices (`torch.baddbmm`)."""
    return _scaled_sum("baddbmm", input, bmm(batch1, batch2), beta, alpha)


def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002  (PyTorch's names)
    """input + value · tensor1 · tensor2, the three broadcast together (`torch.addcmul`). A float
    `value` with integer tensors gives floats (PyTorch truncates the value to an integer)."""
    return _plus_scaled("addcmul", input, tensor1, tensor2, value, lambda a, b: a * b)


def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002  (PyTorch's names)
    """input + value · tensor1 / tensor2, the three broadcast together (`torch.addcdiv`, Adam's
    step); a true division for integer tensors too, which PyTorch refuses."""
    return _plus_scaled("addcdiv", input, tensor1, tensor2, value, lambda a, b: a / b)


def _plus_scaled(name, input, tensor1, tensor2, value, combine):  # noqa: A002  (PyTorch's names)
    """input + value · combine(tensor1, tensor2), once the three are known to broadcast together."""
    x, a, b = tensors = [_tensor(t) for t in (input, tensor1, tensor2)]
    try:
        np.broadcast_shapes(*(t.shape for t in tensors))
    except ValueError:
        raise ShapeError(f"{name}: shapes {', '.join(str(t.shape) for t in tensors)} do not broadcast together") from None
    combined = combine(a, b)
    return x + (combined if value == 1 else combined * value)


def _scaled_sum(name, input, product, beta, alpha):  # noqa: A002  (PyTorch's names)
    x = _tensor(input)
    try:
        fits = np.broadcast_shapes(x.shape, product.shape) == product.shape
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"{name}: input of shape {x.shape} does not broadcast to the product's shape {product.shape}")
    scaled = product if alpha == 1 else alpha * product
    return scaled if beta == 0 else scaled + (x if beta == 1 else beta * x)


def tensordot(a, b, dims=2):
    """The sum of products over the last `dims` axes of a and the first of b, or over the axes
    listed, `dims=([axes of a], [axes of b])` (`torch.tensordot`): a permute, a reshape and a matmul."""
    a, b = _tensor(a), _tensor(b)
    if isinstance(dims, (int, np.integer)):
        if not 0 <= dims <= builtins.min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot: dims {dims} must be in [0, {builtins.min(a.ndim, b.ndim)}] for shapes {a.shape} and {b.shape}")
        dims = (list(range(a.ndim - dims, a.ndim)), list(range(dims)))
    axes_a, axes_b = _dims("tensordot", dims[0], a.ndim), _dims("tensordot", dims[1], b.ndim)
    if len(axes_a) != len(axes_b) or builtins.any(a.shape[i] != b.shape[j] for i, j in zip(axes_a, axes_b)):
        raise ShapeError(f"tensordot: axes {axes_a} of shape {a.shape} do not match axes {axes_b} of shape {b.shape}")
    free_a, free_b = [i for i in range(a.ndim) if i not in axes_a], [j for j in range(b.ndim) if j not in axes_b]
    size = int(np.prod([a.shape[i] for i in axes_a]))
    left = a.permute(free_a + axes_a).reshape(-1, size) if a.ndim else a.reshape(1, 1)
    right = b.permute(axes_b + free_b).reshape(size, -1) if b.ndim else b.reshape(1, 1)
    return (left @ right).reshape([a.shape[i] for i in free_a] + [b.shape[j] for j in free_b])


def inner(input, other):  # noqa: A002  (PyTorch's names)
    """Sums of products over the last axes (`torch.inner`): a scalar operand multiplies instead."""
    a, b = _tensor(input), _tensor(other)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"inner: the last dimensions differ, shapes {a.shape} and {b.shape}")
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


def matrix_power(input, n):  # noqa: A002  (PyTorch's names)
    """A square matrix (or a batch) to an integer power (`torch.linalg.matrix_power`): by repeated
    squaring; n = 0 gives the identity, n < 0 the power of the inverse."""
    a = _tensor(input)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"matrix_power: needs square matrices (at least 2 dimensions), got shape {a.shape}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ShapeError(f"matrix_power: n must be an int, got {n!r}")
    if n < 0:
        a, n = ops.inv(a), -n
    result, square = None, a
    while n:
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        square = square @ square if n else square
    return result if result is not None else Tensor(np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy())


def cdist(x1, x2, p=2.0):
    """The p-norm distances between every row of x1 (..., P, M) and every row of x2 (..., R, M),
    shape (..., P, R) (`torch.cdist`, computed exactly). A zero distance has gradient 0, as there."""
    a, b = _tensor(x1), _tensor(x2)
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"cdist: needs (..., P, M) and (..., R, M) with the same M, got shapes {a.shape} and {b.shape}")
    if p < 0:
        raise ShapeError(f"cdist: p must be non-negative, got {p}")
    d = (a.unsqueeze(-2) - b.unsqueeze(-3)).abs()
    if p == 0:
        return (d != 0).astype(d.dtype).sum(axis=-1)
    if p == np.inf:
        return d.amax(-1)
    return _power_of_positive(_power_of_positive(d, p).sum(axis=-1), 1.0 / p)


def _power_of_positive(x, exponent):
    """x ** exponent for x ≥ 0, with the value and gradient 0 where x is 0 (no infinite slope there)."""
    positive = x > 0  # a tensor, so that a compiled program recomputes it
    return where(positive, where(positive, x, 1.0) ** exponent, 0.0)


# --------------------------------------------------------------------------- PyTorch's further names
def _method_alias(name, method):
    """The module-level `torch.name(x, ...)` of the Tensor method `method` (torch.multiply is
    torch.mul): `_method`'s function under the alias's own name."""
    function = _method(method)
    function.__name__ = function.__qualname__ = name
    return function


# torch's module-level arithmetic and comparisons, and their longer aliases (torch.greater is torch.gt).
add, sub, mul = _method("add"), _method("sub"), _method("mul")
subtract, multiply = _method_alias("subtract", "sub"), _method_alias("multiply", "mul")
eq, ne, lt, le, gt, ge = map(_method, "eq ne lt le gt ge".split())
not_equal, less, less_equal = _method_alias("not_equal", "ne"), _method_alias("less", "lt"), _method_alias("less_equal", "le")
greater, greater_equal = _method_alias("greater", "gt"), _method_alias("greater_equal", "ge")


def _logical(name, combine):
    def function(input, other):  # noqa: A002  (PyTorch's names)
        x, y = _tensor(input), _tensor(other)
        return Tensor(combine(_constant(name, x).astype(bool), _constant(name, y).astype(bool)))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"`torch.{name}`: the operands' truth (nonzero is True, NaN too) combined elementwise, "
                        f"broadcast; a bool tensor, a constant (no gradient).")
    return function


logical_and, logical_or, logical_xor = (_logical(name, fn) for name, fn in
                                        (("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor)))


def logical_not(input):  # noqa: A002  (PyTorch's names)
    """Where input is zero (`torch.logical_not`): a bool tensor, a constant."""
    return Tensor(np.logical_not(_constant("logical_not", _tensor(input))))


_ROUNDING_MODES = (None, "trunc", "floor")


def div(input, other, *, rounding_mode=None):  # noqa: A002  (PyTorch's names)
    """input / other as `torch.div`: the true quotient (integers give floats), or rounded toward
    zero (`rounding_mode="trunc"`) or toward −∞ (`"floor"`, `floor_divide`'s exact quotient). The
    rounded ones keep integer dtypes, where a zero divisor raises ZeroDivisionError as in PyTorch,
    and are steps, so their gradient is zeros as PyTorch's. Float "trunc" is trunc(input / other),
    PyTorch's formula."""
    if rounding_mode not in _ROUNDING_MODES:
        raise ValueError(f"div: rounding_mode must be one of {_ROUNDING_MODES}, got {rounding_mode!r}")
    if rounding_mode is None:
        return true_divide(input, other)
    if rounding_mode == "floor":
        return floor_divide(input, other)
    x, y = _promoted(input, other)
    if x.dtype.kind == "f":
        return (x / y).trunc()
    floored = floor_divide(x, y)  # one below the truncated quotient where it is inexact and negative
    return where(fmod(x, y) == 0, floored, where((x < 0) != (y < 0), floored + 1, floored))


divide = div


def positive(input):  # noqa: A002  (PyTorch's names)
    """input itself (`torch.positive`, unary +); refused for bool tensors, as PyTorch does."""
    x = _tensor(input)
    if x.dtype == np.bool_:
        raise DtypeError("positive: not defined for a bool tensor (as in PyTorch)")
    return x


def sgn(input):  # noqa: A002  (PyTorch's names)
    """`torch.sgn`: x/|x| for complex numbers, which minigrad lacks, so the sign of a real tensor."""
    return _tensor(input).sign()


def float_power(input, exponent):  # noqa: A002  (PyTorch's names)
    """input ** exponent computed in float64 whatever the dtypes (`torch.float_power`), either a
    number; differentiable in both, as `pow`."""
    x, y = (t if isinstance(t, Tensor) else Tensor(np.asarray(t, dtype=np.float64)) for t in (input, exponent))
    return x.astype(np.float64) ** y.astype(np.float64)


def _nan_ignoring(name, keeps_first, which):
    def function(input, other):  # noqa: A002  (PyTorch's names)
        x, y = _promoted(input, other)
        return where(isnan(y), x, where(keeps_first(x, y), x, y))  # nested, not a logical_or: a traced mask stays traced

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"The {which} of the two elementwise, a NaN losing to a number (`torch.{name}`; NaN only where "
                        f"both are). As PyTorch's, a tie's gradient goes to input alone (`maximum` and `minimum` split it).")
    return function


fmax = _nan_ignoring("fmax", lambda x, y: x >= y, "larger")
fmin = _nan_ignoring("fmin", lambda x, y: x <= y, "smaller")


def isposinf(input):  # noqa: A002  (PyTorch's names)
    """Where input is +∞ (a bool tensor; all False for integers)."""
    return _tensor(input) == np.inf


def isneginf(input):  # noqa: A002  (PyTorch's names)
    """Where input is −∞ (a bool tensor; all False for integers)."""
    return _tensor(input) == -np.inf


def isreal(input):  # noqa: A002  (PyTorch's names)
    """All True (`torch.isreal`): minigrad's tensors are real."""
    return Tensor(np.ones(_tensor(input).shape, dtype=bool))


def bincount(input, weights=None, minlength=0):  # noqa: A002  (PyTorch's names)
    """How often each value 0, 1, … occurs in a 1-D tensor of non-negative integers, as
    `torch.bincount`: max(input) + 1 bins, or `minlength` if more. With `weights` each occurrence
    adds its weight: float32 weights give float32 sums, others float64, as PyTorch's. A scatter-add,
    so differentiable in the weights (PyTorch's is not)."""
    x = _tensor(input)
    counts = _constant("bincount", x)
    if x.ndim != 1 or counts.dtype.kind not in "iub" or (counts < 0).any():
        raise ShapeError(f"bincount: input must be a 1-D tensor of non-negative integers, got dtype {x.dtype} and shape {x.shape}")
    if isinstance(minlength, bool) or not isinstance(minlength, (int, np.integer)) or minlength < 0:
        raise ValueError(f"bincount: minlength must be a non-negative int, got {minlength!r}")
    n = builtins.max(int(minlength), int(counts.max()) + 1 if counts.size else 0)
    if weights is None:
        return Tensor(np.bincount(counts, minlength=n).astype(np.int64))
    w = _tensor(weights)
    if w.shape != x.shape:
        raise ShapeError(f"bincount: weights of shape {w.shape} must have input's shape {x.shape}")
    w = w if w.dtype in (np.float32, np.float64) else w.astype(np.float64)
    return index_add(Tensor(np.zeros(n, dtype=w.dtype)), 0, counts.astype(np.int64), w)


def cov(input, *, correction=1, fweights=None, aweights=None):  # noqa: A002  (PyTorch's names)
    """The covariance matrix of the variables in input's rows, observed in its columns (a vector
    is one variable: a 0-d result), as `torch.cov`: integer frequency weights `fweights` and
    float weights `aweights` per observation, divided by Σw − correction (Σw − correction·Σw·a/Σw
    with aweights); a divisor ≤ 0 gives inf/NaN, as PyTorch's (which also warns). Differentiable
    in input and aweights."""
    x = _tensor(input)
    if x.ndim > 2:
        raise ShapeError(f"cov: input must be a vector or a matrix (variables × observations), got shape {x.shape}")
    x = x.reshape(1, -1) if x.ndim < 2 else x
    n = x.shape[1]
    w = None
    for given, name, kinds in ((fweights, "fweights", "iu"), (aweights, "aweights", "f")):
        if given is None:
            continue
        given = _tensor(given)
        if given.shape != (n,) or given.dtype.kind not in kinds:
            raise ShapeError(f"cov: {name} must be a 1-D {'integer' if kinds == 'iu' else 'float'} tensor of the {n} observations, "
                             f"got dtype {given.dtype} and shape {given.shape}")
        if (_constant("cov", given) < 0).any():
            raise ValueError(f"cov: {name} must be non-negative")
        w = given if w is None else w * given
    if w is None:
        total, mean = n, x.mean(axis=1, keepdims=True)
    else:
        w = w.astype(x.dtype) if w.dtype.kind != "f" else w
        total = w.sum()
        mean = (x * w).sum(axis=1, keepdims=True) / total
    if w is None or correction == 0:
        divisor = total - correction if w is None else total
    elif aweights is None:
        divisor = total - correction
    else:
        divisor = total - correction * (w * _tensor(aweights)).sum() / total
    divisor = where(divisor > 0, divisor, 0.0) if isinstance(divisor, Tensor) else builtins.max(divisor, 0)
    centred = x - mean
    return (matmul(centred, (centred if w is None else centred * w).mT) / divisor).squeeze()


def corrcoef(input):  # noqa: A002  (PyTorch's names)
    """Pearson's correlation coefficients of input's rows (`torch.corrcoef`): `cov` divided by the
    standard deviations on both sides, clipped to [−1, 1] as PyTorch's."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    s = c.diagonal().sqrt()
    return (c / s.reshape(-1, 1) / s.reshape(1, -1)).clip(-1.0, 1.0)


def dist(input, other, p=2):  # noqa: A002  (PyTorch's names)
    """The p-norm of input − other, broadcast and flattened (`torch.dist`)."""
    x, y = _promoted(input, other)
    return (x - y).norm(p)


def vdot(input, other):  # noqa: A002  (PyTorch's names)
    """The inner product of two vectors, the first conjugated (`torch.vdot`): `dot`, tensors being real."""
    return dot(input, other)


def addmv(input, mat, vec, *, beta=1, alpha=1):  # noqa: A002  (PyTorch's names)
    """beta·input + alpha·(mat @ vec), input broadcast (`torch.addmv`)."""
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):  # noqa: A002  (PyTorch's names)
    """beta·input + alpha·outer(vec1, vec2), input broadcast (`torch.addr`)."""
    return _scaled_sum("addr", input, outer(vec1, vec2), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002  (PyTorch's names)
    """beta·input + alpha·Σᵢ batch1[i] @ batch2[i], the batch summed (`torch.addbmm`)."""
    return _scaled_sum("addbmm", input, bmm(batch1, batch2).sum(axis=0), beta, alpha)


def _split_at(x, dim, bounds):
    """The slices of x along dim between consecutive `bounds` (Python's slice clamping)."""
    before = (slice(None),) * dim
    return tuple(x[before + (slice(start, stop),)] for start, stop in zip(bounds[:-1], bounds[1:]))


def tensor_split(input, indices_or_sections, dim=0):  # noqa: A002  (PyTorch's names)
    """Pieces of input along dim, as `torch.tensor_split`: an int n gives n pieces (the first
    length % n one longer, empty ones when n > length), a list of indices cuts before each (empty
    pieces where they pass the end); a 0-d integer tensor is an int, a 1-D one a list."""
    x = _tensor(input)
    axis = ops.single_axis(dim, x.ndim, "tensor_split")
    n = x.shape[axis]
    cut = indices_or_sections.data if isinstance(indices_or_sections, Tensor) else indices_or_sections
    cut = cut.tolist() if isinstance(cut, np.ndarray) else cut
    if isinstance(cut, (int, np.integer)) and not isinstance(cut, bool):
        if cut < 1:
            raise ValueError(f"tensor_split: the number of sections must be positive, got {cut}")
        sizes = [n // cut + (i < n % cut) for i in range(cut)]
        return _split_at(x, axis, np.cumsum([0] + sizes).tolist())
    if not isinstance(cut, (list, tuple)) or not builtins.all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in cut):
        raise TypeError(f"tensor_split: indices_or_sections must be an int or a sequence of ints, got {indices_or_sections!r}")
    return _split_at(x, axis, [0, *(int(i) for i in cut), None])


def _split_form(name, dim, ndim):
    def function(input, indices_or_sections):  # noqa: A002  (PyTorch's names)
        x = _tensor(input)
        if x.ndim < ndim:
            raise ShapeError(f"{name}: needs a tensor of at least {ndim} dimensions, got shape {x.shape}")
        axis = dim if x.ndim > 1 else 0
        if isinstance(indices_or_sections, (int, np.integer)) and x.shape[axis] % builtins.max(int(indices_or_sections), 1):
            raise ShapeError(f"{name}: dim {axis} of shape {x.shape} does not split into {indices_or_sections} equal pieces")
        return tensor_split(x, indices_or_sections, axis)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"`torch.{name}`: `tensor_split` along dim {dim}{' (0 for a vector)' if name == 'hsplit' else ''}, "
                        f"an int of sections having to divide the length.")
    return function


hsplit, vsplit, dsplit = _split_form("hsplit", 1, 1), _split_form("vsplit", 0, 2), _split_form("dsplit", 2, 3)


def split_with_sizes(input, split_sizes, dim=0):  # noqa: A002  (PyTorch's names)
    """`split` with a list of lengths (`torch.split_with_sizes`), which must add up to dim's length."""
    if isinstance(split_sizes, (int, np.integer)):
        raise TypeError(f"split_with_sizes: split_sizes must be a sequence of lengths, got {split_sizes!r}")
    return split(input, split_sizes, dim)


def diagflat(input, offset=0):  # noqa: A002  (PyTorch's names)
    """A square matrix with input, flattened, on its offset-th diagonal (`torch.diagflat`)."""
    return diag(_tensor(input).reshape(-1), offset)


def _integer_function(name, compute, kinds="iub", arity=2):
    """The `torch.name` of integer (and bool) tensors: computed by numpy, a constant (no gradient);
    a float operand is refused as PyTorch refuses it."""
    def computed(*xs):
        if builtins.any(x.dtype.kind not in kinds for x in xs):
            raise DtypeError(f"{name}: needs {'integer or bool' if 'b' in kinds else 'integer'} tensors, got {', '.join(str(x.dtype) for x in xs)}")
        return Tensor(compute(*(_constant(name, x) for x in xs)))

    if arity == 2:
        def function(input, other):  # noqa: A002  (PyTorch's names)
            return computed(*_promoted(input, other))
    else:
        def function(input):  # noqa: A002  (PyTorch's names)
            return computed(_tensor(input))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"`torch.{name}` of integer{' or bool' if 'b' in kinds else ''} tensors (numpy's `{compute.__name__}`): a constant, no gradient."
    return function


gcd, lcm = _integer_function("gcd", np.gcd, "iu"), _integer_function("lcm", np.lcm, "iu")
bitwise_and, bitwise_or, bitwise_xor = (_integer_function(f"bitwise_{op}", fn) for op, fn in
                                        (("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)))
bitwise_not = _integer_function("bitwise_not", np.invert, arity=1)
bitwise_left_shift = _integer_function("bitwise_left_shift", np.left_shift, "iu")
bitwise_right_shift = _integer_function("bitwise_right_shift", np.right_shift, "iu")


def ldexp(input, other):  # noqa: A002  (PyTorch's names)
    """input · 2^other (`torch.ldexp`): float even for integer operands, differentiable in both as
    the product it is (PyTorch's formula too)."""
    x, y = _float_operands(input, other)
    return x * 2.0 ** y


MantissaExponent = collections.namedtuple("MantissaExponent", ["mantissa", "exponent"])


def frexp(input):  # noqa: A002  (PyTorch's names)
    """(mantissa, exponent) with input = mantissa · 2^exponent, |mantissa| in [0.5, 1) (`torch.frexp`;
    the exponent int32). The mantissa is input / 2^exponent with the exponent a constant, so its
    gradient is 1 / 2^exponent, PyTorch's."""
    x = _tensor(input)
    if x.dtype.kind != "f":
        raise DtypeError(f"frexp: needs a floating-point tensor, got {x.dtype}")
    exponent = np.frexp(_constant("frexp", x))[1].astype(np.int32)
    return MantissaExponent(x / Tensor(np.ldexp(np.ones(1, x.dtype), exponent)), Tensor(exponent))


def nextafter(input, other):  # noqa: A002  (PyTorch's names)
    """The next float after input toward other (`torch.nextafter`): a constant, as PyTorch's has no gradient."""
    x, y = _promoted(input, other)
    if x.dtype.kind != "f":
        raise DtypeError(f"nextafter: needs floating-point tensors, got {x.dtype}")
    return Tensor(np.nextafter(_constant("nextafter", x), _constant("nextafter", y)))


def renorm(input, p, dim, maxnorm):  # noqa: A002  (PyTorch's names)
    """Each slice of input along `dim` whose p-norm exceeds maxnorm scaled down to norm maxnorm
    (`torch.renorm`, with its factor maxnorm / (norm + 1e-7)); differentiable through the norm."""
    x = _tensor(input)
    axis = ops.single_axis(dim, x.ndim, "renorm")
    if p <= 0:
        raise ValueError(f"renorm: p must be positive, got {p}")
    norms = x.norm(p, axis=tuple(a for a in range(x.ndim) if a != axis), keepdims=True)
    return x * where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


def unfold(input, dimension, size, step):  # noqa: A002  (PyTorch's names)
    """The windows of `size` elements every `step` along `dimension` (`Tensor.unfold`): that
    dimension becomes the window count, and a last one of `size` is added. PyTorch's is a strided
    view; this is a copy by indexing (the gradient sums over overlapping windows alike)."""
    x = _tensor(input)
    axis = ops.single_axis(dimension, builtins.max(x.ndim, 1), "unfold")
    row = x.reshape(1) if x.ndim == 0 else x  # a 0-d tensor has one window, of `size` ≤ 1 elements
    if size < 0 or size > row.shape[axis] or step < 1:
        raise ShapeError(f"unfold: size {size} must be in [0, {row.shape[axis]}] (dim {dimension} of shape {x.shape}) and step {step} positive")
    windows = np.arange(0, row.shape[axis] - size + 1, step)[:, None] + np.arange(size)
    out = movedim(movedim(row, axis, -1)[..., windows], -2, axis)
    return out.reshape(size) if x.ndim == 0 else out


def _scatter_into(name, input, src, pick):  # noqa: A002  (PyTorch's names)
    """input with src written where `pick` (of an array of input's shape) selects: the
    slice_scatter family, differentiable in both."""
    x, src = _tensor(input), _tensor(src)
    positions = pick(_positions(x))
    _same_dtype(name, x, src)
    if src.shape != positions.shape:
        raise ShapeError(f"{name}: src must have the selected part's shape {positions.shape} (of input's {x.shape}), got {src.shape}")
    return _into(x, positions, src)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):  # noqa: A002  (PyTorch's names)
    """input with src written into input[..., start:end:step, ...] along dim (`torch.slice_scatter`)."""
    axis = ops.single_axis(dim, _tensor(input).ndim, "slice_scatter")
    if step < 1:
        raise ValueError(f"slice_scatter: step must be positive, got {step}")
    return _scatter_into("slice_scatter", input, src, lambda p: p[(slice(None),) * axis + (slice(start, end, step),)])


def select_scatter(input, src, dim, index):  # noqa: A002  (PyTorch's names)
    """input with src written into the slice input.select(dim, index) (`torch.select_scatter`)."""
    x = _tensor(input)
    axis = ops.single_axis(dim, x.ndim, "select_scatter")
    _check_range("select_scatter", np.asarray(index), x.shape[axis], dim, x.shape, negative=True)
    return _scatter_into("select_scatter", x, src, lambda p: np.take(p, index, axis=axis))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):  # noqa: A002  (PyTorch's names)
    """input with src written into its diagonal(offset, dim1, dim2), laid out as `diagonal`
    returns it, the diagonal last (`torch.diagonal_scatter`)."""
    x = _tensor(input)
    dim1, dim2 = _dims("diagonal_scatter", (dim1, dim2), x.ndim)
    return _scatter_into("diagonal_scatter", x, src, lambda p: np.diagonal(p, offset, dim1, dim2))


def conj(input):  # noqa: A002  (PyTorch's names)
    """input itself: a real tensor is its own complex conjugate (`torch.conj`; `resolve_conj` and
    `resolve_neg` too, whose lazy conjugate and negative bits a real tensor never has)."""
    return _tensor(input)


resolve_conj = resolve_neg = conj
