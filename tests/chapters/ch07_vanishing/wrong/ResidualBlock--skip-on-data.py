class ResidualBlock(nn.Module):
    """Adds the skip to the branch's array (`out.data += x.data`): the values are right, but the skip carries
    no gradient, so x only gets the branch's."""

    def __init__(self, dim, hidden=None, activation="tanh", rng=None):
        if activation not in ACTIVATIONS:
            raise ValueError(f"ResidualBlock: unknown activation {activation!r}")
        hidden = dim if hidden is None else hidden
        self.linear1 = nn.Linear(dim, hidden, rng=rng)
        self.activation = ACTIVATIONS[activation]()
        self.linear2 = nn.Linear(hidden, dim, rng=rng)

    def forward(self, x):
        out = self.linear2(self.activation(self.linear1(x)))
        out.data = out.data + x.data
        return out
