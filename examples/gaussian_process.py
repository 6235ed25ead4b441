"""Gaussian-process regression from scratch: a kernel's hyperparameters fitted by maximizing the
marginal likelihood through a Cholesky factor, then predictions with their uncertainty.

    python examples/gaussian_process.py             # 200 steps of Adam on 20 noisy points of sin x
    python examples/gaussian_process.py --plot      # and draw the fit (matplotlib)

The program is written as a PyTorch user writes it (`torch.linalg.cholesky`,
`torch.linalg.solve_triangular`, Adam on three log-parameters); with `torch` imported in place of
minigrad it is a PyTorch program, and tests/test_examples.py runs it so, on the same points, and
compares every step's loss and the predictions.

The model (Rasmussen and Williams, "Gaussian Processes for Machine Learning", 2006, algorithm 2.1):
f ~ GP(0, k) with the squared-exponential kernel k(a, b) = s² exp(−|a − b|² / 2ℓ²) and noise
y = f(x) + ε, ε ~ N(0, σ²). With K = k(X, X) + σ² I = L Lᵀ and α = L⁻¹ y, the negative log
marginal likelihood is ½ |α|² + Σ log Lᵢᵢ + (n/2) log 2π: the data fit, the model's complexity and
a constant. Its gradient in (log ℓ, log s, log σ) comes through the Cholesky factor and the
triangular solve. At new points X*, the posterior mean is k(X*, X) K⁻¹ y = vᵀ α with v = L⁻¹ k(X, X*),
and its variance s² − |v|² per point.
"""

import argparse
import math

import minigrad as mg
from minigrad import optim


def data(n=20, noise=0.1, seed=0):
    """n points x in [−5, 5] and y = sin x plus Gaussian noise."""
    mg.manual_seed(seed)
    x = mg.rand(n, 1, dtype=mg.float64) * 10.0 - 5.0
    return x, mg.sin(x[:, 0]) + noise * mg.randn(n, dtype=mg.float64)


class GaussianProcess:
    """A zero-mean GP with a squared-exponential kernel; its three hyperparameters are learned in
    log space, where they are unconstrained."""

    def __init__(self, lengthscale=1.0, signal=1.0, noise=0.3):
        self.log_lengthscale = mg.tensor(math.log(lengthscale), dtype=mg.float64, requires_grad=True)
        self.log_signal = mg.tensor(math.log(signal), dtype=mg.float64, requires_grad=True)
        self.log_noise = mg.tensor(math.log(noise), dtype=mg.float64, requires_grad=True)

    def parameters(self):
        return [self.log_lengthscale, self.log_signal, self.log_noise]

    def kernel(self, a, b):
        """s² exp(−|a − b|² / 2ℓ²) for every pair of rows of a and b."""
        squared_distances = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
        return (2 * self.log_signal).exp() * mg.exp(-0.5 * squared_distances / (2 * self.log_lengthscale).exp())

    def factor(self, x):
        """L with L Lᵀ = K = k(x, x) + σ² I."""
        n = x.shape[0]
        return mg.linalg.cholesky(self.kernel(x, x) + (2 * self.log_noise).exp() * mg.eye(n, dtype=x.dtype))

    def negative_log_likelihood(self, x, y):
        low = self.factor(x)
        alpha = mg.linalg.solve_triangular(low, y[:, None], upper=False)
        return 0.5 * (alpha**2).sum() + mg.log(mg.diagonal(low)).sum() + 0.5 * x.shape[0] * math.log(2 * math.pi)

    @mg.no_grad()
    def predict(self, x, y, x_new):
        """The posterior mean and variance of f at the rows of x_new."""
        low = self.factor(x)
        alpha = mg.linalg.solve_triangular(low, y[:, None], upper=False)
        v = mg.linalg.solve_triangular(low, self.kernel(x, x_new), upper=False)
        return (v.T @ alpha)[:, 0], (2 * self.log_signal).exp() - (v**2).sum(0)


def fit(model, x, y, steps, lr=0.05, every=20):
    """Adam on the negative log marginal likelihood; the losses, one per step."""
    optimizer = optim.Adam(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = model.negative_log_likelihood(x, y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step % every == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}")
    return losses


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--plot", action="store_true", help="draw the data, the posterior mean and a 95 %% band")
    args = parser.parse_args(argv)
    x, y = data()
    model = GaussianProcess()
    fit(model, x, y, args.steps)
    lengthscale, signal, noise = (p.exp().item() for p in model.parameters())
    print(f"lengthscale {lengthscale:.3f}  signal {signal:.3f}  noise {noise:.3f} (the data's: 0.1)")
    grid = mg.linspace(-5.0, 5.0, 101, dtype=mg.float64)[:, None]
    mean, variance = model.predict(x, y, grid)
    error = (mean - mg.sin(grid[:, 0])).abs().max().item()
    print(f"largest error of the posterior mean against sin x on [-5, 5]: {error:.3f}")
    if args.plot:
        import matplotlib.pyplot as plt

        band = 1.96 * variance.clamp(min=0.0).sqrt()
        g, m, b = grid[:, 0].numpy(), mean.numpy(), band.numpy()
        plt.fill_between(g, m - b, m + b, alpha=0.3, label="95 % band")
        plt.plot(g, m, label="posterior mean")
        plt.scatter(x[:, 0].numpy(), y.numpy(), color="black", s=12, label="data")
        plt.legend()
        plt.show()


if __name__ == "__main__":
    main()
