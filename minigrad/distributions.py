"""`torch.distributions` for minigrad: Normal, MultivariateNormal, LowRankMultivariateNormal,
LogNormal, Uniform, Laplace, Cauchy, Gumbel, VonMises (angles), HalfNormal, HalfCauchy, Exponential,
Weibull, Pareto, GeneralizedPareto, Gamma, InverseGamma, Chi2, StudentT, FisherSnedecor, Beta,
Kumaraswamy, Dirichlet, LogisticNormal (proportions), Categorical, OneHotCategorical, OneHotCategoricalStraightThrough, Bernoulli
and ContinuousBernoulli; the counts Poisson, Binomial, Multinomial, Geometric and NegativeBinomial;
the relaxed (Gumbel-softmax) RelaxedBernoulli and RelaxedOneHotCategorical; Independent (batch
dimensions read as an event's), MixtureSameFamily (a mixture of K of one family) and
TransformedDistribution (a base distribution pushed through the invertible maps of
`minigrad.distributions.transforms`). With `log_prob`, `entropy`, `mean`, `mode`, `variance`, `cdf`,
`icdf`, `sample`, `rsample` (the reparameterization trick: every continuous family but VonMises, as
in PyTorch) and `kl_divergence`.

Every density is a composition of minigrad operations, so its gradient in the parameters (and in
the value) comes from the engine, to every order. `sample()` draws outside the graph, as PyTorch's
does (what policy gradients differentiate is `log_prob` of the sample); `rsample()` draws ε from a
fixed distribution and returns a differentiable function of the parameters and ε (VAEs, the
pathwise gradient). Draws come from `mg.manual_seed`'s generator, or a fresh one. Parameters are
checked as PyTorch's `validate_args` checks them: a scale that is not positive, probabilities
outside [0, 1] or a value outside the support is an error that names them. CDFs and quantiles are
written per tail where PyTorch's one formula cancels (its normal quantile of 1e-12 is off by 2e-5).
"""

import copy
import math
import sys

import numpy as np

from . import bijectors as transforms
from . import constraints, linalg, ops
from .bijectors import (
    AbsTransform, AffineTransform, ComposeTransform, CumulativeDistributionTransform, ExpTransform, IndependentTransform,
    LowerCholeskyTransform, PowerTransform, ReshapeTransform, SigmoidTransform, SoftmaxTransform, SoftplusTransform,
    StickBreakingTransform, TanhTransform, Transform, biject_to, identity_transform, same_map, sum_rightmost, transform_to,
)
from .creation import generator_for
from .errors import ShapeError
from .functional import diagonal, digamma, gather, i0e, i1e, lgamma, logsumexp, softplus, stack, where
from .tensor import Tensor

# `from torch.distributions.transforms import Transform` (and `.constraints`), as PyTorch programs
# write them, import these two modules of minigrad's under the names they have in torch.
sys.modules[__name__ + ".transforms"], sys.modules[__name__ + ".constraints"] = transforms, constraints

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet", "Distribution",
    "Exponential", "ExpRelaxedCategorical", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy",
    "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy", "Laplace", "LogisticNormal", "LogitRelaxedBernoulli", "LogNormal",
    "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
    "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
    "StudentT", "TransformedDistribution", "Uniform", "VonMises", "Weibull",
    "kl_divergence", "register_kl",
    # minigrad.distributions.transforms, also here as in torch.distributions
    "AbsTransform", "AffineTransform", "ComposeTransform", "CumulativeDistributionTransform", "ExpTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
    "SoftmaxTransform", "SoftplusTransform", "StickBreakingTransform", "TanhTransform", "Transform", "biject_to",
    "constraints", "identity_transform", "transform_to", "transforms",
]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_EULER = 0.57721566490153286061  # Euler's constant γ


def _tensor(x, dtype=None):
    """A parameter or value as a tensor; data becomes a float tensor (float64 unless `dtype`)."""
    return x if isinstance(x, Tensor) else Tensor(np.asarray(x, dtype=dtype or np.result_type(np.asarray(x).dtype, np.float64)))


def _together(*values):
    """Parameters as tensors, the Python numbers among them in the floating dtype of the others
    (PyTorch's broadcast_all: `Normal(0.0, scale)` is float32 for a float32 scale), float64 alone."""
    given = [_tensor(v) for v in values if not _is_number(v)]
    dtype = np.result_type(*(t.dtype for t in given), np.float16) if given else np.float64
    return tuple(_tensor(v, dtype) if _is_number(v) else _tensor(v) for v in values)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check(name, what, ok, values):
    if not np.all(ok):
        raise ValueError(f"{name}: {what}, got {np.asarray(values).ravel()[:8].tolist()}")


def _probabilities(name, value):
    """An icdf's argument: probabilities in [0, 1] (0 and 1 map to the support's ends)."""
    value = _tensor(value)
    _check(name, "values must be probabilities in [0, 1]", (value.data >= 0) & (value.data <= 1), value.data)
    return value


def _by_tail(value, lower, below, above, safe):
    """`below(value)` where `lower`, `above(value)` elsewhere, each computed on its own entries only
    (the others replaced by `safe`), so neither the unused branch's inf nor its NaN gradient leaks:
    the one formula for a whole CDF or quantile would cancel in one of the tails."""
    return where(lower, below(where(lower, value, safe)), above(where(lower, safe, value)))


def _shape(sample_shape):
    """PyTorch's sample_shape: a tuple (or torch.Size, or list) of lengths, or one length."""
    return (int(sample_shape),) if isinstance(sample_shape, (int, np.integer)) else tuple(sample_shape)


class Distribution:
    """The interface PyTorch's distributions share: `batch_shape` (independent distributions of the
    same family), `event_shape` (one draw), `sample`, `rsample`, `log_prob`, `entropy`, `mean`,
    `variance`, `stddev`."""

    has_rsample = False
    batch_shape, event_shape = (), ()
    # The trailing dimensions of a tensor attribute that are not batch dimensions (a Categorical's
    # classes: 1, a covariance's: 2), for `expand`; None: left as it is (a shared temperature).
    _event_dims = {}

    def sample(self, sample_shape=()):
        """A draw of shape sample_shape + batch_shape + event_shape, outside the graph."""
        if self.has_rsample:
            return self.rsample(sample_shape).detach()
        raise NotImplementedError(f"{type(self).__name__}.sample")

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sample (rsample); use sample() and log_prob")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__} has no entropy in closed form (nor in PyTorch)")

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self).__name__} has no mean in closed form (nor in PyTorch): average samples")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self).__name__} has no mode in closed form (nor in PyTorch)")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self).__name__} has no variance in closed form (nor in PyTorch): use samples")

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def support(self):
        """The set of values it gives probability to (a `constraints` constraint, PyTorch's):
        `biject_to(d.support)` maps unconstrained numbers into it."""
        raise NotImplementedError(f"{type(self).__name__}.support: not given (a family of one's own defines it)")

    def _parameters(self):
        """{name: tensor} of what the distribution is made of (its repr shows their shapes)."""
        return {}

    def expand(self, batch_shape):
        """This distribution with its batch_shape broadcast to `batch_shape` (PyTorch's `expand`):
        its tensors are broadcast views of the originals, so gradients reach the originals and no
        data is copied. The old batch_shape must broadcast to the new one."""
        batch_shape, name = _shape(batch_shape), type(self).__name__
        if type(self).__module__ != __name__:
            raise NotImplementedError(f"{name}.expand: minigrad expands its own families, whose parameters' shapes it knows; "
                                      f"define expand(batch_shape) for {name}")
        if not _broadcasts_to(tuple(self.batch_shape), batch_shape):
            raise ShapeError(f"{name}.expand: batch_shape {tuple(self.batch_shape)} cannot be expanded to {batch_shape} "
                             "(each dimension must be 1 or the new length; new dimensions go in front)")
        new = copy.copy(self)
        for key, value in vars(self).items():
            trailing = self._event_dims.get(key, 0)
            if isinstance(value, Tensor) and trailing is not None:
                setattr(new, key, value.broadcast_to(batch_shape + value.shape[value.ndim - trailing:]))
            elif isinstance(value, Distribution):
                setattr(new, key, value.expand(self._inner_batch_shape(key, value, batch_shape)))
        new.batch_shape = batch_shape
        return new

    def _inner_batch_shape(self, key, inner, batch_shape):
        """The batch_shape the distribution held in attribute `key` takes when this one's becomes
        `batch_shape`: the same, unless a wrapper reads some of its batch dimensions otherwise."""
        return batch_shape

    def _draw_shape(self, sample_shape):
        return _shape(sample_shape) + tuple(self.batch_shape) + tuple(self.event_shape)

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}: {v.shape}' for k, v in self._parameters().items())})"


class Normal(Distribution):
    """N(loc, scale²), elementwise over the broadcast shape of loc and scale."""

    support = constraints.real

    has_rsample = True

    def __init__(self, loc, scale):
        self.loc, self.scale = _together(loc, scale)
        _check("Normal", "scale must be positive", self.scale.data > 0, self.scale.data)
        self.batch_shape = np.broadcast_shapes(self.loc.shape, self.scale.shape)

    def _parameters(self):
        return {"loc": self.loc, "scale": self.scale}

    @property
    def mean(self):
        return self.loc.broadcast_to(self.batch_shape)

    @property
    def mode(self):
        return self.loc.broadcast_to(self.batch_shape)

    @property
    def variance(self):
        return (self.scale * self.scale).broadcast_to(self.batch_shape)

    def rsample(self, sample_shape=()):
        """loc + scale · ε with ε ~ N(0, 1): differentiable in loc and scale."""
        shape = self._draw_shape(sample_shape)
        eps = _standard_draws("Normal.rsample", "standard_normal", shape, np.result_type(self.loc.dtype, self.scale.dtype))
        return self.loc + self.scale * eps

    def log_prob(self, value):
        z = (_tensor(value) - self.loc) / self.scale
        return -0.5 * z * z - self.scale.log() - _HALF_LOG_2PI

    def cdf(self, value):
        """Φ((x − loc)/scale) as erfc(−z/√2)/2: PyTorch's (1 + erf(z/√2))/2 cancels in the lower tail."""
        return 0.5 * ops.erfc((self.loc - _tensor(value)) / (self.scale * math.sqrt(2.0)))

    def icdf(self, value):
        """The quantile loc + scale · Φ⁻¹(p): PyTorch's √2 erfinv(2p − 1), but without losing the
        digits of a probability near 0 in 2p − 1 (`minigrad.ndtri`)."""
        return self.loc + self.scale * ops.ndtri(_probabilities("Normal.icdf", value))

    def entropy(self):
        return (self.scale.log() + (0.5 + _HALF_LOG_2PI)).broadcast_to(self.batch_shape)


class Uniform(Distribution):
    """Uniform on [low, high), elementwise."""

    @property
    def support(self):
        return constraints.interval(self.low.data, self.high.data)

    has_rsample = True

    def __init__(self, low, high):
        self.low, self.high = _together(low, high)
        _check("Uniform", "low must be below high", self.low.data < self.high.data, self.high.data - self.low.data)
        self.batch_shape = np.broadcast_shapes(self.low.shape, self.high.shape)

    def _parameters(self):
        return {"low": self.low, "high": self.high}

    @property
    def mean(self):
        return ((self.low + self.high) * 0.5).broadcast_to(self.batch_shape)

    @property
    def mode(self):
        return Tensor(np.full(self.batch_shape, np.nan, dtype=self.low.dtype))  # every point of the interval: none

    @property
    def variance(self):
        width = self.high - self.low
        return (width * width / 12.0).broadcast_to(self.batch_shape)

    def rsample(self, sample_shape=()):
        u = _standard_draws("Uniform.rsample", "random", self._draw_shape(sample_shape), self.low.dtype)
        return self.low + (self.high - self.low) * u

    def log_prob(self, value):
        """−log(high − low) inside [low, high), −inf outside (as PyTorch without validation)."""
        value = _tensor(value)
        inside = (value.data >= self.low.data) & (value.data < self.high.data)
        density = -(self.high - self.low).log() + value * 0.0
        return where(inside, density, Tensor(np.array(-np.inf, dtype=density.dtype)))

    def cdf(self, value):
        return ((_tensor(value) - self.low) / (self.high - self.low)).clamp(0.0, 1.0)

    def icdf(self, value):
        return self.low + (self.high - self.low) * _probabilities("Uniform.icdf", value)

    def entropy(self):
        return (self.high - self.low).log().broadcast_to(self.batch_shape)


def _standard_draws(name, draw, shape, dtype):
    """Draws of numpy's standard distribution `draw` (a Generator method's name) in float64, then
    in `dtype`: a standard draw in float32 could round to the edge of its support."""
    return Tensor(np.asarray(getattr(generator_for(name), draw)(size=shape), dtype=np.float64).astype(dtype))


class _LocationScale(Distribution):
    """loc + scale · ε for ε of a fixed standard distribution, elementwise (Laplace, Cauchy)."""

    support = constraints.real

    has_rsample = True
    _standard = None  # the numpy Generator method drawing ε

    def __init__(self, loc, scale):
        name = type(self).__name__
        loc, scale = _together(loc, scale)
        self.loc, self.scale = loc, _positive(name, "scale", scale)
        self.batch_shape = np.broadcast_shapes(self.loc.shape, self.scale.shape)

    def _parameters(self):
        return {"loc": self.loc, "scale": self.scale}

    @property
    def mode(self):
        return self.loc.broadcast_to(self.batch_shape)

    def rsample(self, sample_shape=()):
        """loc + scale · ε: differentiable in loc and scale."""
        dtype = np.result_type(self.loc.dtype, self.scale.dtype)
        eps = _standard_draws(f"{type(self).__name__}.rsample", self._standard, self._draw_shape(sample_shape), dtype)
        return self.loc + self.scale * eps

    def _standardized(self, value):
        return (_tensor(value) - self.loc) / self.scale

    def _filled(self, number):
        dtype = np.result_type(self.loc.dtype, self.scale.dtype)
        return Tensor(np.full(self.batch_shape, number, dtype=dtype))


class Laplace(_LocationScale):
    """The Laplace distribution of location μ and scale b, elementwise: density e^(−|x − μ|/b) / (2b)."""

    _standard = "laplace"

    @property
    def mean(self):
        return self.loc.broadcast_to(self.batch_shape)

    @property
    def variance(self):
        return (2.0 * self.scale * self.scale).broadcast_to(self.batch_shape)

    @property
    def stddev(self):
        return (math.sqrt(2.0) * self.scale).broadcast_to(self.batch_shape)

    def log_prob(self, value):
        return -(2.0 * self.scale).log() - self._standardized(value).abs()

    def cdf(self, value):
        """e^z / 2 below the location and 1 − e^(−z) / 2 above: PyTorch's 0.5 − 0.5 sign(z) expm1(−|z|)
        cancels to an absolute error in the lower tail."""
        z = self._standardized(value)
        return _by_tail(z, z.data < 0, lambda z: 0.5 * z.exp(), lambda z: 1.0 - 0.5 * (-z).exp(), 0.0)

    def icdf(self, value):
        """loc + scale · log 2p below the median, loc − scale · log 2(1 − p) above: PyTorch's
        log1p(−2|p − 1/2|) loses a tail probability's digits in p − 1/2."""
        p = _probabilities("Laplace.icdf", value)
        z = _by_tail(p, p.data < 0.5, lambda p: (2.0 * p).log(), lambda p: -(2.0 * (1.0 - p)).log(), 0.5)
        return self.loc + self.scale * z

    def entropy(self):
        return ((2.0 * self.scale).log() + 1.0).broadcast_to(self.batch_shape)


class Cauchy(_LocationScale):
    """The Cauchy distribution of location x₀ and scale γ, elementwise: density
    1 / (πγ (1 + ((x − x₀)/γ)²)). It has no mean (NaN) and an infinite variance, as in PyTorch."""

    _standard = "standard_cauchy"

    @property
    def mean(self):
        return self._filled(np.nan)

    @property
    def variance(self):
        return self._filled(np.inf)

    def log_prob(self, value):
        z = self._standardized(value)
        return -math.log(math.pi) - self.scale.log() - (z * z).log1p()

    def cdf(self, value):
        """atan2(1, −z) / π: atan(z)/π + 1/2, as PyTorch writes it, cancels in the lower tail."""
        return ops.atan2(self._filled(1.0) + 0.0 * self._standardized(value), -self._standardized(value)) / math.pi

    def icdf(self, value):
        """loc + scale · tan(π(p − 1/2)), as −cot(πp) below the median and cot(π(1 − p)) above, where
        1 − p is exact: PyTorch's p − 1/2 loses a tail probability's digits."""
        p = _probabilities("Cauchy.icdf", value)
        z = _by_tail(p, p.data < 0.5, lambda p: -1.0 / (math.pi * p).tan(), lambda p: 1.0 / (math.pi * (1.0 - p)).tan(), 0.25)
        return self.loc + self.scale * z

    def entropy(self):
        return (self.scale.log() + math.log(4 * math.pi)).broadcast_to(self.batch_shape)


class Gumbel(_LocationScale):
    """The Gumbel distribution of location μ and scale β, elementwise (the maximum of many draws;
    −log(−log u) of a uniform u): CDF exp(−e^(−z)), z = (x − μ)/β, mean μ + γβ (γ Euler's constant)."""

    _standard = "gumbel"

    @property
    def mean(self):
        return (self.loc + _EULER * self.scale).broadcast_to(self.batch_shape)

    @property
    def variance(self):
        return (math.pi**2 / 6.0 * self.scale * self.scale).broadcast_to(self.batch_shape)

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6.0) * self.scale).broadcast_to(self.batch_shape)

    def log_prob(self, value):
        z = self._standardized(value)
        return -z - (-z).exp() - self.scale.log()

    def cdf(self, value):
        return (-(-self._standardized(value)).exp()).exp()

    def icdf(self, value):
        return self.loc - self.scale * (-_probabilities("Gumbel.icdf", value).log()).log()

    def entropy(self):
        return (self.scale.log() + (1.0 + _EULER)).broadcast_to(self.batch_shape)


class VonMises(Distribution):
    """The von Mises distribution of angles (a wind's direction, the phase of a cycle, a robot's
    heading): density e^(κ cos(x − μ)) / (2π I₀(κ)) of location μ and concentration κ > 0, the
    normal distribution of the circle (close to N(μ, 1/κ) for a large κ, uniform as κ → 0).
    loc and values are any real numbers, read as angles modulo 2π; draws lie in [−π, π). mean and
    variance are the circular ones, μ and 1 − I₁(κ)/I₀(κ). Draws by numpy's Best–Fisher sampler;
    no rsample, as in PyTorch."""

    support = constraints.real

    def __init__(self, loc, concentration):
        self.loc, self.concentration = _together(loc, concentration)
        _positive("VonMises", "concentration", self.concentration)
        self.batch_shape = np.broadcast_shapes(self.loc.shape, self.concentration.shape)

    def _parameters(self):
        return {"loc": self.loc, "concentration": self.concentration}

    @property
    def mean(self):
        return self.loc.broadcast_to(self.batch_shape)

    @property
    def mode(self):
        return self.loc.broadcast_to(self.batch_shape)

    def _resultant_length(self):
        """I₁(κ)/I₀(κ), the mean of cos(x − μ), from the scaled functions: the ratio without overflow."""
        return i1e(self.concentration) / i0e(self.concentration)

    @property
    def variance(self):
        return (1.0 - self._resultant_length()).broadcast_to(self.batch_shape)

    def _log_normalizer(self):
        """log(2π I₀(κ)) − κ = log(2π e^(−κ) I₀(κ)), with the κ kept out: it cancels in log_prob."""
        return (2.0 * math.pi * i0e(self.concentration)).log()

    def sample(self, sample_shape=()):
        shape = self._draw_shape(sample_shape)
        loc, concentration = (np.broadcast_to(p.data, shape).astype(np.float64) for p in (self.loc, self.concentration))
        draws = generator_for("VonMises.sample").vonmises(loc, concentration)
        return Tensor(np.where(draws >= math.pi, -math.pi, draws).astype(self.loc.dtype))  # [−π, π], π as −π

    def log_prob(self, value):
        """κ (cos(x − μ) − 1) − log(2π e^(−κ) I₀(κ)), the cosine's excess written −2 sin²((x − μ)/2):
        exact where x is near μ and κ is large, where κ cos(x − μ) − log I₀(κ) cancels."""
        half_angle = ((_tensor(value) - self.loc) * 0.5).sin()
        return -2.0 * self.concentration * half_angle * half_angle - self._log_normalizer()

    def entropy(self):
        """log(2π I₀(κ)) − κ I₁(κ)/I₀(κ), which PyTorch lacks."""
        return (self._log_normalizer() + self.concentration * (1.0 - self._resultant_length())).broadcast_to(self.batch_shape)


class Exponential(Distribution):
    """The exponential distribution of rate λ, elementwise: density λ e^(−λx) for x ≥ 0, mean 1/λ."""

    support = constraints.nonnegative

    has_rsample = True

    def __init__(self, rate):
        self.rate = _positive("Exponential", "rate", _tensor(rate))
        self.batch_shape = self.rate.shape

    def _parameters(self):
        return {"rate": self.rate}

    @property
    def mean(self):
        return 1.0 / self.rate

    @property
    def mode(self):
        return Tensor(np.zeros(self.batch_shape, dtype=self.rate.dtype))

    @property
    def variance(self):
        return 1.0 / (self.rate * self.rate)

    def rsample(self, sample_shape=()):
        """E / λ with E ~ Exp(1): differentiable in λ."""
        return _standard_draws("Exponential.rsample", "standard_exponential", self._draw_shape(sample_shape), self.rate.dtype) / self.rate

    def log_prob(self, value):
        value = _tensor(value)
        _check("Exponential.log_prob", "values must be non-negative", value.data >= 0, value.data)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        value = _tensor(value)
        _check("Exponential.cdf", "values must be non-negative", value.data >= 0, value.data)
        return -(-self.rate * value).expm1()

    def icdf(self, value):
        return -(-_probabilities("Exponential.icdf", value)).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()


class MultivariateNormal(Distribution):
    """N(loc, Σ) over vectors of loc's last dimension, given one of `covariance_matrix`,
    `scale_tril` (L with Σ = L Lᵀ) or `precision_matrix` (Σ⁻¹): the density through the Cholesky
    factor, as PyTorch computes it."""

    support = constraints.real_vector

    _event_dims = {"loc": 1, "scale_tril": 2}
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None):
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise ValueError("MultivariateNormal: give exactly one of covariance_matrix, precision_matrix and scale_tril")
        self.loc = _tensor(loc)
        if self.loc.ndim < 1:
            raise ShapeError(f"MultivariateNormal: loc must be a vector (or a batch of them), got shape {self.loc.shape}")
        if scale_tril is not None:
            self.scale_tril = _tensor(scale_tril)
            _check("MultivariateNormal", "scale_tril must have a positive diagonal", np.diagonal(self.scale_tril.data, axis1=-2, axis2=-1) > 0,
                   np.diagonal(self.scale_tril.data, axis1=-2, axis2=-1))
        elif covariance_matrix is not None:
            self.scale_tril = linalg.cholesky(_tensor(covariance_matrix))
        else:
            precision = _tensor(precision_matrix)  # symmetrized, so that its gradient is symmetric, as PyTorch's
            self.scale_tril = linalg.cholesky(linalg.inv((precision + precision.mT) * 0.5))
        k = self.loc.shape[-1]
        if self.scale_tril.shape[-2:] != (k, k):
            raise ShapeError(f"MultivariateNormal: loc of shape {self.loc.shape} needs ({k}, {k}) matrices, got {self.scale_tril.shape}")
        self.batch_shape = np.broadcast_shapes(self.loc.shape[:-1], self.scale_tril.shape[:-2])
        self.event_shape = (k,)

    def _parameters(self):
        return {"loc": self.loc, "scale_tril": self.scale_tril}

    @property
    def covariance_matrix(self):
        return self.scale_tril @ self.scale_tril.mT

    @property
    def mean(self):
        return self.loc.broadcast_to(self.batch_shape + self.event_shape)

    @property
    def mode(self):
        return self.loc.broadcast_to(self.batch_shape + self.event_shape)

    @property
    def variance(self):
        return (self.scale_tril * self.scale_tril).sum(axis=-1).broadcast_to(self.batch_shape + self.event_shape)

    def rsample(self, sample_shape=()):
        """loc + L ε with ε ~ N(0, I)."""
        eps = _standard_draws("MultivariateNormal.rsample", "standard_normal", self._draw_shape(sample_shape), self.loc.dtype)
        return self.loc + (self.scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        """−½ |L⁻¹(x − μ)|² − Σ log Lᵢᵢ − (k/2) log 2π."""
        diff = _tensor(value) - self.loc
        shape = np.broadcast_shapes(diff.shape[:-1], self.scale_tril.shape[:-2])
        low = self.scale_tril.broadcast_to(shape + self.scale_tril.shape[-2:])
        z = linalg.solve_triangular(low, diff.broadcast_to(shape + diff.shape[-1:]).unsqueeze(-1), upper=False).squeeze(-1)
        return -0.5 * (z * z).sum(axis=-1) - _log_diagonal_sum(self.scale_tril) - self.event_shape[0] * _HALF_LOG_2PI

    def entropy(self):
        k = self.event_shape[0]
        return (_log_diagonal_sum(self.scale_tril) + k * (0.5 + _HALF_LOG_2PI)).broadcast_to(self.batch_shape)


class LowRankMultivariateNormal(Distribution):
    """N(loc, W Wᵀ + D) for W = `cov_factor` (k × r, the rank r ≪ k) and D = diag(`cov_diag`): a
    covariance of low rank plus a diagonal, as in factor analysis, probabilistic PCA and SWAG.
    `log_prob` and `entropy` cost O(k r²), not the dense O(k³): with v = D^(−½) W and the r × r
    capacitance matrix C = I + vᵀ v = A Aᵀ, Woodbury's identity gives the Mahalanobis distance
    |z|² − |A⁻¹ vᵀ z|² of z = D^(−½)(x − μ), and the matrix determinant lemma log det Σ =
    2 Σ log Aᵢᵢ + Σ log Dᵢ (PyTorch's computation)."""

    support = constraints.real_vector

    _event_dims = {"loc": 1, "cov_factor": 2, "cov_diag": 1}
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag):
        self.loc, self.cov_factor, self.cov_diag = _together(loc, cov_factor, cov_diag)
        if self.loc.ndim < 1 or self.cov_factor.ndim < 2 or self.cov_diag.ndim < 1:
            raise ShapeError(f"LowRankMultivariateNormal: loc must be a vector (k,), cov_factor a matrix (k, rank) and cov_diag "
                             f"a vector (k,), or batches of them; got shapes {self.loc.shape}, {self.cov_factor.shape}, {self.cov_diag.shape}")
        k = self.loc.shape[-1]
        if self.cov_factor.shape[-2] != k or self.cov_diag.shape[-1] != k:
            raise ShapeError(f"LowRankMultivariateNormal: loc of shape {self.loc.shape} needs a cov_factor of shape ({k}, rank) "
                             f"and a cov_diag of shape ({k},), got {self.cov_factor.shape} and {self.cov_diag.shape}")
        _positive("LowRankMultivariateNormal", "cov_diag", self.cov_diag)
        self.batch_shape = np.broadcast_shapes(self.loc.shape[:-1], self.cov_factor.shape[:-2], self.cov_diag.shape[:-1])
        self.event_shape = (k,)

    def _parameters(self):
        return {"loc": self.loc, "cov_factor": self.cov_factor, "cov_diag": self.cov_diag}

    def _whitened(self):
        """(v = D^(−½) W, A with A Aᵀ = I + vᵀ v), v broadcast to the batch."""
        k, rank = self.cov_factor.shape[-2:]
        v = (self.cov_factor / self.cov_diag.sqrt().unsqueeze(-1)).broadcast_to(self.batch_shape + (k, rank))
        return v, linalg.cholesky(v.mT @ v + Tensor(np.eye(rank, dtype=v.dtype)))

    def _half_log_det(self):
        """½ log det Σ = Σ log Aᵢᵢ + ½ Σ log Dᵢ (the matrix determinant lemma)."""
        return _log_diagonal_sum(self._whitened()[1]) + 0.5 * self.cov_diag.log().sum(axis=-1)

    @property
    def covariance_matrix(self):
        k = self.event_shape[0]
        return (self.cov_factor @ self.cov_factor.mT + self.cov_diag.unsqueeze(-1) * Tensor(np.eye(k, dtype=self.cov_diag.dtype))
                ).broadcast_to(self.batch_shape + (k, k))

    @property
    def precision_matrix(self):
        """Σ⁻¹ = D^(−½) (I − uᵀ u) D^(−½) with u = A⁻¹ vᵀ (Woodbury's identity)."""
        v, low = self._whitened()
        k = self.event_shape[0]
        u = linalg.solve_triangular(low, v.mT, upper=False)
        inverse_root = (1.0 / self.cov_diag.sqrt()).broadcast_to(self.batch_shape + (k,))
        return (Tensor(np.eye(k, dtype=v.dtype)) - u.mT @ u) * inverse_root.unsqueeze(-1) * inverse_root.unsqueeze(-2)

    @property
    def scale_tril(self):
        """The Cholesky factor of Σ: D^(½) times that of I + v vᵀ (PyTorch's, better conditioned
        than Σ's own)."""
        v, _ = self._whitened()
        k = self.event_shape[0]
        return self.cov_diag.sqrt().broadcast_to(self.batch_shape + (k,)).unsqueeze(-1) * linalg.cholesky(
            v @ v.mT + Tensor(np.eye(k, dtype=v.dtype)))

    @property
    def mean(self):
        return self.loc.broadcast_to(self.batch_shape + self.event_shape)

    @property
    def mode(self):
        return self.loc.broadcast_to(self.batch_shape + self.event_shape)

    @property
    def variance(self):
        return ((self.cov_factor * self.cov_factor).sum(axis=-1) + self.cov_diag).broadcast_to(self.batch_shape + self.event_shape)

    def rsample(self, sample_shape=()):
        """loc + W ε + D^(½) η for ε ~ N(0, I_r), η ~ N(0, I_k): r + k draws, no k × k matrix."""
        shape, dtype = self._draw_shape(sample_shape), self.loc.dtype
        eps = _standard_draws("LowRankMultivariateNormal.rsample", "standard_normal", shape[:-1] + self.cov_factor.shape[-1:], dtype)
        eta = _standard_draws("LowRankMultivariateNormal.rsample", "standard_normal", shape, dtype)
        return self.loc + (self.cov_factor @ eps.unsqueeze(-1)).squeeze(-1) + self.cov_diag.sqrt() * eta

    def log_prob(self, value):
        v, low = self._whitened()
        z = (_tensor(value) - self.loc) / self.cov_diag.sqrt()
        shape = np.broadcast_shapes(z.shape[:-1], tuple(self.batch_shape))
        rank = v.shape[-1]
        projected = v.broadcast_to(shape + v.shape[-2:]).mT @ z.broadcast_to(shape + z.shape[-1:]).unsqueeze(-1)
        w = linalg.solve_triangular(low.broadcast_to(shape + (rank, rank)), projected, upper=False)
        mahalanobis = (z * z).sum(axis=-1) - (w * w).sum(axis=(-2, -1))
        return -0.5 * mahalanobis - self._half_log_det() - self.event_shape[0] * _HALF_LOG_2PI

    def entropy(self):
        k = self.event_shape[0]
        return (self._half_log_det() + k * (0.5 + _HALF_LOG_2PI)).broadcast_to(self.batch_shape)


# The Gamma family. Its draws come from numpy's Gamma sampler, which no smooth function of fixed
# noise reproduces; `rsample` differentiates them by implicit reparameterization (Figurnov, Mohamed
# and Mnih 2018; `ops.standard_gamma`): each draw z moves with its concentration α along its fixed
# quantile, dz/dα = −(∂P/∂α) / (∂P/∂z) for the regularized incomplete gamma function P, which
# minigrad computes exactly where PyTorch fits an approximation. A Beta or Dirichlet draw is
# normalised Gamma draws, differentiated through the normalisation. (PyTorch differentiates those
# two through each coordinate's Beta marginal instead: another estimator, draw by draw, of the same
# expected gradient.) As in PyTorch, the gradient of these draws has first order only.


def _positive(name, what, tensor):
    _check(name, f"{what} must be positive", tensor.data > 0, tensor.data)
    return tensor


def _standard_gamma(name, concentration, shape):
    """Gamma(concentration, 1) draws of `shape` in its dtype, differentiable in the concentration.

    A draw below the dtype's smallest normal number is raised to it, as PyTorch does: a small
    concentration (0.01) draws exact zeros otherwise, outside the support (`log_prob` refuses them)
    and 0 / 0 in a Beta draw.
    """
    draws = np.asarray(generator_for(name).standard_gamma(np.broadcast_to(concentration.data, shape)), dtype=concentration.dtype)
    np.maximum(draws, np.finfo(draws.dtype).tiny, out=draws)
    return ops.standard_gamma(concentration, Tensor(draws))


class Gamma(Distribution):
    """The gamma distribution of concentration α and rate β, elementwise: density
    β^α x^(α−1) e^(−βx) / Γ(α) for x > 0, mean α/β. `rsample` is differentiable in both (in α by
    implicit reparameterization, first order only), and so is its `cdf`."""

    support = constraints.nonnegative

    has_rsample = True

    def __init__(self, concentration, rate):
        concentration, rate = _together(concentration, rate)
        self.concentration, self.rate = _positive("Gamma", "concentration", concentration), _positive("Gamma", "rate", rate)
        self.batch_shape = np.broadcast_shapes(self.concentration.shape, self.rate.shape)

    def _parameters(self):
        return {"concentration": self.concentration, "rate": self.rate}

    @property
    def mean(self):
        return (self.concentration / self.rate).broadcast_to(self.batch_shape)

    @property
    def mode(self):
        return ((self.concentration - 1.0) / self.rate).clamp(0.0).broadcast_to(self.batch_shape)

    @property
    def variance(self):
        return (self.concentration / (self.rate * self.rate)).broadcast_to(self.batch_shape)

    def rsample(self, sample_shape=()):
        return _standard_gamma("Gamma.rsample", self.concentration, self._draw_shape(sample_shape)) / self.rate

    def log_prob(self, value):
        value = _positive("Gamma.log_prob", "values", _tensor(value))
        a, b = self.concentration, self.rate
        return a * b.log() + (a - 1.0) * value.log() - b * value - lgamma(a)

    def cdf(self, value):
        """P(α, βx), the regularized incomplete gamma function (`mg.gammainc`): differentiable in x
        and β to every order, in α to first order (PyTorch's has no derivative in α)."""
        value = _tensor(value)
        _check(f"{type(self).__name__}.cdf", "values must be non-negative", value.data >= 0, value.data)
        return ops.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        return (a - self.rate.log() + lgamma(a) + (1.0 - a) * digamma(a)).broadcast_to(self.batch_shape)


class Dirichlet(Distribution):
    """The Dirichlet distribution of concentration α over the probability vectors of α's last
    dimension (K entries, each ≥ 0, summing to 1): density Γ(Σα) / Π Γ(αᵢ) Π xᵢ^(αᵢ−1).
    `rsample` normalises Gamma(αᵢ, 1) draws, the standard construction, differentiable as `Gamma`'s."""

    support = constraints.simplex

    _event_dims = {"concentration": 1}
    has_rsample = True

    def __init__(self, concentration):
        self.concentration = _positive("Dirichlet", "concentration", _tensor(concentration))
        if self.concentration.ndim < 1 or self.concentration.shape[-1] < 2:
            raise ShapeError(f"Dirichlet: concentration needs a last dimension of 2 or more categories, got shape {self.concentration.shape}")
        self.batch_shape, self.event_shape = self.concentration.shape[:-1], self.concentration.shape[-1:]

    def _parameters(self):
        return {"concentration": self.concentration}

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(axis=-1, keepdims=True)

    @property
    def mode(self):
        """(α − 1)₊ / Σ (α − 1)₊; NaN where every α is at most 1 (the density has no single peak)."""
        excess = (self.concentration - 1.0).clamp(0.0)
        total = excess.sum(axis=-1, keepdims=True)
        none = np.broadcast_to((total.data == 0), excess.shape)
        return where(none, np.nan, excess / where(none, 1.0, total))

    @property
    def variance(self):
        total = self.concentration.sum(axis=-1, keepdims=True)
        return self.concentration * (total - self.concentration) / (total * total * (total + 1.0))

    def rsample(self, sample_shape=()):
        draws = _standard_gamma("Dirichlet.rsample", self.concentration, self._draw_shape(sample_shape))
        return draws / draws.sum(axis=-1, keepdims=True)

    def log_prob(self, value):
        value = _tensor(value)
        _check("Dirichlet.log_prob", "values must be probability vectors (entries ≥ 0 summing to 1)",
               (value.data >= 0).all() and np.allclose(value.data.sum(-1), 1.0, rtol=0, atol=1e-6), value.data)
        a = self.concentration
        return _times_log(a - 1.0, value).sum(axis=-1) + lgamma(a.sum(axis=-1)) - lgamma(a).sum(axis=-1)

    def entropy(self):
        a = self.concentration
        total, k = a.sum(axis=-1), a.shape[-1]
        return lgamma(a).sum(axis=-1) - lgamma(total) + (total - k) * digamma(total) - ((a - 1.0) * digamma(a)).sum(axis=-1)


class Beta(Distribution):
    """The beta distribution of concentration1 α and concentration0 β on [0, 1], elementwise:
    density x^(α−1) (1−x)^(β−1) / B(α, β), mean α / (α + β); the Dirichlet of two categories.
    `rsample` is X / (X + Y) for X ~ Gamma(α, 1), Y ~ Gamma(β, 1), differentiable as `Gamma`'s."""

    support = constraints.unit_interval

    has_rsample = True

    def __init__(self, concentration1, concentration0):
        concentration1, concentration0 = _together(concentration1, concentration0)
        self.concentration1 = _positive("Beta", "concentration1", concentration1)
        self.concentration0 = _positive("Beta", "concentration0", concentration0)
        self.batch_shape = np.broadcast_shapes(self.concentration1.shape, self.concentration0.shape)

    def _parameters(self):
        return {"concentration1": self.concentration1, "concentration0": self.concentration0}

    @property
    def mean(self):
        return (self.concentration1 / (self.concentration1 + self.concentration0)).broadcast_to(self.batch_shape)

    @property
    def mode(self):
        return Dirichlet(stack([self.concentration1 + 0.0 * self.concentration0, self.concentration0 + 0.0 * self.concentration1], axis=-1)).mode[..., 0]

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (a * b / (total * total * (total + 1.0))).broadcast_to(self.batch_shape)

    def rsample(self, sample_shape=()):
        shape = self._draw_shape(sample_shape)
        x, y = _standard_gamma("Beta.rsample", self.concentration1, shape), _standard_gamma("Beta.rsample", self.concentration0, shape)
        return x / (x + y)

    def log_prob(self, value):
        value = _tensor(value)
        _check("Beta.log_prob", "values must lie in [0, 1]", (value.data >= 0) & (value.data <= 1), value.data)
        a, b = self.concentration1, self.concentration0
        return _times_log(a - 1.0, value) + _times_log(b - 1.0, -value, log1p=True) - _log_beta(a, b)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (_log_beta(a, b) - (a - 1.0) * digamma(a) - (b - 1.0) * digamma(b) + (total - 2.0) * digamma(total)).broadcast_to(self.batch_shape)


class Chi2(Gamma):
    """The chi-squared distribution of `df` degrees of freedom, elementwise: Gamma(df/2, rate 1/2),
    a sum of df squared standard normals (as PyTorch's, a Gamma)."""

    def __init__(self, df):
        df = _positive("Chi2", "df", _tensor(df))
        super().__init__(0.5 * df, Tensor(np.array(0.5, dtype=df.dtype)))

    @property
    def df(self):
        return self.concentration * 2.0

    def _parameters(self):
        return {"df": self.df}


class StudentT(Distribution):
    """Student's t distribution of `df` degrees of freedom, location and scale, elementwise:
    loc + scale · X / √(V / df) for X ~ N(0, 1), V ~ χ²(df). The mean is NaN for df ≤ 1, the
    variance ∞ for 1 < df ≤ 2 and NaN for df ≤ 1, as in PyTorch. `rsample` is differentiable in all
    three (in df through the χ² draw's Gamma: first order only)."""

    support = constraints.real

    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0):
        df, loc, scale = _together(df, loc, scale)
        self.df, self.loc, self.scale = _positive("StudentT", "df", df), loc, _positive("StudentT", "scale", scale)
        self.batch_shape = np.broadcast_shapes(self.df.shape, self.loc.shape, self.scale.shape)

    def _parameters(self):
        return {"df": self.df, "loc": self.loc, "scale": self.scale}

    @property
    def mean(self):
        """loc where df > 1, NaN elsewhere."""
        loc = self.loc.broadcast_to(self.batch_shape)
        return where(np.broadcast_to(self.df.data > 1, self.batch_shape), loc, Tensor(np.asarray(np.nan, dtype=loc.dtype)))

    @property
    def mode(self):
        return self.loc.broadcast_to(self.batch_shape)

    @property
    def variance(self):
        """scale² df / (df − 2) where df > 2; ∞ where 1 < df ≤ 2, NaN where df ≤ 1."""
        df = self.df.broadcast_to(self.batch_shape)
        finite = df.data > 2
        # df / (df − 2) on a df moved to 3 where it is not finite: no ∞ of the branch not taken
        # reaches the gradient (where's rule would multiply it by 0, giving NaN)
        safe = where(finite, df, Tensor(np.asarray(3.0, dtype=df.dtype)))
        value = (self.scale * self.scale * safe / (safe - 2.0)).broadcast_to(self.batch_shape)
        return where(finite, value, Tensor(np.where(df.data > 1, np.inf, np.nan).astype(value.dtype)))

    def rsample(self, sample_shape=()):
        shape = self._draw_shape(sample_shape)
        dtype = np.result_type(self.df.dtype, self.loc.dtype, self.scale.dtype)
        x = _standard_draws("StudentT.rsample", "standard_normal", shape, dtype)
        chi2 = 2.0 * _standard_gamma("StudentT.rsample", 0.5 * self.df, shape)
        return self.loc + self.scale * x * (chi2 / self.df).rsqrt()

    def log_prob(self, value):
        z = (_tensor(value) - self.loc) / self.scale
        normaliser = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                      + lgamma(0.5 * self.df) - lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (z * z / self.df).log1p() - normaliser

    def entropy(self):
        half, half_next = 0.5 * self.df, 0.5 * (self.df + 1.0)
        log_beta = lgamma(half) + math.lgamma(0.5) - lgamma(half_next)
        return (self.scale.log() + half_next * (digamma(half_next) - digamma(half)) + 0.5 * self.df.log() + log_beta).broadcast_to(self.batch_shape)


class FisherSnedecor(Distribution):
    """The F distribution of df1 and df2 degrees of freedom, elementwise: (V₁/df1) / (V₂/df2) for
    independent V₁ ~ χ²(df1), V₂ ~ χ²(df2), the law of a ratio of variance estimates (the F test,
    ANOVA). Density x^(df1/2 − 1) (df1/df2)^(df1/2) (1 + df1 x/df2)^(−(df1 + df2)/2) / B(df1/2, df2/2)
    for x > 0. The mean is NaN for df2 ≤ 2 and the variance NaN for df2 ≤ 4, as in PyTorch (the
    variance is in truth ∞ for 2 < df2 ≤ 4, the mean ∞ for df2 ≤ 2); the mode is 0 for df1 ≤ 2, the
    density's supremum at 0 (PyTorch's: NaN), as Gamma's and Weibull's. `rsample` is a ratio of
    Gamma draws (PyTorch's), differentiable in both by implicit reparameterization (first order
    only). No entropy, as in PyTorch."""

    support = constraints.positive

    has_rsample = True

    def __init__(self, df1, df2):
        df1, df2 = _together(df1, df2)
        self.df1, self.df2 = _positive("FisherSnedecor", "df1", df1), _positive("FisherSnedecor", "df2", df2)
        self.batch_shape = np.broadcast_shapes(self.df1.shape, self.df2.shape)

    def _parameters(self):
        return {"df1": self.df1, "df2": self.df2}

    def _where_above(self, df, edge, value):
        """value (a function of df, given df moved to edge + 1 where df ≤ edge, so that no ∞ of the
        branch not taken reaches a gradient) where df > edge, NaN elsewhere."""
        above = df.data > edge
        result = value(where(above, df, edge + 1.0)).broadcast_to(self.batch_shape)
        return where(np.broadcast_to(above, self.batch_shape), result, np.nan)

    @property
    def mean(self):
        """df2 / (df2 − 2) where df2 > 2, NaN elsewhere (PyTorch's)."""
        return self._where_above(self.df2, 2.0, lambda d2: d2 / (d2 - 2.0))

    @property
    def mode(self):
        """(df1 − 2)/df1 · df2/(df2 + 2) where df1 > 2, 0 elsewhere."""
        above = np.broadcast_to(self.df1.data > 2, self.batch_shape)
        d1 = where(self.df1.data > 2, self.df1, 3.0)
        peak = ((d1 - 2.0) / d1 * self.df2 / (self.df2 + 2.0)).broadcast_to(self.batch_shape)
        return where(above, peak, 0.0)

    @property
    def variance(self):
        """2 df2² (df1 + df2 − 2) / (df1 (df2 − 2)² (df2 − 4)) where df2 > 4, NaN elsewhere (PyTorch's)."""
        def of(d2):
            return 2.0 * d2 * d2 * (self.df1 + d2 - 2.0) / (self.df1 * (d2 - 2.0) * (d2 - 2.0) * (d2 - 4.0))

        return self._where_above(self.df2, 4.0, of)

    def rsample(self, sample_shape=()):
        """(Z₁/df1) / (Z₂/df2) for Z ~ Gamma(df/2, 1) (each 2Z a χ² draw), kept at least the smallest
        normal number, as PyTorch's."""
        shape = self._draw_shape(sample_shape)
        z1 = _standard_gamma("FisherSnedecor.rsample", 0.5 * self.df1, shape)
        z2 = _standard_gamma("FisherSnedecor.rsample", 0.5 * self.df2, shape)
        return (z1 * self.df2 / (z2 * self.df1)).clamp(float(np.finfo(z1.dtype).tiny))

    def log_prob(self, value):
        """(df1/2) log(df1/df2) + (df1/2 − 1) log x − ((df1 + df2)/2) log1p(df1 x/df2) − log B(df1/2, df2/2)."""
        value = _positive("FisherSnedecor.log_prob", "values", _tensor(value))
        half1, half2, ratio = 0.5 * self.df1, 0.5 * self.df2, self.df1 / self.df2
        return half1 * ratio.log() + (half1 - 1.0) * value.log() - (half1 + half2) * (ratio * value).log1p() - _log_beta(half1, half2)


def _times_log(c, v, log1p=False):
    """c · log v (or c · log(1 + v)), 0 where c is 0 at v's pole, as PyTorch's xlogy: the density of
    a concentration of 1 at the edge of the support. (The pole is moved, not masked after the
    fact, so that no 0 · ∞ reaches a gradient.)"""
    pole = (c.data == 0) & (v.data == (-1.0 if log1p else 0.0))
    if pole.any():
        v = where(pole, Tensor(np.zeros((), dtype=v.dtype) if log1p else np.ones((), dtype=v.dtype)), v)
    return c * (v.log1p() if log1p else v.log())


def _log_beta(a, b):
    """log B(a, b) = log Γ(a) + log Γ(b) − log Γ(a + b)."""
    return lgamma(a) + lgamma(b) - lgamma(a + b)


def _log_diagonal_sum(low):
    """Σ log Lᵢᵢ = ½ log det Σ, over the last two axes."""
    return diagonal(low, 0, -2, -1).log().sum(axis=-1)


def _class_values(name, value, classes):
    value = np.asarray(value.data if isinstance(value, Tensor) else value)
    _check(name, f"values must be class indices in [0, {classes})", (value.dtype.kind in "iu" or np.all(value == np.round(value)))
           and np.all((value >= 0) & (value < classes)), value)
    return value.astype(np.int64)


class Categorical(Distribution):
    """A distribution over the classes 0 … C−1 of the last dimension, from `probs` (normalised to
    sum to 1, as PyTorch does) or `logits` (unnormalised log-probabilities)."""

    @property
    def support(self):
        return constraints.integer_interval(0, self.probs.shape[-1] - 1)

    _event_dims = {"probs": 1, "logits": 1}

    def __init__(self, probs=None, logits=None):
        if (probs is None) == (logits is None):
            raise ValueError("Categorical: give exactly one of probs and logits")
        if probs is not None:
            probs = _tensor(probs)
            _check("Categorical", "probs must be non-negative with a positive sum", (probs.data >= 0).all() and (probs.data.sum(-1) > 0).all(), probs.data)
            self.probs = probs / probs.sum(axis=-1, keepdims=True)
            # log of probabilities clamped to [ε, 1 − ε], as PyTorch's probs_to_logits: a class of
            # probability 0 has the finite log-probability log ε, and no 0 · ∞ reaches a gradient
            eps = np.finfo(self.probs.dtype).eps
            self.logits = self.probs.clip(eps, 1 - eps).log()
        else:
            logits = _tensor(logits)
            self.logits = logits - logsumexp(logits, axis=-1, keepdims=True)
            self.probs = self.logits.exp()
        if self.probs.ndim < 1:
            raise ShapeError(f"Categorical: needs a last dimension of classes, got shape {self.probs.shape}")
        self.batch_shape = self.probs.shape[:-1]

    def _parameters(self):
        return {"probs": self.probs}

    @property
    def mean(self):
        """Undefined for classes, NaN as in PyTorch."""
        return Tensor(np.full(self.batch_shape, np.nan, dtype=self.probs.dtype))

    @property
    def mode(self):
        return Tensor(self.probs.data.argmax(axis=-1))

    variance = mean  # undefined as well, and NaN (so is `stddev`), as in PyTorch

    def sample(self, sample_shape=()):
        """Class indices (int64) of shape sample_shape + batch_shape, by the inverse of the CDF."""
        shape = _shape(sample_shape) + tuple(self.batch_shape)
        cdf = np.cumsum(self.probs.data, axis=-1)
        u = generator_for("Categorical.sample").random(shape)[..., None] * cdf[..., -1:]
        return Tensor((u >= cdf).sum(axis=-1).clip(0, cdf.shape[-1] - 1).astype(np.int64))

    def log_prob(self, value):
        """log p(value) for class indices `value`, broadcast against batch_shape."""
        value = _class_values("Categorical.log_prob", value, self.probs.shape[-1])
        shape = np.broadcast_shapes(value.shape, tuple(self.batch_shape))
        logits = self.logits.broadcast_to(shape + self.probs.shape[-1:])
        return gather(logits, -1, np.broadcast_to(value, shape)[..., None]).squeeze(-1)

    def entropy(self):
        """−Σ p log p (a class of probability 0 adds 0: its log is finite)."""
        return -(self.probs * self.logits).sum(axis=-1)


class _BernoulliMarginals(Distribution):
    """Entries that are 1 with probability `probs`, else 0 (Bernoulli's, a one-hot vector's): their
    parameters and moments."""

    def _parameters(self):
        return {"probs": self.probs}

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1.0 - self.probs)


class OneHotCategorical(_BernoulliMarginals):
    """`Categorical` with its classes as one-hot vectors of the last dimension: draws are float
    vectors holding a single 1, and `log_prob` takes them (PyTorch's `OneHotCategorical`)."""

    support = constraints.one_hot

    _event_dims = Categorical._event_dims

    def __init__(self, probs=None, logits=None):
        self._categorical = Categorical(probs=probs, logits=logits)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        self.batch_shape, self.event_shape = self._categorical.batch_shape, self.probs.shape[-1:]

    @property
    def mode(self):
        return Tensor(np.eye(self.event_shape[0], dtype=self.probs.dtype)[self.probs.data.argmax(axis=-1)])

    def sample(self, sample_shape=()):
        classes = self._categorical.sample(sample_shape).data
        return Tensor(np.eye(self.event_shape[0], dtype=self.probs.dtype)[classes])

    def log_prob(self, value):
        value = np.asarray(_tensor(value, self.probs.dtype).data)
        _check("OneHotCategorical.log_prob", "values must be one-hot vectors (one 1, the rest 0)",
               ((value == 0) | (value == 1)).all() and (value.sum(-1) == 1).all(), value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """`OneHotCategorical` with the straight-through estimator as its `rsample` (Bengio, Léonard
    and Courville, 2013; PyTorch's): the one-hot draw itself, plus probs − probs.detach(), which is
    0 but has the gradient of the identity in probs. A network downstream sees exact one-hot
    vectors (a discrete latent code, a hard attention choice) and trains its logits as though the
    draw were its expectation, probs: biased for a nonlinear loss, with no variance of its own."""

    has_rsample = True

    def rsample(self, sample_shape=()):
        return self.sample(sample_shape) + (self.probs - self.probs.detach())


class Bernoulli(_BernoulliMarginals):
    """1 with probability `probs` (or sigmoid(`logits`)), else 0, elementwise."""

    support = constraints.boolean

    def __init__(self, probs=None, logits=None):
        if (probs is None) == (logits is None):
            raise ValueError("Bernoulli: give exactly one of probs and logits")
        if probs is not None:
            self.probs = _tensor(probs)
            _check("Bernoulli", "probs must lie in [0, 1]", (self.probs.data >= 0) & (self.probs.data <= 1), self.probs.data)
            eps = np.finfo(self.probs.dtype).eps
            clamped = self.probs.clip(eps, 1 - eps)
            self.logits = clamped.log() - (1.0 - clamped).log()
        else:
            self.logits = _tensor(logits)
            self.probs = self.logits.sigmoid()
        self.batch_shape = self.probs.shape

    @property
    def mode(self):
        """1 where p > 1/2, 0 below, NaN at 1/2 (both are), as PyTorch's."""
        p = self.probs.data
        return Tensor(np.where(p == 0.5, np.nan, (p > 0.5).astype(p.dtype)))

    def sample(self, sample_shape=()):
        shape = _shape(sample_shape) + tuple(self.batch_shape)
        return Tensor((generator_for("Bernoulli.sample").random(shape) < self.probs.data).astype(self.probs.dtype))

    def log_prob(self, value):
        """value · logits − softplus(logits): −binary cross-entropy with logits, without overflow."""
        value = _tensor(value, self.logits.dtype)
        _check("Bernoulli.log_prob", "values must be 0 or 1", (value.data == 0) | (value.data == 1), value.data)
        return value * self.logits - softplus(self.logits)

    def entropy(self):
        return softplus(self.logits) - self.probs * self.logits


class Poisson(Distribution):
    """Counts 0, 1, 2, ... of mean `rate` λ, elementwise: P(k) = λᵏ e^(−λ) / k!. Draws are float
    counts in the rate's dtype, as PyTorch's; `sample` only (counts have no pathwise gradient)."""

    support = constraints.nonnegative_integer

    def __init__(self, rate):
        self.rate = _tensor(rate)
        _check("Poisson", "rate must be non-negative", self.rate.data >= 0, self.rate.data)
        self.batch_shape = self.rate.shape

    def _parameters(self):
        return {"rate": self.rate}

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return Tensor(np.floor(self.rate.data))

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        counts = generator_for("Poisson.sample").poisson(np.broadcast_to(self.rate.data, self._draw_shape(sample_shape)))
        return Tensor(np.asarray(counts, dtype=self.rate.dtype))

    def log_prob(self, value):
        """k log λ − λ − log k! (0 · log 0 is 0: a rate of 0 gives the count 0 probability 1)."""
        value = _tensor(value, self.rate.dtype)
        _check("Poisson.log_prob", "values must be counts (whole numbers ≥ 0)", (value.data >= 0) & (value.data == np.round(value.data)), value.data)
        return _times_log(value, self.rate) - self.rate - lgamma(value + 1.0)


def _counts(name, value, dtype, most=None):
    """A count family's values: whole numbers ≥ 0 (and ≤ `most`, a Binomial's total_count)."""
    value = _tensor(value, dtype)
    ok = (value.data >= 0) & (value.data == np.round(value.data))
    if most is not None:
        ok = ok & (value.data <= most.data)
    _check(name, "values must be counts (whole numbers ≥ 0" + (", at most total_count)" if most is not None else ")"), ok, value.data)
    return value


class Binomial(Distribution):
    """The number of successes in `total_count` independent trials that each succeed with
    probability `probs` (or sigmoid(`logits`)), elementwise: P(k) = C(n, k) pᵏ (1 − p)ⁿ⁻ᵏ. Draws
    are float counts, as PyTorch's; `sample` only."""

    @property
    def support(self):
        return constraints.integer_interval(0, self.total_count.data)

    def __init__(self, total_count=1, probs=None, logits=None):
        coin = Bernoulli(probs=probs, logits=logits)
        self.probs, self.logits = coin.probs, coin.logits
        self.total_count = _tensor(total_count, self.probs.dtype)
        n = self.total_count.data
        _check("Binomial", "total_count must be a whole number ≥ 0", (n >= 0) & (n == np.round(n)), n)
        self.batch_shape = np.broadcast_shapes(self.total_count.shape, self.probs.shape)

    def _parameters(self):
        return {"total_count": self.total_count, "probs": self.probs}

    @property
    def mean(self):
        return (self.total_count * self.probs).broadcast_to(self.batch_shape)

    @property
    def mode(self):
        return Tensor(np.minimum(np.floor((self.total_count.data + 1.0) * self.probs.data), self.total_count.data))

    @property
    def variance(self):
        return (self.total_count * self.probs * (1.0 - self.probs)).broadcast_to(self.batch_shape)

    def sample(self, sample_shape=()):
        shape = self._draw_shape(sample_shape)
        n, p = np.broadcast_to(self.total_count.data, shape).astype(np.int64), np.broadcast_to(self.probs.data, shape)
        return Tensor(np.asarray(generator_for("Binomial.sample").binomial(n, p), dtype=self.probs.dtype))

    def _log_pmf(self, k):
        """log C(n, k) + k logit − n softplus(logit): k log p + (n − k) log(1 − p) without log 0."""
        n = self.total_count
        return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) + k * self.logits - n * softplus(self.logits)

    def log_prob(self, value):
        return self._log_pmf(_counts("Binomial.log_prob", value, self.probs.dtype, most=self.total_count))

    def entropy(self):
        """−Σₖ P(k) log P(k) over k = 0 … n (each entry its own n, where PyTorch needs one n for all)."""
        most = int(self.total_count.data.max(initial=0))
        k = Tensor(np.arange(most + 1, dtype=self.probs.dtype).reshape((-1,) + (1,) * len(self.batch_shape)))
        inside = k.data <= self.total_count.data
        log_pmf = self._log_pmf(where(inside, k, self.total_count + 0.0 * k))
        return -where(inside, log_pmf.exp() * log_pmf, 0.0).sum(axis=0)


class ContinuousBernoulli(Distribution):
    """The continuous Bernoulli on [0, 1] (Loaiza-Ganem and Cunningham, 2019), elementwise: density
    C(p) pˣ (1 − p)¹⁻ˣ, the likelihood of a VAE's grey-level pixels that the Bernoulli's is not (it
    does not integrate to 1 over [0, 1]). Near p = 1/2, where C's formula is 0/0, its statistics
    are Taylor series, in the same window as PyTorch's (`lims`); `rsample` through `icdf`."""

    support = constraints.unit_interval

    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501)):
        coin = Bernoulli(probs=probs, logits=logits)
        eps = float(np.finfo(coin.probs.dtype).eps)
        self.probs = coin.probs.clamp(eps, 1.0 - eps)  # as PyTorch's clamp_probs
        self.logits, self.batch_shape, self._lims = coin.logits, coin.batch_shape, lims

    def _parameters(self):
        return {"probs": self.probs}

    def _stable(self):
        """Where p is outside the window around 1/2 (the closed forms hold), as numpy booleans."""
        p = self.probs.data
        return (p <= self._lims[0]) | (p > self._lims[1])

    def _cut(self):
        """p where the closed forms hold, the window's lower edge elsewhere (their unused branch
        finite, so that no NaN reaches a gradient)."""
        return where(self._stable(), self.probs, self._lims[0] + 0.0 * self.probs)

    def _log_norm(self):
        """log C(p) = log |log((1 − p)/p)| − log |1 − 2p|; log 2 + (4/3 + 104/45 x) x, x = (p − 1/2)², near 1/2."""
        p = self._cut()
        below = p.data <= 0.5  # log |1 − 2p| by its side of 1/2, the other side's entries moved to 0 and 1
        gap = where(below, (-2.0 * where(below, p, 0.0)).log1p(), (2.0 * where(below, 1.0, p) - 1.0).log())
        closed = ((-p).log1p() - p.log()).abs().log() - gap
        x = (self.probs - 0.5) * (self.probs - 0.5)
        return where(self._stable(), closed, math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x)

    @property
    def mean(self):
        p = self._cut()
        closed = p / (2.0 * p - 1.0) + 1.0 / ((-p).log1p() - p.log())
        x = self.probs - 0.5
        return where(self._stable(), closed, 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x * x) * x)

    @property
    def variance(self):
        p = self._cut()
        logit = (-p).log1p() - p.log()
        closed = p * (p - 1.0) / ((1.0 - 2.0 * p) * (1.0 - 2.0 * p)) + 1.0 / (logit * logit)
        x = (self.probs - 0.5) * (self.probs - 0.5)
        return where(self._stable(), closed, 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x)

    def rsample(self, sample_shape=()):
        u = _standard_draws("ContinuousBernoulli.rsample", "random", self._draw_shape(sample_shape), self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        """x logit − softplus(logit) + log C(p): the Bernoulli's log-likelihood, normalized on [0, 1]."""
        value = _tensor(value, self.probs.dtype)
        _check("ContinuousBernoulli.log_prob", "values must lie in [0, 1]", (value.data >= 0) & (value.data <= 1), value.data)
        return value * self.logits - softplus(self.logits) + self._log_norm()

    def cdf(self, value):
        """(1 − p) expm1(x log(p/(1 − p))) / (2p − 1): PyTorch's (pˣ (1 − p)¹⁻ˣ + p − 1) / (2p − 1),
        written without its cancellation for small x."""
        value = _tensor(value, self.probs.dtype)
        p = self._cut()
        closed = (1.0 - p) * (value * (p.log() - (-p).log1p())).expm1() / (2.0 * p - 1.0)
        return where(self._stable(), closed, value).clamp(0.0, 1.0)

    def icdf(self, value):
        """log1p(u (2p − 1)/(1 − p)) / log(p/(1 − p)), the inverse of the CDF above (PyTorch's
        difference of two log1p, which cancels for small u, written as one)."""
        value = _probabilities("ContinuousBernoulli.icdf", value)
        p = self._cut()
        closed = (value * (2.0 * p - 1.0) / (1.0 - p)).log1p() / (p.log() - (-p).log1p())
        return where(self._stable(), closed, value)

    def entropy(self):
        log_q, log_p = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_q - log_p) - self._log_norm() - log_q


class Multinomial(Distribution):
    """Counts of the K classes in `total_count` independent draws of a Categorical(`probs` or
    `logits`): P(x) = n! / Πₖ xₖ! · Πₖ pₖ^xₖ over count vectors x summing to n. One total count for
    the whole batch, as in PyTorch; `sample` only."""

    @property
    def support(self):
        return constraints.multinomial(self.total_count)

    _event_dims = Categorical._event_dims

    def __init__(self, total_count=1, probs=None, logits=None):
        if isinstance(total_count, bool) or not isinstance(total_count, (int, np.integer)) or total_count < 0:
            raise ValueError(f"Multinomial: total_count must be a whole number ≥ 0 (one for the whole batch, as in PyTorch), "
                             f"got {total_count!r}")
        self.total_count, self._categorical = int(total_count), Categorical(probs=probs, logits=logits)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        self.batch_shape, self.event_shape = self._categorical.batch_shape, self.probs.shape[-1:]

    def _parameters(self):
        return {"probs": self.probs}

    @property
    def mean(self):
        return self.probs * float(self.total_count)

    @property
    def variance(self):
        return self.probs * (1.0 - self.probs) * float(self.total_count)

    def sample(self, sample_shape=()):
        shape = _shape(sample_shape) + tuple(self.batch_shape)
        counts = generator_for("Multinomial.sample").multinomial(self.total_count, self.probs.data, size=shape)
        return Tensor(np.asarray(counts, dtype=self.probs.dtype))

    def log_prob(self, value):
        value = _tensor(value, self.probs.dtype)
        whole = (value.data >= 0) & (value.data == np.round(value.data))
        _check("Multinomial.log_prob", f"values must be count vectors summing to total_count ({self.total_count})",
               whole.all(-1) & (value.data.sum(-1) == self.total_count), value.data)
        return lgamma(value.sum(axis=-1) + 1.0) - lgamma(value + 1.0).sum(axis=-1) + (value * self.logits).sum(axis=-1)

    def entropy(self):
        """n H(Categorical) − log n! + Σₖ Σⱼ₌₁ⁿ P(xₖ = j) log j! (PyTorch's), each class's count Binomial(n, pₖ)."""
        n = self.total_count
        counts = Tensor(np.arange(1, n + 1, dtype=self.probs.dtype).reshape((-1,) + (1,) * self.probs.ndim))
        by_count = Binomial(float(n), probs=self.probs)._log_pmf(counts).exp() * lgamma(counts + 1.0)
        return n * self._categorical.entropy() - math.lgamma(n + 1) + by_count.sum(axis=0).sum(axis=-1)


class Geometric(Distribution):
    """The number of failures before the first success of trials that succeed with probability
    `probs` (or sigmoid(`logits`)), elementwise: P(k) = (1 − p)ᵏ p for k = 0, 1, 2, ...; `sample` only."""

    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None):
        coin = Bernoulli(probs=probs, logits=logits)
        _check("Geometric", "probs must lie in (0, 1]", coin.probs.data > 0, coin.probs.data)
        self._coin, self.probs, self.logits, self.batch_shape = coin, coin.probs, coin.logits, coin.batch_shape

    def _parameters(self):
        return {"probs": self.probs}

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return Tensor(np.zeros(self.batch_shape, dtype=self.probs.dtype))

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        trials = generator_for("Geometric.sample").geometric(np.broadcast_to(self.probs.data, self._draw_shape(sample_shape)))
        return Tensor(np.asarray(trials - 1, dtype=self.probs.dtype))  # numpy counts the success too

    def log_prob(self, value):
        """k log(1 − p) + log p (0 · log 0 is 0: a success probability of 1 makes k = 0 certain)."""
        value = _counts("Geometric.log_prob", value, self.probs.dtype)
        return _times_log(value, -self.probs, log1p=True) + self.probs.log()

    def entropy(self):
        """A coin's entropy per success, H(Bernoulli(p)) / p."""
        return self._coin.entropy() / self.probs


class NegativeBinomial(Distribution):
    """The number of successes before `total_count` failures of trials that succeed with probability
    `probs` (or sigmoid(`logits`)), elementwise (total_count may be any real ≥ 0: a Gamma-Poisson
    mixture, over-dispersed counts): P(k) = Γ(r + k) / (Γ(r) k!) pᵏ (1 − p)ʳ; `sample` only."""

    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None):
        coin = Bernoulli(probs=probs, logits=logits)
        _check("NegativeBinomial", "probs must lie in [0, 1)", coin.probs.data < 1, coin.probs.data)
        self.probs, self.logits = coin.probs, coin.logits
        self.total_count = _tensor(total_count, self.probs.dtype)
        _check("NegativeBinomial", "total_count must be ≥ 0", self.total_count.data >= 0, self.total_count.data)
        self.batch_shape = np.broadcast_shapes(self.total_count.shape, self.probs.shape)

    def _parameters(self):
        return {"total_count": self.total_count, "probs": self.probs}

    @property
    def mean(self):
        return (self.total_count * self.logits.exp()).broadcast_to(self.batch_shape)

    @property
    def mode(self):
        return Tensor(np.maximum(np.floor((self.total_count.data - 1.0) * np.exp(self.logits.data)), 0.0))

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape=()):
        """A Poisson count of a Gamma(r, p / (1 − p)) rate, as PyTorch draws it (numpy's own needs r > 0)."""
        shape, generator = self._draw_shape(sample_shape), generator_for("NegativeBinomial.sample")
        rates = generator.gamma(np.broadcast_to(self.total_count.data, shape), np.broadcast_to(np.exp(self.logits.data), shape))
        return Tensor(np.asarray(generator.poisson(rates), dtype=self.probs.dtype))

    def log_prob(self, value):
        """r log(1 − p) + k log p − log Γ(r + k) / (Γ(r) k!), written with logsigmoid; 0 where r + k = 0
        (no trials and no successes: certain), where the Γ terms are infinite."""
        value, r = _counts("NegativeBinomial.log_prob", value, self.probs.dtype), self.total_count
        certain = (r.data + value.data) == 0
        safe_r = where(certain, 1.0 + 0.0 * r, r) if certain.any() else r
        log_normalization = lgamma(value + 1.0) + lgamma(safe_r) - lgamma(safe_r + value)
        return -r * softplus(self.logits) - value * softplus(-self.logits) - where(certain, 0.0, log_normalization)


class Independent(Distribution):
    """`base_distribution` with its last `reinterpreted_batch_ndims` batch dimensions read as the
    event's: `log_prob` and `entropy` sum over them. A VAE's diagonal Gaussian over vectors is
    `Independent(Normal(mu, sigma), 1)`, one log-density per vector."""

    @property
    def support(self):
        return constraints.independent(self.base_dist.support, self.reinterpreted_batch_ndims)

    def __init__(self, base_distribution, reinterpreted_batch_ndims):
        n, batch = int(reinterpreted_batch_ndims), tuple(base_distribution.batch_shape)
        if not 0 <= n <= len(batch):
            raise ShapeError(f"Independent: reinterpreted_batch_ndims must be in [0, {len(batch)}], the base's batch "
                             f"dimensions (batch_shape {batch}), got {reinterpreted_batch_ndims}")
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, n
        shape = batch + tuple(base_distribution.event_shape)
        self.batch_shape, self.event_shape = shape[: len(batch) - n], shape[len(batch) - n:]
        self.has_rsample = base_distribution.has_rsample

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"

    def _inner_batch_shape(self, key, inner, batch_shape):
        return batch_shape + tuple(self.event_shape[: self.reinterpreted_batch_ndims])

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)


class TransformedDistribution(Distribution):
    """Y = f(X) for X ~ `base_distribution` and f the composition of `transforms` (applied in
    order; `minigrad.distributions.transforms`): `rsample` maps the base's draws, `log_prob` is the
    change of variables log p_X(f⁻¹(y)) − log |det J_f|, and `cdf`/`icdf` go through the base's
    for monotone transforms. A transform acting on events of more dimensions than the base's reads
    the base's last batch dimensions as its event's (as `Independent`)."""

    @property
    def support(self):
        """The last map's codomain, on events of this distribution's dimensions (PyTorch's)."""
        if not self.transforms:
            return self.base_dist.support
        codomain = self.transforms[-1].codomain
        extra = len(self.event_shape) - codomain.event_dim
        return constraints.independent(codomain, extra) if extra > 0 else codomain

    def __init__(self, base_distribution, transforms):
        self.transforms = [transforms] if isinstance(transforms, Transform) else list(transforms)
        for transform in self.transforms:
            if not isinstance(transform, Transform):
                raise TypeError(f"{type(self).__name__}: transforms must be Transforms, got {type(transform).__name__}")
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = max([len(base_distribution.event_shape)] + [t.domain.event_dim for t in self.transforms])
        if event_dim > len(shape):
            raise ShapeError(f"{type(self).__name__}: a transform acts on events of {event_dim} dimensions, more than the "
                             f"base distribution's shape {shape} has")
        extra = event_dim - len(base_distribution.event_shape)
        self.base_dist = Independent(base_distribution, extra) if extra else base_distribution
        for transform in self.transforms:  # a map may change the event's shape (stick-breaking, a reshape) ...
            moved = transform.forward_shape(shape)
            if transform.inverse_shape(moved) != shape:  # ... but not broadcast it, giving entries no draw of their own
                raise ShapeError(f"{type(self).__name__}: the parameters of {transform!r} broadcast the shape {shape} to "
                                 f"{moved}; give the base distribution that shape (its parameters broadcast to it), so "
                                 "that each entry gets its own draw")
            event_dim += transform.codomain.event_dim - transform.domain.event_dim
            shape = moved
        self.batch_shape, self.event_shape = shape[: len(shape) - event_dim], shape[len(shape) - event_dim:]
        self.has_rsample = base_distribution.has_rsample

    def __repr__(self):
        """A named family (Weibull, LogNormal, ...) shows its parameters; a user's, its base and maps."""
        if self._parameters():
            return super().__repr__()
        return f"{type(self).__name__}({self.base_dist!r}, {self.transforms!r})"

    def _forward(self, x):
        for transform in self.transforms:
            x = transform(x)
        return x

    def rsample(self, sample_shape=()):
        return self._forward(self.base_dist.rsample(sample_shape))

    def sample(self, sample_shape=()):
        return self._forward(self.base_dist.sample(sample_shape)).detach()

    def log_prob(self, value):
        value, event_dim = _tensor(value), len(self.event_shape)
        if self.transforms and not self.transforms[-1].knows(value):  # a cached draw inverts exactly
            space = self.transforms[-1].codomain
            _check(f"{type(self).__name__}.log_prob", f"values must be {space}", space.check(value.data), value.data)
        log_prob, y = 0.0, value
        for transform in reversed(self.transforms):  # event_dim: of y, then of x = f⁻¹(y)
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - sum_rightmost(transform.log_abs_det_jacobian(x, y), event_dim - transform.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _sign(self, what):
        """+1 where the transforms increase, −1 where they decrease (the product of their signs);
        refused for a map that is not monotone and elementwise, through which a CDF is not the base's."""
        unknown = [t for t in self.transforms if t.sign is None or t.domain.event_dim]
        if unknown:
            raise NotImplementedError(f"{type(self).__name__}.{what}: needs monotone elementwise transforms (with a sign), "
                                      f"not {unknown!r}")
        return math.prod(transform.sign for transform in self.transforms)

    @staticmethod
    def _monotonized(sign, probability):
        """p, or 1 − p where the transforms decrease."""
        return probability if isinstance(sign, int) and sign == 1 else sign * (probability - 0.5) + 0.5

    def cdf(self, value):
        sign, value = self._sign("cdf"), _tensor(value)
        for transform in reversed(self.transforms):
            value = transform.inv(value)
        return self._monotonized(sign, self.base_dist.cdf(value))

    def icdf(self, value):
        probability = _probabilities(f"{type(self).__name__}.icdf", value)
        return self._forward(self.base_dist.icdf(self._monotonized(self._sign("icdf"), probability)))


class LogNormal(TransformedDistribution):
    """exp(X) for X ~ N(loc, scale²), elementwise (PyTorch's `LogNormal(loc, scale)`: the parameters
    are the normal's): a normal under `ExpTransform`, density N(log x; loc, scale²) / x for x > 0."""

    def __init__(self, loc, scale):
        super().__init__(Normal(loc, scale), ExpTransform())
        self.loc, self.scale = self.base_dist.loc, self.base_dist.scale

    def _parameters(self):
        return {"loc": self.loc, "scale": self.scale}

    @property
    def mean(self):
        return (self.loc + 0.5 * self.scale * self.scale).exp().broadcast_to(self.batch_shape)

    @property
    def mode(self):
        return (self.loc - self.scale * self.scale).exp().broadcast_to(self.batch_shape)

    @property
    def variance(self):
        square = self.scale * self.scale
        return (square.expm1() * (2.0 * self.loc + square).exp()).broadcast_to(self.batch_shape)

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class LogisticNormal(TransformedDistribution):
    """Vectors on the probability simplex (proportions: compositional data, topic mixtures): the
    stick-breaking map of N(loc, scale²) over vectors of K − 1 entries onto vectors of K that sum to
    1 (Aitchison's logistic normal, PyTorch's). Its log-density is the change of variables; it has
    no mean or entropy in closed form (nor in PyTorch)."""

    _event_dims = {"loc": 1, "scale": 1}

    def __init__(self, loc, scale):
        base = Normal(loc, scale)
        super().__init__(base.expand((1,)) if not base.batch_shape else base, StickBreakingTransform())
        self.loc, self.scale = self.base_dist.base_dist.loc, self.base_dist.base_dist.scale

    def _parameters(self):
        return {"loc": self.loc, "scale": self.scale}


class _HalfLocationScale(Distribution):
    """|X| for X of a location-scale family centred at 0 (`_base`, with `scale`): the density
    doubled on x ≥ 0, the entropy less log 2; `rsample` is |X|'s."""

    support = constraints.nonnegative

    has_rsample = True
    _base = None

    def __init__(self, scale):
        self.base_dist = self._base(0.0, scale)
        self.scale, self.batch_shape = self.base_dist.scale, self.base_dist.scale.shape

    def _parameters(self):
        return {"scale": self.scale}

    @property
    def mode(self):
        return Tensor(np.zeros(self.batch_shape, dtype=self.scale.dtype))

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape).abs()

    def log_prob(self, value):
        value = _tensor(value)
        _check(f"{type(self).__name__}.log_prob", "values must be non-negative", value.data >= 0, value.data)
        return self.base_dist.log_prob(value) + math.log(2.0)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2.0)


class HalfNormal(_HalfLocationScale):
    """|X| for X ~ N(0, scale²), elementwise: a prior for a scale. CDF erf(x / (σ√2)) and quantile
    σ√2 erfinv(p), which PyTorch writes as 2Φ(x) − 1 and Φ⁻¹((1 + p)/2), cancelling near 0."""

    _base = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2.0 / math.pi)

    @property
    def variance(self):
        return self.scale * self.scale * (1.0 - 2.0 / math.pi)

    def cdf(self, value):
        return ops.erf(_tensor(value) / (self.scale * math.sqrt(2.0)))

    def icdf(self, value):
        return self.scale * math.sqrt(2.0) * ops.erfinv(_probabilities("HalfNormal.icdf", value))


class HalfCauchy(_HalfLocationScale):
    """|X| for X of Cauchy(0, scale), elementwise: a heavy-tailed prior for a scale (mean and
    variance infinite). CDF 2 atan(x/γ)/π and quantile γ tan(πp/2)."""

    _base = Cauchy

    @property
    def mean(self):
        return self.base_dist._filled(np.inf)

    @property
    def variance(self):
        return self.base_dist._filled(np.inf)

    def cdf(self, value):
        return (_tensor(value) / self.scale).atan() * (2.0 / math.pi)

    def icdf(self, value):
        return self.scale * (_probabilities("HalfCauchy.icdf", value) * (math.pi / 2.0)).tan()


class Weibull(TransformedDistribution):
    """The Weibull distribution of scale λ and concentration k, elementwise: λ E^(1/k) for
    E ~ Exp(1) (PyTorch's construction), CDF 1 − e^(−(x/λ)ᵏ); lifetimes, wind speeds."""

    support = constraints.positive

    def __init__(self, scale, concentration):
        scale, concentration = _together(scale, concentration)
        self.scale, self.concentration = _positive("Weibull", "scale", scale), _positive("Weibull", "concentration", concentration)
        shape = np.broadcast_shapes(self.scale.shape, self.concentration.shape)
        ones = Tensor(np.ones(shape, dtype=np.result_type(self.scale.dtype, self.concentration.dtype)))
        super().__init__(Exponential(ones), [PowerTransform(1.0 / self.concentration), AffineTransform(0.0, self.scale)])

    def _parameters(self):
        return {"scale": self.scale, "concentration": self.concentration}

    @property
    def mean(self):
        return (self.scale * lgamma(1.0 + 1.0 / self.concentration).exp()).broadcast_to(self.batch_shape)

    @property
    def mode(self):
        """λ ((k − 1)/k)^(1/k) for k > 1, and 0 for k ≤ 1 (where PyTorch's formula gives NaN)."""
        above = self.concentration.data > 1.0
        k = where(above, self.concentration, 2.0)
        return where(above, self.scale * ((k - 1.0) / k) ** (1.0 / k), 0.0 * self.scale).broadcast_to(self.batch_shape)

    @property
    def variance(self):
        k = 1.0 / self.concentration
        return (self.scale * self.scale * (lgamma(1.0 + 2.0 * k).exp() - (2.0 * lgamma(1.0 + k)).exp())).broadcast_to(self.batch_shape)

    def entropy(self):
        k = 1.0 / self.concentration
        return (_EULER * (1.0 - k) + (self.scale * k).log() + 1.0).broadcast_to(self.batch_shape)


class Pareto(TransformedDistribution):
    """The Pareto distribution of scale xₘ and shape α, elementwise: xₘ e^E for E ~ Exp(α), density
    α xₘ^α / x^(α+1) for x ≥ xₘ (a power law: incomes, city sizes). Mean ∞ for α ≤ 1, variance
    ∞ for α ≤ 2, as in PyTorch."""

    @property
    def support(self):
        return constraints.greater_than_eq(self.scale.data)

    def __init__(self, scale, alpha):
        scale, alpha = _together(scale, alpha)
        self.scale, self.alpha = _positive("Pareto", "scale", scale), _positive("Pareto", "alpha", alpha)
        rate = self.alpha + 0.0 * self.scale  # the base holds every entry's own draw
        super().__init__(Exponential(rate), [ExpTransform(), AffineTransform(0.0, self.scale)])

    def _parameters(self):
        return {"scale": self.scale, "alpha": self.alpha}

    @property
    def mean(self):
        a = self.alpha.clamp(1.0)
        return (a * self.scale / (a - 1.0)).broadcast_to(self.batch_shape)

    @property
    def mode(self):
        return self.scale.broadcast_to(self.batch_shape)

    @property
    def variance(self):
        a = self.alpha.clamp(2.0)
        return (self.scale * self.scale * a / ((a - 1.0) * (a - 1.0) * (a - 2.0))).broadcast_to(self.batch_shape)

    def log_prob(self, value):
        value = _tensor(value)
        _check("Pareto.log_prob", "values must be at least the scale", value.data >= self.scale.data, value.data)
        return super().log_prob(value)

    def entropy(self):
        return ((self.scale / self.alpha).log() + (1.0 + 1.0 / self.alpha)).broadcast_to(self.batch_shape)


class InverseGamma(TransformedDistribution):
    """The inverse gamma distribution of concentration α and rate β, elementwise: 1/X for
    X ~ Gamma(α, β) (PyTorch's construction, a Gamma under `PowerTransform(-1)`), density
    β^α y^(−α−1) e^(−β/y) / Γ(α) for y > 0: the conjugate prior of a normal's variance. Mean ∞ for
    α ≤ 1 and variance ∞ for α ≤ 2, as in PyTorch. `rsample` is 1/X of Gamma's, differentiable in
    both parameters (in α to first order, as Gamma's)."""

    def __init__(self, concentration, rate):
        concentration, rate = _together(concentration, rate)
        _positive("InverseGamma", "concentration", concentration)
        _positive("InverseGamma", "rate", rate)
        super().__init__(Gamma(concentration, rate), PowerTransform(-1.0))
        self.concentration, self.rate = self.base_dist.concentration, self.base_dist.rate

    def _parameters(self):
        return {"concentration": self.concentration, "rate": self.rate}

    def _where_above(self, edge, value):
        """value (a function of α, given α moved to edge + 1 where α ≤ edge, so that the ∞ of the
        branch not taken reaches no gradient) where α > edge, ∞ elsewhere."""
        above = np.broadcast_to(self.concentration.data > edge, self.batch_shape)
        a = where(self.concentration.data > edge, self.concentration, edge + 1.0)
        return where(above, value(a).broadcast_to(self.batch_shape), np.inf)

    @property
    def mean(self):
        return self._where_above(1.0, lambda a: self.rate / (a - 1.0))

    @property
    def mode(self):
        return (self.rate / (self.concentration + 1.0)).broadcast_to(self.batch_shape)

    @property
    def variance(self):
        return self._where_above(2.0, lambda a: self.rate * self.rate / ((a - 1.0) * (a - 1.0) * (a - 2.0)))

    def cdf(self, value):
        """Q(α, β/y), the upper regularized incomplete gamma function (`mg.gammaincc`): PyTorch's
        1 − P(α, β/y) through the decreasing transform cancels for small y, where P is near 1 (its
        CDF of 4e-9 is 5e-9 off, of 1.5e-16 25 % off, and 0 below). Differentiable in y and β to
        every order, in α to first order (PyTorch's has no derivative in α)."""
        value = _tensor(value)
        _check("InverseGamma.cdf", "values must be positive", value.data > 0, value.data)
        return ops.gammaincc(self.concentration, self.rate / value)

    def icdf(self, value):
        raise NotImplementedError("InverseGamma has no icdf (nor in PyTorch): the Gamma quantile has no closed form")

    def entropy(self):
        a = self.concentration
        return (a + self.rate.log() + lgamma(a) - (1.0 + a) * digamma(a)).broadcast_to(self.batch_shape)


def _log1mexp(t):
    """log(1 − eᵗ) for t ≤ 0: log(−expm1 t) near 0 and log1p(−eᵗ) below −log 2, each where the
    other loses digits (Mächler, 2012)."""
    return _by_tail(t, t.data > -math.log(2.0), lambda t: (-t.expm1()).log(), lambda t: (-t.exp()).log1p(), -1.0)


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution of concentration1 a and concentration0 b on [0, 1],
    elementwise: density a b y^(a−1) (1 − yᵃ)^(b−1), CDF 1 − (1 − yᵃ)ᵇ, a Beta look-alike whose
    quantile has a closed form (so `rsample` is a plain function of a uniform: the stick-breaking
    VAE's). PyTorch's construction: Uniform(0, 1) under u^(1/b), 1 − ·, ·^(1/a).

    Through those maps, 1 − yᵃ and 1 − (1 − yᵃ)ᵇ cancel near 1 and near 0 (for a = 2.5, b = 3,
    PyTorch's CDF at y = 1e-4 is 8e-8 off and 0 at 1e-8, its quantile of 1e-15 3e-4 off), and so
    does 1 − u^(1/b) in its draws; here log(1 − yᵃ) = log(1 − e^(a log y)) is taken by its tail
    (`_log1mexp`), the CDF is −expm1(b log(1 − yᵃ)), and the quantile and the
    draws are (1 − e^(log1p(−p)/b))^(1/a), digits kept at both ends. The mean and variance are
    PyTorch's moments b B(1 + n/a, b), the variance m₂ − m₁², which cancels where the distribution
    is narrow (1e-9 relative at a = b = 200), as PyTorch's. PyTorch's `mode` is NaN for every a and
    b; here it is the density's peak."""

    support = constraints.unit_interval

    def __init__(self, concentration1, concentration0):
        concentration1, concentration0 = _together(concentration1, concentration0)
        self.concentration1 = _positive("Kumaraswamy", "concentration1", concentration1)
        self.concentration0 = _positive("Kumaraswamy", "concentration0", concentration0)
        shape = np.broadcast_shapes(concentration1.shape, concentration0.shape)
        dtype = np.result_type(concentration1.dtype, concentration0.dtype)
        base = Uniform(Tensor(np.zeros(shape, dtype=dtype)), Tensor(np.ones(shape, dtype=dtype)))
        super().__init__(base, [PowerTransform(1.0 / self.concentration0), AffineTransform(1.0, -1.0),
                                PowerTransform(1.0 / self.concentration1)])

    def _parameters(self):
        return {"concentration1": self.concentration1, "concentration0": self.concentration0}

    def _moment(self, n):
        """E[Yⁿ] = b B(1 + n/a, b) (PyTorch's `_moments`)."""
        a, b = self.concentration1, self.concentration0
        return b * (lgamma(1.0 + n / a) + lgamma(b) - lgamma(1.0 + b + n / a)).exp()

    @property
    def mean(self):
        return self._moment(1.0).broadcast_to(self.batch_shape)

    @property
    def variance(self):
        mean = self._moment(1.0)
        return (self._moment(2.0) - mean * mean).broadcast_to(self.batch_shape)

    @property
    def mode(self):
        """((a − 1)/(ab − 1))^(1/a) where a > 1 and b ≥ 1; 0 where a ≤ 1 < b and 1 where b < 1 < a
        (the density's supremum at that end); NaN where both are at most 1 (no single peak), as
        Beta's. (PyTorch's formula takes log1p(−b), NaN for every b ≥ 1.)"""
        a, b = (p.broadcast_to(self.batch_shape) for p in (self.concentration1, self.concentration0))
        inside = (a.data > 1) & (b.data >= 1)
        a_in, b_in = where(inside, a, 2.0), where(inside, b, 2.0)
        peak = ((a_in - 1.0) / (a_in * b_in - 1.0)) ** (1.0 / a_in)
        end = np.where(b.data > 1, 0.0, np.where(a.data > 1, 1.0, np.nan)).astype(peak.dtype)
        return where(inside, peak, Tensor(end))

    def log_prob(self, value):
        """log a + log b + (a − 1) log y + (b − 1) log(1 − yᵃ)."""
        value = _tensor(value)
        _check("Kumaraswamy.log_prob", "values must lie in [0, 1]", (value.data >= 0) & (value.data <= 1), value.data)
        a, b = self.concentration1, self.concentration0
        pole = ((b.data - 1.0) == 0) & (value.data == 1)  # (b − 1) log(1 − yᵃ) is 0 · ∞ there: 0 as b → 1
        safe = where(pole, 0.5, value) if pole.any() else value
        with np.errstate(divide="ignore"):  # y = 0: log y = −∞, the density's 0 or ∞ there
            return a.log() + b.log() + _times_log(a - 1.0, value) + (b - 1.0) * _log1mexp(a * safe.log())

    def cdf(self, value):
        """1 − (1 − yᵃ)ᵇ = 1 − e^(b log(1 − yᵃ))."""
        value = _tensor(value)
        _check("Kumaraswamy.cdf", "values must lie in [0, 1]", (value.data >= 0) & (value.data <= 1), value.data)
        with np.errstate(divide="ignore"):
            return -(self.concentration0 * _log1mexp(self.concentration1 * value.log())).expm1()

    def icdf(self, value):
        """(1 − (1 − p)^(1/b))^(1/a), as (1 − e^(log1p(−p)/b))^(1/a): a small p keeps its digits."""
        p = _probabilities("Kumaraswamy.icdf", value)
        with np.errstate(divide="ignore"):
            return (-((-p).log1p() / self.concentration0).expm1()) ** (1.0 / self.concentration1)

    def rsample(self, sample_shape=()):
        """The quantile of uniforms in [ε, 1 − ε] (as PyTorch's clamp_probs: no draw on an edge,
        where log_prob is infinite): differentiable in a and b."""
        dtype = np.result_type(self.concentration1.dtype, self.concentration0.dtype)
        return self.icdf(_clamped_uniforms("Kumaraswamy.rsample", self._draw_shape(sample_shape), dtype))

    sample = Distribution.sample  # rsample's draws, detached (not the base's through the maps)

    def entropy(self):
        """(1 − 1/b) + (1 − 1/a) H_b − log a − log b, H_b = ψ(b + 1) + γ the harmonic number (PyTorch's)."""
        a, b = self.concentration1, self.concentration0
        harmonic = digamma(b + 1.0) + _EULER
        return ((1.0 - 1.0 / b) + (1.0 - 1.0 / a) * harmonic - a.log() - b.log()).broadcast_to(self.batch_shape)


def _series_near_zero(t, threshold, coefficients, closed):
    """f(t) for a ratio f that is 0/0 at t = 0 (log1p(t)/t, expm1(t)/t): closed(t) where |t| ≥
    threshold, the power series Σ cₖ tᵏ nearer 0, where the closed form's k-th derivative loses
    ~ε/|t|^(k+1) to cancellation (and its value is NaN at 0). Each branch sees only its own
    entries (the others moved to 0 and to the threshold), so neither's NaN reaches a gradient."""
    near = np.abs(t.data) < threshold
    small = where(near, t, 0.0)
    series = 0.0 * small + coefficients[-1]
    for c in reversed(coefficients[:-1]):
        series = series * small + c
    return where(near, series, closed(where(near, threshold, t)))


# log1p(t)/t = Σ (−t)ᵏ/(k + 1) for |t| < 0.1 (18 terms: the first left out is below 1e-19), and
# expm1(t)/t = Σ tᵏ/(k + 1)! for |t| < 0.5 (17 terms: below 1e-21)
_LOG1P_RATIO = (0.1, tuple((-1.0) ** k / (k + 1) for k in range(18)))
_EXPM1_RATIO = (0.5, tuple(1.0 / math.factorial(k + 1) for k in range(17)))


def _log1p_ratio(t):
    return _series_near_zero(t, *_LOG1P_RATIO, lambda t: t.log1p() / t)


def _expm1_ratio(t):
    return _series_near_zero(t, *_EXPM1_RATIO, lambda t: t.expm1() / t)


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution of location μ, scale σ and concentration (shape) ξ,
    elementwise: survival function (1 + ξz)^(−1/ξ) of z = (x − μ)/σ ≥ 0 (below −1/ξ where ξ < 0),
    e^(−z) at ξ = 0. The law of the excesses over a high threshold (peaks over threshold, extreme
    value statistics): an exponential at ξ = 0, a Pareto for ξ > 0, a uniform at ξ = −1.

    PyTorch switches to the exponential's formulas where ξ is within 1e-8 of 0, where its
    derivatives in ξ are then 0 (the true one of log p at ξ = 0 is z²/2 − z), and (1/ξ) log1p(ξz)
    loses digits in its derivatives near that window (its second derivative in ξ at ξ = 1e-7 is
    8 % off). Here every formula is written with log1p(t)/t and expm1(t)/t of t = ξz, power series
    near t = 0: one smooth function of ξ through 0, exact there to every order. Its CDF is
    −expm1(log S) (PyTorch's log1p(−exp(log S)) loses the digits of a small
    probability) and `rsample` the quantile of uniforms, differentiable in all three. Mean NaN for
    ξ ≥ 1 and variance NaN for ξ ≥ 1/2, as in PyTorch. (PyTorch 2.13's log_prob and cdf are an
    error for float64 parameters: it compares ξ with a float32 0.)"""

    @property
    def support(self):
        """[μ, ∞) for ξ ≥ 0, [μ, μ − σ/ξ] for ξ < 0."""
        loc, scale, concentration = (np.broadcast_to(p.data, self.batch_shape) for p in (self.loc, self.scale, self.concentration))
        with np.errstate(divide="ignore"):
            return constraints.interval(loc, np.where(concentration < 0, loc - scale / concentration, np.inf))

    has_rsample = True

    def __init__(self, loc, scale, concentration):
        self.loc, scale, self.concentration = _together(loc, scale, concentration)
        self.scale = _positive("GeneralizedPareto", "scale", scale)
        self.batch_shape = np.broadcast_shapes(self.loc.shape, self.scale.shape, self.concentration.shape)

    def _parameters(self):
        return {"loc": self.loc, "scale": self.scale, "concentration": self.concentration}

    def _z(self, name, value):
        """(x − μ)/σ of values in the support: z ≥ 0, and 1 + ξz ≥ 0 (x ≤ μ − σ/ξ where ξ < 0)."""
        value = _tensor(value)
        z = (value - self.loc) / self.scale
        inside = (z.data >= 0) & (1.0 + self.concentration.data * z.data >= 0)
        _check(f"GeneralizedPareto.{name}", "values must lie in the support: at least loc, and at most loc − scale/concentration "
               "where concentration < 0", inside, value.data)
        return z

    def _log_survival(self, z):
        """log S = −log1p(ξz)/ξ = −z log1p(t)/t, t = ξz."""
        with np.errstate(divide="ignore"):  # t = −1, the upper end where ξ < 0: log1p(−1) = −∞
            return -z * _log1p_ratio(self.concentration * z)

    def log_prob(self, value):
        """−log σ − (1 + ξ) z log1p(t)/t: −log σ − (1/ξ + 1) log1p(ξz), −log σ − z at ξ = 0."""
        z = self._z("log_prob", value)
        xi = self.concentration
        pole = (1.0 + xi.data == 0) & (1.0 + xi.data * z.data == 0)  # 0 · ∞ at ξ = −1's upper end: 0
        if pole.any():
            z = where(pole, 0.0, z)
        with np.errstate(divide="ignore"):
            return -self.scale.log() - (1.0 + xi) * z * _log1p_ratio(xi * z)

    def log_survival_function(self, value):
        """log P(X > x) = −(1/ξ) log1p(ξz), −z at ξ = 0 (PyTorch's)."""
        return self._log_survival(self._z("log_survival_function", value))

    def log_cdf(self, value):
        """log P(X ≤ x) = log(1 − S) by `_log1mexp` (PyTorch's log1p(−exp(log S)) loses a small probability's digits)."""
        return _log1mexp(self._log_survival(self._z("log_cdf", value)))

    def cdf(self, value):
        return -self._log_survival(self._z("cdf", value)).expm1()

    def icdf(self, value):
        """μ + σ z for z = −L expm1(s)/s, L = log1p(−p), s = −ξL (PyTorch's σ/ξ · expm1(−ξL), and
        −σL at ξ = 0); the support's upper end at p = 1."""
        p = _probabilities("GeneralizedPareto.icdf", value)
        xi = self.concentration
        shape = np.broadcast_shapes(p.shape, tuple(self.batch_shape))
        top = np.broadcast_to(p.data == 1, shape)
        if top.any():
            p = where(top, 0.5, p.broadcast_to(shape))
        tail = -(-p).log1p()
        z = tail * _expm1_ratio(xi * tail)
        if top.any():
            xi_below = where(xi.data < 0, xi, -1.0)  # the finite end −1/ξ where ξ < 0, ∞ elsewhere
            end = where(np.broadcast_to(xi.data < 0, shape), (-1.0 / xi_below).broadcast_to(shape), np.inf)
            z = where(top, end, z)
        return self.loc + self.scale * z

    def rsample(self, sample_shape=()):
        dtype = np.result_type(self.loc.dtype, self.scale.dtype, self.concentration.dtype)
        return self.icdf(_standard_draws("GeneralizedPareto.rsample", "random", self._draw_shape(sample_shape), dtype))

    def _below(self, edge, value):
        """value (a function of ξ, given ξ moved to edge − 1/2 where ξ ≥ edge) where ξ < edge, NaN elsewhere."""
        xi = self.concentration
        below = np.broadcast_to(xi.data < edge, self.batch_shape)
        return where(below, value(where(xi.data < edge, xi, edge - 0.5)).broadcast_to(self.batch_shape), np.nan)

    @property
    def mean(self):
        return self._below(1.0, lambda xi: self.loc + self.scale / (1.0 - xi))

    @property
    def variance(self):
        return self._below(0.5, lambda xi: self.scale * self.scale / ((1.0 - xi) * (1.0 - xi) * (1.0 - 2.0 * xi)))

    @property
    def mode(self):
        """μ where ξ > −1 (PyTorch's, for every ξ); the upper end μ − σ/ξ where ξ < −1, where the
        density grows without bound towards it; NaN at ξ = −1, a uniform (as Uniform's)."""
        xi = self.concentration.broadcast_to(self.batch_shape)
        loc = (self.loc + 0.0 * self.scale).broadcast_to(self.batch_shape)
        below = xi.data < -1.0
        end = self.loc - self.scale / where(below, xi, -2.0)
        return where(below, end, where(xi.data == -1.0, np.nan, loc))

    def entropy(self):
        return (self.scale.log() + self.concentration + 1.0).broadcast_to(self.batch_shape)


def _clamped_uniforms(name, shape, dtype):
    """Uniform draws in [ε, 1 − ε], as PyTorch's clamp_probs: their logs and logits are finite."""
    eps = float(np.finfo(dtype).eps)
    return Tensor(np.clip(generator_for(name).random(shape), eps, 1.0 - eps).astype(dtype))


def _temperature(name, temperature, like):
    """A relaxation's temperature; a Python number takes the dtype of the probabilities `like`."""
    return _positive(name, "temperature", _tensor(temperature, like.dtype) if _is_number(temperature) else _tensor(temperature))


class LogitRelaxedBernoulli(Distribution):
    """The logit of a relaxed Bernoulli draw (Maddison, Mnih and Teh's binary Concrete; Jang, Gu and
    Poole's Gumbel-softmax): (logit u + logits) / temperature for a uniform u, a differentiable
    stand-in for a coin flip that tends to one as the temperature tends to 0."""

    support = constraints.real

    _event_dims = {"temperature": None}
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None):
        coin = Bernoulli(probs=probs, logits=logits)
        self.probs, self.logits, self.batch_shape = coin.probs, coin.logits, coin.batch_shape
        self.temperature = _temperature(type(self).__name__, temperature, self.probs)

    def _parameters(self):
        return {"temperature": self.temperature, "probs": self.probs}

    def rsample(self, sample_shape=()):
        u = _clamped_uniforms(f"{type(self).__name__}.rsample", self._draw_shape(sample_shape), self.logits.dtype)
        return (u.log() - (-u).log1p() + self.logits) / self.temperature

    def log_prob(self, value):
        """log τ + d − 2 log(1 + eᵈ), d = logits − τ · value (softplus: no overflow for a large d)."""
        diff = self.logits - _tensor(value) * self.temperature
        return self.temperature.log() + diff - 2.0 * softplus(diff)


class _Relaxed(TransformedDistribution):
    """A relaxation: a base distribution of logits or log-probabilities (`_base`) under a squashing
    map (`_transform`), its temperature and probabilities the base's."""

    _base, _transform = None, None
    _event_dims = property(lambda self: self._base._event_dims)  # its probs, logits and temperature are the base's

    def __init__(self, temperature, probs=None, logits=None):
        super().__init__(self._base(temperature, probs=probs, logits=logits), self._transform())
        self.temperature, self.probs, self.logits = self.base_dist.temperature, self.base_dist.probs, self.base_dist.logits

    def _parameters(self):
        return self.base_dist._parameters()


class RelaxedBernoulli(_Relaxed):
    """A relaxed coin flip in (0, 1): sigmoid of a `LogitRelaxedBernoulli` draw. `rsample` is
    differentiable in the probabilities (Gumbel-softmax training of discrete latent variables)."""

    _base, _transform = LogitRelaxedBernoulli, SigmoidTransform


class ExpRelaxedCategorical(Distribution):
    """The log of a relaxed one-hot draw (the Concrete distribution of Maddison, Mnih and Teh): the
    log-softmax of (logits + Gumbel noise) / temperature over the last dimension's classes."""

    support = constraints.real_vector

    _event_dims = {"probs": 1, "logits": 1, "temperature": None}
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None):
        classes = Categorical(probs=probs, logits=logits)
        self.probs, self.logits = classes.probs, classes.logits
        self.temperature = _temperature(type(self).__name__, temperature, self.probs)
        self.batch_shape, self.event_shape = classes.batch_shape, self.probs.shape[-1:]

    def _parameters(self):
        return {"temperature": self.temperature, "probs": self.probs}

    def rsample(self, sample_shape=()):
        u = _clamped_uniforms(f"{type(self).__name__}.rsample", self._draw_shape(sample_shape), self.logits.dtype)
        scores = (self.logits - (-u.log()).log()) / self.temperature
        return scores - logsumexp(scores, axis=-1, keepdims=True)

    def log_prob(self, value):
        """The Concrete density of log-probabilities: log Γ(K) + (K − 1) log τ + Σ (s − logsumexp s), s = logits − τ · value."""
        k = self.event_shape[0]
        score = self.logits - _tensor(value) * self.temperature
        score = (score - logsumexp(score, axis=-1, keepdims=True)).sum(axis=-1)
        return score + (math.lgamma(k) + (k - 1) * self.temperature.log())


class RelaxedOneHotCategorical(_Relaxed):
    """A relaxed one-hot vector on the simplex: softmax((logits + Gumbel noise) / temperature), the
    Gumbel-softmax (exp of an `ExpRelaxedCategorical` draw). `rsample` is differentiable in the
    class probabilities; as the temperature tends to 0 the draws tend to one-hot vectors."""

    support = constraints.simplex

    _base, _transform = ExpRelaxedCategorical, ExpTransform


class MixtureSameFamily(Distribution):
    """A mixture of K distributions of one family: a draw picks a component from
    `mixture_distribution` (a Categorical over K), then draws from it. `component_distribution`
    holds the K components in its last batch dimension: a Gaussian mixture is
    `MixtureSameFamily(Categorical(logits=w), Normal(means, scales))`, a mixture density network's
    output `MixtureSameFamily(Categorical(logits=w), Independent(Normal(mu, sigma), 1))`.
    log p(x) = logsumexp_k (log π_k + log p_k(x)); `sample` only, as in PyTorch."""

    @property
    def support(self):
        return self.component_distribution.support

    def __init__(self, mixture_distribution, component_distribution):
        if not isinstance(mixture_distribution, Categorical):
            raise TypeError(f"MixtureSameFamily: mixture_distribution must be a Categorical, got {type(mixture_distribution).__name__}")
        mixture, components = tuple(mixture_distribution.batch_shape), tuple(component_distribution.batch_shape)
        k = mixture_distribution.probs.shape[-1]
        if not components or components[-1] != k or not _broadcasts_to(mixture, components[:-1]):
            raise ShapeError(
                f"MixtureSameFamily: the component distribution's batch_shape {components} must end in the mixture's "
                f"{k} components, after a shape the mixture's batch_shape {mixture} broadcasts to")
        self.mixture_distribution, self.component_distribution = mixture_distribution, component_distribution
        self.batch_shape, self.event_shape = components[:-1], tuple(component_distribution.event_shape)

    def __repr__(self):
        return f"MixtureSameFamily({self.mixture_distribution!r}, {self.component_distribution!r})"

    def _inner_batch_shape(self, key, inner, batch_shape):
        return batch_shape + tuple(inner.batch_shape[-1:]) if key == "component_distribution" else batch_shape

    def _pad(self, x):
        """x with an axis of length 1 where the components' axis is (before the event's axes)."""
        return x.unsqueeze(-1 - len(self.event_shape))

    def _weights(self):
        """The mixture's probabilities, broadcast against the components' statistics."""
        probs = self.mixture_distribution.probs
        return probs.reshape(probs.shape + (1,) * len(self.event_shape))

    @property
    def mean(self):
        return (self._weights() * self.component_distribution.mean).sum(axis=-1 - len(self.event_shape))

    @property
    def variance(self):
        """The law of total variance: the mean of the components' variances plus the variance of their means."""
        axis, spread = -1 - len(self.event_shape), self.component_distribution.mean - self._pad(self.mean)
        return (self._weights() * self.component_distribution.variance).sum(axis=axis) + (self._weights() * spread * spread).sum(axis=axis)

    def sample(self, sample_shape=()):
        sample_shape, batch = _shape(sample_shape), tuple(self.batch_shape)
        chosen = self.mixture_distribution.sample(sample_shape).data  # sample_shape + the mixture's batch_shape
        draws = self.component_distribution.sample(sample_shape).data  # sample_shape + batch_shape + (K,) + event_shape
        mixture = chosen.shape[len(sample_shape):]
        chosen = np.broadcast_to(chosen.reshape(sample_shape + (1,) * (len(batch) - len(mixture)) + mixture), sample_shape + batch)
        axis = draws.ndim - 1 - len(self.event_shape)
        index = chosen.reshape(chosen.shape + (1,) * (1 + len(self.event_shape)))
        index = np.broadcast_to(index, draws.shape[:axis] + (1,) + draws.shape[axis + 1:])
        return Tensor(np.take_along_axis(draws, index, axis=axis).squeeze(axis))

    def log_prob(self, value):
        by_component = self.component_distribution.log_prob(self._pad(_tensor(value)))
        return logsumexp(by_component + self.mixture_distribution.logits, axis=-1)

    def cdf(self, value):
        """Σ_k π_k F_k(x), for components with a `cdf`."""
        return (self.component_distribution.cdf(self._pad(_tensor(value))) * self.mixture_distribution.probs).sum(axis=-1)


def _broadcasts_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


# --------------------------------------------------------------------------- KL divergences
def _kl_normal_normal(p, q):
    ratio = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    return 0.5 * (ratio * ratio + shift * shift - 1.0) - ratio.log()


def _kl_categorical_categorical(p, q):
    """Σ p (log p − log q): ∞ where q gives 0 to a class p does not, a class p gives 0 adding 0 (as PyTorch)."""
    terms = p.probs * (p.logits - q.logits)
    terms = where(q.probs.data == 0, Tensor(np.array(np.inf, dtype=terms.dtype)), terms)
    return where(p.probs.data == 0, Tensor(np.zeros((), dtype=terms.dtype)), terms).sum(axis=-1)


def _kl_onehot_onehot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


def _kl_bernoulli_bernoulli(p, q):
    return p.probs * (softplus(-q.logits) - softplus(-p.logits)) + (1.0 - p.probs) * (softplus(q.logits) - softplus(p.logits))


def _kl_mvn_mvn(p, q):
    """½ (tr(Σq⁻¹ Σp) + |Lq⁻¹ (μq − μp)|² − k) + Σ log Lq,ii − Σ log Lp,ii."""
    k = p.event_shape[0]
    shape = np.broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape))
    lq = q.scale_tril.broadcast_to(shape + (k, k))
    m = linalg.solve_triangular(lq, p.scale_tril.broadcast_to(shape + (k, k)), upper=False)
    z = linalg.solve_triangular(lq, (q.loc - p.loc).broadcast_to(shape + (k,)).unsqueeze(-1), upper=False).squeeze(-1)
    return 0.5 * ((m * m).sum(axis=(-2, -1)) + (z * z).sum(axis=-1) - k) + _log_diagonal_sum(q.scale_tril) - _log_diagonal_sum(p.scale_tril)


def _kl_uniform_uniform(p, q):
    """log of the widths' ratio where p's support lies inside q's, ∞ elsewhere (as PyTorch)."""
    ratio = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low.data > p.low.data) | (q.high.data < p.high.data)
    return where(outside, Tensor(np.asarray(np.inf, dtype=ratio.dtype)), ratio)


def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - ratio.log() - 1.0


def _kl_laplace_laplace(p, q):
    ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs()
    return distance / q.scale + ratio * (-distance / p.scale).exp() - ratio.log() - 1.0


def _kl_transformed_transformed(p, q):
    """KL(f(X) ‖ f(Y)) = KL(X ‖ Y) for one invertible f: the pair's transforms must be the same maps."""
    if len(p.transforms) != len(q.transforms) or not all(map(same_map, p.transforms, q.transforms)):
        raise NotImplementedError(f"kl_divergence: no closed form for ({type(p).__name__}, {type(q).__name__}) with "
                                  f"different transforms ({p.transforms!r} and {q.transforms!r}); with the same ones it is "
                                  "the base distributions' KL divergence")
    return kl_divergence(p.base_dist, q.base_dist)


def _kl_cauchy_cauchy(p, q):
    """log(((γ_p + γ_q)² + (x_p − x_q)²) / (4 γ_p γ_q)) (Chyzak and Nielsen, 2019; PyTorch's)."""
    sum_of_scales, distance = p.scale + q.scale, p.loc - q.loc
    return (sum_of_scales * sum_of_scales + distance * distance).log() - (4.0 * p.scale * q.scale).log()


def _kl_folded(p, q):
    """KL(|X| ‖ |Y|) = KL(X ‖ Y) for X, Y symmetric about 0: each density doubles on x ≥ 0."""
    return kl_divergence(p.base_dist, q.base_dist)


def _kl_pareto_pareto(p, q):
    """α_q log(s_p / s_q) − log(α_q / α_p) + α_q / α_p − 1; ∞ where p reaches below q's scale."""
    ratio = q.alpha / p.alpha
    kl = q.alpha * (p.scale / q.scale).log() - ratio.log() + ratio - 1.0
    return where(p.scale.data < q.scale.data, np.inf, kl)


def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    return p.mean * (p.logits - q.logits) + p._log_norm() + (-p.probs).log1p() - q._log_norm() - (-q.probs).log1p()


def _kl_gumbel_gumbel(p, q):
    """log(β_q/β_p) + (μ_p − μ_q)/β_q + γ(β_p/β_q − 1) + e^((μ_q − μ_p)/β_q) Γ(1 + β_p/β_q) − 1 (PyTorch's)."""
    ratio = p.scale / q.scale
    return (-ratio.log() + (p.loc - q.loc) / q.scale + _EULER * ratio + ((q.loc - p.loc) / q.scale + lgamma(1.0 + ratio)).exp()
            - (1.0 + _EULER))


def _kl_binomial_binomial(p, q):
    """n (p log(p/q) + (1 − p) log((1 − p)/(1 − q))) for equal total counts; ∞ where p's exceeds q's
    (p puts mass where q has none). PyTorch's has no closed form for a smaller one, nor has minigrad."""
    if (p.total_count.data < q.total_count.data).any():
        raise NotImplementedError("kl_divergence: no closed form for (Binomial, Binomial) where q's total_count exceeds p's")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return where(p.total_count.data > q.total_count.data, np.inf, kl)


def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


def _kl_poisson_poisson(p, q):
    return _times_log(p.rate, p.rate) - _times_log(p.rate, q.rate) - (p.rate - q.rate)


def _kl_lognormal_lognormal(p, q):
    """The normals' KL: exp is one-to-one, and KL does not change under a change of variables."""
    return _kl_normal_normal(p.base_dist, q.base_dist)


def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(
            f"kl_divergence: Independent distributions of {p.reinterpreted_batch_ndims} and "
            f"{q.reinterpreted_batch_ndims} reinterpreted dimensions (PyTorch refuses them too)")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


def _kl_gamma_gamma(p, q):
    """αq log(βp/βq) + log Γ(αq) − log Γ(αp) + (αp − αq) ψ(αp) + (βq − βp) αp/βp."""
    ap, bp, aq, bq = p.concentration, p.rate, q.concentration, q.rate
    return aq * (bp / bq).log() + lgamma(aq) - lgamma(ap) + (ap - aq) * digamma(ap) + (bq - bp) * (ap / bp)


def _kl_beta_beta(p, q):
    p1, p0, q1, q0 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    return (_log_beta(q1, q0) - _log_beta(p1, p0) + (p1 - q1) * digamma(p1) + (p0 - q0) * digamma(p0)
            + (q1 + q0 - p1 - p0) * digamma(p1 + p0))


def _kl_dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    total_a, total_b = a.sum(axis=-1), b.sum(axis=-1)
    return (lgamma(total_a) - lgamma(total_b) - (lgamma(a) - lgamma(b)).sum(axis=-1)
            + ((a - b) * (digamma(a) - digamma(total_a).unsqueeze(-1))).sum(axis=-1))


_KL = {  # Chi2 is a Gamma: a pair's rule is found along the two classes' method resolution orders
    (Normal, Normal): _kl_normal_normal,
    (LogNormal, LogNormal): _kl_lognormal_lognormal,
    (Uniform, Uniform): _kl_uniform_uniform,
    (Exponential, Exponential): _kl_exponential_exponential,
    (Laplace, Laplace): _kl_laplace_laplace,
    (Gumbel, Gumbel): _kl_gumbel_gumbel,
    (ContinuousBernoulli, ContinuousBernoulli): _kl_continuous_bernoulli_continuous_bernoulli,
    (Cauchy, Cauchy): _kl_cauchy_cauchy,
    (HalfNormal, HalfNormal): _kl_folded,
    (HalfCauchy, HalfCauchy): _kl_folded,  # PyTorch's too, through its transformed pair
    (Pareto, Pareto): _kl_pareto_pareto,
    (TransformedDistribution, TransformedDistribution): _kl_transformed_transformed,
    (Poisson, Poisson): _kl_poisson_poisson,
    (Binomial, Binomial): _kl_binomial_binomial,
    (Geometric, Geometric): _kl_geometric_geometric,
    (Independent, Independent): _kl_independent_independent,
    (Gamma, Gamma): _kl_gamma_gamma,
    (Beta, Beta): _kl_beta_beta,
    (Dirichlet, Dirichlet): _kl_dirichlet_dirichlet,
    (Categorical, Categorical): _kl_categorical_categorical,
    (OneHotCategorical, OneHotCategorical): _kl_onehot_onehot,
    (Bernoulli, Bernoulli): _kl_bernoulli_bernoulli,
    (MultivariateNormal, MultivariateNormal): _kl_mvn_mvn,
    # through the dense Cholesky factor of each (O(k³)); PyTorch's has these three pairs too
    (LowRankMultivariateNormal, LowRankMultivariateNormal): _kl_mvn_mvn,
    (LowRankMultivariateNormal, MultivariateNormal): _kl_mvn_mvn,
    (MultivariateNormal, LowRankMultivariateNormal): _kl_mvn_mvn,
}


def register_kl(type_p, type_q):
    """A decorator giving `kl_divergence` a closed form for p of type_p and q of type_q
    (`torch.distributions.register_kl`): `@register_kl(MyFlow, MyFlow)` above `def kl(p, q): ...`.
    It comes before the built-in rules of the classes type_p and type_q derive from."""
    for kind in (type_p, type_q):
        if not (isinstance(kind, type) and issubclass(kind, Distribution)):
            raise TypeError(f"register_kl: expected a Distribution subclass, got {kind!r}")

    def register(rule):
        _KL[type_p, type_q] = rule
        return rule

    return register


def kl_divergence(p, q):
    """KL(p ‖ q) = E_p[log p − log q] in closed form, for two distributions of the same family
    (`torch.distributions.kl_divergence`); differentiable in both."""
    rule = next((_KL[a, b] for a in type(p).__mro__ for b in type(q).__mro__ if (a, b) in _KL), None)
    if rule is None:
        raise NotImplementedError(
            f"kl_divergence: no closed form for ({type(p).__name__}, {type(q).__name__}) in minigrad; "
            f"it has {', '.join(f'({a.__name__}, {b.__name__})' for a, b in _KL)}"
        )
    return rule(p, q)
