"""Functional forms of the layers, as `torch.nn.functional`: `import minigrad.nn.functional as F`.

Convolution and pooling use im2col: the input is padded (a `scatter` into zeros), every
kernel-sized window is gathered with one fancy index (its adjoint adds each window back, so
overlapping windows accumulate), and the convolution becomes one matrix product. Every step is a
differentiable minigrad operation, so derivatives of any order come for free.
"""

import functools
import math

import numpy as np

from .. import ops
from ..errors import ShapeError
from ..functional import log_softmax, relu, sigmoid, softmax, tanh, where  # noqa: F401  (as torch.nn.functional has them)
from ..tensor import Tensor, _refuse_while_tracing, tracing
from .losses import binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, huber_loss, kl_div, l1_loss, mse_loss, nll_loss, smooth_l1_loss  # noqa: F401


def _as_tensor(x):
    return x if isinstance(x, Tensor) else Tensor(x)


def gelu(x, approximate="none"):
    """x·Φ(x) with Φ the standard normal CDF; `approximate="tanh"` for the tanh form."""
    x = _as_tensor(x)
    half = x.dtype.type(0.5)
    if approximate == "tanh":
        c = x.dtype.type(math.sqrt(2.0 / math.pi))
        return half * x * (1.0 + (c * (x + x.dtype.type(0.044715) * x * x * x)).tanh())
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return half * x * (1.0 + ops.erf(x * x.dtype.type(1.0 / math.sqrt(2.0))))


def leaky_relu(x, negative_slope=0.01):
    """x where x > 0, negative_slope·x elsewhere; at 0 the slope is negative_slope, as in PyTorch."""
    x = _as_tensor(x)
    return where(x > 0, x, x * x.dtype.type(negative_slope))


def elu(x, alpha=1.0):
    """x where x > 0, α(eˣ − 1) elsewhere; at 0 the slope is α, as in PyTorch.

    Near 0, eˣ − 1 is computed as 2 tanh(x/2) / (1 − tanh(x/2)): exp(x) − 1 loses every digit there
    (at x = −1e−12 it is off by 1e−4 relatively). Below −1 exp(x) − 1 is accurate, and the tanh
    form's derivative is not (it cancels in 1 − tanh²). Positive x are replaced by 0 first, so no
    branch overflows where its value is not used.
    """
    x = _as_tensor(x)
    negative = where(x > 0, 0.0, x)
    t = (negative * x.dtype.type(0.5)).tanh()
    expm1 = where(negative < -1.0, negative.exp() - 1.0, (t + t) / (1.0 - t))
    return where(x > 0, x, expm1 * x.dtype.type(alpha))


def silu(x):
    """x·σ(x), also called swish."""
    x = _as_tensor(x)
    return x * sigmoid(x)


def softplus(x, beta=1.0, threshold=20.0):
    """log(1 + e^(βx)) / β, computed stably everywhere; like PyTorch, x itself where βx > threshold
    (where the two differ by less than e^−threshold)."""
    x = _as_tensor(x)
    beta = x.dtype.type(beta)
    scaled = x * beta  # exactly x for the default β = 1, and so is the division below
    return where(scaled > threshold, x, ops.softplus(scaled) / beta)


# The activations below take PyTorch's `inplace=` and ignore it: the result is always a new tensor,
# as the graph keeps the input. Masks pick each branch with `where`, and their comparisons are
# PyTorch's own, so that the derivative at a corner (x = min_val, x = λ) is PyTorch's and NaN
# falls through as it does there.
def _scalar(x, value):
    """`value` in x's dtype: a float32 activation stays float32."""
    return x.dtype.type(value)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):  # noqa: A002  (PyTorch's names)
    """x clipped to [min_val, max_val]: a cheap tanh. Unlike `clip`, the gradient is 0 at the two
    corners themselves, as in PyTorch."""
    x = _as_tensor(input)
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    return where(x <= min_val, _scalar(x, min_val), where(x >= max_val, _scalar(x, max_val), x))


def relu6(input, inplace=False):  # noqa: A002
    """min(max(0, x), 6) (Howard et al. 2017): a ReLU whose output stays in a range that
    low-precision arithmetic holds; `hardtanh(x, 0, 6)`, slope 0 at 0 and 6 as in PyTorch."""
    return hardtanh(input, 0.0, 6.0)


def prelu(input, weight):  # noqa: A002
    """x where x > 0, weight·x elsewhere (He et al. 2015): a leaky ReLU whose slope is learned, one
    shared by every entry or one per channel (axis 1; an input of fewer than 2 axes has one
    channel). At 0 the slope is weight, as in PyTorch."""
    return _prelu("prelu", input, weight)


def _prelu(name, input, weight):  # noqa: A002
    x, weight = _as_tensor(input), _as_tensor(weight)
    if weight.size == 1:
        slopes = weight.reshape(())
    else:
        channels = x.shape[1] if x.ndim >= 2 else 1
        if weight.shape != (channels,):
            raise ShapeError(f"{name}: weight of shape {weight.shape} must hold one slope, or one per channel: input of shape {x.shape} has {channels} channel(s) (axis 1)")
        slopes = weight.reshape((channels,) + (1,) * (x.ndim - 2))
    return where(x > 0, x, x * slopes)


def mish(input, inplace=False):  # noqa: A002
    """x·tanh(softplus(x)) (Misra 2019): smooth and non-monotonic like SiLU; softplus computed
    without overflow."""
    x = _as_tensor(input)
    return x * ops.softplus(x).tanh()


def hardsigmoid(input, inplace=False):  # noqa: A002
    """relu6(x + 3) / 6: the piecewise-linear sigmoid of MobileNetV3 (Howard et al. 2019), 0 below
    −3 and 1 above 3, slope 0 at ±3 as in PyTorch."""
    x = _as_tensor(input)
    return relu6(x + 3.0) / _scalar(x, 6.0)


def hardswish(input, inplace=False):  # noqa: A002
    """x·relu6(x + 3) / 6: MobileNetV3's cheap SiLU (Howard et al. 2019), 0 up to −3, x from 3.

    The middle piece x(x + 3)/6 is computed on x where −3 < x < 3 and on 0 elsewhere, so that no
    ∞ or NaN enters a branch whose value is not used (its zero gradient times ∞ would be NaN):
    the slope is PyTorch's everywhere, 0 at −3 and below, 1 at 3 and above.
    """
    x = _as_tensor(input)
    zero = _scalar(x, 0.0)
    middle = where(x > -3.0, where(x < 3.0, x, zero), zero)
    return where(x < 3.0, middle * (middle + 3.0) / _scalar(x, 6.0), x)


def softsign(input):  # noqa: A002
    """x / (1 + |x|): a tanh-like squashing whose tails approach ±1 polynomially, not exponentially."""
    x = _as_tensor(input)
    return x / (x.abs() + 1.0)


def logsigmoid(input):  # noqa: A002
    """log σ(x) = −softplus(−x), without overflow for large |x| (log(sigmoid(x)) is −inf from x ≈ −745)."""
    x = _as_tensor(input)
    return -ops.softplus(-x)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input, inplace=False):  # noqa: A002
    """scale · elu(x, α) with the constants of Klambauer et al. (2017), for which activations of
    mean 0 and variance 1 stay so through a deep network ("self-normalising")."""
    x = _as_tensor(input)
    return elu(x, _SELU_ALPHA) * _scalar(x, _SELU_SCALE)


def celu(input, alpha=1.0, inplace=False):  # noqa: A002
    """x where x > 0, α(e^(x/α) − 1) elsewhere (Barron 2017): ELU rescaled so that its slope is 1
    at 0 whatever α, hence continuously differentiable; α · elu(x/α)."""
    x = _as_tensor(input)
    if alpha == 0:
        raise ValueError("celu: alpha cannot be 0 (the negative branch divides x by it)")
    return elu(x / _scalar(x, alpha)) * _scalar(x, alpha)


def glu(input, dim=-1):  # noqa: A002
    """a · σ(b), a and b the two halves of `input` along `dim` (Dauphin et al. 2017): the second
    half gates the first."""
    x = _as_tensor(input)
    if x.ndim == 0:
        raise ShapeError("glu: does not support a 0-d input (there is no axis to halve)")
    axis = ops.single_axis(dim, x.ndim, "glu")
    if x.shape[axis] % 2:
        raise ShapeError(f"glu: the halved axis {dim} of input of shape {x.shape} must have an even length, got {x.shape[axis]}")
    a, b = x.chunk(2, dim=axis)
    return a * sigmoid(b)


def softmin(input, dim):  # noqa: A002
    """softmax(−x) along `dim`: weights that favour the smallest entries. `dim` is required
    (PyTorch's implicit choice is deprecated)."""
    return softmax(-_as_tensor(input), dim=dim)


def threshold(input, threshold, value, inplace=False):  # noqa: A002
    """x where x > threshold, `value` elsewhere (the gradient is 0 there)."""
    x = _as_tensor(input)
    return where(x <= threshold, _scalar(x, value), x)


def tanhshrink(input):  # noqa: A002
    """x − tanh(x): near 0 like x³/3, far away like x ∓ 1."""
    x = _as_tensor(input)
    return x - x.tanh()


def softshrink(input, lambd=0.5):  # noqa: A002
    """x − λ above λ, x + λ below −λ, 0 between: the proximal step of λ|x| (soft thresholding, as
    in the lasso), x minus x clipped to [−λ, λ]. The gradient is 0 at ±λ, as in PyTorch."""
    x = _as_tensor(input)
    if lambd < 0:
        raise ValueError(f"softshrink: lambd must be at least 0, got {lambd}")
    return x - x.clip(-lambd, lambd)


def hardshrink(input, lambd=0.5):  # noqa: A002
    """x where |x| > λ, 0 elsewhere (hard thresholding); the gradient is 0 at ±λ, as in PyTorch."""
    x = _as_tensor(input)
    return where(x.abs() <= lambd, _scalar(x, 0.0), x)


def one_hot(tensor, num_classes=-1):
    """Integer class indices as one-hot rows: shape (*tensor.shape, num_classes), int64, as
    `torch.nn.functional.one_hot` (num_classes=-1: one more than the largest index)."""
    indices = np.asarray(tensor.data if isinstance(tensor, Tensor) else tensor)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"one_hot: expects integer class indices, got dtype {indices.dtype}")
    if indices.size and indices.min() < 0:
        raise ShapeError(f"one_hot: class indices must be non-negative, got {indices.min()}")
    classes = int(indices.max()) + 1 if num_classes == -1 and indices.size else int(num_classes)
    if indices.size and indices.max() >= classes:
        raise ShapeError(f"one_hot: class index {indices.max()} is out of range for num_classes={classes}")
    return Tensor(np.eye(max(classes, 0), dtype=np.int64)[indices])


def dropout(x, p=0.5, training=True, rng=None):
    from .layers import Dropout

    layer = Dropout(p, rng=rng)
    layer.training = training
    return layer(_as_tensor(x))


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    from .layers import LayerNorm

    layer = LayerNorm(normalized_shape, eps=eps, elementwise_affine=False)
    out = layer(_as_tensor(x))
    out = out * weight if weight is not None else out
    return out + bias if bias is not None else out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):  # noqa: A002
    """Normalise each channel (axis 1) of `input` (N, C, ...) over the batch and any spatial axes
    (Ioffe & Szegedy 2015): (x − μ) / √(σ² + eps) · weight + bias, σ² biased.

    With `training=True` μ and σ² are the batch's, and gradients flow through them; the running
    statistics, when given, are updated in place: running ← (1 − momentum) · running + momentum ·
    batch, with the unbiased variance, as PyTorch does. With `training=False` the running
    statistics normalise instead, and the output depends on each example alone.
    """
    x = _as_tensor(input)
    if x.ndim < 2:
        raise ShapeError(f"batch_norm: expects input of shape (N, C, ...), got shape {x.shape}")
    channels = x.shape[1]
    for name, given in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if given is not None and given.shape != (channels,):
            raise ShapeError(f"batch_norm: {name} has shape {given.shape}; input of shape {x.shape} has {channels} channels, so it must be ({channels},)")
    if not training and (running_mean is None or running_var is None):
        raise ValueError("batch_norm: evaluation (training=False) normalises with running_mean and running_var; both must be given")
    axes = (0,) + tuple(range(2, x.ndim))
    per_channel = (1, channels) + (1,) * (x.ndim - 2)
    if training:
        count = x.data.size // max(channels, 1)
        if count <= 1:
            raise ValueError(f"batch_norm: expected more than 1 value per channel when training, got input of shape {x.shape}")
        mean = x.mean(axis=axes, keepdims=True)
        centred = x - mean
        var = (centred * centred).mean(axis=axes, keepdims=True)
        if running_mean is not None:
            if tracing.depth and x.requires_grad:
                _refuse_while_tracing(
                    x,
                    "BatchNorm in training mode",
                    "Its running statistics would be updated once, at trace time. Call model.eval() before compiling, or run the training step without jit.compile.",
                )
            running_mean.data[...] = (1 - momentum) * running_mean.data + momentum * mean.data.reshape(channels)
            running_var.data[...] = (1 - momentum) * running_var.data + momentum * var.data.reshape(channels) * (count / (count - 1))
    else:
        centred = x - running_mean.reshape(per_channel)
        var = running_var.reshape(per_channel)
    out = centred / (var + eps).sqrt()
    out = out * weight.reshape(per_channel) if weight is not None else out
    return out + bias.reshape(per_channel) if bias is not None else out


def _per_channel(name, x, **tensors):
    """Check that each given tensor (weight, bias, running statistics) holds one value per channel
    (axis 1) of x; returns the reshape that broadcasts such a tensor over x's other axes."""
    channels = x.shape[1]
    for what, given in tensors.items():
        if given is not None and given.shape != (channels,):
            raise ShapeError(f"{name}: {what} has shape {given.shape}; input of shape {x.shape} has {channels} channels, so it must be ({channels},)")
    return (1, channels) + (1,) * (x.ndim - 2)


def _scaled_and_shifted(out, weight, bias, shape):
    out = out * weight.reshape(shape) if weight is not None else out
    return out + bias.reshape(shape) if bias is not None else out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Normalise each example's channels (axis 1) in `num_groups` groups, each group over its
    channels and every spatial axis, then scale and shift per channel (Wu & He 2018):
    (x − μ) / √(σ² + eps) · weight + bias, σ² biased. No statistic crosses the batch, so the output
    of an example never depends on the others, and small batches normalise as well as large ones."""
    return _group_norm("group_norm", input, num_groups, weight, bias, eps)


def _group_norm(name, input, num_groups, weight, bias, eps):  # noqa: A002
    x = _as_tensor(input)
    if x.ndim < 2:
        raise ShapeError(f"{name}: expects input of shape (N, C, ...), got shape {x.shape}")
    n, channels = x.shape[:2]
    if channels % num_groups:
        raise ShapeError(f"{name}: the {channels} channels of input of shape {x.shape} must be divisible by num_groups={num_groups}")
    shape = _per_channel(name, x, weight=weight, bias=bias)
    grouped = x.reshape(n, num_groups, -1)
    centred = grouped - grouped.mean(axis=-1, keepdims=True)
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return _scaled_and_shifted((centred / (var + eps).sqrt()).reshape(x.shape), weight, bias, shape)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, momentum=0.1, eps=1e-5):  # noqa: A002
    """Normalise each channel of each example (N, C, ...) over its spatial axes alone (Ulyanov et al.
    2016), then scale and shift per channel: the style of one image does not leak into another.

    It is `batch_norm` of the input seen as one example of N·C channels, as PyTorch computes it:
    with `use_input_stats` each instance's own statistics, and running statistics, when given,
    updated with their average over the batch; without, the running statistics normalise.
    """
    x = _as_tensor(input)
    if x.ndim < 2:
        raise ShapeError(f"instance_norm: expects input of shape (N, C, ...), got shape {x.shape}")
    shape = _per_channel("instance_norm", x, running_mean=running_mean, running_var=running_var, weight=weight, bias=bias)
    n, channels = x.shape[:2]
    if use_input_stats and x.data.size <= n * channels:
        raise ValueError(f"instance_norm: expected more than 1 spatial element when training, got input of shape {x.shape}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("instance_norm: give running_mean and running_var together, or neither")
    if not use_input_stats and running_mean is None:
        raise ValueError("instance_norm: use_input_stats=False normalises with running_mean and running_var; both must be given")
    tracked = running_mean is not None and use_input_stats
    if tracked and tracing.depth and x.requires_grad:
        _refuse_while_tracing(
            x,
            "InstanceNorm with running statistics in training mode",
            "They would be updated once, at trace time. Call model.eval() before compiling, or run the training step without jit.compile.",
        )
    tiled = [None if s is None else Tensor(np.tile(s.data, n)) for s in (running_mean, running_var)]
    out = batch_norm(x.reshape((1, n * channels) + x.shape[2:]), *tiled, training=use_input_stats, momentum=momentum, eps=eps)
    if tracked:  # each instance's update, averaged over the batch
        for stat, updated in zip((running_mean, running_var), tiled):
            stat.data[...] = updated.data.reshape(n, channels).mean(axis=0)
    return _scaled_and_shifted(out.reshape(x.shape), weight, bias, shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    """x / √(mean(x²) + eps) · weight over the last axes (`normalized_shape`) (Zhang & Sennrich
    2019): LayerNorm without the centring and the bias, cheaper and as good for transformers.
    `eps=None` is the machine epsilon of the input's dtype, as in PyTorch."""
    return _rms_norm("rms_norm", input, normalized_shape, weight, eps)


def _rms_norm(name, input, normalized_shape, weight, eps):  # noqa: A002
    x = _as_tensor(input)
    shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    if x.shape[x.ndim - len(shape) :] != shape:
        raise ShapeError(f"{name}: input of shape {x.shape} does not end in normalized_shape {shape}")
    if weight is not None and weight.shape != shape:
        raise ShapeError(f"{name}: weight has shape {weight.shape}, it must be normalized_shape {shape}")
    eps = np.finfo(x.dtype).eps if eps is None else eps
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    out = x * ((x * x).mean(axis=axes, keepdims=True) + eps).rsqrt()
    return out * weight if weight is not None else out


def _norm(name, x, p, dim, keepdim):
    """The p-norm along `dim`: p > 0 or inf (p = 0, a count of the nonzero entries, has no gradient)."""
    if not p > 0:
        raise ValueError(f"{name}: p must be positive (or inf), got {p}")
    return x.norm(p, axis=dim, keepdims=keepdim)


def normalize(input, p=2.0, dim=1, eps=1e-12):  # noqa: A002
    """x / max(‖x‖_p, eps) along `dim`: unit vectors, with eps keeping a zero vector zero instead of NaN."""
    x = _as_tensor(input)
    return x / _norm("normalize", x, p, dim, keepdim=True).clip(eps, None)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """⟨x1, x2⟩ / (‖x1‖ ‖x2‖) along `dim`, the inputs broadcast together first.

    Computed as PyTorch does: each vector is divided by its norm (at least eps) before the dot
    product, so nothing overflows and the result stays in [−1, 1]. PyTorch applies that floor
    outside autograd, so its gradient is the unfloored norm's; so is this one's (the floor is added
    as a detached correction).
    """
    a, b = _as_tensor(x1), _as_tensor(x2)
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ShapeError(f"cosine_similarity: inputs of shapes {a.shape} and {b.shape} do not broadcast together") from None

    def unit(v):
        v = v.broadcast_to(shape) if v.shape != shape else v
        norm = v.norm(2, axis=dim, keepdims=True)
        return v / (norm + (norm.clip(eps, None) - norm).detach())

    return (unit(a) * unit(b)).sum(axis=dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """‖x1 − x2 + eps‖_p along the last axis, as PyTorch: eps is added to each difference, which
    keeps the gradient defined where x1 = x2 (a norm has no derivative at 0)."""
    return _norm("pairwise_distance", _as_tensor(x1) - x2 + eps, p, -1, keepdim)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False, rng=None):
    """softmax(q kᵀ · scale + mask) v over the last two axes (Vaswani et al. 2017), as
    `torch.nn.functional.scaled_dot_product_attention`: query (..., L, E), key (..., S, E), value
    (..., S, Ev); `scale` 1/√E unless given.

    `attn_mask` broadcasts to (..., L, S): a bool mask says which keys each query may attend to
    (True: attend), a float mask is added to the scores. `is_causal=True` lets query i attend to
    keys 0 … i only. `dropout_p` drops attention weights (always: pass 0.0 in evaluation, as in PyTorch).
    `enable_gqa=True` lets key and value have fewer heads (axis −3) than the query, as in
    grouped-query attention (Ainslie et al. 2023): each serves that many query heads in turn.
    """
    q, k, v = (x if isinstance(x, Tensor) else Tensor(x) for x in (query, key, value))
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2 or q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ShapeError(
            f"scaled_dot_product_attention: expects query (..., L, E), key (..., S, E) and value (..., S, Ev); "
            f"got shapes {q.shape}, {k.shape} and {v.shape}"
        )
    if enable_gqa:  # grouped-query attention: each key and value head serves a group of query heads
        if q.ndim < 3 or k.shape[-3] != v.shape[-3] or q.shape[-3] % k.shape[-3]:
            raise ShapeError(f"scaled_dot_product_attention: enable_gqa needs (..., heads, T, E) inputs whose query heads are a multiple of the key and value heads; got shapes {q.shape}, {k.shape} and {v.shape}")
        k, v = (x.repeat_interleave(q.shape[-3] // k.shape[-3], dim=-3) for x in (k, v))
    if is_causal:
        if attn_mask is not None:
            raise ValueError("scaled_dot_product_attention: pass attn_mask or is_causal=True, not both")
        attn_mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool))
    masks = [] if attn_mask is None else [(attn_mask, True, "attn_mask")]
    return _attend(q, k, v, masks, "scaled_dot_product_attention", scale, dropout_p, rng)[0]


def _attend(q, k, v, masks, name, scale=None, dropout_p=0.0, rng=None):
    """(softmax(q kᵀ · scale + masks) v, the attention weights): the arithmetic that
    `scaled_dot_product_attention` and `MultiheadAttention` share. `masks` lists (mask, allowed,
    its argument's name) for `_masked`; `scale` is 1/√E unless given."""
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]) if scale is None else scale)
    for mask, allowed, what in masks:
        scores = _masked(scores, mask, f"{name} {what}", allowed)
    weights = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, rng=rng)
    return weights @ v, weights


def _masked(scores, mask, name, allowed):
    """The scores with `mask` applied: a bool mask sets -inf where keys are excluded (where the
    mask is False if `allowed`, True otherwise, PyTorch's two conventions); a float mask is added."""
    array = mask.data if isinstance(mask, Tensor) else np.asarray(mask)
    try:
        np.broadcast_shapes(array.shape, scores.shape)
    except ValueError:
        raise ShapeError(f"{name}: the mask of shape {array.shape} does not broadcast to the attention scores' shape {scores.shape}") from None
    if array.dtype == np.bool_:
        excluded = ~array if allowed else array
        return where(Tensor(excluded), Tensor(np.array(-np.inf, dtype=scores.dtype)), scores)
    return scores + (mask if isinstance(mask, Tensor) else Tensor(array.astype(scores.dtype)))


def _ntuple(name, value, n):
    """`value` as n ints: one int repeated, or n of them."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise ValueError(f"{name}: expected an int or {({1: 'a tuple of one int', 2: 'a pair of ints'}).get(n, f'{n} ints')}, got {value}")
    return value


def _pair(name, value):
    return _ntuple(name, value, 2)


def _batched(spatial):
    """Let a function of batched (N, C, *spatial) inputs take one unbatched (C, *spatial) input too,
    as PyTorch's convolutions and pools do: it gets a batch of one, and the result loses that axis."""

    def wrap(fn):
        @functools.wraps(fn)
        def call(x, *args, **kwargs):
            x = _as_tensor(x)
            if x.ndim == spatial + 1:
                return fn(x.unsqueeze(0), *args, **kwargs).squeeze(0)
            return fn(x, *args, **kwargs)

        return call

    return wrap


def _conv_padding(name, padding, kernel, stride, dilation):
    """(before, after) per spatial axis for a convolution's `padding`: ints, or PyTorch's 'valid'
    (none) and 'same' (the output as long as the input, at stride 1 only; an odd total puts the
    extra entry after, as PyTorch does)."""
    if not isinstance(padding, str):
        return [(p, p) for p in _ntuple(f"{name} padding", padding, len(kernel))]
    if padding == "valid":
        return [(0, 0)] * len(kernel)
    if padding != "same":
        raise ValueError(f"{name}: padding must be an int, a tuple of ints, 'valid' or 'same', got {padding!r}")
    if any(s != 1 for s in stride):
        raise ValueError(f"{name}: padding='same' is not supported for strided convolutions (stride {stride})")
    totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
    return [(t // 2, t - t // 2) for t in totals]


def _groups(name, groups, channels, what):
    """The number of channel groups, checked to divide `channels` (the weight's `what`)."""
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1 or channels % groups:
        raise ValueError(f"{name}: groups={groups!r} must be a positive int that divides the {what} ({channels})")
    return int(groups)


def _padded(x, widths, fill):
    """x inside a border of `fill`: `widths` is (before, after) per axis. The input goes into zeros
    by `scatter` (its adjoint reads the inside back out), then the border's constant is added."""
    inside = tuple(slice(before, before + n) for (before, _), n in zip(widths, x.shape))
    shape = tuple(before + n + after for (before, after), n in zip(widths, x.shape))
    padded = ops.scatter(x, index=inside, shape=shape)
    if fill != 0.0:
        border = np.full(shape, fill, dtype=x.dtype)
        border[inside] = 0.0
        padded = padded + Tensor(border)
    return padded


_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}  # PyTorch's mode -> numpy.pad's


def pad(input, pad, mode="constant", value=None):  # noqa: A002  (PyTorch's names)
    """`input` padded as `torch.nn.functional.pad`: `pad` lists (before, after) widths from the
    last axis backwards, `(left, right)` or `(left, right, top, bottom)`, ... With
    mode="constant" the border is `value` (0 by default); "reflect" mirrors the input without
    repeating the edge, "replicate" repeats the edge, "circular" wraps around. The other modes
    gather the input with one index per padded axis, so gradients add up where an entry is
    copied more than once."""
    x = _as_tensor(input)
    pad = tuple(pad)
    if len(pad) % 2 or len(pad) // 2 > x.ndim or any(isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 0 for p in pad):
        raise ValueError(f"pad: expects an even number of non-negative ints, two per axis from the last, for a tensor of shape {x.shape}; got {pad}")
    given = [(int(pad[i]), int(pad[i + 1])) for i in range(0, len(pad), 2)][::-1]
    widths = [(0, 0)] * (x.ndim - len(given)) + given
    if mode == "constant":
        return _padded(x, widths, 0.0 if value is None else value)
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}")
    if value not in (None, 0, 0.0):
        raise ValueError(f"pad: value={value} is for mode='constant'; mode={mode!r} takes its border from the input")
    for axis, (before, after) in enumerate(widths):
        if not before and not after:
            continue
        n = x.shape[axis]
        limit = {"reflect": n - 1, "circular": n, "replicate": math.inf if n else 0}[mode]  # replicate repeats the edge at will
        if max(before, after) > limit:
            raise ValueError(f"pad: mode={mode!r} needs widths of at most {limit} on axis {axis} of a tensor of shape {x.shape}; got ({before}, {after})")
        index = np.pad(np.arange(n), (before, after), mode=_PAD_MODES[mode])
        x = x[(slice(None),) * axis + (index,)]
    return x


def _windows(op, x, kernel, stride, sides, dilation, fill=0.0):
    """(N, C, OH, OW, kH, kW): every window of the NCHW input `x` padded by `sides`, (before,
    after) for each of height and width."""
    if x.ndim != 4:
        raise ShapeError(f"{op}: input must be (batch, channels, height, width), got shape {x.shape}")
    (kh, kw), (sh, sw), (dh, dw), shape = kernel, stride, dilation, tuple(x.shape)
    if any(before or after for before, after in sides):  # max pooling pads with -inf, so that padding never wins
        x = _padded(x, [(0, 0), (0, 0), *sides], fill)
    h, w = x.shape[2:]
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise ShapeError(
            f"{op}: kernel {kernel} (dilation {dilation}) is larger than the padded input {(h, w)} of input shape {shape}"
        )
    rows = (np.arange(oh) * sh)[:, None, None, None] + (np.arange(kh) * dh)[None, None, :, None]
    cols = (np.arange(ow) * sw)[None, :, None, None] + (np.arange(kw) * dw)[None, None, None, :]
    return x[:, :, rows, cols]


@_batched(2)
def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation of an NCHW input (or one CHW image) with `weight` in minigrad's layout
    (in_channels / groups, out_channels, kH, kW) (PyTorch's is (out, in / groups, kH, kW):
    `nn.utils.load_torch_state_dict` swaps the first two axes). `padding` is ints, 'valid' or
    'same'. With `groups` g, the channels fall into g groups convolved apart (g = in_channels is a
    depthwise convolution): one batched matrix product, a group per matrix."""
    weight = _as_tensor(weight)
    if weight.ndim != 4:
        raise ShapeError(f"conv2d: weight must be (in_channels / groups, out_channels, kH, kW), got shape {weight.shape}")
    c_group, c_out, kh, kw = weight.shape
    g = _groups("conv2d", groups, c_out, f"out_channels of weight {weight.shape}")
    if x.ndim != 4 or x.shape[1] != c_group * g:
        by = f" with groups={g}" if g > 1 else ""
        raise ShapeError(f"conv2d: input of shape {x.shape} must be (batch, {c_group * g}, height, width) for weight of shape {weight.shape}{by}")
    stride, dilation = _pair("conv2d stride", stride), _pair("conv2d dilation", dilation)
    win = _windows("conv2d", x, (kh, kw), stride, _conv_padding("conv2d", padding, (kh, kw), stride, dilation), dilation)
    n, _, oh, ow = win.shape[:4]
    rows, width = n * oh * ow, c_group * kh * kw
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(rows, g * width)  # a row per output position, (C, kH, kW) across
    if g == 1:  # one product: the grouped form's four more recorded operations would cost ~5 % of a small CNN's step
        out = cols @ weight.transpose(0, 2, 3, 1).reshape(width, c_out)
    else:  # (g, rows, width) @ (g, width, c_out / g): a group per matrix; group i owns outputs i·c_out/g onwards
        kernels = weight.reshape(c_group, g, c_out // g, kh, kw).permute(1, 0, 3, 4, 2).reshape(g, width, c_out // g)
        out = (cols.reshape(rows, g, width).swapaxes(0, 1) @ kernels).swapaxes(0, 1).reshape(rows, c_out)
    if bias is not None:
        out = out + bias
    return out.reshape(n, oh, ow, c_out).transpose(0, 3, 1, 2)


@_batched(1)
def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation of an (N, C, L) input (or one (C, L) sequence) with `weight`
    (in_channels / groups, out_channels, k), minigrad's layout as for `conv2d`: `conv2d` on a
    height of one."""
    weight = _as_tensor(weight)
    if weight.ndim != 3 or x.ndim != 3:
        raise ShapeError(f"conv1d: expects input (batch, channels, length) and weight (in_channels / groups, out_channels, k); got shapes {x.shape} and {weight.shape}")
    (s,), (d,) = _ntuple("conv1d stride", stride, 1), _ntuple("conv1d dilation", dilation, 1)
    padding = padding if isinstance(padding, str) else (0, *_ntuple("conv1d padding", padding, 1))
    return conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, s), padding, (1, d), groups).squeeze(2)


@_batched(2)
def conv_transpose2d(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transposed convolution ("deconvolution") of an NCHW input (or one CHW image), as
    `torch.nn.functional.conv_transpose2d`, with `weight` (in_channels, out_channels / groups, kH,
    kW): the layout PyTorch uses for it too. Output size per axis: (n − 1)·stride − 2·padding +
    dilation·(k − 1) + output_padding + 1.

    It is the adjoint of `conv2d` with respect to its input, computed directly: the input spread
    out by `stride` (zeros between its entries), padded by dilation·(k − 1) − padding (cropped
    where that is negative), then cross-correlated, group by group, with the kernel flipped in
    both spatial axes.
    """
    weight = _as_tensor(weight)
    if weight.ndim != 4 or x.ndim != 4 or x.shape[1] != weight.shape[0]:
        raise ShapeError(f"conv_transpose2d: input of shape {x.shape} must be (batch, {weight.shape[0] if weight.ndim == 4 else 'in'}, height, width) for weight of shape {weight.shape} (in_channels, out_channels / groups, kH, kW)")
    c_in, c_group, kh, kw = weight.shape
    g = _groups("conv_transpose2d", groups, c_in, f"in_channels of weight {weight.shape}")
    stride, padding = _pair("conv_transpose2d stride", stride), _pair("conv_transpose2d padding", padding)
    output_padding, dilation = _pair("conv_transpose2d output_padding", output_padding), _pair("conv_transpose2d dilation", dilation)
    if any(op >= max(s, d) for op, s, d in zip(output_padding, stride, dilation)):
        raise ValueError(f"conv_transpose2d: output_padding {output_padding} must be smaller than the stride {stride} or the dilation {dilation}")
    n, c, h, w = x.shape
    spread = tuple((size - 1) * s + 1 for size, s in zip((h, w), stride))
    if stride != (1, 1):
        x = ops.scatter(x, index=(slice(None), slice(None), slice(None, None, stride[0]), slice(None, None, stride[1])), shape=(n, c) + spread)
    sides = [(d * (k - 1) - p, d * (k - 1) - p + op) for k, p, op, d in zip((kh, kw), padding, output_padding, dilation)]
    x = _padded(x, [(0, 0), (0, 0)] + [(max(a, 0), max(b, 0)) for a, b in sides], 0.0)
    # conv2d's grouped layout (in / groups, out, kH, kW): group i's input channels and its share of the outputs
    kernel = weight if g == 1 else weight.reshape(g, c_in // g, c_group, kh, kw).permute(1, 0, 2, 3, 4).reshape(c_in // g, g * c_group, kh, kw)
    out = conv2d(x, kernel[:, :, ::-1, ::-1], bias, 1, 0, dilation, g)
    (top, bottom), (left, right) = ((max(-a, 0), max(-b, 0)) for a, b in sides)
    if top or bottom or left or right:
        out = out[:, :, top : out.shape[2] - bottom, left : out.shape[3] - right]
    return out


@_batched(1)
def conv_transpose1d(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transposed convolution of an (N, C, L) input (or one (C, L) sequence) with `weight`
    (in_channels, out_channels / groups, k): `conv_transpose2d` on a height of one."""
    weight = _as_tensor(weight)
    if weight.ndim != 3 or x.ndim != 3:
        raise ShapeError(f"conv_transpose1d: expects input (batch, channels, length) and weight (in_channels, out_channels / groups, k); got shapes {x.shape} and {weight.shape}")
    one = {name: (0, *_ntuple(f"conv_transpose1d {name}", value, 1)) for name, value in (("padding", padding), ("output_padding", output_padding))}
    (s,), (d,) = _ntuple("conv_transpose1d stride", stride, 1), _ntuple("conv_transpose1d dilation", dilation, 1)
    return conv_transpose2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, s), one["padding"], one["output_padding"], groups, (1, d)).squeeze(2)


@_batched(2)
def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1):
    """The largest value of each window (ties share the gradient equally)."""
    kernel = _pair("max_pool2d kernel_size", kernel_size)
    stride = kernel if stride is None else _pair("max_pool2d stride", stride)
    padding = _pair("max_pool2d padding", padding)
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise ValueError(f"max_pool2d: padding {padding} must be at most half the kernel size {kernel}")
    win = _windows("max_pool2d", x, kernel, stride, [(p, p) for p in padding], _pair("max_pool2d dilation", dilation), fill=-np.inf)
    return win.reshape(*win.shape[:4], kernel[0] * kernel[1]).max(axis=-1)


@_batched(2)
def avg_pool2d(x, kernel_size, stride=None, padding=0):
    """The mean of each window; padded zeros count (PyTorch's count_include_pad=True)."""
    kernel = _pair("avg_pool2d kernel_size", kernel_size)
    stride = kernel if stride is None else _pair("avg_pool2d stride", stride)
    padding = _pair("avg_pool2d padding", padding)
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise ValueError(f"avg_pool2d: padding {padding} must be at most half the kernel size {kernel}")
    win = _windows("avg_pool2d", x, kernel, stride, [(p, p) for p in padding], (1, 1))
    return win.mean(axis=(4, 5))


def _pool1d(pool, name, x, kernel_size, stride, padding, *dilation):
    """A 2-D pool on a height of one: the 1-D pools of (N, C, L) inputs (or one (C, L))."""
    x = _as_tensor(x)
    if x.ndim not in (2, 3):
        raise ShapeError(f"{name}: input must be (batch, channels, length) or (channels, length), got shape {x.shape}")
    (k,), (p,) = _ntuple(f"{name} kernel_size", kernel_size, 1), _ntuple(f"{name} padding", padding, 1)
    (s,) = (k,) if stride is None else _ntuple(f"{name} stride", stride, 1)
    return pool(x.unsqueeze(-2), (1, k), (1, s), (0, p), *((1, d) for d in dilation)).squeeze(-2)


def max_pool1d(x, kernel_size, stride=None, padding=0, dilation=1):
    """The largest value of each window along the last axis (ties share the gradient equally)."""
    return _pool1d(max_pool2d, "max_pool1d", x, kernel_size, stride, padding, *_ntuple("max_pool1d dilation", dilation, 1))


def avg_pool1d(x, kernel_size, stride=None, padding=0):
    """The mean of each window along the last axis; padded zeros count."""
    return _pool1d(avg_pool2d, "avg_pool1d", x, kernel_size, stride, padding)


def _averaging_matrix(n, out, dtype):
    """(out, n): row i averages PyTorch's adaptive window i of an axis of length n, the elements
    ⌊i·n/out⌋ to ⌈(i+1)·n/out⌉ − 1 (neighbouring windows share an element where out does not divide n)."""
    matrix = np.zeros((out, n), dtype=dtype)
    for i in range(out):
        start, end = (i * n) // out, -((-(i + 1) * n) // out)
        matrix[i, start:end] = 1.0 / (end - start)
    return matrix


def adaptive_avg_pool2d(x, output_size):
    """The mean of each window of an `output_size` grid laid over the input's height and width,
    whatever their lengths (`1` is the global average pool of a ResNet's head; None keeps that axis).

    The windows of each axis are separable, so the pooling is two matrix products, A·X·Bᵀ with
    averaging matrices A (out_h × h) and B (out_w × w): one rule for every size, overlaps included.
    """
    x = _as_tensor(x)
    if x.ndim not in (3, 4):
        raise ShapeError(f"adaptive_avg_pool2d: input must be (batch, channels, height, width) or (channels, height, width), got shape {x.shape}")
    sizes = (output_size, output_size) if output_size is None or isinstance(output_size, (int, np.integer)) else output_size
    sizes = tuple(sizes) if isinstance(sizes, (tuple, list)) else ()
    if len(sizes) != 2 or any(s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1) for s in sizes):
        raise ValueError(f"adaptive_avg_pool2d: output_size must be a positive int or a pair of them (or None), got {output_size!r}")
    h, w = x.shape[-2:]
    oh, ow = (n if s is None else int(s) for s, n in zip(sizes, (h, w)))
    rows, cols = Tensor(_averaging_matrix(h, oh, x.dtype)), Tensor(_averaging_matrix(w, ow, x.dtype).T)
    return rows @ x @ cols


_INTERPOLATION_RANK = {"nearest": None, "nearest-exact": None, "linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5, "area": None}


def _cubic_weights(t, a=-0.75):
    """The weights of the four neighbours at offsets -1, 0, 1, 2 from floor(source), `t` the
    fraction past it: Keys' cubic convolution kernel with a = -0.75, the value PyTorch (and OpenCV) use."""
    near = lambda d: ((a + 2) * d - (a + 3)) * d * d + 1  # noqa: E731  (|d| ≤ 1)
    far = lambda d: ((a * d - 5 * a) * d + 8 * a) * d - 4 * a  # noqa: E731  (1 < |d| < 2)
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _interpolation_matrix(n, out, mode, align_corners, scale, dtype):
    """(out, n): how each output position along one axis mixes the input's, PyTorch's rules.
    `scale` is input length per output step (n / out, or 1 / scale_factor when one was given)."""
    if mode == "area":
        return _averaging_matrix(n, out, dtype)
    matrix = np.zeros((out, n), dtype=dtype)
    rows = np.arange(out)
    if mode in ("nearest", "nearest-exact"):
        offset = 0.5 if mode == "nearest-exact" else 0.0
        matrix[rows, np.minimum(np.floor((rows + offset) * scale).astype(np.int64), n - 1)] = 1.0
        return matrix
    if align_corners:
        source = rows * ((n - 1) / (out - 1) if out > 1 else 0.0)
    else:  # linear modes clamp a source before the first input position to it; PyTorch's bicubic does not
        source = (rows + 0.5) * scale - 0.5
        source = source if mode == "bicubic" else np.maximum(source, 0.0)
    if mode == "bicubic":  # four neighbours, those beyond an edge read the edge's value
        low = np.floor(source).astype(np.int64)
        for offset, weight in zip(range(-1, 3), _cubic_weights(source - low)):
            np.add.at(matrix, (rows, np.clip(low + offset, 0, n - 1)), weight)
        return matrix
    low = np.minimum(np.floor(source).astype(np.int64), n - 1)
    high = np.minimum(low + 1, n - 1)
    weight = source - low
    np.add.at(matrix, (rows, low), 1.0 - weight)
    np.add.at(matrix, (rows, high), weight)
    return matrix


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None, antialias=False):  # noqa: A002
    """Resize the spatial axes of (N, C, W), (N, C, H, W) or (N, C, D, H, W) input, as
    `torch.nn.functional.interpolate`: to `size`, or by `scale_factor`; mode "nearest",
    "nearest-exact", "linear" (3-D), "bilinear" or "bicubic" (4-D), "trilinear" (5-D) or "area".

    Every mode is linear in the input and separable by axis, so each axis is one matrix product
    with an interpolation matrix (output positions × input positions) built by PyTorch's rules for
    source positions (`align_corners`); its adjoint spreads each gradient back over the entries
    it was mixed from.
    """
    x = _as_tensor(input)
    if mode not in _INTERPOLATION_RANK:
        raise ValueError(f"interpolate: mode must be one of {', '.join(map(repr, _INTERPOLATION_RANK))}, got {mode!r}")
    rank = _INTERPOLATION_RANK[mode]
    if x.ndim not in (3, 4, 5) or (rank is not None and x.ndim != rank):
        expected = f"{rank}-D" if rank else "3-D, 4-D or 5-D"
        raise ShapeError(f"interpolate: mode={mode!r} needs {expected} input (N, C, spatial...), got shape {x.shape}")
    if align_corners is not None and mode not in ("linear", "bilinear", "bicubic", "trilinear"):
        raise ValueError(f"interpolate: align_corners is for the linear and cubic modes, not mode={mode!r}")
    if antialias or recompute_scale_factor:
        raise ValueError("interpolate: antialias and recompute_scale_factor are not supported in minigrad")
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give exactly one of size and scale_factor")
    spatial = x.shape[2:]
    if size is not None:
        sizes = (size,) * len(spatial) if isinstance(size, (int, np.integer)) else tuple(size)
        scales = [n / s if s else 0.0 for n, s in zip(spatial, sizes)]
    else:
        factors = (scale_factor,) * len(spatial) if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
        sizes = tuple(int(math.floor(n * f)) for n, f in zip(spatial, factors))
        scales = [1.0 / f for f in factors]
    if len(sizes) != len(spatial) or any(s < 1 for s in sizes):
        raise ValueError(f"interpolate: the output size {sizes} must give a positive length to each of the {len(spatial)} spatial axes of shape {x.shape}")
    for axis, (n, out, scale) in enumerate(zip(spatial, sizes, scales), start=2):
        if out == n and scale == 1.0:
            continue
        matrix = Tensor(_interpolation_matrix(n, out, mode, align_corners, scale, x.dtype).T)
        x = (x.swapaxes(axis, -1) @ matrix).swapaxes(axis, -1)
    return x


def embedding(indices, weight):
    return weight[np.asarray(indices.data if isinstance(indices, Tensor) else indices)]
