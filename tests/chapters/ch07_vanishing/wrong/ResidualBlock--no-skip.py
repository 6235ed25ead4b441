class ResidualBlock(nn.Module):
    """The branch alone: y = F(x)."""

    def __init__(self, dim, hidden=None, activation="tanh", rng=None):
        if activation not in ACTIVATIONS:
            raise ValueError(f"ResidualBlock: unknown activation {activation!r}")
        hidden = dim if hidden is None else hidden
        self.linear1 = nn.Linear(dim, hidden, rng=rng)
        self.activation = ACTIVATIONS[activation]()
        self.linear2 = nn.Linear(hidden, dim, rng=rng)

    def forward(self, x):
        return self.linear2(self.activation(self.linear1(x)))
