"""Numerical differentiation: finite differences, the derivative you can always get.

Perturb one input element by a step h, evaluate f again, divide. It needs nothing from f but its
values, which makes it the independent referee for every analytic rule (gradient checking), and
nothing more: a gradient over d inputs costs O(d) evaluations of f, and its accuracy is limited by
two errors pulling h in opposite directions (Taylor's theorem, ε the float64 machine epsilon):

    forward   (f(x+h) − f(x)) / h           truncation ≈ |f''| h / 2      rounding ≈ 2 ε |f| / h
    central   (f(x+h) − f(x−h)) / 2h        truncation ≈ |f'''| h² / 6    rounding ≈ ε |f| / h

Minimising the sum gives the best step, h* ~ ε^(1/2) for forward differences and h* ~ ε^(1/3) for
central ones (`optimal_step`), with best errors ~ ε^(1/2) ≈ 1e-8 and ~ ε^(2/3) ≈ 4e-11 in relative
terms. `minigrad.gradcheck` is built on `central_difference`.
"""

import numpy as np

EPSILON = float(np.finfo(np.float64).eps)


def central_difference(f, x, h=1e-6):
    """∂f/∂x by central differences: (f(x + h eᵢ) − f(x − h eᵢ)) / 2h for every element i of x.

    `f` maps a float64 array shaped like `x` to a scalar; the result has the shape of `x`.
    Costs 2·x.size evaluations of f. The error is O(h²) (the even Taylor terms cancel), against
    O(h) for the one-sided `forward_difference`. `x` itself is never modified: f sees a private
    copy, perturbed in place one element at a time and restored exactly.
    """
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        saved = x[i]
        x[i] = saved + h
        up = float(f(x))
        x[i] = saved - h
        down = float(f(x))
        x[i] = saved
        grad[i] = (up - down) / (2 * h)
    return grad


def forward_difference(f, x, h=1e-6):
    """∂f/∂x by forward differences, (f(x + h eᵢ) − f(x)) / h: the textbook formula, error O(h).

    Same contract as `central_difference`; costs x.size + 1 evaluations of f. Kept for comparison:
    it is what naive gradient checking uses, and its error is far larger for the same h.
    """
    x = np.array(x, dtype=np.float64)
    at_x = float(f(x))
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        saved = x[i]
        x[i] = saved + h
        grad[i] = (float(f(x)) - at_x) / h
        x[i] = saved
    return grad


def optimal_step(scheme="central", scale=1.0):
    """The step h that balances truncation and rounding error for a function varying on `scale`.

    Forward differences: h* = √ε · scale (error ≈ √ε); central: h* = ε^(1/3) · scale
    (error ≈ ε^(2/3)). These assume |f|, |f''| and |f'''| of comparable size; the constants are
    dropped because only the order of magnitude matters when choosing h.
    """
    powers = {"forward": 1 / 2, "central": 1 / 3}
    if scheme not in powers:
        raise ValueError(f"optimal_step: scheme must be 'forward' or 'central', got {scheme!r}")
    return EPSILON ** powers[scheme] * scale
