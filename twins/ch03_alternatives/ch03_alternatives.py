# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   language_info:
#     name: python
# ---

# %% [markdown]
# # Chapter 3 — Alternatives: numerical, symbolic and forward-mode differentiation
#
# Chapter 2 built reverse-mode automatic differentiation: one forward pass records the graph, one backward pass
# sends adjoints from the output to every input. It is not the only way to get derivatives out of a program, and it
# is easier to appreciate once you have built — and measured — its rivals. Three methods are its usual
# comparison:
#
# | method | how it works | strength | weakness in machine learning |
# | --- | --- | --- | --- |
# | **symbolic** differentiation | rewrites the *formula* of $f$ into the formula of $f'$ (SymPy, Mathematica) | exact: no rounding or truncation error | *expression swell*: the derivative of a deep composition is exponentially long when written out; branches and loops have no formula |
# | **numerical** differentiation | finite differences such as $\big(f(x+h) - f(x)\big)/h$ | needs nothing but values of $f$; the standard way to *verify* other derivatives (gradient checking) | $O(d)$ evaluations of $f$ for $d$ parameters (billions, in a large model); truncation and rounding error |
# | **forward-mode** AD | carries each value's derivative along with the value, inputs to output (dual numbers) | constant memory: no intermediate values are kept | one pass per input *direction*: a gradient of a loss $f: \mathbb{R}^N \to \mathbb{R}$ needs $N$ passes |
# | **reverse-mode** AD (chapter 2) | forward pass for the values, backward pass for the adjoints | the gradient with respect to all $N$ inputs in one backward pass | stores the intermediate values: memory grows with the size of the graph, $O(\lvert V \rvert)$ |
#
# In this chapter you will build the first three in their smallest honest form and check each of these claims by
# measuring it:
#
# 1. `central_difference(f, x, h)` — the finite-difference gradient; then the error as a function of $h$, where
#    truncation and rounding meet, and gradient checking of chapter 2's VJP rules (catching a broken one);
# 2. `symbolic_diff(expr, var)` — differentiation of formulas on a tiny expression type from `minigrad.symbolic`;
#    then expression swell: derivative size as a tree, as a DAG with shared sub-expressions, and next to the
#    graph reverse mode records;
# 3. `Dual` — dual numbers $a + b\varepsilon$ with $\varepsilon^2 = 0$, and `jvp_dual(f, x, v)`, forward mode in a
#    dozen lines; then the cost of a full gradient by forward mode, reverse mode and finite differences as the
#    number of inputs grows to $10^4$, and the mirror case of many outputs.
#
# The graph, the backward pass and the VJP rules of chapters 1 and 2 come from
# [the reference `minigrad`](../ch01_graph/ch01_graph.ipynb#reference-library), never from your earlier notebooks.
# Cells marked *graded* contain `raise NotImplementedError()` for you to replace; the cells after them test your work
# (some tests are hidden and run only when the notebook is graded, so read each specification carefully).
# Demonstrations that run your functions say so, instead of stopping, while those functions are not written yet.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib

import numpy as np
import matplotlib.pyplot as plt
from tqdm.auto import tqdm

import minigrad as mg
from minigrad import ops
from minigrad.numerical import EPSILON, forward_difference, optimal_step
from minigrad.symbolic import Expr, const, dag_size, evaluate, to_string, tree_size, var
from minigrad.testing import assert_close, assert_equal, drive, interleaved_times


@contextlib.contextmanager
def runs_your(*names):
    """Around a demonstration that runs your functions: until they work, it says so instead of stopping Run All."""
    try:
        yield
    except Exception as error:
        print(f"This demonstration runs your {', '.join(names)}; it stopped with {type(error).__name__}: {error}\n"
              f"Write (or fix) the function it names above, then run this cell again.")


# %% [markdown]
# ## 1. One function, four derivatives
#
# Our running example from chapter 1 (Baydin et al. 2018) is
#
# $$ y = f(x_1, x_2) = \ln x_1 + x_1 x_2 - \sin x_2, \qquad
#    \frac{\partial y}{\partial x_1} = \frac{1}{x_1} + x_2, \quad
#    \frac{\partial y}{\partial x_2} = x_1 - \cos x_2 . $$
#
# Throughout this chapter functions are ordinary Python written with operators and the method names of `Tensor`
# (`.log()`, `.sin()`, `.exp()`, `.tanh()`). That is the whole trick of *operator overloading*: the same function
# runs on whatever objects it is given. On tensors that require gradients it records a graph for reverse mode; on
# the dual numbers of section 4 it computes a derivative as it goes; on the symbolic expressions of section 3 it
# returns its own formula. Reverse mode first, as a reference:

# %%
def f(x1, x2):
    return x1.log() + x1 * x2 - x2.sin()


x1, x2 = mg.tensor(2.0), mg.tensor(5.0)
dy_dx1, dy_dx2 = mg.grad(f, argnums=(0, 1))(x1, x2)
print(f"reverse mode: dy/dx1 = {dy_dx1.item():.10f}   dy/dx2 = {dy_dx2.item():.10f}")
print(f"by hand:      dy/dx1 = {1 / 2.0 + 5.0:.10f}   dy/dx2 = {2.0 - np.cos(5.0):.10f}")


# %% [markdown]
# ## 2. Numerical differentiation
#
# The derivative is a limit, $f'(x) = \lim_{h \to 0} \big(f(x+h) - f(x)\big)/h$; numerical differentiation simply
# stops before the limit, at a small but finite step $h$. Taylor's theorem says what that costs:
#
# $$ f(x \pm h) = f(x) \pm h f'(x) + \tfrac{h^2}{2} f''(x) \pm \tfrac{h^3}{6} f'''(x) + O(h^4) . $$
#
# * The **forward difference** $\dfrac{f(x+h) - f(x)}{h} = f'(x) + \tfrac{h}{2} f''(x) + O(h^2)$ has a
#   truncation error of order $h$.
# * The **central difference** $\dfrac{f(x+h) - f(x-h)}{2h} = f'(x) + \tfrac{h^2}{6} f'''(x) + O(h^4)$ has a
#   truncation error of order $h^2$: the even terms of the two expansions cancel. For the same $h$ it is far
#   more accurate, at the price of one more evaluation per input ($2d$ instead of $d + 1$).
#
# For a function of many inputs, $f: \mathbb{R}^d \to \mathbb{R}$, each partial derivative perturbs one input
# element at a time along its unit vector $e_i$:
#
# $$ \frac{\partial f}{\partial x_i} \approx \frac{f(x + h e_i) - f(x - h e_i)}{2h}, \qquad i = 1, \dots, d . $$
#
# That loop over $d$ inputs is the method's fundamental cost: $2d$ evaluations of $f$ for one gradient, where
# reverse mode needs one forward and one backward pass. Nobody trains a network this way; but because it needs
# nothing except values of $f$, it is the independent referee for every hand-written derivative.
#
# ### Graded: `central_difference(f, x, h)`
#
# Return the gradient of a scalar function `f` at `x` by central differences with step `h`. `x` is a number or a
# numpy array of any shape; the result is a float64 array of the same shape (0-d for a number). Work on a float64
# *copy* of `x` — the caller's array must be exactly unchanged afterwards, and perturbing a copy in place, then
# restoring the saved value, is both cheap and exact. `np.ndindex(x.shape)` visits every element index of an
# array of any shape. `f` returns a Python float or a 0-d array; `float(f(...))` turns either into a float.

# %% nbgrader={"grade": false, "grade_id": "central_difference", "locked": false, "schema_version": 3, "solution": true}
def central_difference(f, x, h=1e-6):
    """∂f/∂x by central differences: (f(x + h eᵢ) − f(x − h eᵢ)) / 2h for every element i of x.

    `f` maps a float64 array shaped like `x` to a scalar; the result has the shape of `x`.
    Costs 2·x.size evaluations of f. The error is O(h²) (the even Taylor terms cancel), against
    O(h) for the one-sided `forward_difference`. `x` itself is never modified: f sees a private
    copy, perturbed in place one element at a time and restored exactly.
    """
    ### BEGIN SOLUTION
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
    ### END SOLUTION


# %% [markdown]
# The first test uses $f(x) = x^3$, whose central difference is exactly $3x^2 + h^2$: in
# $(x \pm h)^3 = x^3 \pm 3x^2 h + 3x h^2 \pm h^3$ the even terms $x^3$ and $3xh^2$ cancel, and the $h^3$ terms leave
# the error $h^2$, with nothing beyond it (a cubic has no higher derivatives). A forward difference,
# $3x^2 + 3xh + h^2$, cannot pass it. The second checks gradients of
# functions of arrays, and that your function leaves its input alone.

# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_numerical", "locked": true, "schema_version": 3, "solution": false}
# How the tests work: a *driver* (a function marked "Driver") builds its inputs from plain data (a function's name
# in the table below, numbers, arrays), calls your function and returns what came back as plain data; `drive(driver,
# ...)` runs it, and the test compares those facts with values it works out itself. When your notebook is graded,
# drivers run beside your code and the tests in a separate process, which never sees an object of yours.

DIFFERENTIATED = {  # name: (f, its exact gradient); the driver takes f from here, the tests the gradient
    "x**3": (lambda x: x**3, lambda x: 3 * x**2),
    "sin": (np.sin, np.cos),
    "exp(2x)": (lambda x: np.exp(2 * x), lambda x: 2 * np.exp(2 * x)),
    "sum(sin(x) * x)": (lambda a: np.sum(np.sin(a) * a), lambda a: np.cos(a) * a + np.sin(a)),
    "x0 x1² + exp(x2) - x3³": (lambda a: a[0] * a[1] ** 2 + np.exp(a[2]) - a[3] ** 3,
                               lambda a: np.array([a[1] ** 2, 2 * a[0] * a[1], np.exp(a[2]), -3 * a[3] ** 2])),
    "sum(x²)": (lambda a: np.sum(a**2), lambda a: 2 * a),
    "sum(3x)": (lambda a: np.sum(a * 3.0), lambda a: np.full(np.shape(a), 3.0)),
}


def differenced(name, x, h=None):
    """Driver: your central_difference(f, x, h) for f = DIFFERENTIATED[name] (h left out when None). Returns the
    result as a float64 array (a description if it is not numbers) and the caller's x as it is after the call."""
    f = DIFFERENTIATED[name][0]
    got = central_difference(f, x) if h is None else central_difference(f, x, h)
    return {"gradient": numbers(got), "x after": np.array(x, copy=True)}


def numbers(value):
    """`value` as a float64 array, or a description of it when it is not numbers."""
    try:
        return np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        return f"{type(value).__name__} {repr(value)[:80]}"


def difference_of(got, what):
    """The gradient from differenced's result, checked to be a float64 array."""
    if not (isinstance(got, dict) and set(got) == {"gradient", "x after"}):
        raise AssertionError(f"{what}: expected a gradient, got {got!r:.200}")
    gradient = got["gradient"]
    if not (isinstance(gradient, np.ndarray) and gradient.dtype == np.float64):
        raise AssertionError(f"{what}: expected an array of numbers, got {gradient!r:.200}")
    return gradient


def check_difference(got, name, x, what, rtol, atol, expected=None):
    """Fail unless differenced's result holds the gradient of DIFFERENTIATED[name] at x (or `expected`), shaped like
    x, and the caller's x came back unchanged."""
    expected = DIFFERENTIATED[name][1](np.array(x, dtype=np.float64)) if expected is None else expected
    assert_close(difference_of(got, what), expected, what, rtol=rtol, atol=atol)
    after = got["x after"]
    if not (isinstance(after, np.ndarray) and after.shape == np.shape(x) and np.array_equal(after, x)):
        raise AssertionError(f"central_difference changed its input: it was\n{np.asarray(x)}\nand is now\n{after}")


# %% nbgrader={"grade": true, "grade_id": "test_central_difference_scalar", "locked": true, "points": 2, "schema_version": 3, "solution": false}
h = 1e-3
got = drive(differenced, "x**3", 1.0, h)
assert_equal(difference_of(got, "central_difference(x**3, 1.0, h)").shape, (),
             "np.shape(central_difference(f, 1.0, h)): a number in, a 0-d array out")
check_difference(got, "x**3", 1.0, "central_difference(x**3, x=1, h=1e-3): exactly 3 + h² (a forward difference gives 3 + 3h + h²)",
                 rtol=1e-12, atol=1e-12, expected=3.0 + h**2)
check_difference(drive(differenced, "sin", 0.5), "sin", 0.5, "central_difference(sin, 0.5) with the default h",
                 rtol=1e-8, atol=1e-10)
print("central_difference: scalar derivatives are right")
### BEGIN HIDDEN TESTS
for step in (0.5, 0.1, 2e-2):  # the step given is the step used
    check_difference(drive(differenced, "x**3", 2.0, step), "x**3", 2.0, f"central_difference(x**3, x=2, h={step})",
                     rtol=1e-10, atol=1e-10, expected=12.0 + step**2)
check_difference(drive(differenced, "exp(2x)", -0.3), "exp(2x)", -0.3, "central_difference(exp(2x), -0.3)",
                 rtol=1e-8, atol=1e-10)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_central_difference_arrays", "locked": true, "points": 2, "schema_version": 3, "solution": false}
x = np.array([[0.1, 0.7, -1.3], [2.0, 1 / 3, -0.4]])
check_difference(drive(differenced, "sum(sin(x) * x)", x), "sum(sin(x) * x)", x,
                 "central_difference(sum(sin(x) * x)) on a 2×3 array", rtol=1e-7, atol=1e-8)
print("central_difference: gradients of array functions are right and the input is untouched")
### BEGIN HIDDEN TESTS
v = np.array([0.3, -1.1, 2.5, 0.9])
check_difference(drive(differenced, "x0 x1² + exp(x2) - x3³", v, 1e-5), "x0 x1² + exp(x2) - x3³", v,
                 "central_difference of a function mixing the elements", rtol=1e-8, atol=1e-8)
cube = np.arange(6.0).reshape(1, 2, 3)
check_difference(drive(differenced, "sum(x²)", cube, 0.25), "sum(x²)", cube,
                 "central_difference(sum(x²)) on a 1×2×3 array (exact for quadratics)", rtol=1e-12, atol=1e-12)
integers = np.array([1, 2, 3])
check_difference(drive(differenced, "sum(3x)", integers), "sum(3x)", integers,
                 "central_difference on an integer array (work on a float64 copy)", rtol=1e-6, atol=1e-8)
### END HIDDEN TESTS

# %% [markdown]
# ### Experiment: truncation error versus rounding error
#
# Why not take $h = 10^{-15}$ and be done? Because $f$ is computed in floating point: each value carries a
# relative error of about the machine epsilon $\varepsilon = 2^{-52} \approx 2.2 \times 10^{-16}$. Subtracting two
# nearly equal values $f(x+h) - f(x)$ keeps their *absolute* error, about $\varepsilon |f(x)|$, and dividing by $h$
# magnifies it. The total error of a difference quotient is therefore roughly
#
# $$ E_\text{forward}(h) \approx \underbrace{\tfrac{h}{2}\,|f''(x)|}_\text{truncation}
#                         + \underbrace{\tfrac{2\varepsilon |f(x)|}{h}}_\text{rounding}, \qquad
#    E_\text{central}(h) \approx \tfrac{h^2}{6}\,|f'''(x)| + \tfrac{\varepsilon |f(x)|}{h} . $$
#
# Truncation falls as $h$ shrinks, rounding grows: on a log-log plot the error is a "V", with slope $+1$ (forward)
# or $+2$ (central) on the right and slope $-1$ on the left. Setting the derivative of $E(h)$ to zero gives the
# best step and the best attainable error (for $f$ and its derivatives of order one):
#
# $$ h^*_\text{forward} \sim \varepsilon^{1/2} \approx 1.5 \times 10^{-8}, \quad E \sim \varepsilon^{1/2} \approx 10^{-8};
#    \qquad h^*_\text{central} \sim \varepsilon^{1/3} \approx 6 \times 10^{-6}, \quad E \sim \varepsilon^{2/3} \approx 4 \times 10^{-11} . $$
#
# So even at its best, a forward difference keeps only half of float64's 16 digits, a central difference about
# two thirds — which is why gradient checks always run in float64 and compare with a tolerance, never exactly.
# Below, your `central_difference` and the library's `forward_difference` differentiate $\sin$ at $x = 1$ for
# $h$ from $10^{-16}$ to $1$, with the two error models drawn over the measurements.

# %%
with runs_your('central_difference'):
    x0 = 1.0
    exact = np.cos(x0)
    steps = np.logspace(-16, 0, 97)
    errors = {
        "forward": np.array([abs(forward_difference(np.sin, x0, h) - exact) for h in steps]),
        "central": np.array([abs(central_difference(np.sin, x0, h) - exact) for h in steps]),
    }
    # The error models for f = sin at x = 1, where |f| = |f⁽²⁾| = sin(1) and |f⁽³⁾| = cos(1).
    model = {
        "forward": (steps / 2 * np.sin(x0), 2 * EPSILON * np.sin(x0) / steps),
        "central": (steps**2 / 6 * np.cos(x0), EPSILON * np.sin(x0) / steps),
    }

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, scheme, color in zip(axes, ["forward", "central"], ["tab:blue", "tab:orange"]):
        truncation, rounding = model[scheme]
        h_star = optimal_step(scheme)
        power = "1/2" if scheme == "forward" else "1/3"
        ax.loglog(steps, np.maximum(errors[scheme], 1e-17), "o", ms=3, color=color, label="measured error")
        ax.loglog(steps, truncation, "--", color="gray", label="truncation model")
        ax.loglog(steps, rounding, ":", color="black", label="rounding model")
        ax.axvspan(steps[0], h_star, color="tab:red", alpha=0.07)
        ax.axvspan(h_star, steps[-1], color="tab:green", alpha=0.07)
        ax.axvline(h_star, color="tab:red", lw=1, label=rf"$h^* \approx \varepsilon^{{{power}}} \approx$ {h_star:.0e}")
        # region names at the top, next to h*, where the "V" of the error leaves the plot empty
        top = ax.get_xaxis_transform()
        ax.text(h_star / 2, 0.97, "rounding\ndominates", ha="right", va="top", fontsize=9, transform=top)
        ax.text(h_star * 2, 0.97, "truncation\ndominates", ha="left", va="top", fontsize=9, transform=top)
        ax.set(title=f"{scheme} difference: d/dx sin(x) at x = 1", xlabel="step $h$", ylim=(1e-17, 1e1))
        ax.legend(loc="lower left", fontsize=8)
    axes[0].set_ylabel("|error| of the derivative")
    plt.tight_layout()
    plt.show()
    for scheme in errors:
        best = np.argmin(errors[scheme])
        print(f"{scheme:>7}: smallest error {errors[scheme][best]:.1e} at h = {steps[best]:.0e}; "
              f"at h* = {optimal_step(scheme):.0e} the model predicts ~{EPSILON ** (0.5 if scheme == 'forward' else 2 / 3):.0e}")


# %% [markdown]
# The measurements follow the models: the right branch has slope 1 for forward and 2 for central differences, the
# left branch slope $-1$ for both (with the jitter of rounding), and the smallest errors sit near $h^*$ at about
# $10^{-8}$ and $10^{-11}$. Individual points can dip far below the model when roundings happen to cancel — luck,
# not accuracy: another $x$ moves the dips. The shaded halves show which error dominates. A rule of thumb follows:
# use central differences in float64 with $h$ around $10^{-6}$ (scaled by the size of $x$), and expect agreement
# with an exact derivative to about $10^{-8}$ relative, not better.
#
# ### Gradient checking chapter 2's VJP rules
#
# Every autodiff library tests its derivative rules against finite differences (PyTorch's
# `torch.autograd.gradcheck`, JAX's `check_grads`, `minigrad.gradcheck`). For an operation $F$ with Jacobian $J$, the
# VJP rule computes $J^\top u$ for a cotangent $u$. Pick a random $u$; then $J^\top u$ is the gradient of the scalar
# $x \mapsto \langle u, F(x) \rangle$, which `central_difference` can compute on its own. One comparison checks the
# whole Jacobian (a wrong entry would have to be orthogonal to a random $u$ to hide), and one reverse pass suffices.
# The comparison uses a relative error, $|a - n| / \max(|a|, |n|)$, because a derivative of size $10^3$ and one of size
# $10^{-3}$ cannot share an absolute tolerance.
#
# Below, your `central_difference` checks the library's rules for the operations chapter 2 made you write:
# `mul` (with broadcasting), `matmul`, `tanh` and `sum`.

# %%
def check_vjp(fn, inputs, rng, h=1e-6):
    """Largest relative error between the VJP rules' Jᵀu and central differences of <u, fn(x)>, over all inputs."""
    out, vjp_fn = mg.vjp(fn, *[mg.tensor(x) for x in inputs])
    u = rng.standard_normal(out.shape)
    analytic = [g.numpy() for g in vjp_fn(mg.tensor(u))]
    worst = 0.0
    for i, x in enumerate(inputs):
        def inner(xi, i=i):  # <u, fn(x)> as a function of input i alone
            args = [mg.tensor(xi if j == i else other) for j, other in enumerate(inputs)]
            return np.sum(u * fn(*args).numpy())
        numeric = central_difference(inner, x, h)
        scale = np.maximum(np.maximum(np.abs(analytic[i]), np.abs(numeric)), 1e-12)
        worst = max(worst, float(np.max(np.abs(analytic[i] - numeric) / scale)))
    return worst


rng = np.random.default_rng(0)
rules = {
    "mul (broadcast)": (lambda a, b: a * b, [rng.standard_normal((3, 4)), rng.standard_normal((4,))]),
    "matmul": (lambda a, b: a @ b, [rng.standard_normal((3, 4)), rng.standard_normal((4, 2))]),
    "tanh": (lambda a: a.tanh(), [rng.standard_normal((3, 4))]),
    "sum (axis=0)": (lambda a: a.sum(axis=0), [rng.standard_normal((3, 4))]),
}
with runs_your("central_difference"):
    for name, (fn, inputs) in rules.items():
        print(f"{name:>16}: worst relative error {check_vjp(fn, inputs, rng):.1e}")

# %% [markdown]
# Errors of $10^{-8}$ and below: the finite-difference accuracy predicted above, so the rules are right.
# Now break one. A classic slip is a sign in the derivative of $\tanh$: $1 + \tanh^2$ instead of $1 - \tanh^2$. We
# install that rule in the library for a moment (and restore the real one afterwards, whatever happens):

# %%
correct_rule = ops.tanh.vjp
ops.tanh.vjp = lambda g, out, x: (g * (1.0 + out * out),)  # the broken rule
with runs_your("central_difference"):
    try:
        broken_error = check_vjp(lambda a: a.tanh(), rules["tanh"][1], rng)
        report = mg.gradcheck(lambda a: a.tanh(), rules["tanh"][1][0], raise_exception=False)
    finally:
        ops.tanh.vjp = correct_rule
    print(f"broken tanh: worst relative error {broken_error:.2f}  -> caught")
    print(report)

# %% [markdown]
# The relative error jumps from $10^{-9}$ to order one, and the library's `gradcheck` — the same idea, with
# tolerances $|a - n| \le \mathrm{atol} + \mathrm{rtol}\,|n|$ — names the input and element where the disagreement
# is worst. That is how every rule in `minigrad` is tested (in float64, against PyTorch as well), and how you should
# test any derivative you write by hand.
#
# ## 3. Symbolic differentiation
#
# A computer-algebra system differentiates the *formula*, not the program. A formula is an expression tree: leaves
# are constants and variables, inner nodes are operations. `minigrad.symbolic` provides a tiny one. `var("x")` and
# `const(2.0)` are leaves, and Python's operators and the methods `.sin() .cos() .exp() .log() .tanh()` build
# nodes — so our running example, given variables instead of tensors, returns its own formula. Each node has
# `op` (a string), `args` (its sub-expressions), and `value` (constants) or `name` (variables).
# `evaluate(expr, {"x1": 2.0, ...})` computes its value; `tree_size` and `dag_size` count its nodes (more on
# those below). The constructors simplify lightly as they build: constants are folded and $0$ and $1$ vanish
# from sums and products, nothing more.

# %%
e = f(var("x1"), var("x2"))
print("expression:  ", e)
print("root op:     ", e.op, "  with args", e.args)
print("value at (2, 5):", evaluate(e, {"x1": 2.0, "x2": 5.0}), "  (the tensor version gave", f(mg.tensor(2.0), mg.tensor(5.0)).item(), ")")
print("simplified as built:", 0 * var("x") + 1 * var("y") * 1, "|", const(2) * 3 + var("x"))


# %% [markdown]
# ### Graded: `symbolic_diff(expr, var)`
#
# Return the derivative of `expr` with respect to the variable `var` (an expression made by `var("x")`) as a new
# expression, by the rules of calculus applied recursively. Write $a, b$ for a node's arguments and $a', b'$ for
# their derivatives (computed by calling `symbolic_diff` on them):
#
# | `op` | expression | derivative |
# | --- | --- | --- |
# | `"const"` | $c$ | $0$ |
# | `"var"` | $x$ | $1$ if it is the variable we differentiate by (compare `name`s), else $0$ |
# | `"add"`, `"sub"` | $a \pm b$ | $a' \pm b'$ |
# | `"mul"` | $a\,b$ | $a'\,b + a\,b'$ |
# | `"div"` | $a / b$ | $(a'\,b - a\,b') / (b\,b)$ |
# | `"neg"` | $-a$ | $-a'$ |
# | `"sin"`, `"cos"` | $\sin a$, $\cos a$ | $\cos(a)\,a'$, $\;-\sin(a)\,a'$ |
# | `"exp"`, `"log"` | $e^a$, $\ln a$ | $e^a\,a'$, $\;a' / a$ |
# | `"tanh"` | $\tanh a$ | $(1 - \tanh^2 a)\,a'$ |
#
# The factor $a'$ in the last rows is the **chain rule**; forgetting it is the classic mistake. Build the result with
# the expression operators (`da * b + a * db`, `a.cos() * da`, `const(0.0)`, …) so that it is simplified as it is
# built; raise a `ValueError` for an `op` you do not know.

# %% nbgrader={"grade": false, "grade_id": "symbolic_diff", "locked": false, "schema_version": 3, "solution": true}
def symbolic_diff(expr, var):
    """d expr / d var: a new expression, built by the differentiation rules applied recursively.

    Each rule writes the derivative of a node in terms of its arguments and their derivatives
    (the chain rule): (a·b)' = a'·b + a·b', sin(a)' = cos(a)·a', and so on. The arguments `a`, `b`
    are reused as they are, so the result shares them with `expr`; but the derivatives of a shared
    argument are recomputed on each visit, which is where the swell comes from. `var` is a
    variable expression (`var("x")`); other variables count as constants.
    """
    ### BEGIN SOLUTION
    if expr.op == "const":
        return const(0.0)
    if expr.op == "var":
        return const(1.0 if expr.name == var.name else 0.0)
    a = expr.args[0]
    da = symbolic_diff(a, var)
    if expr.op in ("add", "sub", "mul", "div"):
        b = expr.args[1]
        db = symbolic_diff(b, var)
        if expr.op == "add":
            return da + db
        if expr.op == "sub":
            return da - db
        if expr.op == "mul":
            return da * b + a * db
        return (da * b - a * db) / (b * b)
    if expr.op == "neg":
        return -da
    if expr.op == "sin":
        return a.cos() * da
    if expr.op == "cos":
        return -a.sin() * da
    if expr.op == "exp":
        return expr * da
    if expr.op == "log":
        return da / a
    if expr.op == "tanh":
        return (1 - expr * expr) * da
    raise ValueError(f"symbolic_diff: no rule for operation {expr.op!r}")
    ### END SOLUTION


# %% [markdown]
# The tests compare the value of your derivative with the derivative worked out by hand, at a few points, through
# `check_derivative` below; a failure shows the formula your function produced.

# %% nbgrader={"grade": false, "grade_id": "helpers_symbolic", "locked": true, "schema_version": 3, "solution": false}
from minigrad.symbolic import postorder


def logistic_steps(t, n):  # runs on expressions and on tensors alike
    for _ in range(n):
        t = 4 * t * (1 - t)
    return t


def with_unknown_op(x):
    unknown = x.sin()
    unknown.op = "arcsin"  # an operation symbolic_diff has no rule for
    return unknown


EXPRESSIONS = {  # the expressions the tests differentiate, by name, built from the variables x and y
    "3": lambda x, y: const(3.0),
    "x": lambda x, y: x,
    "x*x": lambda x, y: x * x,
    "3x - x³": lambda x, y: 3 * x - x * x * x,
    "(x + 1)/(x² + 2)": lambda x, y: (x + 1) / (x * x + 2),
    "-x·4": lambda x, y: -x * 4,
    "x·y + y": lambda x, y: x * y + y,
    "x/y - y/x": lambda x, y: x / y - y / x,
    "sin(x)": lambda x, y: x.sin(),
    "cos(x)": lambda x, y: x.cos(),
    "exp(x)": lambda x, y: x.exp(),
    "log(x)": lambda x, y: x.log(),
    "tanh(x)": lambda x, y: x.tanh(),
    "sin(x²)": lambda x, y: (x * x).sin(),
    "cos(3x)": lambda x, y: (3 * x).cos(),
    "exp(x²)": lambda x, y: (x * x).exp(),
    "log(1 + x²)": lambda x, y: (1 + x * x).log(),
    "tanh(2x)": lambda x, y: (2 * x).tanh(),
    "tanh(exp(sin(x)))": lambda x, y: x.sin().exp().tanh(),
    "-sin(x)": lambda x, y: -(x.sin()),
    "logistic map, 4 steps": lambda x, y: logistic_steps(x, 4),
    "arcsin(x)": lambda x, y: with_unknown_op(x),
}
ARITY = {"const": 0, "var": 0, "add": 2, "sub": 2, "mul": 2, "div": 2,
         "neg": 1, "sin": 1, "cos": 1, "exp": 1, "log": 1, "tanh": 1}


def differentiated(name, wrt, fresh=False):
    """Driver: your symbolic_diff(EXPRESSIONS[name](x, y), var) for var = x or y (`wrt`; a var(wrt) made afresh
    when `fresh`); the derivative as plain data (expression_data), or "ValueError" if it raised one."""
    x, y = var("x"), var("y")
    expr = EXPRESSIONS[name](x, y)
    try:
        got = symbolic_diff(expr, var(wrt) if fresh else {"x": x, "y": y}[wrt])
    except ValueError:
        return "ValueError"
    return expression_data(got)


def expression_data(expr):
    """An Expr as plain data: its distinct nodes, arguments first, each (op, value, name, [its arguments' numbers])."""
    if not isinstance(expr, Expr):
        return f"{type(expr).__name__} {repr(expr)[:80]}"
    nodes = postorder(expr)
    number = {id(node): i for i, node in enumerate(nodes)}
    return [(node.op, node.value, node.name, [number[id(arg)] for arg in node.args]) for node in nodes]


def rebuilt_expression(data, what):
    """The Expr that expression_data described, rebuilt here from the data alone, node by node."""
    if isinstance(data, str) and data == "ValueError":
        raise AssertionError(f"{what}: symbolic_diff raised ValueError")
    if isinstance(data, str):
        raise AssertionError(f"{what}: symbolic_diff should return an Expr (build it with the operators), got {data}")
    if not isinstance(data, list) or not data:
        raise AssertionError(f"{what}: expected an expression, got {data!r:.200}")
    nodes = []
    for i, item in enumerate(data):
        op, value, name, args = item if isinstance(item, tuple) and len(item) == 4 else (None, None, None, None)
        well_formed = (isinstance(op, str) and op in ARITY and isinstance(args, list) and len(args) == ARITY[op]
                       and all(type(j) is int and 0 <= j < i for j in args))
        if op == "const":
            well_formed = well_formed and name is None and is_real_number(value)
            value = float(value) if well_formed else value
        elif op == "var":
            well_formed = well_formed and isinstance(name, str) and value is None
        else:
            well_formed = well_formed and value is None and name is None
        if not well_formed:
            raise AssertionError(f"{what}: node {i} of the derivative is not a well-formed expression node: {item!r:.200}")
        nodes.append(Expr(op, [nodes[j] for j in args], value=value, name=name))
    return nodes[-1]


def is_real_number(value):
    """An int or float (Python or numpy, or a 0-d array of one): what a constant node may hold."""
    if isinstance(value, np.ndarray):
        return value.shape == () and value.dtype.kind in "iuf"
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def check_derivative(got, expected, envs, what):
    """Fail unless `got` (from differentiated) is an expression whose value in each env equals expected(**env)."""
    derivative = rebuilt_expression(got, what)
    for env in envs:
        try:
            value = evaluate(derivative, env)
        except KeyError as error:
            raise AssertionError(f"{what}: your derivative {derivative} uses a variable without a value: {error}") from None
        assert_close(value, expected(**env), f"{what} at {env}; your derivative is {derivative}", rtol=1e-9, atol=1e-12)


# %% nbgrader={"grade": true, "grade_id": "test_symbolic_diff_rules", "locked": true, "points": 2, "schema_version": 3, "solution": false}
points = [{"x": 0.5}, {"x": 1.7}, {"x": -2.0}]
check_derivative(drive(differentiated, "3", "x"), lambda x: 0.0, points, "d/dx 3")
check_derivative(drive(differentiated, "x", "x"), lambda x: 1.0, points, "d/dx x")
check_derivative(drive(differentiated, "x*x", "x"), lambda x: 2 * x, points, "d/dx x*x")
check_derivative(drive(differentiated, "3x - x³", "x"), lambda x: 3 - 3 * x**2, points, "d/dx (3x - x³)")
check_derivative(drive(differentiated, "(x + 1)/(x² + 2)", "x"),
                 lambda x: ((x * x + 2) - (x + 1) * 2 * x) / (x * x + 2) ** 2, points, "d/dx (x + 1)/(x² + 2)")
check_derivative(drive(differentiated, "-x·4", "x"), lambda x: -4.0, points, "d/dx (-x·4)")
print("symbolic_diff: sums, products and quotients are right")
### BEGIN HIDDEN TESTS
both = [{"x": 0.5, "y": -1.5}, {"x": 2.0, "y": 0.25}]
check_derivative(drive(differentiated, "x·y + y", "x"), lambda x, y: y, both, "d/dx (x·y + y) (y is a constant here)")
check_derivative(drive(differentiated, "x·y + y", "y"), lambda x, y: x + 1, both, "d/dy (x·y + y)")
check_derivative(drive(differentiated, "x*x", "x", True), lambda x: 2 * x, points,
                 "d/dx x*x with var('x') made afresh (compare names, not objects)")
check_derivative(drive(differentiated, "x/y - y/x", "y"), lambda x, y: -x / y**2 - 1 / x, both, "d/dy (x/y - y/x)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_symbolic_diff_chain_rule", "locked": true, "points": 3, "schema_version": 3, "solution": false}
points = [{"x": 0.3}, {"x": 1.1}, {"x": 2.4}]
check_derivative(drive(differentiated, "sin(x)", "x"), lambda x: np.cos(x), points, "d/dx sin(x)")
check_derivative(drive(differentiated, "cos(x)", "x"), lambda x: -np.sin(x), points, "d/dx cos(x)")
check_derivative(drive(differentiated, "exp(x)", "x"), lambda x: np.exp(x), points, "d/dx exp(x)")
check_derivative(drive(differentiated, "log(x)", "x"), lambda x: 1 / x, points, "d/dx log(x)")
check_derivative(drive(differentiated, "tanh(x)", "x"), lambda x: 1 - np.tanh(x) ** 2, points, "d/dx tanh(x)")
check_derivative(drive(differentiated, "sin(x²)", "x"), lambda x: np.cos(x * x) * 2 * x, points, "d/dx sin(x²) (chain rule)")
print("symbolic_diff: elementary functions and the chain rule are right")
### BEGIN HIDDEN TESTS
check_derivative(drive(differentiated, "cos(3x)", "x"), lambda x: -3 * np.sin(3 * x), points, "d/dx cos(3x)")
check_derivative(drive(differentiated, "exp(x²)", "x"), lambda x: 2 * x * np.exp(x * x), points, "d/dx exp(x²)")
check_derivative(drive(differentiated, "log(1 + x²)", "x"), lambda x: 2 * x / (1 + x * x), points, "d/dx log(1 + x²)")
check_derivative(drive(differentiated, "tanh(2x)", "x"), lambda x: 2 * (1 - np.tanh(2 * x) ** 2), points, "d/dx tanh(2x)")
check_derivative(drive(differentiated, "tanh(exp(sin(x)))", "x"),
                 lambda x: (1 - np.tanh(np.exp(np.sin(x))) ** 2) * np.exp(np.sin(x)) * np.cos(x), points,
                 "d/dx tanh(exp(sin(x)))")
check_derivative(drive(differentiated, "-sin(x)", "x"), lambda x: -np.cos(x), points, "d/dx -sin(x)")
logistic = EXPRESSIONS["logistic map, 4 steps"]  # the same function, run on a tensor by reverse mode
check_derivative(drive(differentiated, "logistic map, 4 steps", "x"),
                 lambda x: mg.grad(lambda t: logistic(t, None))(mg.tensor(x)).item(),
                 [{"x": 0.2}, {"x": 0.7}], "d/dx of the 4-step logistic map")
if drive(differentiated, "arcsin(x)", "x") != "ValueError":
    raise AssertionError("symbolic_diff(an 'arcsin' node): expected a ValueError for an unknown op, got no error")
### END HIDDEN TESTS

# %% [markdown]
# ### Experiment: expression swell
#
# Symbolic derivatives are exact, so why does no deep-learning framework use them? Look at what the product rule
# does: $(a\,b)' = a'\,b + a\,b'$ writes each factor *twice*. Baydin et al. (2018) illustrate the consequence with
# the logistic map, $l_{k+1} = 4\,l_k (1 - l_k)$, $l_1 = x$: each step uses the previous value twice, and its
# derivative uses both the previous value and the previous derivative twice. Written out as a tree, $l_n$ has
# about $2^n$ nodes and its derivative several times more.
#
# But the formula $l_n$ is not *really* exponential: the two copies of $l_k$ are the same sub-expression. Stored as a
# DAG, with each distinct sub-expression once, $l_n$ has only $3n + 3$ nodes. `minigrad.symbolic` can count both:
#
# * `tree_size(e)` — nodes of the formula written out, a shared sub-expression counted once per use;
# * `dag_size(e)` — distinct sub-expressions, equal ones counted once (what common sub-expression elimination in a
#   computer-algebra system achieves).
#
# Next to them we put what reverse mode builds: the number of vertices of the graph `minigrad` records for
# $l_n$ and — with `create_graph=True`, so that the backward pass is recorded too — of the graph that computes
# $dl_n/dx$. The same Python function `logistic_map` builds all of them.

# %%
def logistic_map(x, n):
    """n steps of l <- 4 l (1 - l), starting from l = x; runs on expressions, tensors and dual numbers."""
    for _ in range(n):
        x = 4 * x * (1 - x)
    return x


x = var("x")
with runs_your("symbolic_diff"):
    for n in (1, 2, 3):
        derivative = symbolic_diff(logistic_map(x, n), x)
        print(f"n = {n}: l_n = {logistic_map(x, n)}\n       dl_n/dx = {derivative}   ({tree_size(derivative)} nodes as a tree)\n")

# %%
with runs_your('symbolic_diff'):
    depths = np.arange(1, 13)
    sizes = {"formula $l_n$ as a tree": [], "derivative as a tree": [], "derivative as a DAG": [],
             "reverse mode: graph of $l_n$": [], "reverse mode: graph of $l_n$ and $dl_n/dx$": []}
    for n in tqdm(depths, desc="depth"):
        derivative = symbolic_diff(logistic_map(x, n), x)
        sizes["formula $l_n$ as a tree"].append(tree_size(logistic_map(x, n)))
        sizes["derivative as a tree"].append(tree_size(derivative))
        sizes["derivative as a DAG"].append(dag_size(derivative))
        t = mg.tensor(0.3, requires_grad=True)
        l_n = logistic_map(t, n)
        sizes["reverse mode: graph of $l_n$"].append(mg.count_nodes_edges(l_n)[0])
        (dl_dx,) = mg.gradients(l_n, [t], create_graph=True)
        sizes["reverse mode: graph of $l_n$ and $dl_n/dx$"].append(mg.count_nodes_edges(dl_dx)[0])
        assert np.isclose(evaluate(derivative, {"x": 0.3}), dl_dx.item()), "symbolic and reverse mode disagree"

    fig, ax = plt.subplots(figsize=(8, 4.5))
    styles = ["-o", "-s", "-^", "--v", "--D"]
    for (label, values), style in zip(sizes.items(), styles):
        ax.semilogy(depths, values, style, label=label, ms=4)
    ax.set(xlabel="depth $n$ of the logistic map", ylabel="number of nodes (log scale)",
           title="Expression swell: derivative size against depth")
    ax.legend(fontsize=8)
    plt.show()
    growth = np.array(sizes["derivative as a tree"][1:]) / np.array(sizes["derivative as a tree"][:-1])
    print(f"derivative tree grows by a factor {growth[-1]:.2f} per step; "
          f"derivative DAG by {np.diff(sizes['derivative as a DAG'])[-1]} nodes per step; "
          f"reverse-mode graph by {np.diff(sizes['reverse mode: graph of $l_n$ and $dl_n/dx$'])[-1]} nodes per step")


# %% [markdown]
# On the logarithmic axis, the tree sizes are straight lines — exponential growth, more than doubling with every
# step — while the DAG and both reverse-mode graphs are nearly flat: they grow by a constant number of nodes per step.
# At depth 12 the written-out derivative has hundreds of thousands of nodes; for a network with hundreds of layers it
# would not fit in any memory. This is the *expression swell* of symbolic differentiation.
#
# The lesson is not that symbolic differentiation is wrong, but where the exponential comes from: **losing
# sharing**. Reverse-mode AD is, in this light, symbolic differentiation that never writes the formula out — it
# applies the same rules to the *evaluation trace*, whose shared intermediate values are stored once, so its
# derivative graph is a DAG of size proportional to the original computation (Griewank & Walther 2008 call this
# the cheap gradient principle). A symbolic system with aggressive common sub-expression elimination gets the DAG
# too, but only after building (or hashing) the swollen tree.
#
# The second weakness is control flow. A formula has no `if`: a program that branches on a value, like a
# hand-written ReLU, cannot even be turned into an expression, while automatic differentiation simply follows the
# branch the program takes for the given input:

# %%
def relu_by_branch(x):
    return x if x > 0 else 0 * x


for value in (2.0, -3.0):
    t = mg.tensor(value, requires_grad=True)
    print(f"reverse mode, x = {value:+}: relu'(x) = {mg.grad(relu_by_branch)(t).item()}")
try:
    relu_by_branch(var("x"))
except TypeError as error:
    print(f"symbolic: TypeError: {error}")


# %% [markdown]
# ## 4. Forward mode: dual numbers
#
# Forward-mode AD is the oldest kind (Wengert 1964). Like reverse mode it works on the evaluation trace
# $v_i = \varphi_i(v_{\mathrm{Pa}(i)})$, but it pushes derivatives in the same direction as the values. Choose a
# direction $r \in \mathbb{R}^d$ in input space (a new letter: $v_i$ are the trace's variables) and give every
# variable a **tangent**, its derivative along $r$: $\dot v_i = \sum_j \frac{\partial v_i}{\partial x_j} r_j$.
# Inputs are seeded with $\dot x_j = r_j$; then, by the
# chain rule, each operation's tangent follows from its parents' tangents *as soon as they are known*:
#
# $$ \dot v_i = \sum_{j \in \mathrm{Pa}(i)} \frac{\partial \varphi_i}{\partial v_j}\, \dot v_j . $$
#
# Compare the adjoint recursion of chapter 2, $\bar v_i = \sum_{j \in \mathrm{Ch}(i)} \bar v_j\, \partial v_j / \partial v_i$:
# the same partial derivatives, summed over parents instead of children. Because a tangent is computed right after
# its value, nothing needs to be stored — forward mode runs in constant extra memory, with no graph at all. At the
# output it delivers $\dot y = J r$, the Jacobian-vector product (JVP): one *column* of information per pass, where
# reverse mode delivers one *row*, $u^\top J$.
#
# **Dual numbers** make this a matter of arithmetic. Extend the reals with a symbol $\varepsilon$ such that
# $\varepsilon^2 = 0$ (but $\varepsilon \neq 0$), and write numbers as $a + b\varepsilon$: $a$ is the *primal*, $b$ the
# *tangent*. Then Taylor's theorem ends after the first term,
#
# $$ f(a + b\varepsilon) = f(a) + f'(a)\, b\, \varepsilon , $$
#
# and the rules of arithmetic become the rules of differentiation:
#
# | operation | result |
# | --- | --- |
# | $(a + b\varepsilon) \pm (c + d\varepsilon)$ | $(a \pm c) + (b \pm d)\,\varepsilon$ |
# | $(a + b\varepsilon)(c + d\varepsilon)$ | $ac + (ad + bc)\,\varepsilon$ — the product rule, since $bd\,\varepsilon^2 = 0$ |
# | $(a + b\varepsilon) / (c + d\varepsilon)$ | $\frac{a}{c} + \frac{bc - ad}{c^2}\,\varepsilon$ — the quotient rule |
# | $\sin(a + b\varepsilon)$, $\cos(a + b\varepsilon)$ | $\sin a + b\cos a\,\varepsilon$, $\;\cos a - b\sin a\,\varepsilon$ |
# | $\exp(a + b\varepsilon)$, $\log(a + b\varepsilon)$ | $e^a + b\,e^a\,\varepsilon$, $\;\ln a + \frac{b}{a}\,\varepsilon$ |
# | $\tanh(a + b\varepsilon)$ | $\tanh a + b\,(1 - \tanh^2 a)\,\varepsilon$ |
#
# A plain number $c$ is the dual number $c + 0\varepsilon$: a constant has no derivative.
#
# ### Graded: the `Dual` class
#
# Complete the class below. Every operation returns a **new** `Dual` (never modify an operand). `lift(x)` turns a
# plain number into a constant `Dual` (a `Dual` is returned as it is); the operators must accept a plain number on
# either side — `d + 1.0` calls `d.__add__(1.0)`, `1.0 + d` calls `d.__radd__(1.0)` — and `__sub__`,
# `__rsub__`, `__rtruediv__` likewise. Use numpy's functions (`np.sin`, `np.cos`, `np.exp`, `np.log`,
# `np.tanh`): then `primal` and `tangent` may also be numpy arrays of one shape, and a single `Dual` carries a whole
# vector of values and their tangents elementwise. (`__array_ufunc__ = None` is what makes `ndarray * Dual` call
# `Dual.__rmul__` instead of numpy's own multiplication.)

# %% nbgrader={"grade": false, "grade_id": "Dual", "locked": false, "schema_version": 3, "solution": true}
class Dual:
    """primal + tangent·ε with ε² = 0: a value and its derivative along one direction."""

    __slots__ = ("primal", "tangent")
    __array_ufunc__ = None  # numpy defers to our reflected operators: `ndarray * Dual` -> Dual

    def __init__(self, primal, tangent=0.0):
        self.primal = primal
        self.tangent = tangent

    def __repr__(self):
        return f"Dual({self.primal!r}, {self.tangent!r})"

    @staticmethod
    def lift(x):
        """A plain number (or array) as a dual number: a constant, so its tangent is zero."""
        ### BEGIN SOLUTION
        return x if isinstance(x, Dual) else Dual(x, 0.0)
        ### END SOLUTION

    # (a + bε) ± (c + dε) = (a ± c) + (b ± d)ε
    def __add__(self, other):
        ### BEGIN SOLUTION
        other = Dual.lift(other)
        return Dual(self.primal + other.primal, self.tangent + other.tangent)
        ### END SOLUTION

    def __radd__(self, other):
        ### BEGIN SOLUTION
        return Dual.lift(other) + self
        ### END SOLUTION

    def __neg__(self):
        ### BEGIN SOLUTION
        return Dual(-self.primal, -self.tangent)
        ### END SOLUTION

    def __sub__(self, other):
        ### BEGIN SOLUTION
        return self + (-Dual.lift(other))
        ### END SOLUTION

    def __rsub__(self, other):
        ### BEGIN SOLUTION
        return Dual.lift(other) + (-self)
        ### END SOLUTION

    # (a + bε)(c + dε) = ac + (ad + bc)ε, since ε² = 0: the product rule
    def __mul__(self, other):
        ### BEGIN SOLUTION
        other = Dual.lift(other)
        return Dual(self.primal * other.primal, self.tangent * other.primal + self.primal * other.tangent)
        ### END SOLUTION

    def __rmul__(self, other):
        ### BEGIN SOLUTION
        return Dual.lift(other) * self
        ### END SOLUTION

    # (a + bε) / (c + dε) = a/c + (bc − ad)/c² ε: the quotient rule
    def __truediv__(self, other):
        ### BEGIN SOLUTION
        other = Dual.lift(other)
        quotient = self.primal / other.primal
        return Dual(quotient, (self.tangent - quotient * other.tangent) / other.primal)
        ### END SOLUTION

    def __rtruediv__(self, other):
        ### BEGIN SOLUTION
        return Dual.lift(other) / self
        ### END SOLUTION

    # f(a + bε) = f(a) + f'(a) b ε: the chain rule, one line per elementary function
    def sin(self):
        ### BEGIN SOLUTION
        return Dual(np.sin(self.primal), np.cos(self.primal) * self.tangent)
        ### END SOLUTION

    def cos(self):
        ### BEGIN SOLUTION
        return Dual(np.cos(self.primal), -np.sin(self.primal) * self.tangent)
        ### END SOLUTION

    def exp(self):
        ### BEGIN SOLUTION
        value = np.exp(self.primal)
        return Dual(value, value * self.tangent)
        ### END SOLUTION

    def log(self):
        ### BEGIN SOLUTION
        return Dual(np.log(self.primal), self.tangent / self.primal)
        ### END SOLUTION

    def tanh(self):
        ### BEGIN SOLUTION
        value = np.tanh(self.primal)
        return Dual(value, (1.0 - value * value) * self.tangent)
        ### END SOLUTION


# %% [markdown]
# The tests check each result's primal and tangent with `check_dual`, which says which part differs.

# %% nbgrader={"grade": false, "grade_id": "helpers_dual", "locked": true, "schema_version": 3, "solution": false}
# What the tests compute with your Dual, by name: the driver makes the dual numbers a and b from (primal, tangent)
# pairs and runs the program on them, with c a plain constant (a number or an array); each key is the program's code.
DUAL_PROGRAMS = {program: eval(f"lambda a, b, c: {program}") for program in [
    "Dual.lift(c)", "Dual.lift(a) is a", "a + b", "a + 10.0", "10.0 + a", "-a", "a - b", "a - 0.5", "0.5 - a",
    "a + b - a", "2 + a + 1",
    "a * b", "a * 5.0", "5.0 * a", "a / b", "1.0 / a", "a / c", "c / a", "a * a * a",
    "a.sin()", "a.cos()", "a.exp()", "a.log()", "a.tanh()", "a.sin().exp()", "(a * a).tanh()", "(a * a + 1.0).log().cos()",
    "a.sin() * a", "c * a + 1.0", "(a.exp() / (1.0 + a.exp())).tanh()", "a.log() - a.cos()",
]}


def dual_data(d):
    """A result as plain data: a Dual's primal and tangent as float64 arrays, a bool as itself, anything else described."""
    if type(d) is bool:
        return d
    if not isinstance(d, Dual):
        return f"{type(d).__name__} {repr(d)[:80]}"
    return {"primal": numbers(d.primal), "tangent": numbers(d.tangent)}


def dual_result(program, a, b=(1.0, 0.0), c=0.0):
    """Driver: DUAL_PROGRAMS[program] run with a = Dual(*a), b = Dual(*b) and the constant c; its result as dual_data."""
    return dual_data(DUAL_PROGRAMS[program](Dual(*a), Dual(*b), c))


def dual_operands_after(programs, a, b=(1.0, 0.0), c=0.0):
    """Driver: the programs run one after the other on the same a = Dual(*a) and b = Dual(*b); then a's and b's own
    primal and tangent (arithmetic must never modify its operands)."""
    a, b = Dual(*a), Dual(*b)
    for program in programs:
        DUAL_PROGRAMS[program](a, b, c)
    return dual_data(a), dual_data(b)


def check_dual(got, primal, tangent, what):
    """Fail unless `got` (dual_data of a result) is a Dual whose primal and tangent match (numbers or arrays)."""
    if not (isinstance(got, dict) and set(got) == {"primal", "tangent"}):
        raise AssertionError(f"{what}: expected a Dual, got {got!r:.200}")
    for part, expected in (("primal", primal), ("tangent", tangent)):
        value = got[part]
        if not (isinstance(value, np.ndarray) and value.dtype == np.float64):
            raise AssertionError(f"{what}: the {part} should be a number or an array of numbers, got {value!r:.200}")
        assert_close(value, expected, f"{what}: {part}", rtol=1e-12, atol=1e-12)


# %% nbgrader={"grade": true, "grade_id": "test_Dual_sums", "locked": true, "points": 2, "schema_version": 3, "solution": false}
a, b = (2.0, 1.0), (3.0, -4.0)  # (primal, tangent): the driver makes Dual(2, 1) and Dual(3, -4) from them
check_dual(drive(dual_result, "Dual.lift(c)", a, b, 3.0), 3.0, 0.0, "Dual.lift(3.0) (a constant)")
check_dual(drive(dual_result, "a + b", a, b), 5.0, -3.0, "Dual(2, 1) + Dual(3, -4)")
check_dual(drive(dual_result, "a + 10.0", a, b), 12.0, 1.0, "Dual(2, 1) + 10.0 (a float is a constant)")
check_dual(drive(dual_result, "10.0 + a", a, b), 12.0, 1.0, "10.0 + Dual(2, 1) (needs __radd__)")
check_dual(drive(dual_result, "-a", a, b), -2.0, -1.0, "-Dual(2, 1)")
check_dual(drive(dual_result, "a - b", a, b), -1.0, 5.0, "Dual(2, 1) - Dual(3, -4)")
check_dual(drive(dual_result, "a - 0.5", a, b), 1.5, 1.0, "Dual(2, 1) - 0.5")
check_dual(drive(dual_result, "0.5 - a", a, b), -1.5, -1.0, "0.5 - Dual(2, 1) (needs __rsub__)")
print("Dual: sums and differences are right")
### BEGIN HIDDEN TESTS
assert drive(dual_result, "Dual.lift(a) is a", a, b) is True, "Dual.lift(d) of a Dual should return d itself"
check_dual(drive(dual_result, "a + b - a", a, b), 3.0, -4.0, "a + b - a")
check_dual(drive(dual_result, "2 + a + 1", a, b), 5.0, 1.0, "2 + a + 1 (int constants)")
a_after, b_after = drive(dual_operands_after, ["a + b", "a + 10.0", "10.0 + a", "-a", "a - b", "a - 0.5", "0.5 - a",
                                               "a + b - a", "2 + a + 1"], a, b)
check_dual(a_after, 2.0, 1.0, "a after the operations above (operands must not be modified)")
check_dual(b_after, 3.0, -4.0, "b after the operations above (operands must not be modified)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_Dual_products", "locked": true, "points": 2, "schema_version": 3, "solution": false}
a, b = (2.0, 1.0), (3.0, -4.0)  # Dual(2, 1) and Dual(3, -4)
check_dual(drive(dual_result, "a * b", a, b), 6.0, 1.0 * 3.0 + 2.0 * -4.0, "Dual(2, 1) * Dual(3, -4): the product rule ad + bc")
check_dual(drive(dual_result, "a * 5.0", a, b), 10.0, 5.0, "Dual(2, 1) * 5.0")
check_dual(drive(dual_result, "5.0 * a", a, b), 10.0, 5.0, "5.0 * Dual(2, 1) (needs __rmul__)")
check_dual(drive(dual_result, "a / b", a, b), 2.0 / 3.0, (1.0 * 3.0 - 2.0 * -4.0) / 9.0,
           "Dual(2, 1) / Dual(3, -4): the quotient rule (bc - ad)/c²")
check_dual(drive(dual_result, "1.0 / a", a, b), 0.5, -0.25, "1.0 / Dual(2, 1) (needs __rtruediv__)")
print("Dual: products and quotients are right")
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(1)
for _ in range(5):
    p, q, s, t = rng.uniform(0.5, 2.0, 4) * rng.choice([-1.0, 1.0], 4)
    check_dual(drive(dual_result, "a * b", (p, s), (q, t)), p * q, s * q + p * t, f"Dual({p:.3f}, {s:.3f}) * Dual({q:.3f}, {t:.3f})")
    check_dual(drive(dual_result, "a / b", (p, s), (q, t)), p / q, (s * q - p * t) / q**2,
               f"Dual({p:.3f}, {s:.3f}) / Dual({q:.3f}, {t:.3f})")
    check_dual(drive(dual_result, "a / c", (p, s), (q, t), q), p / q, s / q, f"Dual({p:.3f}, {s:.3f}) / {q:.3f}")
    check_dual(drive(dual_result, "c / a", (p, s), (q, t), q), q / p, -q * s / p**2, f"{q:.3f} / Dual({p:.3f}, {s:.3f})")
check_dual(drive(dual_result, "a * a * a", (1.5, 1.0)), 1.5**3, 3 * 1.5**2, "x * x * x: the derivative of x³ is 3x²")
a_after, _ = drive(dual_operands_after, ["a * b", "a * 5.0", "5.0 * a", "a / b", "1.0 / a", "a * a * a"], a, b)
check_dual(a_after, 2.0, 1.0, "a after the operations above (operands must not be modified)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_Dual_functions", "locked": true, "points": 3, "schema_version": 3, "solution": false}
a = (0.5, 2.0)  # Dual(0.5, 2): tangent 2, so every derivative is multiplied by 2 (the chain rule)
check_dual(drive(dual_result, "a.sin()", a), np.sin(0.5), np.cos(0.5) * 2.0, "Dual(0.5, 2).sin()")
check_dual(drive(dual_result, "a.cos()", a), np.cos(0.5), -np.sin(0.5) * 2.0, "Dual(0.5, 2).cos()")
check_dual(drive(dual_result, "a.exp()", a), np.exp(0.5), np.exp(0.5) * 2.0, "Dual(0.5, 2).exp()")
check_dual(drive(dual_result, "a.log()", a), np.log(0.5), 2.0 / 0.5, "Dual(0.5, 2).log()")
check_dual(drive(dual_result, "a.tanh()", a), np.tanh(0.5), (1 - np.tanh(0.5) ** 2) * 2.0, "Dual(0.5, 2).tanh()")
print("Dual: sin, cos, exp, log and tanh are right")
### BEGIN HIDDEN TESTS
for value in (-1.3, 0.2, 2.2):
    x = (value, 1.0)
    check_dual(drive(dual_result, "a.sin().exp()", x), np.exp(np.sin(value)), np.exp(np.sin(value)) * np.cos(value),
               f"exp(sin(x)) at {value}")
    check_dual(drive(dual_result, "(a * a).tanh()", x), np.tanh(value**2), (1 - np.tanh(value**2) ** 2) * 2 * value,
               f"tanh(x²) at {value}")
    check_dual(drive(dual_result, "(a * a + 1.0).log().cos()", x), np.cos(np.log(value**2 + 1)),
               -np.sin(np.log(value**2 + 1)) * 2 * value / (value**2 + 1), f"cos(log(x² + 1)) at {value}")
x_after, _ = drive(dual_operands_after, ["a.sin()", "a.cos()", "a.exp()", "a.log()", "a.tanh()", "a.sin().exp()",
                                         "(a * a).tanh()", "(a * a + 1.0).log().cos()"], (0.5, 2.0))
check_dual(x_after, 0.5, 2.0, "x after the operations above (operands must not be modified)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_Dual_arrays", "locked": true, "points": 1, "schema_version": 3, "solution": false}
values, tangents = np.array([0.3, 1.0, 2.5]), np.array([1.0, -2.0, 0.5])
x = (values, tangents)  # the driver makes Dual(values, tangents): elementwise dual numbers
check_dual(drive(dual_result, "a.sin() * a", x), np.sin(values) * values, (np.cos(values) * values + np.sin(values)) * tangents,
           "Dual(array, array): sin(x) * x elementwise")
weights = np.array([1.0, 2.0, 3.0])
check_dual(drive(dual_result, "c * a + 1.0", x, (0.0, 0.0), weights), weights * values + 1.0, weights * tangents,
           "ndarray * Dual(array, array) + 1.0")
print("Dual: elementwise dual numbers over numpy arrays work")
### BEGIN HIDDEN TESTS
check_dual(drive(dual_result, "(a.exp() / (1.0 + a.exp())).tanh()", x), np.tanh(1 / (1 + np.exp(-values))),
           (1 - np.tanh(1 / (1 + np.exp(-values))) ** 2) * np.exp(-values) / (1 + np.exp(-values)) ** 2 * tangents,
           "tanh(sigmoid(x)) elementwise")
check_dual(drive(dual_result, "a.log() - a.cos()", x), np.log(values) - np.cos(values), (1 / values + np.sin(values)) * tangents,
           "log(x) - cos(x) elementwise")
### END HIDDEN TESTS

# %% [markdown]
# ### Graded: `jvp_dual(f, x, v)`
#
# Forward mode for a whole function: wrap each argument $x_i$ in a dual number seeded with its tangent $r_i$, call
# `f` on the dual numbers, and read the output's primal and tangent: $f(x)$ and the directional derivative
# $J r = \sum_i \frac{\partial f}{\partial x_i} r_i$ — both in one pass. The argument `v` holds the direction $r$
# (a tangent vector, as `minigrad.jvp` calls it). `x` and `v` are sequences (lists or tuples) of
# the same length: the values of `f`'s positional arguments and the direction. Return the pair
# `(primal, tangent)` of the output. If `f` returns a plain number (it does not depend on its inputs), its tangent is
# `0.0`; if the lengths of `x` and `v` differ, raise a `ValueError` saying so.

# %% nbgrader={"grade": false, "grade_id": "jvp_dual", "locked": false, "schema_version": 3, "solution": true}
def jvp_dual(f, x, v):
    """`(f(x), J v)` by one forward pass of `f` on dual numbers.

    `x` and `v` are sequences of the same length: the primals and the tangents (the direction v)
    of `f`'s positional arguments. Seeding input i with tangent vᵢ makes every intermediate
    carry its derivative along v, so the output's tangent is the directional derivative
    Σᵢ ∂f/∂xᵢ vᵢ. An output that does not depend on the inputs (a plain number) has tangent 0.
    """
    ### BEGIN SOLUTION
    if len(x) != len(v):
        raise ValueError(f"jvp_dual: {len(x)} primals but {len(v)} tangents; give one tangent per input")
    out = Dual.lift(f(*[Dual(primal, tangent) for primal, tangent in zip(x, v)]))
    return out.primal, out.tangent
    ### END SOLUTION


# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_jvp", "locked": true, "schema_version": 3, "solution": false}
def running_example(x1, x2):  # dy/dx1 = 1/x1 + x2, dy/dx2 = x1 - cos(x2)
    return x1.log() + x1 * x2 - x2.sin()


def tangled(x, y):  # written once, run on dual numbers and on minigrad tensors
    z = x * y + x.sin() / (1.0 + y.exp())
    return (z * z).tanh() - 3.0 * x.log() + (2.0 - y).cos() * z


FORWARD_FUNCTIONS = {  # the functions the tests give jvp_dual, by name; the tests run the same ones on tensors
    "running example": running_example,
    "x³": lambda t: t * t * t,
    "tangled": tangled,
    "constant 7": lambda x: 7.0,
}


def pushed_forward(name, x, v):
    """Driver: your jvp_dual(f, x, v) for f = FORWARD_FUNCTIONS[name]; the pair it returns as float64 arrays
    (a description of anything else), or "ValueError" if it raised one."""
    try:
        got = jvp_dual(FORWARD_FUNCTIONS[name], x, v)
    except ValueError:
        return "ValueError"
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        return f"{type(got).__name__} {repr(got)[:80]}"
    return tuple(numbers(part) for part in got)


def jvp_parts(got, what):
    """(value, tangent) from pushed_forward's result, checked to be two float64 arrays."""
    if isinstance(got, str) and got == "ValueError":
        raise AssertionError(f"{what}: raised ValueError")
    if not (isinstance(got, tuple) and len(got) == 2
            and all(isinstance(part, np.ndarray) and part.dtype == np.float64 for part in got)):
        raise AssertionError(f"{what}: expected a pair (primal, tangent) of numbers, got {got!r:.200}")
    return got


# %% nbgrader={"grade": true, "grade_id": "test_jvp_dual_directions", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# f is the running example: dy/dx1 = 1/x1 + x2, dy/dx2 = x1 - cos(x2)
value, tangent = jvp_parts(drive(pushed_forward, "running example", [2.0, 5.0], [1.0, 0.0]), "jvp_dual(f, [2, 5], [1, 0])")
assert_close(value, np.log(2.0) + 10.0 - np.sin(5.0), "jvp_dual(f, [2, 5], [1, 0]): the value f(2, 5)")
assert_close(tangent, 0.5 + 5.0, "jvp_dual(f, [2, 5], [1, 0]): the tangent ∂f/∂x1")
_, tangent = jvp_parts(drive(pushed_forward, "running example", [2.0, 5.0], [0.0, 1.0]), "jvp_dual(f, [2, 5], [0, 1])")
assert_close(tangent, 2.0 - np.cos(5.0), "jvp_dual(f, [2, 5], [0, 1]): ∂f/∂x2")
_, tangent = jvp_parts(drive(pushed_forward, "running example", [2.0, 5.0], [3.0, -2.0]), "jvp_dual(f, [2, 5], [3, -2])")
assert_close(tangent, 3.0 * 5.5 - 2.0 * (2.0 - np.cos(5.0)), "jvp_dual(f, [2, 5], [3, -2]): 3 ∂f/∂x1 - 2 ∂f/∂x2")
print("jvp_dual: directional derivatives are right")
### BEGIN HIDDEN TESTS
_, tangent = jvp_parts(drive(pushed_forward, "x³", (1.5,), (2.0,)), "jvp_dual(x³, (1.5,), (2,))")
assert_close(tangent, 2.0 * 3 * 1.5**2, "jvp_dual(x³, (1.5,), (2,))")
_, tangent = jvp_parts(drive(pushed_forward, "running example", (0.7, -1.2), (0.0, 0.0)), "jvp_dual along the zero direction")
assert_close(tangent, 0.0, "jvp_dual along the zero direction")
if drive(pushed_forward, "running example", [2.0, 5.0], [1.0]) != "ValueError":
    raise AssertionError("jvp_dual(f, [2, 5], [1]): expected a ValueError (one tangent per input), got no error")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_jvp_dual_agrees_with_library", "locked": true, "points": 2, "schema_version": 3, "solution": false}
h = FORWARD_FUNCTIONS["tangled"]  # z = x y + sin(x)/(1 + e^y); tanh(z²) - 3 log(x) + cos(2 - y) z
value, tangent = jvp_parts(drive(pushed_forward, "tangled", [0.8, 1.3], [0.6, -1.1]), "jvp_dual(h, [0.8, 1.3], [0.6, -1.1])")
out, expected = mg.jvp(h, (mg.tensor(0.8), mg.tensor(1.3)), (mg.tensor(0.6), mg.tensor(-1.1)))
assert_close(value, out.item(), "jvp_dual(h, ...): the value, against minigrad.jvp")
assert_close(tangent, expected.item(), "jvp_dual(h, ...): the tangent, against minigrad.jvp (forward mode on tensors)")
value, tangent = jvp_parts(drive(pushed_forward, "constant 7", [1.0], [1.0]), "jvp_dual of a constant function")
assert_close(value, 7.0, "jvp_dual of a constant function: the value")
assert_close(tangent, 0.0, "jvp_dual of a constant function: the tangent (a constant's is 0)")
print("jvp_dual: agrees with minigrad's forward mode")
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(2)
for _ in range(3):
    point, direction = rng.uniform(0.5, 2.0, 2), rng.standard_normal(2)
    gradient = mg.grad(h, argnums=(0, 1))(mg.tensor(point[0]), mg.tensor(point[1]))
    _, tangent = jvp_parts(drive(pushed_forward, "tangled", list(point), list(direction)), f"jvp_dual(h, {point}, {direction})")
    assert_close(tangent, sum(g.item() * d for g, d in zip(gradient, direction)),
                 f"jvp_dual(h, {point}, {direction}) against the gradient from reverse mode, dotted with v")
values = np.array([0.5, 1.0, 1.5])
_, tangent = jvp_parts(drive(pushed_forward, "tangled", [values, 2.0], [np.ones(3), 0.0]), "jvp_dual with an array argument")
out, expected = mg.jvp(h, (mg.tensor(values), mg.tensor(2.0)), (mg.tensor(np.ones(3)), mg.tensor(0.0)))
assert_close(tangent, expected.data, "jvp_dual with an array argument (elementwise duals)")
### END HIDDEN TESTS

# %% [markdown]
# ### Experiment: forward mode on the running example
#
# One `jvp_dual` pass gives the derivative along one direction, so the full gradient of $f(x_1, x_2)$ takes two
# passes, one per basis vector $e_1, e_2$. They agree with the library's forward mode (`minigrad.jvp`, the same
# rules as JVP rules next to each primitive's VJP rule in `minigrad/ops.py`) and with reverse mode:

# %%
with runs_your('Dual', 'jvp_dual'):
    point = [2.0, 5.0]
    forward = [jvp_dual(f, point, direction)[1] for direction in ([1.0, 0.0], [0.0, 1.0])]
    library_forward = [mg.jvp(f, [mg.tensor(p) for p in point], [mg.tensor(d) for d in direction])[1].item()
                       for direction in ([1.0, 0.0], [0.0, 1.0])]
    reverse = [g.item() for g in mg.grad(f, argnums=(0, 1))(*[mg.tensor(p) for p in point])]
    print(f"your Dual, 2 passes:        {np.round(forward, 12)}")
    print(f"minigrad.jvp, 2 passes:     {np.round(library_forward, 12)}")
    print(f"reverse mode, 1 pass:       {np.round(reverse, 12)}")

# %% [markdown]
# ## 5. The cost of a gradient: forward mode, reverse mode, finite differences
#
# For $f: \mathbb{R}^N \to \mathbb{R}^M$, the Jacobian is $M \times N$. One forward-mode pass gives a column, $J r$;
# one reverse-mode pass a row, $u^\top J$. Each pass costs a small constant times one evaluation of $f$
# (in the operation-count model of Griewank & Walther 2008, at most about 2.5 for a JVP and 4 for a VJP), so:
#
# | | passes for the full Jacobian | $f: \mathbb{R}^N \to \mathbb{R}$ (a loss) | $f: \mathbb{R} \to \mathbb{R}^M$ (a curve) |
# | --- | --- | --- | --- |
# | finite differences (central) | $2N$ evaluations | $2N$ | $2$ |
# | forward mode | $N$ JVPs | $N$ | $1$ |
# | reverse mode | $M$ VJPs | $1$ | $M$ |
#
# Training a network is the first case with $N$ in the millions and $M = 1$, and that single column of the table
# is why deep learning runs on reverse mode. Let us measure it. The loss is
# $f(x) = \sin\big(\sum_i x_i \tanh x_i + \sum_i x_i^2\big)$ for $N$ from $1$ to $10^4$; the curve is
# $g(t) = w \sin(t\,w)$ with a fixed $w \in \mathbb{R}^M$. Finite differences use your `central_difference`, forward
# mode `minigrad.jvp` (one pass per basis vector), reverse mode `minigrad.grad` and `minigrad.vjp`.
#
# To keep the notebook fast, a method that needs many passes is timed on at most 64 of them and the time is scaled
# to all of them: every pass does the same work, so this extrapolation is accurate, and the plot marks such
# points with open symbols. Each timing is CPU time with numpy on one thread, the fastest of three rounds in which the three methods take
# turns (`interleaved_times` from `minigrad.testing`), so that other programs on a busy machine do not count.

# %%
with runs_your('central_difference'):
    MAX_PASSES = 64  # passes actually timed per measurement; more are extrapolated linearly
    SIZES = [1, 3, 10, 30, 100, 300, 1000, 3000, 10000]


    def unit(size, k):
        """The k-th basis vector of R^size as a tensor."""
        e = np.zeros(size)
        e[k] = 1.0
        return mg.tensor(e)


    def loss(x):
        return ((x.tanh() * x).sum() + (x * x).sum()).sin()


    def loss_of_array(a):
        with mg.no_grad():
            return loss(mg.tensor(a)).item()


    many_inputs = {"finite differences": [], "forward mode": [], "reverse mode": []}
    passes_many_inputs = {"finite differences": [], "forward mode": [], "reverse mode": []}
    rng = np.random.default_rng(0)
    for n in tqdm(SIZES, desc="f: R^N -> R"):
        x = rng.standard_normal(n)
        k = min(n, MAX_PASSES)  # passes timed; k < n means extrapolated
        seconds = interleaved_times({
            # finite differences: 2k evaluations of the full f, perturbing only the first k inputs
            "fd": lambda: central_difference(lambda head: loss_of_array(np.concatenate([head, x[k:]])), x[:k]),
            "fwd": lambda: [mg.jvp(loss, (mg.tensor(x),), (unit(n, i),)) for i in range(k)],
            "rev": lambda: mg.grad(loss)(mg.tensor(x)),
        }, repeat=3)
        fd, fwd, rev = seconds["fd"], seconds["fwd"], seconds["rev"]
        many_inputs["finite differences"].append((fd * n / k, k < n))
        many_inputs["forward mode"].append((fwd * n / k, k < n))
        many_inputs["reverse mode"].append((rev, False))
        passes_many_inputs["finite differences"].append(2 * n)
        passes_many_inputs["forward mode"].append(n)
        passes_many_inputs["reverse mode"].append(1)

# %%
many_outputs = {"finite differences": [], "forward mode": [], "reverse mode": []}
passes_many_outputs = {"finite differences": [], "forward mode": [], "reverse mode": []}
for m in tqdm(SIZES, desc="g: R -> R^M"):
    w = mg.tensor(rng.standard_normal(m))

    def curve(t):
        return (t * w).sin() * w

    def curve_of_array(t):
        with mg.no_grad():
            return curve(mg.tensor(t)).numpy()

    def reverse_rows(k):
        out, vjp_fn = mg.vjp(curve, mg.tensor(0.3))  # one forward pass, then one VJP per output
        for i in range(k):
            vjp_fn(unit(m, i))

    k = min(m, MAX_PASSES)
    seconds = interleaved_times({
        "fd": lambda: (curve_of_array(0.3 + 1e-6) - curve_of_array(0.3 - 1e-6)) / 2e-6,
        "fwd": lambda: mg.jvp(curve, (mg.tensor(0.3),), (mg.tensor(1.0),)),
        "rev": lambda: reverse_rows(k),
    }, repeat=3)
    fd, fwd, rev = seconds["fd"], seconds["fwd"], seconds["rev"]
    many_outputs["finite differences"].append((fd, False))
    many_outputs["forward mode"].append((fwd, False))
    many_outputs["reverse mode"].append((rev * m / k, k < m))
    passes_many_outputs["finite differences"].append(2)
    passes_many_outputs["forward mode"].append(1)
    passes_many_outputs["reverse mode"].append(m)

# %%
with runs_your('central_difference'):
    colors = {"finite differences": "tab:green", "forward mode": "tab:blue", "reverse mode": "tab:red"}
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    panels = [(axes[0], many_inputs, passes_many_inputs, "$N$ inputs", r"full gradient of $f: \mathbb{R}^N \to \mathbb{R}$"),
              (axes[1], many_outputs, passes_many_outputs, "$M$ outputs", r"full Jacobian of $g: \mathbb{R} \to \mathbb{R}^M$")]
    for ax, results, passes, xlabel, title in panels:
        for method, points in results.items():
            seconds = np.array([s for s, _ in points])
            extrapolated = np.array([e for _, e in points])
            count = passes[method][-1]
            what = "evaluations" if method == "finite differences" else "pass" if count == 1 else "passes"
            ax.loglog(SIZES, seconds, "-", color=colors[method], label=f"{method}: {count:,} {what} at size 10⁴")
            ax.loglog(np.array(SIZES)[~extrapolated], seconds[~extrapolated], "o", color=colors[method])
            ax.loglog(np.array(SIZES)[extrapolated], seconds[extrapolated], "o", color=colors[method], mfc="white")
        ax.plot([], [], "o", color="gray", label="measured")
        ax.plot([], [], "o", color="gray", mfc="white", label=f"extrapolated from {MAX_PASSES} timed passes")
        ax.set(xlabel=xlabel, title=title)
        ax.legend(fontsize=8, loc="upper left")
    axes[0].set_ylabel("seconds of CPU time for the full derivative")
    plt.tight_layout()
    plt.show()

    for name, results in [("f: R^N -> R", many_inputs), ("g: R -> R^M", many_outputs)]:
        at_max = {method: points[-1][0] for method, points in results.items()}
        fastest = min(at_max, key=at_max.get)
        print(f"{name} at size 10^4: " + ", ".join(f"{m} {s * 1e3:,.1f} ms ({s / at_max[fastest]:,.0f}x)" for m, s in at_max.items()))

# %% [markdown]
# The two panels are mirror images. For the loss (left), the time of finite differences and forward mode grows
# linearly with $N$ — one or two evaluations per input — while reverse mode stays almost flat: at $N = 10^4$ it is
# thousands of times faster, and the gap grows with $N$. For the curve (right) the roles swap: forward mode and finite
# differences need one or two evaluations whatever $M$ is, and reverse mode pays one backward pass per output.
# Forward mode also keeps no graph: in the left panel, each of its passes ran with constant extra memory, while
# reverse mode stored every intermediate value of the forward pass for its one backward pass — the memory cost that
# chapter 6 attacks with checkpointing. Real systems offer both modes and combine them: `jax.jacfwd` and
# `jax.jacrev`, or `minigrad.jacobian(f, x, mode="forward" | "reverse")`; and chapter 4 puts forward mode *over*
# reverse mode to get Hessian-vector products.
#
# ## Summary
#
# * **Numerical differentiation** needs only values of $f$: central differences, $\big(f(x+h) - f(x-h)\big)/2h$, have
#   truncation error $O(h^2)$ against $O(h)$ for forward differences, but rounding error $O(\varepsilon/h)$ sets a
#   floor — the best step is $h^* \sim \varepsilon^{1/3}$ (central) or $\varepsilon^{1/2}$ (forward), with about
#   10 or 8 correct digits. A gradient costs $2N$ evaluations, so its job is checking other derivatives: with a random
#   cotangent, one comparison checks a whole VJP rule, and it caught our broken $\tanh$ immediately.
# * **Symbolic differentiation** is exact, but written out as a tree the derivative of a nested expression grows
#   exponentially with depth (the logistic map's derivative more than doubles per step); with shared
#   sub-expressions the growth is linear, and branches have no formula at all.
# * **Forward-mode AD** with dual numbers $a + b\varepsilon$, $\varepsilon^2 = 0$, computes $J r$ alongside the value
#   in one pass and constant memory; a gradient of $f: \mathbb{R}^N \to \mathbb{R}$ needs $N$ passes.
# * **Reverse-mode AD** gets the whole gradient of a scalar loss in one backward pass — measured thousands of times
#   faster than the alternatives at $N = 10^4$ — at the price of storing the forward pass. For many outputs and few
#   inputs, forward mode wins instead.
#
# ## References
#
# * A. G. Baydin, B. A. Pearlmutter, A. A. Radul, J. M. Siskind. *Automatic differentiation in machine learning: a
#   survey.* Journal of Machine Learning Research 18(153), 2018 — sections 2–3 compare the four methods; the
#   logistic-map example of expression swell is their Table 1.
# * A. Griewank, A. Walther. *Evaluating Derivatives: Principles and Techniques of Algorithmic Differentiation*,
#   2nd ed. SIAM, 2008 — forward mode (ch. 3), reverse mode and the cheap gradient principle (ch. 4).
# * R. E. Wengert. *A simple automatic derivative evaluation program.* Communications of the ACM 7(8), 463–464,
#   1964 — forward mode on the evaluation trace.
# * W. K. Clifford. *Preliminary sketch of biquaternions.* Proceedings of the London Mathematical Society, 1873 —
#   dual numbers.
# * J. Nocedal, S. J. Wright. *Numerical Optimization*, 2nd ed. Springer, 2006, §8.1 — finite-difference
#   derivative approximations and the choice of $h$.
