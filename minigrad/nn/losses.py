"""Loss functions: scalar tensors that training drives down."""

import numpy as np

from .. import ops
from ..errors import DtypeError, ShapeError
from ..functional import log_softmax, where
from ..tensor import Tensor
from .module import Module


REDUCTIONS = ("mean", "sum", "none")


def _reduce(name, losses, reduction):
    """Per-element losses reduced as PyTorch's `reduction=`: "mean" (the default), "sum" or "none"."""
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    if reduction == "none":
        return losses
    raise ValueError(f"{name}: reduction must be one of {REDUCTIONS}, got {reduction!r}")


def _target(name, prediction, target):
    target = target if isinstance(target, Tensor) else Tensor(target, dtype=prediction.dtype)
    if prediction.shape != target.shape:
        raise ShapeError(f"{name}: prediction has shape {prediction.shape} but target has shape {target.shape}")
    return target


def mse_loss(prediction, target, reduction="mean"):
    """Mean squared error (`reduction="sum"` or `"none"` as in PyTorch)."""
    diff = prediction - _target("mse_loss", prediction, target)
    return _reduce("mse_loss", diff * diff, reduction)


def l1_loss(prediction, target, reduction="mean"):
    """Mean absolute error."""
    return _reduce("l1_loss", (prediction - _target("l1_loss", prediction, target)).abs(), reduction)


def smooth_l1_loss(prediction, target, reduction="mean", beta=1.0):
    """The L1 loss with its corner rounded (Girshick 2015's Fast R-CNN box loss): ½d²/β where
    |d| < β, |d| − ½β beyond, so the gradient is d/β near zero and ±1 far away; β = 0 is the L1 loss."""
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    diff = prediction - _target("smooth_l1_loss", prediction, target)
    return _reduce("smooth_l1_loss", _smooth_l1(diff, beta), reduction)


def huber_loss(prediction, target, reduction="mean", delta=1.0):
    """Huber's loss (1964): ½d² where |d| < δ, δ(|d| − ½δ) beyond: δ times the smooth L1 loss with β = δ."""
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    diff = prediction - _target("huber_loss", prediction, target)
    return _reduce("huber_loss", _smooth_l1(diff, delta) * delta, reduction)


def _smooth_l1(diff, beta):
    size = diff.abs()
    if not beta:
        return size
    return where(size < beta, diff * diff * (0.5 / beta), size - 0.5 * beta)


def kl_div(input, target, reduction="mean", log_target=False):  # noqa: A002  (PyTorch's names)
    """The Kullback-Leibler divergence Σ p (log p − q) of the distribution `target` (p, or log p with
    `log_target=True`) from `input` (log-probabilities q, as from log_softmax), pointwise, with
    0 · log 0 = 0. reduction="batchmean" divides the sum by the batch size, the divergence's true
    mean per example; "mean" (PyTorch's default) divides by the number of elements."""
    target = _target("kl_div", input, target)
    if log_target:
        losses = target.exp() * (target - input)
    else:
        positive = target.data > 0
        if target.requires_grad and not positive.all():
            raise ValueError(
                "kl_div: the target has zero probabilities and requires grad, but d(p log p)/dp is −∞ at p = 0; "
                "detach the target, or pass log-probabilities with log_target=True"
            )
        losses = target * (where(Tensor(positive), target, Tensor(np.ones((), dtype=target.dtype))).log() - input)
    if reduction == "batchmean":
        return losses.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce("kl_div", losses, reduction)


def _legacy(name, size_average, reduce):
    """PyTorch's deprecated size_average= and reduce= (its positional slots, kept so that weight=
    and the rest sit where PyTorch code puts them): refused, with the reduction= to write instead."""
    if size_average is not None or reduce is not None:
        raise ValueError(f"{name}: size_average= and reduce= are deprecated in PyTorch and not in minigrad; write reduction='mean', 'sum' or 'none'")


def _rows(name, input, target):  # noqa: A002
    """(input as (rows, classes), target as (rows,) class indices or (rows, classes) probabilities,
    the shape of the per-row losses). PyTorch's K-dimensional form, input (N, C, d1, ...) with
    targets (N, d1, ...), has its class axis moved last and is flattened to rows; an unbatched
    input (C,) is one row, its loss a scalar."""
    target = target if isinstance(target, (Tensor, np.ndarray)) else np.asarray(target)
    if input.ndim == 2:  # the common case first: one training step's loss
        return input, target, input.shape[:1]
    target = target if isinstance(target, Tensor) else Tensor(target)
    probabilities = target.shape == input.shape and target.dtype.kind == "f"
    if input.ndim == 1:
        return input.reshape(1, -1), target.reshape(1, -1) if probabilities else target.reshape(1), ()
    shape, order = (input.shape[0],) + input.shape[2:], (0, *range(2, input.ndim), 1)
    if not probabilities and target.shape != shape:
        raise ShapeError(f"{name}: input of shape {input.shape} (N, C, d1, ...) needs class indices of shape {shape} (N, d1, ...), got {target.shape}")
    rows = input.permute(*order).reshape(-1, input.shape[1])
    return rows, target.permute(*order).reshape(-1, input.shape[1]) if probabilities else target.reshape(-1), shape


def _labels(name, logits, labels, ignore_index=None):
    """(labels, one-hot rows as a constant, kept-row mask): rows whose label is `ignore_index` are zeros."""
    labels = np.asarray(labels.data if isinstance(labels, Tensor) else labels)
    if logits.ndim != 2 or labels.shape != (logits.shape[0],):
        raise ShapeError(f"{name}: logits must be (batch, classes) and labels (batch,), got {logits.shape} and {labels.shape}")
    if labels.dtype.kind not in "iu":
        raise DtypeError(f"{name}: labels must be integer class indices, got dtype {labels.dtype}")
    keep = labels != ignore_index if ignore_index is not None else np.ones(labels.shape, dtype=bool)
    # .nonzero() rather than np.flatnonzero, a Python wrapper around it (labels are 1-D)
    bad = (keep & ((labels < 0) | (labels >= logits.shape[1]))).nonzero()[0]
    if bad.size:
        raise ShapeError(
            f"{name}: labels must be class indices in [0, {logits.shape[1]}) for logits of shape "
            f"{logits.shape}; label {labels[bad[0]]} at position {bad[0]} is not ({bad.size} bad in all)"
        )
    one_hot = np.zeros(logits.shape, dtype=logits.dtype)
    one_hot[keep.nonzero()[0], labels[keep]] = 1.0
    return labels, Tensor._result(one_hot, None), keep


def _class_weights(name, weight, classes, dtype):
    """The per-class rescaling `weight` as an array of `classes` entries (None stays None)."""
    if weight is None:
        return None
    weight = np.asarray(weight.data if isinstance(weight, Tensor) else weight, dtype=dtype)
    if weight.shape != (classes,):
        raise ShapeError(f"{name}: weight must have one entry per class, shape ({classes},), got {weight.shape}")
    return weight


def _classification(name, log_probs, target, weight, ignore_index, reduction, label_smoothing, shape):
    """The loss of rows of log-probabilities (rows, C) against class indices or class
    probabilities, as PyTorch's nll_loss and cross_entropy compute it: −Σ_c T[i, c] log p[i, c] with
    a constant target matrix T that holds the one-hot rows (or the probabilities), the label
    smoothing and the class weights. A mean over class indices divides by the kept rows' weights
    (their count without weights); over probabilities, by the number of rows."""
    classes = log_probs.shape[1]
    weight = _class_weights(name, weight, classes, log_probs.dtype)
    if target.dtype.kind == "f" and target.ndim == 2:  # class probabilities (float labels (rows,) get _labels' dtype error)
        probabilities = target if isinstance(target, Tensor) else Tensor(target.astype(log_probs.dtype, copy=False))
        if probabilities.shape != log_probs.shape:
            raise ShapeError(f"{name}: class probabilities must have the input's shape {log_probs.shape}, got {probabilities.shape}")
        if label_smoothing:
            probabilities = probabilities * (1.0 - label_smoothing) + label_smoothing / classes
        if weight is not None:
            probabilities = probabilities * Tensor(weight)
        losses = -(log_probs * probabilities).sum(axis=1)
        return _reduce(name, losses.reshape(shape) if reduction == "none" else losses, reduction)
    labels, one_hot, keep = _labels(name, log_probs, target, ignore_index)
    matrix = one_hot.data
    if label_smoothing:
        matrix = (1.0 - label_smoothing) * matrix + (label_smoothing / classes) * keep[:, None].astype(log_probs.dtype)
    if weight is not None:
        matrix = matrix * weight
    if reduction == "mean":
        # −1 / (the kept rows' total weight) folded into the constant target, so that the loss is
        # two recorded operations (product, sum) rather than four with a negation and a division;
        # each costs a node and a VJP rule in every training step.
        total = float(weight[labels[keep]].sum() if weight is not None else keep.sum())
        scale = -1.0 / total if total else np.nan  # no row kept: NaN, as in PyTorch
        return (log_probs * Tensor._result(matrix * log_probs.dtype.type(scale), None)).sum()
    losses = -(log_probs * Tensor._result(matrix, None)).sum(axis=1)
    return _reduce(name, losses.reshape(shape) if reduction == "none" else losses, reduction)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):  # noqa: A002
    """Negative log-likelihood of integer class `target`s given log-probabilities `input` (batch,
    classes), or (N, C, d1, ...) with targets (N, d1, ...), as PyTorch's: rows labelled
    `ignore_index` count for nothing, and `weight` rescales each class's loss (a weighted mean)."""
    _legacy("nll_loss", size_average, reduce)
    log_probs, target, shape = _rows("nll_loss", input, target)
    return _classification("nll_loss", log_probs, target, weight, ignore_index, reduction, 0.0, shape)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean", label_smoothing=0.0):  # noqa: A002
    """Mean negative log-likelihood of the `target` classes under softmax(`input`).

    Computed through log-softmax, which subtracts the row maximum first, so large logits do not
    overflow the exponential. As in PyTorch: the target is class indices (batch,) for logits
    (batch, classes), or (N, d1, ...) for (N, C, d1, ...), or class probabilities of the input's
    shape; rows labelled `ignore_index` count for nothing (the mean is over the others); `weight`
    rescales each class; `label_smoothing` ε mixes the target with the uniform distribution,
    (1 − ε)·target + ε/classes.
    """
    _legacy("cross_entropy", size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must lie in [0, 1], got {label_smoothing}")
    logits, target, shape = _rows("cross_entropy", input, target)
    return _classification("cross_entropy", log_softmax(logits, axis=1), target, weight, ignore_index, reduction, label_smoothing, shape)


def _elementwise_weight(name, losses, weight):
    """`losses` rescaled by `weight`, broadcast as PyTorch broadcasts it (a weight per element, per class, ...)."""
    if weight is None:
        return losses
    weight = weight if isinstance(weight, Tensor) else Tensor(np.asarray(weight, dtype=losses.dtype))
    try:
        np.broadcast_shapes(weight.shape, losses.shape)
    except ValueError:
        raise ShapeError(f"{name}: weight of shape {weight.shape} does not broadcast to the losses' shape {losses.shape}") from None
    return losses * weight


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):  # noqa: A002
    """Mean binary cross-entropy of targets in [0, 1] given logits: log(1 + e^z) − t z, stably.
    `weight` rescales each element's loss; `pos_weight` p multiplies the positive term,
    −[p t log σ(z) + (1 − t) log(1 − σ(z))] = log(1 + e^z) − t z + (p − 1) t log(1 + e^−z).

    log(1 + e^z) is the `softplus` primitive, whose derivative is sigmoid(z) everywhere, 1/2 at
    z = 0 (relu(z) + log(1 + e^−|z|) has the same value, but its pieces' subgradients at 0 add up to 0).
    """
    _legacy("binary_cross_entropy_with_logits", size_average, reduce)
    logits = input
    targets = target if isinstance(target, Tensor) else Tensor(target, dtype=logits.dtype)
    if logits.shape != targets.shape:
        raise ShapeError(f"binary_cross_entropy_with_logits: logits {logits.shape} and targets {targets.shape} differ")
    softplus = ops.softplus(logits)
    losses = softplus - targets * logits
    if pos_weight is not None:
        pos_weight = pos_weight if isinstance(pos_weight, Tensor) else Tensor(np.asarray(pos_weight, dtype=logits.dtype))
        losses = losses + (pos_weight - 1.0) * targets * (softplus - logits)  # log(1 + e^−z) = log(1 + e^z) − z
    return _reduce("binary_cross_entropy_with_logits", _elementwise_weight("binary_cross_entropy_with_logits", losses, weight), reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    """Mean binary cross-entropy of targets in [0, 1] given probabilities: −(t log p + (1 − t) log(1 − p)),
    each log clamped at −100 as PyTorch does, so that p = 0 or 1 gives a large loss, not ∞ or NaN;
    `weight` rescales each element's loss. From logits, `binary_cross_entropy_with_logits` is the stable form."""
    _legacy("binary_cross_entropy", size_average, reduce)
    probabilities, targets = input, _target("binary_cross_entropy", input, target)
    data = probabilities.data
    if data.size and not (data.min() >= 0.0 and data.max() <= 1.0):  # NaN fails too
        raise ValueError(
            f"binary_cross_entropy: the input must be probabilities in [0, 1], got values from "
            f"{data.min()} to {data.max()}; for logits use binary_cross_entropy_with_logits"
        )
    with np.errstate(divide="ignore"):  # log(0) = −∞, clamped
        losses = -(targets * probabilities.log().clamp(min=-100.0) + (1.0 - targets) * (1.0 - probabilities).log().clamp(min=-100.0))
    return _reduce("binary_cross_entropy", _elementwise_weight("binary_cross_entropy", losses, weight), reduction)


class _Loss(Module):
    """A loss function as a layer, as PyTorch's: `reduction` and the function's options kept as
    attributes under PyTorch's names, a class `weight` or `pos_weight` as a buffer (so that it is
    in the state dict, as there). Constructors keep PyTorch's argument order, its deprecated
    size_average= and reduce= included (refused when given), so that `nn.CrossEntropyLoss(w)`
    means the weights."""

    function, reductions = None, REDUCTIONS

    def __init__(self, reduction="mean", **options):
        if reduction not in self.reductions:
            raise ValueError(f"{type(self).__name__}: reduction must be one of {self.reductions}, got {reduction!r}")
        self.reduction, self._options = reduction, tuple(options)
        for name, value in options.items():
            if name.endswith("weight"):
                self.register_buffer(name, value if value is None or isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=np.float64)))
            else:
                setattr(self, name, value)

    def forward(self, input, target):  # noqa: A002
        return type(self).function(input, target, reduction=self.reduction, **{name: getattr(self, name) for name in self._options})

    def __repr__(self):
        return f"{type(self).__name__}(reduction={self.reduction!r})"


class MSELoss(_Loss):
    function = staticmethod(mse_loss)

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        _legacy("MSELoss", size_average, reduce)
        super().__init__(reduction)


class L1Loss(_Loss):
    function = staticmethod(l1_loss)

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        _legacy("L1Loss", size_average, reduce)
        super().__init__(reduction)


class CrossEntropyLoss(_Loss):
    """`CrossEntropyLoss()(logits, labels)`: logits (batch, classes), integer labels (batch,) or
    class probabilities; see `cross_entropy`."""

    function = staticmethod(cross_entropy)

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean", label_smoothing=0.0):
        _legacy("CrossEntropyLoss", size_average, reduce)
        super().__init__(reduction, weight=weight, ignore_index=ignore_index, label_smoothing=label_smoothing)


class NLLLoss(_Loss):
    function = staticmethod(nll_loss)

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        _legacy("NLLLoss", size_average, reduce)
        super().__init__(reduction, weight=weight, ignore_index=ignore_index)


class SmoothL1Loss(_Loss):
    function = staticmethod(smooth_l1_loss)

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        _legacy("SmoothL1Loss", size_average, reduce)
        super().__init__(reduction, beta=beta)


class HuberLoss(_Loss):
    function = staticmethod(huber_loss)

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction, delta=delta)


class KLDivLoss(_Loss):
    """`KLDivLoss(reduction="batchmean")(log_probabilities, probabilities)`; see `kl_div`."""

    function, reductions = staticmethod(kl_div), REDUCTIONS + ("batchmean",)

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        _legacy("KLDivLoss", size_average, reduce)
        super().__init__(reduction, log_target=log_target)


class BCEWithLogitsLoss(_Loss):
    function = staticmethod(binary_cross_entropy_with_logits)

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        _legacy("BCEWithLogitsLoss", size_average, reduce)
        super().__init__(reduction, weight=weight, pos_weight=pos_weight)


class BCELoss(_Loss):
    """`BCELoss()(probabilities, targets)`; from logits, `BCEWithLogitsLoss` is the stable form."""

    function = staticmethod(binary_cross_entropy)

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        _legacy("BCELoss", size_average, reduce)
        super().__init__(reduction, weight=weight)
