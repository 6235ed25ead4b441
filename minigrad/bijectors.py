"""`torch.distributions.transforms` for minigrad (`minigrad.distributions.transforms`): invertible
maps y = f(x) that know log |det ∂y/∂x|, from which `TransformedDistribution` makes a new density
out of a base distribution's by the change of variables

    log p_Y(y) = log p_X(f⁻¹(y)) − log |det J_f(f⁻¹(y))|.

A squashed Gaussian policy (soft actor-critic) is `TransformedDistribution(Normal(mu, sigma),
TanhTransform(cache_size=1))`; a log-normal is a normal under `ExpTransform()`. Each transform
here is elementwise (or, for `AffineTransform(event_dim=k)`, acts on events of k dimensions) and
keeps shapes; every map is a composition of minigrad operations, so densities differentiate to
every order. `cache_size=1` remembers the last (x, y): the inverse of a value the transform just
produced is that x exactly, where tanh⁻¹ of a rounded 1 − ε would be far off (or infinite).
"""

import math

import numpy as np

from . import constraints
from .functional import softplus
from .tensor import Tensor

__all__ = [
    "AffineTransform", "ComposeTransform", "ExpTransform", "PowerTransform", "SigmoidTransform", "SoftplusTransform",
    "TanhTransform", "Transform",
]


def _tensor(x):
    return x if isinstance(x, Tensor) else Tensor(x)


def _parameter(x):
    """A map's parameter: a Python number stays one, so that it takes the dtype of what the map
    is applied to (an AffineTransform(0.5, 2.0) keeps float32 draws float32), else a tensor."""
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else _tensor(x)


def _data(parameter):
    return parameter.data if isinstance(parameter, Tensor) else np.asarray(parameter)


def _sign_of(parameter):
    """Whether a map x ↦ parameter · x (or x^parameter) increases (+1) or decreases (−1) x: one
    number when every entry agrees, else a tensor of them."""
    signs = np.unique(np.sign(_data(parameter)))
    return int(signs[0]) if len(signs) == 1 else Tensor(np.sign(_data(parameter)))


def sum_rightmost(x, n):
    """x summed over its last n dimensions (none for n = 0)."""
    return x.sum(axis=tuple(range(-n, 0))) if n > 0 else x


class Transform:
    """y = f(x), its inverse (`inv`, itself a Transform) and log |det ∂y/∂x| (`log_abs_det_jacobian`).

    `domain` and `codomain` are the `constraints` f maps from and to: the inverse checks its values
    against the codomain, with a message that names it, and `event_dim` (how many trailing
    dimensions one application of f mixes, 0 for an elementwise map) is the domain's. `sign` is +1
    or −1 for a monotone elementwise map, which the CDF of a transformed distribution needs, and
    None where it is not known (a subclass's, unless it says). A subclass defines `_call`,
    `_inverse` and `log_abs_det_jacobian`, as in PyTorch."""

    domain = codomain = constraints.real
    sign = None
    bijective = True

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError(f"{type(self).__name__}: cache_size must be 0 or 1, got {cache_size!r}")
        self._cache_size, self._cached = cache_size, None

    @property
    def event_dim(self):
        return self.domain.event_dim

    def __call__(self, x):
        x = _tensor(x)
        y = self._call(x)
        if self._cache_size:
            self._cached = (x, y)
        return y

    def knows(self, y):
        """Whether y is the output the cache holds (its inverse is then exact, even where y rounded)."""
        return self._cached is not None and self._cached[1] is y

    def _inv_call(self, y):
        if self.knows(y):
            return self._cached[0]
        y = _tensor(y)
        _check_in(self, "inverse", self.codomain, y)
        x = self._inverse(y)
        if self._cache_size:
            self._cached = (x, y)
        return x

    @property
    def inv(self):
        """f⁻¹ as a Transform (its own `inv` is this one)."""
        return _InverseTransform(self)

    def log_abs_det_jacobian(self, x, y):
        """log |det ∂y/∂x| at x (y = f(x), given too: some formulas are shorter in y), per event."""
        raise NotImplementedError(f"{type(self).__name__}.log_abs_det_jacobian")

    def forward_shape(self, shape):
        """The shape of f(x) for x of `shape`: the same, or broadcast against the parameters'."""
        return tuple(shape)

    def _parameters(self):
        """The tensors the map is made of, which `same_map` compares; None for a map whose
        parameters it cannot see (a user's subclass, a network inside), which is only itself."""
        return None

    def _broadcast(self, shape, *parameters):
        return tuple(np.broadcast_shapes(tuple(shape), *(np.shape(_data(p)) for p in parameters)))

    def __repr__(self):
        return f"{type(self).__name__}()"


def same_map(a, b):
    """Whether transforms a and b are one and the same map (the same object, or the same kind,
    event_dim and parameters): KL divergence is invariant under one invertible map applied to both
    distributions."""
    if a is b:
        return True
    if type(a) is not type(b) or a.event_dim != b.event_dim:
        return False
    if isinstance(a, _InverseTransform):
        return same_map(a.inv, b.inv)
    if isinstance(a, ComposeTransform):
        return len(a.parts) == len(b.parts) and all(map(same_map, a.parts, b.parts))
    ours, theirs = a._parameters(), b._parameters()
    return ours is not None and all(np.array_equal(_data(x), _data(y)) for x, y in zip(ours, theirs, strict=True))


def _check_in(transform, what, space, values):
    if not np.all(space.check(values.data)):
        raise ValueError(f"{transform!r} {what}: values must be {space}, got {np.asarray(values.data).ravel()[:8].tolist()}")


class _InverseTransform(Transform):
    """f⁻¹ of a transform f: its forward is f's inverse and its log-determinant the negative of f's."""

    def __init__(self, transform):
        super().__init__()
        self._transform = transform
        self.sign, self.domain, self.codomain = transform.sign, transform.codomain, transform.domain

    def __call__(self, x):
        return self._transform._inv_call(x)

    def knows(self, y):
        return False

    def _inv_call(self, y):
        return self._transform(y)

    @property
    def inv(self):
        return self._transform

    def log_abs_det_jacobian(self, x, y):
        return -self._transform.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._transform.forward_shape(shape)

    def __repr__(self):
        return f"{self._transform!r}.inv"


class ComposeTransform(Transform):
    """parts[-1] ∘ ⋯ ∘ parts[0]: applied in the order given; log-determinants add (the chain rule),
    each summed over the event dimensions the composition has beyond its own."""

    def __init__(self, parts, cache_size=0):
        super().__init__(cache_size)
        self.parts = list(parts)
        signs = [part.sign for part in self.parts]
        self.sign = None if any(sign is None for sign in signs) else math.prod(signs)
        if self.parts:
            self.domain, self.codomain = self.parts[0].domain, self.parts[-1].codomain

    @property
    def event_dim(self):
        """The most any part mixes: its log-determinant is one number per event of that many dimensions."""
        return max((part.event_dim for part in self.parts), default=0)

    def _call(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def _inverse(self, y):
        for part in reversed(self.parts):
            y = part.inv(y)
        return y

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return tuple(shape)

    def log_abs_det_jacobian(self, x, y):
        total = 0.0
        for part in self.parts:
            x_next = part(x)
            total = total + sum_rightmost(part.log_abs_det_jacobian(x, x_next), self.event_dim - part.event_dim)
            x = x_next
        return total

    def __repr__(self):
        return f"ComposeTransform([{', '.join(map(repr, self.parts))}])"


class _FixedMap(Transform):
    """An increasing elementwise map without parameters: any two of one kind are the same map."""

    sign = 1

    def _parameters(self):
        return ()


class ExpTransform(_FixedMap):
    """y = eˣ: log |dy/dx| = x."""

    codomain = constraints.positive

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class AffineTransform(Transform):
    """y = loc + scale · x, on events of `event_dim` dimensions: log |det| = Σ log |scale| over them."""

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size)
        self.loc, self.scale = _parameter(loc), _parameter(scale)
        self.domain = self.codomain = constraints.independent(constraints.real, int(event_dim)) if event_dim else constraints.real
        self.sign = _sign_of(self.scale)

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def forward_shape(self, shape):
        return self._broadcast(shape, self.loc, self.scale)

    def _parameters(self):
        return (self.loc, self.scale)

    def log_abs_det_jacobian(self, x, y):
        shape = self._broadcast(x.shape, self.scale)
        if isinstance(self.scale, Tensor):
            log_scale = self.scale.abs().log().broadcast_to(shape)
        else:
            log_scale = Tensor(np.full(shape, math.log(abs(self.scale)), dtype=x.dtype))
        return sum_rightmost(log_scale, self.event_dim)

    def __repr__(self):
        loc, scale = (np.shape(_data(p)) for p in (self.loc, self.scale))
        return f"AffineTransform(loc: {loc}, scale: {scale}, event_dim={self.event_dim})"


class SigmoidTransform(_FixedMap):
    """y = 1 / (1 + e⁻ˣ), kept in [tiny, 1 − ε] as PyTorch's (so that its inverse, the logit, stays
    finite): log |dy/dx| = −softplus(−x) − softplus(x)."""

    codomain = constraints.unit_interval

    def _call(self, x):
        info = np.finfo(x.dtype)
        return x.sigmoid().clamp(float(info.tiny), 1.0 - float(info.eps))

    def _inverse(self, y):
        info = np.finfo(y.dtype)
        y = y.clamp(float(info.tiny), 1.0 - float(info.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class TanhTransform(_FixedMap):
    """y = tanh x: log |dy/dx| = log(1 − tanh² x) = 2 (log 2 − x − softplus(−2x)), which does not
    round to log 0 for large |x| as 1 − y² does."""

    # open, where PyTorch's is closed: tanh⁻¹(±1) is infinite, and its log-density NaN
    codomain = constraints.open_interval(-1.0, 1.0)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class SoftplusTransform(_FixedMap):
    """y = log(1 + eˣ), a smooth map onto the positive numbers: x = y + log(1 − e⁻ʸ), and
    log |dy/dx| = log sigmoid(x) = −softplus(−x)."""

    codomain = constraints.positive

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-(-y).expm1()).log() + y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class PowerTransform(Transform):
    """y = xᵖ on the positive numbers: log |dy/dx| = log |p y / x|."""

    domain = codomain = constraints.positive

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size)
        self.exponent = _parameter(exponent)
        self.sign = _sign_of(self.exponent)

    def _call(self, x):
        return x ** self.exponent

    def _inverse(self, y):
        return y ** (1.0 / self.exponent)

    def forward_shape(self, shape):
        return self._broadcast(shape, self.exponent)

    def _parameters(self):
        return (self.exponent,)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def __repr__(self):
        return f"PowerTransform(exponent: {np.shape(_data(self.exponent))})"
