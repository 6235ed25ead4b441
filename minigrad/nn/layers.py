"""Layers: Linear, activations, Sequential and the multi-layer perceptron."""

import numpy as np

from ..creation import default_rng
from ..errors import DtypeError, ShapeError
from ..functional import where
from ..tensor import Tensor, _refuse_while_tracing, tracing
from .functional import elu, gelu, leaky_relu, silu, softplus  # module-level names: an import inside forward() costs 0.6 µs a call
from .module import Module, Parameter, _tree


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


# `inplace=` (ReLU(True), LeakyReLU(0.2, inplace=True), ...) is taken for PyTorch's signatures and
# shown as PyTorch shows it; minigrad always returns a new tensor, as the graph keeps the input.
def _repr_with_inplace(name, arguments, inplace):
    return f"{name}({', '.join(arguments + (['inplace=True'] if inplace else []))})"


class ReLU(Module):
    def __init__(self, inplace=False):
        self.inplace = inplace

    def forward(self, x):
        return x.relu()

    def __repr__(self):
        return _repr_with_inplace("ReLU", [], self.inplace)


class Sigmoid(Module):
    def forward(self, x):
        return x.sigmoid()


class Softmax(Module):
    """softmax along `dim` (PyTorch's `nn.Softmax`, whose implicit choice of `dim` is deprecated: here
    `dim` is required)."""

    def __init__(self, dim):
        self.dim = dim

    def forward(self, x):
        return x.softmax(dim=self.dim)

    def __repr__(self):
        return f"Softmax(dim={self.dim})"


class LogSoftmax(Softmax):
    """log softmax along `dim` (PyTorch's `nn.LogSoftmax`), computed stably."""

    def forward(self, x):
        return x.log_softmax(dim=self.dim)

    def __repr__(self):
        return f"LogSoftmax(dim={self.dim})"


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x):
        return leaky_relu(x, self.negative_slope)

    def __repr__(self):
        return _repr_with_inplace("LeakyReLU", [f"negative_slope={self.negative_slope}"], self.inplace)


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x):
        return elu(x, self.alpha)

    def __repr__(self):
        return _repr_with_inplace("ELU", [f"alpha={self.alpha}"], self.inplace)


class SiLU(Module):
    def __init__(self, inplace=False):
        self.inplace = inplace

    def forward(self, x):
        return silu(x)

    def __repr__(self):
        return _repr_with_inplace("SiLU", [], self.inplace)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        self.beta, self.threshold = beta, threshold

    def forward(self, x):
        return softplus(x, self.beta, self.threshold)

    def __repr__(self):
        return f"Softplus(beta={self.beta}, threshold={self.threshold})"


class Identity(Module):
    def forward(self, x):
        return x


ACTIVATIONS = {"tanh": Tanh, "relu": ReLU, "sigmoid": Sigmoid, "identity": Identity}  # GELU too, below



class ModuleList(Module):
    """A list of modules whose parameters the model owns (PyTorch's `nn.ModuleList`): index it,
    iterate it, `append` and `extend` it; calling it is for its owner to define."""

    def __init__(self, modules=()):
        self.layers = list(modules)  # "layers", as Sequential's: PyTorch's state-dict names skip it

    def append(self, module):
        self.layers.append(module)
        return self

    def extend(self, modules):
        self.layers.extend(modules)
        return self

    def __getitem__(self, i):
        return self.layers[i]

    def __len__(self):
        return len(self.layers)

    def __iter__(self):
        return iter(self.layers)

    def __repr__(self):
        return _tree(type(self).__name__, ((str(i), layer) for i, layer in enumerate(self.layers)))


class Sequential(ModuleList):
    """Apply layers one after another."""

    def __init__(self, *layers):
        super().__init__(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


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


class GELU(Module):
    """x·Φ(x), the Gaussian error linear unit (Hendrycks & Gimpel 2016), as PyTorch's `nn.GELU`.

    `approximate="none"` (the default) uses the error function, `"tanh"` the cheaper
    ½x(1 + tanh(√(2/π)(x + 0.044715x³))).
    """

    def __init__(self, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        return gelu(x, approximate=self.approximate)

    def __repr__(self):
        return f"GELU(approximate={self.approximate!r})"


class Flatten(Module):
    """Flatten the axes `start_dim`..`end_dim` into one (by default all but the batch axis)."""

    def __init__(self, start_dim=1, end_dim=-1):
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return x.flatten(self.start_dim, self.end_dim)

    def __repr__(self):
        return f"Flatten(start_dim={self.start_dim}, end_dim={self.end_dim})"


class Unflatten(Module):
    """Axis `dim` split into `unflattened_size` (Flatten's inverse, as PyTorch's `nn.Unflatten`)."""

    def __init__(self, dim, unflattened_size):
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x):
        dim = self.dim % max(x.ndim, 1)
        try:  # reshape's own checks: the sizes must multiply to the axis's length, one -1 at most
            return x.reshape(x.shape[:dim] + self.unflattened_size + x.shape[dim + 1 :])
        except ShapeError as error:
            raise ShapeError(f"Unflatten: cannot split axis {self.dim} of length {x.shape[dim]} (shape {x.shape}) into {self.unflattened_size}: {error}") from None

    def __repr__(self):
        return f"Unflatten(dim={self.dim}, unflattened_size={self.unflattened_size})"


class Dropout(Module):
    """Zero each entry with probability `p` while training, scaling the rest by 1/(1 − p)
    (inverted dropout, Srivastava et al. 2014); the identity after `model.eval()`."""

    def __init__(self, p=0.5, rng=None):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be a probability in [0, 1], got {p}")
        self.p = p
        self.rng = rng

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        if self.p == 1.0:
            return x * Tensor(np.zeros(x.shape, dtype=x.dtype))
        if tracing.depth and x.requires_grad:
            _refuse_while_tracing(
                x,
                "Dropout in training mode",
                "Its random mask would be drawn once, at trace time, and reused by every call. Call "
                "model.eval() before compiling (Dropout is then the identity), or run the training step without jit.compile.",
            )
        rng = default_rng() if self.rng is None else self.rng
        keep = rng.random(x.shape) >= self.p
        return x * Tensor(keep.astype(x.dtype) / x.dtype.type(1.0 - self.p))

    def __repr__(self):
        return f"Dropout(p={self.p})"


class Embedding(Module):
    """A lookup table: `Embedding(num_embeddings, embedding_dim)(indices)` is `weight[indices]`.

    Rows start standard normal (PyTorch's default). Indices are integers (or floats holding whole
    numbers) of any shape; the result has that shape plus (embedding_dim,). The gradient adds into
    the rows that were read, once per read. `padding_idx`, as in PyTorch, names a row that starts
    at zero and never receives a gradient (the index of a padding token).
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, rng=None, dtype=np.float64):
        rng = default_rng() if rng is None else rng
        self.weight = Parameter(rng.standard_normal((num_embeddings, embedding_dim)))
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} is not a row of a table of {num_embeddings}")
            padding_idx = int(padding_idx) % num_embeddings
            self.weight.data[padding_idx] = 0.0
        self.padding_idx = padding_idx
        if np.dtype(dtype) != np.float64:
            self.to(dtype)

    def forward(self, indices):
        if tracing.depth and isinstance(indices, Tensor) and indices.requires_grad:
            _refuse_while_tracing(
                indices,
                "Embedding with indices that are an input of the compiled function",
                "The rows read would be the first call's. Use constant indices (a numpy array the "
                "function closes over), or run the function without jit.compile.",
            )
        idx = np.asarray(indices.data if isinstance(indices, Tensor) else indices)
        if idx.dtype.kind not in "iu":  # as in PyTorch: float indices are a mistake, never rounded
            raise DtypeError(f"Embedding: indices must be integers, got dtype {idx.dtype} (values such as "
                             f"{idx.ravel()[:3].tolist()}); mg.tensor([3, 4]) of Python ints is int64, "
                             "mg.Tensor(...) is always float")
        n = self.weight.shape[0]
        bad = np.flatnonzero((idx < 0) | (idx >= n))
        if bad.size:
            raise ShapeError(f"Embedding: indices must lie in [0, {n}); got {idx.ravel()[bad[0]]} ({bad.size} out of range in all)")
        rows = self.weight[idx]
        if self.padding_idx is not None and np.any(idx == self.padding_idx):
            rows = where((idx != self.padding_idx)[..., None], rows, rows.detach())  # the padding row's value, no gradient
        return rows

    def __repr__(self):
        padding = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"Embedding({self.weight.shape[0]}, {self.weight.shape[1]}{padding})"


class LayerNorm(Module):
    """Normalise over the last axes (`normalized_shape`) to mean 0 and variance 1, then scale and
    shift per feature (Ba, Kiros & Hinton 2016): (x − μ) / √(σ² + eps) · weight + bias, σ² biased."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, dtype=np.float64):
        shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.weight = Parameter(np.ones(shape, dtype=dtype)) if elementwise_affine else None
        self.bias = Parameter(np.zeros(shape, dtype=dtype)) if elementwise_affine else None
        if np.dtype(dtype) != np.float64:
            self.to(dtype)

    def forward(self, x):
        k = len(self.normalized_shape)
        if x.shape[x.ndim - k :] != self.normalized_shape:
            raise ShapeError(f"LayerNorm: input of shape {x.shape} does not end in normalized_shape {self.normalized_shape}")
        axes = tuple(range(x.ndim - k, x.ndim))
        centred = x - x.mean(axis=axes, keepdims=True)
        var = (centred * centred).mean(axis=axes, keepdims=True)
        out = centred / (var + self.eps).sqrt()
        return out * self.weight + self.bias if self.weight is not None else out

    def __repr__(self):
        return f"LayerNorm({self.normalized_shape}, eps={self.eps})"
ACTIVATIONS["gelu"] = GELU
