"""Fit y = sin(x) on [-π, π] with a third-order polynomial, four ways: PyTorch's tutorial "Learning
PyTorch with Examples", ported to minigrad.

    python examples/polynomial_fit.py            # the four fits, 2000 steps each, a few seconds
    python examples/polynomial_fit.py --steps 500 --fit nn

The programs are the tutorial's with `torch` replaced by `mg` (`torch.nn`, `torch.optim` by
minigrad's) and two changes. The start values come from a seeded generator, so that the tests can
start PyTorch from the same ones. And, the one edit a port needs, `Linear`'s weight is (in, out)
in minigrad, (out, in) in PyTorch, so the tutorial's `weight[:, 0]` is `weight[0, :]` here. (The
tutorial's `dtype=torch.float` would be `dtype=np.float32`, and `device=` works as written for the
CPU; these run in minigrad's default float64, as their PyTorch twins in the tests do.) The four fits:

* `autograd`: coefficients as tensors that require grad, the update by hand under `no_grad`;
* `function`: the same with a custom autograd `Function`, the Legendre polynomial P₃, whose
  backward pass is written by hand;
* `nn`: `nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1))` on the features (x, x², x³), trained
  with `optim.RMSprop`;
* `dynamic`: a `Module` whose forward pass adds a random number of higher-order terms at each step
  (the graph is built anew each time, so it can differ from step to step), trained with SGD and
  momentum.

tests/test_examples.py runs the tutorial's PyTorch code beside each and compares every step.
"""

import argparse
import math
import random

import numpy as np

import minigrad as mg
from minigrad import nn, optim


def data(points=2000):
    x = mg.linspace(-math.pi, math.pi, points)
    return x, mg.sin(x)


def initial_coefficients(count, seed=0):
    """The tutorial draws its starting coefficients with randn; a seed makes them reproducible."""
    return mg.randn(count, rng=np.random.default_rng(seed)).tolist()


def _log(step, steps, loss, log_every):
    if log_every and (step % log_every == 0 or step == steps - 1):
        print(f"step {step:4d}  loss {loss:.4f}")


def _fit_by_hand(predict, params, y, steps, lr, log_every):
    """The tutorial's loop: the sum of squared errors, backward, and the update written out under
    `no_grad`. Returns (losses, the parameters' final values)."""
    losses = []
    for step in range(steps):
        loss = (predict(*params) - y).pow(2).sum()
        losses.append(loss.item())
        _log(step, steps, losses[-1], log_every)
        loss.backward()
        with mg.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad = None
    return losses, [p.item() for p in params]


def fit_autograd(x, y, steps, start, lr=1e-6, log_every=0):
    """Tensors and autograd: y ≈ a + b x + c x² + d x³."""
    params = [mg.tensor(value, requires_grad=True) for value in start]
    return _fit_by_hand(lambda a, b, c, d: a + b * x + c * x**2 + d * x**3, params, y, steps, lr, log_every)


class LegendrePolynomial3(mg.Function):
    """P₃(x) = ½(5x³ − 3x), with its derivative 3/2 (5x² − 1) written out for the backward pass."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input**3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input**2 - 1)


def fit_function(x, y, steps, start=(0.0, -1.0, 0.0, 0.3), lr=5e-6, log_every=0):
    """y ≈ a + b P₃(c + d x), through the custom Function (the tutorial's start values)."""
    params = [mg.full((), value, requires_grad=True) for value in start]
    return _fit_by_hand(lambda a, b, c, d: a + b * LegendrePolynomial3.apply(c + d * x), params, y, steps, lr, log_every)


def make_nn_model(seed=0):
    return nn.Sequential(nn.Linear(3, 1, rng=np.random.default_rng(seed)), nn.Flatten(0, 1))


def _fit_with_optimizer(model, inputs, y, optimizer, steps, log_every):
    """The tutorial's loop with nn and optim: the summed squared error, zero_grad, backward, step."""
    loss_fn = nn.MSELoss(reduction="sum")
    losses = []
    for step in range(steps):
        loss = loss_fn(model(inputs), y)
        losses.append(loss.item())
        _log(step, steps, losses[-1], log_every)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses


def fit_nn(x, y, steps, model, lr=1e-3, log_every=0):
    """nn and optim: a linear layer on (x, x², x³), RMSprop. Returns (losses, [a, b, c, d])."""
    xx = x.unsqueeze(-1).pow(mg.tensor([1, 2, 3]))
    losses = _fit_with_optimizer(model, xx, y, optim.RMSprop(model.parameters(), lr=lr), steps, log_every)
    linear = model[0]
    return losses, [linear.bias.item()] + [linear.weight[i, :].item() for i in range(3)]


class DynamicNet(nn.Module):
    """a + b x + c x² + d x³, plus e x⁴ (and e x⁵) on a random number of steps, reusing e."""

    def __init__(self, start, rng):
        self.a, self.b, self.c, self.d, self.e = (nn.Parameter(mg.tensor(value)) for value in start)
        self.rng = rng  # a random.Random: the tutorial draws with random.randint

    def forward(self, x):
        y = self.a + self.b * x + self.c * x**2 + self.d * x**3
        for exponent in range(4, self.rng.randint(4, 6)):
            y = y + self.e * x**exponent
        return y


def fit_dynamic(x, y, steps, model, lr=1e-8, momentum=0.9, log_every=0):
    """The dynamic net, SGD with momentum. Returns (losses, [a, b, c, d, e])."""
    losses = _fit_with_optimizer(model, x, y, optim.SGD(model.parameters(), lr=lr, momentum=momentum), steps, log_every)
    return losses, [p.item() for p in (model.a, model.b, model.c, model.d, model.e)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--fit", choices=["autograd", "function", "nn", "dynamic", "all"], default="all")
    args = parser.parse_args(argv)
    x, y = data()
    log_every = max(1, args.steps // 4)
    fits = {
        "autograd": lambda: fit_autograd(x, y, args.steps, initial_coefficients(4), log_every=log_every),
        "function": lambda: fit_function(x, y, args.steps, log_every=log_every),
        "nn": lambda: fit_nn(x, y, args.steps, make_nn_model(), log_every=log_every),
        "dynamic": lambda: fit_dynamic(x, y, args.steps, DynamicNet(initial_coefficients(5), random.Random(0)), log_every=log_every),
    }
    for name in fits if args.fit == "all" else [args.fit]:
        print(f"{name}:")
        _, coefficients = fits[name]()
        shape = "a + b P3(c + d x)" if name == "function" else "a + b x + c x^2 + d x^3" + (" + e x^4 + e x^5" if name == "dynamic" else "")
        print(f"result ({shape}): {', '.join(f'{c:.4f}' for c in coefficients)}")


if __name__ == "__main__":
    main()
