"""Differentiable communication between agents (Foerster et al. 2016; Sukhbaatar et al. 2016).

A speaker sees an observation and emits a continuous message vector; a noisy channel carries it;
a listener that sees only the message must act (here: name the target class). Because the message
is a tensor in one shared graph, the listener's loss backpropagates through the channel into the
speaker's weights: the speaker learns what to say from how the listener fails. Foerster et al.'s
DIAL adds noise on the channel during training, which pushes a bounded message (tanh) towards
well-separated, nearly discrete codes.
"""

from ..nn.losses import cross_entropy
from ..tensor import Tensor


def communication_loss(speaker, listener, observations, targets, noise=None):
    """The listener's cross-entropy on `targets`, as a tensor differentiable w.r.t. both agents.

    message = speaker(observations), shape (batch, message_dim); the channel adds `noise` (an
    array of that shape, or None for a clean channel); listener(received message) gives logits
    of shape (batch, classes) scored against the integer `targets` of shape (batch,).
    """
    message = speaker(observations if isinstance(observations, Tensor) else Tensor(observations))
    received = message if noise is None else message + Tensor(noise, dtype=message.dtype)
    return cross_entropy(listener(received), targets)
