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
# # Chapter 2 — Backpropagation: the forward and the backward pass
#
# Chapter 1 recorded computations as graphs and walked them forward. This chapter walks them **backwards** to
# obtain the derivative of the output with respect to *every* vertex in one pass — reverse-mode automatic
# differentiation, known in neural networks as backpropagation (Linnainmaa 1976; Rumelhart, Hinton & Williams 1986).
#
# You will write the parts of a reverse-mode engine:
#
# * **VJP rules** — for each primitive operation, how an adjoint flowing into its output becomes adjoints of its
#   inputs: `mul_vjp`, `tanh_vjp`, `sum_vjp`, `matmul_vjp`;
# * **`unbroadcast`** — the rule for numpy's implicit copying of arrays (broadcasting);
# * **`backward(output)`** — the engine that runs the rules over the whole graph in reverse topological order and
#   adds up contributions where a value fans out.
#
# At the end your engine and your rules replace the library's and train a neural network to separate two
# interleaved half-moons.
#
# The graph walk (`topological_sort`) comes from [the reference `minigrad`](../ch01_graph/ch01_graph.ipynb#reference-library),
# not from your chapter 1 notebook, so this chapter is graded on its own. Demonstrations that run your functions
# say so, instead of stopping, while those functions are not written yet.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib
import sys

import numpy as np
import matplotlib.pyplot as plt
from tqdm.auto import tqdm

import minigrad as mg
from minigrad import Tensor, topological_sort
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
# ## 1. Adjoints
#
# Recall the computational graph of $y = f(x_1, \dots, x_d)$: variables $v_1, \dots, v_N$, inputs
# $v_i = x_i$, operations $v_i = \varphi_i(v_{\mathrm{Pa}(i)})$, output $y = v_N$. The **forward pass** evaluates
# the $v_i$ in topological order. The **backward pass** computes, for every vertex, its **adjoint**
#
# $$ \bar v_i = \frac{\partial y}{\partial v_i}, $$
#
# the sensitivity of the output to that intermediate value. For the output itself $\bar v_N = 1$. A vertex
# $v_i$ influences $y$ only through its children $\mathrm{Ch}(i)$, the operations that read it, so the
# multivariate chain rule gives
#
# $$ \bar v_i \;=\; \sum_{j \in \mathrm{Ch}(i)} \bar v_j \, \frac{\partial v_j}{\partial v_i}. $$
#
# Every child of $v_i$ comes *after* $v_i$ in topological order. Visiting the vertices in **reverse** topological
# order therefore guarantees that when we reach $v_i$, every $\bar v_j$ it needs is complete. In practice the
# sum is accumulated by *pushing*: when vertex $j$ is processed, it adds $\bar v_j\,\partial v_j/\partial v_i$
# to the running adjoint of each parent $i$.
#
# Each edge is used once, so the backward pass costs a small constant times the forward pass — $O(|V| + |E|)$ —
# and delivers the derivative with respect to **all** inputs at once. That is why training a model with
# millions of parameters needs one backward pass per step, not millions (Griewank & Walther 2008 call it the
# *cheap gradient principle*).
#
# ### Worked example
#
# For $y = \ln x_1 + x_1 x_2 - \sin x_2$ at $(x_1, x_2) = (2, 5)$, with $v_3 = \ln v_1$, $v_4 = v_1 v_2$,
# $v_5 = \sin v_2$, $v_6 = v_3 + v_4$, $v_7 = v_6 - v_5$:
#
# | adjoint | from its children | value |
# | --- | --- | --- |
# | $\bar v_7$ | (the output) | $1$ |
# | $\bar v_6$ | $\bar v_7 \cdot 1$ | $1$ |
# | $\bar v_5$ | $\bar v_7 \cdot (-1)$ | $-1$ |
# | $\bar v_4$ | $\bar v_6 \cdot 1$ | $1$ |
# | $\bar v_3$ | $\bar v_6 \cdot 1$ | $1$ |
# | $\bar v_2$ | $\bar v_4 \cdot v_1 + \bar v_5 \cos v_2$ | $x_1 - \cos x_2 \approx 1.716$ |
# | $\bar v_1$ | $\bar v_3 / v_1 + \bar v_4 \cdot v_2$ | $1/x_1 + x_2 = 5.5$ |
#
# $x_1$ and $x_2$ each have two children, so their adjoints are sums of two terms: **fan-out accumulates**.
# Nudging one input and watching $y$ (a central difference, the subject of chapter 3) agrees; the engine you write
# in section 4 reproduces the whole table in one pass.

# %%
def f(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)


h = 1e-6
print(f"x1: adjoint by the table {1 / 2 + 5:.6f}   central difference {(f(2 + h, 5) - f(2 - h, 5)) / (2 * h):.6f}")
print(f"x2: adjoint by the table {2 - np.cos(5.0):.6f}   central difference {(f(2, 5 + h) - f(2, 5 - h)) / (2 * h):.6f}")

# %% [markdown]
# ## 2. Vector–Jacobian products instead of Jacobians
#
# For tensors the vertices are arrays and $\partial v_j / \partial v_i$ is a **Jacobian** matrix with one row
# per element of $v_j$ and one column per element of $v_i$. For `tanh` of a $1000 \times 1000$ array that is a
# $10^6 \times 10^6$ matrix — 8 terabytes of float64, all zero except the diagonal. Yet the backward pass
# never needs the matrix itself, only its product with an adjoint: the **vector–Jacobian product (VJP)**
#
# $$ \bar v_i \mathrel{+}= \bar v_j \, \frac{\partial v_j}{\partial v_i}, $$
#
# which for an elementwise operation is just an elementwise product, for a matrix product another matrix
# product, and so on — as cheap as the operation itself. So each primitive comes with a **VJP rule**, a
# function from the output's adjoint to the inputs' adjoints. In `minigrad` a primitive's rule is called as
#
# ```python
# node.op.vjp(g, out, *inputs, **params)  ->  one adjoint per input (a tuple)
# ```
#
# where `g` is the adjoint $\bar v_j$ of the output (same shape as the output), `out` the output's value (some rules
# reuse it), `inputs` the input tensors and `params` the operation's parameters. Rules take and return
# `Tensor`s and are written with minigrad operations — not numpy on `.data` — so that in chapter 4 a backward pass
# can itself be recorded and differentiated again.
#
# Below you write four of the library's rules. The tests compare them with **central differences**: for a random
# $g$, the VJP is the gradient of the scalar $\langle g, f(x) \rangle$, which
# `numerical_vjp` estimates one input element at a time.

# %% nbgrader={"grade": false, "grade_id": "helpers_checks", "locked": true, "schema_version": 3, "solution": false}
# How the tests work: a *driver* (the functions marked "Driver") builds the inputs, calls your function on
# them and returns what came back as plain data: numbers, strings, lists, arrays, never tensors.
# `drive(driver, ...)` runs it; a *checker* then builds the same inputs itself, computes what the answer
# should be (central differences, numpy, the library) and compares. When your notebook is graded, drivers run
# beside your code and checkers in a separate process, so a test never trusts anything but those facts.

FORWARD = {"mul_vjp": np.multiply, "tanh_vjp": np.tanh, "sum_vjp": np.sum, "matmul_vjp": np.matmul}


def your_rule(name):
    """Your VJP rule called `name`, looked up when a driver runs (not when this cell runs)."""
    if name == "mul_vjp":
        return mul_vjp
    if name == "tanh_vjp":
        return tanh_vjp
    if name == "sum_vjp":
        return sum_vjp
    if name == "matmul_vjp":
        return matmul_vjp
    raise ValueError(f"no VJP rule called {name!r}")


def numerical_vjp(f, arrays, g, h=1e-6):
    """Central-difference VJPs of the numpy function f at `arrays`: d<g, f(...)>/d(each input)."""
    adjoints = []
    for i, array in enumerate(arrays):
        adjoint = np.zeros_like(array)
        for index in np.ndindex(array.shape):
            shifted = [a.copy() for a in arrays]
            shifted[i][index] = array[index] + h
            up = np.sum(g * f(*shifted))
            shifted[i][index] = array[index] - h
            down = np.sum(g * f(*shifted))
            adjoint[index] = (up - down) / (2 * h)
        adjoints.append(adjoint)
    return adjoints


def rule_case(name, arrays, seed, params):
    """(g, out, inputs) as numpy arrays for a rule's test: out = f(*inputs), g random of out's shape."""
    inputs = [np.array(a, dtype=float) for a in arrays]
    out = np.asarray(FORWARD[name](*inputs, **params), dtype=float)
    g = np.random.default_rng(seed).normal(size=out.shape)
    return g, out, inputs


def tensor_facts(value):
    """What a driver reports about a value your code returned: a Tensor's data (a copy), else its type."""
    if isinstance(value, Tensor):
        return np.array(value.data, copy=True)
    return f"a {type(value).__name__}"


def rule_adjoints(name, arrays, seed, params):
    """Driver: your rule `name`(g, out, *inputs, **params) on the case; returns what it returned (each adjoint's
    data, or a type name) and the data of g, out and the inputs after the call."""
    g, out, inputs = rule_case(name, arrays, seed, params)
    g, out, inputs = mg.tensor(g), mg.tensor(out), [mg.tensor(a, requires_grad=True) for a in inputs]
    result = your_rule(name)(g, out, *inputs, **params)
    if isinstance(result, (tuple, list)):
        adjoints = [tensor_facts(a) for a in result]
    else:
        adjoints = f"a {type(result).__name__}: {repr(result)[:200]}"
    return {"adjoints": adjoints, "g": g.data.copy(), "out": out.data.copy(), "inputs": [t.data.copy() for t in inputs]}


def rule_connected(name, arrays, seed, params):
    """Driver: your rule `name` differentiated by forward mode (`minigrad.jvp`) along a random change t of g
    (from `seed`): for each adjoint, its derivative along t, or a type name if it is no Tensor. A rule that builds
    the adjoint from g with minigrad operations gives J_i^T t; one computed with numpy and wrapped in a new Tensor
    gives zeros."""
    g, out, inputs = rule_case(name, arrays, seed, params)
    t = np.random.default_rng(seed + 1).normal(size=g.shape)
    out, inputs = mg.tensor(out), [mg.tensor(a, requires_grad=True) for a in inputs]
    result = your_rule(name)(mg.tensor(g), out, *inputs, **params)
    if not isinstance(result, (tuple, list)):
        return f"a {type(result).__name__}"
    facts = []
    for i, adjoint in enumerate(result):
        if not isinstance(adjoint, Tensor):
            facts.append(f"a {type(adjoint).__name__}")
            continue
        _, tangent = mg.jvp(lambda g: your_rule(name)(g, out, *inputs, **params)[i], (mg.tensor(g),), (mg.tensor(t),))
        facts.append(np.array(tangent.data, copy=True) if isinstance(tangent, Tensor) else f"a {type(tangent).__name__}")
    return facts


def adjoint_list(got, count, what):
    """The driver's list of adjoints, checked to be `count` arrays (one per input)."""
    if type(got) is str:
        raise AssertionError(f"{what}: expected a tuple of {count} adjoint(s), one per input, got {got}")
    if type(got) is not list or len(got) != count:
        raise AssertionError(f"{what}: expected a tuple of {count} adjoint(s), one per input, got {len(got) if type(got) is list else got!r:.200} adjoint(s)")
    for i, adjoint in enumerate(got):
        if type(adjoint) is not np.ndarray:
            raise AssertionError(f"{what}: adjoint {i} should be a Tensor, got {adjoint if type(adjoint) is str else type(adjoint).__name__}")
    return got


def check_unchanged(got, expected, what, names):
    """Arrays the driver reported after the call equal the checker's own copies of them."""
    for name, want in zip(names, expected):
        value = got[name] if type(got) is dict and name in got else None
        if type(value) is not np.ndarray or value.shape != want.shape or not np.array_equal(value, want):
            raise AssertionError(f"{what} changed its argument {name} in place; a rule must leave g, out and the inputs "
                                 f"as they were (the engine may hand the same adjoint to several rules)")


def check_rule(name, arrays, what, engine_unbroadcasts=False, seed=0, **params):
    """Compare your rule `name`(g, out, *inputs, **params) with central differences of its numpy function at a
    random g. With engine_unbroadcasts, an adjoint may come back in the output's (broadcast) shape: the engine
    sums it down to the input's shape, so the check does too."""
    g, out, inputs = rule_case(name, arrays, seed, params)
    expected = numerical_vjp(lambda *a: FORWARD[name](*a, **params), inputs, g)  # before your code runs
    got = drive(rule_adjoints, name, inputs, seed, params)
    if type(got) is not dict:
        raise AssertionError(f"{what}: the driver returned {type(got).__name__}, not its facts")
    adjoints = adjoint_list(got.get("adjoints"), len(inputs), what)
    for i, (adjoint, want) in enumerate(zip(adjoints, expected)):
        if engine_unbroadcasts and adjoint.shape == out.shape != want.shape:
            adjoint = mg.unbroadcast(adjoint, want.shape)
        if adjoint.shape != want.shape:
            raise AssertionError(f"{what}: the adjoint of input {i} (shape {want.shape}) came back with shape {adjoint.shape}")
        assert_close(adjoint, want, f"{what}: adjoint of input {i}", rtol=1e-5, atol=1e-7)
    inputs_after = got.get("inputs")
    if type(inputs_after) is not list or len(inputs_after) != len(inputs):
        raise AssertionError(f"{what}: the driver did not report the inputs after the call")
    names = ["x", "y"][:len(inputs)]
    check_unchanged({"g": got.get("g"), "out": got.get("out"), **dict(zip(names, inputs_after))},
                    [g, out, *inputs], what, ["g", "out", *names])


def check_differentiable(name, arrays, what, seed=0, **params):
    """Your rule must build its adjoints from g with minigrad operations, so that they depend on g in a graph
    (chapter 4 differentiates rules again): the adjoint of input i is J_i^T g, so its derivative along a change t
    of g must be J_i^T t, the VJP of the numpy function at t (central differences)."""
    g, out, inputs = rule_case(name, arrays, seed, params)
    t = np.random.default_rng(seed + 1).normal(size=g.shape)
    expected = numerical_vjp(lambda *a: FORWARD[name](*a, **params), inputs, t)
    got = drive(rule_connected, name, inputs, seed, params)
    if type(got) is not list or len(got) != len(inputs):
        raise AssertionError(f"{what}: expected a tuple of {len(inputs)} adjoint(s), one per input, got {got!r:.200}")
    for i, (tangent, want) in enumerate(zip(got, expected)):
        if type(tangent) is str:
            raise AssertionError(f"{what}: adjoint {i} should be a Tensor, got {tangent}")
        if tangent.shape != want.shape or not np.allclose(tangent, want, rtol=1e-5, atol=1e-7):
            raise AssertionError(
                f"{what}: adjoint {i} does not depend on g as J^T g does (along a change t of g it should change by "
                f"J^T t, shape {want.shape}; it changes by {'zero' if not np.any(tangent) else 'other values'}): build "
                f"it from g with Tensor operations, not from numpy results (.data) wrapped in a new Tensor, so that "
                f"chapter 4 can differentiate it"
            )


def chain(n, start=0.5):
    """x, then n tanh operations one after another: a graph as deep as it is long."""
    x = mg.tensor(start, requires_grad=True)
    y = x
    for _ in range(n):
        y = y.tanh()
    return x, y


# %% [markdown]
# ### Multiplication
#
# For $z = x \odot y$ (elementwise), $\partial z_k / \partial x_k = y_k$ and all other entries of the Jacobian
# vanish, so
#
# $$ \bar x = \bar z \odot y, \qquad \bar y = \bar z \odot x. $$
#
# If $x$ and $y$ have different shapes, numpy broadcasts them; return the adjoints in the **output's** shape and
# let the engine sum them down (section 3).

# %% nbgrader={"grade": false, "grade_id": "mul_vjp", "locked": false, "schema_version": 3, "solution": true}
def mul_vjp(g, out, x, y):
    """Adjoints (of x, of y) of out = x * y, given g, the adjoint of out. Tensors in, Tensors out."""
    ### BEGIN SOLUTION
    return (g * y, g * x)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_mul_vjp_values", "locked": true, "points": 2, "schema_version": 3, "solution": false}
rng = np.random.default_rng(0)
check_rule("mul_vjp", [rng.normal(size=(2, 3)), rng.normal(size=(2, 3))], "mul_vjp on two (2, 3) arrays")
check_differentiable("mul_vjp", [rng.normal(size=3), rng.normal(size=3)], "mul_vjp")
print("mul_vjp: adjoints match central differences")
### BEGIN HIDDEN TESTS
check_rule("mul_vjp", [np.array(1.5), np.array(-2.0)], "mul_vjp on scalars", seed=1)
check_rule("mul_vjp", [rng.normal(size=(3, 1)), rng.normal(size=(4,))], "mul_vjp with broadcasting",
           engine_unbroadcasts=True, seed=2)
### END HIDDEN TESTS

# %% [markdown]
# ### tanh
#
# $\frac{d}{dx}\tanh x = 1 - \tanh^2 x$. The forward pass already computed $\tanh x$ — it is `out` — so the rule
# reuses it instead of evaluating `tanh` again:
#
# $$ \bar x = \bar z \odot (1 - z \odot z), \qquad z = \tanh x . $$
#
# (This is why rules receive `out`: `exp` and `sigmoid` reuse it the same way.)

# %% nbgrader={"grade": false, "grade_id": "tanh_vjp", "locked": false, "schema_version": 3, "solution": true}
def tanh_vjp(g, out, x):
    """Adjoint (of x,) of out = tanh(x), given g; reuses out = tanh(x). Returns a 1-tuple of Tensors."""
    ### BEGIN SOLUTION
    return (g * (1.0 - out * out),)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_tanh_vjp_values", "locked": true, "points": 2, "schema_version": 3, "solution": false}
rng = np.random.default_rng(0)
check_rule("tanh_vjp", [rng.normal(size=(3, 4))], "tanh_vjp on a (3, 4) array")
check_differentiable("tanh_vjp", [rng.normal(size=3)], "tanh_vjp")
print("tanh_vjp: adjoints match central differences")
### BEGIN HIDDEN TESTS
check_rule("tanh_vjp", [np.array(0.3)], "tanh_vjp on a scalar", seed=1)
check_rule("tanh_vjp", [rng.uniform(-3, 3, size=(5,))], "tanh_vjp on large inputs", seed=2)
### END HIDDEN TESTS

# %% [markdown]
# ### Sum
#
# A sum over some axes adds elements together; each element contributes with coefficient 1 to exactly one output
# element. So the adjoint of every summed element is the adjoint of the output element it went into: **$\bar z$
# is copied back** along the summed axes,
#
# $$ z = \sum_{k} x_{\dots k \dots} \quad\Longrightarrow\quad \bar x_{\dots k \dots} = \bar z \quad \text{for every } k. $$
#
# The library passes `axis` as `None` (sum over everything) or as a sorted tuple of non-negative axes, and
# `keepdims` as given. With `keepdims=False` the summed axes have disappeared from `g`'s shape: put them back as
# axes of length 1 (`g.reshape(...)`) before broadcasting to `x.shape` (`.broadcast_to(...)`) — otherwise numpy
# would align the axes wrongly. Unlike `mul_vjp`, return the adjoint in **`x`'s shape**.

# %% nbgrader={"grade": false, "grade_id": "sum_vjp", "locked": false, "schema_version": 3, "solution": true}
def sum_vjp(g, out, x, axis, keepdims):
    """Adjoint (of x,) of out = x.sum(axis, keepdims), given g: g copied back to x's shape.

    `axis` is None or a sorted tuple of non-negative ints. Returns a 1-tuple of Tensors.
    """
    ### BEGIN SOLUTION
    kept = tuple(1 if axis is None or i in axis else n for i, n in enumerate(x.shape))
    return (g.reshape(kept).broadcast_to(x.shape),)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_sum_vjp_values", "locked": true, "points": 3, "schema_version": 3, "solution": false}
rng = np.random.default_rng(0)
x = rng.normal(size=(2, 3, 4))
for axis, keepdims in [(None, False), ((1,), False), ((0, 2), True)]:
    check_rule("sum_vjp", [x], f"sum_vjp with axis={axis}, keepdims={keepdims} on shape (2, 3, 4)",
               axis=axis, keepdims=keepdims)
check_differentiable("sum_vjp", [x], "sum_vjp", axis=(1,), keepdims=False)
print("sum_vjp: adjoints match central differences")
### BEGIN HIDDEN TESTS
square = rng.normal(size=(3, 3))
for axis, keepdims in [((1,), False), ((0,), False), ((0, 1), False), (None, True), ((1,), True)]:
    check_rule("sum_vjp", [square], f"sum_vjp with axis={axis}, keepdims={keepdims} on shape (3, 3)",
               axis=axis, keepdims=keepdims)
check_rule("sum_vjp", [np.array(2.0)], "sum_vjp of a scalar", axis=None, keepdims=False)
check_rule("sum_vjp", [rng.normal(size=(2, 1, 3))], "sum_vjp over an axis of length 1", axis=(1,), keepdims=False)
### END HIDDEN TESTS

# %% [markdown]
# ### Matrix product
#
# For $Z = XY$ with $X \in \mathbb{R}^{m \times n}$, $Y \in \mathbb{R}^{n \times p}$, write
# $Z_{ik} = \sum_j X_{ij} Y_{jk}$. Then $\partial Z_{ik} / \partial X_{ij} = Y_{jk}$, and summing over every
# output element that $X_{ij}$ touches,
#
# $$ \bar X_{ij} = \sum_k \bar Z_{ik} Y_{jk} = (\bar Z\, Y^\top)_{ij}, \qquad
#    \bar Y_{jk} = \sum_i \bar Z_{ik} X_{ij} = (X^\top \bar Z)_{jk} . $$
#
# A memory aid: $\bar X$ must have $X$'s shape $m \times n$, and $\bar Z\,Y^\top$
# ($m \times p$ times $p \times n$) is the only way to get it from $\bar Z$ and $Y$. Careful: for square
# matrices the shapes fit with *any* transposition, and only the values tell right from wrong. Two-dimensional
# `x` and `y` are enough here (the library's rule also handles batches of matrices).

# %% nbgrader={"grade": false, "grade_id": "matmul_vjp", "locked": false, "schema_version": 3, "solution": true}
def matmul_vjp(g, out, x, y):
    """Adjoints (of x, of y) of out = x @ y for 2-D x (m, n) and y (n, p), given g of shape (m, p)."""
    ### BEGIN SOLUTION
    return (g @ y.T, x.T @ g)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_matmul_vjp_values", "locked": true, "points": 3, "schema_version": 3, "solution": false}
rng = np.random.default_rng(0)
check_rule("matmul_vjp", [rng.normal(size=(2, 3)), rng.normal(size=(3, 4))], "matmul_vjp for (2, 3) @ (3, 4)")
check_differentiable("matmul_vjp", [rng.normal(size=(2, 3)), rng.normal(size=(3, 4))], "matmul_vjp")
print("matmul_vjp: adjoints match central differences")
### BEGIN HIDDEN TESTS
check_rule("matmul_vjp", [rng.normal(size=(3, 3)), rng.normal(size=(3, 3))], "matmul_vjp for square matrices", seed=1)
check_rule("matmul_vjp", [rng.normal(size=(1, 5)), rng.normal(size=(5, 1))], "matmul_vjp for (1, 5) @ (5, 1)", seed=2)
check_rule("matmul_vjp", [rng.normal(size=(4, 2)), rng.normal(size=(2, 2))], "matmul_vjp for (4, 2) @ (2, 2)", seed=3)
### END HIDDEN TESTS

# %% [markdown]
# ### How much cheaper is a VJP?
#
# For `tanh` on $n$ numbers, the explicit route builds the $n \times n$ Jacobian $\mathrm{diag}(1 - z^2)$ and
# multiplies; the VJP rule does $n$ multiplications. For small $n$ both are dominated by fixed overhead per call
# (Python, numpy, making a `Tensor`); beyond a few hundred elements the Jacobian's $n^2$ work takes over and the gap
# grows with $n$ — in time and, worse, in memory.

# %%
sizes = [10, 100, 300, 1_000, 3_000]
jacobian_seconds, vjp_seconds = [], []
rng = np.random.default_rng(0)
with runs_your("tanh_vjp"):
    for n in tqdm(sizes, desc="Jacobian vs VJP"):
        x = mg.tensor(rng.normal(size=n))
        out, g = x.tanh(), mg.tensor(rng.normal(size=n))
        assert np.allclose(g.data @ np.diag(1 - out.data ** 2), tanh_vjp(g, out, x)[0].data)
        # CPU time, numpy on one thread, the fastest of 5 rounds in which the two take turns (minigrad.testing)
        seconds = interleaved_times({"jacobian": lambda: g.data @ np.diag(1 - out.data ** 2),  # n x n, zero off the diagonal
                                     "vjp": lambda: tanh_vjp(g, out, x)})
        jacobian_seconds.append(seconds["jacobian"])
        vjp_seconds.append(seconds["vjp"])

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.loglog(sizes, jacobian_seconds, "o-", label="explicit Jacobian")
    left.loglog(sizes, vjp_seconds, "s-", label="VJP rule")
    left.set_xlabel("n (elements)")
    left.set_ylabel("seconds of CPU time (fastest of 5)")
    left.set_title("Time of one backward step through tanh")
    left.legend()
    right.loglog(sizes, [8 * n * n for n in sizes], "o-", label="Jacobian (n² floats)")
    right.loglog(sizes, [8 * n for n in sizes], "s-", label="adjoint (n floats)")
    right.set_xlabel("n (elements)")
    right.set_ylabel("bytes")
    right.set_title("Memory")
    right.legend()
    plt.tight_layout()
    plt.show()
    print(f"n = {sizes[-1]:,}: the Jacobian route takes {jacobian_seconds[-1] / vjp_seconds[-1]:.0f}x the time of the VJP rule")


# %% [markdown]
# ## 3. Broadcasting and `unbroadcast`
#
# numpy lets `x + b` add a bias `b` of shape `(3,)` to a batch `x` of shape `(4, 3)`: the bias is **broadcast**,
# as if copied into each of the 4 rows. Broadcasting aligns shapes from the right; missing leading axes and axes of
# length 1 are stretched.
#
# Copying is fan-out in disguise: the single value $b_k$ is used by four children, so — by the same sum over
# children as in section 1 — its adjoint is the **sum** of the four copies' adjoints. In general, broadcasting is
# a linear map $B$ (copy), and its VJP is its transpose $B^\top$ (sum). Rules like `mul_vjp` return adjoints in the
# output's broadcast shape; the engine then sums each one back to its input's shape with `unbroadcast`:
#
# * sum over the **leading axes** that broadcasting added (`grad.ndim - len(shape)` of them);
# * sum, keeping the axis, over every axis where `shape` has length 1 but `grad` does not;
# * reshape to `shape` (this drops the leading axes, now of length 1).
#
# | `grad.shape` | `shape` | sum over axes | result |
# | --- | --- | --- | --- |
# | (4, 3) | (3,) | 0 | (3,) |
# | (4, 3) | (4, 1) | 1 (kept) | (4, 1) |
# | (5, 4, 3) | (4, 1) | 0, then 2 (kept) | (4, 1) |
# | (2, 3) | () | 0, 1 | () |
# | (2, 3) | (2, 3) | none | (2, 3) |

# %% nbgrader={"grade": false, "grade_id": "unbroadcast", "locked": false, "schema_version": 3, "solution": true}
def unbroadcast(grad, shape):
    """Sum the Tensor `grad` down to `shape`, undoing numpy broadcasting; returns a Tensor of `shape`.

    Sums over the leading axes broadcasting added and over the axes where `shape` has length 1
    (but `grad` does not), then reshapes to `shape`. Use minigrad operations (.sum, .reshape).
    """
    ### BEGIN SOLUTION
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1
    )
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad.reshape(shape)
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "helpers_broadcast", "locked": true, "schema_version": 3, "solution": false}
def summed_copies(grad, shape):
    """What unbroadcast must return, computed another way: label each element of `shape`, broadcast the
    labels like the data, and add up the entries of `grad` that carry each label."""
    size = int(np.prod(shape, dtype=int))
    labels = np.broadcast_to(np.arange(size).reshape(shape), grad.shape)
    return np.bincount(labels.ravel(), weights=grad.ravel(), minlength=size).reshape(shape)


def unbroadcasted(grad_shape, shape, seed=0, requires_grad=False):
    """Driver: your unbroadcast(grad, shape) for a random grad of `grad_shape`; returns the result's data (or its
    type), whether it requires grad, and grad's data after the call."""
    grad = mg.tensor(np.random.default_rng(seed).normal(size=grad_shape), requires_grad=requires_grad)
    got = unbroadcast(grad, tuple(shape))
    return {"value": tensor_facts(got), "requires_grad": bool(got.requires_grad) if isinstance(got, Tensor) else None,
            "grad": grad.data.copy()}


def unbroadcast_result(grad_shape, shape, seed=0, requires_grad=False):
    """drive(unbroadcasted, ...) with its facts checked: a Tensor of `shape`, grad left as it was; returns them."""
    grad = np.random.default_rng(seed).normal(size=grad_shape)
    what = f"unbroadcast(grad of shape {tuple(grad_shape)}, {tuple(shape)})"
    got = drive(unbroadcasted, grad_shape, shape, seed, requires_grad)
    if type(got) is not dict or "value" not in got:
        raise AssertionError(f"{what}: the driver returned {type(got).__name__}, not its facts")
    if type(got["value"]) is str:
        raise AssertionError(f"{what}: expected a Tensor, got {got['value']}")
    if type(got["value"]) is not np.ndarray:
        raise AssertionError(f"{what}: expected a Tensor, got {type(got['value']).__name__}")
    if got["value"].shape != tuple(shape):
        raise AssertionError(f"{what}: expected shape {tuple(shape)}, got shape {got['value'].shape}")
    if type(got.get("grad")) is not np.ndarray or not np.array_equal(got["grad"], grad):
        raise AssertionError(f"{what} changed grad in place; it must return a new Tensor and leave grad as it was")
    return grad, what, got


def check_unbroadcast(grad_shape, shape, seed=0):
    grad, what, got = unbroadcast_result(grad_shape, shape, seed)
    assert_close(got["value"], summed_copies(grad, shape), what)


# %% nbgrader={"grade": true, "grade_id": "test_unbroadcast_values", "locked": true, "points": 3, "schema_version": 3, "solution": false}
for grad_shape, shape in [((4, 3), (3,)), ((4, 3), (4, 1)), ((5, 4, 3), (4, 1)), ((2, 3), ()), ((2, 3), (2, 3))]:
    check_unbroadcast(grad_shape, shape)
_, _, got = unbroadcast_result((4, 3), (3,), requires_grad=True)
assert got["requires_grad"] is True, (
    "unbroadcast: the result is not connected to grad by minigrad operations; use .sum and .reshape on the Tensor"
)
print("unbroadcast: sums match")
### BEGIN HIDDEN TESTS
for grad_shape, shape in [((3,), (1,)), ((1, 3), (3,)), ((2, 1, 3), (1, 1)), ((6,), ()), ((2, 3, 4), (3, 1)),
                          ((2, 3, 4), (1, 3, 1)), ((5, 1, 4), (1, 4)), ((2, 2, 2), (2, 1, 2))]:
    check_unbroadcast(grad_shape, shape, seed=len(grad_shape))
rng = np.random.default_rng(7)
for trial in range(20):
    shape = tuple(int(n) for n in rng.choice([1, 2, 3], size=rng.integers(0, 4)))
    grad_shape = tuple(int(n) for n in rng.integers(1, 4, size=rng.integers(0, 3))) + tuple(
        int(rng.integers(2, 4)) if n == 1 and rng.random() < 0.6 else n for n in shape)
    check_unbroadcast(grad_shape, shape, seed=trial)
### END HIDDEN TESTS

# %% [markdown]
# ## 4. The engine: `backward`
#
# Now put the pieces together. `backward(output)` computes $\partial\,\text{output} / \partial\,\text{leaf}$ for
# every leaf that requires a gradient:
#
# 1. **Seed**: the output's adjoint is 1 (`mg.ones_like(output)`; the output is a one-element tensor, the loss).
# 2. **Order**: walk `topological_sort(output)` (the library's) **in reverse**, so every tensor is visited after
#    all of its children have sent their contributions.
# 3. **Propagate**: for a tensor made by an operation, call its rule,
#    `node.op.vjp(adjoint, tensor, *node.inputs, **node.params)`, which returns one adjoint per input.
#    An entry may be `None`: the library's matmul rule skips the product for an input that requires no gradient
#    (the data entering a network), and some operations are not differentiable in some inputs.
# 4. **Unbroadcast**: an input adjoint whose shape differs from its input's is summed back with
#    `mg.unbroadcast(adjoint, parent.shape)` (the library's, so that this exercise is graded on its own; the
#    experiment below swaps yours in).
# 5. **Accumulate**: add each contribution to the running adjoint of its input — a tensor with several children
#    receives several. Skip inputs that do not require gradients (constants, data): nothing needs their adjoint.
# 6. **Store**: when the walk reaches a leaf that requires gradients, **add** its adjoint to `leaf.grad` (or set
#    it when `leaf.grad` is None). Gradients accumulate over calls, as in PyTorch: that is what lets a training
#    loop sum gradients over several batches, and why it calls `zero_grad()` between steps. Intermediate tensors
#    get no `.grad`.
#
# Keep adjoints in a dictionary keyed by `id(tensor)`, and run the rules inside `with mg.no_grad():` — the rules are
# written with minigrad operations, and without it every adjoint would record a new graph of its own (useful only
# for higher derivatives, chapter 4). The pass must not recurse: graphs 20,000 operations deep are fine.

# %% nbgrader={"grade": false, "grade_id": "backward", "locked": false, "schema_version": 3, "solution": true}
def backward(output):
    """Add d(output)/d(leaf) to the .grad of every leaf below `output` that requires grad.

    `output` is a one-element tensor (its adjoint is seeded with 1). Visits the tensors of the
    library's `topological_sort(output)` in reverse, calls each operation's rule
    `node.op.vjp(g, out, *node.inputs, **node.params)` under `mg.no_grad()`, sums adjoints whose
    shape was broadcast back with `mg.unbroadcast`, and adds up the contributions of all children.
    Leaves' .grad accumulate over calls (None means zero). Returns None.
    """
    ### BEGIN SOLUTION
    adjoints = {id(output): mg.ones_like(output)}
    with mg.no_grad():
        for tensor in reversed(topological_sort(output)):
            adjoint = adjoints.pop(id(tensor), None)
            if adjoint is None:
                continue  # no path from here to the output carries a gradient
            if tensor.is_leaf:
                tensor.grad = adjoint if tensor.grad is None else tensor.grad + adjoint
                continue
            node = tensor.node
            parent_adjoints = node.op.vjp(adjoint, tensor, *node.inputs, **node.params)
            for parent, parent_adjoint in zip(node.inputs, parent_adjoints):
                if parent_adjoint is None or not parent.requires_grad:
                    continue
                if parent_adjoint.shape != parent.shape:
                    parent_adjoint = mg.unbroadcast(parent_adjoint, parent.shape)
                previous = adjoints.get(id(parent))
                adjoints[id(parent)] = parent_adjoint if previous is None else previous + parent_adjoint
    ### END SOLUTION


# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_backward", "locked": true, "schema_version": 3, "solution": false}
def backward_case(case):
    """(build, tensors) for a test of backward, described in plain data: "baydin", ("chain", 500, 0.5), ...
    build() makes the output from the leaves in `tensors` (a name for each leaf, constant or intermediate the
    test looks at; build() adds the intermediates it makes). Building is deterministic, so a driver and a
    checker that build the same case get the same graph."""
    kind, *args = case if isinstance(case, (list, tuple)) else (case,)
    if kind == "baydin":
        x1, x2 = mg.tensor(2.0, requires_grad=True), mg.tensor(5.0, requires_grad=True)
        return lambda: x1.log() + x1 * x2 - x2.sin(), {"x1": x1, "x2": x2}
    if kind == "tanh_matmul":
        rng = np.random.default_rng(0)
        X, W = mg.tensor(rng.normal(size=(4, 3))), mg.tensor(rng.normal(size=(3, 2)), requires_grad=True)
        return lambda: ((X @ W).tanh() * (X @ W)).sum(), {"W": W, "X": X}
    if kind == "log_exp_div_sin":
        rng = np.random.default_rng(3)
        a = mg.tensor(rng.uniform(0.5, 2, size=(3,)), requires_grad=True)
        c = mg.tensor(rng.normal(size=(3,)), requires_grad=True)
        return lambda: ((a.log() * c).exp() / (a + 1.0) - c.sin()).sum(), {"a": a, "c": c}
    if kind == "transpose_max_index":
        M = mg.tensor(np.random.default_rng(4).normal(size=(3, 4)), requires_grad=True)
        return lambda: (M.T @ M).max(axis=1).sum() + M[1:, ::2].sum() * M.mean(), {"M": M}
    if kind == "fanout":
        x = mg.tensor(3.0, requires_grad=True)
        return lambda: x * x + x, {"x": x}
    if kind == "sin_cos_sin":
        x = mg.tensor(0.4, requires_grad=True)
        return lambda: (x.sin() * x.cos()) * x.sin(), {"x": x}
    if kind == "ladder":  # every vertex has three children
        v = mg.tensor(np.array([0.3, -0.2]), requires_grad=True)

        def build():
            t = v
            for _ in range(6):
                t = t.sin() * t.cos() + t
            return t.sum()

        return build, {"v": v}
    if kind == "power4":
        w = mg.tensor(1.3, requires_grad=True)
        return lambda: w * w * w * w, {"w": w}
    if kind == "bias":
        rng = np.random.default_rng(1)
        X = mg.tensor(rng.normal(size=(4, 2)))
        W = mg.tensor(rng.normal(size=(2, 3)), requires_grad=True)
        bias = mg.tensor(rng.normal(size=(3,)), requires_grad=True)
        return lambda: ((X @ W + bias).tanh() ** 2).sum(), {"W": W, "bias": bias}
    if kind == "scalar_column_row":
        rng = np.random.default_rng(5)
        scale = mg.tensor(0.7, requires_grad=True)
        column = mg.tensor(rng.normal(size=(4, 1)), requires_grad=True)
        row = mg.tensor(rng.normal(size=(1, 3)), requires_grad=True)
        return (lambda: (scale * (column * row) - column).sum(axis=0, keepdims=True).sum(),
                {"scale": scale, "column": column, "row": row})
    if kind == "cube":
        rng = np.random.default_rng(6)
        cube = mg.tensor(rng.normal(size=(2, 1, 3)), requires_grad=True)
        column = mg.tensor(rng.normal(size=(5, 1)))
        return lambda: (cube * column).sum(), {"cube": cube, "column": column}
    if kind == "constant":
        x = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)
        data = mg.tensor(np.array([3.0, 4.0]))  # requires_grad=False: a constant
        return lambda: (x * data).sum(), {"x": x, "data": data}
    if kind == "square":
        x = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)
        return lambda: (x * x).sum(), {"x": x}
    if kind == "intermediate":
        y = mg.tensor(np.array([0.5, -1.5]), requires_grad=True)
        tensors = {"y": y}

        def build():
            tensors["hidden"] = hidden = y.tanh()
            return (hidden * hidden).sum()

        return build, tensors
    if kind == "frozen":  # a constant used several times
        y = mg.tensor(np.array([0.5, -1.5]), requires_grad=True)
        frozen = mg.tensor(np.array([1.0, 1.0]))
        return lambda: (y * frozen * frozen).sum() + (frozen * 2.0).sum(), {"y": y, "frozen": frozen}
    if kind == "mask":  # gate reaches the output only through relu's mask, whose rule gives no adjoint (None)
        x = mg.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
        gate = mg.tensor(np.array([0.3, -0.7, 1.1]), requires_grad=True)
        return lambda: (mg.ops.relu_mask(gate.tanh()) * x * x).sum(), {"x": x, "gate": gate}
    if kind == "stale_constant":  # a constant that carries a .grad from elsewhere
        x = mg.tensor(np.array([1.0, -2.0]), requires_grad=True)
        c = mg.tensor(np.array([3.0, 0.5]))
        return lambda: (x * c + c).sum(), {"x": x, "c": c}
    if kind == "chain":
        x, y = chain(*args)
        return lambda: y, {"x": x}
    if kind == "mlp":
        rng = np.random.default_rng(2)
        model = mg.nn.MLP([2, 8, 1], activation="tanh", rng=rng)
        X, T = mg.tensor(rng.normal(size=(16, 2))), mg.tensor(rng.normal(size=(16, 1)))
        return lambda: mg.nn.mse_loss(model(X), T), dict(model.named_parameters())
    if kind == "mlp_cross_entropy":
        rng = np.random.default_rng(8)
        model = mg.nn.MLP([3, 5, 5, 4], activation="relu", rng=rng)
        X, labels = mg.tensor(rng.normal(size=(10, 3))), rng.integers(0, 4, size=10)
        return lambda: mg.nn.cross_entropy(model(X), labels), dict(model.named_parameters())
    raise ValueError(f"unknown backward case {case!r}")


def grad_facts(grad):
    """What a driver reports about a .grad: None, its data and whether it requires grad, or its type."""
    if grad is None:
        return None
    if isinstance(grad, Tensor):
        return {"data": np.array(grad.data, copy=True), "requires_grad": bool(grad.requires_grad)}
    return f"a {type(grad).__name__}"


def backward_grads(case, preset=None):
    """Driver: your backward on the case's output (after setting the .grad of the leaves named in `preset`);
    returns every named tensor's .grad afterwards and the recursion limit before and after, or
    "RecursionError" if it raised one."""
    build, tensors = backward_case(case)
    for name, value in (preset or {}).items():
        tensors[name].grad = mg.tensor(value)
    output = build()
    limit = sys.getrecursionlimit()
    try:
        backward(output)
    except RecursionError:
        return "RecursionError"
    return {"grads": {name: grad_facts(t.grad) for name, t in tensors.items()},
            "recursion_limit": (limit, sys.getrecursionlimit())}


def numerical_grad(build, leaf, h=1e-6):
    """Central differences of the scalar build() with respect to leaf.data (perturbed in place, then restored)."""
    grad = np.zeros_like(leaf.data)
    with mg.no_grad():
        for index in np.ndindex(leaf.shape):
            old = leaf.data[index]
            leaf.data[index] = old + h
            up = build().item()
            leaf.data[index] = old - h
            down = build().item()
            leaf.data[index] = old
            grad[index] = (up - down) / (2 * h)
    return grad


def grads_of(got, what):
    """The driver's {name: facts} of .grads, checked to be a dict."""
    if got == "RecursionError":
        raise AssertionError(f"{what}: backward hit Python's recursion limit: do not recurse")
    if type(got) is not dict or type(got.get("grads")) is not dict:
        raise AssertionError(f"{what}: the driver returned {type(got).__name__}, not its facts")
    return got["grads"]


def grad_of(got, name, shape, what):
    """The data of `name`.grad from the driver's facts, checked to be a Tensor of `shape` made without a graph."""
    facts = grads_of(got, what).get(name, "missing")
    if facts is None:
        raise AssertionError(f"{what}: after backward, {name}.grad is None; expected a gradient of shape {shape}")
    if type(facts) is str:
        raise AssertionError(f"{what}: {name}.grad should be a Tensor, got {facts}")
    if type(facts) is not dict or type(facts.get("data")) is not np.ndarray or type(facts.get("requires_grad")) is not bool:
        raise AssertionError(f"{what}: the driver's facts about {name}.grad are malformed: {facts!r:.200}")
    if facts["data"].shape != tuple(shape):
        raise AssertionError(
            f"{what}: {name} has shape {tuple(shape)} but {name}.grad has shape {facts['data'].shape} "
            f"(a broadcast input's adjoint must be summed back to its shape)"
        )
    if facts["requires_grad"]:
        raise AssertionError(
            f"{what}: {name}.grad requires grad, so the rules recorded a graph of their own; "
            f"run them inside `with mg.no_grad():`"
        )
    return facts["data"]


def check_no_grad(got, name, tensor, what):
    """A tensor that is not a leaf requiring grad must have no .grad after backward."""
    facts = grads_of(got, what).get(name, "missing")
    if facts is not None:
        shown = f"a gradient of shape {facts['data'].shape}" if type(facts) is dict and type(facts.get("data")) is np.ndarray else facts
        if tensor.is_leaf:
            raise AssertionError(f"{what}: {name} has requires_grad=False (a constant) but got .grad = {shown}; expected None")
        raise AssertionError(f"{what}: {name} is an intermediate tensor but got .grad = {shown}; only leaves keep theirs")


def check_backward(case, what, preset=None):
    """Run your backward on the case (drive(backward_grads, ...)) and compare each leaf's .grad with central
    differences of the checker's own copy (plus the preset .grad: gradients accumulate); every other named
    tensor (constants, intermediates) must have no .grad."""
    build, tensors = backward_case(case)
    build()  # names the intermediates too
    expected = {name: numerical_grad(build, t) + (preset or {}).get(name, 0.0)
                for name, t in tensors.items() if t.is_leaf and t.requires_grad}
    with your_rules_blamed(what):
        got = drive(backward_grads, case, preset)
        for name, tensor in tensors.items():
            if name in expected:
                assert_close(grad_of(got, name, tensor.shape, what), expected[name], f"{what}: {name}.grad", rtol=1e-5, atol=1e-6)
            elif name in (preset or {}):
                check_grad_kept(got, name, preset[name], what)
            else:
                check_no_grad(got, name, tensor, what)
    return got


def check_grad_kept(got, name, before, what):
    """A constant whose .grad was set before backward (by other code) must keep it: backward skips constants."""
    facts = grads_of(got, what).get(name, "missing")
    if not (type(facts) is dict and type(facts.get("data")) is np.ndarray and np.array_equal(facts["data"], before)):
        shown = facts["data"] if type(facts) is dict and "data" in facts else facts
        raise AssertionError(f"{what}: {name} is a constant (requires_grad=False) whose .grad was {before} before backward; "
                             f"backward must leave it alone, but it became {shown}")


LIBRARY_RULES = {  # where the engine finds each of this chapter's rules (node.op.vjp) and unbroadcast
    "mul_vjp": lambda: mg.ops.mul.vjp, "tanh_vjp": lambda: mg.ops.tanh.vjp, "sum_vjp": lambda: mg.ops.reduce_sum.vjp,
    "matmul_vjp": lambda: mg.ops.matmul.vjp, "unbroadcast": lambda: mg.unbroadcast,
}


def rules_run_by_the_engine():
    """Driver: which of your functions the library's operations call when your backward runs them: none with the
    full library; in the student bundle, whose minigrad leaves this chapter's rules to you, your rules and unbroadcast."""
    import inspect

    def left_to_you(function, name):  # the bundle's stub hands the call to the exercise of that name
        try:
            return f"_exercise({name!r}" in inspect.getsource(function)
        except (OSError, TypeError):
            return False

    return [name for name, where in LIBRARY_RULES.items() if left_to_you(where(), name)]


RULE_CHECKS = {  # a quick check of each rule (the tests of its own exercise are thorough)
    "mul_vjp": lambda: check_rule("mul_vjp", [np.linspace(-1, 1, 6).reshape(2, 3), np.linspace(0.5, 2, 6).reshape(2, 3)], "mul_vjp"),
    "tanh_vjp": lambda: check_rule("tanh_vjp", [np.linspace(-2, 2, 6).reshape(2, 3)], "tanh_vjp"),
    "sum_vjp": lambda: [check_rule("sum_vjp", [np.linspace(-1, 1, 6).reshape(2, 3)], f"sum_vjp with axis={a}, keepdims={k}",
                                   axis=a, keepdims=k) for a, k in [(None, False), ((1,), False), ((0,), True)]],
    "matmul_vjp": lambda: check_rule("matmul_vjp", [np.linspace(-1, 1, 6).reshape(2, 3), np.linspace(0.5, 2, 12).reshape(3, 4)],
                                     "matmul_vjp for (2, 3) @ (3, 4)"),
    "unbroadcast": lambda: [check_unbroadcast(g, s) for g, s in [((4, 3), (3,)), ((4, 3), (4, 1)), ((2, 3), ())]],
}


@contextlib.contextmanager
def your_rules_blamed(what):
    """Around a test of backward: when it fails and the engine ran one of your rules (the student bundle) that is
    wrong, the message says that this rule is the culprit."""
    try:
        yield
    except NotImplementedError:
        raise
    except Exception as error:
        for name in drive(rules_run_by_the_engine):
            try:
                RULE_CHECKS[name]()
            except Exception as rule_error:
                raise AssertionError(
                    f"{what}: the operations of this copy of minigrad run your {name}, which is wrong; fix {name} first.\n"
                    f"{name}: {rule_error}\n{what} itself: {type(error).__name__}: {str(error)[:300]}"
                ) from None
        raise


# %% nbgrader={"grade": true, "grade_id": "test_backward_values", "locked": true, "points": 3, "schema_version": 3, "solution": false}
what = "backward(y) for y = ln(x1) + x1*x2 - sin(x2) at (2, 5)"
with your_rules_blamed(what):
    got = drive(backward_grads, "baydin")
    assert_close(grad_of(got, "x1", (), what), 1 / 2.0 + 5.0, "x1.grad for y = ln(x1) + x1*x2 - sin(x2) at (2, 5) (1/x1 + x2)")
    assert_close(grad_of(got, "x2", (), what), 2.0 - np.cos(5.0), "x2.grad for y = ln(x1) + x1*x2 - sin(x2) at (2, 5) (x1 - cos x2)")

check_backward("tanh_matmul", "backward(sum(tanh(X @ W) * (X @ W)))")
print("backward: gradients match")
### BEGIN HIDDEN TESTS
check_backward("log_exp_div_sin", "backward through log, exp, div, sin")
check_backward("transpose_max_index", "backward through transpose, max, indexing, mean")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_backward_fanout", "locked": true, "points": 2, "schema_version": 3, "solution": false}
with your_rules_blamed("backward(x * x + x)"):
    got = drive(backward_grads, "fanout")
    assert_close(grad_of(got, "x", (), "backward(x * x + x)"), 2 * 3.0 + 1,
                 "x.grad for y = x*x + x at x = 3 (2x + 1: x has three edges into the graph, add them up)")

check_backward("sin_cos_sin", "backward(sin(x) * cos(x) * sin(x))")
print("backward: fan-out accumulates")
### BEGIN HIDDEN TESTS
check_backward("ladder", "backward through a ladder of depth 6 (every vertex has three children)")
check_backward("power4", "backward(w * w * w * w)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_backward_broadcast", "locked": true, "points": 2, "schema_version": 3, "solution": false}
check_backward("bias", "backward(sum(tanh(X @ W + bias)**2)) with bias of shape (3,)")
print("backward: broadcast inputs get gradients of their own shape")
### BEGIN HIDDEN TESTS
check_backward("scalar_column_row", "backward with a scalar, a column and a row broadcast together")
check_backward("cube", "backward with (2, 1, 3) * (5, 1)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_backward_leaves", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# x requires grad, data (requires_grad=False) is a constant: it must get no .grad.
got = check_backward("constant", "backward(sum(x * data))")
assert_close(grad_of(got, "x", (2,), "backward(sum(x * data))"), [3.0, 4.0], "x.grad for sum(x * data)")

# x.grad already holds [10, 10] from an earlier backward call: the new gradient is added to it.
got = check_backward("square", "backward(sum(x * x)) when x.grad was already [10, 10]", preset={"x": np.array([10.0, 10.0])})
assert_close(grad_of(got, "x", (2,), "backward(sum(x * x))"), [10.0 + 2.0, 10.0 + 4.0],
             "x.grad after backward when x.grad was already [10, 10] (gradients accumulate)")
print("backward: leaves get (accumulated) gradients, constants none")
### BEGIN HIDDEN TESTS
y = np.array([0.5, -1.5])
got = check_backward("intermediate", "backward(sum(tanh(y)**2))")  # hidden = tanh(y) must get no .grad
assert_close(grad_of(got, "y", (2,), "backward(sum(tanh(y)**2))"), 2 * np.tanh(y) * (1 - np.tanh(y) ** 2), "y.grad for sum(tanh(y)**2)")
check_backward("frozen", "backward(sum(y * frozen * frozen) + sum(frozen * 2)) with a constant used several times")

# Adjoints that are legitimately absent: gate reaches the output only through relu's mask (a step function, whose
# rule returns None), so neither gate nor tanh(gate) ever gets an adjoint; gate's earlier .grad stays as it was.
check_backward("mask", "backward(sum(relu_mask(tanh(gate)) * x * x)) when gate.grad was already [1, 2, 3]",
               preset={"gate": np.array([1.0, 2.0, 3.0])})
# A constant that carries a .grad from elsewhere: backward neither adds to it nor replaces it.
check_backward("stale_constant", "backward(sum(x * c + c)) for a constant c whose .grad was already [5, 5]",
               preset={"c": np.array([5.0, 5.0])})
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_backward_deep", "locked": true, "points": 2, "schema_version": 3, "solution": false}
expected, v = 1.0, 0.5
for _ in range(500):
    v = np.tanh(v)
    expected *= 1 - v * v
with your_rules_blamed("backward(chain of 500 tanh)"):
    got = drive(backward_grads, ("chain", 500, 0.5))
    assert_close(grad_of(got, "x", (), "backward(chain of 500 tanh)"), expected, "x.grad for a chain of 500 tanh")
print("backward: a chain of 500 operations works")
### BEGIN HIDDEN TESTS
expected, v = 1.0, 2.0
for _ in range(20_000):
    v = np.tanh(v)
    expected *= 1 - v * v
with your_rules_blamed("backward(chain of 20,000 tanh)"):
    got = drive(backward_grads, ("chain", 20_000, 2.0))
    if got == "RecursionError":
        raise AssertionError("backward hit Python's recursion limit on a chain of 20,000 operations: do not recurse")
    assert_close(grad_of(got, "x", (), "backward(chain of 20,000 tanh)"), expected, "x.grad for a chain of 20,000 tanh", rtol=1e-6, atol=0)
limits = got["recursion_limit"]
assert type(limits) is tuple and len(limits) == 2, f"backward(chain of 20,000 tanh): malformed facts {limits!r:.100}"
assert_equal(limits[1], limits[0], "sys.getrecursionlimit() after backward (do not raise the limit)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_backward_mlp", "locked": true, "points": 2, "schema_version": 3, "solution": false}
check_backward("mlp", "backward(mse_loss of a 2-8-1 MLP)")
print("backward: an MLP's gradients match")
### BEGIN HIDDEN TESTS
check_backward("mlp_cross_entropy", "backward(cross_entropy of a 3-5-5-4 MLP)")
### END HIDDEN TESTS

# %% [markdown]
# After your `backward` the graph is still there (the library's frees it to save memory, yours need not), so it
# can be drawn with the gradients: every input's `.grad` is the sum of what its three edges carried back.

# %%
x = mg.tensor(3.0, requires_grad=True)
y = x * x + x
with runs_your("backward"):
    backward(y)
    print("x.grad =", x.grad.item(), "= 2x + 1")
    display(mg.draw(y, show_data=True, show_grad=True, names={"x": x, "y": y}))


# %% [markdown]
# ## 5. Your engine trains a network
#
# Time to replace the library's machinery with yours. The context manager below swaps your four VJP rules into
# the library's primitives (`mg.ops.mul.vjp` and so on) and your `unbroadcast` into `mg.unbroadcast`, and puts
# the originals back on the way out — even if something fails inside. Inside it, every multiplication, matrix
# product, `tanh` and sum differentiates with your code, and `backward` is yours.
#
# The training runs in a driver, like the tests: `train_moons` builds the data and the model, trains them
# with your code and returns plain facts (the losses, the accuracy, the logits on a grid for the plot).
#
# First a check on one batch: your engine with your rules must give the same gradients as the library.

# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_training", "locked": true, "schema_version": 3, "solution": false}
@contextlib.contextmanager
def your_rules():
    """The library's rules and unbroadcast replaced by yours inside the block, and restored after it."""
    swaps = [(mg.ops.mul, "vjp", mul_vjp), (mg.ops.tanh, "vjp", tanh_vjp), (mg.ops.reduce_sum, "vjp", sum_vjp),
             (mg.ops.matmul, "vjp", matmul_vjp), (mg, "unbroadcast", unbroadcast)]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in swaps]
    try:
        for owner, name, new in swaps:
            setattr(owner, name, new)
        yield
    finally:
        for owner, name, old in saved:
            setattr(owner, name, old)


def make_moons(n, noise, rng):
    """Two interleaved half circles, labels 0 and 1 (like scikit-learn's make_moons)."""
    t = rng.uniform(0, np.pi, n)
    labels = rng.integers(0, 2, n)
    upper = np.stack([np.cos(t), np.sin(t)], axis=1)
    lower = np.stack([1 - np.cos(t), 0.5 - np.sin(t)], axis=1)
    points = np.where(labels[:, None] == 0, upper, lower) + noise * rng.normal(size=(n, 2))
    return points, labels


def moons_problem():
    """(points, labels, X, targets, model): 300 noisy points of two half-moons and a fresh 2-16-16-1 tanh MLP."""
    rng = np.random.default_rng(0)
    points, labels = make_moons(300, 0.2, rng)
    model = mg.nn.MLP([2, 16, 16, 1], activation="tanh", rng=rng)
    return points, labels, mg.tensor(points), mg.tensor(labels[:, None].astype(float)), model


def moons_gradients():
    """Driver: the gradients of the moons loss with respect to the model's parameters, by your backward and rules."""
    _, _, X, targets, model = moons_problem()
    with your_rules():
        backward(mg.nn.binary_cross_entropy_with_logits(model(X), targets))
    return [np.array(p.grad.data, copy=True) for p in model.parameters()]


def train_moons(steps):
    """Driver: `steps` of full-batch Adam on the moons, every gradient by your backward and your rules; returns the
    losses, the training accuracy and the model's logits on a grid of the plane (for the decision boundary)."""
    _, labels, X, targets, model = moons_problem()
    optimizer = mg.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    with your_rules():
        for step in (progress := tqdm(range(steps), desc="training")):
            optimizer.zero_grad()
            loss = mg.nn.binary_cross_entropy_with_logits(model(X), targets)
            backward(loss)
            optimizer.step()
            losses.append(loss.item())
            if step % 50 == 0:
                progress.set_postfix(loss=f"{loss.item():.4f}")
    with mg.no_grad():
        accuracy = float(((model(X).data[:, 0] > 0) == labels).mean())
        grid_x, grid_y = np.meshgrid(np.linspace(-1.5, 2.5, 200), np.linspace(-1.0, 1.5, 200))
        logits = model(mg.tensor(np.stack([grid_x.ravel(), grid_y.ravel()], axis=1))).data.reshape(grid_x.shape)
    return {"losses": np.array(losses), "accuracy": accuracy, "logits": logits, "grid_x": grid_x, "grid_y": grid_y}


# %%
points, labels, X, targets, model = moons_problem()
with runs_your("backward", "mul_vjp", "tanh_vjp", "sum_vjp", "matmul_vjp", "unbroadcast"):
    mg.nn.binary_cross_entropy_with_logits(model(X), targets).backward()  # the library's engine and rules
    library_grads = [p.grad.data.copy() for p in model.parameters()]
    your_grads = drive(moons_gradients)  # the same data and model, built again by the driver, through your engine
    worst = max(np.abs(yours - library).max() for yours, library in zip(your_grads, library_grads))
    print(f"largest difference between your gradients and the library's: {worst:.2e}")

# %% [markdown]
# Now train: full-batch Adam on the binary cross-entropy of the logits, every gradient computed by your code.

# %%
with runs_your("backward", "mul_vjp", "tanh_vjp", "sum_vjp", "matmul_vjp", "unbroadcast"):
    trained = drive(train_moons, 500)
    losses, accuracy, logits = trained["losses"], trained["accuracy"], trained["logits"]
    grid_x, grid_y = trained["grid_x"], trained["grid_y"]

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [1, 1.25]})
    left.semilogy(losses)
    left.set_xlabel("Adam step (full batch)")
    left.set_ylabel("binary cross-entropy (log scale)")
    left.set_title("Training loss (your backward and rules)")
    shading = right.contourf(grid_x, grid_y, 1 / (1 + np.exp(-logits)), levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.45)
    fig.colorbar(shading, ax=right, label="predicted P(class 1)")
    right.contour(grid_x, grid_y, logits, levels=[0], colors="k", linewidths=1.5)
    for label, color, marker in [(0, "tab:blue", "o"), (1, "tab:red", "^")]:
        chosen = labels == label
        right.scatter(points[chosen, 0], points[chosen, 1], c=color, marker=marker, edgecolors="white", linewidths=0.5,
                      s=22, label=f"class {label}")
    right.plot([], [], "k-", label="decision boundary (logit 0)")
    right.set_xlabel("$x_1$")
    right.set_ylabel("$x_2$")
    right.set_title(f"Decision boundary (training accuracy {accuracy:.0%})")
    right.legend(loc="lower left", fontsize=8)
    plt.tight_layout()
    plt.show()

# %% [markdown]
# ## 6. Experiment: what a backward pass costs
#
# The cheap gradient principle says the backward pass costs a small constant times the forward pass, whatever
# the number of parameters. Time both for MLPs of growing width (a batch of 64, three hidden layers): the
# forward pass builds the graph, the backward pass is your `backward` on that graph (yours does not free it, so it
# can be timed again). For a matrix product, the forward pass does one product and its rule two of the same size,
# so expect a ratio of about 2 once the products dominate; at small widths both passes are mostly fixed overhead
# per operation, and a backward step (a rule, a dictionary of adjoints, a sum) has two to three times the forward's.
# The timings are CPU time with numpy on one thread, the fastest of five rounds in which forward and backward take
# turns (`interleaved_times` from `minigrad.testing`), so that other programs on a busy machine do not count.

# %%
rng = np.random.default_rng(1)
widths = [16, 64, 256, 512]
batch = mg.tensor(rng.normal(size=(64, 32)))
batch_targets = mg.tensor(rng.normal(size=(64, 1)))
forward_seconds, backward_seconds = [], []
with runs_your("backward"):
    for width in tqdm(widths, desc="widths"):
        net = mg.nn.MLP([32, width, width, width, 1], rng=rng)
        loss = mg.nn.mse_loss(net(batch), batch_targets)
        seconds = interleaved_times({"forward": lambda: mg.nn.mse_loss(net(batch), batch_targets),
                                     "backward": lambda: backward(loss)})
        forward_seconds.append(seconds["forward"])
        backward_seconds.append(seconds["backward"])

    ratio = np.array(backward_seconds) / np.array(forward_seconds)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(widths, ratio, "o-")
    ax.axhline(1, color="gray", linestyle=":")
    ax.set_xscale("log", base=2)
    ax.set_xticks(widths, [str(w) for w in widths])
    ax.set_xlabel("width of the hidden layers (batch of 64, three hidden layers)")
    ax.set_ylabel("backward time / forward time (CPU time)")
    ax.set_ylim(0, max(4, ratio.max() * 1.1))
    ax.set_title("The gradient costs a constant multiple of the function")
    plt.show()
    for width, f, bwd in zip(widths, forward_seconds, backward_seconds):
        print(f"width {width:>4}: forward {1e3 * f:6.2f} ms   backward {1e3 * bwd:6.2f} ms   ratio {bwd / f:.1f}")

# %% [markdown]
# The ratio stays a small constant at every width — between about 1.5 and 3.5 on a busy machine — while the time of each pass grows more than tenfold
# from width 16 to 512: the gradient with respect to all the parameters costs a small constant times the function,
# as the cheap gradient principle says. (Which width has the highest ratio changes from run to run; that it stays
# small does not.)

# %% [markdown]
# ## Summary
#
# * The adjoint $\bar v_i = \partial y / \partial v_i$ satisfies $\bar v_i = \sum_{j \in \mathrm{Ch}(i)} \bar v_j\,
#   \partial v_j / \partial v_i$ with $\bar v_N = 1$; visiting vertices in reverse topological order computes all
#   of them in one $O(|V| + |E|)$ pass.
# * Jacobians are never formed: every primitive has a VJP rule as cheap as the primitive itself —
#   $\bar z \odot y$ for products, $\bar z \odot (1 - z^2)$ for tanh, a copy for sums, $\bar Z Y^\top$ and
#   $X^\top \bar Z$ for matrix products.
# * A value used several times — explicitly, or implicitly by broadcasting — receives the sum of its children's
#   contributions; `unbroadcast` is the sum that undoes a broadcast copy.
# * The engine is a short loop: seed, reverse order, rule, unbroadcast, accumulate, store. Yours trained a network.
#
# Chapter 3 compares this with the alternatives — finite differences, symbolic differentiation and forward mode.
#
# ## References
#
# * S. Linnainmaa. Taylor expansion of the accumulated rounding error. *BIT Numerical Mathematics* 16(2):146–160, 1976.
#   (Reverse accumulation of derivatives, the algorithm of this chapter.)
# * D. E. Rumelhart, G. E. Hinton, R. J. Williams. Learning representations by back-propagating errors.
#   *Nature* 323:533–536, 1986.
# * A. Griewank, A. Walther. *Evaluating Derivatives: Principles and Techniques of Algorithmic Differentiation*,
#   2nd ed. SIAM, 2008. (Adjoints, the cheap gradient principle, reverse mode.)
# * A. G. Baydin, B. A. Pearlmutter, A. A. Radul, J. M. Siskind. Automatic differentiation in machine learning:
#   a survey. *Journal of Machine Learning Research* 18(153):1–43, 2018.
# * I. Goodfellow, Y. Bengio, A. Courville. *Deep Learning*, section 6.5 (back-propagation). MIT Press, 2016.
