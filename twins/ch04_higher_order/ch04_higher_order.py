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
# # Chapter 4 — Higher-order derivatives: differentiating the backward pass
#
# Chapter 2's backward pass turned a graph into numbers: one adjoint per vertex. But the backward pass is itself a
# computation made of elementary operations — products, sums, `tanh` — and nothing stops us from *recording* it as a
# second graph while it runs. Differentiate that graph and you get second derivatives; do it again and you get third.
# The article this course follows (the MachineLearning wiki's «Граф вычислений», *Computational graph*: see the
# references) puts it in one sentence: modern AD systems build a secondary graph on top of the
# backward pass, computing Hessian-vector products without ever forming the full Hessian matrix.
#
# Why would anyone want that? Second-order information is everywhere in modern machine learning:
#
# * **Curvature without the matrix.** Newton-type and "Hessian-free" optimisers (Martens 2010), estimates of the
#   sharpness of a minimum, influence functions, and Lanczos estimates of the Hessian's spectrum all need products
#   $H v$ of the Hessian with a vector, never $H$ itself — which for a network with $10^8$ weights would have
#   $10^{16}$ entries.
# * **Learning through learning.** Model-Agnostic Meta-Learning (MAML, Finn et al. 2017) makes a gradient-descent
#   step part of the model: the training objective is the loss *after* an update, so its gradient differentiates
#   through a gradient.
# * **Gradients as part of the loss**: gradient penalties in GANs, physics-informed networks whose loss contains
#   $\partial u / \partial x$, implicit layers.
#
# In this chapter you will
#
# 1. record a backward pass with `create_graph=True` and look at the graph it builds;
# 2. compose `grad(grad(f))` and check second and third derivatives against closed forms;
# 3. implement **`hvp(f, x, v)`**: Pearlmutter's trick, $H v$ in a small constant number of passes, checked
#    against an explicit Hessian and timed against forming it as the dimension grows;
# 4. implement **`maml_step(...)`**: one meta-update of MAML on few-shot sinusoid regression, the inner SGD step
#    inside the graph, and compare it with first-order MAML and with ordinary training.
#
# As in every chapter, `minigrad` is the finished reference library ([chapter 1](../ch01_graph/ch01_graph.ipynb) says
# why): its `gradients`, `grad`, `hessian` and optimisers are yours to use. Cells marked *graded* contain `raise NotImplementedError()` for you to replace; the test cells after
# them check your work (some tests are hidden and run only when your notebook is graded, so read each specification
# carefully). Demonstrations that run your functions say so, instead of stopping, while those functions are not
# written yet.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib
import time

import numpy as np
import matplotlib.pyplot as plt
from tqdm.auto import tqdm

import minigrad as mg
from minigrad import Tensor
from minigrad.autograd import count_vjps
from minigrad.examples.maml import Task, adapt, init_mlp, mlp, sample_sinusoid_task, sinusoid
from minigrad.nn import mse_loss
from minigrad.testing import assert_close, assert_equal, drive

@contextlib.contextmanager
def runs_your(*names):
    """Around a demonstration that runs your functions: until they work, it says so instead of stopping Run All."""
    try:
        yield
    except Exception as error:
        print(f"This demonstration runs your {', '.join(names)}; it stopped with {type(error).__name__}: {error}\n"
              f"Write (or fix) the function it names above, then run this cell again.")



# %% [markdown]
# ## 1. The backward pass is a computation too
#
# Recall how the engine computes adjoints. For every vertex, in reverse topological order, it calls the operation's
# VJP rule, which maps the adjoint $\bar v_j$ of the output to the adjoints of the inputs. For $y = x^3$ the rule is
# $\bar x = \bar y \cdot 3x^2$, and in `minigrad.ops` it is written with minigrad operations:
#
# ```python
# power = Primitive("power", ..., vjp=lambda g, out, x, exponent: (g * (exponent * power(x, exponent=exponent - 1)),), ...)
# ```
#
# Normally the engine runs these rules under `no_grad`: the adjoints are plain numbers and nothing is recorded.
# With `create_graph=True` it runs them with recording switched **on**. The rule's operations then take `x` — a
# tensor of the original graph that requires grad — as input, so they record nodes like any other computation: the
# adjoint $\bar x$ comes back as a tensor with its own graph, reaching down to the original inputs. That graph is
# the derivative as a function, $x \mapsto 3x^2$, and differentiating it gives $6x$.
#
# Two details make this work:
#
# * the first graph must survive the first backward pass, because the recorded backward refers to its tensors
#   (here, `x` itself; for `tanh`, the output `out`): `retain_graph` defaults to `create_graph`, as in PyTorch;
# * every VJP rule must be written in differentiable operations. Non-differentiable pieces — the 0/1 mask of
#   `relu`, the position of a `max` — are constants of the second pass, which is exactly right: their derivative is
#   zero almost everywhere. (The library's tests check the second derivative of every primitive against PyTorch's
#   double backward.)

# %%
x = mg.tensor(2.0, requires_grad=True)
y = x ** 3
y.backward(create_graph=True)                          # x.grad = 3 x² = 12, and a graph
(d2y_dx2,) = mg.gradients(x.grad, [x], retain_graph=True)   # 6 x = 12 (keep the graph: we draw it below)
print(f"y = x³ at x = 2:  dy/dx = {x.grad.item():g} (made by '{x.grad.op}', requires_grad={x.grad.requires_grad}),"
      f"  d²y/dx² = {d2y_dx2.item():g}")
mg.draw([y, x.grad], names={"x": x, "y": y})


# %% [markdown]
# Here `backward(create_graph=True)` left in `x.grad` a tensor *with a graph*. The drawing shows both graphs: the
# forward pass $y = x^3$ (black) and, in red, the graph of $\bar x = \bar y \cdot (3 \cdot x^{2})$ recorded while
# the backward pass ran (the dotted edge joins `x` to its `.grad`): the `power` node computes $x^2$ from the original
# `x`, the constant $3$ is the exponent, the seed $\bar y = 1$ is a constant, and the products apply the chain rule.
# It is an ordinary graph, so everything we know applies to it — including `gradients`, which walks it backwards to
# get $6x$. A second derivative costs one more backward pass over a graph about as large as the
# first backward pass, so it stays a small constant multiple of the cost of $f$.
#
# ## 2. `grad(grad(f))`
#
# The functional API makes composition look natural: `mg.grad(f)` is a function, so `mg.grad(mg.grad(f))` is its
# derivative. The inner `grad` notices that its input is being differentiated by an outer `grad` (the input requires
# grad) and records its backward pass; the outer `grad` differentiates that record.
#
# A small trick extends this to whole arrays of points. For an *elementwise* function $f$,
# $\frac{\partial}{\partial x_i} \sum_j f(x_j) = f'(x_i)$, so the gradient of `f(x).sum()` is $f'$ evaluated at
# every element of `x` — one backward pass for a whole plot. Below: $\tanh$ and its first three derivatives,
# against the closed forms $\tanh' = 1 - \tanh^2$, $\tanh'' = -2\tanh\,(1 - \tanh^2)$ and
# $\tanh''' = -2\,(1 - \tanh^2)(1 - 3\tanh^2)$.

# %%
def elementwise_derivative(f):
    # f'(x) at every element of x, for an elementwise f: the gradient of the sum
    return mg.grad(lambda x: f(x).sum())


derivatives = [lambda x: x.tanh()]
for order in range(3):
    derivatives.append(elementwise_derivative(derivatives[-1]))

grid = np.linspace(-3, 3, 201)
t = np.tanh(grid)
closed_forms = [t, 1 - t**2, -2 * t * (1 - t**2), -2 * (1 - t**2) * (1 - 3 * t**2)]
fig, ax = plt.subplots(figsize=(8, 4))
for order, (derivative, exact) in enumerate(zip(derivatives, closed_forms)):
    values = derivative(mg.tensor(grid)).data
    print(f"order {order}: largest difference from the closed form {np.abs(values - exact).max():.1e}")
    ax.plot(grid, values, label=["tanh", "tanh'", "tanh''", "tanh'''"][order])
    ax.plot(grid, exact, "k:", linewidth=1)
ax.set(xlabel="x", title="tanh and three derivatives by nested reverse mode (dotted: closed forms)")
ax.legend()
plt.show()


# %% [markdown]
# Each nesting level records the backward pass of the level below, so the $k$-th derivative costs about a constant
# to the power $k$ times $f$ — fine for a few orders, which is all that practice needs. (For high-order Taylor
# coefficients there are better tools: Taylor-mode AD propagates a truncated power series forward in one pass.)
#
# ## 3. Hessian-vector products: Pearlmutter's trick
#
# For $f: \mathbb{R}^n \to \mathbb{R}$ the **Hessian** is the $n \times n$ matrix of second derivatives,
# $H_{ij} = \frac{\partial^2 f}{\partial x_i \partial x_j}$: the Jacobian of the gradient. Forming it takes $n$
# passes (one row $H e_i$ per pass, as `mg.hessian` does) and $n^2$ numbers of memory. Most algorithms need only
# its action on a vector, and Pearlmutter (1994) observed that this action is itself a gradient. Because $v$ does
# not depend on $x$,
#
# $$
# \nabla_x \big( \nabla f(x)^\top v \big)_i
# = \frac{\partial}{\partial x_i} \sum_j \frac{\partial f}{\partial x_j} v_j
# = \sum_j \frac{\partial^2 f}{\partial x_i \partial x_j} v_j = (H v)_i .
# $$
#
# So: compute the gradient $g = \nabla f(x)$ **with its graph** (`create_graph=True`), form the scalar
# $s = g^\top v$, and backpropagate once more: $\nabla_x s = H v$. Two reverse passes — the cost is a small
# constant times one evaluation of $f$, **independent of $n$**, and no $n \times n$ matrix ever exists. This is
# *reverse-over-reverse*. JAX's documentation recommends the equivalent *forward-over-reverse* variant,
# $H v = \frac{d}{d\varepsilon} \nabla f(x + \varepsilon v) \big|_{\varepsilon = 0}$ — one forward-mode JVP pushed
# through the backward pass — which keeps less in memory; `mg.hvp(f, x, v, mode=...)` offers both.

# %% nbgrader={"grade": false, "grade_id": "hvp", "locked": false, "schema_version": 3, "solution": true}
def hvp(f, x, v):
    """The Hessian-vector product H v of the scalar function `f` at `x`, without forming H.

    f: a function from a Tensor shaped like x to a scalar Tensor.
    x, v: Tensors (or numpy arrays) of the same shape; v is the direction.
    Returns a Tensor shaped like x holding H(x) v, by reverse-over-reverse differentiation:
    the gradient g = ∇f(x) with create_graph=True, then the gradient of the scalar (g * v).sum().
    x may have any shape (a scalar, a vector, a matrix). Where ∇f does not depend on x at all (f linear
    in x), the gradient comes back as a constant (requires_grad False) that mg.gradients refuses to
    differentiate: H v is then zero, so return zeros shaped like x.
    The cost must not grow with the size of x beyond the cost of f itself (two backward passes),
    and the caller's tensors are left alone: no `.grad` appears on x or on anything f uses.
    """
    ### BEGIN SOLUTION
    x = Tensor(x.data if isinstance(x, Tensor) else x, requires_grad=True)  # our own leaf
    v = v if isinstance(v, Tensor) else Tensor(v)
    (gradient,) = mg.gradients(f(x), [x], create_graph=True)
    if not gradient.requires_grad:  # ∇f is a constant: f is linear in x, and H v = 0
        return Tensor(np.zeros_like(x.data))
    (product,) = mg.gradients((gradient * v).sum(), [x])
    return product
    ### END SOLUTION


# %% [markdown]
# The tests use two functions whose Hessians are easy to write by hand: a quadratic form
# $f(x) = \tfrac12 x^\top A x + b^\top x$, whose Hessian is $\tfrac12 (A + A^\top)$ (for any $A$, symmetric or not),
# a chain $f(x) = \sum_i x_i^2 x_{i+1} + \sum_i \sin x_i$ whose Hessian is tridiagonal, and a linear
# $f(x) = \mathbf 1^\top W x + b^\top x$, whose Hessian is zero (its gradient is a constant, so there is no second
# graph to differentiate). Hidden tests also try a scalar $x$ and a matrix
# $X$ (with $f(X) = \tfrac12 \lVert X W \rVert^2 + \sum C \odot \sin X$, whose Hessian maps $V$ to
# $V W W^\top - C \odot \sin X \odot V$). The cost test runs your `hvp` at
# $n = 100{,}000$, where two reverse passes take milliseconds but forming $H$, or one row of it per pass, takes
# $n$ passes — many minutes: it allows 10 seconds.

# %% nbgrader={"grade": false, "grade_id": "helpers_hvp", "locked": true, "schema_version": 3, "solution": false}
# How the tests work: a *driver* (the functions marked "Driver") builds the function, the point and the
# direction from plain data, calls your hvp and returns what came back as plain data (arrays, None, type
# names), never tensors. `drive(driver, ...)` runs it; a *checker* computes the expected H v itself (from
# the Hessians derived by hand, or the library) and compares. When your notebook is graded, drivers run
# beside your code and checkers in a separate process, so a test never trusts anything but those facts.

def quadratic_form(A, b):
    """f(x) = ½ xᵀ A x + bᵀ x, whose Hessian is ½ (A + Aᵀ) everywhere."""
    A, b = Tensor(A), Tensor(b)
    return lambda x: 0.5 * (x @ (A @ x)) + (b * x).sum()


def chain(x):
    """f(x) = Σ x_i² x_{i+1} + Σ sin(x_i): neighbours interact, so the Hessian is tridiagonal."""
    return (x[:-1] * x[:-1] * x[1:]).sum() + x.sin().sum()


def chain_hessian(x):
    """The Hessian of `chain` at the numpy vector x, derived by hand."""
    n = len(x)
    H = -np.diag(np.sin(x))
    for i in range(n - 1):
        H[i, i] += 2 * x[i + 1]      # ∂²(x_i² x_{i+1}) / ∂x_i²
        H[i, i + 1] += 2 * x[i]      # ∂²(x_i² x_{i+1}) / ∂x_i ∂x_{i+1}
        H[i + 1, i] += 2 * x[i]
    return H


def chain_hessian_times(x, v):
    """chain_hessian(x) @ v without forming the matrix (it is tridiagonal): for vectors of any length."""
    Hv = -np.sin(x) * v
    Hv[:-1] += 2 * x[1:] * v[:-1] + 2 * x[:-1] * v[1:]
    Hv[1:] += 2 * x[:-1] * v[:-1]
    return Hv


def rosenbrock(x):
    """Σ 100 (x_{i+1} - x_i²)² + (1 - x_i)²: another tridiagonal Hessian."""
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def case_function(case):
    """The scalar function f of a test case, described in plain data: "chain", ("quadratic", A, b), ..."""
    kind, *args = case if isinstance(case, (list, tuple)) else (case,)
    if kind == "chain":
        return chain
    if kind == "rosenbrock":
        return rosenbrock
    if kind == "quadratic":
        return quadratic_form(*args)
    if kind == "linear":  # 1ᵀ W x + bᵀx: ∇f is a constant, H = 0
        W, b = Tensor(args[0]), Tensor(args[1])
        return lambda x: (W @ x).sum() + (b * x).sum()
    if kind == "relu":  # Σ relu(W x) + bᵀx: piecewise linear, H = 0 wherever it exists
        W, b = Tensor(args[0]), Tensor(args[1])
        return lambda x: (W @ x).relu().sum() + (b * x).sum()
    if kind == "cubic":  # x³ + sin x for a scalar x: H v = (6x - sin x) v
        return lambda x: x ** 3 + x.sin()
    if kind == "matrix":  # ½ ‖X W‖² + Σ C ⊙ sin X for a matrix X: H V = V W Wᵀ - C ⊙ sin X ⊙ V
        W, C = Tensor(args[0]), Tensor(args[1])
        return lambda X: 0.5 * ((X @ W) ** 2).sum() + (C * X.sin()).sum()
    if kind == "logsumexp":  # logsumexp(W x) + ¼ Σ x⁴
        W = Tensor(args[0])
        return lambda x: mg.logsumexp(W @ x, axis=0) + (x ** 4).sum() * 0.25
    raise ValueError(f"unknown test function {case!r}")


def tensor_facts(value):
    """What a driver reports about a value your code returned: a Tensor's data (a copy), else its type."""
    if isinstance(value, Tensor):
        return np.array(value.data, copy=True)
    return f"a {type(value).__name__}"


def hvp_result(case, x, v, as_tensors=True):
    """Driver: your hvp(f, x, v) for the case's f, with x and v as Tensors (or as numpy arrays); returns the
    result's data, or its type."""
    f = case_function(case)
    if as_tensors:
        x, v = Tensor(x), Tensor(v)
    return tensor_facts(hvp(f, x, v))


def hvp_at_scale(case, n, seed):
    """Driver: your hvp for the case's f at a random x and v of length n (from `seed`)."""
    rng = np.random.default_rng(seed)
    x, v = rng.standard_normal(n), rng.standard_normal(n)
    return tensor_facts(hvp(case_function(case), Tensor(x), Tensor(v)))


def random_point(n, seed):
    """The x and v that hvp_at_scale builds, for the checker."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), rng.standard_normal(n)


def hvp_leaves(case, seed):
    """Driver: your hvp with tensors that require grad around it; returns its result and, afterwards, their
    .grad (None, a type name, or the data) and data. "caller_x": x itself requires grad; "captured_W": f uses
    a parameter W that requires grad."""
    rng = np.random.default_rng(seed)
    if case == "caller_x":
        x = Tensor(rng.standard_normal(5), requires_grad=True)
        result = hvp(chain, x, Tensor(np.ones(5)))
        watched = {"x": x}
    elif case == "captured_W":
        W = Tensor(rng.standard_normal((3, 3)), requires_grad=True)
        x = Tensor(rng.standard_normal(3))
        result = hvp(lambda x: ((W @ x).tanh() ** 2).sum(), x, Tensor(rng.standard_normal(3)))
        watched = {"W": W, "x": x}
    else:
        raise ValueError(f"unknown case {case!r}")
    return {"value": tensor_facts(result),
            "grads": {name: None if t.grad is None else tensor_facts(t.grad) for name, t in watched.items()},
            "data": {name: t.data.copy() for name, t in watched.items()}}


def check_hvp(got, expected, what):
    """The driver's result is an array shaped like `expected`, with its values."""
    if type(got) is str:
        raise AssertionError(f"{what}: expected a Tensor shaped like x, got {got}")
    if type(got) is not np.ndarray:
        raise AssertionError(f"{what}: expected a Tensor shaped like x, got {type(got).__name__}")
    assert_close(got, expected, what)


# %% nbgrader={"grade": true, "grade_id": "test_hvp_values", "locked": true, "points": 3, "schema_version": 3, "solution": false}
rng = np.random.default_rng(0)
A, bias = rng.standard_normal((4, 4)), rng.standard_normal(4)
x, v = rng.standard_normal(4), rng.standard_normal(4)
check_hvp(drive(hvp_result, ("quadratic", A, bias), x, v), 0.5 * (A + A.T) @ v,
          "hvp of ½ xᵀAx + bᵀx (expected ½ (A + Aᵀ) v)")
x, v = rng.standard_normal(6), rng.standard_normal(6)
check_hvp(drive(hvp_result, "chain", x, v), chain_hessian(x) @ v, "hvp of Σ x_i² x_{i+1} + Σ sin x_i")
W, bias, x, v = rng.standard_normal((5, 4)), rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal(4)
check_hvp(drive(hvp_result, ("linear", W, bias), x, v), np.zeros(4),
          "hvp of 1ᵀWx + bᵀx (linear: expected zeros, as ∇f does not depend on x)")
print("hvp: values agree with the Hessians derived by hand")
### BEGIN HIDDEN TESTS
# piecewise linear: relu's mask is a constant of the second pass, so H v = 0 here too
check_hvp(drive(hvp_result, ("relu", W, bias), x, v), np.zeros(4), "hvp of Σ relu(Wx) + bᵀx (expected zeros)")
# x of other shapes: a scalar, and a matrix
x, v = 0.7, -1.3
check_hvp(drive(hvp_result, "cubic", x, v), np.array((6 * x - np.sin(x)) * v), "hvp of x³ + sin x at a scalar x")
W, C = rng.standard_normal((4, 3)), rng.standard_normal((2, 4))
X, V = rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
check_hvp(drive(hvp_result, ("matrix", W, C), X, V), V @ W @ W.T - C * np.sin(X) * V,
          "hvp of ½‖XW‖² + Σ C⊙sin X at a matrix X (expected V W Wᵀ - C⊙sin X⊙V)")
# numpy inputs, a longer chain, and the unit vectors recover the Hessian's columns
x = rng.standard_normal(9)
for k in (0, 4, 8):
    e = np.zeros(9)
    e[k] = 1.0
    check_hvp(drive(hvp_result, "chain", x, e, False), chain_hessian(x)[:, k], f"hvp(chain, x, e_{k}) with numpy inputs")
# a function with a matrix product, a log-sum-exp and a power: compare with the library's full Hessian
W = rng.standard_normal((5, 3))
x, v = rng.standard_normal(3), rng.standard_normal(3)
expected = mg.hessian(case_function(("logsumexp", W)), Tensor(x)).data @ v
check_hvp(drive(hvp_result, ("logsumexp", W), x, v), expected, "hvp of logsumexp(Wx) + ¼Σx⁴")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_hvp_cost", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Pearlmutter's point: H v costs a few backward passes whatever the dimension, never one per input. At
# n = 100,000 two reverse passes take milliseconds, while n passes (forming H, or one row of it at a time)
# take many minutes: only the first finishes within the 5 s this test allows.
n = 100_000
try:
    got = drive(hvp_at_scale, "chain", n, 1, seconds=5)
except (TimeoutError, MemoryError) as error:
    raise AssertionError(
        f"hvp(chain, x, v) for n = {n:,} did not finish ({type(error).__name__}): its work grows with the "
        f"dimension, as if the Hessian were formed row by row. Two reverse passes suffice for any n: the "
        f"gradient with create_graph=True, then the gradient of (gradient * v).sum()") from None
x, v = random_point(n, 1)
check_hvp(got, chain_hessian_times(x, v), f"hvp of Σ x_i² x_{{i+1}} + Σ sin x_i for n = {n:,}")
print(f"hvp: n = {n:,} within the time limit, values right")
### BEGIN HIDDEN TESTS
try:
    got = drive(hvp_at_scale, "rosenbrock", n, 2, seconds=5)
except (TimeoutError, MemoryError) as error:
    raise AssertionError(f"hvp(rosenbrock, x, v) for n = {n:,} did not finish ({type(error).__name__}): "
                         f"its work grows with the dimension") from None
x, v = random_point(n, 2)
check_hvp(got, mg.hvp(rosenbrock, Tensor(x), Tensor(v)).data, f"hvp of the Rosenbrock function for n = {n:,}")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_hvp_no_side_effects", "locked": true, "points": 1, "schema_version": 3, "solution": false}
got = drive(hvp_leaves, "caller_x", 2)
x = np.random.default_rng(2).standard_normal(5)  # the x the driver built
assert type(got) is dict and type(got.get("grads")) is dict and type(got.get("data")) is dict, f"hvp: malformed facts {got!r:.200}"
assert got["grads"].get("x", "missing") is None, (
    f"hvp left a .grad on the caller's x: {got['grads'].get('x', 'missing')}; use mg.gradients, not backward()")
assert_close(got["data"].get("x"), x, "x after hvp (it must not change)")
print("hvp: no .grad left on x, x unchanged")
### BEGIN HIDDEN TESTS
# a parameter captured by f must not collect a gradient either (the HVP is with respect to x only)
got = drive(hvp_leaves, "captured_W", 3)
assert type(got) is dict and type(got.get("grads")) is dict and type(got.get("value")) in (np.ndarray, str), f"hvp: malformed facts {got!r:.200}"
assert got["grads"].get("W", "missing") is None, f"hvp left a .grad on a parameter used inside f: {got['grads'].get('W', 'missing')}"
assert got["grads"].get("x", "missing") is None, f"hvp left a .grad on the caller's x: {got['grads'].get('x', 'missing')}"
shape = got["value"].shape if type(got["value"]) is np.ndarray else got["value"]
assert_equal(shape, (3,), "shape of hvp(f, x, v) for x of shape (3,)")
### END HIDDEN TESTS

# %% [markdown]
# ### HVP against the explicit Hessian
#
# On a small function we can afford the whole Hessian, and every column of it is one HVP with a unit vector.
# The Rosenbrock function in $n$ dimensions, $f(x) = \sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2$, couples each
# coordinate to its neighbours, so its Hessian is tridiagonal:

# %%
with runs_your('hvp'):
    def rosenbrock(x):
        return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


    rng = np.random.default_rng(0)
    x0 = rng.uniform(-1, 1, 8)
    H = mg.hessian(rosenbrock, mg.tensor(x0)).data                # 8 passes, 64 numbers
    columns = np.stack([hvp(rosenbrock, x0, e).data for e in np.eye(8)], axis=1)
    v = rng.standard_normal(8)
    print(f"largest |H - [hvp(e_1) ... hvp(e_n)]| = {np.abs(H - columns).max():.1e}")
    print(f"largest |H v - hvp(v)| = {np.abs(H @ v - hvp(rosenbrock, x0, v).data).max():.1e}")
    fig, ax = plt.subplots(figsize=(4.2, 3.6))
    image = ax.imshow(H, cmap="RdBu_r", vmin=-np.abs(H).max(), vmax=np.abs(H).max())
    ax.set(title="Hessian of Rosenbrock in 8-D", xlabel="j", ylabel="i")
    fig.colorbar(image)
    plt.show()


# %% [markdown]
# ### Cost as the dimension grows
#
# Now the point of the trick. Take an $\ell_2$-regularised logistic-regression loss on 200 samples,
# $f(w) = \frac{1}{m} \sum_k \log\big(1 + e^{-y_k x_k^\top w}\big) + \frac{\lambda}{2}\lVert w\rVert^2$, for $n$
# from 8 to 256 weights. Forming the Hessian (`mg.hessian`, one pass per weight) and multiplying costs $O(n)$
# passes; your `hvp` costs two, whatever $n$ is. We time both with `minigrad.testing.interleaved_times`: CPU time of this process with the
# garbage collector paused and numpy on one thread, the fastest of several runs, the two methods taking turns, so
# that other programs on a busy machine do not count. And we count the VJP rules each evaluates.

# %%
with runs_your('hvp'):
    def logistic_loss(X, labels, lam=1e-2):
        X, labels = mg.tensor(X), mg.tensor(labels)

        def f(w):
            margins = labels * (X @ w)
            softplus = (-margins).relu() + (1.0 + (-margins.abs()).exp()).log()   # log(1 + e^-m), stably
            return softplus.mean() + 0.5 * lam * (w * w).sum()

        return f


    from minigrad.testing import interleaved_times  # CPU time, GC paused, one BLAS thread, contenders taking turns


    def vjps_of(fn):
        # How many VJP rules the backward passes inside fn() evaluated (the library counts them).
        with count_vjps() as counter:
            fn()
        return counter.vjps


    DIMENSIONS = [8, 16, 32, 64, 128, 256]
    timings = {"hvp (reverse-over-reverse)": [], "form the Hessian, then H v": []}
    vjp_counts = {name: [] for name in timings}
    rng = np.random.default_rng(1)
    for n in tqdm(DIMENSIONS, desc="dimension"):
        X = rng.standard_normal((200, n)) / np.sqrt(n)
        f = logistic_loss(X, np.sign(X @ rng.standard_normal(n)))
        w, v = rng.standard_normal(n), rng.standard_normal(n)
        methods = {
            "hvp (reverse-over-reverse)": lambda: hvp(f, w, v),
            "form the Hessian, then H v": lambda: mg.hessian(f, mg.tensor(w)).data @ v,
        }
        fastest = interleaved_times(methods, repeat=5 if n <= 64 else 2)
        for name, method in methods.items():
            timings[name].append(fastest[name])
            vjp_counts[name].append(vjps_of(method))

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for (name, seconds), marker in zip(timings.items(), "os"):
        ax.loglog(DIMENSIONS, np.array(seconds) * 1e3, marker + "-", label=name)
    ax.set(xlabel="dimension n", ylabel="milliseconds", title="Hessian-vector product: Pearlmutter vs the full Hessian")
    ax.legend()
    plt.show()
    for name in timings:
        print(f"{name:28s} VJP rules evaluated: " + ", ".join(f"n={n}: {c}" for n, c in zip(DIMENSIONS, vjp_counts[name])))
    print(f"at n = {DIMENSIONS[-1]}: the full Hessian is {timings['form the Hessian, then H v'][-1] / timings['hvp (reverse-over-reverse)'][-1]:.0f}x slower")


# %% [markdown]
# The HVP's time is nearly flat — it grows by well under a factor of two while $n$ grows 32-fold, because at these
# sizes the Python overhead of its few dozen operations outweighs the arithmetic on the $200 \times n$ data matrix —
# and its number of VJP evaluations does not change at all. The Hessian's VJP count grows exactly in proportion to
# $n$: `mg.hessian` runs one gradient per coordinate (forward over reverse), each running the same backward pass; its
# time grows at least as fast, since every pass also handles longer vectors, so the gap widens with $n$ (the ratio
# printed above). For a real network
# its memory alone, $n^2$ numbers, would rule it out long before time does.
#
# ### What HVPs buy: curvature along the way
#
# With HVPs, any algorithm that only needs matrix-vector products with $H$ works at the cost of a few gradients per
# product: conjugate gradients solves Newton's system $H d = -\nabla f$ (Hessian-free optimisation), and the
# **power iteration** $v \leftarrow H v / \lVert H v \rVert$ finds the largest eigenvalue of $H$ — the *sharpness*
# of the loss at $w$, which bounds the stable learning rate of gradient descent by $2 / \lambda_{\max}$.

# %%
with runs_your('hvp'):
    n = 64
    X = rng.standard_normal((200, n)) / np.sqrt(n)
    f = logistic_loss(X, np.sign(X @ rng.standard_normal(n)))
    w = rng.standard_normal(n)
    v = rng.standard_normal(n)
    estimates = []
    for _ in range(150):
        Hv = hvp(f, w, v).data
        estimates.append(v @ Hv / (v @ v))             # Rayleigh quotient
        v = Hv / np.linalg.norm(Hv)
    eigenvalues = np.linalg.eigvalsh(mg.hessian(f, mg.tensor(w)).data)   # the full H, to check against
    exact = eigenvalues[-1]
    print(f"largest Hessian eigenvalue: eigvalsh of the full H {exact:.6f}; power iteration "
          + ", ".join(f"{k} HVPs {estimates[k - 1]:.6f}" for k in (10, 30, 150)))
    print(f"ratio of the two largest eigenvalues λ2/λ1 = {eigenvalues[-2] / exact:.3f}")
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    ax.semilogy(np.arange(1, len(estimates) + 1), np.abs(np.array(estimates) - exact) / exact)
    ax.set(xlabel="HVPs (power-iteration steps)", ylabel=r"relative error of $\lambda_{\max}$", title="Sharpness by power iteration")
    plt.show()


# %% [markdown]
# The Rayleigh quotient of power iteration converges like $(\lambda_2/\lambda_1)^{2k}$ after $k$ steps, and the top
# eigenvalues of this loss are close (ratio printed above): 30 HVPs leave a 3% error, 150 about 0.1%. Each HVP costs
# two backward passes whatever $n$ is, so for a large network this is still far cheaper than forming $H$ once. Lanczos
# iteration, also built only from HVPs, converges much faster when eigenvalues cluster like this.

# %% [markdown]
# ## 4. MAML: a gradient step inside the graph
#
# **Few-shot learning** asks a model to fit a new task from a handful of examples. Model-Agnostic Meta-Learning
# (Finn, Abbeel & Levine 2017) does not change the model; it learns an *initialisation* $\theta$ from which one (or a
# few) steps of ordinary gradient descent on a new task's few examples already give a good model.
#
# Each task $\mathcal{T}$ comes with a *support* set $S$ (the few examples to adapt on) and a *query* set $Q$ (to
# judge the adapted model). With the inner learning rate $\alpha$:
#
# $$
# \theta'_{\mathcal T} = \theta - \alpha \nabla_\theta L_S(\theta), \qquad
# \mathcal{L}_{\text{meta}}(\theta) = \frac{1}{|\mathcal B|}\sum_{\mathcal T \in \mathcal B} L_Q\big(\theta'_{\mathcal T}\big),
# $$
#
# and the outer loop minimises $\mathcal L_{\text{meta}}$ over batches $\mathcal B$ of tasks with any optimiser
# (Adam below). The inner update is part of the function being minimised, so its gradient flows *through* the
# inner gradient. By the chain rule, for one task,
#
# $$
# \nabla_\theta L_Q(\theta') = \Big(\frac{\partial \theta'}{\partial \theta}\Big)^{\!\top} \nabla_{\theta'} L_Q(\theta')
# = \big(I - \alpha\, \nabla^2_\theta L_S(\theta)\big)\, \nabla_{\theta'} L_Q(\theta') .
# $$
#
# There it is: a Hessian-vector product, $\nabla^2 L_S \cdot \nabla L_Q$ — and reverse mode computes it without
# being told, *if* the inner gradient was computed with `create_graph=True`. Then $\theta'$ is an ordinary tensor
# in the graph, a function of $\theta$ through the recorded backward pass, and one `backward()` of the meta-loss
# differentiates the whole thing: the query forward pass, the inner update, and the inner backward pass.
#
# **First-order MAML** (FOMAML, already in Finn et al.; Nichol et al. 2018 analyse it with Reptile) drops the
# Hessian term by treating the inner gradient as a constant, $\partial\theta'/\partial\theta \approx I$: the graph
# through the inner backward pass is never recorded, which saves memory and about half the work. Whether the
# dropped term matters is an empirical question — we will measure it.
#
# The graph is easiest to see on a model with one weight, $\hat y = w x$, one support point and one query point.
# The inner loss $(w - 2)^2$ has second derivative 2, so the meta-gradient is $(1 - 2\alpha)$ times the query
# gradient at $w'$. In the drawing, the meta-loss reaches $w$ twice: directly, through $w' = w - \alpha \cdot
# (\ldots)$, and through the recorded inner backward pass that computed the inner gradient from $w$.

# %%
w = mg.tensor(0.5, requires_grad=True)
inner_loss = (w * 1.0 - 2.0) ** 2                             # support point (x, y) = (1, 2)
(inner_grad,) = mg.gradients(inner_loss, [w], create_graph=True)
adapted = w - 0.1 * inner_grad                                # the inner SGD step, in the graph
meta_loss = (adapted * 3.0 - 6.0) ** 2                        # query point (x, y) = (3, 6)
(meta_grad,) = mg.gradients(meta_loss, [w], retain_graph=True)
print(f"w = {w.item()}, adapted w' = {adapted.item():.3f}, query loss after adaptation = {meta_loss.item():.4f}")
print(f"meta-gradient {meta_grad.item():.4f} = (1 - α·2) · 2·3·(3w' - 6) = {(1 - 0.1 * 2) * 6 * (3 * adapted.item() - 6):.4f}")
mg.draw(meta_loss, names={"w": w, "w'": adapted, "inner gradient": inner_grad, "meta-loss": meta_loss}, rankdir="TB")


# %% [markdown]
# ### Your turn: `maml_step`
#
# Write one meta-training step. The model is *functional*, `forward(params, x)`, because the adapted parameters
# $\theta'$ are not the leaves a module owns but new tensors computed from them. For each task in the batch:
#
# 1. start from `adapted = list(params)`;
# 2. repeat `inner_steps` times (possibly zero times: with `inner_steps=0` the query loss is that of $\theta$ itself,
#    which the experiments below use for ordinary training): the support loss `mse_loss(forward(adapted, x_support), y_support)`, its gradient
#    with respect to `adapted` by `mg.gradients(...)` — with `create_graph=True` for MAML, without it when
#    `first_order=True` — and the SGD update `adapted = [p - inner_lr * g ...]`;
# 3. the query loss `mse_loss(forward(adapted, x_query), y_query)`.
#
# The meta-loss is the **mean** of the query losses over the tasks. Then the usual update: `optimizer.zero_grad()`,
# `meta_loss.backward()`, `optimizer.step()`. Only the meta-gradient may end up in the parameters' `.grad` — so the
# inner gradients must come from `mg.gradients` (which returns them) rather than from `backward()` (which would
# deposit them in `.grad`). Two hints: a task is a `Task(x_support, y_support, x_query, y_query)` named tuple; and
# pass `retain_graph=True` to the inner `mg.gradients`, because a later inner step and the outer backward both go
# back through the graph of the earlier steps (by default a graph is freed after one backward pass).

# %% nbgrader={"grade": false, "grade_id": "maml_step", "locked": false, "schema_version": 3, "solution": true}
def maml_step(params, forward, tasks, optimizer, inner_lr, inner_steps=1, first_order=False):
    """One meta-update of the meta-parameters `params` (MAML); returns the meta-loss as a float.

    params: list of Tensors that require grad (θ); the optimizer updates them.
    forward: forward(params, x) -> predictions, for any list of tensors shaped like params.
    tasks: a list of Task(x_support, y_support, x_query, y_query).
    For every task: `inner_steps` steps of SGD with learning rate `inner_lr` on the support MSE, kept
    in the graph (create_graph=True) unless `first_order`, then the MSE of the adapted model on the
    query set. The meta-loss is the mean over tasks; its gradient, and nothing else, lands in the
    params' .grad before optimizer.step().
    """
    ### BEGIN SOLUTION
    optimizer.zero_grad()
    meta_loss = 0.0
    for x_support, y_support, x_query, y_query in tasks:
        adapted = list(params)
        for _ in range(inner_steps):
            inner_loss = mse_loss(forward(adapted, x_support), y_support)
            grads = mg.gradients(inner_loss, adapted, retain_graph=True, create_graph=not first_order)
            adapted = [p - inner_lr * g for p, g in zip(adapted, grads)]
        meta_loss = meta_loss + mse_loss(forward(adapted, x_query), y_query) / len(tasks)
    meta_loss.backward()
    optimizer.step()
    return meta_loss.item()
    ### END SOLUTION


# %% [markdown]
# The tests use linear regression, where MAML has a closed form. With the design matrix extended by a column of
# ones, $\tilde X = [X\ \mathbf 1]$, and $\theta = (w, b)$, the support loss $L_S(\theta) = \frac1m\lVert \tilde X
# \theta - y\rVert^2$ has gradient $\frac2m \tilde X^\top(\tilde X\theta - y)$ and constant Hessian
# $H_S = \frac2m \tilde X^\top \tilde X$; after $k$ inner steps $\partial\theta'/\partial\theta = (I - \alpha H_S)^k$,
# so the meta-gradient is $(I - \alpha H_S)^k \nabla L_Q(\theta')$ — or just $\nabla L_Q(\theta')$ for first-order
# MAML.

# %% nbgrader={"grade": false, "grade_id": "helpers_maml", "locked": true, "schema_version": 3, "solution": false}
def linear_model(params, x):
    """ŷ = x w + b, with params = [w of shape (d, 1), b of shape (1,)]."""
    return x @ params[0] + params[1]


def linear_tasks(seed, n_tasks, dim=3, n_support=6, n_query=5):
    """Random linear-regression tasks (noisy support labels, clean query labels)."""
    rng = np.random.default_rng(seed)
    tasks = []
    for _ in range(n_tasks):
        w_task, b_task = rng.standard_normal((dim, 1)), rng.standard_normal()
        xs, xq = rng.standard_normal((n_support, dim)), rng.standard_normal((n_query, dim))
        ys = xs @ w_task + b_task + 0.1 * rng.standard_normal((n_support, 1))
        tasks.append(Task(Tensor(xs), Tensor(ys), Tensor(xq), Tensor(xq @ w_task + b_task)))
    return tasks


def linear_start(seed):
    """The meta-parameters [w, b] a test starts from, as numpy arrays."""
    rng = np.random.default_rng(seed + 100)
    return [rng.standard_normal((3, 1)), rng.standard_normal(1)]


def linear_maml_reference(w, b, tasks, inner_lr, inner_steps=1, first_order=False):
    """(meta-loss, dL/dw, dL/db) of MAML on `linear_model`, in closed form (numpy)."""
    theta = np.vstack([w, b.reshape(1, 1)])
    meta_loss, meta_grad = 0.0, np.zeros_like(theta)
    for xs, ys, xq, yq in ((t.data for t in task) for task in tasks):
        xs, xq = np.hstack([xs, np.ones((len(xs), 1))]), np.hstack([xq, np.ones((len(xq), 1))])
        hessian = 2 * xs.T @ xs / len(xs)
        adapted, jacobian = theta, np.eye(len(theta))
        for _ in range(inner_steps):
            adapted = adapted - inner_lr * 2 * xs.T @ (xs @ adapted - ys) / len(xs)
            if not first_order:
                jacobian = (np.eye(len(theta)) - inner_lr * hessian) @ jacobian
        query_grad = 2 * xq.T @ (xq @ adapted - yq) / len(xq)
        meta_loss += np.mean((xq @ adapted - yq) ** 2) / len(tasks)
        meta_grad += jacobian.T @ query_grad / len(tasks)
    return meta_loss, meta_grad[:-1], meta_grad[-1]


def linear_maml(seed, n_tasks, inner_lr, inner_steps=1, first_order=False, meta_lr=1.0, stale_grad=None):
    """Driver: your maml_step once with plain SGD on linear-regression tasks (after filling the params' .grad with
    `stale_grad`, if given); returns the meta-loss it returned (or its type) and w, b and their .grad after it."""
    params = [Tensor(a, requires_grad=True) for a in linear_start(seed)]
    if stale_grad is not None:
        for p in params:
            p.grad = Tensor(np.full(p.shape, stale_grad))
    tasks = linear_tasks(seed, n_tasks)
    loss = maml_step(params, linear_model, tasks, mg.optim.SGD(params, lr=meta_lr), inner_lr, inner_steps, first_order)
    return {"loss": loss if type(loss) in (float, np.float64) else f"a {type(loss).__name__}",
            "params": [tensor_facts(p) for p in params],
            "grads": [None if p.grad is None else tensor_facts(p.grad) for p in params]}


def maml_facts(got, what):
    """The driver's facts, checked: a dict with two params and two grads."""
    if type(got) is not dict or any(type(got.get(k)) is not list or len(got[k]) != 2 for k in ("params", "grads")):
        raise AssertionError(f"{what}: the driver returned malformed facts: {got!r:.200}")
    return got


def check_array(got, expected, what):
    """`got` from a driver is an array (not None or a type name) close to `expected`."""
    if type(got) is not np.ndarray:
        raise AssertionError(f"{what}: expected a Tensor of shape {np.shape(expected)}, got {got}")
    assert_close(got, expected, what)


def check_linear_maml(seed, n_tasks, inner_lr, inner_steps=1, first_order=False):
    start = linear_start(seed)
    want_loss, want_dw, want_db = linear_maml_reference(*start, linear_tasks(seed, n_tasks), inner_lr, inner_steps, first_order)
    what = f"maml_step with {n_tasks} task(s), {inner_steps} inner step(s), first_order={first_order}"
    got = maml_facts(drive(linear_maml, seed, n_tasks, inner_lr, inner_steps, first_order), what)
    loss = got.get("loss")
    assert isinstance(loss, float), f"{what}: expected the meta-loss as a float, got {loss if type(loss) is str else type(loss).__name__}"
    assert_close(loss, want_loss, f"{what}: returned meta-loss")
    check_array(got["params"][0], start[0] - want_dw, f"{what}: w after one SGD step of learning rate 1 (w - dL/dw)")
    check_array(got["params"][1], start[1] - want_db, f"{what}: b after one SGD step of learning rate 1 (b - dL/db)")


# %% nbgrader={"grade": true, "grade_id": "test_maml_step_meta_gradient", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# One task, one inner step, second order: the update must include the Hessian term (I - α H_S).
check_linear_maml(seed=0, n_tasks=1, inner_lr=0.1)
print("maml_step: the meta-gradient of one task matches the closed form")
### BEGIN HIDDEN TESTS
check_linear_maml(seed=1, n_tasks=3, inner_lr=0.05)     # the meta-loss is the mean over tasks
check_linear_maml(seed=2, n_tasks=2, inner_lr=0.2)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_maml_step_first_order", "locked": true, "points": 1, "schema_version": 3, "solution": false}
check_linear_maml(seed=3, n_tasks=1, inner_lr=0.1, first_order=True)
print("maml_step: first-order MAML matches the closed form")
### BEGIN HIDDEN TESTS
check_linear_maml(seed=4, n_tasks=2, inner_lr=0.1, inner_steps=2, first_order=True)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_maml_step_inner_steps", "locked": true, "points": 2, "schema_version": 3, "solution": false}
check_linear_maml(seed=5, n_tasks=1, inner_lr=0.1, inner_steps=3)
print("maml_step: three inner steps match the closed form")
### BEGIN HIDDEN TESTS
check_linear_maml(seed=6, n_tasks=2, inner_lr=0.05, inner_steps=2)
# no inner step at all: the meta-loss is the query loss of θ itself (the notebook's "ordinary training")
check_linear_maml(seed=8, n_tasks=2, inner_lr=0.1, inner_steps=0)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_maml_step_grad", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# After the step, .grad holds the meta-gradient and nothing else (no inner gradients mixed in).
_, want_dw, want_db = linear_maml_reference(*linear_start(7), linear_tasks(7, 2), 0.1)
got = maml_facts(drive(linear_maml, 7, 2, 0.1, 1, False, 1e-3), "maml_step")
assert got["grads"][0] is not None, "maml_step left no .grad on the parameters"
check_array(got["grads"][0], want_dw, "w.grad after maml_step (the meta-gradient)")
check_array(got["grads"][1], want_db, "b.grad after maml_step (the meta-gradient)")
print("maml_step: .grad holds the meta-gradient")
### BEGIN HIDDEN TESTS
# a stale gradient from before the step must not leak into the update
got = maml_facts(drive(linear_maml, 7, 2, 0.1, 1, False, 1e-3, 1e3), "maml_step")
check_array(got["grads"][0], want_dw, "w.grad after maml_step when .grad held an old gradient before the step")
### END HIDDEN TESTS

# %% [markdown]
# ### Meta-learning sinusoids
#
# Finn et al.'s few-shot regression benchmark: every task is a sinusoid $y = A \sin(x - \varphi)$ with amplitude
# $A \in [0.1, 5]$ and phase $\varphi \in [0, \pi]$ drawn at random, observed at $K = 10$ points $x \in [-5, 5]$.
# A network that has never seen a particular sinusoid must fit it from those ten points with one or a few gradient
# steps. Averaged over tasks, the target at $x$ is $\mathbb E[A]\, \mathbb E_\varphi[\sin(x - \varphi)] =
# -\tfrac{2\,\mathbb E[A]}{\pi} \cos x \approx -1.62 \cos x$ (the mean amplitude is 2.55, and the phase is uniform on
# $[0, \pi]$, not on a whole period): that is the best *single* function for all tasks at once. On a new task its mean
# squared error is about 3.0, against 4.25 for $y = 0$ — a modest gain, and the most that ordinary training on all
# tasks at once can aim for, since no one function fits sinusoids of every amplitude and phase. MAML instead learns an
# initialisation poised to move quickly towards any member of the family.
#
# We meta-train a network with two hidden layers of 40 tanh units (`init_mlp` and `mlp` from
# `minigrad.examples.maml`) three ways, with the same budget of 500 meta-steps of 4 tasks and Adam:
#
# * **MAML** — your `maml_step`, second order;
# * **first-order MAML** — `first_order=True`;
# * **ordinary training** — `inner_steps=0`, which makes the meta-loss the plain loss of $\theta$ itself on each task:
#   joint training, the usual "pretrain, then fine-tune" baseline.

# %%
with runs_your('maml_step'):
    META_STEPS, TASKS_PER_STEP, INNER_LR = 500, 4, 0.03


    def meta_train(label, seed=0, **options):
        rng = np.random.default_rng(seed)
        params = init_mlp([1, 40, 40, 1], rng)
        optimizer = mg.optim.Adam(params, lr=1e-2)
        losses = []
        for _ in tqdm(range(META_STEPS), desc=label, leave=False):
            tasks = [sample_sinusoid_task(rng)[0] for _ in range(TASKS_PER_STEP)]
            losses.append(maml_step(params, mlp, tasks, optimizer, INNER_LR, **options))
        return params, losses


    runs = {}
    for label, options in [("MAML", {}), ("first-order MAML", {"first_order": True}), ("ordinary training", {"inner_steps": 0})]:
        start = time.perf_counter()
        runs[label] = meta_train(label, **options)
        print(f"{label:18s} {time.perf_counter() - start:5.1f} s, meta-loss over the last 50 steps {np.mean(runs[label][1][-50:]):.2f}")


# %% [markdown]
# The honest comparison is on **new** tasks: for 100 sinusoids none of the models has seen, adapt on ten support
# points with $k = 0, 1, \ldots, 10$ plain SGD steps (the library's `adapt`, the same inner loop you wrote) and
# measure the error on 100 query points across the whole interval.

# %%
with runs_your('maml_step'):
    ADAPT_STEPS = range(11)
    eval_rng = np.random.default_rng(1234)
    eval_tasks = [sample_sinusoid_task(eval_rng, n_support=10, n_query=100)[0] for _ in range(100)]


    def adaptation_curve(params, task, steps):
        # query MSE after 0, 1, ..., steps SGD steps on the support set (each step from fresh leaves: no graph kept)
        curve = []
        for k in range(steps + 1):
            with mg.no_grad():
                curve.append(mse_loss(mlp(params, task.x_query), task.y_query).item())
            if k < steps:
                params = [Tensor(p.data, requires_grad=True) for p in adapt(params, mlp, task.x_support, task.y_support, INNER_LR)]
        return curve


    curves = {label: np.mean([adaptation_curve(params, task, ADAPT_STEPS[-1]) for task in eval_tasks], axis=0)
              for label, (params, _) in tqdm(runs.items(), desc="evaluating")}

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.2))
    for label, (_, losses) in runs.items():
        smooth = np.convolve(losses, np.ones(25) / 25, mode="valid")
        axes[0].semilogy(smooth, label=label)
        axes[1].semilogy(list(ADAPT_STEPS), curves[label], "o-", label=label)
    axes[0].set(xlabel="meta-step", ylabel="meta-loss (running mean of 25)", title="Meta-training")
    axes[1].set(xlabel="SGD steps on the 10 support points of a new task", ylabel="query MSE (100 new tasks)",
                title="Adapting to unseen sinusoids")
    for ax in axes:
        ax.legend()
    plt.show()
    best_single = lambda x: -2 * 2.55 / np.pi * np.cos(x)  # the mean target over tasks
    for label, predict in [("y = 0", np.zeros_like), ("-1.62 cos x", best_single)]:
        mse = np.mean([np.mean((predict(task.x_query.data) - task.y_query.data) ** 2) for task in eval_tasks])
        print(f"{label:18s} query MSE {mse:.2f} (the same function for every task, no adaptation)")
    for label, curve in curves.items():
        print(f"{label:18s} query MSE before adapting {curve[0]:.2f}, after 1 step {curve[1]:.2f}, after 10 steps {curve[10]:.2f}")


# %% [markdown]
# And what the adapted networks look like: three unseen sinusoids, the ten support points each model adapts on,
# and the MAML network before adaptation, after one step and after ten, next to the ordinarily trained network
# after ten steps.

# %%
with runs_your('maml_step'):
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4), sharey=True)
    curve_x = mg.tensor(np.linspace(-5, 5, 200).reshape(-1, 1))
    plot_rng = np.random.default_rng(7)
    maml_params, baseline_params = runs["MAML"][0], runs["ordinary training"][0]
    for ax in axes:
        task, (amplitude, phase) = sample_sinusoid_task(plot_rng, n_support=10, n_query=0)
        ax.plot(curve_x.data, sinusoid(amplitude, phase, curve_x.data), "k", linewidth=2, label="true function")
        ax.plot(task.x_support.data, task.y_support.data, "k^", markersize=8, label="10 support points")
        for steps, style in [(0, ":"), (1, "--"), (10, "-")]:
            adapted = adapt(maml_params, mlp, task.x_support, task.y_support, INNER_LR, steps, first_order=True) if steps else maml_params
            ax.plot(curve_x.data, mlp(adapted, curve_x).data, "tab:red", linestyle=style, label=f"MAML, {steps} step{'s' * (steps != 1)}")
        ax.plot(curve_x.data, best_single(curve_x.data), color="gray", linestyle="-.", label="-1.62 cos x (mean target)")
        adapted = adapt(baseline_params, mlp, task.x_support, task.y_support, INNER_LR, 10, first_order=True)
        ax.plot(curve_x.data, mlp(adapted, curve_x).data, "tab:green", label="ordinary training, 10 steps")
        ax.set(title=f"unseen task: A = {amplitude:.2f}, φ = {phase:.2f}", xlabel="x")
    axes[0].set_ylabel("y")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=7, fontsize=9, frameon=False)
    fig.subplots_adjust(bottom=0.22)
    plt.show()


# %% [markdown]
# Three observations, which match Finn et al.'s (much longer) experiments qualitatively:
#
# * **Ordinary training does not learn to adapt.** Its network is a compromise between all sinusoids — a smooth
#   curve that fits none of them. It has not even reached the best compromise: before adapting, its error on the new
#   tasks is higher than that of the mean target $-1.62 \cos x$ (both printed above; over these 100 tasks the mean
#   target scores 3.3 and $y = 0$ 4.6, near their expected 3.0 and 4.25), and ten SGD steps on ten points improve it
#   far less than one step improves MAML's. Good performance *after*
#   fine-tuning was never part of its objective.
# * **MAML's initialisation is not a good model of any one task** (the dotted line), but a single gradient step
#   moves it most of the way to the task at hand (query MSE 3.5 → 0.9), and more steps improve it a little further
#   (about 0.6 after ten) even though it was meta-trained with one step.
# * **The second-order term matters here.** With the same small budget, first-order MAML learned little: its
#   meta-gradient $\nabla_{\theta'} L_Q(\theta')$ ignores how $\theta'$ moves when $\theta$ moves, so nothing
#   in it says which initialisations *respond well* to the inner step — and nothing keeps $\theta$ itself a
#   sensible function either (look at its error before adaptation). The Hessian-vector product in the full
#   meta-gradient carries exactly that information. (With 70,000 meta-steps, Finn et al. found first-order MAML
#   nearly as good on image benchmarks, and Nichol et al. explain why it still makes progress in the long run;
#   which regime you are in is worth measuring.) The price of full MAML shows in the timings: it records and
#   differentiates the inner backward pass, so each meta-step costs more time and memory than a first-order one.
#
# ## Summary
#
# * With `create_graph=True` the backward pass is recorded as a graph of minigrad operations — the VJP rules are
#   written in them — and can be differentiated again. The first graph must then be retained, so `retain_graph`
#   defaults to `create_graph`.
# * `grad` composes: `grad(grad(f))` gives second derivatives, each nesting level multiplying the cost by a constant.
# * **Pearlmutter's trick**: $H v = \nabla_x\big(\nabla f(x)^\top v\big)$, two reverse passes whatever the dimension,
#   no $n \times n$ matrix. We checked it against an explicit Hessian and measured the Hessian's $O(n)$ passes
#   against the HVP's constant count; HVPs power Newton–CG, Lanczos and power iteration (sharpness).
# * **MAML** puts an SGD step into the graph: the meta-gradient $(I - \alpha \nabla^2 L_S)\nabla L_Q(\theta')$ contains
#   an HVP that reverse mode computes on its own once the inner gradient keeps its graph. First-order MAML drops it
#   for speed and memory; on our small budget that cost accuracy.
#
# The next chapter keeps several graphs in play at once: generator and discriminator, speaker and listener, and a
# solver unrolled over hundreds of steps.
#
# ## References
#
# * «Граф вычислений» (*Computational graph*), MachineLearning wiki, July 2026 — the article this course follows:
#   <http://machinelearning.ru/wiki/index.php?title=%D0%93%D1%80%D0%B0%D1%84_%D0%B2%D1%8B%D1%87%D0%B8%D1%81%D0%BB%D0%B5%D0%BD%D0%B8%D0%B9>.
# * B. A. Pearlmutter. *Fast exact multiplication by the Hessian.* Neural Computation 6(1):147–160, 1994.
# * B. Christianson. *Automatic Hessians by reverse accumulation.* IMA Journal of Numerical Analysis 12(2), 1992.
# * C. Finn, P. Abbeel, S. Levine. *Model-agnostic meta-learning for fast adaptation of deep networks.* ICML 2017.
# * A. Nichol, J. Achiam, J. Schulman. *On first-order meta-learning algorithms.* arXiv:1803.02999, 2018.
# * J. Martens. *Deep learning via Hessian-free optimization.* ICML 2010.
# * A. Griewank, A. Walther. *Evaluating Derivatives: Principles and Techniques of Algorithmic Differentiation*, 2nd
#   ed., SIAM 2008 — chapter 10 on second-order adjoints.
# * A. G. Baydin, B. A. Pearlmutter, A. A. Radul, J. M. Siskind. *Automatic differentiation in machine learning: a
#   survey.* JMLR 18(153), 2018 — section 3.3 on higher-order derivatives and nesting.
# * The JAX authors. *The autodiff cookbook* (Hessian-vector products, forward-over-reverse).
