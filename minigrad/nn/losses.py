"""Loss functions: scalar tensors that training drives down."""

import numpy as np

from .. import ops
from ..errors import DtypeError, ShapeError
from ..functional import log_softmax
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


def _labels(name, logits, labels):
    labels = np.asarray(labels.data if isinstance(labels, Tensor) else labels)
    if logits.ndim != 2 or labels.shape != (logits.shape[0],):
        raise ShapeError(f"{name}: logits must be (batch, classes) and labels (batch,), got {logits.shape} and {labels.shape}")
    if labels.dtype.kind not in "iu":
        raise DtypeError(f"{name}: labels must be integer class indices, got dtype {labels.dtype}")
    bad = np.flatnonzero((labels < 0) | (labels >= logits.shape[1]))
    if bad.size:
        raise ShapeError(
            f"{name}: labels must be class indices in [0, {logits.shape[1]}) for logits of shape "
            f"{logits.shape}; label {labels[bad[0]]} at position {bad[0]} is not ({bad.size} bad in all)"
        )
    one_hot = np.zeros(logits.shape, dtype=logits.dtype)
    one_hot[np.arange(len(labels)), labels] = 1.0
    return labels, Tensor._result(one_hot, None)


def nll_loss(log_probs, labels, reduction="mean"):
    """Negative log-likelihood of integer `labels` given log-probabilities (batch, classes)."""
    _, one_hot = _labels("nll_loss", log_probs, labels)
    return _reduce("nll_loss", -(log_probs * one_hot).sum(axis=1), reduction)


def cross_entropy(logits, labels, reduction="mean"):
    """Mean negative log-likelihood of integer class `labels` under softmax(`logits`).

    Computed through log-softmax, which subtracts the row maximum first, so large logits do not
    overflow the exponential.
    """
    # A one-hot mask picks each row's log-probability: a product and a sum, where indexing would
    # cost a scatter (np.add.at) in the backward pass.
    labels, one_hot = _labels("cross_entropy", logits, labels)
    if reduction == "mean":  # the common case, as before: one sum and one division
        return -(log_softmax(logits, axis=1) * one_hot).sum() / len(labels)
    return _reduce("cross_entropy", -(log_softmax(logits, axis=1) * one_hot).sum(axis=1), reduction)


def binary_cross_entropy_with_logits(logits, targets, reduction="mean"):
    """Mean binary cross-entropy of targets in [0, 1] given logits: log(1 + e^z) - t z, stably.

    log(1 + e^z) is the `softplus` primitive, whose derivative is sigmoid(z) everywhere, 1/2 at
    z = 0 (relu(z) + log(1 + e^−|z|) has the same value, but its pieces' subgradients at 0 add up to 0).
    """
    targets = targets if isinstance(targets, Tensor) else Tensor(targets, dtype=logits.dtype)
    if logits.shape != targets.shape:
        raise ShapeError(f"binary_cross_entropy_with_logits: logits {logits.shape} and targets {targets.shape} differ")
    return _reduce("binary_cross_entropy_with_logits", ops.softplus(logits) - targets * logits, reduction)


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


class NLLLoss(_Loss):
    function = staticmethod(nll_loss)


class BCEWithLogitsLoss(_Loss):
    function = staticmethod(binary_cross_entropy_with_logits)
