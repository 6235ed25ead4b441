"""Looking inside training: how large gradients are, layer by layer and step by step.

The gradient reaching layer l of a deep network is the loss's gradient multiplied by the
Jacobians of every layer above it; if those Jacobians shrink vectors (sigmoid's slope is at most
1/4) the product vanishes exponentially with depth, and if they stretch them it explodes. These
functions measure that without disturbing training: they return gradients instead of
accumulating them, so every `.grad` is left as it was.
"""

import numpy as np

from .autograd import gradients
from .nn import Linear, mse_loss
from .tensor import Tensor
from .transforms import jacobian


def grad_norms(output, tensors):
    """The Frobenius norm of d(output)/d(t) for each tensor t, as a numpy array (no `.grad` touched).

    `tensors` may be leaves (weights) or intermediate results (the hidden state at each time step
    of an unrolled RNN); a tensor `output` does not depend on gets 0.
    """
    return np.array([np.linalg.norm(g.data) for g in gradients(output, list(tensors))])


def linear_layers(model):
    """The model's `Linear` layers in the order `Module.modules` lists them (input side first)."""
    layers = [m for m in model.modules() if isinstance(m, Linear)]
    if not layers:
        raise ValueError(f"{type(model).__name__} has no Linear layers to measure")
    return layers


def layer_grad_norms(model, x, y, loss_fn=mse_loss):
    """‖∂loss/∂W‖ for each Linear layer's weight W, first layer first, at one batch (x, y).

    The loss is `loss_fn(model(x), y)`, mean squared error by default. The model's `.grad`s are
    neither read nor changed, so this can run in the middle of training.
    """
    weights = [layer.weight for layer in linear_layers(model)]
    loss = loss_fn(model(x), y)
    return grad_norms(loss, weights)


def jacobian_singular_values(layers, x):
    """The singular values (descending) of each layer's Jacobian, along one forward pass of example `x`.

    `layers` are applied one after another to `x` (a single example, 1-D). The largest singular
    value bounds how much a layer can stretch a gradient passing back through it; the root mean
    square of all of them is how much it stretches a gradient pointing in a random direction,
    which is what a long product of layers does to a typical gradient.
    """
    h = x if isinstance(x, Tensor) else Tensor(x)
    values = []
    for layer in layers:
        values.append(np.linalg.svd(jacobian(layer, h).data, compute_uv=False))
        h = layer(h).detach()
    return values
