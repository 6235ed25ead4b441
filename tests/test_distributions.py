"""minigrad.distributions against torch.distributions in float64: log-densities, entropies, CDFs,
moments and KL divergences with their first and second derivatives in the parameters, the reparameterized
samples' gradients (the Gamma family's against 30-digit arithmetic, and every family's unbiasedness),
the statistics of seeded draws, and the checks PyTorch's validate_args makes."""

import math

import mpmath
import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import distributions as D
from oracles import compare_with_torch as _compare

TD = torch.distributions
RNG = np.random.default_rng(20261207)
LOC, SCALE, X = RNG.standard_normal(3), RNG.uniform(0.5, 2.0, 3), RNG.standard_normal((2, 3))
LOGITS, CLASSES = RNG.standard_normal((4, 5)), np.array([0, 3, 4, 1])
M = RNG.standard_normal((3, 3))
COV = M @ M.T + np.eye(3)


def test_normal():
    _compare(lambda m, s, v: D.Normal(m, s).log_prob(v), lambda m, s, v: TD.Normal(m, s).log_prob(v), [LOC, SCALE, X], second=True)
    _compare(lambda s: D.Normal(0.0, s).entropy(), lambda s: TD.Normal(0.0, s).entropy(), [SCALE], second=True)
    _compare(lambda m, s, v: D.Normal(m, s).cdf(v), lambda m, s, v: TD.Normal(m, s).cdf(v), [LOC, SCALE, X], second=True)
    n = D.Normal(mg.tensor(LOC), mg.tensor(SCALE))
    np.testing.assert_allclose(n.stddev.data, SCALE)
    assert n.batch_shape == (3,) and n.event_shape == () and n.mean.shape == (3,)


@pytest.mark.parametrize("form", ["probs", "logits"])
def test_categorical(form):
    params = np.exp(LOGITS) if form == "probs" else LOGITS
    _compare(lambda p: D.Categorical(**{form: p}).log_prob(CLASSES), lambda p: TD.Categorical(**{form: p}).log_prob(torch.tensor(CLASSES)), [params], second=True)
    _compare(lambda p: D.Categorical(**{form: p}).entropy(), lambda p: TD.Categorical(**{form: p}).entropy(), [params], second=True)
    _compare(lambda p: D.Categorical(**{form: p}).probs, lambda p: TD.Categorical(**{form: p}).probs, [params])
    undefined = D.Categorical(**{form: params})
    for statistic in ("mean", "variance", "stddev"):  # NaN for classes, as in PyTorch
        assert getattr(undefined, statistic).shape == (4,) and np.isnan(getattr(undefined, statistic).data).all()


def test_categorical_with_an_impossible_class():
    """A class of probability 0 has the log-probability log ε, finite, as in PyTorch; the KL
    divergence to a distribution that gives it 0 is ∞, from one that gives it 0 finite."""
    probs = np.array([0.5, 0.0, 0.5])
    assert D.Categorical(probs=probs).log_prob(1).item() == pytest.approx(np.log(np.finfo(np.float64).eps))
    _compare(lambda p: D.Categorical(probs=p).entropy(), lambda p: TD.Categorical(probs=p).entropy(), [probs])
    _compare(lambda p: D.Categorical(probs=p).log_prob(CLASSES[:1]), lambda p: TD.Categorical(probs=p).log_prob(torch.tensor(CLASSES[:1])), [probs])
    full = np.array([0.2, 0.3, 0.5])
    assert D.kl_divergence(D.Categorical(probs=full), D.Categorical(probs=probs)).item() == np.inf
    _compare(lambda a, b: D.kl_divergence(D.Categorical(probs=a), D.Categorical(probs=b)), lambda a, b: TD.kl_divergence(TD.Categorical(probs=a), TD.Categorical(probs=b)), [probs, full])


@pytest.mark.parametrize("form", ["probs", "logits"])
def test_bernoulli(form, rng):
    params = rng.uniform(0.1, 0.9, 5) if form == "probs" else rng.standard_normal(5)
    value = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    _compare(lambda p: D.Bernoulli(**{form: p}).log_prob(value), lambda p: TD.Bernoulli(**{form: p}).log_prob(torch.tensor(value)), [params], second=True)
    _compare(lambda p: D.Bernoulli(**{form: p}).entropy(), lambda p: TD.Bernoulli(**{form: p}).entropy(), [params], second=True)


def test_bernoulli_logits_do_not_overflow():
    assert D.Bernoulli(logits=mg.tensor([800.0])).log_prob(mg.tensor([0.0])).item() == -800.0


@pytest.mark.parametrize("form", ["covariance_matrix", "scale_tril", "precision_matrix"])
def test_multivariate_normal(form, rng):
    matrix = {"covariance_matrix": COV, "scale_tril": np.linalg.cholesky(COV), "precision_matrix": np.linalg.inv(COV)}[form]
    value = rng.standard_normal((4, 3))
    _compare(lambda m, c: D.MultivariateNormal(m, **{form: c}).log_prob(value), lambda m, c: TD.MultivariateNormal(m, **{form: c}).log_prob(torch.tensor(value)), [LOC, matrix], second=True)
    _compare(lambda c: D.MultivariateNormal(mg.tensor(LOC), **{form: c}).entropy(), lambda c: TD.MultivariateNormal(torch.tensor(LOC), **{form: c}).entropy(), [matrix])


def test_a_batch_of_multivariate_normals(rng):
    locs, factors = rng.standard_normal((2, 3)), rng.standard_normal((2, 3, 3))

    def make(lib, dist):
        return lambda m, f: dist.MultivariateNormal(m, covariance_matrix=f @ f.mT + lib.eye(3, dtype=f.dtype)).log_prob(lib.tensor(X))

    _compare(make(mg, D), make(torch, TD), [locs, factors], second=True)
    mvn = D.MultivariateNormal(locs, scale_tril=np.tril(factors) + 3 * np.eye(3))
    assert mvn.batch_shape == (2,) and mvn.event_shape == (3,) and mvn.sample((5,)).shape == (5, 2, 3)


def test_uniform():
    low, high = np.array([0.0, -1.0]), np.array([1.0, 2.0])
    _compare(lambda a, b: D.Uniform(a, b).log_prob(mg.tensor([0.5, 0.0])), lambda a, b: TD.Uniform(a, b).log_prob(torch.tensor([0.5, 0.0])), [low, high])
    _compare(lambda a, b: D.Uniform(a, b).entropy(), lambda a, b: TD.Uniform(a, b).entropy(), [low, high])
    assert D.Uniform(0.0, 1.0).log_prob(1.5).item() == -np.inf


@pytest.mark.parametrize(
    "pair",
    [
        lambda lib, d, a, b: (d.Normal(a[0], a[1] ** 2 + 0.5), d.Normal(b[0], b[1] ** 2 + 0.5)),
        lambda lib, d, a, b: (d.Categorical(logits=a), d.Categorical(logits=b)),
        lambda lib, d, a, b: (d.Bernoulli(logits=a[0]), d.Bernoulli(logits=b[0])),
        lambda lib, d, a, b: (
            d.MultivariateNormal(a[0, :3], scale_tril=lib.tril(a[:3, :3] * 0.3) + lib.eye(3, dtype=a.dtype)),
            d.MultivariateNormal(b[0, :3], covariance_matrix=b[:3, :3] @ b[:3, :3].mT + lib.eye(3, dtype=b.dtype)),
        ),
        lambda lib, d, a, b: (d.Uniform(a[0], a[0] + 1.0 + a[1] ** 2), d.Uniform(a[0] - 1.0 - b[0] ** 2, a[0] + 2.0 + a[1] ** 2 + b[1] ** 2)),
    ],
    ids=["normal", "categorical", "bernoulli", "multivariate-normal", "uniform"],
)
def test_kl_divergence(pair, rng):
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    _compare(lambda x, y: D.kl_divergence(*pair(mg, D, x, y)), lambda x, y: TD.kl_divergence(*pair(torch, TD, x, y)), [a, b], second=True)


# --------------------------------------------------------------------------- more families
DF = np.array([0.7, 1.5, 2.0, 4.0])  # StudentT: no mean, infinite variance, the border, finite
COUNTS = np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 5.0]])
PROBS = RNG.uniform(0.1, 0.6, 3)  # success probabilities, below 1 also after the KL test's + 0.25
SHAPES = RNG.uniform(0.5, 3.0, 3)
CB_PROBS = np.array([0.2, 0.5004, 0.7])  # the middle one inside the window of Taylor series around 1/2
IG_CONC = np.array([0.7, 1.5, 3.0])  # InverseGamma: mean and variance ∞, variance ∞, both finite
K_CONC1, K_CONC0 = np.array([0.6, 2.0, 3.5]), np.array([1.7, 0.5, 2.5])  # Kumaraswamy: a peak at 0, at 1, inside
K_VALUES = np.array([[0.1, 0.35, 0.6], [0.85, 0.97, 0.03]])
F_DF1, F_DF2 = np.array([1.5, 3.0, 5.0]), np.array([4.5, 6.0, 9.0])  # FisherSnedecor: every moment defined (df2 > 4)
GP_CONC = np.array([0.4, -0.3, 1.2])  # GeneralizedPareto: bounded above (−0.3), no mean nor variance (1.2)
GP_Z = np.array([[0.3, 1.2, 2.5], [2.0, 0.1, 0.9]])  # standardized values, below −1/ξ = 3.3 for ξ = −0.3


class _TorchGeneralizedPareto(TD.GeneralizedPareto):
    """torch's GeneralizedPareto with its log_prob and log_survival_function as torch writes them,
    but for comparing the concentration with a 0 of its own dtype: torch 2.13's compares it with a
    float32 0 (`torch.isclose(self.concentration, torch.tensor(0.0))`), an error for float64."""

    def _safe(self):
        eq_zero = torch.isclose(self.concentration, torch.zeros_like(self.concentration))
        return eq_zero, torch.where(eq_zero, torch.ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        z, (eq_zero, safe_conc) = self._z(value), self._safe()
        y = 1 / safe_conc + torch.ones_like(z)
        where_nonzero = torch.where(y == 0, y, y * torch.log1p(safe_conc * z))
        return -self.scale.log() - torch.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        z, (eq_zero, safe_conc) = self._z(value), self._safe()
        return torch.where(eq_zero, -z, -torch.log1p(safe_conc * z) / safe_conc)


MORE = {  # name: (minigrad's distribution, torch's, its parameters, values in its support, has a cdf)
    "laplace": (D.Laplace, TD.Laplace, [LOC, SCALE], X, True),
    "cauchy": (D.Cauchy, TD.Cauchy, [LOC, SCALE], X, True),
    "gumbel": (D.Gumbel, TD.Gumbel, [LOC, SCALE], X, True),
    "lognormal": (D.LogNormal, TD.LogNormal, [LOC, SCALE], np.exp(X), True),
    "exponential": (D.Exponential, TD.Exponential, [SCALE], np.exp(X), True),
    "chi2": (D.Chi2, TD.Chi2, [2 * SCALE], np.exp(X), False),
    "studentt": (D.StudentT, TD.StudentT, [DF, RNG.standard_normal(4), RNG.uniform(0.5, 2.0, 4)], RNG.standard_normal((2, 4)), False),
    "poisson": (D.Poisson, TD.Poisson, [SCALE], COUNTS, False),
    "binomial": (D.Binomial, TD.Binomial, [np.full(3, 5.0), PROBS], COUNTS, False),
    "geometric": (D.Geometric, TD.Geometric, [PROBS], COUNTS, False),
    "negative_binomial": (D.NegativeBinomial, TD.NegativeBinomial, [np.array([0.5, 2.0, 3.5]), PROBS], COUNTS, False),
    "halfnormal": (D.HalfNormal, TD.HalfNormal, [SCALE], np.abs(X), True),
    "halfcauchy": (D.HalfCauchy, TD.HalfCauchy, [SCALE], np.abs(X), True),
    "weibull": (D.Weibull, TD.Weibull, [SCALE, SHAPES], np.exp(X), True),
    "pareto": (D.Pareto, TD.Pareto, [SCALE, SHAPES + 2.0], SCALE * (1.0 + np.exp(X)), True),  # finite variance: α > 2
    "continuous_bernoulli": (D.ContinuousBernoulli, TD.ContinuousBernoulli, [CB_PROBS], RNG.uniform(0.05, 0.95, (2, 3)), True),
    # torch's InverseGamma CDF has no derivative in the concentration: test_inverse_gamma_cdf
    "inverse_gamma": (D.InverseGamma, TD.InverseGamma, [IG_CONC, SCALE], np.exp(X), False),
    "kumaraswamy": (D.Kumaraswamy, TD.Kumaraswamy, [K_CONC1, K_CONC0], K_VALUES, True),
    "fisher_snedecor": (D.FisherSnedecor, TD.FisherSnedecor, [F_DF1, F_DF2], np.exp(X), False),
    "generalized_pareto": (D.GeneralizedPareto, _TorchGeneralizedPareto, [LOC, SCALE, GP_CONC], LOC + SCALE * GP_Z, True),
}
# whose second derivatives reach torch's trigamma (lgamma's, digamma's derivative), accurate to ~1e-9
TRIGAMMA = ("chi2", "studentt", "inverse_gamma", "kumaraswamy", "fisher_snedecor")
NO_ENTROPY = ("poisson", "negative_binomial", "fisher_snedecor")  # no closed form in PyTorch either


def _of_all(family, statistic):
    """The statistic of `family(*parameters)`, plus 0 · each parameter: one it does not depend on
    (Laplace's entropy on loc, Cauchy's mean on any) gets the gradient 0, where torch would refuse it."""

    def of(*parameters):
        value = getattr(family(*parameters), statistic)
        return (value() if callable(value) else value) + 0.0 * sum(p.sum() for p in parameters)

    return of


@pytest.mark.parametrize("name", MORE)
def test_more_families_as_torch(name):
    """Densities, CDFs, entropies and moments with their first and second derivatives (StudentT's
    undefined moments NaN and ∞ where PyTorch's are, with gradient 0 there as in PyTorch)."""
    ours, theirs, params, values, has_cdf = MORE[name]
    n = len(params)
    rtol = 1e-8 if name in TRIGAMMA else 1e-10
    _compare(lambda *t: ours(*t[:n]).log_prob(t[n]), lambda *t: theirs(*t[:n]).log_prob(t[n]), params + [values], second=True, rtol=rtol)
    if has_cdf:
        _compare(lambda *t: ours(*t[:n]).cdf(t[n]), lambda *t: theirs(*t[:n]).cdf(t[n]), params + [values], second=True)
    if name in NO_ENTROPY:
        with pytest.raises(NotImplementedError, match=f"{ours.__name__} has no entropy"):
            ours(*params).entropy()
    else:
        _compare(*(_of_all(family, "entropy") for family in (ours, theirs)), params, second=True, rtol=rtol)
    with np.errstate(invalid="ignore"):  # Cauchy's infinite variance, weighted by both signs, sums to NaN
        for statistic in ("mean", "variance", "stddev"):  # Kumaraswamy's moments are lgamma's
            _compare(*(_of_all(family, statistic) for family in (ours, theirs)), params, second=True, rtol=rtol if name == "kumaraswamy" else 1e-10)
    d, t = ours(*params), theirs(*map(torch.tensor, params))
    assert (d.batch_shape, d.event_shape, d.has_rsample) == (tuple(t.batch_shape), tuple(t.event_shape), t.has_rsample)


PROBABILITIES = np.array([[1e-12, 0.01, 0.3], [0.5, 0.97, 1 - 1e-12]])
# where torch's normal quantile keeps its digits, and not the median, where torch's Laplace CDF has
# the derivative 0 (sign(0) = 0) where its density is 1/(2b)
MIDDLE = np.array([[0.01, 0.3, 0.45], [0.97, 0.2, 0.8]])
QUANTILES = {  # name: (minigrad's distribution, torch's, its parameters, ones at location 0)
    "normal": (D.Normal, TD.Normal, [LOC, SCALE], [0.0 * LOC, SCALE]),
    "uniform": (D.Uniform, TD.Uniform, [LOC, LOC + SCALE], [0.0 * LOC, SCALE]),
    "laplace": (D.Laplace, TD.Laplace, [LOC, SCALE], [0.0 * LOC, SCALE]),
    "cauchy": (D.Cauchy, TD.Cauchy, [LOC, SCALE], [0.0 * LOC, SCALE]),
    "exponential": (D.Exponential, TD.Exponential, [SCALE], [SCALE]),
    "lognormal": (D.LogNormal, TD.LogNormal, [LOC, SCALE], [0.0 * LOC, SCALE]),
    "halfnormal": (D.HalfNormal, TD.HalfNormal, [SCALE], [SCALE]),
    "halfcauchy": (D.HalfCauchy, TD.HalfCauchy, [SCALE], [SCALE]),
    "weibull": (D.Weibull, TD.Weibull, [SCALE, SHAPES], [SCALE, SHAPES]),
    "pareto": (D.Pareto, TD.Pareto, [SCALE, SHAPES], [SCALE, SHAPES]),
    "continuous_bernoulli": (D.ContinuousBernoulli, TD.ContinuousBernoulli, [CB_PROBS], [CB_PROBS]),
    "kumaraswamy": (D.Kumaraswamy, TD.Kumaraswamy, [K_CONC1, K_CONC0], [K_CONC1, K_CONC0]),
    "generalized_pareto": (D.GeneralizedPareto, _TorchGeneralizedPareto, [LOC, SCALE, GP_CONC], [0.0 * LOC, SCALE, GP_CONC]),
}


@pytest.mark.parametrize("name", QUANTILES)
def test_quantiles_as_torch_and_inverse_to_the_cdf(name):
    """icdf (the quantile function, what inverse-transform sampling and confidence bounds use) and
    cdf against torch's to second order in the parameters and the value; cdf(icdf(p)) = p out to
    1e-12 from either end, where PyTorch's Normal, Laplace and Cauchy CDFs cancel (at location 0:
    elsewhere loc + a tail quantile itself rounds); a probability outside [0, 1] is named."""
    ours, theirs, params, at_zero = QUANTILES[name]
    n = len(params)
    _compare(lambda *t: ours(*t[:n]).icdf(t[n]), lambda *t: theirs(*t[:n]).icdf(t[n]), params + [MIDDLE], second=True)
    values = ours(*params).icdf(MIDDLE).data
    _compare(lambda *t: ours(*t[:n]).cdf(t[n]), lambda *t: theirs(*t[:n]).cdf(t[n]), params + [values], second=True)
    d = ours(*at_zero)
    # a Pareto quantile next to its scale xₘ is xₘ (1 + 1e-12/α), which rounds by 1e-4 of its excess
    np.testing.assert_allclose(d.cdf(d.icdf(PROBABILITIES)).data, PROBABILITIES, rtol=1e-3 if name == "pareto" else 1e-11)
    with pytest.raises(ValueError, match=f"{type(d).__name__}.icdf: values must be probabilities in \\[0, 1\\], got \\[1.5\\]"):
        d.icdf(mg.tensor([1.5]))


def test_normal_tails_keep_their_digits():
    """Φ⁻¹ and Φ within a few ulp of 400-digit arithmetic out to p = 1e-300 and 1 − 1e-16, where
    PyTorch's erfinv(2p − 1) and (1 + erf(z/√2))/2 lose the tail's digits (0.002 % at p = 1e-12)."""
    mpmath.mp.dps = 400
    p = np.array([5e-324, 1e-300, 1e-100, 1e-12, 0.02, 0.5, 0.75, 1 - 1e-12, 1 - 2**-53])
    want = np.array([float(mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(float(v)) - 1)) for v in p])
    got = D.Normal(0.0, 1.0).icdf(p).data
    assert np.all(np.abs(got - want) <= 2 * np.spacing(np.abs(want))), (got, want)
    np.testing.assert_array_equal(mg.ndtri(np.array([0.0, 1.0, 0.5])).data, [-np.inf, np.inf, 0.0])
    assert np.isnan(mg.ndtri(np.array([-0.1, 1.1, np.nan])).data).all()
    z = np.array([-38.0, -20.0, -7.0, 0.3])
    cdf = D.Normal(0.0, 1.0).cdf(z).data
    # erfc(x) is as accurate as x is: z/√2 rounds by ε, and erfc(x)'s relative condition number is 2x²
    np.testing.assert_allclose(cdf, [float(mpmath.ncdf(v)) for v in z], rtol=1e-13)


def test_gumbel_quantiles():
    """The Gumbel quantile μ − β log(−log p), inverse to the CDF from 1e-12 to 1 − 1e-9 (torch's,
    through a Uniform(tiny, 1 − ε), is off by ~1e-7 relative)."""
    d = D.Gumbel(mg.tensor(LOC), mg.tensor(SCALE))
    p = np.array([[1e-12, 0.01, 0.3], [0.5, 0.97, 1 - 1e-9]])
    np.testing.assert_allclose(d.cdf(d.icdf(p)).data, p, rtol=1e-12)
    _compare(lambda m, s, v: D.Gumbel(m, s).icdf(v), lambda m, s, v: m - s * torch.log(-torch.log(v)), [LOC, SCALE, MIDDLE], second=True)


@pytest.mark.parametrize("name", [name for name in MORE if name != "binomial"])  # test_kl_divergence_of_binomials
def test_kl_divergence_of_more_families(name):
    ours, theirs, params, _, _ = MORE[name]
    others = [np.ascontiguousarray(p[::-1]) + 0.25 for p in params]
    if name == "pareto":  # q's scale below p's: finite (p's support inside q's); the other way round it is ∞
        others[0] = params[0] * 0.5
        assert np.isinf(D.kl_divergence(ours(*others), ours(*params)).data).all()
    # no closed form in PyTorch either (Kumaraswamy's: only between the same maps of one uniform, 0)
    if name in ("studentt", "negative_binomial", "weibull", "kumaraswamy", "fisher_snedecor", "generalized_pareto"):
        with pytest.raises(NotImplementedError, match=f"no closed form for \\({ours.__name__}, {ours.__name__}\\)"):
            D.kl_divergence(ours(*params), ours(*others))
        if name in ("kumaraswamy", "fisher_snedecor", "generalized_pareto"):
            with pytest.raises(NotImplementedError):
                TD.kl_divergence(theirs(*map(torch.tensor, params)), theirs(*map(torch.tensor, others)))
        return
    n = len(params)
    _compare(lambda *t: D.kl_divergence(ours(*t[:n]), ours(*t[n:])), lambda *t: TD.kl_divergence(theirs(*t[:n]), theirs(*t[n:])),
             params + others, second=True, rtol=GAMMA_RTOL)


def test_independent_reads_batch_dimensions_as_an_event(rng):
    """A VAE's diagonal Gaussian, `Independent(Normal(mu, sigma), 1)`: one log-density per vector,
    its entropy and KL summed over the vector, as torch's Independent."""
    mu, sigma, value = rng.standard_normal((4, 3)), rng.uniform(0.5, 2.0, (4, 3)), rng.standard_normal((4, 3))
    _compare(lambda m, s, v: D.Independent(D.Normal(m, s), 1).log_prob(v), lambda m, s, v: TD.Independent(TD.Normal(m, s), 1).log_prob(v),
             [mu, sigma, value], second=True)
    _compare(lambda s: D.Independent(D.Normal(mu, s), 2).entropy(), lambda s: TD.Independent(TD.Normal(torch.tensor(mu), s), 2).entropy(), [sigma], second=True)
    _compare(lambda m, s: D.kl_divergence(D.Independent(D.Normal(m, s), 1), D.Independent(D.Normal(0.0 * m, 1.0 + 0.0 * s), 1)),
             lambda m, s: TD.kl_divergence(TD.Independent(TD.Normal(m, s), 1), TD.Independent(TD.Normal(0.0 * m, 1.0 + 0.0 * s), 1)),
             [mu, sigma], second=True)
    d = D.Independent(D.Dirichlet(rng.uniform(0.5, 2.0, (2, 4, 3))), 1)
    assert (d.batch_shape, d.event_shape) == ((2,), (4, 3)) and d.has_rsample
    assert d.rsample((5,)).shape == (5, 2, 4, 3) and d.log_prob(d.sample()).shape == (2,)
    assert not D.Independent(D.Bernoulli(probs=np.full((2, 3), 0.5)), 1).has_rsample
    assert repr(D.Independent(D.Normal(mu, sigma), 1)) == "Independent(Normal(loc: (4, 3), scale: (4, 3)), 1)"
    with pytest.raises(mg.ShapeError, match=r"Independent: reinterpreted_batch_ndims must be in \[0, 2\].*\(4, 3\)\), got 3"):
        D.Independent(D.Normal(mu, sigma), 3)
    with pytest.raises(NotImplementedError, match="Independent distributions of 1 and 2 reinterpreted dimensions"):
        D.kl_divergence(D.Independent(D.Normal(mu, sigma), 1), D.Independent(D.Normal(mu, sigma), 2))


def test_one_hot_categorical_as_torch():
    onehot = np.eye(5)[CLASSES]
    _compare(lambda l: D.OneHotCategorical(logits=l).log_prob(onehot), lambda l: TD.OneHotCategorical(logits=l).log_prob(torch.tensor(onehot)), [LOGITS], second=True)
    for statistic in ("entropy", "mean", "variance"):
        _compare(*(_of_all(lambda l, f=family: f(logits=l), statistic) for family in (D.OneHotCategorical, TD.OneHotCategorical)), [LOGITS], second=True)
    _compare(lambda a, b: D.kl_divergence(D.OneHotCategorical(logits=a), D.OneHotCategorical(logits=b)),
             lambda a, b: TD.kl_divergence(TD.OneHotCategorical(logits=a), TD.OneHotCategorical(logits=b)), [LOGITS, LOGITS[::-1].copy()], second=True)
    mg.manual_seed(7)
    draws = D.OneHotCategorical(probs=[0.2, 0.5, 0.3]).sample((40_000,))
    assert draws.shape == (40_000, 3) and ((draws.data == 0) | (draws.data == 1)).all() and (draws.data.sum(-1) == 1).all()
    np.testing.assert_allclose(draws.data.mean(0), [0.2, 0.5, 0.3], atol=0.01)
    with pytest.raises(ValueError, match=r"OneHotCategorical.log_prob: values must be one-hot vectors"):
        D.OneHotCategorical(probs=[0.2, 0.8]).log_prob([1.0, 1.0])


MIXTURES = {  # name: (minigrad's mixture of the arrays, torch's, the arrays: logits, then the components' parameters, then a value)
    "gaussian mixture": (lambda w, m, s, x: D.MixtureSameFamily(D.Categorical(logits=w), D.Normal(m, s)),
                         lambda w, m, s, x: TD.MixtureSameFamily(TD.Categorical(logits=w), TD.Normal(m, s)),
                         [RNG.standard_normal(3), RNG.standard_normal(3), RNG.uniform(0.5, 2.0, 3), 2 * RNG.standard_normal((4, 1))]),
    "mixture density network": (  # a batch of 5 mixtures of 3 two-dimensional diagonal Gaussians
        lambda w, m, s, x: D.MixtureSameFamily(D.Categorical(logits=w), D.Independent(D.Normal(m, s), 1)),
        lambda w, m, s, x: TD.MixtureSameFamily(TD.Categorical(logits=w), TD.Independent(TD.Normal(m, s), 1)),
        [RNG.standard_normal((5, 3)), RNG.standard_normal((5, 3, 2)), RNG.uniform(0.5, 2.0, (5, 3, 2)), RNG.standard_normal((5, 2))]),
}


@pytest.mark.parametrize("name", MIXTURES)
def test_mixture_same_family_as_torch(name):
    ours, theirs, arrays = MIXTURES[name]
    _compare(lambda *t: ours(*t).log_prob(t[-1]), lambda *t: theirs(*t).log_prob(t[-1]), arrays, second=True)
    if name == "gaussian mixture":
        _compare(lambda *t: ours(*t).cdf(t[-1]), lambda *t: theirs(*t).cdf(t[-1]), arrays, second=True)
    for statistic in ("mean", "variance"):
        _compare(*(_of_all(lambda w, m, s, f=family: f(w, m, s, None), statistic) for family in (ours, theirs)), arrays[:3], second=True)
    d, t = ours(*arrays), theirs(*map(torch.tensor, arrays))
    assert (d.batch_shape, d.event_shape, d.has_rsample) == (tuple(t.batch_shape), tuple(t.event_shape), t.has_rsample)
    mg.manual_seed(8)
    draws = d.sample((60_000,)).data
    assert draws.shape == (60_000,) + tuple(t.batch_shape) + tuple(t.event_shape)
    standard_error = np.sqrt(d.variance.data / len(draws))
    assert (np.abs(draws.mean(0) - d.mean.data) < 5 * standard_error).all()
    np.testing.assert_allclose(draws.var(0), d.variance.data, rtol=0.05)


def test_one_mixture_of_a_batch_of_components():
    """The mixture's weights broadcast over the components' batch: 4 Gaussian mixtures sharing one
    set of 3 weights; each draw is one of its own row's components."""
    weights, means = np.log([0.2, 0.3, 0.5]), np.array([[-10.0, 0.0, 10.0]]) + 100.0 * np.arange(4)[:, None]
    d = D.MixtureSameFamily(D.Categorical(logits=weights), D.Normal(means, 0.01))
    t = TD.MixtureSameFamily(TD.Categorical(logits=torch.tensor(weights)), TD.Normal(torch.tensor(means), 0.01))
    value = means[:, 1] + 0.005
    np.testing.assert_allclose(d.log_prob(value).data, t.log_prob(torch.tensor(value)).numpy(), rtol=1e-12)
    mg.manual_seed(9)
    draws = d.sample((20_000,)).data
    assert draws.shape == (20_000, 4) and d.batch_shape == (4,)
    nearest = np.abs(draws[..., None] - means).argmin(-1)  # which component each draw came from
    assert (np.abs(draws - np.take_along_axis(np.broadcast_to(means, draws.shape + (3,)), nearest[..., None], -1)[..., 0]) < 0.1).all()
    np.testing.assert_allclose((nearest[..., None] == np.arange(3)).mean((0, 1)), [0.2, 0.3, 0.5], atol=0.01)


def test_mixture_same_family_names_what_does_not_fit():
    with pytest.raises(TypeError, match="mixture_distribution must be a Categorical, got Normal"):
        D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(np.zeros(3), 1.0))
    with pytest.raises(mg.ShapeError, match=r"batch_shape \(4,\) must end in the mixture's 3 components"):
        D.MixtureSameFamily(D.Categorical(logits=np.zeros(3)), D.Normal(np.zeros(4), 1.0))
    with pytest.raises(mg.ShapeError, match=r"a shape the mixture's batch_shape \(2,\) broadcasts to"):
        D.MixtureSameFamily(D.Categorical(logits=np.zeros((2, 3))), D.Normal(np.zeros((4, 3)), 1.0))
    with pytest.raises(NotImplementedError, match="MixtureSameFamily has no entropy"):
        D.MixtureSameFamily(D.Categorical(logits=np.zeros(3)), D.Normal(np.zeros(3), 1.0)).entropy()


def _ks_distance(draws, cdf):
    """The Kolmogorov–Smirnov distance between the draws' empirical CDF and `cdf`."""
    x = np.sort(draws)
    levels = np.arange(1, len(x) + 1) / len(x)
    return np.max(np.maximum(levels - cdf(x), cdf(x) - (levels - 1 / len(x))))


def _student_t3_cdf(x, df, loc, scale):
    """The CDF of Student's t with 3 degrees of freedom in closed form (torch has none)."""
    assert df == 3.0
    t = (x - loc) / scale / np.sqrt(3.0)
    return 0.5 + (np.arctan(t) + t / (1 + t * t)) / np.pi


def _fisher_df1_2_cdf(x, df1, df2):
    """The CDF of F(2, df2) in closed form, 1 − (1 + 2x/df2)^(−df2/2) (torch has none): the
    regularized incomplete beta function I_w(1, df2/2) of w = 2x/(2x + df2) is 1 − (1 − w)^(df2/2)."""
    assert df1 == 2.0
    return 1.0 - (1.0 + 2.0 * x / df2) ** (-df2 / 2)


def test_seeded_draws_of_more_families_follow_their_distributions():
    """40,000 seeded draws of each: a Kolmogorov–Smirnov distance below 0.01 from its CDF (the 1 %
    critical value is 0.008), torch's where it has one; Poisson counts by their moments."""
    mg.manual_seed(6)
    for ours, theirs, params in [(D.Laplace, TD.Laplace, (0.5, 2.0)), (D.Cauchy, TD.Cauchy, (-1.0, 0.5)), (D.Exponential, TD.Exponential, (1.5,)), (D.Gumbel, TD.Gumbel, (0.5, 2.0)),
                                 (D.HalfNormal, TD.HalfNormal, (1.5,)), (D.HalfCauchy, TD.HalfCauchy, (0.5,)), (D.Weibull, TD.Weibull, (2.0, 0.7)),
                                 (D.Pareto, TD.Pareto, (1.0, 3.0)),
                                 (D.LogNormal, TD.LogNormal, (0.3, 0.8)), (D.Chi2, TD.Chi2, (3.0,)),
                                 (D.InverseGamma, TD.InverseGamma, (2.5, 1.5)), (D.Kumaraswamy, TD.Kumaraswamy, (0.7, 2.5)),
                                 (D.GeneralizedPareto, _TorchGeneralizedPareto, (0.5, 2.0, 0.3)),
                                 (D.GeneralizedPareto, _TorchGeneralizedPareto, (-1.0, 0.5, -0.4)),
                                 (D.StudentT, _student_t3_cdf, (3.0, 1.0, 2.0)), (D.FisherSnedecor, _fisher_df1_2_cdf, (2.0, 5.0))]:
        draws = ours(*params).sample((40_000,)).data
        if not isinstance(theirs, type):  # a closed form (torch has none)
            cdf = lambda x: theirs(x, *params)  # noqa: E731
        else:
            cdf = lambda x: theirs(*map(torch.tensor, params)).cdf(torch.from_numpy(x)).numpy()  # noqa: E731
        distance = _ks_distance(draws, cdf)
        assert distance < 0.01, f"{ours.__name__}{params}: Kolmogorov–Smirnov distance {distance:.4f}"
    for family in (D.Poisson(mg.tensor([0.5, 4.0])), D.Binomial(mg.tensor([3.0, 20.0]), probs=mg.tensor([0.5, 0.1])),
                   D.Geometric(probs=mg.tensor([0.3, 0.8])), D.NegativeBinomial(mg.tensor([0.5, 4.0]), probs=mg.tensor([0.6, 0.3]))):
        counts = family.sample((40_000,))
        assert counts.dtype == np.float64 and (counts.data == np.round(counts.data)).all() and (counts.data >= 0).all()
        np.testing.assert_allclose(counts.data.mean(0), family.mean.data, rtol=0.03, err_msg=repr(family))
        np.testing.assert_allclose(counts.data.var(0), family.variance.data, rtol=0.06, err_msg=repr(family))


def test_kl_divergence_of_binomials():
    """Equal total counts: torch's closed form, to second order; p's total count above q's: ∞ (p
    puts mass on counts q cannot reach); below: refused by name, as in PyTorch."""
    n, p, q = np.full(3, 6.0), PROBS, PROBS[::-1].copy()
    _compare(lambda a, b: D.kl_divergence(D.Binomial(n, a), D.Binomial(n, b)),
             lambda a, b: TD.kl_divergence(TD.Binomial(torch.tensor(n), a), TD.Binomial(torch.tensor(n), b)), [p, q], second=True)
    kl = D.kl_divergence(D.Binomial(np.array([6.0, 7.0, 6.0]), p), D.Binomial(n, q)).data
    assert np.isinf(kl[1]) and np.isfinite(kl[[0, 2]]).all()
    with pytest.raises(NotImplementedError, match="q's total_count exceeds p's"):
        D.kl_divergence(D.Binomial(n, p), D.Binomial(n + 1.0, q))


@pytest.mark.parametrize("form", ["probs", "logits"])
def test_multinomial_as_torch(form):
    """log p of count vectors, the mean and the variance against torch's to second order; the
    entropy against the sum over all 56 count vectors of 5 draws of 4 classes (torch's takes
    log 5! in float32 and is 6e-8 off); seeded draws' moments; bad values named."""
    logits = np.random.default_rng(12).standard_normal((2, 4))
    params = np.exp(logits) if form == "probs" else logits
    values = np.array([[1.0, 0.0, 3.0, 1.0], [0.0, 0.0, 5.0, 0.0]])
    _compare(lambda p: D.Multinomial(5, **{form: p}).log_prob(values), lambda p: TD.Multinomial(5, **{form: p}).log_prob(torch.tensor(values)),
             [params], second=True)
    for statistic in ("mean", "variance"):
        _compare(lambda p: getattr(D.Multinomial(5, **{form: p}), statistic), lambda p: getattr(TD.Multinomial(5, **{form: p}), statistic),
                 [params], second=True)
    d = D.Multinomial(5, **{form: mg.tensor(params)})
    every = np.array([c for c in np.ndindex(6, 6, 6, 6) if sum(c) == 5], dtype=np.float64)
    log_p = d.log_prob(mg.tensor(every[:, None, :])).data  # (56, 2)
    np.testing.assert_allclose(np.exp(log_p).sum(0), 1.0, rtol=1e-13)
    np.testing.assert_allclose(d.entropy().data, -(np.exp(log_p) * log_p).sum(0), rtol=1e-13)
    assert (d.batch_shape, d.event_shape) == ((2,), (4,))
    mg.manual_seed(4)
    draws = d.sample((20_000,)).data
    assert draws.shape == (20_000, 2, 4) and (draws.sum(-1) == 5).all()
    np.testing.assert_allclose(draws.mean(0), d.mean.data, atol=0.05)
    np.testing.assert_allclose(draws.var(0), d.variance.data, rtol=0.06, atol=0.01)
    with pytest.raises(ValueError, match=r"Multinomial.log_prob: values must be count vectors summing to total_count \(5\)"):
        d.log_prob(np.array([1.0, 1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="Multinomial: total_count must be a whole number ≥ 0 \\(one for the whole batch"):
        D.Multinomial(np.array([2, 3]), probs=[0.5, 0.5])


def test_count_families_name_bad_parameters_and_values():
    """Binomial's entropy sums over each entry's own total count, where PyTorch needs one for all."""
    for call, message in [
        (lambda: D.Binomial(2.5, probs=0.5), r"Binomial: total_count must be a whole number ≥ 0, got \[2.5\]"),
        (lambda: D.Binomial(3, probs=0.5).log_prob(4.0), r"Binomial.log_prob: values must be counts \(whole numbers ≥ 0, at most total_count\), got \[4.0\]"),
        (lambda: D.Geometric(probs=0.0), r"Geometric: probs must lie in \(0, 1\], got \[0.0\]"),
        (lambda: D.Geometric(probs=0.5).log_prob(1.5), r"Geometric.log_prob: values must be counts \(whole numbers ≥ 0\), got \[1.5\]"),
        (lambda: D.NegativeBinomial(2.0, probs=1.0), r"NegativeBinomial: probs must lie in \[0, 1\), got \[1.0\]"),
        (lambda: D.NegativeBinomial(-1.0, probs=0.5), r"NegativeBinomial: total_count must be ≥ 0, got \[-1.0\]"),
    ]:
        with pytest.raises(ValueError, match=message):
            call()
    entropy = D.Binomial(mg.tensor([3.0, 7.0]), probs=mg.tensor([0.3, 0.6])).entropy().data
    want = [TD.Binomial(n, torch.tensor(p, dtype=torch.float64)).entropy().item() for n, p in [(3, 0.3), (7, 0.6)]]
    np.testing.assert_allclose(entropy, want, rtol=1e-13)
    assert D.Geometric(probs=1.0).log_prob(0.0).item() == 0.0 and D.NegativeBinomial(0.0, probs=0.3).log_prob(0.0).item() == 0.0


# --------------------------------------------------------------------------- the Gamma family
# Their second derivatives reach torch's trigamma, accurate to ~1e-9 (tests/oracles.py, ORACLE_RTOL)
GAMMA_RTOL = 1e-8
CONC, RATE = RNG.uniform(0.5, 3.0, 3), RNG.uniform(0.5, 3.0, 3)
POSITIVE, UNIT = RNG.uniform(0.1, 4.0, (2, 3)), RNG.uniform(0.05, 0.95, (2, 3))
ALPHA, SIMPLEX = RNG.uniform(0.5, 3.0, (2, 4)), RNG.dirichlet(np.ones(4), size=2)
FAMILY = {  # name: (minigrad's distribution, torch's, its parameters, values in its support)
    "gamma": (D.Gamma, TD.Gamma, [CONC, RATE], POSITIVE),
    "beta": (D.Beta, TD.Beta, [CONC, RATE], UNIT),
    "dirichlet": (D.Dirichlet, TD.Dirichlet, [ALPHA], SIMPLEX),
}


@pytest.mark.parametrize("name", FAMILY)
def test_the_gamma_family_as_torch(name):
    ours, theirs, params, values = FAMILY[name]
    n = len(params)
    _compare(lambda *t: ours(*t[:n]).log_prob(t[n]), lambda *t: theirs(*t[:n]).log_prob(t[n]), params + [values], second=True, rtol=GAMMA_RTOL)
    _compare(lambda *t: ours(*t).entropy(), lambda *t: theirs(*t).entropy(), params, second=True, rtol=GAMMA_RTOL)
    for statistic in ("mean", "variance", "stddev"):
        _compare(lambda *t: getattr(ours(*t), statistic), lambda *t: getattr(theirs(*t), statistic), params, second=True)
    d, t = ours(*params), theirs(*map(torch.tensor, params))
    assert (d.batch_shape, d.event_shape) == (tuple(t.batch_shape), tuple(t.event_shape))
    assert d.has_rsample and t.has_rsample


@pytest.mark.parametrize("name", FAMILY)
def test_kl_divergence_in_the_gamma_family(name):
    ours, theirs, params, _ = FAMILY[name]
    others = [np.ascontiguousarray(p[::-1]) + 0.25 for p in params]
    n = len(params)
    _compare(lambda *t: D.kl_divergence(ours(*t[:n]), ours(*t[n:])), lambda *t: TD.kl_divergence(theirs(*t[:n]), theirs(*t[n:])),
             params + others, second=True, rtol=GAMMA_RTOL)
    assert np.allclose(D.kl_divergence(ours(*params), ours(*params)).data, 0.0, atol=1e-12)


def test_densities_at_the_edges_of_the_support_as_torch():
    """A concentration of 1 puts finite density on the edge (0 · log 0 is 0, PyTorch's xlogy)."""
    for a, b, x in [(1.0, 2.0, 0.0), (2.0, 1.0, 1.0), (1.0, 1.0, 0.0), (0.5, 2.0, 0.0)]:
        with np.errstate(divide="ignore"):  # (0.5, 2, 0): log 0, an infinite density
            got = D.Beta(a, b).log_prob(x).item()
        want = TD.Beta(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)).log_prob(torch.tensor(x, dtype=torch.float64)).item()
        assert got == pytest.approx(want, rel=1e-12) or got == want == np.inf, (a, b, x, got, want)
    vertex = np.array([1.0, 0.0, 0.0])
    concentration = np.array([2.0, 1.0, 1.0])
    assert D.Dirichlet(concentration).log_prob(vertex).item() == pytest.approx(TD.Dirichlet(torch.tensor(concentration)).log_prob(torch.tensor(vertex)).item(), rel=1e-12)
    x = mg.tensor(0.5, requires_grad=True)
    D.Beta(1.0, 2.0).log_prob(x).backward()
    assert x.grad.item() == pytest.approx(-2.0)  # d/dx log(2 (1 − x)) at 1/2


def test_seeded_draws_of_the_gamma_family():
    mg.manual_seed(2)
    gamma = D.Gamma(mg.tensor([2.0, 0.5]), mg.tensor([1.5, 3.0])).sample((40000,))
    assert gamma.shape == (40000, 2) and (gamma.data > 0).all() and not gamma.requires_grad
    np.testing.assert_allclose(gamma.data.mean(0), [2.0 / 1.5, 0.5 / 3.0], rtol=0.02)
    np.testing.assert_allclose(gamma.data.var(0), [2.0 / 1.5**2, 0.5 / 3.0**2], rtol=0.05)
    beta = D.Beta(mg.tensor([2.0, 0.5]), 5.0).sample((40000,))
    assert ((beta.data >= 0) & (beta.data <= 1)).all()
    np.testing.assert_allclose(beta.data.mean(0), [2.0 / 7.0, 0.5 / 5.5], rtol=0.02)
    dirichlet = D.Dirichlet(mg.tensor([[1.0, 2.0, 3.0], [5.0, 5.0, 0.5]])).sample((40000,))
    assert dirichlet.shape == (40000, 2, 3)
    np.testing.assert_allclose(dirichlet.data.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(dirichlet.data.mean(0), [[1 / 6, 2 / 6, 3 / 6], [5 / 10.5, 5 / 10.5, 0.5 / 10.5]], atol=0.01)


# --------------------------------------------------------------------------- the Gamma family's rsample
def _quantile_derivative(alpha, z):
    """dz/dα at a fixed quantile, by the implicit function theorem in 30-digit arithmetic (mpmath):
    −(∂P/∂α) / p(z) for P the regularized incomplete gamma function, its α-derivative numerical."""
    mpmath.mp.dps = 30
    values = []
    for a, x in zip(np.ravel(alpha), np.ravel(z)):
        a, x = mpmath.mpf(a), mpmath.mpf(x)  # mpmath numbers pass as they are: mpmath.diff steps by 1e-30
        dp = mpmath.diff(lambda t: mpmath.gammainc(t, 0, x, regularized=True), a)
        values.append(float(-dp * mpmath.gamma(a) / (x ** (a - 1) * mpmath.exp(-x))))
    return np.reshape(values, np.shape(z))


def test_a_gamma_draws_derivative_is_its_quantiles():
    """dz/dα for seeded draws on both sides of each of PyTorch's approximations' regions (α = 0.8,
    8; z = 0.8) and far beyond, and on both sides of minigrad's two expansions' border (z = α + 1):
    against 30-digit arithmetic, and against PyTorch's `_standard_gamma_grad`, a fitted
    approximation (within ~4e-3 of the exact derivative)."""
    alpha = np.repeat([1e-3, 0.01, 0.3, 1.0, 2.5, 7.9, 8.5, 30.0, 1e3, 1e5], 12)
    z = np.maximum(np.random.default_rng(5).standard_gamma(alpha), 1e-300)  # as rsample draws them
    border = np.array([0.3, 2.5, 30.0, 1e3])
    alpha, z = np.concatenate([alpha, border, border]), np.concatenate([z, border + (1 - 1e-12), border + 1])
    got = mg.ops.standard_gamma_grad(mg.tensor(alpha), mg.tensor(z)).data
    np.testing.assert_allclose(got, _quantile_derivative(alpha, z), rtol=1e-12, atol=1e-300)
    typical = z > 1e-200  # where torch's approximation does not round to 0
    torch_approximation = torch._standard_gamma_grad(torch.tensor(alpha[typical]), torch.tensor(z[typical])).numpy()
    np.testing.assert_allclose(got[typical], torch_approximation, rtol=5e-3)


def test_a_gamma_draws_derivative_at_the_edges_and_in_float32():
    got = mg.ops.standard_gamma_grad(mg.tensor([0.01, 0.01, 0.5]), mg.tensor([0.0, 5e-324, 1e-300])).data
    assert got[0] == 0.0 and 0.0 < got[1] < 1e-310 and 0.0 < got[2] < 1e-290  # z log z → 0 with z
    single = mg.ops.standard_gamma_grad(mg.tensor(np.float32([2.0])), mg.tensor(np.float32([1.5])))
    assert single.dtype == np.float32
    np.testing.assert_allclose(single.data, _quantile_derivative(np.array([2.0]), np.array([1.5])), rtol=1e-6)


def test_gamma_rsample_differentiates_each_draw():
    """Each draw x = z / β: ∂x/∂α = (dz/dα) / β with the draw's own z, ∂x/∂β = −x / β, in both modes."""
    alpha, rate = mg.tensor([0.4, 3.0], requires_grad=True), mg.tensor([2.0, 0.5], requires_grad=True)
    mg.manual_seed(3)
    draws = D.Gamma(alpha, rate).rsample((50,))
    draws.sum().backward()
    z = draws.data * rate.data
    want_alpha = (_quantile_derivative(np.broadcast_to(alpha.data, z.shape).copy(), z) / rate.data).sum(0)
    np.testing.assert_allclose(alpha.grad.data, want_alpha, rtol=1e-6)
    np.testing.assert_allclose(rate.grad.data, -(draws.data / rate.data).sum(0), rtol=1e-12)
    mg.manual_seed(3)
    _, tangent = mg.jvp(lambda a: D.Gamma(a, rate.detach()).rsample((50,)).sum(), (alpha.detach(),), (mg.tensor([1.0, 0.0]),))
    np.testing.assert_allclose(tangent.item(), alpha.grad.data[0], rtol=1e-12)  # the same draws, forward mode


UNBIASED = {  # name: (per-draw values of the parameters' rsample, their expectation in torch, parameters)
    "gamma": (lambda a, b: D.Gamma(a, b).rsample(), lambda a, b: a / b, [[0.3, 2.0], [1.5, 0.5]]),
    "log gamma": (lambda a, b: D.Gamma(a, b).rsample().log(), lambda a, b: torch.digamma(a) - torch.log(b), [[0.3, 2.0], [1.5, 0.5]]),
    "beta": (lambda a, b: D.Beta(a, b).rsample(), lambda a, b: a / (a + b), [[0.5, 4.0], [2.0, 0.7]]),
    "dirichlet": (lambda a: D.Dirichlet(a).rsample()[..., :1], lambda a: a[..., :1] / a.sum(-1, keepdim=True), [[0.5, 2.0, 6.0]]),
    # the other families' rsample, through a moment that depends on every parameter
    "chi2": (lambda k: D.Chi2(k).rsample(), lambda k: k, [[0.6, 5.0]]),
    "studentt": (lambda k, m, s: (D.StudentT(k, m, s).rsample() - m) ** 2, lambda k, m, s: s * s * k / (k - 2) + 0 * m, [[9.0, 12.0], [0.5, -1.0], [1.5, 0.7]]),
    "laplace": (lambda m, b: D.Laplace(m, b).rsample() ** 2, lambda m, b: m * m + 2 * b * b, [[0.5, -1.0], [1.5, 0.7]]),
    "lognormal": (lambda m, s: D.LogNormal(m, s).rsample(), lambda m, s: torch.exp(m + s * s / 2), [[0.5, -1.0], [0.5, 0.3]]),
    "exponential": (lambda r: D.Exponential(r).rsample(), lambda r: 1 / r, [[0.5, 3.0]]),
    "continuous bernoulli": (lambda p: D.ContinuousBernoulli(p).rsample(), lambda p: TD.ContinuousBernoulli(p).mean, [[0.2, 0.8]]),
    "weibull": (lambda s, k: D.Weibull(s, k).rsample(), lambda s, k: s * torch.exp(torch.lgamma(1 + 1 / k)), [[0.5, 2.0], [0.7, 3.0]]),
    "inverse gamma": (lambda a, b: D.InverseGamma(a, b).rsample(), lambda a, b: b / (a - 1), [[3.0, 4.5], [1.5, 0.5]]),
    "kumaraswamy": (lambda a, b: D.Kumaraswamy(a, b).rsample(), lambda a, b: TD.Kumaraswamy(a, b).mean, [[0.5, 2.0], [0.7, 3.0]]),
    # E log F = log(df2/df1) + ψ(df1/2) − ψ(df2/2): F's own mean does not depend on df1
    "log fisher snedecor": (lambda m, n: D.FisherSnedecor(m, n).rsample().log(),
                            lambda m, n: torch.log(n / m) + torch.digamma(m / 2) - torch.digamma(n / 2), [[1.5, 6.0], [3.0, 9.0]]),
    "fisher snedecor": (lambda m, n: D.FisherSnedecor(m, n).rsample(), lambda m, n: n / (n - 2) + 0 * m, [[1.5, 6.0], [9.0, 12.0]]),
    "generalized pareto": (lambda m, s, k: D.GeneralizedPareto(m, s, k).rsample(), lambda m, s, k: m + s / (1 - k),
                           [[0.5, -1.0], [1.5, 0.7], [0.2, -0.3]]),
}


@pytest.mark.parametrize("name", UNBIASED)
def test_rsample_gradients_of_the_gamma_family_are_unbiased(name):
    """E[∂x/∂θ] = ∂E[x]/∂θ: the mean gradient of 100,000 seeded draws against the gradient of the
    expectation's closed form (torch's, in float64), within five standard errors. Each draw gets its
    own copy of the parameters, so their gradients are the draws' gradients, one row each."""
    rsample, expectation, params = UNBIASED[name]
    copies = [mg.tensor(np.tile(p, (100_000, 1)), requires_grad=True) for p in params]
    mg.manual_seed(11)
    rsample(*copies).sum().backward()
    exact = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in params]
    want = torch.autograd.grad(expectation(*exact).sum(), exact)
    for i, (copy, w) in enumerate(zip(copies, want)):
        per_draw = copy.grad.data
        error = np.abs(per_draw.mean(0) - w.numpy())
        standard_error = per_draw.std(0) / np.sqrt(len(per_draw))
        assert (error <= 5 * standard_error + 1e-12).all(), f"{name}, parameter {i}: mean gradient off by {error}, standard error {standard_error}"


def test_rsample_of_the_gamma_family_refuses_a_second_derivative():
    """As in PyTorch: the draws' gradient in the concentration has no derivative in minigrad, and
    asking for one (reverse over reverse, forward over reverse) is an error that says so."""
    refusal = "standard_gamma_grad: no derivative.*has first order only, as in PyTorch"

    def draw(a):
        mg.manual_seed(0)
        return D.Beta(a, 2.0).rsample((4,)).sum()

    with pytest.raises(mg.GraphError, match=refusal):
        mg.grad(mg.grad(draw))(mg.tensor(1.5))
    with pytest.raises(mg.GraphError, match=refusal):
        mg.jvp(mg.grad(draw), (mg.tensor(1.5),), (mg.tensor(1.0),))
    rate = mg.tensor(2.0, requires_grad=True)  # in the rate, x = z / β, every order works
    mg.manual_seed(0)
    x = D.Gamma(1.5, rate).rsample()
    (second,) = mg.gradients(mg.gradients(x, [rate], create_graph=True)[0], [rate])
    assert second.item() == pytest.approx(2 * x.item() / 4.0)  # d²(z/β)/dβ² = 2z/β³ = 2x/β²


def _regularized_gamma(a, x, upper=False):
    """P(a, x) (or Q) in 30-digit arithmetic."""
    a, x = mpmath.mpf(a), mpmath.mpf(x)  # mpmath numbers pass as they are: mpmath.diff steps by 1e-30
    return mpmath.gammainc(a, x, mpmath.inf, regularized=True) if upper else mpmath.gammainc(a, 0, x, regularized=True)


def test_incomplete_gamma_functions_against_mpmath_and_torch():
    """P(a, x) and Q(a, x) within 5e-12 of 30-digit arithmetic for a from 1e-3 to 10³ and x from
    a e⁻⁵ to 20a (torch's P is within ~2e-9); their derivatives in x against torch's to second
    order, in a (which torch lacks) against mpmath's numerical derivative, the forward mode as the
    reverse; torch's values at the edges; a second derivative in a refused by name."""
    mpmath.mp.dps = 30
    rng = np.random.default_rng(8)
    a = np.exp(rng.uniform(math.log(1e-3), math.log(1e3), 60))
    x = a * np.exp(rng.uniform(-5.0, 3.0, 60))
    for upper, function in [(False, mg.gammainc), (True, mg.gammaincc)]:
        want = np.array([float(_regularized_gamma(u, v, upper)) for u, v in zip(a, x)])
        np.testing.assert_allclose(function(a, x).data, want, rtol=5e-12, err_msg=function.__name__)
    shape, value = rng.uniform(0.5, 4.0, 3), rng.uniform(0.2, 6.0, (2, 3))
    for function, theirs in [(mg.gammainc, torch.special.gammainc), (mg.gammaincc, torch.special.gammaincc)]:
        _compare(lambda v: function(shape, v), lambda v: theirs(torch.tensor(shape), v), [value], second=True)
        alpha, at = mg.tensor(shape, requires_grad=True), value[0]
        (grad,) = mg.gradients(function(alpha, at).sum(), [alpha])
        upper = function is mg.gammaincc
        want = [float(mpmath.diff(lambda t: _regularized_gamma(t, v, upper), u)) for u, v in zip(shape, at)]
        np.testing.assert_allclose(grad.data, want, rtol=1e-10, err_msg=function.__name__)
        tangents = (rng.standard_normal(3), rng.standard_normal(3))
        _, forward = mg.jvp(function, (shape, at), tangents)
        backward = mg.vjp(function, shape, at)[1](mg.ones(3))
        np.testing.assert_allclose(forward.data, sum(t * g.data for t, g in zip(tangents, backward)), rtol=1e-12)
        (once,) = mg.gradients(function(alpha, at).sum(), [alpha], create_graph=True)
        with pytest.raises(mg.GraphError, match="standard_gamma_grad: no derivative.*gammainc in a"):
            mg.gradients(once.sum(), [alpha])
    edges_a, edges_x = np.array([1.0, 1.0, 0.0, -1.0, 2.0, 3.0]), np.array([0.0, np.inf, 1.0, 1.0, -1.0, 1e-300])
    for function, theirs in [(mg.gammainc, torch.special.gammainc), (mg.gammaincc, torch.special.gammaincc)]:
        np.testing.assert_array_equal(function(edges_a, edges_x).data, theirs(torch.tensor(edges_a), torch.tensor(edges_x)).numpy())


def test_gamma_and_chi2_cdfs():
    """Gamma's CDF against torch's to second order in the rate and the value, and against mpmath
    in the concentration (a derivative torch lacks); Chi2's is the Gamma(k/2, 1/2) CDF."""
    mpmath.mp.dps = 30
    _compare(lambda r, v: D.Gamma(CONC, r).cdf(v), lambda r, v: TD.Gamma(torch.tensor(CONC), r).cdf(v), [RATE, POSITIVE], second=True)
    alpha = mg.tensor(CONC, requires_grad=True)
    (grad,) = mg.gradients(D.Gamma(alpha, RATE).cdf(POSITIVE[0]).sum(), [alpha])
    want = [float(mpmath.diff(lambda t: _regularized_gamma(t, b * v), a)) for a, b, v in zip(CONC, RATE, POSITIVE[0])]
    np.testing.assert_allclose(grad.data, want, rtol=1e-10)
    np.testing.assert_allclose(D.Chi2(3.0).cdf(POSITIVE).data, TD.Chi2(torch.tensor(3.0, dtype=torch.float64)).cdf(torch.tensor(POSITIVE)).numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match=r"Chi2.cdf: values must be non-negative, got \[-1.0\]"):
        D.Chi2(3.0).cdf(mg.tensor([-1.0]))


def test_small_concentrations_draw_inside_the_support():
    """numpy's sampler rounds most Gamma(0.01) draws to 0; raised to the smallest normal number, as
    PyTorch's are, they stay in the support: log_prob takes them and a Beta draw is never 0/0."""
    mg.manual_seed(4)
    gamma = D.Gamma(0.01, 1.0)
    draws = gamma.sample((2000,))
    assert (draws.data >= np.finfo(np.float64).tiny).all() and np.isfinite(gamma.log_prob(draws).data).all()
    beta = D.Beta(mg.tensor(0.01, requires_grad=True), 0.01).rsample((2000,))
    assert np.isfinite(beta.data).all() and ((beta.data >= 0) & (beta.data <= 1)).all()
    single = D.Dirichlet(mg.tensor(np.float32([0.01, 0.02]))).sample((500,))
    assert single.dtype == np.float32 and np.isfinite(single.data).all()


def test_the_gamma_family_names_bad_parameters_and_values():
    with pytest.raises(ValueError, match=r"Gamma: rate must be positive, got \[1.0, -2.0\]"):
        D.Gamma(1.0, [1.0, -2.0])
    with pytest.raises(ValueError, match="Gamma.log_prob: values must be positive"):
        D.Gamma(1.0, 1.0).log_prob(-1.0)
    with pytest.raises(ValueError, match="Beta: concentration0 must be positive"):
        D.Beta(1.0, 0.0)
    with pytest.raises(ValueError, match=r"Beta.log_prob: values must lie in \[0, 1\]"):
        D.Beta(1.0, 1.0).log_prob(1.5)
    with pytest.raises(mg.ShapeError, match="Dirichlet: concentration needs a last dimension of 2 or more categories"):
        D.Dirichlet([1.0])
    with pytest.raises(ValueError, match="Dirichlet.log_prob: values must be probability vectors"):
        D.Dirichlet([1.0, 1.0]).log_prob([0.5, 0.6])
    for bad, message in [
        (lambda: D.Laplace(0.0, -1.0), r"Laplace: scale must be positive, got \[-1.0\]"),
        (lambda: D.StudentT(0.0), "StudentT: df must be positive"),
        (lambda: D.Poisson(-0.5), "Poisson: rate must be non-negative"),
        (lambda: D.Poisson(2.0).log_prob(1.5), r"Poisson.log_prob: values must be counts \(whole numbers ≥ 0\), got \[1.5\]"),
        (lambda: D.LogNormal(0.0, 1.0).log_prob(0.0), "LogNormal.log_prob: values must be positive"),
        (lambda: D.Exponential(1.0).cdf(-1.0), "Exponential.cdf: values must be non-negative"),
    ]:
        with pytest.raises(ValueError, match=message):
            bad()


def test_kl_divergence_of_uniforms_is_infinite_outside_the_support():
    got = D.kl_divergence(D.Uniform([0.0, 0.0], [1.0, 1.0]), D.Uniform([-1.0, 0.5], [2.0, 2.0]))
    want = TD.kl_divergence(TD.Uniform(torch.tensor([0.0, 0.0]), torch.tensor([1.0, 1.0])), TD.Uniform(torch.tensor([-1.0, 0.5]), torch.tensor([2.0, 2.0])))
    np.testing.assert_allclose(got.data, want.numpy())
    assert got.data[1] == np.inf


def test_kl_divergence_names_the_pairs_it_lacks():
    with pytest.raises(NotImplementedError, match=r"kl_divergence: no closed form for \(Normal, Uniform\).*\(Normal, Normal\)"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0))


def test_rsample_is_differentiable_and_sample_is_not():
    mg.manual_seed(0)
    loc, scale = mg.tensor([1.0, -2.0], requires_grad=True), mg.tensor([0.5, 2.0], requires_grad=True)
    draw = D.Normal(loc, scale).rsample((3,))
    draw.sum().backward()
    np.testing.assert_allclose(loc.grad.data, [3.0, 3.0])
    mg.manual_seed(0)
    eps = (D.Normal(loc, scale).sample((3,)).data - loc.data) / scale.data
    np.testing.assert_allclose(scale.grad.data, eps.sum(0))  # d(loc + scale ε)/d scale = ε, the same draws
    assert not D.Normal(loc, scale).sample().requires_grad
    with pytest.raises(NotImplementedError, match="Categorical has no reparameterized sample"):
        D.Categorical(logits=LOGITS).rsample()


def test_seeded_draws_have_the_distributions_statistics():
    mg.manual_seed(1)
    normal = D.Normal(mg.tensor([1.0, -2.0]), mg.tensor([0.5, 2.0])).sample((40000,))
    np.testing.assert_allclose(normal.data.mean(0), [1.0, -2.0], atol=0.03)
    np.testing.assert_allclose(normal.data.std(0), [0.5, 2.0], rtol=0.02)
    classes = D.Categorical(probs=mg.tensor([0.2, 0.5, 0.3])).sample((40000,))
    assert classes.dtype == np.int64 and classes.shape == (40000,)
    np.testing.assert_allclose(np.bincount(classes.data) / 40000, [0.2, 0.5, 0.3], atol=0.01)
    mvn = D.MultivariateNormal(mg.tensor(LOC), covariance_matrix=mg.tensor(COV)).sample((40000,))
    np.testing.assert_allclose(np.cov(mvn.data.T), COV, atol=0.1 * np.abs(COV).max())
    coins = D.Bernoulli(probs=mg.tensor([0.3, 0.9])).sample((40000,))
    np.testing.assert_allclose(coins.data.mean(0), [0.3, 0.9], atol=0.01)
    uniform = D.Uniform(-1.0, 3.0).sample((40000,))
    assert uniform.data.min() >= -1.0 and uniform.data.max() < 3.0 and abs(uniform.data.mean() - 1.0) < 0.03
    mg.manual_seed(1)
    again = D.Normal(mg.tensor([1.0, -2.0]), mg.tensor([0.5, 2.0])).sample((40000,))
    np.testing.assert_array_equal(again.data, normal.data)


def test_bad_parameters_and_values_are_named():
    with pytest.raises(ValueError, match=r"Normal: scale must be positive, got \[1.0, -0.5\]"):
        D.Normal(0.0, [1.0, -0.5])
    with pytest.raises(ValueError, match="Categorical: give exactly one of probs and logits"):
        D.Categorical(probs=[0.5, 0.5], logits=[0.0, 0.0])
    with pytest.raises(ValueError, match="Categorical: probs must be non-negative"):
        D.Categorical(probs=[0.5, -0.1])
    with pytest.raises(ValueError, match=r"Categorical.log_prob: values must be class indices in \[0, 5\)"):
        D.Categorical(logits=LOGITS).log_prob(5)
    with pytest.raises(ValueError, match="Bernoulli: probs must lie in"):
        D.Bernoulli(probs=1.5)
    with pytest.raises(ValueError, match="Bernoulli.log_prob: values must be 0 or 1"):
        D.Bernoulli(probs=0.5).log_prob(0.5)
    with pytest.raises(ValueError, match="MultivariateNormal: give exactly one of"):
        D.MultivariateNormal(LOC)
    with pytest.raises(mg.LinAlgError, match="cholesky: the matrix is not positive definite"):
        D.MultivariateNormal(LOC, covariance_matrix=-COV)
    with pytest.raises(ValueError, match="Uniform: low must be below high"):
        D.Uniform(1.0, 1.0)


def test_continuous_bernoulli_integrates_to_one_across_its_window():
    """The density integrates to 1 for p on both sides of 1/2 and inside the window where its
    normalizer is a Taylor series, and the series meets the closed form at the window's edge."""
    p = np.array([0.01, 0.3, 0.4989, 0.499, 0.4995, 0.5, 0.5008, 0.5011, 0.9, 0.999])
    grid = np.linspace(0.0, 1.0, 400_001)
    density = D.ContinuousBernoulli(p[:, None]).log_prob(grid[None, :]).exp().data
    np.testing.assert_allclose(np.trapezoid(density, grid, axis=1), 1.0, rtol=1e-9)
    # the closed forms lose ~ε / (1 − 2p)² to cancellation at the edge, ~3e-11
    edge = D.ContinuousBernoulli(np.array([0.499, np.nextafter(0.499, 1.0)]))
    np.testing.assert_allclose(edge.mean.data[0], edge.mean.data[1], rtol=1e-10)
    np.testing.assert_allclose(edge.entropy().data[0], edge.entropy().data[1], atol=1e-10)


def test_python_numbers_take_the_dtype_of_the_tensors_beside_them():
    """As PyTorch's broadcast_all: `Normal(0.0, scale)` of a float32 scale draws, and scores, in
    float32 (a Python number is not float64 data), and so do the transforms' numbers."""
    f32 = mg.tensor(np.array([1.0, 2.0], dtype=np.float32))
    families = [D.Normal(0.0, f32), D.Uniform(0.0, f32), D.Laplace(0.0, f32), D.Gumbel(0.0, f32), D.HalfNormal(f32), D.LogNormal(0.0, f32),
                D.Gamma(2.0, f32), D.Beta(2.0, f32), D.StudentT(3.0, 0.0, f32), D.Weibull(f32, 2.0), D.Pareto(1.0, f32 + 2.0),
                D.RelaxedBernoulli(0.5, probs=f32 / 3.0), D.RelaxedOneHotCategorical(0.5, probs=f32),
                D.InverseGamma(2.0, f32), D.Kumaraswamy(2.0, f32), D.FisherSnedecor(3.0, f32 + 4.0), D.GeneralizedPareto(0.0, f32, 0.2),
                D.OneHotCategoricalStraightThrough(probs=f32),
                D.TransformedDistribution(D.Normal(f32 * 0.0, f32), [D.AffineTransform(1.5, -2.0), D.TanhTransform()])]
    mg.manual_seed(0)
    for d in families:
        draws = d.rsample((3,))
        assert draws.dtype == np.float32 and d.log_prob(draws).dtype == np.float32, d
    assert D.Normal(0.0, 1.0).rsample().dtype == np.float64


MODES = {  # name: (minigrad's distribution, torch's, its parameters)
    "normal": (D.Normal, TD.Normal, [LOC, SCALE]),
    "uniform": (D.Uniform, TD.Uniform, [LOC, LOC + SCALE]),
    "laplace": (D.Laplace, TD.Laplace, [LOC, SCALE]),
    "cauchy": (D.Cauchy, TD.Cauchy, [LOC, SCALE]),
    "gumbel": (D.Gumbel, TD.Gumbel, [LOC, SCALE]),
    "exponential": (D.Exponential, TD.Exponential, [SCALE]),
    "gamma": (D.Gamma, TD.Gamma, [np.array([0.5, 2.0, 3.0]), SCALE]),
    "chi2": (D.Chi2, TD.Chi2, [np.array([1.0, 2.0, 5.0])]),
    "beta": (D.Beta, TD.Beta, [np.array([2.0, 0.5, 3.0]), np.array([3.0, 1.5, 0.5])]),
    "dirichlet": (D.Dirichlet, TD.Dirichlet, [np.array([[2.0, 3.0, 0.5], [1.5, 1.5, 4.0]])]),
    "studentt": (D.StudentT, TD.StudentT, [DF[:3], LOC, SCALE]),
    "lognormal": (D.LogNormal, TD.LogNormal, [LOC, SCALE]),
    "halfnormal": (D.HalfNormal, TD.HalfNormal, [SCALE]),
    "halfcauchy": (D.HalfCauchy, TD.HalfCauchy, [SCALE]),
    "weibull": (D.Weibull, TD.Weibull, [SCALE, np.array([1.5, 2.0, 3.0])]),
    "pareto": (D.Pareto, TD.Pareto, [SCALE, SHAPES]),
    "poisson": (D.Poisson, TD.Poisson, [np.array([0.5, 3.0, 4.2])]),
    "binomial": (D.Binomial, TD.Binomial, [np.full(3, 5.0), PROBS]),
    "geometric": (D.Geometric, TD.Geometric, [PROBS]),
    "negative_binomial": (D.NegativeBinomial, TD.NegativeBinomial, [np.array([0.5, 2.0, 3.5]), PROBS]),
    "bernoulli": (D.Bernoulli, TD.Bernoulli, [np.array([0.2, 0.5, 0.7])]),
    "categorical": (D.Categorical, TD.Categorical, [np.exp(LOGITS)]),
    "onehot": (D.OneHotCategorical, TD.OneHotCategorical, [np.exp(LOGITS)]),
    "onehot_straight_through": (D.OneHotCategoricalStraightThrough, TD.OneHotCategoricalStraightThrough, [np.exp(LOGITS)]),
    "inverse_gamma": (D.InverseGamma, TD.InverseGamma, [IG_CONC, SCALE]),
    "fisher_snedecor": (D.FisherSnedecor, TD.FisherSnedecor, [np.array([2.5, 3.0, 8.0]), np.array([1.5, 4.0, 9.0])]),
    "generalized_pareto": (D.GeneralizedPareto, TD.GeneralizedPareto, [LOC, SCALE, np.array([0.4, -0.3, -0.9])]),
    "mvn": (lambda m, c: D.MultivariateNormal(m, covariance_matrix=c), lambda m, c: TD.MultivariateNormal(m, covariance_matrix=c), [LOC, COV]),
    "independent": (lambda m, s: D.Independent(D.Normal(m, s), 1), lambda m, s: TD.Independent(TD.Normal(m, s), 1), [LOC, SCALE]),
}


@pytest.mark.parametrize("name", MODES)
def test_modes_as_torch(name):
    """`mode`, the most probable value (a deterministic policy's action, a MAP estimate), as torch's;
    the modes of a continuous family differentiate as its parameters do (Gamma's in the rate)."""
    ours, theirs, params = MODES[name]
    mode = ours(*[mg.tensor(p) for p in params]).mode
    want = theirs(*map(torch.tensor, params)).mode.numpy()
    assert mode.shape == want.shape
    np.testing.assert_allclose(mode.data, want, rtol=1e-14, equal_nan=True)


def test_modes_where_torch_has_none_or_another():
    """Weibull's mode is 0 for k ≤ 1 (torch's formula: NaN); a Dirichlet or Beta whose every
    concentration is at most 1 has no single peak (NaN; torch picks the first corner); Gamma's mode
    differentiates in its rate; the families without one say so by name."""
    np.testing.assert_array_equal(D.Weibull(2.0, mg.tensor([0.5, 1.0])).mode.data, [0.0, 0.0])
    assert np.isnan(D.Beta(0.5, 0.7).mode.item()) and np.isnan(D.Dirichlet(mg.tensor([0.5, 0.9, 1.0])).mode.data).all()
    rate = mg.tensor(2.0, requires_grad=True)
    (grad,) = mg.gradients(D.Gamma(3.0, rate).mode, [rate])
    assert grad.item() == pytest.approx(-2.0 / 4.0)
    for d in (D.Multinomial(3, probs=[0.5, 0.5]), D.RelaxedBernoulli(0.5, probs=0.3), D.ContinuousBernoulli(0.3),
              D.TransformedDistribution(D.Normal(0.0, 1.0), D.TanhTransform())):
        with pytest.raises(NotImplementedError, match=f"{type(d).__name__} has no mode"):
            d.mode


# --------------------------------------------------------------------------- angles: the von Mises distribution
VM_LOC, VM_KAPPA = np.array([0.3, -2.0, 5.0, 0.0]), np.array([1e-3, 2.0, 50.0, 1e4])  # loc 5: past π
VM_VALUES = np.array([[0.0, 1.0, -3.0, 1e-3], [3.1, -2.1, 5.0 + 1e-7, -2 * math.pi]])


def _textbook_von_mises(m, k, v):
    """κ cos(x − μ) − log 2π − log I₀(κ) in torch, log I₀ through torch.special.i0e."""
    return k * torch.cos(v - m) - math.log(2 * math.pi) - torch.log(torch.special.i0e(k)) - k


def test_von_mises_density_against_40_digit_arithmetic_and_torch():
    """log_prob within 1e-13 of 40-digit arithmetic, from κ = 1e-3 to 1e4 (torch's, whose log I₀ is
    a single-precision polynomial fit, is 3e-7 off at κ = 50), its gradient the exact one, its
    second derivatives the textbook formula's; mean and mode μ, variance 1 − I₁(κ)/I₀(κ) (torch's
    is 5e-4 relative off at κ = 1e4)."""
    mpmath.mp.dps = 40
    exact = [[mpmath.mpf(k) * mpmath.cos(mpmath.mpf(v) - mpmath.mpf(m)) - mpmath.log(2 * mpmath.pi * mpmath.besseli(0, k))
              for m, k, v in zip(VM_LOC, VM_KAPPA, row)] for row in VM_VALUES]
    loc, kappa, value = (mg.tensor(a, requires_grad=True) for a in (VM_LOC, VM_KAPPA, VM_VALUES))
    log_prob = D.VonMises(loc, kappa).log_prob(value)
    np.testing.assert_allclose(log_prob.data, np.array(exact, dtype=float), rtol=1e-13, atol=1e-13)
    ratio = np.array([float(mpmath.besseli(1, k) / mpmath.besseli(0, k)) for k in VM_KAPPA])
    d_loc, d_kappa, d_value = mg.gradients(log_prob.sum(), [loc, kappa, value])
    angle = VM_VALUES - VM_LOC
    np.testing.assert_allclose(d_loc.data, (VM_KAPPA * np.sin(angle)).sum(0), rtol=1e-9)
    np.testing.assert_allclose(d_kappa.data, (np.cos(angle) - ratio).sum(0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(d_value.data, -VM_KAPPA * np.sin(angle), rtol=1e-9)
    _compare(lambda m, k, v: D.VonMises(m, k).log_prob(v), _textbook_von_mises, [VM_LOC, VM_KAPPA, VM_VALUES], second=True, rtol=1e-9)
    theirs = TD.VonMises(torch.tensor(VM_LOC), torch.tensor(VM_KAPPA))
    np.testing.assert_allclose(log_prob.data, theirs.log_prob(torch.tensor(VM_VALUES)).numpy(), rtol=1e-6)
    ours = D.VonMises(VM_LOC, VM_KAPPA)
    np.testing.assert_allclose(ours.variance.data, 1.0 - ratio, rtol=1e-13, atol=2e-16)  # 1 − a ratio near 1: absolute
    np.testing.assert_allclose(ours.variance.data, theirs.variance.numpy(), atol=1e-6)  # torch's: 5e-4 relative off at κ = 1e4
    for statistic in ("mean", "mode"):
        np.testing.assert_array_equal(getattr(ours, statistic).data, getattr(theirs, statistic).numpy())
    assert (ours.batch_shape, ours.event_shape, ours.has_rsample) == (tuple(theirs.batch_shape), (), theirs.has_rsample)
    with pytest.raises(ValueError, match=r"VonMises: concentration must be positive, got \[1.0, 0.0\]"):
        D.VonMises(0.0, mg.tensor([1.0, 0.0]))


def test_von_mises_entropy_integrates_and_draws_follow_the_density():
    """The entropy in closed form (which PyTorch lacks) equals −∫ p log p over the circle; 40,000
    seeded draws lie in [−π, π) and are within Kolmogorov–Smirnov distance 0.01 of the CDF
    integrated from the density, a loc past π included; float32 parameters draw float32."""
    mpmath.mp.dps = 20
    for loc, kappa in ((0.5, 0.2), (5.0, 3.0), (-1.0, 40.0)):
        d = D.VonMises(loc, kappa)
        density = lambda x: mpmath.exp(float(d.log_prob(float(x)).item()))  # noqa: E731
        want = -mpmath.quad(lambda x: density(x) * mpmath.log(density(x)), [-mpmath.pi, loc - 2 * math.pi, loc, mpmath.pi])
        assert d.entropy().item() == pytest.approx(float(want), rel=1e-10), (loc, kappa)
    mg.manual_seed(12)
    grid = np.linspace(-math.pi, math.pi, 200_001)
    for loc, kappa in ((0.5, 0.2), (5.0, 3.0), (-1.0, 40.0), (2.0, 1e-9)):
        d = D.VonMises(loc, kappa)
        draws = d.sample((40_000,)).data
        assert draws.shape == (40_000,) and draws.min() >= -math.pi and draws.max() < math.pi
        pdf = np.exp(d.log_prob(grid).data)
        cdf = np.concatenate([[0.0], np.cumsum((pdf[1:] + pdf[:-1]) / 2 * np.diff(grid))])
        distance = _ks_distance(draws, lambda x: np.interp(x, grid, cdf))
        assert distance < 0.01, f"VonMises({loc}, {kappa}): Kolmogorov–Smirnov distance {distance:.4f}"
    draws = D.VonMises(mg.tensor(np.zeros((2, 3), np.float32)), 2.0).sample((5,))
    assert draws.shape == (5, 2, 3) and draws.dtype == np.float32


# --------------------------------------------------------------------------- a covariance of low rank plus a diagonal
LOW_RANK = {  # name: (loc, cov_factor, cov_diag): one distribution, a batch of locations, a batch of factors
    "single": (RNG.standard_normal(4), RNG.standard_normal((4, 2)), RNG.uniform(0.5, 2.0, 4)),
    "batched_loc": (RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2)), RNG.uniform(0.5, 2.0, 4)),
    "batched_factor": (RNG.standard_normal(4), RNG.standard_normal((2, 4, 1)), RNG.uniform(0.5, 2.0, (2, 4))),
}


@pytest.mark.parametrize("name", LOW_RANK)
def test_low_rank_multivariate_normal_as_torch(name):
    """log_prob and entropy (through the capacitance matrix), the dense covariance, precision and
    Cholesky factor, mean and variance to second order as torch's, and the KL divergence against
    itself and a MultivariateNormal both ways."""
    params = list(LOW_RANK[name])
    value = np.random.default_rng(1).standard_normal((5, 1, 4))
    _compare(lambda *t: D.LowRankMultivariateNormal(*t[:3]).log_prob(t[3]), lambda *t: TD.LowRankMultivariateNormal(*t[:3]).log_prob(t[3]),
             params + [value], second=True)
    for statistic in ("entropy", "covariance_matrix", "precision_matrix", "scale_tril", "mean", "variance"):
        _compare(*(_of_all(family, statistic) for family in (D.LowRankMultivariateNormal, TD.LowRankMultivariateNormal)), params, second=True)
    others = [p[..., ::-1].copy() + 0.25 for p in params]
    _compare(lambda *t: D.kl_divergence(D.LowRankMultivariateNormal(*t[:3]), D.LowRankMultivariateNormal(*t[3:])),
             lambda *t: TD.kl_divergence(TD.LowRankMultivariateNormal(*t[:3]), TD.LowRankMultivariateNormal(*t[3:])), params + others, second=True)
    for flip in (False, True):
        def pair(lib, dist, loc, factor, diag, flip=flip):
            low_rank = dist.LowRankMultivariateNormal(loc, factor, diag)
            dense = dist.MultivariateNormal(loc + 1.0, covariance_matrix=factor @ factor.mT * 0.5 + 2.0 * lib.eye(4, dtype=factor.dtype))
            return dist.kl_divergence(*((dense, low_rank) if flip else (low_rank, dense)))

        _compare(lambda *t: pair(mg, D, *t), lambda *t: pair(torch, TD, *t), params, second=True)
    d, t = D.LowRankMultivariateNormal(*params), TD.LowRankMultivariateNormal(*map(torch.tensor, params))
    assert (d.batch_shape, d.event_shape, d.has_rsample) == (tuple(t.batch_shape), tuple(t.event_shape), t.has_rsample)


def test_low_rank_multivariate_normal_draws_and_errors():
    """100,000 seeded rsample draws have the covariance W Wᵀ + D, and their pathwise gradient of
    E|x − μ|² = tr Σ in W is 2W; shapes that do not fit are named."""
    mg.manual_seed(13)
    loc, factor, diag = LOW_RANK["single"]
    w = mg.tensor(factor, requires_grad=True)
    d = D.LowRankMultivariateNormal(loc, w, diag)
    draws = d.rsample((100_000,))
    assert draws.shape == (100_000, 4)
    np.testing.assert_allclose(np.cov(draws.data.T), d.covariance_matrix.data, atol=0.05)
    (grad,) = mg.gradients(((draws - mg.tensor(loc)) ** 2).sum(axis=-1).mean(), [w])
    np.testing.assert_allclose(grad.data, 2 * factor, atol=0.05)
    with pytest.raises(mg.ShapeError, match=r"loc of shape \(4,\) needs a cov_factor of shape \(4, rank\) and a cov_diag of shape \(4,\), got \(3, 2\)"):
        D.LowRankMultivariateNormal(loc, factor[:3], diag)
    with pytest.raises(mg.ShapeError, match=r"cov_factor a matrix \(k, rank\).*got shapes \(4,\), \(4,\), \(4,\)"):
        D.LowRankMultivariateNormal(loc, diag, diag)
    with pytest.raises(ValueError, match=r"LowRankMultivariateNormal: cov_diag must be positive, got \[1.0, 0.0, 1.0, 1.0\]"):
        D.LowRankMultivariateNormal(loc, factor, np.array([1.0, 0.0, 1.0, 1.0]))


# --------------------------------------------------------------------------- expand
@pytest.mark.parametrize("name", MORE)
def test_expand_broadcasts_each_family_as_torch(name):
    """`expand` to four copies of the batch (and an axis of 1 the values broadcast along): log_prob
    to second order, the moments and entropy, the batch and draw shapes, as torch's expand."""
    ours, theirs, params, values, _ = MORE[name]
    n, shape = len(params), (4, 1) + tuple(ours(*params).batch_shape)
    rtol = 1e-8 if name in TRIGAMMA + ("binomial", "negative_binomial") else 1e-10  # torch's digamma, ~1e-9
    _compare(lambda *t: ours(*t[:n]).expand(shape).log_prob(t[n]), lambda *t: theirs(*t[:n]).expand(shape).log_prob(t[n]),
             params + [values], second=True, rtol=rtol)
    statistics = ("mean", "variance") if name in NO_ENTROPY else ("mean", "variance", "entropy")
    with np.errstate(invalid="ignore"):
        for statistic in statistics:
            _compare(*(_of_all(lambda *p, family=family: family(*p).expand(shape), statistic) for family in (ours, theirs)), params, rtol=rtol)
    d = ours(*params).expand(shape)
    assert d.batch_shape == shape and d.sample((2,)).shape == (2,) + shape + tuple(d.event_shape)


def _structured(lib, dist, a, b):
    """Families whose parameters have dimensions of their own (classes, vectors, matrices) or that
    hold other distributions: name -> distribution, from a (2, 3) array a and a positive one b."""
    eye = lib.eye(3, dtype=a.dtype)
    return {
        "mvn": dist.MultivariateNormal(a[0], scale_tril=eye * b[0] + lib.tril(a[0].unsqueeze(-1) * b[1], -1)),
        "low_rank": dist.LowRankMultivariateNormal(a[0], b.mT, b[0]),
        "dirichlet": dist.Dirichlet(b),
        "categorical": dist.Categorical(logits=a),
        "onehot": dist.OneHotCategorical(probs=b),
        "onehot_straight_through": dist.OneHotCategoricalStraightThrough(logits=a),
        "multinomial": dist.Multinomial(4, logits=a),
        "independent": dist.Independent(dist.Normal(a, b), 1),
        "mixture": dist.MixtureSameFamily(dist.Categorical(logits=a), dist.Normal(a, b)),
        "relaxed_onehot": dist.RelaxedOneHotCategorical(lib.tensor(0.7, dtype=a.dtype), logits=a),
        "affine_event": dist.TransformedDistribution(dist.Normal(a, b), dist.transforms.AffineTransform(a[0], b[1], event_dim=1)),
    }


@pytest.mark.parametrize("name", list(_structured(mg, D, mg.tensor(np.ones((2, 3))), mg.tensor(np.ones((2, 3))))))
def test_expand_keeps_the_dimensions_a_parameter_has_of_its_own(name):
    """Vector, matrix and class parameters keep their own dimensions, wrappers expand what they
    hold (Independent, MixtureSameFamily, TransformedDistribution), a shared temperature stays one:
    log_prob of torch's draws and its gradients equal torch's. The parameters are broadcast views
    (no copy); a batch that cannot broadcast and a user's own family are refused by name."""
    a, b = np.random.default_rng(5).standard_normal((2, 3)), np.random.default_rng(6).uniform(0.5, 2.0, (2, 3))
    ours, theirs = _structured(mg, D, mg.tensor(a), mg.tensor(b))[name], _structured(torch, TD, torch.tensor(a), torch.tensor(b))[name]
    shape = (5,) + tuple(theirs.batch_shape)
    torch.manual_seed(0)
    draws = theirs.expand(shape).sample((2,))
    _compare(lambda x, y: _structured(mg, D, x, y)[name].expand(shape).log_prob(draws.numpy()) + 0.0 * (x.sum() + y.sum()),
             lambda x, y: _structured(torch, TD, x, y)[name].expand(shape).log_prob(draws) + 0.0 * (x.sum() + y.sum()), [a, b])
    expanded = ours.expand(shape)
    assert expanded.batch_shape == shape and expanded.event_shape == tuple(theirs.event_shape)
    assert expanded.sample((2,)).shape == tuple(draws.shape)
    if name == "categorical":
        assert np.shares_memory(expanded.logits.data, ours.logits.data)
        with pytest.raises(mg.ShapeError, match=r"Categorical.expand: batch_shape \(2,\) cannot be expanded to \(3,\)"):
            ours.expand((3,))

        class Coin(D.Bernoulli):
            pass

        with pytest.raises(NotImplementedError, match="Coin.expand: minigrad expands its own families"):
            Coin(0.5).expand((2,))


def test_register_kl_gives_a_users_family_its_closed_form(monkeypatch):
    """`@register_kl` as in PyTorch: a user's family gets a KL divergence, and a subclass's rule
    comes before its base class's; a non-distribution is refused."""
    monkeypatch.setattr(D, "_KL", dict(D._KL))  # the registration ends with the test

    class Shifted(D.Normal):
        """N(loc + 1, scale²), a user's family."""

        def log_prob(self, value):
            return super().log_prob(mg.tensor(value) - 1.0)

    @D.register_kl(Shifted, D.Normal)
    def _kl_shifted_normal(p, q):
        return D.kl_divergence(D.Normal(p.loc + 1.0, p.scale), q)

    p, q = Shifted(mg.tensor([0.0, 0.5]), mg.tensor([1.0, 2.0])), D.Normal(mg.tensor([1.0, 0.0]), mg.tensor([1.0, 0.5]))
    want = TD.kl_divergence(TD.Normal(torch.tensor([1.0, 1.5]), torch.tensor([1.0, 2.0])), TD.Normal(torch.tensor([1.0, 0.0]), torch.tensor([1.0, 0.5])))
    np.testing.assert_allclose(D.kl_divergence(p, q).data, want.numpy(), rtol=1e-6)
    assert D.kl_divergence(p, D.Normal(1.0, 1.0)).data[0] == 0.0 and D.kl_divergence(D.Normal(1.0, 1.0), D.Normal(1.0, 1.0)).item() == 0.0
    with pytest.raises(TypeError, match="register_kl: expected a Distribution subclass, got 'Normal'"):
        D.register_kl("Normal", D.Normal)


# --------------------------------------------------------------------------- InverseGamma, Kumaraswamy, FisherSnedecor, GeneralizedPareto
def test_inverse_gamma_cdf_keeps_the_lower_tail():
    """Q(α, β/y) against torch's 1 − P(α, β/y) to second order in the rate and the value where the
    CDF is not small; against 40-digit arithmetic down to a CDF of 1e-80 (torch's, through 1 − P,
    is 0 below ~1e-16), and in α (a derivative torch lacks) against mpmath's numerical one; bad
    parameters and values named; no icdf, as in torch (a Gamma has none)."""
    mpmath.mp.dps = 40
    values = np.array([[0.5, 1.5, 3.0], [4.0, 0.8, 2.0]])
    _compare(lambda r, v: D.InverseGamma(IG_CONC, r).cdf(v), lambda r, v: TD.InverseGamma(torch.tensor(IG_CONC), r).cdf(v),
             [SCALE, values], second=True)
    conc, rate, y = np.array([0.7, 3.0, 3.0, 10.0, 2.0]), np.array([0.8, 1.3, 1.3, 2.0, 1.0]), np.array([0.3, 2.5, 0.03, 0.05, 0.005])
    want = [mpmath.gammainc(mpmath.mpf(a), mpmath.mpf(b) / mpmath.mpf(v), mpmath.inf, regularized=True) for a, b, v in zip(conc, rate, y)]
    assert float(min(want)) < 1e-80
    np.testing.assert_allclose(D.InverseGamma(conc, rate).cdf(y).data, np.array(want, dtype=float), rtol=1e-12)
    alpha = mg.tensor(conc, requires_grad=True)
    (grad,) = mg.gradients(D.InverseGamma(alpha, rate).cdf(y).sum(), [alpha])
    want = [mpmath.diff(lambda s: mpmath.gammainc(s, mpmath.mpf(b) / mpmath.mpf(v), mpmath.inf, regularized=True), mpmath.mpf(a))
            for a, b, v in zip(conc, rate, y)]
    np.testing.assert_allclose(grad.data, np.array(want, dtype=float), rtol=1e-10)
    for bad, message in [(lambda: D.InverseGamma(0.0, 1.0), r"InverseGamma: concentration must be positive, got \[0.0\]"),
                         (lambda: D.InverseGamma(1.0, -2.0), r"InverseGamma: rate must be positive, got \[-2.0\]"),
                         (lambda: D.InverseGamma(1.0, 1.0).cdf(-1.0), r"InverseGamma.cdf: values must be positive, got \[-1.0\]"),
                         (lambda: D.InverseGamma(1.0, 1.0).log_prob(0.0), "InverseGamma.log_prob: values must be")]:
        with pytest.raises(ValueError, match=message):
            bad()
    with pytest.raises(NotImplementedError, match="InverseGamma has no icdf"):
        D.InverseGamma(1.0, 1.0).icdf(0.5)


def _kumaraswamy_exact(a, b):
    """Kumaraswamy(a, b)'s log-density, CDF and quantile in mpmath's arithmetic."""
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    return (lambda y: mpmath.log(a * b) + (a - 1) * mpmath.log(y) + (b - 1) * mpmath.log(1 - y**a),
            lambda y: 1 - (1 - y**a) ** b,
            lambda p: (1 - (1 - p) ** (1 / b)) ** (1 / a))


def test_kumaraswamy_keeps_its_digits_at_both_ends():
    """log_prob, cdf and icdf within 1e-13 of 60-digit arithmetic from y = 1e-8 to 1 − 1e-10 and
    p = 1e-15 to 1 − 1e-6, where torch's maps through 1 − yᵃ and 1 − u^(1/b) lose them (its CDF at
    1e-4 is 8e-8 off, its quantile of 1e-15 3e-4); log_prob's derivatives in y, a and b against
    mpmath's there; the density integrates to 1; bad parameters and values named."""
    mpmath.mp.dps = 60  # the oracle's own 1 − (1 − yᵃ)ᵇ loses 20 digits at y = 1e-8
    y = np.array([1e-8, 1e-4, 0.5, 1 - 1e-6, 1 - 1e-10])
    p = np.array([1e-15, 1e-10, 1e-3, 0.5, 1 - 1e-6])
    for a, b in [(2.5, 3.0), (0.6, 1.7), (4.0, 0.4)]:
        log_pdf, cdf, quantile = _kumaraswamy_exact(a, b)
        d = D.Kumaraswamy(a, b)
        for got, exact, at in [(d.log_prob(y), log_pdf, y), (d.cdf(y), cdf, y), (d.icdf(p), quantile, p)]:
            want = np.array([float(exact(mpmath.mpf(v))) for v in at])
            np.testing.assert_allclose(got.data, want, rtol=1e-13, err_msg=f"Kumaraswamy({a}, {b})")
        value, ta, tb = (mg.tensor(v, requires_grad=True) for v in (y, np.full(5, a), np.full(5, b)))
        grads = mg.gradients(D.Kumaraswamy(ta, tb).log_prob(value).sum(), [value, ta, tb])
        for i, grad in enumerate(grads):
            def of(t, v, i=i):
                args = [mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(v)]
                args[(2, 0, 1)[i]] = t
                return _kumaraswamy_exact(args[0], args[1])[0](args[2])
            want = [mpmath.diff(lambda t, v=v: of(t, v), mpmath.mpf((v, a, b)[i])) for v in y]
            np.testing.assert_allclose(grad.data, np.array(want, dtype=float), rtol=1e-11, err_msg=f"Kumaraswamy({a}, {b}), parameter {i}")
    grid = np.linspace(0.0, 1.0, 200_001)
    for a, b in [(2.5, 3.0), (3.5, 2.5), (1.0, 1.0)]:
        np.testing.assert_allclose(np.trapezoid(D.Kumaraswamy(a, b).log_prob(grid).exp().data, grid), 1.0, rtol=1e-8)
    for bad, message in [(lambda: D.Kumaraswamy(0.0, 1.0), r"Kumaraswamy: concentration1 must be positive, got \[0.0\]"),
                         (lambda: D.Kumaraswamy(1.0, -1.0), r"Kumaraswamy: concentration0 must be positive, got \[-1.0\]"),
                         (lambda: D.Kumaraswamy(2.0, 2.0).log_prob(1.5), r"Kumaraswamy.log_prob: values must lie in \[0, 1\], got \[1.5\]"),
                         (lambda: D.Kumaraswamy(2.0, 2.0).cdf(-0.5), r"Kumaraswamy.cdf: values must lie in \[0, 1\], got \[-0.5\]")]:
        with pytest.raises(ValueError, match=message):
            bad()


def test_kumaraswamy_edges_modes_and_kl():
    """At the edges of [0, 1] a concentration of 1 gives the finite density a b (b at 0 for a = 1,
    a at 1 for b = 1, no 0 · ∞); the mode is where torch's log-density has the derivative 0 (torch's
    own mode is NaN for every a and b), 0 or 1 where the density's supremum is at an end, NaN
    where there are two; the KL divergence is 0 between the same maps of one uniform, as torch's,
    and refused for others, as torch's."""
    assert D.Kumaraswamy(1.0, 3.0).log_prob(0.0).item() == pytest.approx(math.log(3.0), rel=1e-15)
    assert D.Kumaraswamy(2.5, 1.0).log_prob(1.0).item() == pytest.approx(math.log(2.5), rel=1e-15)
    x = mg.tensor(1.0, requires_grad=True)
    (grad,) = mg.gradients(D.Kumaraswamy(2.5, 1.0).log_prob(x), [x])
    assert grad.item() == pytest.approx(1.5)  # d/dy log(2.5 y^1.5)
    a, b = np.array([2.0, 3.0, 5.0, 1.5]), np.array([3.0, 2.0, 1.5, 8.0])
    mode = D.Kumaraswamy(a, b).mode.data
    np.testing.assert_allclose(mode, ((a - 1) / (a * b - 1)) ** (1 / a), rtol=1e-15)
    at = torch.tensor(mode, requires_grad=True)
    (slope,) = torch.autograd.grad(TD.Kumaraswamy(torch.tensor(a), torch.tensor(b)).log_prob(at).sum(), at)
    np.testing.assert_allclose(slope.numpy(), 0.0, atol=1e-12)
    assert np.isnan(TD.Kumaraswamy(torch.tensor(a), torch.tensor(b)).mode.numpy()).all()
    edges = D.Kumaraswamy(mg.tensor([0.6, 1.0, 2.0, 2.0, 0.5, 1.0]), mg.tensor([1.7, 2.0, 0.5, 1.0, 0.5, 1.0])).mode.data
    np.testing.assert_array_equal(edges, [0.0, 0.0, 1.0, 1.0, np.nan, np.nan])
    concentration1 = mg.tensor(a, requires_grad=True)  # a mode differentiates as its parameters do
    (grad,) = mg.gradients(D.Kumaraswamy(concentration1, b).mode.sum(), [concentration1])
    exact = torch.tensor(a, requires_grad=True)
    (want,) = torch.autograd.grad((((exact - 1) / (exact * torch.tensor(b) - 1)) ** (1 / exact)).sum(), exact)
    np.testing.assert_allclose(grad.data, want.numpy(), rtol=1e-13)
    same = D.kl_divergence(D.Kumaraswamy(a, b), D.Kumaraswamy(a, b)).data
    np.testing.assert_array_equal(same, TD.kl_divergence(TD.Kumaraswamy(torch.tensor(a), torch.tensor(b)),
                                                         TD.Kumaraswamy(torch.tensor(a), torch.tensor(b))).numpy())
    assert (same == 0).all()


def test_fisher_snedecor_where_its_moments_are_undefined():
    """The mean NaN for df2 ≤ 2 and the variance NaN for df2 ≤ 4, as torch's, with the gradient 0
    there (torch's variance has the gradient NaN in df1); the mode 0 for df1 ≤ 2, where the density
    is largest at 0 (torch's: NaN), torch's elsewhere; no entropy, as in torch; bad values named."""
    df1, df2 = np.array([1.5, 3.0, 5.0, 8.0]), np.array([1.5, 3.0, 5.0, 9.0])
    ours, theirs = D.FisherSnedecor(df1, df2), TD.FisherSnedecor(torch.tensor(df1), torch.tensor(df2))
    for statistic in ("mean", "variance"):
        np.testing.assert_allclose(getattr(ours, statistic).data, getattr(theirs, statistic).numpy(), rtol=1e-14, equal_nan=True)
        n, m = mg.tensor(df1, requires_grad=True), mg.tensor(df2, requires_grad=True)
        grads = mg.gradients((getattr(D.FisherSnedecor(n, m), statistic) + 0.0 * (n + m)).sum(), [n, m])
        undefined = np.isnan(getattr(theirs, statistic).numpy())
        assert all(np.isfinite(g.data).all() and (g.data[undefined] == 0).all() for g in grads), statistic
    np.testing.assert_array_equal(np.isnan(ours.mean.data), [True, False, False, False])
    np.testing.assert_array_equal(np.isnan(ours.variance.data), [True, True, False, False])
    mode = D.FisherSnedecor(np.array([1.5, 2.0, 2.5]), 6.0).mode.data
    assert mode[0] == mode[1] == 0.0 and np.isnan(TD.FisherSnedecor(torch.tensor([1.5, 2.0]), torch.tensor(6.0)).mode.numpy()).all()
    np.testing.assert_allclose(mode[2], TD.FisherSnedecor(torch.tensor(2.5, dtype=torch.float64), torch.tensor(6.0, dtype=torch.float64)).mode.item(), rtol=1e-15)
    for df in (1.5, 2.0):  # decreasing from 0
        density = D.FisherSnedecor(df, 6.0).log_prob(np.array([1e-9, 1e-3, 0.5])).data
        assert density[0] > density[1] > density[2]
    with pytest.raises(NotImplementedError, match="FisherSnedecor has no entropy"):
        ours.entropy()
    for bad, message in [(lambda: D.FisherSnedecor(0.0, 1.0), r"FisherSnedecor: df1 must be positive, got \[0.0\]"),
                         (lambda: D.FisherSnedecor(1.0, -1.0), r"FisherSnedecor: df2 must be positive, got \[-1.0\]"),
                         (lambda: D.FisherSnedecor(3.0, 4.0).log_prob(0.0), r"FisherSnedecor.log_prob: values must be positive, got \[0.0\]")]:
        with pytest.raises(ValueError, match=message):
            bad()


def test_fisher_snedecor_draws_follow_the_incomplete_beta_function():
    """40,000 seeded draws of F(5, 12) and F(0.8, 3) within Kolmogorov–Smirnov distance 0.01 of the
    CDF I_w(df1/2, df2/2), w = df1 x / (df1 x + df2), in mpmath's arithmetic (interpolated on a
    grid of w, geometric near 0 where the CDF grows as w^(df1/2), on which the draws are read);
    float32 degrees of freedom draw float32."""
    mpmath.mp.dps = 15
    grid = np.concatenate([[0.0], np.geomspace(1e-15, 1e-2, 600, endpoint=False), np.linspace(1e-2, 1.0, 1400)])
    mg.manual_seed(14)
    for df1, df2 in ((5.0, 12.0), (0.8, 3.0)):
        draws = D.FisherSnedecor(df1, df2).sample((40_000,)).data
        assert draws.shape == (40_000,) and (draws > 0).all()
        cdf = np.array([float(mpmath.betainc(df1 / 2, df2 / 2, 0, w, regularized=True)) for w in grid])
        distance = _ks_distance(df1 * draws / (df1 * draws + df2), lambda w: np.interp(w, grid, cdf))
        assert distance < 0.01, f"FisherSnedecor({df1}, {df2}): Kolmogorov–Smirnov distance {distance:.4f}"
    assert D.FisherSnedecor(mg.tensor(np.float32([3.0, 5.0])), 4.0).sample((3,)).dtype == np.float32


def _generalized_pareto_exact(statistic):
    """The standard (loc 0, scale 1) generalized Pareto's log-density, CDF or quantile as a function
    of (ξ, x) in mpmath's arithmetic, the exponential's at ξ = 0 (its limit)."""
    return {
        "log_prob": lambda k, z: -(1 / k + 1) * mpmath.log1p(k * z) if k != 0 else -z,
        "cdf": lambda k, z: 1 - (1 + k * z) ** (-1 / k) if k != 0 else -mpmath.expm1(-z),
        "icdf": lambda k, p: mpmath.expm1(-k * mpmath.log1p(-p)) / k if k != 0 else -mpmath.log1p(-p),
    }[statistic]


def test_generalized_pareto_through_concentration_zero():
    """log_prob, cdf and icdf with their first and second derivatives in ξ, at ξ = 0 and within
    1e-12 to 0.05 of it on both sides, against 40-digit arithmetic: one smooth function through
    the exponential at ξ = 0, where torch's switch to the exponential's formulas (for |ξ| ≤ 1e-8)
    has the derivative 0 in ξ (the true one of log p is z²/2 − z); its quantile's value there as
    torch's; log_survival_function and log_cdf as torch's to second order elsewhere; its float32
    log_prob and cdf as torch's (whose float64 ones are an error in torch 2.13)."""
    mpmath.mp.dps = 40
    xi = np.array([0.0, 1e-12, -1e-12, 1e-6, -1e-6, 0.05, -0.05])[:, None]
    at = {"log_prob": np.array([0.01, 0.5, 3.0, 15.0]), "cdf": np.array([0.01, 0.5, 3.0, 15.0]),
          "icdf": np.array([1e-10, 0.3, 0.9, 1 - 1e-9])}
    for statistic, values in at.items():
        k = mg.tensor(np.broadcast_to(xi, (7, 4)).copy(), requires_grad=True)
        got = getattr(D.GeneralizedPareto(0.0, 1.0, k), statistic)(values)
        (first,) = mg.gradients(got.sum(), [k], create_graph=True)
        (second,) = mg.gradients(first.sum(), [k])
        exact = _generalized_pareto_exact(statistic)
        for order, ours in enumerate((got, first, second)):
            want = [[float(mpmath.diff(lambda s, v=v: exact(s, mpmath.mpf(v)), mpmath.mpf(c), order)) for v in values] for c in xi[:, 0]]
            np.testing.assert_allclose(ours.data, np.array(want), rtol=1e-12, atol=1e-300, err_msg=f"{statistic}, derivative {order}")
    zero = D.GeneralizedPareto(0.0, 1.0, 0.0)
    np.testing.assert_allclose(zero.log_prob(at["log_prob"]).data, D.Exponential(1.0).log_prob(at["log_prob"]).data, rtol=1e-15)
    for statistic in ("log_survival_function", "log_cdf"):
        _compare(lambda *t: getattr(D.GeneralizedPareto(*t[:3]), statistic)(t[3]), lambda *t: getattr(_TorchGeneralizedPareto(*t[:3]), statistic)(t[3]),
                 [LOC, SCALE, GP_CONC, LOC + SCALE * GP_Z], second=True)
    standard = TD.GeneralizedPareto(*(torch.tensor(v, dtype=torch.float64) for v in (0.0, 1.0, 0.0)))
    np.testing.assert_allclose(zero.icdf(at["icdf"]).data, standard.icdf(torch.tensor(at["icdf"])).numpy(), rtol=1e-15)
    single = [np.float32(p) for p in (LOC, SCALE, GP_CONC)]
    ours, theirs = D.GeneralizedPareto(*map(mg.tensor, single)), TD.GeneralizedPareto(*map(torch.tensor, single))
    values = np.float32(LOC + SCALE * GP_Z)
    for statistic in ("log_prob", "cdf"):
        got = getattr(ours, statistic)(mg.tensor(values))
        assert got.dtype == np.float32
        np.testing.assert_allclose(got.data, getattr(theirs, statistic)(torch.tensor(values)).numpy(), rtol=2e-6)


def test_generalized_pareto_support_and_modes():
    """The support's ends: log p(loc) = −log σ; at the upper end μ − σ/ξ for ξ < 0 the density is 0
    for −1 < ξ < 0, 1/σ at ξ = −1 (a uniform) and ∞ below, the CDF 1 and the quantile of 1 that end
    (∞ for ξ ≥ 0); values outside are named. The mode is μ for ξ > −1 (torch's), the upper end for
    ξ < −1, where the density grows without bound, and NaN for the uniform. The derivative of
    log p in ξ at ξ = −1 is log(1 − z) (torch's, which takes 1/ξ + 1 = 0 as its own case, is 1).
    CDFs from 1e-12 within 1e-13 of 40-digit arithmetic (log_cdf too); bad scales named."""
    mpmath.mp.dps = 40
    xi = np.array([-0.5, -1.0, -2.0])
    d = D.GeneralizedPareto(1.0, 2.0, xi)
    top = 1.0 - 2.0 / xi
    np.testing.assert_allclose(d.log_prob(np.ones(3)).data, -math.log(2.0), rtol=1e-15)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(d.log_prob(top).data, [-np.inf, -math.log(2.0), np.inf])
    np.testing.assert_array_equal(d.cdf(top).data, [1.0, 1.0, 1.0])
    np.testing.assert_allclose(d.icdf(np.ones(3)).data, top, rtol=1e-15)
    assert D.GeneralizedPareto(0.0, 1.0, mg.tensor([0.0, 0.5])).icdf(1.0).data.tolist() == [np.inf, np.inf]
    k = mg.tensor([-1.0, 0.0], requires_grad=True)  # where torch's switches of formula give 1 and 0
    (grad,) = mg.gradients(D.GeneralizedPareto(0.0, 1.0, k).log_prob(0.5).sum(), [k])
    np.testing.assert_allclose(grad.data, [math.log(1.0 - 0.5), 0.5**2 / 2 - 0.5], rtol=1e-15)  # log(1 − z) and z²/2 − z
    scale = mg.tensor(2.0, requires_grad=True)  # the uniform's density at its upper end differentiates as 1/σ's
    (grad,) = mg.gradients(D.GeneralizedPareto(1.0, scale, -1.0).log_prob(2.0), [scale])
    assert grad.item() == pytest.approx(-0.5)
    np.testing.assert_allclose(D.GeneralizedPareto(1.0, 2.0, mg.tensor([0.3, -0.5, -2.0, -4.0])).mode.data, [1.0, 1.0, 2.0, 1.5], rtol=1e-15)
    assert np.isnan(D.GeneralizedPareto(1.0, 2.0, -1.0).mode.item())
    for k in (0.3, 0.0, -0.5):  # a small probability keeps its digits: torch's log1p(−exp(log S)) loses them
        d, z = D.GeneralizedPareto(0.0, 2.0, k), np.array([1e-12, 1e-6, 0.5])  # at loc 0: loc + σz does not round z
        exact = _generalized_pareto_exact("cdf")
        want = np.array([float(exact(mpmath.mpf(k), mpmath.mpf(v))) for v in z])
        np.testing.assert_allclose(d.cdf(2.0 * z).data, want, rtol=1e-13)
        np.testing.assert_allclose(d.log_cdf(2.0 * z).data, np.log(want), rtol=1e-13)
    for bad, message in [(lambda: D.GeneralizedPareto(0.0, 0.0, 0.1), r"GeneralizedPareto: scale must be positive, got \[0.0\]"),
                         (lambda: D.GeneralizedPareto(1.0, 1.0, 0.1).log_prob(0.5), r"GeneralizedPareto.log_prob: values must lie in the support.*got \[0.5\]"),
                         (lambda: D.GeneralizedPareto(0.0, 1.0, -0.5).cdf(2.5), r"GeneralizedPareto.cdf: values must lie in the support.*got \[2.5\]"),
                         (lambda: D.GeneralizedPareto(0.0, 1.0, 0.1).icdf(1.5), r"GeneralizedPareto.icdf: values must be probabilities")]:
        with pytest.raises(ValueError, match=message):
            bad()


@pytest.mark.parametrize("form", ["probs", "logits"])
def test_one_hot_straight_through_is_the_draw_with_the_gradient_of_its_probabilities(form, rng):
    """rsample is exactly sample's one-hot draw (the same seed's), and its gradient in the
    parameters is that of probs, the straight-through estimator: as torch's rsample's for any
    weighting of the draws (which the gradient does not depend on); log_prob, entropy and the KL
    divergence are OneHotCategorical's, as torch's."""
    params = np.exp(LOGITS) if form == "probs" else LOGITS
    weights = rng.standard_normal((6,) + LOGITS.shape)
    mg.manual_seed(5)
    draws = D.OneHotCategoricalStraightThrough(**{form: params}).sample((6,))
    x = mg.tensor(params, requires_grad=True)
    mg.manual_seed(5)
    relaxed = D.OneHotCategoricalStraightThrough(**{form: x}).rsample((6,))
    np.testing.assert_array_equal(relaxed.data, draws.data)
    assert ((draws.data == 0) | (draws.data == 1)).all() and (draws.data.sum(-1) == 1).all()
    (grad,) = mg.gradients((relaxed * mg.tensor(weights)).sum(), [x])
    t = torch.tensor(params, requires_grad=True)
    (want,) = torch.autograd.grad((TD.OneHotCategoricalStraightThrough(**{form: t}).rsample((6,)) * torch.tensor(weights)).sum(), t)
    np.testing.assert_allclose(grad.data, want.numpy(), rtol=1e-12, atol=1e-15)
    onehot = np.eye(5)[CLASSES]
    _compare(lambda p: D.OneHotCategoricalStraightThrough(**{form: p}).log_prob(onehot),
             lambda p: TD.OneHotCategoricalStraightThrough(**{form: p}).log_prob(torch.tensor(onehot)), [params], second=True)
    _compare(lambda p: D.OneHotCategoricalStraightThrough(**{form: p}).entropy(),
             lambda p: TD.OneHotCategoricalStraightThrough(**{form: p}).entropy(), [params], second=True)
    _compare(lambda a, b: D.kl_divergence(D.OneHotCategoricalStraightThrough(**{form: a}), D.OneHotCategoricalStraightThrough(**{form: b})),
             lambda a, b: TD.kl_divergence(TD.OneHotCategoricalStraightThrough(**{form: a}), TD.OneHotCategoricalStraightThrough(**{form: b})),
             [params, params[::-1].copy()], second=True)
    d, t = D.OneHotCategoricalStraightThrough(**{form: params}), TD.OneHotCategoricalStraightThrough(**{form: torch.tensor(params)})
    assert (d.batch_shape, d.event_shape, d.has_rsample) == (tuple(t.batch_shape), tuple(t.event_shape), t.has_rsample) == ((4,), (5,), True)


# --------------------------------------------------------------------------- support
def _with_supports():
    """(name, ours, torch's) for every family of the tables above and the others."""
    for name, (ours, theirs, params, _, _) in MORE.items():
        yield name, ours(*params), theirs(*map(torch.tensor, params))
    a, b = np.random.default_rng(5).standard_normal((2, 3)), np.random.default_rng(6).uniform(0.5, 2.0, (2, 3))
    structured = _structured(torch, TD, torch.tensor(a), torch.tensor(b))
    for name, ours in _structured(mg, D, mg.tensor(a), mg.tensor(b)).items():
        yield name, ours, structured[name]
    for name, ours, theirs in [
        ("normal", D.Normal, TD.Normal), ("uniform", lambda lo, hi: D.Uniform(lo, lo + hi), lambda lo, hi: TD.Uniform(lo, lo + hi)),
        ("beta", lambda lo, hi: D.Beta(hi, hi + 0.5), lambda lo, hi: TD.Beta(hi, hi + 0.5)),
        ("gamma", lambda lo, hi: D.Gamma(hi, hi + 0.5), lambda lo, hi: TD.Gamma(hi, hi + 0.5)), ("von_mises", D.VonMises, TD.VonMises),
        ("logistic_normal", D.LogisticNormal, TD.LogisticNormal), ("bernoulli", lambda lo, hi: D.Bernoulli(logits=lo), lambda lo, hi: TD.Bernoulli(logits=lo)),
        ("relaxed_bernoulli", lambda lo, hi: D.RelaxedBernoulli(hi, logits=lo), lambda lo, hi: TD.RelaxedBernoulli(hi, logits=lo)),
        ("poisson", lambda lo, hi: D.Poisson(hi), lambda lo, hi: TD.Poisson(hi)),
        ("lognormal_exp", lambda lo, hi: D.TransformedDistribution(D.Normal(lo, hi), [D.ExpTransform()]),
         lambda lo, hi: TD.TransformedDistribution(TD.Normal(lo, hi), [TD.ExpTransform()])),
    ]:
        yield name, ours(mg.tensor(a), mg.tensor(b)), theirs(torch.tensor(a), torch.tensor(b))


@pytest.mark.parametrize("name, ours, theirs", list(_with_supports()), ids=[case[0] for case in _with_supports()])
def test_supports_are_torchs(name, ours, theirs):
    """`support` as torch's: the same event dimensions and discreteness, the same verdict on the
    family's own draws, on them moved off the support (negated, shifted by ½, NaN) and on zeros;
    `biject_to(support)` of a continuous one maps any real numbers into it."""
    torch.manual_seed(0)
    draws = theirs.sample((4,)).double()
    support, their_support = ours.support, theirs.support
    assert (support.event_dim, support.is_discrete) == (their_support.event_dim, their_support.is_discrete)
    for probe in (draws, -draws, draws + 0.5, 0.0 * draws, draws * np.nan):
        np.testing.assert_array_equal(support.check(probe.numpy()), their_support.check(probe).numpy(), err_msg=f"{name}: {support}")
    if not support.is_discrete and name not in ("mvn", "low_rank", "lognormal_exp") and support.event_dim <= 1:
        transform = D.biject_to(support)
        unconstrained = np.random.default_rng(7).standard_normal(tuple(transform.inverse_shape(draws.shape)))
        assert support.check(transform(unconstrained).data).all(), (name, support)
