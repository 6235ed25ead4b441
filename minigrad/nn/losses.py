"""Loss functions: scalar tensors that training drives down."""

import numpy as np

from .. import ops
from ..errors import DtypeError, ShapeError
from ..functional import log_softmax
from ..tensor import Tensor


def mse_loss(prediction, target):
    """Mean squared error."""
    target = target if isinstance(target, Tensor) else Tensor(target, dtype=prediction.dtype)
    if prediction.shape != target.shape:
        raise ShapeError(f"mse_loss: prediction has shape {prediction.shape} but target has shape {target.shape}")
    diff = prediction - target
    return (diff * diff).mean()


def cross_entropy(logits, labels):
    """Mean negative log-likelihood of integer class `labels` under softmax(`logits`).

    Computed through log-softmax, which subtracts the row maximum first, so large logits do not
    overflow the exponential.
    """
    labels = np.asarray(labels.data if isinstance(labels, Tensor) else labels)
    if logits.ndim != 2 or labels.shape != (logits.shape[0],):
        raise ShapeError(f"cross_entropy: logits must be (batch, classes) and labels (batch,), got {logits.shape} and {labels.shape}")
    if labels.dtype.kind not in "iu":
        raise DtypeError(f"cross_entropy: labels must be integer class indices, got dtype {labels.dtype}")
    bad = np.flatnonzero((labels < 0) | (labels >= logits.shape[1]))
    if bad.size:
        raise ShapeError(
            f"cross_entropy: labels must be class indices in [0, {logits.shape[1]}) for logits of shape "
            f"{logits.shape}; label {labels[bad[0]]} at position {bad[0]} is not ({bad.size} bad in all)"
        )
    # A one-hot mask picks each row's log-probability: a product and a sum, where indexing would
    # cost a scatter (np.add.at) in the backward pass.
    one_hot = np.zeros(logits.shape, dtype=logits.dtype)
    one_hot[np.arange(len(labels)), labels] = 1.0
    return -(log_softmax(logits, axis=1) * Tensor._result(one_hot, None)).sum() / len(labels)


def binary_cross_entropy_with_logits(logits, targets):
    """Mean binary cross-entropy of targets in [0, 1] given logits: log(1 + e^z) - t z, stably.

    log(1 + e^z) is the `softplus` primitive, whose derivative is sigmoid(z) everywhere, 1/2 at
    z = 0 (relu(z) + log(1 + e^−|z|) has the same value, but its pieces' subgradients at 0 add up to 0).
    """
    targets = targets if isinstance(targets, Tensor) else Tensor(targets, dtype=logits.dtype)
    if logits.shape != targets.shape:
        raise ShapeError(f"binary_cross_entropy_with_logits: logits {logits.shape} and targets {targets.shape} differ")
    return (ops.softplus(logits) - targets * logits).mean()
