"""Recurrent networks: a cell applied at every time step. `RNNCell` and `RNN` are the course's
vanilla network (Elman 1990), `LSTMCell`/`LSTM` and `GRUCell`/`GRU` PyTorch's gated ones.

Unrolled over T steps, the graph is a chain of T copies of the cell sharing the same weights, and
backpropagation through time is plain backpropagation through that chain. The gradient reaching
step t is a product of T - t Jacobians diag(σ'(z)) W_hhᵀ, which is why it vanishes or explodes
with the distance (Bengio, Simard & Frasconi 1994; Pascanu, Mikolov & Bengio 2013).
"""

import numpy as np

from ..creation import default_rng
from ..errors import ShapeError
from ..functional import cat, stack
from ..tensor import Tensor
from . import functional as F
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


def _gate_parameters(input_size, hidden_size, gates, bias, rng):
    """PyTorch's parameters of one gated cell, drawn in its order: weight_ih (input, gates·hidden)
    and weight_hh (hidden, gates·hidden) in minigrad's layout, bias_ih and bias_hh (None without
    bias), all uniform in ±1/√hidden_size."""
    bound, width = 1.0 / np.sqrt(hidden_size), gates * hidden_size
    shapes = {"weight_ih": (input_size, width), "weight_hh": (hidden_size, width), "bias_ih": (width,), "bias_hh": (width,)}
    return {name: Parameter(rng.uniform(-bound, bound, shape)) if bias or name.startswith("weight") else None for name, shape in shapes.items()}


class _GatedCell(Module):
    """What `LSTMCell` and `GRUCell` share: the parameters, the input check, the zero state."""

    def __init__(self, input_size, hidden_size, bias=True, rng=None, dtype=np.float64):
        for name, parameter in _gate_parameters(input_size, hidden_size, self._gates, bias, default_rng() if rng is None else rng).items():
            setattr(self, name, parameter)
        if np.dtype(dtype) != np.float64:
            self.to(dtype)

    @property
    def hidden_size(self):
        return self.weight_hh.shape[0]

    def _checked_state(self, x, state):
        """`state` as given, or zeros for x's batch when None; x checked."""
        if x.ndim not in (1, 2) or x.shape[-1] != self.weight_ih.shape[0]:
            raise ShapeError(f"{type(self).__name__}: input must be (batch, {self.weight_ih.shape[0]}), got shape {x.shape}")
        if state is not None:
            return state
        zeros = Tensor(np.zeros(x.shape[:-1] + (self.hidden_size,), dtype=self.weight_hh.dtype))
        return (zeros,) * self._state_size if self._state_size > 1 else zeros


class LSTMCell(_GatedCell):
    """One step of a long short-term memory (Hochreiter & Schmidhuber 1997), as PyTorch's `LSTMCell`.

    `forward(x, state=None)` takes `state = (h, c)` (zeros when None) and returns the new `(h, c)`:
    gates i, f, g, o = split(x W_ih + b_ih + h W_hh + b_hh) in that order, c' = σ(f) c + σ(i) tanh(g),
    h' = σ(o) tanh(c'). The cell state c is updated by a sum, not a product with W_hh, which is how
    the gradient survives long distances. Weights (input, 4·hidden) and (hidden, 4·hidden) in
    minigrad's layout (PyTorch's are transposed), all uniform in ±1/√hidden_size.
    """

    _gates, _state_size = 4, 2  # the state is (h, c)

    def forward(self, x, state=None):
        h, c = self._checked_state(x, state)
        z = x @ self.weight_ih + h @ self.weight_hh
        if self.bias_ih is not None:
            z = z + (self.bias_ih + self.bias_hh)
        return _lstm_update(z, c)

    def __repr__(self):
        return f"LSTMCell({self.weight_ih.shape[0]}, {self.hidden_size})"


def _lstm_update(z, c):
    """(h', c') from the four gates' pre-activations z = (i, f, g, o) and the cell state c."""
    n = c.shape[-1]
    # One sigmoid over all four gates, then slices of it: the same numbers as a sigmoid per
    # gate (it acts elementwise), two recorded operations fewer per step; the g quarter it also
    # computes is not used (benchmarks/README.md, the examples' steps).
    gates = z.sigmoid()
    i, f, o = gates[..., :n], gates[..., n : 2 * n], gates[..., 3 * n :]
    c = f * c + i * z[..., 2 * n : 3 * n].tanh()
    return o * c.tanh(), c


def _gru_update(xz, hz, h):
    """h' from the input's and the state's projections xz, hz (reset r, update z, new n, each with
    its bias) and the state h: r and z gate, n = tanh(xz_n + r · hz_n), h' = (1 − z) n + z h."""
    n = h.shape[-1]
    gates = (xz[..., : 2 * n] + hz[..., : 2 * n]).sigmoid()
    r, z = gates[..., :n], gates[..., n:]
    new = (xz[..., 2 * n :] + r * hz[..., 2 * n :]).tanh()
    return new + z * (h - new)


class GRUCell(_GatedCell):
    """One step of a gated recurrent unit (Cho et al. 2014), as PyTorch's `GRUCell`: reset and
    update gates and a candidate state from x W_ih + b_ih and h W_hh + b_hh, split in the order
    r, z, n; h' = (1 − z) n + z h. Two biases, as there: b_hh's n part is inside the reset gate's
    product, so the two do not add up to one. Weights (input, 3·hidden) and (hidden, 3·hidden) in
    minigrad's layout (PyTorch's are transposed), all uniform in ±1/√hidden_size."""

    _gates, _state_size = 3, 1

    def forward(self, x, h=None):
        h = self._checked_state(x, h)
        xz, hz = x @ self.weight_ih, h @ self.weight_hh
        if self.bias_ih is not None:
            xz, hz = xz + self.bias_ih, hz + self.bias_hh
        return _gru_update(xz, hz, h)

    def __repr__(self):
        return f"GRUCell({self.weight_ih.shape[0]}, {self.hidden_size}{'' if self.bias_ih is not None else ', bias=False'})"


class _Recurrent(Module):
    """What `LSTM` and `GRU` share, as PyTorch's `RNNBase`: `num_layers` layers, each one cell's
    weights per direction under PyTorch's names (`weight_ih_l0`, `bias_hh_l1_reverse`, ...; the
    weights in minigrad's (in, out) layout), run over a sequence. A layer projects the whole
    sequence through `weight_ih` in one product, then steps through time; a bidirectional layer
    runs a second copy from the end and joins the two outputs feature-wise; `dropout` falls on
    every layer's output but the last, in training.

    `forward(input, hx=None)` takes (L, N, features), (N, L, features) with `batch_first=True`,
    or one unbatched (L, features) sequence; states are (layers · directions, N, hidden), zeros
    when not given. It returns the last layer's outputs (L, N, directions · hidden) and the final
    states."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False, proj_size=0, rng=None, dtype=np.float64):
        name = type(self).__name__
        if proj_size:
            raise ValueError(f"{name}: proj_size is not supported in minigrad")
        if not (isinstance(num_layers, (int, np.integer)) and num_layers >= 1) or not 0.0 <= dropout <= 1.0:
            raise ValueError(f"{name}: num_layers must be a positive int and dropout a probability in [0, 1]; got {num_layers!r} and {dropout!r}")
        self.input_size, self.hidden_size, self.num_layers, self.bias = input_size, hidden_size, int(num_layers), bias
        self.batch_first, self.dropout, self.bidirectional = batch_first, dropout, bidirectional
        self.rng = rng = default_rng() if rng is None else rng
        for layer in range(self.num_layers):
            n_in = input_size if layer == 0 else hidden_size * len(self._directions)
            for suffix in self._directions:
                for name, parameter in _gate_parameters(n_in, hidden_size, self._gates, bias, rng).items():
                    if parameter is not None:
                        setattr(self, f"{name}_l{layer}{suffix}", parameter)
        if np.dtype(dtype) != np.float64:
            self.to(dtype)

    @property
    def _directions(self):
        return ("", "_reverse") if self.bidirectional else ("",)

    def forward(self, input, hx=None):  # noqa: A002  (PyTorch's name)
        name, x = type(self).__name__, input
        if x.ndim not in (2, 3) or x.shape[-1] != self.input_size:
            layout = "(N, L, input_size)" if self.batch_first else "(L, N, input_size)"
            raise ShapeError(f"{name}: input must be {layout} or unbatched (L, input_size) with input_size = {self.input_size}, got shape {x.shape}")
        unbatched = x.ndim == 2
        x = x.unsqueeze(1) if unbatched else x.transpose(0, 1) if self.batch_first else x
        states = self._initial_states(hx, x.shape[1], x.dtype, unbatched)
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for d, suffix in enumerate(self._directions):
                sequence, state = self._layer(x, f"l{layer}{suffix}", states[layer * len(self._directions) + d], reverse=d == 1)
                outputs.append(sequence)
                finals.append(state)
            x = outputs[0] if len(outputs) == 1 else cat(outputs, dim=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, rng=self.rng)
        x = x.squeeze(1) if unbatched else x.transpose(0, 1) if self.batch_first else x
        finals = [stack([state[i] for state in finals]) for i in range(len(finals[0]))]  # each (layers · directions, N, hidden)
        finals = [f.squeeze(1) for f in finals] if unbatched else finals
        return x, (tuple(finals) if len(finals) > 1 else finals[0])

    def _layer(self, x, which, state, reverse):
        """One layer in one direction over x (L, N, features): its outputs (L, N, hidden) and final state."""
        w_ih, w_hh, b_ih, b_hh = (getattr(self, f"{p}_{which}", None) for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
        projected = x @ w_ih if b_ih is None else x @ w_ih + b_ih
        outputs = [None] * x.shape[0]
        for t in reversed(range(x.shape[0])) if reverse else range(x.shape[0]):
            state = self._step(projected[t], state, w_hh, b_hh)
            outputs[t] = state[0]
        return stack(outputs), state

    def _initial_states(self, hx, batch, dtype, unbatched):
        """A state tuple per layer and direction, from `hx` (zeros when None), its shapes checked."""
        count = self.num_layers * len(self._directions)
        shape = (count, self.hidden_size) if unbatched else (count, batch, self.hidden_size)
        if hx is None:
            hx = (Tensor(np.zeros(shape, dtype=dtype)),) * self._state_size
        hx = (hx,) if isinstance(hx, Tensor) else tuple(hx)
        if len(hx) != self._state_size or any(h.shape != shape for h in hx):
            raise ShapeError(f"{type(self).__name__}: expected {self._state_description} of shape {shape} (layers · directions, batch, hidden), got shapes {[tuple(h.shape) for h in hx]}")
        hx = tuple(h.unsqueeze(1) for h in hx) if unbatched else hx
        return [tuple(h[i] for h in hx) for i in range(count)]

    def flatten_parameters(self):
        """Nothing to do: PyTorch packs the weights into one buffer for cuDNN here; minigrad has none."""

    def __repr__(self):
        shown = [("num_layers", self.num_layers, 1), ("bias", self.bias, True), ("batch_first", self.batch_first, False), ("dropout", self.dropout, 0.0), ("bidirectional", self.bidirectional, False)]
        extra = "".join(f", {name}={value}" for name, value, default in shown if value != default)  # PyTorch's order and omissions
        return f"{type(self).__name__}({self.input_size}, {self.hidden_size}{extra})"


class LSTM(_Recurrent):
    """A multi-layer LSTM, as `torch.nn.LSTM` (gates i, f, g, o as in `LSTMCell`); `forward`
    returns `(output, (h_n, c_n))`, `hx` is `(h_0, c_0)`."""

    _gates, _state_size, _state_description = 4, 2, "(h_0, c_0), each"

    @staticmethod
    def _step(xz, state, w_hh, b_hh):
        h, c = state
        z = xz + h @ w_hh if b_hh is None else xz + (h @ w_hh + b_hh)
        return _lstm_update(z, c)


class GRU(_Recurrent):
    """A multi-layer GRU, as `torch.nn.GRU` (gates r, z, n as in `GRUCell`); `forward` returns
    `(output, h_n)`, `hx` is `h_0`."""

    _gates, _state_size, _state_description = 3, 1, "h_0"

    @staticmethod
    def _step(xz, state, w_hh, b_hh):
        (h,) = state
        hz = h @ w_hh if b_hh is None else h @ w_hh + b_hh
        return (_gru_update(xz, hz, h),)
