class ResidualBlock(nn.Module):
    """Stores the activation but forgets to apply it inside the branch."""

    def __init__(self, dim, hidden=None, activation="tanh", rng=None):
        if activation not in ACTIVATIONS:
            raise ValueError(f"ResidualBlock: unknown activation {activation!r}")
        hidden = dim if hidden is None else hidden
        self.linear1 = nn.Linear(dim, hidden, rng=rng)
        self.activation = ACTIVATIONS[activation]()
        self.linear2 = nn.Linear(hidden, dim, rng=rng)

    def forward(self, x):
        return x + self.linear2(self.linear1(x))
