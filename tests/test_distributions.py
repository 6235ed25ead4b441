"""minigrad.distributions against torch.distributions in float64: log-densities, entropies, CDFs,
moments and KL divergences with their first and second derivatives in the parameters, the reparameterized
samples' gradients, the statistics of seeded draws, and the checks PyTorch's validate_args makes."""

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
def test_bernoulli(form):
    params = RNG.uniform(0.1, 0.9, 5) if form == "probs" else RNG.standard_normal(5)
    value = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    _compare(lambda p: D.Bernoulli(**{form: p}).log_prob(value), lambda p: TD.Bernoulli(**{form: p}).log_prob(torch.tensor(value)), [params], second=True)
    _compare(lambda p: D.Bernoulli(**{form: p}).entropy(), lambda p: TD.Bernoulli(**{form: p}).entropy(), [params], second=True)


def test_bernoulli_logits_do_not_overflow():
    assert D.Bernoulli(logits=mg.tensor([800.0])).log_prob(mg.tensor([0.0])).item() == -800.0


@pytest.mark.parametrize("form", ["covariance_matrix", "scale_tril", "precision_matrix"])
def test_multivariate_normal(form):
    matrix = {"covariance_matrix": COV, "scale_tril": np.linalg.cholesky(COV), "precision_matrix": np.linalg.inv(COV)}[form]
    value = RNG.standard_normal((4, 3))
    _compare(lambda m, c: D.MultivariateNormal(m, **{form: c}).log_prob(value), lambda m, c: TD.MultivariateNormal(m, **{form: c}).log_prob(torch.tensor(value)), [LOC, matrix], second=True)
    _compare(lambda c: D.MultivariateNormal(mg.tensor(LOC), **{form: c}).entropy(), lambda c: TD.MultivariateNormal(torch.tensor(LOC), **{form: c}).entropy(), [matrix])


def test_a_batch_of_multivariate_normals():
    locs, factors = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3, 3))

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
    ],
    ids=["normal", "categorical", "bernoulli", "multivariate-normal"],
)
def test_kl_divergence(pair):
    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    _compare(lambda x, y: D.kl_divergence(*pair(mg, D, x, y)), lambda x, y: TD.kl_divergence(*pair(torch, TD, x, y)), [a, b], second=True)


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
    with pytest.raises(NotImplementedError, match=f"{ours.__name__} has no reparameterized sample.*incomplete gamma"):
        d.rsample()


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
