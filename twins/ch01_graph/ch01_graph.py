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
# # Chapter 1 — The computational graph
#
# Every deep-learning framework you have used — PyTorch, JAX, TensorFlow — keeps, behind the scenes, a record of
# *what was computed from what*. That record is the **computational graph**, and everything else in this course
# (backpropagation, higher-order derivatives, checkpointing, compilation) is an algorithm that walks it.
#
# In this chapter you will
#
# 1. see how `minigrad` records the graph while ordinary Python code runs (*define-by-run*);
# 2. name its parts: inputs, intermediate vertices, the output, and count them, $|V|$ and $|E|$;
# 3. implement the three walks every later chapter relies on:
#    * `topological_sort(output)` — an order in which every vertex comes after the vertices it was computed from,
#    * `count_nodes_edges(output)` — the size of the graph,
#    * `evaluate(output, inputs)` — re-running the forward pass with new input values;
# 4. measure that one forward pass costs $O(|V| + |E|)$.
#
# <a id="reference-library"></a>
# **The `minigrad` you import is the finished reference library**, in this chapter and in every later one. It
# already contains every function of the course, including the ones you write: here you rebuild its graph walks,
# and later chapters take what earlier ones built (the graph walk, the backward pass, the VJP rules) from it, never
# from your earlier notebooks — so each chapter is graded on its own, and a bug in chapter 1 cannot cost points in
# chapter 6. (If your instructor hands out the *student bundle* instead, its copy of `minigrad` leaves the
# exercises of this chapter and of later ones to you and runs yours once your notebook defines them: then
# `mg.draw` walks the graph with your `topological_sort`.)
#
# Cells marked *graded* contain `raise NotImplementedError()` for you to replace; the cells after them test your
# work (some tests are hidden and run only when your notebook is graded, so read each specification carefully).
# Demonstrations that run your functions say so, instead of stopping, while those functions are not written yet.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib
import sys

import numpy as np
import matplotlib.pyplot as plt
from tqdm.auto import tqdm

import minigrad as mg
from minigrad import GraphError, Tensor
from minigrad.testing import assert_close, assert_equal, best_time, drive, interleaved_times


@contextlib.contextmanager
def runs_your(*names):
    """Around a demonstration that runs your functions: until they work, it says so instead of stopping Run All."""
    try:
        yield
    except Exception as error:
        print(f"This demonstration runs your {', '.join(names)}; it stopped with {type(error).__name__}: {error}\n"
              f"Write (or fix) the function it names above, then run this cell again.")


# %% [markdown]
# ## 1. Functions as graphs
#
# Take a function of $d$ inputs, $y = f(x_1, \dots, x_d)$. However complicated $f$ is, a computer evaluates it as
# a sequence of *elementary* operations — additions, products, `exp`, `sin`, matrix products — each of which
# consumes values computed earlier. Naming every value that appears along the way gives the variables
# $v_1, \dots, v_N$:
#
# * **inputs** (leaves): $v_i = x_i$ for $i = 1, \dots, d$ — in machine learning a batch of data, the trainable
#   weights, constants;
# * **intermediate vertices**: $v_i = \varphi_i\big(v_{\mathrm{Pa}(i)}\big)$ for $i = d+1, \dots, N$, where
#   $\varphi_i$ is an elementary differentiable operation and $\mathrm{Pa}(i)$ is the set of its **parents**,
#   the earlier variables it reads;
# * **the output**: $y = v_N$ — when training a model, the scalar loss.
#
# Draw one vertex per variable and an edge $j \to i$ whenever $j \in \mathrm{Pa}(i)$: the result is a directed
# graph $G = (V, E)$. It has no cycles, because every $v_i$ is computed from variables that *already exist*:
# it is a **directed acyclic graph (DAG)**. The children of a vertex, $\mathrm{Ch}(i) = \{j : i \in \mathrm{Pa}(j)\}$,
# are the vertices that read it — chapter 2 sends derivatives back along exactly these edges.
#
# Our running example, borrowed from Baydin et al. (2018), is
#
# $$ y = f(x_1, x_2) = \ln x_1 + x_1 x_2 - \sin x_2 . $$
#
# Its **evaluation trace** introduces one variable per elementary operation:
#
# | variable | definition | parents |
# | --- | --- | --- |
# | $v_1$ | $x_1$ | — |
# | $v_2$ | $x_2$ | — |
# | $v_3$ | $\ln v_1$ | $v_1$ |
# | $v_4$ | $v_1 \cdot v_2$ | $v_1, v_2$ |
# | $v_5$ | $\sin v_2$ | $v_2$ |
# | $v_6$ | $v_3 + v_4$ | $v_3, v_4$ |
# | $v_7 = y$ | $v_6 - v_5$ | $v_6, v_5$ |
#
# Seven vertices and eight edges. Notice that $x_1$ and $x_2$ each feed *two* operations: a vertex may have
# several children (this *fan-out* is why chapter 2 has to add contributions up).

# %% [markdown]
# ## 2. Define-by-run: the graph records itself
#
# `minigrad`, like PyTorch and Chainer, is **define-by-run**: there is no separate graph-building language.
# You write ordinary Python; every operation on tensors that require gradients computes its value with numpy
# *and* records a `Node` — the operation, its input tensors and its parameters — on the tensor it returns.
# The graph is whatever the Python code happened to execute. (Define-*and*-run systems such as TensorFlow 1.x
# or Theano build the graph first and run it later; chapter 8 returns to them.)

# %%
x1 = mg.tensor(2.0, requires_grad=True)
x2 = mg.tensor(5.0, requires_grad=True)

v3 = x1.log()
v4 = x1 * x2
v5 = x2.sin()
v6 = v3 + v4
y = v6 - v5

for name, v in [("x1", x1), ("x2", x2), ("v3", v3), ("v4", v4), ("v5", v5), ("v6", v6), ("y", y)]:
    parents = [p.data.round(4).item() for p in v.parents]
    print(f"{name:>3}: value {v.item():9.4f}   op {str(v.op):<5} leaf={v.is_leaf!s:<5}  parents' values {parents}")


# %% [markdown]
# Each tensor made by an operation points to its `Node`, and the node points to the input tensors. Nothing
# points the other way: a node does not know its output, and a tensor does not know its children. So the graph
# can only be walked **from the output towards the inputs** — which is exactly the direction every algorithm in
# this chapter takes. (It also means the graph holds no reference cycles, so Python frees it as soon as the output
# is dropped, without the cyclic garbage collector.)
#
# Recording happens only when it is needed: an operation whose inputs do not require gradients (plain data, or
# anything computed inside `with mg.no_grad():`) returns a tensor with no node. Such tensors are *constants* —
# leaves of the graph like any input. Python numbers used in arithmetic, such as the `2.0` in `x * 2.0`, become
# constant leaves too.
#
# `minigrad.draw` renders such graphs; it lists their tensors with the walk you write in section 3, so the drawings
# come right after it.

# %% [markdown]
# ## 3. Topological order
#
# To evaluate a vertex we need the values of its parents first. An ordering of the vertices in which every edge
# $j \to i$ goes forward (each vertex appears after all of its parents) is a **topological order**. Every DAG has
# at least one; a graph with a cycle has none. The forward pass evaluates vertices in topological order and the
# backward pass of chapter 2 visits them in *reverse* topological order.
#
# Since we can only walk from the output to its parents, the natural algorithm is **depth-first search with
# post-order emission**: before emitting a vertex, emit (recursively) all of its parents; a vertex already
# emitted is skipped. Written recursively it is five lines:
#
# ```python
# def visit(v):
#     if v not in done:
#         done.add(v)
#         for p in v.parents:
#             visit(p)
#         order.append(v)        # after all its parents
# ```
#
# Two details make it production-ready:
#
# * **No recursion.** Python allows about 1,000 nested calls by default. A recurrent network unrolled over a long
#   sequence, or the solver steps of chapter 5, easily produce graphs 100,000 operations deep. Replace the call
#   stack with an explicit list of work items: pushing `(v, False)` means "expand `v`", `(v, True)` means "all
#   parents of `v` are done, emit it".
# * **Cycle detection.** Define-by-run code cannot create a cycle, but a hand-edited graph can (and chapter 8
#   edits graphs). Keep the set of vertices that are *being expanded* — on the current path from the output.
#   Reaching one of them again means the graph loops back on itself: raise `GraphError` instead of looping forever.
#
# Each vertex is expanded once and each edge followed once, so the sort costs $O(|V| + |E|)$. Identify tensors by
# identity (`id(t)`, or the tensor itself as a dictionary key — minigrad tensors hash by identity): two different
# tensors may hold equal values.

# %% nbgrader={"grade": false, "grade_id": "topological_sort", "locked": false, "schema_version": 3, "solution": true}
def topological_sort(output):
    """Every tensor `output` depends on, each exactly once, parents before children; `output` last.

    Returns a list of Tensors (for a leaf: `[output]`). Must not recurse: a chain of 20,000
    operations, twenty times Python's default recursion limit, has to work. Each tensor is expanded
    (its parents looked at) once, however many children share it. Raises `GraphError` if the
    graph has a cycle.
    """
    ### BEGIN SOLUTION
    order = []
    done = set()  # ids of tensors already emitted
    open_ = set()  # ids of tensors on the current path (being expanded)
    stack = [(output, False)]
    while stack:
        tensor, parents_done = stack.pop()
        key = id(tensor)
        if parents_done:
            open_.discard(key)
            done.add(key)
            order.append(tensor)
            continue
        if key in done:
            continue
        if key in open_:
            raise GraphError(f"topological_sort: the graph has a cycle through a tensor of shape {tensor.shape}")
        open_.add(key)
        stack.append((tensor, True))
        for parent in tensor.parents:
            if id(parent) in open_:
                raise GraphError(
                    f"topological_sort: the graph has a cycle: a tensor of shape {parent.shape} "
                    f"(op {parent.op}) is its own ancestor"
                )
            if id(parent) not in done:
                stack.append((parent, False))
    return order
    ### END SOLUTION


# %% [markdown]
# The tests below use a few helpers: the running example, chains, "ladders" in which every vertex is shared by
# two children, hand-made cycles, and `check_topological_order`, which says precisely what is wrong with an
# order (a missing or repeated tensor, or a tensor placed before one of its inputs).

# %% nbgrader={"grade": false, "grade_id": "helpers_graphs", "locked": true, "schema_version": 3, "solution": false}
# How the tests work: a *driver* (the functions marked "Driver") builds a graph, calls your function on it and
# returns what came back as plain data: numbers, strings, lists, arrays, never tensors. `drive(driver, ...)`
# runs it; a *checker* then builds the same graph itself and compares. When your notebook is graded, drivers
# run beside your code and checkers in a separate process, so a test never trusts anything but those facts.

def baydin_example(a=2.0, b=5.0):
    """x1, x2 and y = ln(x1) + x1*x2 - sin(x2): 7 vertices, 8 edges."""
    x1 = mg.tensor(a, requires_grad=True)
    x2 = mg.tensor(b, requires_grad=True)
    return x1, x2, x1.log() + x1 * x2 - x2.sin()


def chain(n, start=0.5):
    """x, then n tanh operations one after another: a graph as deep as it is long."""
    x = mg.tensor(start, requires_grad=True)
    y = x
    for _ in range(n):
        y = y.tanh()
    return x, y


def ladder(depth):
    """v_{k+1} = sin(v_k) * cos(v_k): each v_k has two children, so 2**depth paths lead to x."""
    x = mg.tensor(0.3, requires_grad=True)
    v = x
    for _ in range(depth):
        v = v.sin() * v.cos()
    return x, v


def cycle_of(length):
    """A graph whose output lies on a cycle of `length` operations, made by rewiring node inputs by hand."""
    x = mg.tensor(1.0, requires_grad=True)
    first = x * 2.0
    last = first
    for _ in range(length - 1):
        last = last + x
    first.node.inputs = (last, first.node.inputs[1])  # first now reads last: first -> ... -> last -> first
    return last


def graph(case):
    """(output, {name: tensor}) for a test case, described in plain data: ("chain", 500), ("ladder", 12), ...
    Building is deterministic, so a driver and a checker that build the same case get the same graph."""
    kind, *args = case if isinstance(case, (list, tuple)) else (case,)
    if kind == "leaf":
        x = mg.tensor(3.0, requires_grad=True)
        return x, {"x": x}
    if kind == "baydin":
        x1, x2, y = baydin_example(*args)
        return y, {"x1": x1, "x2": x2, "y": y}
    if kind == "diamond":  # x feeds sin and cos, both feed the product
        x = mg.tensor(0.7, requires_grad=True)
        return x.sin() * x.cos(), {"x": x}
    if kind == "square":  # one parent used twice (a double edge)
        x = mg.tensor(2.0, requires_grad=True)
        return x * x, {"x": x}
    if kind == "affine":  # the constants 2.0 and 1.0 are leaves too
        x = mg.tensor(1.0, requires_grad=True)
        return x * 2.0 + 1.0, {"x": x}
    if kind == "shared":  # s = sin(x) has two children
        x = mg.tensor(0.4, requires_grad=True)
        s = x.sin()
        return s * s + s, {"x": x, "s": s}
    if kind == "shared_array":
        x = mg.tensor(np.array([0.1, 0.2, 0.3]), requires_grad=True)
        s = x.sin()
        y = s * s + s * 2.0 - 1.0
        return y, {"x": x, "s": s, "y": y}
    if kind == "random":  # a random DAG with constants, matrices, reductions and fan-out
        rng = np.random.default_rng(args[0])
        pool = [mg.tensor(rng.normal(size=(3,)), requires_grad=True) for _ in range(3)] + [mg.tensor(rng.normal(size=(3,)))]
        for _ in range(40):
            a, b = (pool[i] for i in rng.integers(len(pool), size=2))
            pool.append([a + b, a * b, a.tanh(), a - b * 0.5, (a * b).sum() + a][rng.integers(5)])
        return pool[-1].sum() + pool[-2].sum() + pool[-3].sum(), {}
    if kind == "chain":
        x, y = chain(*args)
        return y, {"x": x, "y": y}
    if kind == "ladder":
        x, top = ladder(*args)
        return top, {"x": x}
    if kind == "cycle":
        return cycle_of(*args), {}
    if kind == "diamond_cycle":  # a cycle hidden behind a diamond: the diamond itself is fine, the loop is not
        x = mg.tensor(1.0, requires_grad=True)
        a = x * 3.0
        c = (a + 1.0).sin() * (a + 1.0).cos()
        a.node.inputs = (c, a.node.inputs[1])
        return c.tanh(), {}
    if kind == "matmul":
        rng = np.random.default_rng(1)
        X = mg.tensor(rng.normal(size=(4, 3)))
        W = mg.tensor(rng.normal(size=(3, 2)), requires_grad=True)
        return (X @ W).tanh().sum(axis=0), {"X": X, "W": W}
    if kind == "power_keepdims":
        x = mg.tensor(np.random.default_rng(2).uniform(1, 2, size=(2, 3, 4)), requires_grad=True)
        y = ((x ** 1.5).sum(axis=(0, 2), keepdims=True).reshape(3, 1) * x[0, :, 1:3]).max(axis=1).exp()
        return y, {"x": x}
    if kind == "transpose_mean":
        x = mg.tensor(np.random.default_rng(2).uniform(1, 2, size=(2, 3, 4)), requires_grad=True)
        return (x.transpose(2, 0, 1) - x.mean()).abs().sum(), {"x": x}
    raise ValueError(f"unknown graph case {case!r}")


def vertices(output):
    """Every tensor below `output` (itself first), breadth-first: the numbering drivers and checkers share."""
    seen, order = {id(output)}, [output]
    for tensor in order:
        for parent in tensor.parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                order.append(parent)
    return order


def describe(tensor):
    """How a tensor reads in a failure message: its operation (or 'leaf') and its shape."""
    kind = "leaf" if tensor.op is None else f"'{tensor.op}'"
    return f"{kind} tensor of shape {tensor.shape}"


def sorted_vertices(case):
    """Driver: your topological_sort on the case's graph; each tensor it lists as its number in
    `vertices(output)` (None for a tensor not in the graph, a type name for something else), or
    "GraphError" if it raised one."""
    output, _ = graph(case)
    number = {id(t): i for i, t in enumerate(vertices(output))}  # numbered before your code sees the graph
    try:
        order = topological_sort(output)
    except GraphError:
        return "GraphError"
    if not isinstance(order, list):
        return f"a {type(order).__name__}"
    return [number.get(id(t)) if isinstance(t, Tensor) else f"a {type(t).__name__}" for t in order]


def check_topological_order(got, case, what):
    """Fail, saying what is wrong, unless `got` (from sorted_vertices) lists each tensor of the case's
    graph once, parents first, the output last."""
    output, _ = graph(case)
    tensors = vertices(output)
    number = {id(t): i for i, t in enumerate(tensors)}
    if got == "GraphError":
        raise AssertionError(f"{what}: raised GraphError, but this graph has no cycle")
    if not isinstance(got, list):
        raise AssertionError(f"{what}: expected a list of tensors, got {got}")
    position = {}
    for i, item in enumerate(got):
        if isinstance(item, str):
            raise AssertionError(f"{what}: item {i} is {item}, not a Tensor")
        if item is None:
            raise AssertionError(f"{what}: item {i} is a tensor that is not part of the graph")
        if item in position:
            raise AssertionError(
                f"{what}: the {describe(tensors[item])} appears twice (positions {position[item]} and {i}); "
                f"each tensor must appear exactly once"
            )
        position[item] = i
    missing = [t for i, t in enumerate(tensors) if i not in position]
    if missing:
        raise AssertionError(
            f"{what}: expected all {len(tensors)} tensors below the output, {len(missing)} are missing, "
            f"e.g. the {describe(missing[0])}"
        )
    for tensor in tensors:
        for parent in tensor.parents:
            if position[number[id(parent)]] > position[number[id(tensor)]]:
                raise AssertionError(
                    f"{what}: the {describe(tensor)} at position {position[number[id(tensor)]]} comes before its "
                    f"input, the {describe(parent)} at position {position[number[id(parent)]]}; inputs must come first"
                )
    if got[-1] != 0:
        raise AssertionError(f"{what}: expected the output last, got the {describe(tensors[got[-1]])}")


def check_cycle_raises(got, what):
    if got != "GraphError":
        raise AssertionError(f"{what}: expected GraphError, but it returned normally")


# %% nbgrader={"grade": true, "grade_id": "test_topological_sort_order", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# A leaf is a graph with one vertex.
check_topological_order(drive(sorted_vertices, "leaf"), "leaf", "topological_sort(leaf)")

# The running example y = ln(x1) + x1*x2 - sin(x2): y must come last.
check_topological_order(drive(sorted_vertices, "baydin"), "baydin",
                        "topological_sort(y) for y = ln(x1) + x1*x2 - sin(x2)")

# A diamond: x feeds sin and cos, both feed the product.
check_topological_order(drive(sorted_vertices, "diamond"), "diamond", "topological_sort(sin(x) * cos(x))")
print("topological_sort: orders are valid")
### BEGIN HIDDEN TESTS
# x * x: one parent used twice (a double edge) is still one vertex.
check_topological_order(drive(sorted_vertices, "square"), "square", "topological_sort(x * x)")

# Random DAGs with constants, matrices, reductions and fan-out.
for trial in range(5):
    case = ("random", trial)
    check_topological_order(drive(sorted_vertices, case), case, f"topological_sort(random DAG {trial})")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_topological_sort_shared", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# s = sin(x) has two children; it must be listed once: x, s, s*s, y.
got = drive(sorted_vertices, "shared")
check_topological_order(got, "shared", "topological_sort(s*s + s)")
assert_equal(len(got), 4, "number of tensors in topological_sort(s*s + s) (x, s, s*s, y)")
print("topological_sort: shared subexpressions appear once")
### BEGIN HIDDEN TESTS
# In a ladder every vertex has two children and x is reachable by 2**depth paths: a sort that expands a
# vertex again each time it reaches it does exponential work, and never finishes on a ladder of depth 40.
try:
    got = drive(sorted_vertices, ("ladder", 40), seconds=2)
except TimeoutError:
    raise AssertionError(
        "topological_sort did not finish on a ladder of depth 40 (121 tensors, 2**40 paths): expand each "
        "vertex once (keep a set of finished vertices and skip them)"
    ) from None
check_topological_order(got, ("ladder", 40), "topological_sort(ladder of depth 40)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_topological_sort_cycle", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# A graph rewired by hand so that it loops back on itself: a -> b -> a.
check_cycle_raises(drive(sorted_vertices, ("cycle", 2)), "topological_sort on a graph with a cycle")
print("topological_sort: cycles raise GraphError")
### BEGIN HIDDEN TESTS
for length in (1, 5):
    check_cycle_raises(drive(sorted_vertices, ("cycle", length)), f"topological_sort on a cycle of {length} operations")

# A cycle hidden behind a diamond: the diamond itself is fine, the loop is not.
check_cycle_raises(drive(sorted_vertices, "diamond_cycle"), "topological_sort with a cycle behind a diamond")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_topological_sort_deep", "locked": true, "points": 2, "schema_version": 3, "solution": false}
got = drive(sorted_vertices, ("chain", 500))
assert_equal(len(got), 501, "number of tensors in a chain of 500 operations")
check_topological_order(got, ("chain", 500), "topological_sort(chain of 500 operations)")
print("topological_sort: a chain of 500 operations works")
### BEGIN HIDDEN TESTS
try:
    got = drive(sorted_vertices, ("chain", 20_000))
except RecursionError:
    raise AssertionError(
        "topological_sort hit Python's recursion limit on a chain of 20,000 operations: "
        "use an explicit stack instead of recursion"
    ) from None
assert_equal(len(got), 20_001, "number of tensors in a chain of 20,000 operations")
assert got == list(range(20_000, -1, -1)), "topological_sort(chain of 20,000): the chain is out of order"
### END HIDDEN TESTS

# %% [markdown]
# With the order in hand, look at the running example below: the output comes last and every operation after the
# values it reads. The inputs, however, need not all come first — a depth-first sort that follows the last input
# of `sub` first emits `x2` and `sin` before it even reaches `x1`. Many orders are valid; any of them is correct.
#
# The recursive version fails long before 100,000: below it is run on chains of growing depth.

# %%
def recursive_topological_sort(output):
    # The textbook version: correct, but one Python call per level of depth.
    order, done = [], set()

    def visit(tensor):
        if id(tensor) not in done:
            done.add(id(tensor))
            for parent in tensor.parents:
                visit(parent)
            order.append(tensor)

    visit(output)
    return order


with runs_your("topological_sort"):
    x1, x2, y = baydin_example()
    leaf_names = {id(x1): "x1", id(x2): "x2"}
    print(" -> ".join(leaf_names.get(id(t), t.op) for t in topological_sort(y)))
    for depth in (100, 900, 2_000, 100_000):
        x, y = chain(depth)
        try:
            recursive_topological_sort(y)
            recursive = "ok"
        except RecursionError:
            recursive = "RecursionError"
        print(f"depth {depth:>7,}: recursive {recursive:<15} iterative {len(topological_sort(y)):,} tensors")

# %% [markdown]
# ### Drawing the graph
#
# With a topological order, the graph can be drawn. `minigrad.draw` renders the graph below a tensor with
# Graphviz, listing its tensors with `topological_sort`. Tensors are boxes — green for inputs that require gradients, blue for data that does not, dashed for constants, orange for the output — and operations
# are grey ellipses between them, so each edge $j \to i$ of $G$ appears as tensor → operation → tensor. Where
# the order of the arguments matters (`sub`, `div`, `matmul`) the edges into the operation are numbered 0, 1.
# `show_data=True` prints the values, `names=` labels tensors.
#
# Here is the running example of section 2, its variables named as in the evaluation trace:

# %%
x1, x2 = mg.tensor(2.0, requires_grad=True), mg.tensor(5.0, requires_grad=True)
v3, v4, v5 = x1.log(), x1 * x2, x2.sin()
v6 = v3 + v4
y = v6 - v5
with runs_your("topological_sort"):
    display(mg.draw(y, show_data=True, names={"x1": x1, "x2": x2, "v3": v3, "v4": v4, "v5": v5, "v6": v6, "y": y}))


# %% [markdown]
# Because the graph is built by running code, ordinary control flow shapes it. Computing $x^n$ by repeated
# squaring produces a different graph for every $n$ — and only the operations the result actually depends on
# are below it. For $n = 13 = 1101_2$ the loop squares three times to get $x^2, x^4, x^8$ and multiplies the
# result by $x$, $x^4$ and $x^8$ (the set bits); the fourth squaring, $x^{16}$, is computed but never used, so
# it is not part of the graph of `result`. Follow the values in the drawing below.

# %%
def power_by_squaring(x, n):
    # x**n with O(log n) multiplications: the bits of n decide which operations happen.
    result = mg.tensor(1.0)
    while n:
        if n & 1:
            result = result * x
        x = x * x
        n >>= 1
    return result

x = mg.tensor(1.5, requires_grad=True)
p = power_by_squaring(x, 13)
print(f"1.5**13 = {p.item():.4f} (numpy: {1.5 ** 13:.4f})")
with runs_your("topological_sort"):
    display(mg.draw(p, show_data=True, names={"x": x, "x**13": p}))


# %% [markdown]
# ## 4. The size of a graph: $|V|$ and $|E|$
#
# $|V|$ counts tensors: inputs, constants, intermediate results and the output. $|E|$ counts the
# (input, operation) pairs — one edge per argument an operation receives. An operation may use the same tensor
# twice: in `x * x` the product has two edges from `x`, so the graph is really a *multigraph*; counting each
# argument is what matters for cost, because the operation reads (and its derivative rule handles) each argument
# separately. For the running example $|V| = 7$ and $|E| = 8$.

# %% nbgrader={"grade": false, "grade_id": "count_nodes_edges", "locked": false, "schema_version": 3, "solution": true}
def count_nodes_edges(output):
    """(|V|, |E|) of the graph below `output`, as two ints.

    |V| is the number of distinct tensors `output` depends on, itself, leaves and constants included.
    |E| is the number of (input, operation) pairs: the sum over tensors of the number of inputs
    of the operation that made it, so `x * x` has |V| = 2 and |E| = 2. Use `topological_sort`.
    """
    ### BEGIN SOLUTION
    order = topological_sort(output)
    return len(order), sum(len(tensor.parents) for tensor in order)
    ### END SOLUTION


# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_count", "locked": true, "schema_version": 3, "solution": false}
def counted(case):
    """Driver: what your count_nodes_edges returns for the case's graph (a tuple, whatever it returned)."""
    output, _ = graph(case)
    got = count_nodes_edges(output)
    return tuple(got) if isinstance(got, (tuple, list)) else f"a {type(got).__name__}"


def failing_sort(cases):
    """Why your topological_sort fails on one of the cases' graphs (the first that fails), or None."""
    for case in cases:
        try:
            check_topological_order(drive(sorted_vertices, case, seconds=2), case, f"topological_sort({case!r})")
        except TimeoutError:
            return f"topological_sort({case!r}) did not finish within 2 seconds"
        except Exception as error:
            return f"{type(error).__name__}: {error}"
    return None


@contextlib.contextmanager
def your_sort_blamed(function, *cases):
    """Around a test of `function` (which uses your topological_sort) on the cases' graphs: when it fails and
    your topological_sort fails on one of those graphs too, the message says that the sort is the culprit."""
    try:
        yield
    except NotImplementedError:
        raise
    except Exception as error:
        reason = failing_sort(cases)
        if reason is None:
            raise
        raise AssertionError(f"{function} failed ({type(error).__name__}: {error}), and it uses your "
                             f"topological_sort, which fails on this graph: {reason}. Fix topological_sort first.") from None


def check_counts(case, expected, what, seconds=None):
    """Your count_nodes_edges on the case's graph must return `expected`; returns what it returned."""
    with your_sort_blamed("count_nodes_edges", case):
        got = drive(counted, case, seconds=seconds)
        assert_equal(got, expected, what)
    return got


# %% nbgrader={"grade": true, "grade_id": "test_count_nodes_edges", "locked": true, "points": 3, "schema_version": 3, "solution": false}
check_counts("baydin", (7, 8), "count_nodes_edges(ln(x1) + x1*x2 - sin(x2)) as (|V|, |E|)")
check_counts("leaf", (1, 0), "count_nodes_edges(leaf)")

# The constants 2.0 and 1.0 are leaves too: x, 2.0, x*2.0, 1.0, x*2.0 + 1.0.
check_counts("affine", (5, 4), "count_nodes_edges(x * 2.0 + 1.0)")
print("count_nodes_edges: counts are right")
### BEGIN HIDDEN TESTS
got = check_counts("square", (2, 2), "count_nodes_edges(x * x): x is one vertex used by two edges")
assert all(type(n) is int for n in got), f"count_nodes_edges: expected two ints, got {got!r}"
check_counts(("ladder", 10), (31, 40), "count_nodes_edges(ladder of depth 10)")
check_counts(("chain", 20_000), (20_001, 20_000), "count_nodes_edges(chain of 20,000 operations)")
# Right counts, but work that explodes on shared subgraphs: a walk that expands a tensor once per path to it
# never finishes on a ladder of depth 40 (2**40 paths).
try:
    check_counts(("ladder", 40), (121, 160), "count_nodes_edges(ladder of depth 40)", seconds=2)
except TimeoutError:
    raise AssertionError(
        "count_nodes_edges did not finish on a ladder of depth 40 (121 tensors, 2**40 paths to x): "
        "look at each tensor's parents once (topological_sort lists each tensor once)"
    ) from None
### END HIDDEN TESTS

# %% [markdown]
# ## 5. The forward pass, again
#
# The graph remembers every operation with its parameters (the `axis` of a sum, the shape of a reshape, the
# exponent of a power), so it can be **re-run**: give the leaves new values and recompute every vertex
#
# $$ v_i = \varphi_i\big(v_{\mathrm{Pa}(i)}\big), \qquad i = d+1, \dots, N, $$
#
# in topological order, so that each parent's new value exists before it is read. This is the forward pass of a
# *static* graph — record once, evaluate many times — the idea chapter 8 develops into a compiler.
#
# In `minigrad` a tensor's node holds `op`, a `Primitive` whose `forward(*arrays, **params)` computes the
# operation with numpy, `inputs` and `params`:

# %%
x = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
s = (x * x).sum(axis=1)
print("op:", s.node.op.name, "  params:", s.node.params)
print("recomputed by hand:", s.node.op.forward(*[p.data for p in s.node.inputs], **s.node.params), " stored:", s.data)


# %% [markdown]
# Implement `evaluate`. Keep new values in a dictionary keyed by tensor identity, and **do not overwrite**
# `tensor.data`: the recorded graph must stay as it was (a later backward pass needs the values it saved).
# Leaves that are not in `inputs` — constants, or inputs you chose not to change — keep their recorded values.
# Every vertex is computed once and every edge read once: the cost is $O(|V| + |E|)$ operations, each as
# expensive as the numpy call behind it.

# %% nbgrader={"grade": false, "grade_id": "evaluate", "locked": false, "schema_version": 3, "solution": true}
def evaluate(output, inputs):
    """The value of `output` recomputed with new leaf values; the graph itself is left unchanged.

    `inputs` maps leaf tensors to their new values (numpy arrays or numbers); leaves not in it keep
    their current `.data`. Computes each tensor below `output` once, in topological order, with
    `node.op.forward(*parent_values, **node.params)`, and returns the output's new value as a
    numpy array (or numpy scalar). Must work on a chain of 20,000 operations.
    """
    ### BEGIN SOLUTION
    values = {}
    for tensor in topological_sort(output):
        if tensor.is_leaf:
            values[id(tensor)] = inputs.get(tensor, tensor.data)
        else:
            node = tensor.node
            values[id(tensor)] = node.op.forward(*[values[id(p)] for p in node.inputs], **node.params)
    return values[id(output)]
    ### END SOLUTION


# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_evaluate", "locked": true, "schema_version": 3, "solution": false}
def evaluated(case, new_values):
    """Driver: your evaluate on the case's graph with new values for the named leaves; returns the value and
    every named tensor's .data afterwards (evaluate must leave the recorded graph as it was)."""
    output, named = graph(case)
    value = evaluate(output, {named[name]: v for name, v in new_values.items()})
    return {"value": np.asarray(value), "data": {name: t.data.copy() for name, t in named.items()}}


def evaluated_twice(case, first, second):
    """Driver: two evaluate calls on one graph, with two sets of new values."""
    output, named = graph(case)
    a = np.array(evaluate(output, {named[k]: v for k, v in first.items()}))
    b = np.array(evaluate(output, {named[k]: v for k, v in second.items()}))
    return a, b


def check_unchanged(got, case, what):
    """The named tensors' data after evaluate equal the recorded values (the checker's own graph)."""
    _, named = graph(case)
    for name, tensor in named.items():
        assert_close(got["data"][name], tensor.data, f"{name}.data after {what} (evaluate must not overwrite the recorded graph)")


# %% nbgrader={"grade": true, "grade_id": "test_evaluate_values", "locked": true, "points": 3, "schema_version": 3, "solution": false}
with your_sort_blamed("evaluate", "baydin"):
    got = drive(evaluated, "baydin", {"x1": np.array(3.0), "x2": np.array(-1.0)})
    assert_close(got["value"], np.log(3.0) + 3.0 * -1.0 - np.sin(-1.0), "evaluate(y, {x1: 3, x2: -1}) for y = ln(x1) + x1*x2 - sin(x2)")
    check_unchanged(got, "baydin", "evaluate(y, {x1: 3, x2: -1})")

    # A leaf missing from `inputs` keeps its value.
    got = drive(evaluated, "baydin", {"x1": np.array(4.0)})
    assert_close(got["value"], np.log(4.0) + 4.0 * 5.0 - np.sin(5.0), "evaluate(y, {x1: 4}) with x2 left at 5")
print("evaluate: values are right")
### BEGIN HIDDEN TESTS
# Shared subexpressions and constants, on arrays.
new = np.array([1.0, -2.0, 0.5])
with your_sort_blamed("evaluate", "shared_array", "leaf"):
    got = drive(evaluated, "shared_array", {"x": new})
    assert_close(got["value"], np.sin(new) ** 2 + 2 * np.sin(new) - 1.0, "evaluate(sin(x)**2 + 2 sin(x) - 1) at a new x")
    check_unchanged(got, "shared_array", "evaluate(sin(x)**2 + 2 sin(x) - 1)")

    # Evaluating twice with different values gives independent answers.
    first, second = drive(evaluated_twice, "shared_array", {"x": new}, {"x": 2 * new})
    assert_close(first, np.sin(new) ** 2 + 2 * np.sin(new) - 1.0, "the first of two evaluate calls")
    assert_close(second, np.sin(2 * new) ** 2 + 2 * np.sin(2 * new) - 1.0, "the second of two evaluate calls")

    # A leaf as the output.
    assert_close(drive(evaluated, "leaf", {"x": new})["value"], new, "evaluate(x, {x: new}) for a leaf x")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_evaluate_params", "locked": true, "points": 2, "schema_version": 3, "solution": false}
rng = np.random.default_rng(1)
W_new, X_new = rng.normal(size=(3, 2)), rng.normal(size=(4, 3))
with your_sort_blamed("evaluate", "matmul"):
    got = drive(evaluated, "matmul", {"W": W_new, "X": X_new})
    assert_close(got["value"], np.tanh(X_new @ W_new).sum(axis=0), "evaluate(tanh(X @ W).sum(axis=0)) at new X, W")
print("evaluate: operations with parameters work")
### BEGIN HIDDEN TESTS
x_new = rng.uniform(1, 2, size=(2, 3, 4))
expected = np.exp(((x_new ** 1.5).sum(axis=(0, 2), keepdims=True).reshape(3, 1) * x_new[0, :, 1:3]).max(axis=1))
with your_sort_blamed("evaluate", "power_keepdims", "transpose_mean"):
    got = drive(evaluated, "power_keepdims", {"x": x_new})
    assert_close(got["value"], expected, "evaluate with power, keepdims sum, reshape, indexing and max")
    got = drive(evaluated, "transpose_mean", {"x": x_new})
    assert_close(got["value"], np.abs(x_new.transpose(2, 0, 1) - x_new.mean()).sum(), "evaluate with transpose, mean and abs")
    check_unchanged(got, "transpose_mean", "evaluate with transpose, mean and abs")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_evaluate_deep", "locked": true, "points": 2, "schema_version": 3, "solution": false}
expected = 0.9
for _ in range(500):
    expected = np.tanh(expected)
with your_sort_blamed("evaluate", ("chain", 500)):
    assert_close(drive(evaluated, ("chain", 500), {"x": np.array(0.9)})["value"], expected, "evaluate(chain of 500 tanh) at x = 0.9")
print("evaluate: a chain of 500 operations works")
### BEGIN HIDDEN TESTS
expected = 3.0
for _ in range(20_000):
    expected = np.tanh(expected)
try:
    with your_sort_blamed("evaluate", ("chain", 20_000)):
        got = drive(evaluated, ("chain", 20_000), {"x": np.array(3.0)})
except RecursionError:
    raise AssertionError("evaluate hit Python's recursion limit on a chain of 20,000 operations: walk the topological order") from None
assert_close(got["value"], expected, "evaluate(chain of 20,000 tanh) at x = 3")

# The right value, but work that explodes on shared subgraphs: recomputing a tensor once per path to it never
# finishes on a ladder of depth 40 (2**40 paths).
expected = 0.9
for _ in range(40):
    expected = np.sin(expected) * np.cos(expected)
try:
    with your_sort_blamed("evaluate", ("ladder", 40)):
        got = drive(evaluated, ("ladder", 40), {"x": np.array(0.9)}, seconds=2)
except TimeoutError:
    raise AssertionError(
        "evaluate did not finish on a ladder of depth 40 (121 tensors, 2**40 paths to x): compute each tensor "
        "once, in topological order, and keep its value"
    ) from None
assert_close(got["value"], expected, "evaluate(ladder of depth 40) at x = 0.9")
### END HIDDEN TESTS

# %% [markdown]
# ## 6. Experiments
#
# ### 6.1 The forward pass is linear in the size of the graph
#
# The claim "a forward pass costs $O(|V| + |E|)$" is easy to check: build chains of growing length, and time
# your `topological_sort` and `evaluate` on them. On a log–log plot (left) a linear cost is a line of slope 1, a
# quadratic one of slope 2; the right panel divides the time by $|V| + |E|$, so that a linear cost stays level.
#
# The timings use the course's timing helpers, `best_time` and `interleaved_times` from `minigrad.testing`: the
# **CPU time** of this process, so that other programs on a busy machine do not count; the fastest of three
# rounds in which the two walks take turns, because interference only ever adds time; numpy on one thread; and
# Python's cyclic garbage collector paused, as the standard `timeit` module does — each of its full collections
# walks every live object (here, the whole 100,000-tensor chain) and would add a cost that grows with everything
# else the program holds, not with the algorithm being measured.

# %%
sizes = [1_000, 3_000, 10_000, 30_000, 100_000]
work, sort_seconds, evaluate_seconds = [], [], []
with runs_your("topological_sort", "count_nodes_edges", "evaluate"):
    for n in tqdm(sizes, desc="chains"):
        x, y = chain(n)
        V, E = count_nodes_edges(y)
        work.append(V + E)
        seconds = interleaved_times({"sort": lambda: topological_sort(y),
                                     "evaluate": lambda: evaluate(y, {x: np.array(0.1)})}, repeat=3)
        sort_seconds.append(seconds["sort"])
        evaluate_seconds.append(seconds["evaluate"])

    work = np.array(work)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.loglog(work, sort_seconds, "o-", label="topological_sort")
    left.loglog(work, evaluate_seconds, "s-", label="evaluate")
    left.loglog(work, evaluate_seconds[0] * work / work[0], "k:", label="slope 1 (linear)")
    left.loglog(work, evaluate_seconds[0] * (work / work[0]) ** 2, "k--", alpha=0.4, label="slope 2 (quadratic)")
    left.set_ylim(top=10 * max(evaluate_seconds))
    left.set_xlabel("|V| + |E|")
    left.set_ylabel("seconds of CPU time (fastest of 3)")
    left.set_title("Time of one walk over a chain")
    left.legend()
    right.semilogx(work, 1e6 * np.array(sort_seconds) / work, "o-", label="topological_sort")
    right.semilogx(work, 1e6 * np.array(evaluate_seconds) / work, "s-", label="evaluate")
    right.set_ylim(bottom=0, top=1e6 * 3 * max(np.array(evaluate_seconds) / work))
    right.set_xlabel("|V| + |E|")
    right.set_ylabel("µs per vertex or edge")
    right.set_title("Cost per vertex or edge (level = linear)")
    right.legend()
    plt.tight_layout()
    plt.show()
    for name, seconds in [("topological_sort", sort_seconds), ("evaluate", evaluate_seconds)]:
        per_element = np.array(seconds) / work
        print(f"{name:>16}: {1e6 * per_element[-1]:.2f} µs per vertex or edge on the longest chain, "
              f"{per_element[-1] / per_element[0]:.1f}x the cost on the shortest (a quadratic walk: {work[-1] / work[0]:.0f}x)")

# %% [markdown]
# Both walks follow the slope-1 line over two decades of sizes, far below the quadratic one. Per vertex or edge
# (right), the cost changes by far less than the hundredfold of a quadratic walk: it rises a little on the largest
# chains only (most likely the memory system: 100,000 tensors and their nodes no longer fit in the processor's
# caches, so each step of the walk waits longer for memory). The printed ratios say how much, on this machine,
# this time.

# %% [markdown]
# ### 6.2 What a neural network's graph looks like
#
# In `minigrad` a vertex is a whole tensor, not a single number. A multi-layer perceptron's loss therefore has a
# graph whose size depends on the number of *layers*, not on their *width*: a wider layer makes each vertex more
# expensive (a bigger matrix product) without adding vertices. Below, a two-layer network on a batch of 8 points,
# drawn top to bottom (`rankdir="TB"`: a long graph reads better that way) with its parameters named, then the
# counts for deeper and wider networks.

# %%
rng = np.random.default_rng(0)
X = mg.tensor(rng.normal(size=(8, 2)))
targets = mg.tensor(rng.normal(size=(8, 1)))

model = mg.nn.MLP([2, 4, 1], activation="tanh", rng=rng)
loss = mg.nn.mse_loss(model(X), targets)
with runs_your("count_nodes_edges", "topological_sort"):
    print("(|V|, |E|) of a 2-4-1 MLP's loss:", count_nodes_edges(loss))
    display(mg.draw(loss, rankdir="TB", names={"X": X, "targets": targets, "loss": loss, **dict(model.named_parameters())}))

# %%
with runs_your("count_nodes_edges", "evaluate"):
    depths, widths = [1, 2, 4, 8], [4, 64, 256]
    batch = mg.tensor(rng.normal(size=(256, 2)))
    batch_targets = mg.tensor(rng.normal(size=(256, 1)))
    vertices = np.zeros((len(widths), len(depths)), dtype=int)
    seconds = np.zeros(len(widths))
    for i, width in enumerate(widths):
        for j, depth in enumerate(depths):
            model = mg.nn.MLP([2] + [width] * depth + [1], rng=rng)
            loss = mg.nn.mse_loss(model(batch), batch_targets)
            vertices[i, j] = count_nodes_edges(loss)[0]
        seconds[i] = best_time(lambda: evaluate(loss, {}))  # the depth-8 network of this width

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for i, (width, marker) in enumerate(zip(widths, "o^s")):
        left.plot(depths, vertices[i], marker=marker, markersize=10 - 3 * i, label=f"width {width}")
    left.set_xlabel("hidden layers")
    left.set_ylabel("|V| (tensors in the graph)")
    left.set_title("|V| grows with depth, not width")
    left.legend()
    right.bar([str(w) for w in widths], 1e3 * seconds)
    right.set_yscale("log")
    right.set_xlabel("width of the 8 hidden layers")
    right.set_ylabel("evaluate, ms of CPU time (batch 256, log scale)")
    right.set_title("...but each vertex costs more when wider")
    plt.tight_layout()
    plt.show()

# %% [markdown]
# ## Summary
#
# * A computation is a DAG $G = (V, E)$: inputs $v_i = x_i$, intermediate vertices
#   $v_i = \varphi_i(v_{\mathrm{Pa}(i)})$, and an output $y = v_N$.
# * Define-by-run frameworks record the graph as the code runs; each result points to its operation and inputs,
#   never the other way round, so walks go from the output to the leaves.
# * A topological order puts every vertex after its parents. Depth-first search with an explicit stack finds one
#   in $O(|V| + |E|)$, visits shared subexpressions once, detects cycles, and never touches the recursion limit.
# * Re-running the forward pass in topological order costs $O(|V| + |E|)$ operations — for tensors, a vertex is as
#   expensive as its numpy operation.
#
# Chapter 2 walks the same order backwards to compute derivatives of $y$ with respect to every vertex at once:
# backpropagation.
#
# ## References
#
# * «Граф вычислений» (Computational graph, in Russian). *MachineLearning wiki*, July 2026.
#   http://machinelearning.ru/wiki/index.php?title=%D0%93%D1%80%D0%B0%D1%84_%D0%B2%D1%8B%D1%87%D0%B8%D1%81%D0%BB%D0%B5%D0%BD%D0%B8%D0%B9
#   (The source article this course follows: computational graphs, backpropagation and its alternatives,
#   higher-order derivatives, systems of graphs, checkpointing, vanishing gradients, static graphs and fusion.)
# * S. Linnainmaa. Taylor expansion of the accumulated rounding error. *BIT Numerical Mathematics* 16(2):146–160, 1976.
#   (The reverse accumulation of derivatives over a computational graph.)
# * D. E. Rumelhart, G. E. Hinton, R. J. Williams. Learning representations by back-propagating errors.
#   *Nature* 323:533–536, 1986.
# * A. Griewank, A. Walther. *Evaluating Derivatives: Principles and Techniques of Algorithmic Differentiation*,
#   2nd ed. SIAM, 2008. (Evaluation traces and computational graphs, chapter 2.)
# * A. G. Baydin, B. A. Pearlmutter, A. A. Radul, J. M. Siskind. Automatic differentiation in machine learning:
#   a survey. *Journal of Machine Learning Research* 18(153):1–43, 2018. (The running example is theirs.)
# * A. Paszke et al. PyTorch: an imperative style, high-performance deep learning library. *NeurIPS* 2019.
#   (Define-by-run in practice.)
