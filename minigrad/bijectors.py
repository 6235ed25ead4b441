"""`torch.distributions.transforms` for minigrad (`minigrad.distributions.transforms`): invertible
maps y = f(x) that know log |det ∂y/∂x|, from which `TransformedDistribution` makes a new density
out of a base distribution's by the change of variables

    log p_Y(y) = log p_X(f⁻¹(y)) − log |det J_f(f⁻¹(y))|.

A squashed Gaussian policy (soft actor-critic) is `TransformedDistribution(Normal(mu, sigma),
TanhTransform(cache_size=1))`; a log-normal is a normal under `ExpTransform()`; a logistic normal
is one under `StickBreakingTransform()`, which maps ℝᴷ⁻¹ onto the K-simplex. Most transforms are
elementwise; the others act on events of a few dimensions (`domain.event_dim`, `codomain.event_dim`)
and may change their shape (`forward_shape`). Every map is a composition of minigrad operations,
so densities differentiate to every order. `cache_size=1` remembers the last (x, y): the inverse
of a value the transform just produced is that x exactly, where tanh⁻¹ of a rounded 1 − ε would be
far off (or infinite). `biject_to(constraint)` and `transform_to(constraint)` give a map from ℝ
onto a constraint's set, PyTorch's registries.
"""

import math

import numpy as np

from . import constraints
from .functional import concatenate, cumprod, diagonal, softmax, softplus, tril
from .tensor import Tensor

__all__ = [
    "AbsTransform", "AffineTransform", "ComposeTransform", "CumulativeDistributionTransform", "ExpTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
    "SoftmaxTransform", "SoftplusTransform", "StickBreakingTransform", "TanhTransform", "Transform", "biject_to",
    "identity_transform", "transform_to",
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

    def inverse_shape(self, shape):
        """The shape of f⁻¹(y) for y of `shape`."""
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
    if isinstance(a, IndependentTransform):
        return a.reinterpreted_batch_ndims == b.reinterpreted_batch_ndims and same_map(a.base_transform, b.base_transform)
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
        return self._transform.inverse_shape(shape)

    def inverse_shape(self, shape):
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
        self.bijective = all(part.bijective for part in self.parts)
        if self.parts:
            self.domain, self.codomain = self._events(self.parts[0].domain, reversed(self.parts), +1), self._events(
                self.parts[-1].codomain, self.parts, -1)

    @staticmethod
    def _events(space, parts, direction):
        """The domain (direction +1: walking back from the end) or codomain (−1: forward from the
        start) of the composition: the first part's domain (the last's codomain), on events of as
        many dimensions as the part mixing the most needs there."""
        event_dim = space.event_dim
        for part in parts:
            into, out_of = (part.domain, part.codomain) if direction > 0 else (part.codomain, part.domain)
            event_dim = max(event_dim + into.event_dim - out_of.event_dim, into.event_dim)
        return constraints.independent(space, event_dim - space.event_dim) if event_dim > space.event_dim else space

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

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return tuple(shape)

    def log_abs_det_jacobian(self, x, y):
        """Σ of the parts' log-determinants, each summed over the event dimensions the composition
        has beyond the part's own (a part may change them: stick-breaking, a reshape)."""
        total, event_dim = Tensor(np.zeros(x.shape[: x.ndim - self.domain.event_dim], dtype=x.dtype)), self.domain.event_dim
        for part in self.parts:
            x_next = part(x)
            total = total + sum_rightmost(part.log_abs_det_jacobian(x, x_next), event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
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


identity_transform = ComposeTransform([])  # y = x (PyTorch's): what biject_to(constraints.real) is


class AbsTransform(_FixedMap):
    """y = |x|: not one-to-one, so it has no log-determinant (as in PyTorch); its `inv` gives the
    non-negative pre-image."""

    codomain = constraints.positive
    sign, bijective = None, False

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class SoftmaxTransform(_FixedMap):
    """y = softmax(x) over the last dimension, onto the simplex: not one-to-one (adding a constant
    to x changes nothing), so it has no log-determinant; its inverse is log y, one of the pre-images.
    `transform_to(constraints.simplex)` (an unconstrained parameterization of probabilities)."""

    domain, codomain = constraints.real_vector, constraints.simplex
    sign, bijective = None, False

    def _call(self, x):
        return softmax(x, axis=-1)

    def _inverse(self, y):
        return y.log()


def _log_offsets(length, dtype):
    """log(K − 1), log(K − 2), ..., log 1 for K − 1 = length: the shift that maps x = 0 to the
    simplex's centre (1/K, ..., 1/K)."""
    return Tensor(np.log(np.arange(length, 0, -1, dtype=dtype)))


class StickBreakingTransform(_FixedMap):
    """ℝᴷ⁻¹ onto the K-simplex, one-to-one (`biject_to(constraints.simplex)`; LogisticNormal's map):
    zᵢ = sigmoid(xᵢ − log(K − 1 − i)) is the fraction of the stick left that piece i takes,
    yᵢ = zᵢ Πⱼ₍ⱼ₌₀..ᵢ₋₁₎ (1 − zⱼ) and the last piece is what remains. log |det J| =
    Σᵢ (log sigmoid(uᵢ) − uᵢ + log yᵢ) for uᵢ = xᵢ − log(K − 1 − i), as PyTorch's."""

    domain, codomain = constraints.real_vector, constraints.simplex
    sign = None

    def _call(self, x):
        info = np.finfo(x.dtype)
        z = (x - _log_offsets(x.shape[-1], x.dtype)).sigmoid().clamp(float(info.tiny), 1.0 - float(info.eps))
        ones = Tensor(np.ones(x.shape[:-1] + (1,), dtype=x.dtype))
        left = cumprod(1.0 - z, dim=-1)  # the stick left after each piece
        return concatenate([z, ones], axis=-1) * concatenate([ones, left], axis=-1)

    def _inverse(self, y):
        info = np.finfo(y.dtype)
        pieces = y[..., :-1]
        left = (1.0 - pieces.cumsum(-1)).clamp(float(info.tiny), None)
        return pieces.log() - left.log() + _log_offsets(pieces.shape[-1], y.dtype)

    def log_abs_det_jacobian(self, x, y):
        u = x - _log_offsets(x.shape[-1], x.dtype)
        return (-u - softplus(-u) + y[..., :-1].log()).sum(axis=-1)

    def forward_shape(self, shape):
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(_FixedMap):
    """Any square matrix onto the Cholesky factors: its strictly lower triangle kept, its diagonal
    exponentiated (`biject_to(constraints.lower_cholesky)`: a covariance's unconstrained parameters).
    No log-determinant, as in PyTorch (the upper triangle is dropped)."""

    domain, codomain = constraints.independent(constraints.real, 2), constraints.lower_cholesky
    sign, bijective = None, False

    @staticmethod
    def _with_diagonal(x, function):
        eye = Tensor(np.eye(x.shape[-1], dtype=x.dtype))
        return tril(x, -1) + function(diagonal(x, 0, -2, -1)).unsqueeze(-1) * eye

    def _call(self, x):
        return self._with_diagonal(x, lambda d: d.exp())

    def _inverse(self, y):
        return self._with_diagonal(y, lambda d: d.log())


class IndependentTransform(Transform):
    """`base_transform` on events of `reinterpreted_batch_ndims` more dimensions: the same map,
    its log-determinants summed over them (PyTorch's)."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size)
        self.base_transform, self.reinterpreted_batch_ndims = base_transform, int(reinterpreted_batch_ndims)
        self.domain = constraints.independent(base_transform.domain, self.reinterpreted_batch_ndims)
        self.codomain = constraints.independent(base_transform.codomain, self.reinterpreted_batch_ndims)
        self.sign, self.bijective = base_transform.sign, base_transform.bijective

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """Events of `in_shape` reshaped to `out_shape` (as many entries): log |det| = 0."""

    def __init__(self, in_shape, out_shape, cache_size=0):
        super().__init__(cache_size)
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError(f"ReshapeTransform: in_shape {self.in_shape} and out_shape {self.out_shape} hold different "
                             "numbers of entries")
        self.domain = constraints.independent(constraints.real, len(self.in_shape))
        self.codomain = constraints.independent(constraints.real, len(self.out_shape))

    def _reshaped(self, x, source, target):
        if tuple(x.shape[x.ndim - len(source):]) != source:
            raise ValueError(f"{self!r}: expected events of shape {source}, got a tensor of shape {x.shape}")
        return x.reshape(tuple(x.shape[: x.ndim - len(source)]) + target)

    def _call(self, x):
        return self._reshaped(x, self.in_shape, self.out_shape)

    def _inverse(self, y):
        return self._reshaped(y, self.out_shape, self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return Tensor(np.zeros(x.shape[: x.ndim - len(self.in_shape)], dtype=x.dtype))

    def forward_shape(self, shape):
        return tuple(shape[: len(shape) - len(self.in_shape)]) + self.out_shape

    def inverse_shape(self, shape):
        return tuple(shape[: len(shape) - len(self.out_shape)]) + self.in_shape

    def _parameters(self):
        return (np.array(self.in_shape), np.array(self.out_shape))

    def __repr__(self):
        return f"ReshapeTransform({self.in_shape}, {self.out_shape})"


class CumulativeDistributionTransform(Transform):
    """y = F(x), the CDF of a continuous `distribution`, onto [0, 1]: log |dy/dx| is its
    log-density (copulas; PyTorch's). Its inverse is the distribution's quantile, `icdf`."""

    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size)
        self.distribution = distribution

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def __repr__(self):
        return f"CumulativeDistributionTransform({self.distribution!r})"


class ConstraintRegistry:
    """Transforms onto a constraint's set, by its kind (PyTorch's `biject_to` and `transform_to`):
    `biject_to(constraints.positive)(x)` makes an unconstrained x positive, as variational inference
    and constrained optimization parameterize. `register(constraint_or_kind, factory)` adds one
    (also as a decorator), the factory taking the constraint."""

    def __init__(self, name):
        self.name, self._factories = name, {}

    def register(self, constraint, factory=None):
        if factory is None:
            return lambda f: self.register(constraint, f)
        self._factories[constraint if isinstance(constraint, type) else type(constraint)] = factory
        return factory

    def __call__(self, constraint):
        factory = self._factories.get(type(constraint))
        if factory is None:
            raise NotImplementedError(f"{self.name}: no transform onto {constraint!r} in minigrad; register one with "
                                      f"{self.name}.register(constraint, factory)")
        return factory(constraint)


def _onto_interval(constraint):
    """ℝ onto (lower, upper), (lower, ∞) or (−∞, upper): a sigmoid or an exponential, then affine."""
    lower, upper = (None if bound is None else _parameter(bound) for bound in (constraint.lower, constraint.upper))
    if lower is not None and upper is not None:
        if _is(lower, 0) and _is(upper, 1):
            return SigmoidTransform()
        return ComposeTransform([SigmoidTransform(), AffineTransform(lower, upper - lower)])
    if upper is None:
        return ExpTransform() if _is(lower, 0) else ComposeTransform([ExpTransform(), AffineTransform(lower, 1.0)])
    return ComposeTransform([ExpTransform(), AffineTransform(upper, -1.0)])


def _is(bound, number):
    """Whether a bound (a number, or a tensor of them: a distribution's support) is that number."""
    return np.size(_data(bound)) == 1 and float(np.asarray(_data(bound))) == number


def _onto_independent(registry):
    return lambda constraint: IndependentTransform(registry(constraint.base), constraint.reinterpreted_batch_ndims)


biject_to, transform_to = ConstraintRegistry("biject_to"), ConstraintRegistry("transform_to")
for _registry in (biject_to, transform_to):
    _registry.register(constraints._Real, lambda constraint: identity_transform)
    _registry.register(constraints._Interval, _onto_interval)
    _registry.register(constraints._Independent, _onto_independent(_registry))
# one-to-one onto the simplex for biject_to; for transform_to PyTorch's choice, the softmax, which
# treats the classes alike; a Cholesky factor from any matrix (not one-to-one: transform_to only)
biject_to.register(constraints._Simplex, lambda constraint: StickBreakingTransform())
transform_to.register(constraints._Simplex, lambda constraint: SoftmaxTransform())
transform_to.register(constraints._LowerCholesky, lambda constraint: LowerCholeskyTransform())
