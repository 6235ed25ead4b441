"""Differentiable ODE solvers: the solver's steps are recorded like any other operations.

To integrate dy/dt = f(t, y) from t0 to t1 in n fixed steps of h = (t1 - t0) / n, a solver
applies one update rule n times. Each update is a handful of tensor operations, so the whole
trajectory is one long graph and backpropagation through it ("discretise, then optimise") gives
the exact gradient of the *discrete* solution with respect to y0 and to any parameter f uses.
The price is memory: every step's intermediate values stay alive until the backward pass, so
saved activations grow linearly with n. Chen et al. (2018) avoid that with the adjoint ODE, and
checkpointing (chapter 6) trades recomputation for it.
"""

from .functional import stack
from .tensor import Tensor


def _euler_step(f, t, y, h):
    """y(t + h) ≈ y + h f(t, y): first order, global error O(h)."""
    return y + h * f(t, y)


def _rk4_step(f, t, y, h):
    """The classical Runge–Kutta step: four slopes averaged, global error O(h⁴)."""
    k1 = f(t, y)
    k2 = f(t + h / 2, y + (h / 2) * k1)
    k3 = f(t + h / 2, y + (h / 2) * k2)
    k4 = f(t + h, y + h * k3)
    return y + (h / 6) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def _integrate(step, f, y0, t0, t1, n_steps):
    if int(n_steps) != n_steps or n_steps < 1:
        raise ValueError(f"ODE solver: n_steps must be a positive integer, got {n_steps!r}")
    n_steps = int(n_steps)
    y = y0 if isinstance(y0, Tensor) else Tensor(y0)
    h = (t1 - t0) / n_steps
    states = [y]
    for k in range(n_steps):
        y = step(f, t0 + k * h, y, h)
        states.append(y)
    return stack(states)


def euler_solve(f, y0, t0, t1, n_steps):
    """Integrate dy/dt = f(t, y) with the explicit Euler method; the trajectory, differentiably.

    `f(t, y)` takes a float time and a tensor shaped like `y0` and returns the slope, shaped like
    `y0`. Uses n_steps steps of h = (t1 - t0) / n_steps, y_{k+1} = y_k + h f(t0 + k h, y_k), and
    returns the tensor of shape (n_steps + 1, *y0.shape) holding y_0 = y0, y_1, ..., y_n ≈ y(t1).
    """
    return _integrate(_euler_step, f, y0, t0, t1, n_steps)


def rk4_solve(f, y0, t0, t1, n_steps):
    """Like `euler_solve`, with the fourth-order Runge–Kutta update (4 evaluations of f per step)."""
    return _integrate(_rk4_step, f, y0, t0, t1, n_steps)
