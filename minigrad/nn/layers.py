"""Layers: Linear, activations, Sequential and the multi-layer perceptron."""

import numpy as np

from ..creation import default_rng
from .module import Module, Parameter


class Linear(Module):
    """y = x W + b, with W of shape (in_features, out_features).

    Weights start uniform in ±1/√in_features (PyTorch's default), so the variance of each output
    does not grow with the width of the input.
    """

    def __init__(self, in_features, out_features, bias=True, rng=None, dtype=np.float64):
        rng = default_rng() if rng is None else rng
        bound = 1.0 / np.sqrt(in_features)
        self.weight = Parameter(rng.uniform(-bound, bound, (in_features, out_features)))
        self.bias = Parameter(rng.uniform(-bound, bound, out_features)) if bias else None
        if np.dtype(dtype) != np.float64:
            self.to(dtype)  # drawn in float64 first: the same weights as a float64 layer from the same rng

    def forward(self, x):
        out = x @ self.weight
        return out + self.bias if self.bias is not None else out

    def __repr__(self):
        n_in, n_out = self.weight.shape
        return f"Linear({n_in}, {n_out}, bias={self.bias is not None})"


class Tanh(Module):
    def forward(self, x):
        return x.tanh()


class ReLU(Module):
    def forward(self, x):
        return x.relu()


class Sigmoid(Module):
    def forward(self, x):
        return x.sigmoid()


class Identity(Module):
    def forward(self, x):
        return x


ACTIVATIONS = {"tanh": Tanh, "relu": ReLU, "sigmoid": Sigmoid, "identity": Identity}


class Sequential(Module):
    """Apply layers one after another."""

    def __init__(self, *layers):
        self.layers = list(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def __getitem__(self, i):
        return self.layers[i]

    def __len__(self):
        return len(self.layers)

    def __repr__(self):
        inner = "\n".join(f"  ({i}) {layer!r}" for i, layer in enumerate(self.layers))
        return f"Sequential(\n{inner}\n)"


class MLP(Sequential):
    """A multi-layer perceptron: `MLP([2, 16, 16, 1], activation="tanh")`.

    Every layer but the last is followed by the activation; the last layer is linear so that
    the output can feed any loss.
    """

    def __init__(self, sizes, activation="tanh", rng=None, dtype=np.float64):
        if activation not in ACTIVATIONS:
            raise ValueError(f"MLP: activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        rng = default_rng() if rng is None else rng
        layers = []
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(Linear(n_in, n_out, rng=rng, dtype=dtype))
            if i < len(sizes) - 2:
                layers.append(ACTIVATIONS[activation]())
        super().__init__(*layers)
