class ResidualBlock(nn.Module):
    """Always dim hidden units, whatever `hidden` says."""

    def __init__(self, dim, hidden=None, activation="tanh", rng=None):
        if activation not in ACTIVATIONS:
            raise ValueError(f"ResidualBlock: unknown activation {activation!r}")
        self.linear1 = nn.Linear(dim, dim, rng=rng)
        self.activation = ACTIVATIONS[activation]()
        self.linear2 = nn.Linear(dim, dim, rng=rng)

    def forward(self, x):
        return x + self.linear2(self.activation(self.linear1(x)))
