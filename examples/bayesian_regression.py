"""Bayesian linear regression by variational inference: a posterior over a cubic's weights, fitted
by gradient ascent on the ELBO, lands on the exact posterior.

    python examples/bayesian_regression.py           # 1,500 steps, a few seconds; prints q beside the exact posterior
    python examples/bayesian_regression.py --plot    # the data, the posterior mean and its 95 % band

The model: y = Φ(x) w + ε with the features Φ(x) = (1, x, x², x³), a prior w ~ N(0, I) and noise
ε ~ N(0, σ²). Variational inference picks, in a family of distributions q over w, the one that
maximizes the evidence lower bound

    ELBO(q, σ) = E_q[log p(y | w, σ)] − KL(q ‖ p(w))   ≤   log p(y | σ).

Here q is a `LowRankMultivariateNormal` N(μ, W Wᵀ + D): the expectation is estimated from draws
w = μ + W ε + √D η (`rsample`, the reparameterization trick: a differentiable function of μ, W and
D), the KL divergence to the prior is exact, and the gradient comes by backpropagation. D and σ
must be positive: they are `transform_to(constraints.positive)` of unconstrained parameters, so
that Adam can move them anywhere.

A check that VI found what it should: with W of full rank the family holds the exact posterior
N(S Φᵀy / σ², S), S = (ΦᵀΦ / σ² + I)⁻¹, where the bound is tight, so the optimum q is that
posterior, and σ maximizes the marginal likelihood p(y | σ) (empirical Bayes). `exact_posterior`
computes it in closed form; the script prints both.

The program is written as a PyTorch user writes it; with `torch` imported in place of minigrad it
is a PyTorch program, and tests/test_examples.py runs it so: with the same draws the two libraries
compute the same ELBO and gradients, and each lands on the exact posterior.
"""

import argparse

import numpy as np

import minigrad as mg
from minigrad import nn, optim
from minigrad.distributions import LowRankMultivariateNormal, MultivariateNormal, Normal, constraints, kl_divergence, transform_to

positive = transform_to(constraints.positive)  # ℝ onto (0, ∞): the exponential


def data(n=30, seed=0):
    """n noisy points of sin(2x) on [−1.5, 1.5]."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-1.5, 1.5, n))
    return mg.tensor(x), mg.tensor(np.sin(2.0 * x) + 0.25 * rng.standard_normal(n))


def features(x, degree=3):
    """Φ(x) = (1, x, ..., x^degree), one row per point."""
    return mg.stack([x**k for k in range(degree + 1)], dim=-1)


class Posterior(nn.Module):
    """q(w) = N(loc, factor factorᵀ + diag(positive(raw_diag))) and the noise scale positive(raw_noise)."""

    def __init__(self, dim=4):
        super().__init__()
        self.loc = nn.Parameter(mg.zeros(dim, dtype=mg.float64))
        self.factor = nn.Parameter(0.1 * mg.randn(dim, dim, dtype=mg.float64))
        self.raw_diag = nn.Parameter(mg.full((dim,), -3.0, dtype=mg.float64))
        self.raw_noise = nn.Parameter(mg.zeros((), dtype=mg.float64))

    def q(self):
        return LowRankMultivariateNormal(self.loc, self.factor, positive(self.raw_diag))

    def noise(self):
        return positive(self.raw_noise)

    def elbo(self, phi, y, draws=32):
        """E_q[log p(y | w)] from `draws` reparameterized draws of w, minus KL(q ‖ N(0, I))."""
        q = self.q()
        w = q.rsample((draws,))
        log_likelihood = Normal(w @ phi.mT, self.noise()).log_prob(y).sum(-1).mean()
        dim = self.loc.shape[0]
        prior = MultivariateNormal(mg.zeros(dim, dtype=mg.float64), covariance_matrix=mg.eye(dim, dtype=mg.float64))
        return log_likelihood - kl_divergence(q, prior)


def train(model, x, y, steps, lr=0.02):
    """Adam on −ELBO, its learning rate decayed tenfold over the run (the gradient is a Monte Carlo
    estimate: a smaller step averages its noise away at the end); the ELBO of each step."""
    phi = features(x)
    optimizer = optim.Adam(model.parameters(), lr=lr)
    schedule = optim.lr_scheduler.LambdaLR(optimizer, lambda step: 0.1 ** (step / steps))
    history = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = -model.elbo(phi, y)
        loss.backward()
        optimizer.step()
        schedule.step()
        history.append(-loss.item())
        if step % max(1, steps // 5) == 0 or step == steps - 1:
            print(f"step {step:5d}  ELBO {history[-1]:8.3f}  noise σ {model.noise().item():.3f}")
    return history


def exact_posterior(phi, y, noise):
    """The posterior N(mean, covariance) of w given σ: covariance (ΦᵀΦ/σ² + I)⁻¹, mean covariance Φᵀy/σ²."""
    covariance = mg.linalg.inv(phi.mT @ phi / noise**2 + mg.eye(phi.shape[1], dtype=phi.dtype))
    return covariance @ phi.mT @ y / noise**2, covariance


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--plot", action="store_true", help="draw the data, the posterior mean curve and its 95 %% band")
    args = parser.parse_args(argv)
    mg.manual_seed(0)
    x, y = data()
    model = Posterior()
    train(model, x, y, args.steps)
    with mg.no_grad():
        q, phi = model.q(), features(x)
        mean, covariance = exact_posterior(phi, y, model.noise())
        print("weights      q's mean    exact mean  q's std     exact std")
        for k in range(len(mean)):
            print(f"  x^{k}      {q.mean[k].item():9.4f}   {mean[k].item():9.4f}   {q.stddev[k].item():9.4f}   {covariance[k, k].sqrt().item():9.4f}")
    if args.plot:
        import matplotlib.pyplot as plt

        grid = mg.linspace(-1.7, 1.7, 200, dtype=mg.float64)
        with mg.no_grad():
            rows = features(grid)
            centre = rows @ q.mean
            spread = ((rows @ q.covariance_matrix) * rows).sum(-1).sqrt()  # the std of Φ(x) w under q
        plt.plot(x.numpy(), y.numpy(), "k.", label="data")
        plt.plot(grid.numpy(), centre.numpy(), label="posterior mean")
        plt.fill_between(grid.numpy(), (centre - 1.96 * spread).numpy(), (centre + 1.96 * spread).numpy(), alpha=0.3,
                         label="95 % band of the curve Φ(x) w under q")
        plt.legend()
        plt.title(f"Bayesian cubic regression by VI (noise σ = {model.noise().item():.3f})")
        plt.show()


if __name__ == "__main__":
    main()
