"""minigrad.distributions.transforms and TransformedDistribution against torch's in float64 (the
change-of-variables densities, CDFs and quantiles to second order, log-determinants, event
dimensions, the cache that makes a squashed Gaussian's log-density of its own draws finite), and
the relaxed (Gumbel-softmax) distributions built on them: densities against torch's, seeded draws
against their laws."""

import math

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import distributions as D
from minigrad.errors import ShapeError
from oracles import compare_with_torch as _compare

TD = torch.distributions
RNG = np.random.default_rng(20261208)
LOC, SCALE = RNG.standard_normal(3), RNG.uniform(0.5, 1.5, 3)

# name: (the transforms of minigrad's library `lib` (D or TD), values in their codomain)
TRANSFORMS = {
    "exp": (lambda lib: [lib.ExpTransform()], RNG.uniform(0.2, 3.0, (2, 3))),
    "affine": (lambda lib: [lib.AffineTransform(1.5, -2.0)], RNG.standard_normal((2, 3))),
    "sigmoid": (lambda lib: [lib.SigmoidTransform()], RNG.uniform(0.05, 0.95, (2, 3))),
    "tanh": (lambda lib: [lib.TanhTransform()], RNG.uniform(-0.9, 0.9, (2, 3))),
    "softplus": (lambda lib: [lib.SoftplusTransform()], RNG.uniform(0.2, 3.0, (2, 3))),
    "exp-power": (lambda lib: [lib.ExpTransform(), lib.PowerTransform(2.5 if lib is D else torch.tensor(2.5, dtype=torch.float64))], RNG.uniform(0.2, 3.0, (2, 3))),
    "exp-inverse": (lambda lib: [lib.ExpTransform().inv], RNG.standard_normal((2, 3))),  # log, on a positive base below
    "compose": (lambda lib: [lib.ComposeTransform([lib.AffineTransform(0.5, 3.0), lib.TanhTransform()])], RNG.uniform(-0.9, 0.9, (2, 3))),
}


def _base(lib, name, loc, scale):
    return lib.LogNormal(loc, scale) if name == "exp-inverse" else lib.Normal(loc, scale)


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transformed_densities_cdfs_and_quantiles_as_torch(name):
    """log p, the CDF and the quantile of f(X), X normal, with their first and second derivatives
    in the base's parameters and the value, against torch's; the draws are f of the base's."""
    rng = np.random.default_rng(1)
    transforms, values = TRANSFORMS[name]

    def of(lib, statistic):
        return lambda m, s, v: getattr(lib.TransformedDistribution(_base(lib, name, m, s), transforms(lib)), statistic)(v)

    _compare(of(D, "log_prob"), of(TD, "log_prob"), [LOC, SCALE, values], second=True)
    _compare(of(D, "cdf"), of(TD, "cdf"), [LOC, SCALE, values], second=True)
    probabilities = rng.uniform(0.05, 0.95, (2, 3))
    _compare(of(D, "icdf"), of(TD, "icdf"), [LOC, SCALE, probabilities], second=True)
    d = D.TransformedDistribution(_base(D, name, mg.tensor(LOC), mg.tensor(SCALE)), transforms(D))
    assert (d.batch_shape, d.event_shape, d.has_rsample) == ((3,), (), True)
    mg.manual_seed(3)
    draws = d.rsample((4,))
    mg.manual_seed(3)
    x = _base(D, name, mg.tensor(LOC), mg.tensor(SCALE)).rsample((4,))
    for transform in d.transforms:
        x = transform(x)
    np.testing.assert_allclose(draws.data, x.data, rtol=1e-15)
    np.testing.assert_allclose(d.cdf(d.icdf(probabilities)).data, probabilities, rtol=1e-10)  # atanh's conditioning near ±1


@pytest.mark.parametrize("name", ["exp", "affine", "sigmoid", "tanh", "softplus"])
def test_each_transform_its_inverse_and_log_determinant_as_torch(name):
    rng = np.random.default_rng(2)
    (ours,), (theirs,) = TRANSFORMS[name][0](D), TRANSFORMS[name][0](TD)
    x = rng.uniform(-2.0, 2.0, (2, 3))
    y = ours(x)
    np.testing.assert_allclose(y.data, theirs(torch.tensor(x)).numpy(), rtol=1e-14)
    np.testing.assert_allclose(ours.inv(y).data, x, rtol=1e-12)
    assert ours.inv.inv is ours
    if name == "affine":  # a constant: log |scale| for every x
        np.testing.assert_allclose(ours.log_abs_det_jacobian(x, y).data, np.full(x.shape, math.log(2.0)), rtol=1e-15)
        np.testing.assert_allclose(ours.inv.log_abs_det_jacobian(y, x).data, np.full(x.shape, -math.log(2.0)), rtol=1e-15)
    else:
        _compare(lambda t: ours.log_abs_det_jacobian(t, ours(t)), lambda t: theirs.log_abs_det_jacobian(t, theirs(t)), [x], second=True)
        _compare(lambda t: ours.inv.log_abs_det_jacobian(ours(t), t), lambda t: theirs.inv.log_abs_det_jacobian(theirs(t), t), [x], second=True)
    assert ours.sign == theirs.sign


def test_an_affine_transform_on_events_reads_the_base_batch_as_an_event():
    """AffineTransform(event_dim=1): one log-determinant per vector, the base's batch dimension
    read as the event's (as torch does it, through Independent)."""
    rng = np.random.default_rng(3)
    loc, scale, values = rng.standard_normal(3), rng.uniform(0.5, 2.0, 3), rng.standard_normal((2, 3))

    def of(lib):
        return lambda m, s, v: lib.TransformedDistribution(lib.Normal(m, s), lib.AffineTransform(m * 0.5, s, event_dim=1)).log_prob(v)

    _compare(of(D), of(TD), [loc, scale, values], second=True)
    d = D.TransformedDistribution(D.Normal(mg.tensor(loc), mg.tensor(scale)), D.AffineTransform(0.0, mg.tensor(scale), event_dim=1))
    assert (d.batch_shape, d.event_shape) == ((), (3,)) and d.log_prob(values).shape == (2,)


def test_a_squashed_gaussian_policy_with_the_cache():
    """Soft actor-critic's policy: tanh of a Gaussian. Without the cache a draw far in the tail
    rounds to ±1, and its log-density is refused as outside (−1, 1); with cache_size=1 the inverse
    of the transform's own output is the pre-image exactly, and the log-density is finite and
    differentiable (the formula 2(log 2 − x − softplus(−2x)) never takes log 0)."""
    mu = mg.tensor([0.0, 30.0], requires_grad=True)
    mg.manual_seed(0)
    plain = D.TransformedDistribution(D.Normal(mu, 1.0), D.TanhTransform())
    action = plain.rsample()
    assert action.data[1] == 1.0
    with pytest.raises(ValueError, match=r"TransformedDistribution.log_prob: values must be in \(-1, 1\)"):
        plain.log_prob(action)
    mg.manual_seed(0)
    cached = D.TransformedDistribution(D.Normal(mu, 1.0), D.TanhTransform(cache_size=1))
    action = cached.rsample()
    log_prob = cached.log_prob(action)
    assert np.isfinite(log_prob.data).all()
    (grad,) = mg.gradients(log_prob.sum(), [mu])
    torch_mu = torch.tensor(mu.data, requires_grad=True)
    eps = torch.tensor(cached.transforms[0]._cached[0].data) - torch_mu.detach()
    policy = TD.TransformedDistribution(TD.Normal(torch_mu, 1.0), TD.TanhTransform(cache_size=1))
    torch_action = policy.transforms[0](torch_mu + eps)
    torch_log_prob = policy.log_prob(torch_action)
    (torch_grad,) = torch.autograd.grad(torch_log_prob.sum(), [torch_mu])
    np.testing.assert_allclose(log_prob.data, torch_log_prob.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(grad.data, torch_grad.numpy(), rtol=1e-12, atol=1e-12)


def test_kl_divergence_of_transformed_distributions():
    """Under one and the same invertible map KL is the base distributions' (torch's rule), to
    second order; with different maps it is refused, naming both."""
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))

    def pair(lib, x, y):
        squash = [lib.AffineTransform(0.5, 2.0), lib.TanhTransform()]
        return (lib.TransformedDistribution(lib.Normal(x[0], x[1].exp()), squash),
                lib.TransformedDistribution(lib.Normal(y[0], y[1].exp()), squash))

    _compare(lambda x, y: D.kl_divergence(*pair(D, x, y)), lambda x, y: TD.kl_divergence(*pair(TD, x, y)), [a, b], second=True)
    p = D.TransformedDistribution(D.Normal(0.0, 1.0), D.AffineTransform(0.0, 2.0))
    q = D.TransformedDistribution(D.Normal(0.0, 1.0), D.AffineTransform(0.0, 3.0))
    with pytest.raises(NotImplementedError, match=r"no closed form for \(TransformedDistribution, TransformedDistribution\) with different transforms"):
        D.kl_divergence(p, q)


def test_lognormal_is_a_transformed_normal():
    rng = np.random.default_rng(4)
    d = D.LogNormal(mg.tensor(LOC), mg.tensor(SCALE))
    assert isinstance(d, D.TransformedDistribution) and isinstance(d.transforms[0], D.ExpTransform)
    assert D.transforms.ExpTransform is D.ExpTransform
    assert repr(D.Weibull(np.ones(2), 2.0)) == "Weibull(scale: (2,), concentration: ())"  # a named family: its parameters
    assert repr(D.TransformedDistribution(D.Normal(0.0, 1.0), D.TanhTransform())) == "TransformedDistribution(Normal(loc: (), scale: ()), [TanhTransform()])"
    values = rng.uniform(0.2, 3.0, (2, 3))
    np.testing.assert_allclose(d.log_prob(values).data, D.Normal(LOC, SCALE).log_prob(np.log(values)).data - np.log(values), rtol=1e-14)


def test_transforms_name_what_does_not_fit():
    with pytest.raises(ShapeError, match=r"the parameters of AffineTransform\(loc: \(3,\).* broadcast the shape \(\) to \(3,\)"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), D.AffineTransform(mg.zeros(3), 1.0))
    with pytest.raises(ShapeError, match="acts on events of 2 dimensions, more than the base distribution's shape"):
        D.TransformedDistribution(D.Normal(mg.zeros(3), 1.0), D.AffineTransform(0.0, 1.0, event_dim=2))
    with pytest.raises(TypeError, match="transforms must be Transforms, got ufunc"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), [np.exp])
    with pytest.raises(ValueError, match=r"ExpTransform\(\) inverse: values must be positive, got \[-1.0\]"):
        D.ExpTransform().inv(mg.tensor([-1.0]))
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.TanhTransform(cache_size=2)
    with pytest.raises(ValueError, match=r"LogNormal.log_prob: values must be positive, got \[0.0\]"):
        D.LogNormal(0.0, 1.0).log_prob(0.0)
    squashed = D.TransformedDistribution(D.Normal(0.0, 1.0), D.TanhTransform())
    for statistic in ("mean", "variance", "stddev"):
        with pytest.raises(NotImplementedError, match="TransformedDistribution has no (mean|variance) in closed form"):
            getattr(squashed, statistic)
    with pytest.raises(NotImplementedError, match="RelaxedBernoulli has no entropy"):
        D.RelaxedBernoulli(0.5, probs=0.3).entropy()


# --------------------------------------------------------------------------- relaxed distributions
TEMPERATURES = np.array([0.3, 1.0, 2.5])


@pytest.mark.parametrize("form", ["probs", "logits"])
def test_relaxed_bernoulli_as_torch(form):
    """log p of relaxed coin flips in (0, 1) and of their logits, to second order in the
    temperature, the parameters and the value."""
    rng = np.random.default_rng(5)
    params = rng.uniform(0.1, 0.9, 3) if form == "probs" else rng.standard_normal(3)
    unit, real = rng.uniform(0.05, 0.95, (2, 3)), rng.standard_normal((2, 3))
    for ours, theirs, values in [(D.RelaxedBernoulli, TD.RelaxedBernoulli, unit), (D.LogitRelaxedBernoulli, TD.relaxed_bernoulli.LogitRelaxedBernoulli, real)]:
        _compare(lambda t, p, v: ours(t, **{form: p}).log_prob(v), lambda t, p, v: theirs(t, **{form: p}).log_prob(v),
                 [TEMPERATURES, params, values], second=True)
    d = D.RelaxedBernoulli(mg.tensor(TEMPERATURES), **{form: mg.tensor(params)})
    assert (d.batch_shape, d.event_shape, d.has_rsample) == ((3,), (), True)


def test_relaxed_one_hot_categorical_as_torch():
    rng = np.random.default_rng(6)
    logits, simplex = rng.standard_normal((2, 4)), rng.dirichlet(np.ones(4), size=2)
    for temperature in (0.5, 2.0):
        _compare(lambda t, p, v: D.RelaxedOneHotCategorical(t, logits=p).log_prob(v),
                 lambda t, p, v: TD.RelaxedOneHotCategorical(t, logits=p).log_prob(v),
                 [np.array(temperature), logits, simplex], second=True)
    d = D.RelaxedOneHotCategorical(0.5, probs=mg.tensor(np.exp(logits)))
    assert (d.batch_shape, d.event_shape, d.has_rsample) == ((2,), (4,), True)


def _ks_distance(draws, cdf):
    x = np.sort(draws)
    levels = np.arange(1, len(x) + 1) / len(x)
    return np.max(np.maximum(levels - cdf(x), cdf(x) - (levels - 1 / len(x))))


def test_seeded_relaxed_draws_follow_their_laws():
    """40,000 seeded draws: a relaxed coin flip y has the CDF sigmoid(τ logit y − logits) (a
    Kolmogorov–Smirnov distance below 0.01; the 1 % critical value is 0.008); the argmax of a
    relaxed one-hot draw is the categorical draw at every temperature (the Gumbel-max trick), its
    frequencies within 5 standard errors of the probabilities; draws lie inside their supports."""
    mg.manual_seed(11)
    tau, logit = 0.7, 0.4
    flips = D.RelaxedBernoulli(tau, logits=logit).sample((40_000,)).data
    assert ((flips > 0) & (flips < 1)).all()
    distance = _ks_distance(flips, lambda y: 1.0 / (1.0 + np.exp(-(tau * (np.log(y) - np.log1p(-y)) - logit))))
    assert distance < 0.01, distance
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    for temperature in (0.2, 3.0):
        draws = D.RelaxedOneHotCategorical(temperature, probs=probs).sample((40_000,)).data
        np.testing.assert_allclose(draws.sum(-1), 1.0, rtol=1e-12)
        frequencies = np.bincount(draws.argmax(-1), minlength=4) / len(draws)
        assert np.all(np.abs(frequencies - probs) < 5 * np.sqrt(probs * (1 - probs) / len(draws))), frequencies


def test_relaxed_draws_are_differentiable_in_the_probabilities():
    """d/dlogits of a relaxed draw: the draw's own formula, sigmoid((logit u + logits)/τ), differentiated."""
    logits = mg.tensor([0.3, -1.2], requires_grad=True)
    mg.manual_seed(5)
    y = D.RelaxedBernoulli(0.5, logits=logits).rsample()
    (grad,) = mg.gradients(y.sum(), [logits])
    np.testing.assert_allclose(grad.data, y.data * (1 - y.data) / 0.5, rtol=1e-12)
    with pytest.raises(ValueError, match="LogitRelaxedBernoulli: temperature must be positive"):
        D.RelaxedBernoulli(0.0, logits=logits)
    assert math.isclose(D.RelaxedBernoulli(0.5, probs=0.25).probs.item(), 0.25)


# --------------------------------------------------------------------------- constraints
def test_constraints_check_as_torch_and_set_event_dims():
    """The sets transforms declare as their domain and codomain: the same checks as torch's (on
    the edges too), event_dim from `independent`, and PyTorch's import paths."""
    from minigrad.distributions.constraints import real_vector
    from minigrad.distributions.transforms import TanhTransform

    values = np.array([-np.inf, -1.0, -0.5, 0.0, 1e-300, 0.5, 1.0, 2.0, np.inf, np.nan])
    for name, args in [("real", ()), ("positive", ()), ("nonnegative", ()), ("unit_interval", ()), ("interval", (-1.0, 1.0)),
                       ("half_open_interval", (0.0, 1.0)), ("greater_than", (0.5,)), ("greater_than_eq", (0.5,))]:
        ours, theirs = getattr(D.constraints, name), getattr(TD.constraints, name)
        ours, theirs = (ours(*args), theirs(*args)) if args else (ours, theirs)
        np.testing.assert_array_equal(ours.check(values), theirs.check(torch.tensor(values)).numpy(), err_msg=name)
        assert ours.event_dim == theirs.event_dim == 0
    pairs = np.array([[0.0, 1.0], [np.nan, 2.0]])
    np.testing.assert_array_equal(real_vector.check(pairs), TD.constraints.real_vector.check(torch.tensor(pairs)).numpy())
    assert real_vector.event_dim == D.constraints.independent(D.constraints.positive, 2).event_dim - 1 == 1
    assert TanhTransform is D.TanhTransform and str(D.constraints.positive) == "positive"

    class Swap(D.Transform):
        domain = codomain = D.constraints.real_vector

        def _call(self, x):
            return x.flip(-1)

        def _inverse(self, y):
            return y.flip(-1)

        def log_abs_det_jacobian(self, x, y):
            return mg.zeros(x.shape[:-1])

    swapped = D.TransformedDistribution(D.Normal(mg.zeros(2), mg.tensor([1.0, 3.0])), Swap())
    assert (swapped.batch_shape, swapped.event_shape, Swap().event_dim) == ((), (2,), 1)
    np.testing.assert_allclose(swapped.log_prob(mg.tensor([0.3, 0.1])).item(), D.Normal(mg.zeros(2), mg.tensor([1.0, 3.0])).log_prob(mg.tensor([0.1, 0.3])).sum().item())
    with pytest.raises(NotImplementedError, match=r"TransformedDistribution.cdf: needs monotone elementwise transforms"):
        swapped.cdf(mg.tensor([0.3, 0.1]))
    # KL through a user's map: the same object is the same map; another instance may hold other
    # parameters (a network), so the pair is refused rather than given the bases' KL
    swap = Swap()
    base, other = D.Independent(D.Normal(mg.zeros(2), mg.ones(2)), 1), D.Independent(D.Normal(mg.ones(2), mg.ones(2)), 1)
    np.testing.assert_allclose(D.kl_divergence(D.TransformedDistribution(base, swap), D.TransformedDistribution(other, swap)).item(), 1.0)
    with pytest.raises(NotImplementedError, match="with different transforms"):
        D.kl_divergence(D.TransformedDistribution(base, Swap()), D.TransformedDistribution(other, Swap()))


# --------------------------------------------------------------------------- more transforms, biject_to and transform_to
def _more_transforms(lib):
    """name -> (transform, whether it is one-to-one with a log-determinant), in `lib` (D or TD)."""
    normal = lib.Normal(*(torch.tensor(v, dtype=torch.float64) if lib is TD else v for v in (0.5, 2.0)))
    return {
        "stick_breaking": (lib.StickBreakingTransform(), True),
        "softmax": (lib.SoftmaxTransform(), False),
        "abs": (lib.AbsTransform(), False),
        "lower_cholesky": (lib.LowerCholeskyTransform(), False),
        "independent_exp": (lib.IndependentTransform(lib.ExpTransform(), 1), True),
        "reshape": (lib.ReshapeTransform((3,), (3, 1)), True),
        "cdf": (lib.CumulativeDistributionTransform(normal), True),
        "compose": (lib.ComposeTransform([lib.AffineTransform(0.5, 2.0), lib.StickBreakingTransform()]), True),
    }


def _same_log_determinants(ours, theirs, x):
    """log |det J| at x as torch's, to second order unless it is a constant (a reshape's 0)."""
    t = torch.tensor(x, requires_grad=True)
    theirs_at_x = theirs.log_abs_det_jacobian(t, theirs(t))
    np.testing.assert_allclose(ours.log_abs_det_jacobian(mg.tensor(x), ours(x)).data, theirs_at_x.detach().numpy(), rtol=1e-13, atol=1e-15)
    if theirs_at_x.requires_grad:
        _compare(lambda t: ours.log_abs_det_jacobian(t, ours(t)), lambda t: theirs.log_abs_det_jacobian(t, theirs(t)), [x], second=True)


@pytest.mark.parametrize("name", _more_transforms(D))
def test_more_transforms_as_torch(name):
    """Each map, its inverse on its outputs, its log-determinant to second order (for the
    one-to-one ones), its shapes and its domain's and codomain's event dimensions, as torch's."""
    (ours, bijective), (theirs, _) = _more_transforms(D)[name], _more_transforms(TD)[name]
    x = np.random.default_rng(7).standard_normal((2, 3, 3) if name == "lower_cholesky" else (2, 3))
    y, their_y = ours(x), theirs(torch.tensor(x))
    np.testing.assert_allclose(y.data, their_y.numpy(), rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(ours.inv(y).data, theirs.inv(their_y).numpy(), rtol=1e-12, atol=1e-15)
    assert ours.forward_shape(x.shape) == tuple(theirs.forward_shape(x.shape)) == y.shape
    assert ours.inverse_shape(y.shape) == tuple(theirs.inverse_shape(y.shape)) == x.shape
    assert (ours.domain.event_dim, ours.codomain.event_dim, ours.bijective) == (theirs.domain.event_dim, theirs.codomain.event_dim, theirs.bijective)
    assert ours.codomain.check(y.data).all()
    if bijective:
        np.testing.assert_allclose(ours.inv(y).data, x, rtol=1e-12)
        _same_log_determinants(ours, theirs, x)
    else:
        with pytest.raises(NotImplementedError, match=f"{type(ours).__name__}.log_abs_det_jacobian"):
            ours.log_abs_det_jacobian(mg.tensor(x), y)


def test_maps_that_change_the_event_shape_make_distributions_as_torch():
    """A Gaussian pushed onto the simplex by stick-breaking (torch's LogisticNormal) and a
    reshaped one: event shapes and log-densities to second order, as torch's."""
    rng = np.random.default_rng(8)
    loc, scale = rng.standard_normal((2, 3)), rng.uniform(0.5, 2.0, (2, 3))

    def of(lib, transforms):
        return lambda m, s, v: lib.TransformedDistribution(lib.Normal(m, s), transforms(lib)).log_prob(v)

    simplex = TD.TransformedDistribution(TD.Normal(torch.tensor(loc), torch.tensor(scale)), TD.StickBreakingTransform()).sample((4,))
    _compare(of(D, lambda lib: lib.StickBreakingTransform()), of(TD, lambda lib: lib.StickBreakingTransform()), [loc, scale, simplex.numpy()], second=True)
    reshape = lambda lib: [lib.ExpTransform(), lib.ReshapeTransform((2, 3), (3, 2))]  # noqa: E731
    _compare(of(D, reshape), of(TD, reshape), [loc, scale, rng.uniform(0.5, 2.0, (3, 2))], second=True)
    for transforms, event in ((D.StickBreakingTransform(), (2, 4)), (reshape(D), (3, 2))):
        d = D.TransformedDistribution(D.Normal(mg.tensor(loc), mg.tensor(scale)), transforms)
        assert (d.batch_shape, d.event_shape) == ((), event) if event == (3, 2) else ((2,), (4,))
        assert d.sample((5,)).shape == (5,) + tuple(d.batch_shape) + tuple(d.event_shape)
    with pytest.raises(ValueError, match=r"ReshapeTransform: in_shape \(2, 3\) and out_shape \(5,\) hold different numbers of entries"):
        D.ReshapeTransform((2, 3), (5,))


CONSTRAINED = [  # (constraint in minigrad, the same in torch, the shape of an unconstrained input)
    (D.constraints.real, TD.constraints.real, (2, 3)),
    (D.constraints.positive, TD.constraints.positive, (2, 3)),
    (D.constraints.greater_than(2.0), TD.constraints.greater_than(2.0), (2, 3)),
    (D.constraints.less_than(-1.0), TD.constraints.less_than(-1.0), (2, 3)),
    (D.constraints.interval(-1.0, 3.0), TD.constraints.interval(-1.0, 3.0), (2, 3)),
    (D.constraints.unit_interval, TD.constraints.unit_interval, (2, 3)),
    (D.constraints.simplex, TD.constraints.simplex, (2, 3)),
    (D.constraints.real_vector, TD.constraints.real_vector, (2, 3)),
    (D.constraints.independent(D.constraints.positive, 1), TD.constraints.independent(TD.constraints.positive, 1), (2, 3)),
    (D.constraints.lower_cholesky, TD.constraints.lower_cholesky, (2, 3, 3)),
]


@pytest.mark.parametrize("index", range(len(CONSTRAINED)), ids=[str(c[0]) for c in CONSTRAINED])
def test_biject_to_and_transform_to_map_onto_their_sets_as_torch(index):
    """An unconstrained parameter mapped onto a constraint's set (variational parameters,
    constrained optimization), the same map as torch's: its values, their log-determinant where it
    is one-to-one; every output satisfies the constraint."""
    ours, theirs, shape = CONSTRAINED[index]
    x = np.random.default_rng(9).standard_normal(shape) * 2.0
    for registry, their_registry in ((D.biject_to, TD.biject_to), (D.transform_to, TD.transform_to)):
        if ours is D.constraints.lower_cholesky and registry is D.biject_to:  # not one-to-one: transform_to only, as torch
            with pytest.raises(NotImplementedError, match="biject_to: no transform onto"):
                registry(ours)
            continue
        transform, their_transform = registry(ours), their_registry(theirs)
        y = transform(x)
        np.testing.assert_allclose(y.data, their_transform(torch.tensor(x)).numpy(), rtol=1e-14, atol=1e-15)
        assert ours.check(y.data).all() and transform.codomain.event_dim == ours.event_dim
        if transform.bijective:
            np.testing.assert_allclose(transform.inv(y).data, x, rtol=1e-9, atol=1e-12)
            _same_log_determinants(transform, their_transform, x)


def test_a_registry_takes_a_users_constraint_and_refuses_unknown_ones(monkeypatch):
    monkeypatch.setattr(D.biject_to, "_factories", dict(D.biject_to._factories))  # the registration ends with the test

    class Odd(D.constraints.Constraint):
        description = "odd numbers"

    @D.biject_to.register(Odd)
    def _onto_odd(constraint):
        return D.AffineTransform(1.0, 2.0)

    assert isinstance(D.biject_to(Odd()), D.AffineTransform)
    with pytest.raises(NotImplementedError, match=r"transform_to: no transform onto constraints.Odd\(odd numbers\) in minigrad; register one"):
        D.transform_to(Odd())
    with pytest.raises(NotImplementedError, match=r"biject_to: no transform onto constraints.Boolean\(0 or 1\)"):
        D.biject_to(D.constraints.boolean)


def test_more_constraints_check_as_torch():
    """Simplices, triangular and Cholesky matrices, positive-definite ones, integers and booleans:
    the same checks as torch's, on the edges too, and the same event dimensions."""
    vectors = np.array([[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1], [1.0, 0.0], [0.3, 0.7 + 1e-9]])
    matrices = np.array([[[1.0, 0.0], [0.5, 2.0]], [[1.0, 0.0], [0.5, -2.0]], [[1.0, 0.1], [0.5, 2.0]], [[2.0, 1.0], [1.0, 2.0]],
                         [[1.0, 2.0], [2.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]])
    numbers = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0, 7.0])
    for name, args, values in [("simplex", (), vectors), ("lower_triangular", (), matrices), ("lower_cholesky", (), matrices),
                               ("positive_definite", (), matrices), ("less_than", (1.0,), numbers), ("boolean", (), numbers),
                               ("integer_interval", (0, 3), numbers), ("nonnegative_integer", (), numbers), ("positive_integer", (), numbers)]:
        ours, theirs = getattr(D.constraints, name), getattr(TD.constraints, name)
        ours, theirs = (ours(*args), theirs(*args)) if args else (ours, theirs)
        # one matrix at a time for torch's positive_definite: of a batch with a non-symmetric
        # matrix it returns the symmetry check alone ([[1, 2], [2, 1]] would pass)
        want = [theirs.check(torch.tensor(m)).item() for m in values] if name == "positive_definite" else theirs.check(torch.tensor(values)).numpy()
        np.testing.assert_array_equal(ours.check(values), want, err_msg=name)
        assert (ours.event_dim, ours.is_discrete) == (theirs.event_dim, theirs.is_discrete), name


def test_logistic_normal_as_torch():
    """LogisticNormal (stick-breaking of a Gaussian): the log-density of torch's draws to second
    order, shapes with a batch and without, draws on the simplex, expand, and its KL divergence
    (the Gaussians', through the same map) as torch's."""
    rng = np.random.default_rng(10)
    loc, scale = rng.standard_normal((2, 3)), rng.uniform(0.5, 2.0, (2, 3))
    torch.manual_seed(0)
    values = TD.LogisticNormal(torch.tensor(loc), torch.tensor(scale)).sample((4,))
    _compare(lambda m, s: D.LogisticNormal(m, s).log_prob(values.numpy()), lambda m, s: TD.LogisticNormal(m, s).log_prob(values),
             [loc, scale], second=True)
    for ours, theirs in ((D.LogisticNormal(loc, scale), TD.LogisticNormal(torch.tensor(loc), torch.tensor(scale))),
                         (D.LogisticNormal(0.0, 1.0), TD.LogisticNormal(torch.tensor(0.0), torch.tensor(1.0)))):
        assert (ours.batch_shape, ours.event_shape) == (tuple(theirs.batch_shape), tuple(theirs.event_shape))
    d = D.LogisticNormal(mg.tensor(loc), mg.tensor(scale))
    mg.manual_seed(1)
    draws = d.sample((5,))
    assert draws.shape == (5, 2, 4) and D.constraints.simplex.check(draws.data).all()
    expanded = d.expand((3, 2))
    assert expanded.batch_shape == (3, 2) and expanded.log_prob(values.numpy()[:, None]).shape == (4, 3, 2)
    other = D.LogisticNormal(mg.tensor(loc[::-1].copy()), mg.tensor(scale + 0.5))
    their_other = TD.LogisticNormal(torch.tensor(loc[::-1].copy()), torch.tensor(scale + 0.5))
    np.testing.assert_allclose(D.kl_divergence(d, other).data, TD.kl_divergence(TD.LogisticNormal(torch.tensor(loc), torch.tensor(scale)), their_other).numpy(), rtol=1e-12)
