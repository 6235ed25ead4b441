"""The residual block: y = x + F(x), the skip connection of ResNets (He et al. 2016)."""

from .layers import ACTIVATIONS, Linear
from .module import Module


class ResidualBlock(Module):
    """y = x + linear2(activation(linear1(x))), for inputs of `dim` features.

    The Jacobian of the block is I + ∂F/∂x: whatever F does to gradients, the identity term
    carries them back unchanged, so a stack of blocks does not multiply gradients by a long
    product of small (or large) factors the way a plain deep network does.
    """

    def __init__(self, dim, hidden=None, activation="tanh", rng=None):
        if activation not in ACTIVATIONS:
            raise ValueError(f"ResidualBlock: activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        hidden = dim if hidden is None else hidden
        self.linear1 = Linear(dim, hidden, rng=rng)
        self.activation = ACTIVATIONS[activation]()
        self.linear2 = Linear(hidden, dim, rng=rng)

    def forward(self, x):
        return x + self.linear2(self.activation(self.linear1(x)))

    def __repr__(self):
        dim, hidden = self.linear1.weight.shape
        return f"ResidualBlock({dim}, hidden={hidden}, activation={type(self.activation).__name__})"
