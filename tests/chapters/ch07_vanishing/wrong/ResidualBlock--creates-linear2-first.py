class ResidualBlock(nn.Module):
    """Creates linear2 before linear1: the same shapes, but the weights are drawn from rng in the wrong order."""

    def __init__(self, dim, hidden=None, activation="tanh", rng=None):
        if activation not in ACTIVATIONS:
            raise ValueError(f"ResidualBlock: unknown activation {activation!r}")
        hidden = dim if hidden is None else hidden
        self.linear2 = nn.Linear(hidden, dim, rng=rng)
        self.linear1 = nn.Linear(dim, hidden, rng=rng)
        self.activation = ACTIVATIONS[activation]()

    def forward(self, x):
        return x + self.linear2(self.activation(self.linear1(x)))
