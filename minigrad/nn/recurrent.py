"""A vanilla recurrent network: one cell, applied at every time step (Elman 1990).

Unrolled over T steps, the graph is a chain of T copies of the cell sharing the same weights, and
backpropagation through time is plain backpropagation through that chain. The gradient reaching
step t is a product of T - t Jacobians diag(σ'(z)) W_hhᵀ, which is why it vanishes or explodes
with the distance (Bengio, Simard & Frasconi 1994; Pascanu, Mikolov & Bengio 2013).
"""

import numpy as np

from ..creation import default_rng
from ..errors import ShapeError
from ..functional import stack
from ..tensor import Tensor
from .layers import ACTIVATIONS
from .module import Module, Parameter


class RNNCell(Module):
    """h' = activation(x W_ih + h W_hh + b), the step of a vanilla RNN.

    Weights start uniform in ±1/√hidden_size, like PyTorch's `RNNCell`.
    """

    def __init__(self, input_size, hidden_size, activation="tanh", rng=None, dtype=np.float64):
        if activation not in ACTIVATIONS:
            raise ValueError(f"RNNCell: activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        rng = default_rng() if rng is None else rng
        bound = 1.0 / np.sqrt(hidden_size)
        self.weight_ih = Parameter(rng.uniform(-bound, bound, (input_size, hidden_size)))
        self.weight_hh = Parameter(rng.uniform(-bound, bound, (hidden_size, hidden_size)))
        self.bias = Parameter(rng.uniform(-bound, bound, hidden_size))
        self.activation = ACTIVATIONS[activation]()
        if np.dtype(dtype) != np.float64:
            self.to(dtype)

    @property
    def hidden_size(self):
        return self.weight_hh.shape[0]

    def forward(self, x, h):
        return self.activation(x @ self.weight_ih + h @ self.weight_hh + self.bias)

    def __repr__(self):
        n_in, n_hidden = self.weight_ih.shape
        return f"RNNCell({n_in}, {n_hidden}, activation={type(self.activation).__name__})"


class RNN(Module):
    """An `RNNCell` unrolled over the first axis of `xs` (time, batch, features), like PyTorch's RNN.

    `forward(xs, h0=None)` returns `(outputs, h_last)`, outputs stacked to (time, batch, hidden);
    `hidden_states(xs, h0)` returns the list of per-step states themselves, the tensors to ask
    for gradients when studying how far back a signal reaches.
    """

    def __init__(self, input_size, hidden_size, activation="tanh", rng=None, dtype=np.float64):
        self.cell = RNNCell(input_size, hidden_size, activation=activation, rng=rng, dtype=dtype)

    def hidden_states(self, xs, h0=None):
        if xs.ndim != 3:
            raise ShapeError(f"RNN: xs must be (time, batch, features), got shape {xs.shape}")
        h = Tensor(np.zeros((xs.shape[1], self.cell.hidden_size), dtype=self.cell.weight_hh.dtype)) if h0 is None else h0
        states = []
        for t in range(xs.shape[0]):
            h = self.cell(xs[t], h)
            states.append(h)
        return states

    def forward(self, xs, h0=None):
        states = self.hidden_states(xs, h0)
        return stack(states), states[-1]

    def __repr__(self):
        return f"RNN({self.cell!r})"


class LSTMCell(Module):
    """One step of a long short-term memory (Hochreiter & Schmidhuber 1997), as PyTorch's `LSTMCell`.

    `forward(x, state=None)` takes `state = (h, c)` (zeros when None) and returns the new `(h, c)`:
    gates i, f, g, o = split(x W_ih + b_ih + h W_hh + b_hh) in that order, c' = σ(f) c + σ(i) tanh(g),
    h' = σ(o) tanh(c'). The cell state c is updated by a sum, not a product with W_hh, which is how
    the gradient survives long distances. Weights (input, 4·hidden) and (hidden, 4·hidden) in
    minigrad's layout (PyTorch's are transposed), all uniform in ±1/√hidden_size.
    """

    def __init__(self, input_size, hidden_size, bias=True, rng=None, dtype=np.float64):
        rng = default_rng() if rng is None else rng
        bound = 1.0 / np.sqrt(hidden_size)
        self.weight_ih = Parameter(rng.uniform(-bound, bound, (input_size, 4 * hidden_size)))
        self.weight_hh = Parameter(rng.uniform(-bound, bound, (hidden_size, 4 * hidden_size)))
        self.bias_ih = Parameter(rng.uniform(-bound, bound, 4 * hidden_size)) if bias else None
        self.bias_hh = Parameter(rng.uniform(-bound, bound, 4 * hidden_size)) if bias else None
        if np.dtype(dtype) != np.float64:
            self.to(dtype)

    @property
    def hidden_size(self):
        return self.weight_hh.shape[0]

    def forward(self, x, state=None):
        n = self.hidden_size
        if x.ndim not in (1, 2) or x.shape[-1] != self.weight_ih.shape[0]:
            raise ShapeError(f"LSTMCell: input must be (batch, {self.weight_ih.shape[0]}), got shape {x.shape}")
        if state is None:
            zeros = Tensor(np.zeros(x.shape[:-1] + (n,), dtype=self.weight_hh.dtype))
            state = (zeros, zeros)
        h, c = state
        z = x @ self.weight_ih + h @ self.weight_hh
        if self.bias_ih is not None:
            z = z + (self.bias_ih + self.bias_hh)
        # One sigmoid over all four gates, then slices of it: the same numbers as a sigmoid per
        # gate (it acts elementwise), two recorded operations fewer per step; the g quarter it also
        # computes is not used (benchmarks/README.md, the examples' steps).
        gates = z.sigmoid()
        i, f, o = gates[..., :n], gates[..., n : 2 * n], gates[..., 3 * n :]
        c = f * c + i * z[..., 2 * n : 3 * n].tanh()
        return o * c.tanh(), c

    def __repr__(self):
        return f"LSTMCell({self.weight_ih.shape[0]}, {self.hidden_size})"
