"""Layers: Linear, activations, Sequential and the multi-layer perceptron."""

import collections.abc

import numpy as np

from ..creation import default_rng
from ..errors import DtypeError, ShapeError
from ..functional import where
from ..tensor import Tensor, _refuse_while_tracing, tracing
from .functional import _prelu, celu, elu, gelu, glu, hardshrink, hardsigmoid, hardswish, hardtanh, leaky_relu, logsigmoid, mish, selu, silu, softmin, softplus, softshrink, softsign, tanhshrink, threshold  # module-level names: an import inside forward() costs 0.6 µs a call
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
        return f"{type(self).__name__}(dim={self.dim})"


class LogSoftmax(Softmax):
    """log softmax along `dim` (PyTorch's `nn.LogSoftmax`), computed stably."""

    def forward(self, x):
        return x.log_softmax(dim=self.dim)


class Softmin(Softmax):
    """softmax(−x) along `dim` (PyTorch's `nn.Softmin`): weights favouring the smallest entries."""

    def forward(self, x):
        return softmin(x, self.dim)


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


class Hardtanh(Module):
    """x clipped to [min_val, max_val] (see `functional.hardtanh`)."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        if max_val <= min_val:
            raise ValueError(f"{type(self).__name__}: max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, x):
        return hardtanh(x, self.min_val, self.max_val)

    def __repr__(self):
        return _repr_with_inplace("Hardtanh", [f"min_val={self.min_val}", f"max_val={self.max_val}"], self.inplace)


class ReLU6(Hardtanh):
    """min(max(0, x), 6): Hardtanh(0, 6), as PyTorch defines it."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def __repr__(self):
        return _repr_with_inplace("ReLU6", [], self.inplace)


class PReLU(Module):
    """A leaky ReLU whose negative slope is learned (He et al. 2015): `weight` holds one slope shared
    by every channel (num_parameters=1) or one per channel (axis 1), each starting at `init`."""

    def __init__(self, num_parameters=1, init=0.25, dtype=np.float64):
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(np.full(num_parameters, init))
        if np.dtype(dtype) != np.float64:
            self.to(dtype)

    def forward(self, x):
        return _prelu("PReLU", x, self.weight)

    def __repr__(self):
        return f"PReLU(num_parameters={self.num_parameters})"


class _Activation(Module):
    """`function` applied to the input: the activations with no setting of their own."""

    function = None  # set by each subclass, as a staticmethod

    def forward(self, x):
        return self.function(x)


class _InplaceActivation(_Activation):
    """An activation whose only setting is PyTorch's `inplace=`."""

    def __init__(self, inplace=False):
        self.inplace = inplace

    def __repr__(self):
        return _repr_with_inplace(type(self).__name__, [], self.inplace)


class _HardActivation(_InplaceActivation):
    """Hardsigmoid and Hardswish, whose repr PyTorch shows without `inplace`."""

    __repr__ = Module.__repr__


class Mish(_InplaceActivation):
    """x·tanh(softplus(x)) (Misra 2019)."""

    function = staticmethod(mish)


class SELU(_InplaceActivation):
    """The self-normalising ELU of Klambauer et al. (2017) (see `functional.selu`)."""

    function = staticmethod(selu)


class Hardsigmoid(_HardActivation):
    """relu6(x + 3) / 6, the piecewise-linear sigmoid of MobileNetV3."""

    function = staticmethod(hardsigmoid)


class Hardswish(_HardActivation):
    """x·relu6(x + 3) / 6, the piecewise SiLU of MobileNetV3."""

    function = staticmethod(hardswish)


class Softsign(_Activation):
    """x / (1 + |x|)."""

    function = staticmethod(softsign)


class LogSigmoid(_Activation):
    """log σ(x), computed without overflow."""

    function = staticmethod(logsigmoid)


class Tanhshrink(_Activation):
    """x − tanh(x)."""

    function = staticmethod(tanhshrink)


class CELU(Module):
    """The continuously differentiable ELU, α(e^(x/α) − 1) for x ≤ 0 (Barron 2017)."""

    def __init__(self, alpha=1.0, inplace=False):
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x):
        return celu(x, self.alpha)

    def __repr__(self):
        return _repr_with_inplace("CELU", [f"alpha={self.alpha}"], self.inplace)


class GLU(Module):
    """The gated linear unit a · σ(b), a and b the halves of the input along `dim` (Dauphin et al. 2017)."""

    def __init__(self, dim=-1):
        self.dim = dim

    def forward(self, x):
        return glu(x, self.dim)

    def __repr__(self):
        return f"GLU(dim={self.dim})"


class Threshold(Module):
    """x where x > threshold, `value` elsewhere."""

    def __init__(self, threshold, value, inplace=False):
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, x):
        return threshold(x, self.threshold, self.value)

    def __repr__(self):
        return _repr_with_inplace("Threshold", [f"threshold={self.threshold}", f"value={self.value}"], self.inplace)


class _Shrink(Module):
    """`function(x, lambd)`: the two shrinkage activations."""

    function = None  # set by each subclass, as a staticmethod

    def __init__(self, lambd=0.5):
        self.lambd = lambd

    def forward(self, x):
        return self.function(x, self.lambd)

    def __repr__(self):
        return f"{type(self).__name__}({self.lambd})"


class Softshrink(_Shrink):
    """Soft thresholding: x ∓ λ beyond ±λ, 0 between (see `functional.softshrink`)."""

    function = staticmethod(softshrink)


class Hardshrink(_Shrink):
    """Hard thresholding: x where |x| > λ, 0 elsewhere."""

    function = staticmethod(hardshrink)


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


class _Entries(Module):
    """What ModuleDict, ParameterList and ParameterDict share: each entry is an attribute of the
    container, named by its key ("0", "1", ... in a ParameterList). Whatever walks a module's
    attributes (`parameters()`, `state_dict()`, `modules()`, `train()`, the repr,
    `nn.utils.torch_state_dict`) then finds the entries under PyTorch's names, `blocks.attn.weight`
    for the entry "attn" of a ModuleDict `blocks`, `params.0` for a ParameterList `params`, with no
    bookkeeping of its own; and `blocks.attn` reads an entry, as in PyTorch."""

    _kind = Module  # what an entry is

    def _entries(self):
        return {key: value for key, value in vars(self).items() if isinstance(value, self._kind)}

    def __len__(self):
        return len(self._entries())

    def _checked(self, key, value):
        if not isinstance(value, self._kind):
            raise TypeError(f"{type(self).__name__}: entry {key!r} must be a {self._kind.__name__}, got {type(value).__name__}")
        return value


class _Dict(_Entries):
    """The mapping methods of ModuleDict and ParameterDict: entries in insertion order."""

    _sorts_plain_dicts = False  # ParameterDict's update takes a plain dict's keys in sorted order, as PyTorch's

    def __getitem__(self, key):
        return self._entries()[key]

    def __setitem__(self, key, value):
        name = type(self).__name__
        if not isinstance(key, str):
            raise TypeError(f"{name}: keys must be strings, got {type(key).__name__} {key!r}")
        if not key or "." in key:
            raise KeyError(f"{name}: key {key!r} must be a non-empty string without '.' (state-dict names join keys with dots)")
        if hasattr(self, key) and not isinstance(vars(self).get(key), self._kind):
            raise KeyError(f"{name}: key {key!r} is already an attribute of {name} (a method or a setting); choose another key, as PyTorch requires")
        setattr(self, key, self._checked(key, value))

    def __delitem__(self, key):
        if key not in self:
            raise KeyError(key)
        delattr(self, key)

    def __iter__(self):
        return iter(self._entries())

    def __contains__(self, key):
        return key in self._entries()

    def keys(self):
        return self._entries().keys()

    def items(self):
        return self._entries().items()

    def values(self):
        return self._entries().values()

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def clear(self):
        for key in list(self._entries()):
            delattr(self, key)

    def update(self, entries):
        """Add or replace entries from a mapping or from (key, value) pairs."""
        name = type(self).__name__
        if isinstance(entries, (collections.abc.Mapping, _Dict)):
            pairs = list(entries.items())
            if self._sorts_plain_dicts and not isinstance(entries, (collections.OrderedDict, _Dict)):
                pairs.sort(key=lambda pair: pair[0])
        elif isinstance(entries, collections.abc.Iterable) and not isinstance(entries, (str, Tensor)):
            pairs = list(entries)
            for i, pair in enumerate(pairs):
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    raise TypeError(f"{name}.update: element #{i} must be a (key, value) pair, got {pair!r}")
        else:
            raise TypeError(f"{name}.update: expects a mapping or an iterable of (key, value) pairs, got {type(entries).__name__}")
        for key, value in pairs:
            self[key] = value


class ModuleDict(_Dict):
    """Modules under string keys, in insertion order (PyTorch's `nn.ModuleDict`): index it by key,
    iterate its keys, `items()`, `update()` it; the model owns their parameters. Calling it is for
    its owner to define. A key may not be an attribute already ("keys", "training"), nor contain a dot."""

    def __init__(self, modules=None):
        if modules is not None:
            self.update(modules)


class _Parameters(_Entries):
    """ParameterList and ParameterDict: a Tensor given becomes a Parameter, as in PyTorch."""

    _kind = Parameter

    def _checked(self, key, value):
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value.data)
        return super()._checked(key, value)

    def __repr__(self):
        """PyTorch's description of each entry (with minigrad's dtype name), one line each."""
        lines = [f"  ({key}): Parameter containing: [{p.dtype} of size {'x'.join(map(str, p.shape))}]" for key, p in self._entries().items()]
        return f"{type(self).__name__}(\n" + "\n".join(lines) + "\n)" if lines else f"{type(self).__name__}()"


class ParameterList(_Parameters):
    """A list of parameters that the model owns (PyTorch's `nn.ParameterList`): index it (a slice
    gives a new ParameterList), assign to an index, iterate it, `append` and `extend` it. Its
    state-dict names are the indices: `params.0`, `params.1`, ..."""

    def __init__(self, values=None):
        if values is not None:
            self.extend(values)

    def _index(self, i):
        n = len(self)
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"ParameterList: indices must be integers or slices, got {type(i).__name__}")
        if not -n <= i < n:
            raise IndexError(f"ParameterList: index {i} is out of range for {n} parameters")
        return str(int(i) % n)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ParameterList(list(self)[i])
        return vars(self)[self._index(i)]

    def __setitem__(self, i, value):
        key = self._index(i)
        setattr(self, key, self._checked(key, value))

    def __iter__(self):
        return iter(self._entries().values())

    def append(self, value):
        key = str(len(self))
        setattr(self, key, self._checked(key, value))
        return self

    def extend(self, values):
        if isinstance(values, Tensor) or not isinstance(values, collections.abc.Iterable):
            raise TypeError(f"ParameterList.extend: expects an iterable of parameters, got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def __iadd__(self, values):
        return self.extend(values)


class ParameterDict(_Parameters, _Dict):
    """Parameters under string keys (PyTorch's `nn.ParameterDict`): index it by key, iterate its
    keys, `items()`, `get()`, `update()` it. As in PyTorch, a plain dict given to the constructor
    or to `update` is added in the sorted order of its keys (an OrderedDict, a ParameterDict or a
    list of pairs in their own order): that order is `parameters()`'s and `state_dict()`'s."""

    _sorts_plain_dicts = True

    def __init__(self, parameters=None):
        if parameters is not None:
            self.update(parameters)

    def get(self, key, default=None):
        return self._entries().get(key, default)


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

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None):
        """A table holding a copy of `embeddings` (num_embeddings, embedding_dim), word vectors
        trained elsewhere, as PyTorch's: frozen (no gradient, so no optimizer moves them) unless
        `freeze=False`; a `padding_idx` row keeps its values but gets no gradient."""
        array = embeddings.data if isinstance(embeddings, Tensor) else np.asarray(embeddings)
        if array.ndim != 2:
            raise ShapeError(f"Embedding.from_pretrained: embeddings must be (num_embeddings, embedding_dim), got shape {array.shape}")
        layer = cls.__new__(cls)  # not __init__: no random table drawn only to be replaced
        layer.weight = Parameter(array, requires_grad=not freeze)
        if padding_idx is not None and not -len(array) <= padding_idx < len(array):
            raise ValueError(f"Embedding.from_pretrained: padding_idx {padding_idx} is not a row of a table of {len(array)}")
        layer.padding_idx = None if padding_idx is None else int(padding_idx) % len(array)
        return layer

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

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=np.float64):
        shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = Parameter(np.ones(shape, dtype=dtype)) if elementwise_affine else None
        self.bias = Parameter(np.zeros(shape, dtype=dtype)) if elementwise_affine and bias else None
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
        if self.weight is None:
            return out
        return out * self.weight + self.bias if self.bias is not None else out * self.weight

    def __repr__(self):
        return f"LayerNorm({self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, bias={self.bias is not None})"
ACTIVATIONS["gelu"] = GELU
