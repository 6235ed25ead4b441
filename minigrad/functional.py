"""Operations on several tensors, and numerically careful compositions of primitives."""

import builtins

import numpy as np

from . import ops
from .errors import ShapeError
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
    order = np.argsort(-x.data if largest else x.data, axis=dim, kind="stable")
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


def logsumexp(x, axis=-1, keepdims=False, *, dim=None, keepdim=None):
    """log Σ exp(x) without overflow: the maximum is subtracted first (as a constant)."""
    axis = _dim("logsumexp", axis, dim, -1)
    keepdims = keepdims if keepdim is None else keepdim
    axes = ops.normalize_axis(axis, x.ndim, "logsumexp")  # an int, a tuple or None (all axes)
    shift = x.max(axis=axes, keepdims=True).detach()
    out = (x - shift).exp().sum(axis=axes, keepdims=True).log() + shift
    return out if keepdims else out.reshape([n for i, n in enumerate(x.shape) if axes is not None and i not in axes])


def log_softmax(x, axis=-1, *, dim=None):
    """log softmax(x) along one axis: x minus its logsumexp, computed stably."""
    axis = _dim("log_softmax", axis, dim, -1)
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
sum, mean, prod, argmax, argmin, cumsum, var, std, norm, all, any = map(  # noqa: A001
    _method, "sum mean prod argmax argmin cumsum var std norm all any".split()
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
