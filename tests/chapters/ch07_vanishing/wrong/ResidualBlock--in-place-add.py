class ResidualBlock(nn.Module):
    """Adds F(x) into x's own array (PyTorch's `x += f(x)` habit, done on .data) and returns x: the caller's
    input is overwritten, and no gradient reaches linear1 and linear2."""

    def __init__(self, dim, hidden=None, activation="tanh", rng=None):
        if activation not in ACTIVATIONS:
            raise ValueError(f"ResidualBlock: unknown activation {activation!r}")
        hidden = dim if hidden is None else hidden
        self.linear1 = nn.Linear(dim, hidden, rng=rng)
        self.activation = ACTIVATIONS[activation]()
        self.linear2 = nn.Linear(hidden, dim, rng=rng)

    def forward(self, x):
        x.data += self.linear2(self.activation(self.linear1(x))).data
        return x
