"""minigrad: a small, fast, readable reverse-mode automatic differentiation library.

Built chapter by chapter in the minigrad course; usable on its own for small models::

    import minigrad as mg
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    x.grad          # tensor([2., 4., 6.])

Heavy dependencies (graphviz, numba, matplotlib) load only when the feature that needs them is used.
"""

import numpy as _np

from .autograd import backward, gradients, unbroadcast
from .creation import (
    arange,
    empty,
    eye,
    Generator,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    manual_seed,
    multinomial,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from .einsum import einsum
from .errors import DtypeError, GraphError, LinAlgError, MinigradError, ShapeError
from .functional import (
    abs,
    absolute,
    acos,
    acosh,
    add,
    addbmm,
    addcdiv,
    addcmul,
    addmm,
    addmv,
    addr,
    all,
    allclose,
    amax,
    amin,
    aminmax,
    any,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    argmax,
    argmin,
    argsort,
    argwhere,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    baddbmm,
    bincount,
    block_diag,
    bmm,
    broadcast_tensors,
    bucketize,
    cartesian_prod,
    cat,
    cdist,
    ceil,
    chunk,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    clone,
    column_stack,
    combinations,
    concatenate,
    copysign,
    corrcoef,
    cos,
    cosh,
    count_nonzero,
    cov,
    cummax,
    cummin,
    cumprod,
    cumsum,
    deg2rad,
    diag,
    diag_embed,
    diagflat,
    diagonal,
    diff,
    digamma,
    dist,
    div,
    divide,
    dot,
    dsplit,
    dstack,
    eq,
    equal,
    erf,
    erfc,
    erfinv,
    exp,
    exp2,
    expm1,
    fix,
    flatten,
    flip,
    fliplr,
    flipud,
    float_power,
    floor,
    floor_divide,
    fmax,
    fmin,
    fmod,
    frac,
    gammainc,
    gammaincc,
    gather,
    ge,
    ger,
    greater,
    greater_equal,
    gt,
    heaviside,
    histc,
    histogram,
    hsplit,
    hstack,
    hypot,
    i0,
    i0e,
    i1,
    i1e,
    index_add,
    index_copy,
    index_fill,
    index_put,
    index_select,
    inner,
    is_floating_point,
    isclose,
    isfinite,
    isinf,
    isnan,
    isneginf,
    isposinf,
    isreal,
    kron,
    kthvalue,
    le,
    lerp,
    less,
    less_equal,
    lgamma,
    log,
    log10,
    log1p,
    log2,
    log_softmax,
    logaddexp,
    logaddexp2,
    logcumsumexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    logit,
    logsumexp,
    lt,
    masked_scatter,
    masked_select,
    matmul,
    matrix_power,
    max,
    maximum,
    mean,
    median,
    meshgrid,
    min,
    minimum,
    mm,
    mode,
    moveaxis,
    movedim,
    msort,
    mul,
    multiply,
    mv,
    mvlgamma,
    nan_to_num,
    nanmean,
    nanmedian,
    nanquantile,
    nansum,
    narrow,
    ndtri,
    ne,
    negative,
    nonzero,
    norm,
    not_equal,
    outer,
    permute,
    polygamma,
    positive,
    pow,
    prod,
    put,
    quantile,
    rad2deg,
    ravel,
    relu,
    remainder,
    repeat,
    repeat_interleave,
    reshape,
    roll,
    rot90,
    round,
    scatter,
    scatter_add,
    scatter_reduce,
    searchsorted,
    select,
    sgn,
    sigmoid,
    sign,
    signbit,
    sin,
    sinh,
    softmax,
    softplus,
    sort,
    split,
    split_with_sizes,
    sqrt,
    square,
    squeeze,
    stack,
    std,
    sub,
    subtract,
    sum,
    swapaxes,
    swapdims,
    take,
    take_along_dim,
    tan,
    tanh,
    tensor_split,
    tensordot,
    tile,
    topk,
    trace,
    transpose,
    trapezoid,
    trapz,
    tril,
    tril_indices,
    triu,
    triu_indices,
    true_divide,
    trunc,
    unbind,
    unflatten,
    unique,
    unique_consecutive,
    unsqueeze,
    vander,
    var,
    vdot,
    vsplit,
    vstack,
    where,
)
from .function import Function, FunctionCtx
from . import linalg, special
from .linalg import cholesky, det, inv as inverse, logdet, pinverse, slogdet, torch_cross as cross
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .graph import count_nodes_edges, evaluate, topological_sort
from .memory import checkpoint, checkpoint_sequential, saved_bytes, track_saved_bytes
from .serialization import load, save
from .special import sinc, xlogy
from .tensor import Node, Tensor, TracerError, _is_cpu
from .transforms import GradcheckError, grad, gradcheck, hessian, hvp, jacobian, jvp, value_and_grad, vjp

__version__ = "0.1.0"

# numpy's dtypes under PyTorch's names, so that `dtype=torch.float32` ports as `dtype=mg.float32`.
float16, float32, float64, int32, int64, bool = _np.float16, _np.float32, _np.float64, _np.int32, _np.int64, _np.bool_  # noqa: A001
# ...and PyTorch's short names: `dtype=torch.float` is float32 there (Python's float is float64).
half, float, double, int, long = float16, float32, float64, int32, int64  # noqa: A001


def device(type):  # noqa: A002  (torch.device's argument)
    """`torch.device` for a ported script's `DEVICE = torch.device("cuda" if torch.cuda.is_available()
    else "cpu")`: the CPU, minigrad's only device, as "cpu" (what `x.device` is); any other is an error."""
    if not isinstance(type, str) or not _is_cpu(type, "device"):
        raise TypeError(f"device: expected a device name such as 'cpu', got {type!r}")
    return "cpu"


class cuda:  # noqa: N801  (torch.cuda's name)
    """For a ported script's `device = "cuda" if torch.cuda.is_available() else "cpu"`: eager tensors
    compute with numpy on the CPU (`minigrad.jit.compile(fn, backend="cuda")` is the GPU path)."""

    @staticmethod
    def is_available():
        return False


def draw(root, **options):
    """Draw the graph below a tensor as a `graphviz.Digraph` (see `minigrad.draw_graph.draw`)."""
    from .draw_graph import draw as _draw

    return _draw(root, **options)


def __getattr__(name):
    # Submodules with heavier imports load on first use: `minigrad.nn`, `minigrad.optim`, `minigrad.jit`,
    # `minigrad.data` (the shipped data sets), `minigrad.distributions`, the drawing modules (graphviz).
    if name in {"nn", "optim", "jit", "draw_graph", "render", "data", "distributions"}:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'minigrad' has no attribute {name!r}")
