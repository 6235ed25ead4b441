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


def _reduce_kept(name, losses, keep, reduction):
    """As `_reduce`, the mean taken over the rows that were not ignored (NaN if none, as in PyTorch)."""
    if reduction == "mean" and not keep.all():
        return losses.sum() / losses.dtype.type(keep.sum())
    return _reduce(name, losses, reduction)


def nll_loss(log_probs, labels, reduction="mean", ignore_index=-100):
    """Negative log-likelihood of integer `labels` given log-probabilities (batch, classes); rows
    labelled `ignore_index` count for nothing (PyTorch's default -100)."""
    _, one_hot, keep = _labels("nll_loss", log_probs, labels, ignore_index)
    return _reduce_kept("nll_loss", -(log_probs * one_hot).sum(axis=1), keep, reduction)


def cross_entropy(logits, labels, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """Mean negative log-likelihood of integer class `labels` under softmax(`logits`).

    Computed through log-softmax, which subtracts the row maximum first, so large logits do not
    overflow the exponential. As in PyTorch: rows labelled `ignore_index` count for nothing (the
    mean is over the others); `label_smoothing` ε mixes the one-hot target with the uniform
    distribution, (1 − ε)·onehot + ε/classes.
    """
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must lie in [0, 1], got {label_smoothing}")
    # A one-hot mask picks each row's log-probability: a product and a sum, where indexing would
    # cost a scatter (np.add.at) in the backward pass.
    labels, target, keep = _labels("cross_entropy", logits, labels, ignore_index)
    if label_smoothing:
        smooth = (label_smoothing / logits.shape[1]) * keep[:, None].astype(logits.dtype)
        target = Tensor._result((1.0 - label_smoothing) * target.data + smooth, None)
    log_probs = log_softmax(logits, axis=1)
    if reduction == "mean" and keep.all():
        # The common case: −1/n folded into the constant target, so that the loss is three
        # recorded operations (log-softmax, product, sum) rather than five with a negation and a
        # division; each costs a node and a VJP rule in every training step.
        weights = Tensor._result(target.data * logits.dtype.type(-1.0 / len(labels)), None)
        return (log_probs * weights).sum()
    return _reduce_kept("cross_entropy", -(log_probs * target).sum(axis=1), keep, reduction)


def binary_cross_entropy_with_logits(logits, targets, reduction="mean"):
    """Mean binary cross-entropy of targets in [0, 1] given logits: log(1 + e^z) - t z, stably.

    log(1 + e^z) is the `softplus` primitive, whose derivative is sigmoid(z) everywhere, 1/2 at
    z = 0 (relu(z) + log(1 + e^−|z|) has the same value, but its pieces' subgradients at 0 add up to 0).
    """
    targets = targets if isinstance(targets, Tensor) else Tensor(targets, dtype=logits.dtype)
    if logits.shape != targets.shape:
        raise ShapeError(f"binary_cross_entropy_with_logits: logits {logits.shape} and targets {targets.shape} differ")
    return _reduce("binary_cross_entropy_with_logits", ops.softplus(logits) - targets * logits, reduction)


def binary_cross_entropy(probabilities, targets, reduction="mean"):
    """Mean binary cross-entropy of targets in [0, 1] given probabilities: −(t log p + (1 − t) log(1 − p)),
    each log clamped at −100 as PyTorch does, so that p = 0 or 1 gives a large loss, not ∞ or NaN.
    From logits, `binary_cross_entropy_with_logits` is the stable form."""
    targets = _target("binary_cross_entropy", probabilities, targets)
    data = probabilities.data
    if data.size and not (data.min() >= 0.0 and data.max() <= 1.0):  # NaN fails too
        raise ValueError(
            f"binary_cross_entropy: the input must be probabilities in [0, 1], got values from "
            f"{data.min()} to {data.max()}; for logits use binary_cross_entropy_with_logits"
        )
    with np.errstate(divide="ignore"):  # log(0) = −∞, clamped
        losses = -(targets * probabilities.log().clamp(min=-100.0) + (1.0 - targets) * (1.0 - probabilities).log().clamp(min=-100.0))
    return _reduce("binary_cross_entropy", losses, reduction)


class _Loss(Module):
    function = None

    def __init__(self, reduction="mean"):
        if reduction not in REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
        self.reduction = reduction

    def forward(self, prediction, target):
        return type(self).function(prediction, target, reduction=self.reduction)

    def __repr__(self):
        return f"{type(self).__name__}(reduction={self.reduction!r})"


class MSELoss(_Loss):
    function = staticmethod(mse_loss)


class L1Loss(_Loss):
    function = staticmethod(l1_loss)


class CrossEntropyLoss(_Loss):
    """`CrossEntropyLoss()(logits, labels)`: logits (batch, classes), integer labels (batch,)."""

    function = staticmethod(cross_entropy)

    def __init__(self, reduction="mean", ignore_index=-100, label_smoothing=0.0):
        super().__init__(reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, logits, labels):
        return cross_entropy(logits, labels, self.reduction, self.ignore_index, self.label_smoothing)


class NLLLoss(_Loss):
    function = staticmethod(nll_loss)

    def __init__(self, reduction="mean", ignore_index=-100):
        super().__init__(reduction)
        self.ignore_index = ignore_index

    def forward(self, log_probs, labels):
        return nll_loss(log_probs, labels, self.reduction, self.ignore_index)


class SmoothL1Loss(_Loss):
    def __init__(self, reduction="mean", beta=1.0):
        super().__init__(reduction)
        self.beta = beta

    def forward(self, prediction, target):
        return smooth_l1_loss(prediction, target, self.reduction, self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction)
        self.delta = delta

    def forward(self, prediction, target):
        return huber_loss(prediction, target, self.reduction, self.delta)


class KLDivLoss(_Loss):
    """`KLDivLoss(reduction="batchmean")(log_probabilities, probabilities)`; see `kl_div`."""

    def __init__(self, reduction="mean", log_target=False):
        super().__init__("mean" if reduction == "batchmean" else reduction)
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input, target):  # noqa: A002
        return kl_div(input, target, self.reduction, self.log_target)


class BCEWithLogitsLoss(_Loss):
    function = staticmethod(binary_cross_entropy_with_logits)


class BCELoss(_Loss):
    """`BCELoss()(probabilities, targets)`; from logits, `BCEWithLogitsLoss` is the stable form."""

    function = staticmethod(binary_cross_entropy)
