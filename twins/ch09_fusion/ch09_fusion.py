# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   language_info:
#     name: python
# ---

# %% [markdown]
# # Chapter 9 — Operator fusion: one kernel instead of many
#
# Chapter 8 turned a Python function into a static graph and ran it with an interpreter that calls numpy once per
# operation. Each of those operations reads its operands from main memory and writes its result back — even when the
# very next operation reads that result again at once. The article this course follows (the MachineLearning wiki's «Граф вычислений», *Computational graph*: see the
# references) names the cure:
#
# > **Operator fusion.** When a graph contains a matrix product, the addition of a bias vector and a ReLU one after
# > another, the compiler merges them into one specialised kernel for the GPU. This removes the cost of writing the
# > intermediate tensors to the accelerator's slow global memory (HBM) and reading them back.
#
# Fusion is the central optimisation of deep-learning compilers: XLA (TensorFlow, JAX), TVM (Chen et al. 2018),
# TorchInductor behind `torch.compile`, and before them Halide (Ragan-Kelley et al. 2013), the image-processing
# language that made the trade-off between locality, parallelism and recomputation explicit. In this chapter you build
# the pieces of a small fusing compiler for minigrad's static graphs:
#
# 1. a **cost model**: for elementwise operations, time is bytes moved, not arithmetic (the roofline model of
#    Williams et al. 2009), checked against this machine's measured copy bandwidth;
# 2. `fusible_groups(graph)`: which operations can share one kernel;
# 3. `kernel_source(body)`: the Python source of a [Numba](https://numba.pydata.org) kernel that computes a whole
#    group in one loop, loading each element once and storing each result once;
# 4. `fused_linear_relu(x, W, b)`: a dense layer — matrix product, bias and ReLU — in one pass.
#
# The library then puts the pieces together: `jit.compile(fn, backend="numba")` generates one CPU kernel per group, and
# `backend="cuda"` the same kernels for NVIDIA GPUs — run on Numba's CUDA simulator when there is no GPU. The running
# example is GELU, the activation of BERT and GPT (Hendrycks & Gimpel 2016), in its tanh form:
#
# $$ \mathrm{GELU}(x) = x\,\Phi(x) \;\approx\; \tfrac12\, x \left(1 + \tanh\!\Big(\sqrt{2/\pi}\,\big(x + 0.044715\, x^3\big)\Big)\right). $$
#
# Numba compiles a Python function to machine code with LLVM the first time it is called (a fraction of a second per
# kernel). The library keeps its compiled kernels on disk, so the second run of this notebook is faster than the first.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib
import math
import time

import numpy as np
import matplotlib.pyplot as plt
import numba
from numba import njit
from tqdm.auto import tqdm

import minigrad as mg
import minigrad.jit as jit
from minigrad.jit import ELEMENTWISE, EXPRESSIONS, codegen
from minigrad.jit.backends.numpy_backend import run_graph
from minigrad.jit.fusion import VIEWS, broadcasts_to, check_groups, fuse, is_broadcast_view
from minigrad.jit.kernel_cache import load_module
from minigrad.testing import assert_close, assert_equal, drive, interleaved_times


@contextlib.contextmanager
def runs_your(*names):
    """Around a demonstration that runs your functions: until they work, it says so instead of stopping Run All."""
    try:
        yield
    except Exception as error:
        print(f"This demonstration runs your {', '.join(names)}; it stopped with {type(error).__name__}: {error}\n"
              f"Write (or fix) the function it names above (and run the cells before this one), then run this cell again.")


# %% [markdown]
# ## 1. What an elementwise operation costs: its memory traffic
#
# A core of this machine performs tens of floating-point operations in the time main memory delivers one float32. The
# **roofline model** (Williams, Waterman & Patterson 2009) turns this into a bound on the time of a kernel that performs
# $W$ floating-point operations and moves $Q$ bytes between the processor and memory:
#
# $$ T \;\ge\; \max\!\Big(\frac{W}{P},\ \frac{Q}{B}\Big), $$
#
# with $P$ the peak arithmetic rate and $B$ the memory bandwidth. The ratio $I = W/Q$ is the kernel's **arithmetic
# intensity**. Below the machine's balance $P/B$ — around ten flops per byte for a CPU core, a few hundred for an H100 or
# H200 GPU — a kernel is **memory-bound**: it waits for bytes, and its speed is $B$ divided by the bytes it moves per
# element. Elementwise operations sit far below the balance: $y = x + 1$ in float32 does one flop per 8 bytes
# ($I = 1/8$), and even `tanh`, a few dozen flops, is memory-bound on a GPU.
#
# So count bytes. Run GELU as numpy runs it, one operation at a time: each operation reads its array operands and writes
# a new array (a scalar such as $0.5$ stays in a register, and an operand read twice, as in $x \cdot x$, comes
# from memory once). Fused into one loop, the formula reads $x$ once and writes
# $y$ once: 8 bytes per float32 element. We write $x^3$ as $x \cdot x \cdot x$: numpy's float32 `power` calls a slow
# scalar routine per element, which would hide the effect we want to see (the generated kernels turn small integer
# powers into products anyway).

# %% nbgrader={"grade": false, "grade_id": "helpers_examples", "locked": true, "schema_version": 3, "solution": false}
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu(x):
    """GELU, tanh form, in minigrad operations."""
    return 0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))).tanh())


def softmax_tanh(x):
    """tanh(softmax(x)) along the last axis: elementwise operations around a reduction (section 2)."""
    e = x.exp()
    return (e / e.sum(axis=1, keepdims=True)).tanh()


# %%
def bytes_per_element(graph, node_ids):
    """Bytes the operations `node_ids` move per element when each runs on its own: the distinct array
    operands it reads plus the result it writes (values of size one stay in registers; x * x reads x once)."""
    by_id = {n.id: n for n in graph.nodes}
    total = 0.0
    for i in node_ids:
        node = by_id[i]
        arrays = [by_id[j] for j in set(node.inputs) if by_id[j].size > 1] + [node]
        total += sum(a.nbytes for a in arrays) / node.size
    return total


gelu_graph = jit.trace(gelu, np.zeros(1024, np.float32))
print(gelu_graph)
operations = [n.id for n in gelu_graph.nodes if n.op not in ("input", "constant")]
unfused_bytes = bytes_per_element(gelu_graph, operations)
print(f"\n{len(operations)} operations; one at a time they move {unfused_bytes:.0f} bytes per element, "
      f"fused 8: {unfused_bytes / 8:.0f}x less traffic")

# %% [markdown]
# The bandwidth $B$ of this machine is measured as the STREAM benchmark does (McCalpin 1995): the best rate of
# copying one large float32 array into another ($y = x$) and of scaling it ($y = 3x$), each moving 4 bytes in and 4 bytes
# out per element (on some machines the library's copy is the slower of the two). Then each of GELU's operations is timed alone, writing into a
# preallocated array (as chapter 8's interpreter does, so allocation is not counted), and compared with the roofline
# prediction $Q/B$.

# %%
# Timing: minigrad.testing.interleaved_times measures each contender's CPU time (not wall time: other programs on a
# busy machine do not count) with the garbage collector paused and numpy's BLAS on one thread, the contenders taking
# turns, and keeps each one's fastest run (interference only ever adds time).
N = 1 << 22  # 4M float32 = 16 MB per array: far larger than the caches
rng = np.random.default_rng(0)
x = rng.standard_normal(N).astype(np.float32)
t = [np.empty_like(x) for _ in range(9)]  # one result array per operation, allocated once
stream_kernels = [lambda: np.copyto(t[0], x), lambda: np.multiply(x, np.float32(3.0), out=t[0])]  # STREAM copy, scale
stream_seconds = min(interleaved_times(dict(enumerate(stream_kernels)), repeat=20).values())
bandwidth = 8 * N / stream_seconds
print(f"streaming bandwidth: {bandwidth / 1e9:.1f} GB/s (8 bytes per element: 4 read, 4 written)")

def numpy_gelu_steps(x, t):
    """GELU as numpy runs it, one operation at a time, each writing into its own preallocated array
    t[k]: a list of (operation, call, bytes moved per element)."""
    f32 = np.float32
    return [
        ("x·x", lambda: np.multiply(x, x, out=t[0]), 8),
        ("x²·x", lambda: np.multiply(t[0], x, out=t[1]), 12),
        ("0.044715·x³", lambda: np.multiply(t[1], f32(0.044715), out=t[2]), 8),
        ("x + …", lambda: np.add(x, t[2], out=t[3]), 12),
        ("√(2/π)·…", lambda: np.multiply(t[3], f32(SQRT_2_OVER_PI), out=t[4]), 8),
        ("tanh", lambda: np.tanh(t[4], out=t[5]), 8),
        ("1 + …", lambda: np.add(t[5], f32(1.0), out=t[6]), 8),
        ("0.5·x", lambda: np.multiply(x, f32(0.5), out=t[7]), 8),
        ("…·…", lambda: np.multiply(t[7], t[6], out=t[8]), 12),
    ]


steps = numpy_gelu_steps(x, t)
fastest = interleaved_times({name: fn for name, fn, _ in steps}, repeat=7)
measured = [fastest[name] for name, _, _ in steps]
predicted = [q * N / bandwidth for _, _, q in steps]
assert_close(t[8], 0.5 * x * (1 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3))), "the steps compute GELU", rtol=1e-5, atol=1e-6)

fig, ax = plt.subplots(figsize=(10, 3.5))
positions = np.arange(len(steps))
ax.bar(positions - 0.2, np.array(measured) * 1e3, width=0.4, label="measured (numpy, one operation)")
ax.bar(positions + 0.2, np.array(predicted) * 1e3, width=0.4, label="bytes moved / streaming bandwidth")
ax.set_xticks(positions, [name for name, _, _ in steps])
ax.set_xlabel("operation (one numpy call, into a preallocated array)")
ax.set_ylabel("ms of CPU time (fastest of 7)")
ax.set_title(f"GELU on {N:,} float32, one operation at a time")
ax.margins(y=0.3)
ax.legend(loc="upper center", ncol=2)
plt.show()
print(f"all nine operations: {sum(measured) * 1e3:.1f} ms measured, {sum(predicted) * 1e3:.1f} ms predicted; "
      f"a fused kernel at streaming speed: {8 * N / bandwidth * 1e3:.1f} ms")


# %% [markdown]
# Every operation takes about what its bytes predict, or somewhat more (the prediction is a floor, $T \ge Q/B$), and the
# ones that move 12 bytes per element take longer than the ones that move 8: their arithmetic is free, they are limited by
# memory. That holds for `tanh` too, a few dozen flops per element: numpy's vectorised `tanh` does them in less time than
# memory takes to deliver the element. The sum over the operations is the time of unfused execution, and the last number
# is the floor for *any* implementation of GELU that reads $x$ and writes $y$: the gap between the two is what fusion can
# recover.
#
# ## 2. Which operations can share a kernel
#
# A **fusion group** is a set of nodes computed by one kernel: a loop over the elements of the output that evaluates every
# operation of the group on one element before moving to the next. Intermediate values then live in registers; only the
# group's inputs are read from memory and only its result is written. Not every set of nodes can be a group:
#
# * **Elementwise operations only** (`ELEMENTWISE`: `add`, `mul`, `tanh`, `relu`, …): output element $i$ depends on
#   element $i$ of each operand. A reduction (`sum`, `max`) depends on *all* elements of its input, a matrix product on a
#   row and a column, indexing and transposes on elements elsewhere: they **end** a group. Fusing a reduction into the
#   loop would recompute the whole sum for every output element.
# * **One shape**: every elementwise member has the shape of the group's last node, its **sink** — the loop's
#   iteration space. Operands of other shapes (a bias vector, a scalar) are *inputs*, read with broadcasting for free.
# * **Broadcast views**: a `broadcast_to`, or a `reshape` that only inserts or removes axes of length one
#   (`is_broadcast_view(node, operand_shape)`), does not move data; it only changes how the operand is indexed. Such a
#   view joins the group that reads it (the kernel reads the view's operand directly, with broadcasting), but it never
#   starts a group of its own, and its operand stays outside.
# * **One output**: a kernel writes one array. Every member except the sink must be read only by elementwise members of
#   the same group, and must not be a graph output. A value needed elsewhere is materialised once, as the sink of its own
#   group, and read by the others (XLA would sometimes recompute a cheap one instead; we keep it simple).
#
# The one-output rule also keeps groups **convex**: no path leaves a group and comes back into it. Without it, a group
# could need, as an input, a value computed *from* one of its own members — the fused node would depend on itself.
#
# These rules are local, so groups can be grown greedily **backwards**, as dead-code elimination walked the graph in
# chapter 8: visit the nodes in reverse topological order, so that all readers of a node are placed before the node
# itself. A node joins the group of its readers when they all are elementwise members of one group and the node fits
# that group (rules above); otherwise an elementwise node starts a new group, of which it is the sink, and a view or
# any other node stays out of all groups.

# %% [markdown]
# ### Graded: `fusible_groups(graph)`
#
# Return the groups as a list of lists of node ids, each list sorted, the lists ordered by their last (sink) id. Every
# elementwise node must be in exactly one group (possibly alone); a view is in at most one; no other node is in any.
# `graph.users()` gives, for each node id, the ids of the nodes that read it.

# %% nbgrader={"grade": false, "grade_id": "fusible_groups", "locked": false, "schema_version": 3, "solution": true}
def fusible_groups(graph):
    """The fusion groups of `graph`: a list of sorted lists of node ids, ordered by their last id.

    Visit the nodes in reverse topological order. A node joins the group of its readers when
    all of its readers are elementwise members of that one group, it is not a graph output, and
    * it is elementwise (op in ELEMENTWISE) with the group's shape (the shape of its sink), or
    * it is a broadcast view (op in VIEWS and is_broadcast_view(node, shape of its operand))
      whose shape broadcasts to the group's shape (broadcasts_to(node.shape, group_shape)).
    Otherwise an elementwise node starts a new group, of which it is the sink; other nodes
    (views included) are in no group.
    """
    ### BEGIN SOLUTION
    users = graph.users()
    outputs = set(graph.outputs)
    shapes = {n.id: n.shape for n in graph.nodes}
    group_of = {}  # node id -> the id of its group's sink
    elementwise_member = {}  # node id -> True for elementwise members, False for views
    for node in reversed(graph.nodes):
        readers = users[node.id]
        groups = {group_of.get(r) for r in readers}
        sink = None
        if readers and node.id not in outputs and len(groups) == 1 and None not in groups:
            if all(elementwise_member[r] for r in readers):
                sink = groups.pop()
        if node.op in ELEMENTWISE:
            if sink is not None and node.shape == shapes[sink]:
                group_of[node.id] = sink
            else:
                group_of[node.id] = node.id
            elementwise_member[node.id] = True
        elif (
            node.op in VIEWS
            and sink is not None
            and is_broadcast_view(node, shapes[node.inputs[0]])
            and broadcasts_to(node.shape, shapes[sink])
        ):
            group_of[node.id] = sink
            elementwise_member[node.id] = False
    groups = {}
    for member, sink in group_of.items():
        groups.setdefault(sink, []).append(member)
    return [sorted(groups[sink]) for sink in sorted(groups)]
    ### END SOLUTION


# %% [markdown]
# The tests compare your groups with the ones the rules define, and check them with `check_groups(graph, groups)`, an
# independent restatement of the rules that raises an error naming the rule that fails and the node that breaks it.

# %% nbgrader={"grade": false, "grade_id": "helpers_groups", "locked": true, "schema_version": 3, "solution": false}
from minigrad.jit import Graph, Node

# How the tests work: a *driver* (the functions marked "Driver") calls your function and returns what came back
# as plain data (numbers, strings, lists, dicts, numpy arrays), never as objects: a Graph crosses as the rows of
# `graph_data`. `drive(driver, ...)` runs it. The test then rebuilds what it needs from that data and checks it with
# the library's own tools (run_graph, check_plan, ...) and values it computes itself. When your notebook is graded,
# drivers run beside your code and the tests in a separate process: only the data crosses.

# `graph_data` and `graph_from_data` (minigrad.jit.plain) are that crossing: a Graph as plain rows, and back, every
# field checked on the way in (`int_data`: an id or a size as an int, or a description); `validated` is
# `graph.validate()` failing with the name of the call under test.
from minigrad.jit.plain import graph_data, graph_from_data, int_data, validated


def program(source, names=None):
    """The function a test describes by its source text, e.g. "lambda x, y: (x * y + 1.0).tanh()", reading the
    arrays in `names` (weights): drivers and tests build it from the same text, so both get the same function."""
    return eval(source, {**globals(), **(names or {})})


def groups_by_op(graph, groups):
    """The groups with ops instead of ids, for readable failure messages."""
    by_id = {n.id: n.op for n in graph.nodes}
    return [[f"%{i} {by_id.get(i, '?')}" for i in group] for group in groups]


def grouped(datas):
    """Driver: your fusible_groups on each graph the test sent (as data); what each call returned, as lists of
    lists of ids (a description for anything else)."""
    results = []
    for data in datas:
        groups = fusible_groups(graph_from_data(data, "the test's graph"))
        if isinstance(groups, (list, tuple)) and all(isinstance(g, (list, tuple)) for g in groups):
            results.append([[int_data(i) for i in g] if isinstance(g, list) else f"a {type(g).__name__}" for g in groups]
                           if isinstance(groups, list) else f"a {type(groups).__name__}")
        else:
            results.append(f"{groups!r:.200}")
    return results


def groups_from_data(got, graph, what):
    """The groups as a list of lists of the graph's node ids (AssertionError, saying what, for anything else)."""
    if type(got) is not list or not all(type(g) is list and all(type(i) is int for i in g) for g in got):
        raise AssertionError(f"{what}: fusible_groups should return a list of lists of ids, got {got!r:.300}")
    ids = {n.id for n in graph.nodes}
    unknown = sorted({i for g in got for i in g} - ids)
    if unknown:
        raise AssertionError(f"{what}: fusible_groups returned ids the graph does not have: {unknown[:5]}")
    return got


def groups_of(graph, what):
    """Your fusible_groups for the test's graph (sent as data), checked to be a list of lists of its ids."""
    (got,) = drive(grouped, [graph_data(graph)])
    return groups_from_data(got, graph, what)


def expect_groups(fn, arrays, expected_ops, what):
    """Trace fn here, have the driver run your fusible_groups on the graph, compare with the groups (as lists of
    ops) expected, and check them with check_groups."""
    graph = jit.eliminate_dead_code(jit.trace(fn, *arrays))
    groups = groups_of(graph, what)
    by_id = {n.id: n.op for n in graph.nodes}
    got = [[by_id[i] for i in group] for group in groups]
    # Compared as sorted lists: another valid order of the graph's nodes (another tracer's) lists the same
    # groups in another order; check_groups then holds the ids to every rule.
    assert_equal(sorted(map(sorted, got)), sorted(map(sorted, expected_ops)),
                 f"the groups (as sorted lists of ops) of {what}; with ids: {groups_by_op(graph, groups)}")
    check_groups(graph, groups)
    return graph, groups


def random_program(rng, n_ops=12):
    """A random straight-line program on a (3, 4) input and a (4,) input: elementwise operations with
    broadcasting, reductions, a matrix product, reshapes and values read several times."""
    unary = [lambda a: a.tanh(), lambda a: a.exp() * 0.5, lambda a: a.relu(), lambda a: a.sigmoid(),
             lambda a: (a * a + 1.0).log(), lambda a: -a]
    binary = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, lambda a, b: a / (b * b + 1.0)]
    other = [lambda a: a.broadcast_to((3, 4)).sum(axis=-1, keepdims=True), lambda a: a.broadcast_to((3, 4)).max(axis=0),
             lambda a: a.broadcast_to((3, 4)) @ np.ones((4, 4)), lambda a: a.broadcast_to((3, 4)).T.T]
    choices = [(int(rng.integers(3)), int(rng.integers(99)), int(rng.integers(99)), int(rng.integers(6)))
               for _ in range(n_ops)]

    def program(x, b):
        pool = [x, b]
        for kind, i, j, k in choices:
            a, c = pool[i % len(pool)], pool[j % len(pool)]
            pool.append(unary[k](a) if kind == 0 else binary[k % 4](a, c) if kind == 1 else other[k % 4](a))
        return pool[-1].sum() + pool[-2].sum() + pool[-3].mean()

    return program


# %% nbgrader={"grade": true, "grade_id": "test_fusible_groups_chains", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# GELU: one group of nine operations.
graph, groups = expect_groups(gelu, [np.ones(8, np.float32)],
                              [["mul", "mul", "mul", "mul", "add", "mul", "tanh", "add", "mul"]], "GELU")

# A chain interrupted by a reduction: the sum belongs to no group.
expect_groups(lambda x: ((x * 2.0).exp().sum(axis=0) + 1.0).tanh(), [np.ones((3, 4))],
              [["mul", "exp"], ["add", "tanh"]], "tanh(sum(exp(2x), axis=0) + 1)")
### BEGIN HIDDEN TESTS
# The reduction is the only thing between the two halves: a grouping that swallows it must fail.
graph = jit.trace(lambda x: (x.exp().sum(axis=1, keepdims=True) * x).sin(), np.ones((3, 4)))
groups = groups_of(graph, "sin(sum(exp x, axis=1) * x)")
check_groups(graph, groups)
assert not any(graph.node(i).op == "sum" for g in groups for i in g), f"a sum inside a group: {groups_by_op(graph, groups)}"
# max and matmul end groups too
expect_groups(lambda x: (x.tanh().max(axis=1) * 3.0).exp(), [np.ones((2, 5))], [["tanh"], ["mul", "exp"]], "exp(3 max(tanh x))")
expect_groups(lambda x: ((x.relu() @ np.ones((4, 2))) - 1.0).abs(), [np.ones((3, 4))], [["relu"], ["sub", "abs"]], "|relu(x) @ W - 1|")
### END HIDDEN TESTS
print("fusible_groups: chains and reductions are right")

# %% nbgrader={"grade": true, "grade_id": "test_fusible_groups_one_output", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# softmax then tanh: exp is read by the sum and by the division, so it is its own group.
expect_groups(softmax_tanh, [np.ones((4, 6))], [["exp"], ["div", "tanh"]], "tanh(softmax(x))")

# A bias of another shape is an input of the group, not a member: b * 2.0 has shape (4,), the group (3, 4).
expect_groups(lambda x, b: (x + b * 2.0).relu(), [np.ones((3, 4)), np.ones(4)], [["mul"], ["add", "relu"]], "relu(x + 2b)")

# A value read twice by members of the same group joins it; a graph output inside a chain ends the group.
expect_groups(lambda x: (lambda t: t * t + t.exp())(x.tanh()), [np.ones(5)], [["tanh", "mul", "exp", "add"]], "t*t + exp(t), t = tanh x")
expect_groups(lambda x: (x.sin(), x.sin().exp() * 2.0), [np.ones(5)], [["sin"], ["sin", "exp", "mul"]], "(sin x, 2 exp(sin x))")
expect_groups(lambda x: (lambda s: (s, s.exp()))(x.sin()), [np.ones(5)], [["sin"], ["exp"]], "(s, exp(s)) with s = sin x an output")
### BEGIN HIDDEN TESTS
# A value read by two groups: materialised once.
expect_groups(lambda x: (lambda t: ((t + 1.0).sum(), (t * 2.0).sum()))(x.cos()), [np.ones((2, 3))],
              [["cos"], ["add"], ["mul"]], "cos read by two chains that each end in a sum")
# A column of another shape feeding a group: computed alone.
expect_groups(lambda x, c: x * c.exp(), [np.ones((3, 4)), np.ones((3, 1))], [["exp"], ["mul"]], "x * exp(c), c (3, 1)")
### END HIDDEN TESTS
print("fusible_groups: one output per group, one shape per group")

# %% nbgrader={"grade": true, "grade_id": "test_fusible_groups_views_and_random", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Broadcast views join the group that reads them: the reshape only adds an axis of length 1.
expect_groups(lambda x, b: (x + b.reshape(1, 4)).sigmoid(), [np.ones((3, 4)), np.ones(4)],
              [["reshape", "add", "sigmoid"]], "sigmoid(x + b.reshape(1, 4))")
# A reshape that moves data is no view: it ends the group.
expect_groups(lambda x: x.exp().reshape(4, 3).tanh(), [np.ones((3, 4))], [["exp"], ["tanh"]], "tanh(exp(x).reshape(4, 3))")
print("fusible_groups: views are handled")
### BEGIN HIDDEN TESTS
# The backward pass of a sum broadcasts the adjoint back: broadcast_to joins, the reshape before it does not.
graph = jit.eliminate_dead_code(jit.trace(lambda x: (x.tanh() * 3.0).sum(), np.ones((3, 4)), backward=True))
groups = groups_of(graph, "the gradient of sum(3 tanh x)")
check_groups(graph, groups)
# A view alone (read by a non-elementwise node) is in no group.
expect_groups(lambda x: x.reshape(1, 4).sum(), [np.ones(4)], [], "sum of a reshape")
expect_groups(lambda x, g: g.broadcast_to((2, 3)) * x.exp(), [np.ones((2, 3)), np.ones(())],
              [["broadcast_to", "exp", "mul"]], "broadcast scalar times exp(x)")
# Random programs with their backward passes: every rule, checked independently.
rng = np.random.default_rng(2024)
cases = []
for trial in range(25):
    program = random_program(rng)
    for backward in (False, True):
        with np.errstate(all="ignore"):  # exp of exp of ...: values may overflow; only the structure matters
            cases.append((trial, backward, jit.eliminate_dead_code(jit.trace(program, np.ones((3, 4)), np.ones(4), backward=backward))))
results = drive(grouped, [graph_data(graph) for _, _, graph in cases])
assert type(results) is list and len(results) == len(cases), f"fusible_groups: malformed driver result {results!r:.200}"
for (trial, backward, graph), got in zip(cases, results):
    what = f"random program {trial} (backward={backward})"
    groups = groups_from_data(got, graph, what)
    try:
        check_groups(graph, groups)
    except Exception as error:
        raise AssertionError(f"{what}: {error}\n{graph}") from None
### END HIDDEN TESTS

# %% [markdown]
# Here are the groups of two graphs, as `jit.fusion.describe_groups` lists them (it calls `fusible_groups`: in the student
# bundle, yours). In the second, `exp(x)` is read both by a `sum` and by a `div`, so it is computed once, on its own, and
# the `sum` separates it from the rest:

# %%
with runs_your('fusible_groups'):
    softmax_graph = jit.trace(softmax_tanh, np.ones((4, 6)))
    for name, graph in [("GELU", gelu_graph), ("softmax then tanh", softmax_graph)]:
        print(f"{name}:")
        for line in jit.fusion.describe_groups(graph):
            print("   group", line)
    display(mg.draw(softmax_graph))

# %% [markdown]
# `jit.fusion.fuse(graph)` applies the groups: each becomes one node with op `"fused"`, whose params hold the group as a
# small graph of its own, its **body** (the sink keeps its id; scalar constants move into the body, since they become
# literals of the kernel). Here is a traced layer with its backward pass, before and after. The forward chain collapses
# into a few kernels; in the backward pass, values that are read by several groups (the pre-activation, the `tanh`) are
# materialised once and read again.

# %%
with runs_your('fusible_groups'):
    def layer_loss(x, W, b):
        return (gelu(x @ W + b) ** 2).mean()


    layer_args = [rng.standard_normal(s).astype(np.float32) for s in [(8, 4), (4, 6), (6,)]]
    layer_graph = jit.eliminate_dead_code(jit.trace(layer_loss, *layer_args, backward=True))
    fused_layer = fuse(layer_graph)
    count = lambda g: sum(n.op not in ("input", "constant") for n in g.nodes)
    print(f"{count(layer_graph)} operations before fusion, {count(fused_layer)} after "
          f"({sum(n.op == 'fused' for n in fused_layer.nodes)} of them fused kernels)")
    display(mg.draw(fused_layer, names={"x": 0, "W": 1, "b": 2}))

# %% [markdown]
# ## 3. Generating a kernel
#
# A fused node's body is all a code generator needs: its inputs (with their shapes and dtypes), its scalar constants
# and its elementwise operations, with the output's shape as the iteration space. Because the graph is static, all of
# these are known *when the code is written*, so the generator can bake them into the text: loop bounds are numbers,
# broadcasting becomes a choice of index expression, constants become literals. For an output of shape
# $(n_0, n_1)$ and inputs $x$ of shape $(n_0, n_1)$, $b$ of shape $(n_1,)$ and $c$ of shape $(n_0, 1)$:
#
# ```python
# @njit(cache=True, error_model="numpy")
# def kernel(a0, a1, a2, out):
#     for i0 in range(3):
#         for i1 in range(4):
#             x0 = a0[i0, i1]          # full shape: both loop indices
#             x1 = a1[i1]              # (4,): aligned on the right, so the last index
#             x2 = a2[i0, 0]           # (3, 1): length-1 axes are read at 0
#             v3 = x0 + x1
#             v4 = v3 * x2
#             out[i0, i1] = v4
# ```
#
# This is numpy's broadcasting rule written out: align the shapes on the right; an axis of length 1 is read at index 0
# for every position of the loop. A 0-d input is read as `a[()]`, and a 0-d output written as `out[()] = ...`.
#
# The generated text is a module: it imports what the kernel uses, and decorates `kernel` with `numba.njit`.
# `cache=True` makes Numba keep the machine code next to the file, and `error_model="numpy"` makes a division by zero
# give `inf` as numpy does, instead of raising — which also lets the loop vectorise.
#
# What each operation computes on one element is a fact the library keeps in one place, beside the other facts its
# backends need about each primitive (whether it is elementwise, how numpy computes it into a buffer): the table
# `minigrad.jit.optable.TABLE`, from which its own generator writes kernels too. `EXPRESSIONS`, imported in the setup
# cell, is that table's Python expression of each elementwise operation, with plain `math` functions and float
# literals. Its fields `{0}`, `{1}` are the operands' names and `{exponent}` is the `power` node's parameter, so
# `EXPRESSIONS[node.op].format(*operand_names, **node.param_dict)` writes one operation:

# %%
for op in ("add", "neg", "tanh", "sigmoid", "relu", "power"):
    print(f"{op:>8}: {EXPRESSIONS[op]}")

# %% nbgrader={"grade": false, "grade_id": "helpers_codegen", "locked": true, "schema_version": 3, "solution": false}
import ast


def load_kernel(source):
    """Write `source` to a file in the kernel cache (named by its hash), import it, return its `kernel`."""
    return load_module(source).kernel


def fused_body(fn, *arrays):
    """The body of the fused node computing all of fn's traced graph, a single fusion group (elementwise operations
    of the output's shape): what `fuse` makes of it, built here straight from the graph so that the kernel_source tests
    depend on your kernel_source alone (in the student bundle, `fuse` calls your fusible_groups)."""
    graph = jit.eliminate_dead_code(jit.trace(fn, *arrays))
    operations = [n for n in graph.nodes if n.op not in ("input", "constant")]
    assert all(n.op in ELEMENTWISE and n.shape == operations[-1].shape for n in operations), "not a single group"
    members = {n.id for n in operations}
    body, external = list(operations), []
    for source in sorted({s for n in operations for s in n.inputs} - members):
        node = graph.node(source)
        if node.op == "constant" and node.size == 1:
            body.append(node)  # a scalar constant becomes a literal of the kernel
        else:
            external.append(source)
            body.append(Node(source, "input", (), node.shape, node.dtype))
    return Graph(sorted(body, key=lambda n: n.id), external, [operations[-1].id])


def kernel_inputs(body, seed):
    """The arrays a kernel is tested on: uniform in [0.5, 1.5), with each input node's shape and dtype."""
    rng = np.random.default_rng(seed)
    return [np.asarray(rng.uniform(0.5, 1.5, body.node(i).shape)).astype(body.node(i).dtype) for i in body.inputs]


def kernel_run(data, seed):
    """Driver: your kernel_source for the body the test sent (as data); the module loaded (load_kernel) and its
    kernel run on kernel_inputs(body, seed) into an output full of NaNs. Returns the source text, the output, and
    the inputs as they are after the call."""
    body = graph_from_data(data, "the test's body")
    source = kernel_source(body)
    if type(source) is not str:
        return {"source": f"a {type(source).__name__}", "out": None, "inputs": None}
    kernel = load_kernel(source)
    inputs = kernel_inputs(body, seed)
    output = body.node(body.outputs[0])
    out = np.full(output.shape, np.nan, dtype=output.dtype)
    kernel(*inputs, out)
    return {"source": source, "out": out, "inputs": inputs}


# Reading generated source without running it: the tests parse your kernel's text with the ast module and look at
# its structure (they never execute it; the driver compiles and runs it beside your code).

MAX_SOURCE = 200_000  # characters
NUMBA_DECORATORS = frozenset({"njit", "numba.njit", "jit", "numba.jit"})
ALLOCATING = frozenset("empty zeros ones full empty_like zeros_like ones_like full_like array asarray ascontiguousarray "
                       "copy arange linspace concatenate stack hstack vstack tile repeat outer dot matmul".split())
VIEW_METHODS = frozenset({"reshape", "ravel", "view", "transpose"})  # on a contiguous array: no new memory
COPY_METHODS = frozenset({"copy", "astype", "flatten", "sum", "prod", "max", "min", "mean", "dot", "cumsum", "repeat"})


def dotted(node):
    """'np.tanh' for the expression np.tanh, 'njit' for njit; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def parse_module(source, what):
    """The ast of `source` (AssertionError, saying what, if it is too long or does not parse)."""
    if type(source) is not str:
        raise AssertionError(f"{what} should return the source text (a str), got {source}")
    if len(source) > MAX_SOURCE:
        raise AssertionError(f"{what}: a source of {len(source):,} characters (at most {MAX_SOURCE:,})")
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise AssertionError(f"{what} returned source that is not valid Python: {type(error).__name__}: {error}") from None


def numba_function(tree, name, what):
    """The top-level `def name` of the module, which must be decorated with @njit (or numba.njit / numba.jit)."""
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if not defs:
        raise AssertionError(f"{what}: the source defines no top-level function `{name}`")
    function = defs[-1]
    names = [dotted(d.func if isinstance(d, ast.Call) else d) for d in function.decorator_list]
    if not any(n in NUMBA_DECORATORS for n in names):
        raise AssertionError(f"{what}: `{name}` should be a Numba-compiled function (decorate it with @njit), "
                             f"its decorators are {[n or '?' for n in names]}")
    return function


class _Allocations(ast.NodeVisitor):
    """Finds what makes a new array inside a function: numpy calls on arrays or numpy constructors, arithmetic
    with a whole array as an operand, fancy or sliced reads combined into expressions, copying methods. Arrays are
    the function's parameters and the names bound to views of them (a.reshape(-1), a[:, 0], ...)."""

    def __init__(self, function):
        self.arrays = {a.arg for a in function.args.args + function.args.kwonlyargs}
        self.found = []

    def is_array(self, node):
        if isinstance(node, ast.Name):
            return node.id in self.arrays
        if isinstance(node, ast.Subscript):
            if not self.is_array(node.value):
                return False
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return any(isinstance(p, ast.Slice) or (isinstance(p, ast.Constant) and p.value is Ellipsis)
                       or self.is_array(p) for p in parts)
        if isinstance(node, ast.Attribute):
            return node.attr == "T" and self.is_array(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            return node.func.attr in VIEW_METHODS | COPY_METHODS and self.is_array(node.func.value)
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.IfExp)):
            return any(self.is_array(c) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr))
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            return name.split(".")[0] in ("np", "numpy") and (
                name.split(".")[-1] in ALLOCATING or any(self.is_array(a) for a in node.args))
        return False

    def report(self, node, why):
        self.found.append(f"`{ast.unparse(node)[:60]}` (line {node.lineno}): {why}")

    def visit_Assign(self, node):
        self.generic_visit(node)
        if self.is_array(node.value):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.arrays.add(target.id)

    def visit_BinOp(self, node):
        if self.is_array(node.left) or self.is_array(node.right):
            self.report(node, "arithmetic on a whole array makes a new one")
            return
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if self.is_array(node.operand):
            self.report(node, "arithmetic on a whole array makes a new one")
            return
        self.generic_visit(node)

    def visit_Call(self, node):
        name = dotted(node.func) or ""
        if name.split(".")[0] in ("np", "numpy"):
            if name.split(".")[-1] in ALLOCATING:
                self.report(node, "it allocates an array")
                return
            if any(self.is_array(a) for a in node.args):
                self.report(node, "a numpy function on a whole array makes a new one")
                return
        if isinstance(node.func, ast.Attribute) and node.func.attr in COPY_METHODS and self.is_array(node.func.value):
            self.report(node, "it copies the array")
            return
        self.generic_visit(node)


def allocations_in(function):
    """What in `function` (an ast.FunctionDef) makes new arrays, as readable lines (empty: nothing does)."""
    visitor = _Allocations(function)
    for statement in function.body:
        visitor.visit(statement)
    return visitor.found



def check_kernel(body, what, seed, tolerance=None):
    """Have the driver generate your kernel for `body` and run it on inputs made from `seed`; check here that the
    source defines an @njit `kernel` (parsing it, never running it) and that the output is the graph's own meaning
    (the library's run_graph on the same inputs), with the inputs left unchanged. Returns (the kernel's ast, out)."""
    got = drive(kernel_run, graph_data(body), seed)
    if type(got) is not dict or set(got) != {"source", "out", "inputs"}:
        raise AssertionError(f"kernel_source({what}): malformed driver result {got!r:.200}")
    kernel = numba_function(parse_module(got["source"], f"kernel_source({what})"), "kernel", f"kernel_source({what})")
    inputs = kernel_inputs(body, seed)
    output = body.node(body.outputs[0])
    out = got["out"]
    if type(out) is not np.ndarray or out.shape != output.shape or out.dtype != np.dtype(output.dtype):
        raise AssertionError(f"kernel_source({what}): expected the kernel's output as a {output.dtype} array of shape "
                             f"{output.shape}, got {out!r:.200}")
    (expected,) = run_graph(body, *inputs)
    rtol = tolerance or (2e-6 if output.dtype == "float32" else 1e-12)
    assert_close(out, expected, f"the kernel of {what} (inputs of shapes {[a.shape for a in inputs]})", rtol=rtol, atol=rtol)
    after = got["inputs"]
    if type(after) is not list or len(after) != len(inputs) or not all(type(a) is np.ndarray for a in after):
        raise AssertionError(f"kernel_source({what}): malformed driver result (the inputs after the call)")
    for k, (a, b) in enumerate(zip(after, inputs)):
        if a.shape != b.shape or not np.array_equal(a, b):
            raise AssertionError(f"the kernel of {what} wrote into its input a{k}: a kernel reads its inputs and writes only `out`")
    return kernel, out


def assert_no_temporaries(kernel, what):
    """Fail, naming each one, if the kernel's source makes arrays (whole-array expressions, numpy constructors)."""
    found = allocations_in(kernel)
    assert not found, (
        f"kernel_source({what}): the kernel makes new arrays; compute one element at a time inside the loops "
        f"(the scalar expressions of EXPRESSIONS) and write each result into out:\n  " + "\n  ".join(found[:5]))


# %% [markdown]
# ### Graded: `kernel_source(body)`
#
# Write the module for any body made of inputs, scalar constants and the operations of `EXPRESSIONS` (all but
# `where`, whose condition `{2}` is an array of the node's params: this chapter's bodies have none). Name values so
# that the text stays readable and operator precedence cannot bite: input $k$ is the argument `a{k}` and the value read
# from it `x{k}`; a constant gets a variable `v{id} = <value>` before the loops; operation node `id` computes
# `v{id}`. Visit `body.nodes` in order (they are topologically sorted); `body.inputs` gives the argument order.

# %% nbgrader={"grade": false, "grade_id": "kernel_source", "locked": false, "schema_version": 3, "solution": true}
def kernel_source(body):
    """The source of a Python module defining `kernel(a0, a1, ..., out)`, a Numba kernel (@njit) that
    writes into `out` (shape and dtype of body's output node) the value of the body's output.

    `body` is a Graph with one output whose nodes are "input" nodes (argument k is body.inputs[k],
    with the node's shape, which broadcasts to the output's), "constant" nodes holding a scalar
    (params (("value", array),)) and operations of EXPRESSIONS. The kernel is one loop nest over
    the output's shape (no loop for a 0-d output) computing everything per element: it allocates
    no arrays. Arguments are read with numpy's broadcasting: shapes aligned on the right, an
    axis of length 1 read at index 0, a 0-d array read as a[()].
    """
    out = body.node(body.outputs[0])
    rank = len(out.shape)
    loops = [f"i{d}" for d in range(rank)]
    ### BEGIN SOLUTION
    def index(shape):
        offset = rank - len(shape)  # numpy broadcasting: shapes aligned on the right
        parts = ["0" if n == 1 else loops[offset + d] for d, n in enumerate(shape)]
        return ", ".join(parts) if parts else "()"

    arguments = [f"a{k}" for k in range(len(body.inputs))] + ["out"]
    names, constants, statements = {}, [], []
    for node in body.nodes:
        if node.op == "input":
            k = body.inputs.index(node.id)
            names[node.id] = f"x{k}"
            statements.append(f"x{k} = a{k}[{index(node.shape)}]")
        elif node.op == "constant":
            names[node.id] = f"v{node.id}"
            constants.append(f"v{node.id} = {float(np.asarray(node.param_dict['value']))!r}")
        else:
            names[node.id] = f"v{node.id}"
            operands = [names[i] for i in node.inputs]
            statements.append(f"v{node.id} = " + EXPRESSIONS[node.op].format(*operands, **node.param_dict))
    statements.append(f"out[{', '.join(loops) if loops else '()'}] = {names[out.id]}")
    lines = ["import math", "", "from numba import njit", "", "", '@njit(cache=True, error_model="numpy")',
             f"def kernel({', '.join(arguments)}):"]
    lines += ["    " + c for c in constants]
    for depth, n in enumerate(out.shape):
        lines.append("    " * (depth + 1) + f"for {loops[depth]} in range({n}):")
    lines += ["    " * (rank + 1) + s for s in statements]
    return "\n".join(lines) + "\n"
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_kernel_source_elementwise", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# GELU in float32: one flat loop.
kernel, out = check_kernel(fused_body(gelu, np.ones(100, np.float32)), "GELU (float32, 100 elements)", seed=9)
assert_equal(out.dtype, np.dtype(np.float32), "the kernel writes into the float32 output it is given")
# Several inputs of the same shape, constants, division and subtraction (whose order matters).
check_kernel(fused_body(lambda x, y: (x - 2.0 * y) / (y + 0.5) - x.exp(), np.ones((3, 5)), np.ones((3, 5))),
             "(x - 2y) / (y + 0.5) - exp(x)", seed=10)
### BEGIN HIDDEN TESTS
# Every operation of EXPRESSIONS a traced body can hold here, negative constants, powers.
check_kernel(fused_body(lambda x, y: (-x).abs() ** 1.5 + (x * -0.25).sigmoid() + (y - 1.0).relu() - x.log().sin() * y.cos()
                        + (x / y).tanh() ** 2, np.ones((2, 3)), np.ones((2, 3))), "every operation", seed=11)
check_kernel(fused_body(lambda x: (x - 3.0) ** 2 - 1.0 / x, np.ones(7)), "(x - 3)^2 - 1/x", seed=12)
# A 3-d array and a 0-d output.
check_kernel(fused_body(lambda x: (x * 0.5 + 1.0).exp(), np.ones((2, 3, 4))), "exp(x/2 + 1) on a (2, 3, 4) array", seed=13)
check_kernel(fused_body(lambda x, y: x * y - 2.0, np.ones(()), np.ones(())), "x*y - 2 on 0-d arrays", seed=14)
### END HIDDEN TESTS
print("kernel_source: elementwise kernels are right")


# %% nbgrader={"grade": true, "grade_id": "test_kernel_source_broadcasting", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Broadcasting: a row vector, a column and a scalar (0-d) input against a (3, 4) output.
def broadcast_example(x, b, c, s):
    return ((x + b) * c - s).tanh()

shapes = [(3, 4), (4,), (3, 1), ()]
check_kernel(fused_body(broadcast_example, *[np.ones(s) for s in shapes]), "tanh((x + b) * c - s)", seed=20)
### BEGIN HIDDEN TESTS
check_kernel(fused_body(lambda x, b: x * b, np.ones((2, 3, 4)), np.ones((3, 1))), "x (2,3,4) * b (3,1)", seed=21)
check_kernel(fused_body(lambda x, b: x - b, np.ones((1, 4)), np.ones((3, 1))), "x (1,4) - b (3,1): both broadcast", seed=22)
check_kernel(fused_body(lambda x, b: (x / b).exp(), np.ones((2, 1, 5)), np.ones((1, 3, 1)).astype(np.float32)),
             "exp(x / b), (2,1,5) and float32 (1,3,1)", seed=23, tolerance=1e-6)
check_kernel(fused_body(lambda x, b: (b - x).sigmoid(), np.ones((4, 4), np.float32), np.ones(4, np.float32)),
             "sigmoid(b - x), square", seed=24)
### END HIDDEN TESTS
print("kernel_source: broadcasting works")

# %% nbgrader={"grade": true, "grade_id": "test_kernel_source_no_temporaries", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# One loop nest, everything per element: the kernel allocates no arrays (whole-array numpy expressions inside the
# kernel would allocate a temporary per operation). The test reads your kernel's source to see it.
body = fused_body(lambda x, b, c, s: ((x + b) * c - s).tanh(), np.ones((3, 4)), np.ones(4), np.ones((3, 1)), np.ones(()))
kernel, _ = check_kernel(body, "tanh((x + b) * c - s)", seed=30)
assert_no_temporaries(kernel, "tanh((x + b) * c - s)")
print("kernel_source: the kernel allocates nothing")
### BEGIN HIDDEN TESTS
kernel, _ = check_kernel(fused_body(gelu, np.ones((64, 8), np.float32)), "GELU (64, 8)", seed=31)
assert_no_temporaries(kernel, "GELU (64, 8)")
### END HIDDEN TESTS

# %% [markdown]
# The library's generator (`jit.codegen.kernel_source`) does the same with a few refinements: it flattens the arrays and
# merges axes that every operand treats alike (numpy's iterator does this too), so a purely elementwise group is one
# flat loop; it gives constants the graph's dtype (`np.float32(0.5)`), so float32 graphs never compute in float64; it
# writes small integer powers as products; in float32 CPU kernels it computes `tanh`, `exp` and `sigmoid` with functions
# of `jit.fastmath` made of arithmetic that vectorises, instead of `math`'s (the next experiment shows why); and it adds
# an explicit signature, so the kernel is compiled when the module is imported rather than at the first call. Here are
# the body of GELU's group and the library's kernel for it (in the student bundle `codegen.kernel_source` runs your
# `kernel_source`, so there this cell shows yours):

# %%
with runs_your('kernel_source'):
    gelu_body = fused_body(gelu, np.zeros(1024, np.float32))  # the body fuse(gelu_graph) makes
    print(gelu_body)
    print()
    print(codegen.kernel_source(gelu_body))

# %% [markdown]
# Your kernel, the library's and numpy on the GELU of 4 million float32 values (each kernel compiled before it is timed;
# CPU time, the fastest of several interleaved calls):

# %%
with runs_your('kernel_source'):
    big_body = fused_body(gelu, np.ones(N, np.float32))
    your_kernel = load_kernel(kernel_source(big_body))
    library_kernel = load_module(codegen.kernel_source(big_body, parallel=False)).kernel  # one thread, like yours
    y_numpy = 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))))
    your_kernel(x, t[0])
    library_kernel(x, t[1])
    assert_close(t[0], y_numpy, "your kernel on 4M elements", rtol=1e-5, atol=1e-6)
    assert_close(t[1], y_numpy, "the library's kernel on 4M elements", rtol=1e-5, atol=1e-6)
    timings = interleaved_times({
        "numpy, unfused": lambda: 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x)))),
        "your kernel (math.tanh)": lambda: your_kernel(x, t[0]),
        "library kernel (fastmath tanh)": lambda: library_kernel(x, t[1]),
    }, repeat=7)
    for name, seconds in timings.items():
        print(f"{name:30s} {seconds * 1e3:7.2f} ms   {8 * N / seconds / 1e9:6.2f} GB/s (at 8 bytes/element)")
    print(f"{'streaming bandwidth':30s} {stream_seconds * 1e3:7.2f} ms   {bandwidth / 1e9:6.2f} GB/s")


# %% [markdown]
# Surprise: your kernel moves 8 bytes per element instead of about 80 and allocates nothing, yet it is far from the copy
# bandwidth, and slower than numpy's nine separate passes. The reason is `math.tanh`: inside a Numba loop it becomes a
# call to the C library's `tanhf`, one element at a time, and LLVM cannot turn a loop that calls an opaque function into
# SIMD instructions. numpy's own `tanh` is a hand-vectorised loop; your kernel has become **compute-bound** on scalar
# `tanh` calls. Fusion removes memory traffic; it does not help a kernel whose body cannot vectorise. The library's kernel
# is the same loop with `tanh` computed by `jit.fastmath.tanh_f32_accurate` — additions, multiplications, fused
# multiply-adds, one division, comparisons and bit casts, which LLVM vectorises, within 1.75 units in the last place of
# the exact value — and it runs within a small factor of the copy (section 5 has more).
#
# ## 4. Matrix product, bias and ReLU in one pass
#
# A dense layer computes $y = \max(0, xW + b)$. Unfused, numpy computes $h = xW$ (writes $n \times m$ values), then
# $h + b$ (reads them, writes $n \times m$), then the ReLU (reads and writes again): three round trips of the
# $n \times m$ intermediate through memory after the product. Fused, each output row is finished while it is in the
# cache:
#
# ```
# for each row i:
#     out[i, :] = b                        # start from the bias: adding it costs nothing
#     for each p:  out[i, :] += x[i, p] * W[p, :]
#     out[i, :] = max(out[i, :], 0)
# ```
#
# The loop order $i, p, j$ makes the innermost loop walk along a row of $W$ and a row of the output, contiguous in
# memory, so it vectorises. This is what cuBLAS and oneDNN offer as a matrix product "with epilogue", and what
# `jit.fusion.fuse` finds in traced graphs: a `matmul` whose only reader is an elementwise group of its shape becomes a
# `"linear_epilogue"` kernel.
#
# ### Graded: `fused_linear_relu(x, W, b)`
#
# The tests check the values, that the loops are compiled (a $512 \times 512 \times 512$ layer must finish in seconds),
# and the order of the sums: starting from the bias and adding each product into it is not the same, in floating
# point, as adding the bias to a finished $xW$ (with $b = 2^{53}$, adding 1 four times leaves $2^{53}$; adding 4 once
# does not).

# %% nbgrader={"grade": false, "grade_id": "fused_linear_relu", "locked": false, "schema_version": 3, "solution": true}
@njit(error_model="numpy")
def fused_linear_relu(x, W, b):
    """relu(x @ W + b) for x of shape (n, k), W (k, m) and b (m,), in one pass over the output.

    A Numba kernel (keep the @njit): allocate the result (np.empty((n, m), dtype=x.dtype)) and
    nothing else, start each row from the bias, accumulate the products into it, then apply the
    ReLU to the finished row.
    """
    ### BEGIN SOLUTION
    n, k = x.shape
    m = W.shape[1]
    out = np.empty((n, m), dtype=x.dtype)
    for i in range(n):
        for j in range(m):
            out[i, j] = b[j]
        for p in range(k):
            xv = x[i, p]
            for j in range(m):
                out[i, j] += xv * W[p, j]
        for j in range(m):
            if out[i, j] < 0:
                out[i, j] = 0
    return out
    ### END SOLUTION


# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_linear", "locked": true, "schema_version": 3, "solution": false}
def linear_relu(x, W, b):
    """Driver: what your fused_linear_relu returns for the arrays the test sent (an array, or a description),
    and x, W, b as they are after the call."""
    got = fused_linear_relu(x, W, b)
    return {"out": got if type(got) is np.ndarray else f"a {type(got).__name__}", "inputs": [x, W, b]}


def linear_result(got, x, W, b, what):
    """The output from what `linear_relu` returned, checked to be an array, with x, W, b left unchanged."""
    if type(got) is not dict or set(got) != {"out", "inputs"}:
        raise AssertionError(f"fused_linear_relu({what}): malformed driver result {got!r:.200}")
    out = got["out"]
    if type(out) is not np.ndarray:
        raise AssertionError(f"fused_linear_relu({what}) should return a numpy array, got {out}")
    after = got["inputs"]
    if type(after) is not list or len(after) != 3:
        raise AssertionError(f"fused_linear_relu({what}): malformed driver result (its inputs after the call)")
    for name, a, b_ in zip("xWb", after, (x, W, b)):
        if type(a) is not np.ndarray or a.shape != b_.shape or not np.array_equal(a, b_):
            raise AssertionError(f"fused_linear_relu({what}) changed its argument {name}: it must only read x, W and b")
    return out


def check_linear(x, W, b, what, rtol=1e-12, seconds=None):
    got = linear_result(drive(linear_relu, x, W, b, seconds=seconds), x, W, b, what)
    expected = np.maximum(x @ W + b, 0)
    assert_equal(got.shape, expected.shape, f"shape of fused_linear_relu({what})")
    assert_equal(got.dtype, x.dtype, f"dtype of fused_linear_relu({what})")
    assert_close(got, expected, f"fused_linear_relu({what})", rtol=rtol, atol=rtol)


def check_bias_first(got, x, W, b, what):
    """Fail, showing the first output that differs in full, unless got is exactly bias_first(x, W, b)."""
    expected = bias_first(x, W, b)
    assert_equal(got.shape, expected.shape, f"shape of fused_linear_relu({what})")
    assert_equal(got.dtype, expected.dtype, f"dtype of fused_linear_relu({what})")
    differ = np.argwhere(got != expected)
    if len(differ):
        i, j = differ[0]
        direct = np.maximum(x @ W + b, 0)[i, j]
        raise AssertionError(
            f"fused_linear_relu({what}): output [{i}, {j}] is {got[i, j]:.1f}; starting from the bias b[{j}] = {b[j]:.1f} "
            f"and adding the products x[{i}, p] * W[p, {j}] one by one gives {expected[i, j]:.1f} (x @ W + b would give "
            f"{direct:.1f}): start each output from the bias and accumulate into it, then apply the ReLU")


def bias_first(x, W, b):
    """relu(x @ W + b) summed in the order the kernel is asked for: each output starts as its bias, then the
    products x[i, p] * W[p, j] are added one p after another, in x's dtype; then the ReLU."""
    out = np.empty((x.shape[0], W.shape[1]), dtype=x.dtype)
    out[...] = b
    for p in range(x.shape[1]):
        out += x[:, p:p + 1] * W[p]
    return np.maximum(out, 0)


# %% nbgrader={"grade": true, "grade_id": "test_fused_linear_relu_values", "locked": true, "points": 2, "schema_version": 3, "solution": false}
rng = np.random.default_rng(4)
check_linear(rng.standard_normal((5, 3)), rng.standard_normal((3, 4)), rng.standard_normal(4), "x (5, 3), W (3, 4), b (4,)")
x32, W32, b32 = (rng.standard_normal(s).astype(np.float32) for s in [(16, 8), (8, 12), (12,)])
check_linear(x32, W32, b32, "float32", rtol=1e-5)

# A Numba kernel (keep the @njit): a (512, 512) @ (512, 512) layer is 134 million multiply-adds, a fraction of a
# second compiled; the same loops run by the Python interpreter take minutes.
big = [rng.standard_normal(s) for s in [(512, 512), (512, 512), (512,)]]
try:
    check_linear(*big, "x (512, 512), W (512, 512), b (512,)", rtol=1e-10, seconds=10)
except TimeoutError:
    raise AssertionError(
        "fused_linear_relu did not finish a (512, 512) @ (512, 512) layer in 10 s: its loops run as plain Python. "
        "Keep the @njit decorator, so that Numba compiles them") from None
print("fused_linear_relu: values and dtypes are right")
### BEGIN HIDDEN TESTS
# ReLU after the bias: a bias that flips signs.
x, W = np.ones((2, 2)), np.array([[1.0, -1.0], [1.0, -1.0]])  # x @ W = [[2, -2], [2, -2]]
check_linear(x, W, np.array([-3.0, 3.0]), "x @ W = [2, -2] per row, b = [-3, 3]")
for n, k, m in [(1, 1, 1), (7, 1, 3), (1, 9, 2), (33, 17, 5)]:
    check_linear(rng.standard_normal((n, k)), rng.standard_normal((k, m)), rng.standard_normal(m), f"n={n}, k={k}, m={m}")
# An empty inner dimension: no products at all, every row is relu(b).
check_linear(np.ones((4, 0)), np.ones((0, 3)), np.array([1.5, -2.0, 3.0]), "k = 0: no products, each row relu(b)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_fused_linear_relu_one_pass", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# One pass: each output starts as its bias and the products are added into it; no x @ W is ever formed. Floating
# point shows the order. With b = 2**53 and four products of 1, adding each 1 to 2**53 rounds back to 2**53 (the
# spacing of float64 there is 2), while x @ W + b adds 4 to 2**53 in one go.
x, W, b = np.ones((3, 4)), np.ones((4, 5)), np.array([2.0**53, 2.0**53, 0.0, -1.0, 2.0**53])
got = linear_result(drive(linear_relu, x, W, b), x, W, b, "b = 2**53")
check_bias_first(got, x, W, b, "x = 1 (3, 4), W = 1 (4, 5), b = [2**53, 2**53, 0, -1, 2**53]")
print("fused_linear_relu: one pass, starting from the bias")
### BEGIN HIDDEN TESTS
x, W = np.ones((6, 6), np.float32), np.ones((6, 3), np.float32)
b = np.array([2.0**24, 1.0, 2.0**24], np.float32)  # float32 spacing at 2**24 is 2
got = linear_result(drive(linear_relu, x, W, b), x, W, b, "float32, b = 2**24")
check_bias_first(got, x, W, b, "float32, x = 1 (6, 6), W = 1 (6, 3), b = [2**24, 1, 2**24]")
### END HIDDEN TESTS

# %% [markdown]
# ### Experiment: when does the fused layer win?
#
# The product does $2nkm$ flops and, at best, reads $x$ and $W$ and writes the result: its arithmetic intensity grows
# with the inner dimension $k$. For small $k$ the product itself is memory-bound and the epilogue's extra round trips
# of the $n \times m$ intermediate are a large part of the time: fusing them pays. For large $k$ the product is
# compute-bound, and what matters is how well the multiplications use the caches and the cores; numpy's BLAS is blocked
# for the cache, hand-tuned and multi-threaded, and our three loops are none of those. Time both as $k$ grows, for a
# batch of 2048 rows and 256 outputs:

# %%
with runs_your('fused_linear_relu'):
    ks = [2, 4, 8, 16, 32, 64, 128, 256, 512]
    n, m = 2048, 256
    fused_ms, numpy_ms = [], []
    for k in tqdm(ks, desc="inner dimension k"):
        xk, Wk, bk = (rng.standard_normal(s).astype(np.float32) for s in [(n, k), (k, m), (m,)])
        fused_linear_relu(xk, Wk, bk)  # compiled for these types before it is timed
        times = interleaved_times({"fused": lambda: fused_linear_relu(xk, Wk, bk), "numpy": lambda: np.maximum(xk @ Wk + bk, 0)},
                                  repeat=7)
        fused_ms.append(times["fused"] * 1e3)
        numpy_ms.append(times["numpy"] * 1e3)

    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.loglog(ks, numpy_ms, "o-", label="numpy: x @ W (BLAS, one thread), + b, maximum")
    ax.loglog(ks, fused_ms, "s-", label="fused_linear_relu (one pass, one thread)")
    ax.set_xlabel("inner dimension k")
    ax.set_ylabel("ms of CPU time (fastest of 7)")
    ax.set_title(f"relu(x @ W + b), x: ({n}, k), W: (k, {m}), float32")
    ax.legend()
    plt.show()
    ahead = [k for k, fused, unfused in zip(ks, fused_ms, numpy_ms) if fused < unfused]
    print(f"fused_linear_relu is faster than numpy for k in {ahead}")

# %% [markdown]
# For small $k$ the fused kernel is ahead: numpy's three passes over the $2048 \times 256$ intermediate (and its
# allocation) cost more than the product. As $k$ grows the product dominates and BLAS wins: both run on one thread here, so
# what wins is its blocking for the caches and its hand-tuned vector code. Where the curves cross depends on the machine. Production libraries get both: a blocked,
# vectorised product whose *epilogue* applies the bias and the activation to each block of the output while it is
# still in registers. The library's `"linear_epilogue"` kernels use your simple scheme, so the Numba backend uses them
# only for inner dimensions up to `epilogue_max_inner=8`; larger products go to BLAS, followed by one fused kernel for
# the bias and the activation (which, unlike numpy above, writes into a planned buffer instead of allocating).
#
# ## 5. The Numba backend
#
# `jit.compile(fn, backend="numba")` runs the whole pipeline: trace, dead-code elimination, `fuse`, one generated kernel
# per fused node, and the memory plan of chapter 8 for the values between kernels. Each kernel is written to a file named
# by the hash of its source (`~/.cache/minigrad/kernels`, or `$MINIGRAD_CACHE_DIR`), where Numba keeps its machine code:
# the source *is* the structural key (operations, shapes, dtypes, constants), so the same program in a new process
# loads its kernels in milliseconds. Kernels over more than `jit.codegen.PARALLEL_THRESHOLD` elements run their outer
# loop with `prange` on all cores.
#
# ### Vectorisable math, accurate and fast
#
# Section 3 showed what `math.tanh` costs inside a loop. In float32 CPU kernels the library's generator calls the
# functions of `jit.fastmath` instead, built only from arithmetic that LLVM vectorises. By default they are the
# *accurate* ones (`tanh_f32_accurate`, `exp_f32_accurate`, `sigmoid_f32_accurate`), within
# `jit.fastmath.MAX_ULP_ERROR` units in the last place of the exact value (1.75 for `tanh`) over every float32 input.
# `fast_math=True` chooses cheaper approximations: `tanh_f32` is the rational function XLA and Eigen use on CPUs, an odd
# polynomial of degree 13 over an even one of degree 6 on $x$ clamped to $[-7.9, 7.9]$; `exp_f32` reduces
# $x = k \ln 2 + r$ and builds $2^k$ directly in the bits of the float. Both stay within a relative error of $10^{-6}$
# (`jit.fastmath.MAX_RELATIVE_ERROR`) — about 8 units in the last place of float32, far below what training in float32
# notices. Their error against float64, beside float32's own rounding of the exact value:

# %%
from minigrad.jit import fastmath


@njit
def apply(function, values, out):
    for i in range(values.size):
        out[i] = function(values[i])


grid = np.linspace(-10, 10, 200_000, dtype=np.float32)  # an even count: x = 0 is not on the grid
fig, axes = plt.subplots(1, 2, figsize=(12, 3.5), layout="constrained")
for ax, (name, fast, exact) in zip(axes, [("tanh", fastmath.tanh_f32, np.tanh), ("exp", fastmath.exp_f32, np.exp)]):
    got = np.empty_like(grid)
    apply(fast, grid, got)
    truth = exact(grid.astype(np.float64))
    ax.semilogy(grid, np.abs(got - truth) / np.abs(truth) + 1e-12, ".", ms=1, alpha=0.5, label=f"{name}_f32")
    ax.semilogy(grid, np.abs(exact(grid) - truth) / np.abs(truth) + 1e-12, ".", ms=1, alpha=0.5, label=f"np.{name} in float32")
    ax.axhline(fastmath.MAX_RELATIVE_ERROR, color="k", linestyle="--", label="documented bound")
    ax.set(title=f"relative error of {name} against float64", xlabel="x", ylabel="|got − exact| / |exact|", ylim=(1e-10, 1e-5))
    ax.legend(loc="upper center", ncol=3, markerscale=8, fontsize="small")
plt.show()


# %% [markdown]
# ### The roofline, measured
#
# Now GELU at sizes from 4 thousand to 16 million elements: numpy operation by operation (into preallocated arrays, as
# in section 1), the kernel the Numba backend generates by default (accurate `tanh`), the same with `fast_math=True`, and the
# copy. Each is shown as the bandwidth it *would* need if it moved only the 8 bytes per element a fused kernel moves, so
# the copy is the roof. Everything runs on one core, compiled before timing; each point is CPU time, the fastest of five
# interleaved runs.

# %%
def fused_kernel(size, fast_math):
    """The kernel the Numba backend generates for GELU on `size` float32 values (kernel(x, out)), serial: the
    library's generator on GELU's one fusion group, as jit.compile(gelu, backend="numba") calls it."""
    body = fused_body(gelu, np.zeros(size, np.float32))
    return load_module(codegen.kernel_source(body, parallel=False, fast_math=fast_math)).kernel


sizes = [1 << p for p in range(12, 25, 2)]
rates = {name: [] for name in ["numpy, op by op", "fused (default)", "fused, fast math", "copy"]}
for size in tqdm(sizes, desc="array size"):
    xs, ys = rng.standard_normal(size).astype(np.float32), np.empty(size, np.float32)
    calls = [call for _, call, _ in numpy_gelu_steps(xs, [np.empty_like(xs) for _ in range(9)])]
    exact, fast = fused_kernel(size, fast_math=False), fused_kernel(size, fast_math=True)
    number = max(1, (1 << 20) // size)  # calls per timed run: at least a million elements, so runs last ~1 ms
    timings = interleaved_times({
        "numpy, op by op": lambda: [call() for call in calls],
        "fused (default)": lambda: exact(xs, ys),
        "fused, fast math": lambda: fast(xs, ys),
        "copy": lambda: np.copyto(ys, xs),
    }, repeat=5, number=number)
    for name, seconds in timings.items():
        rates[name].append(8 * size / seconds / 1e9)

fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
for (name, values), style in zip(rates.items(), ["o-", "s-", "^-", "k--"]):
    ax.loglog(sizes, values, style, label=name)
ax.set_xlabel("elements (float32)")
ax.set_ylabel("GB/s at 8 bytes per element")
ax.set_title("GELU: unfused, fused, and the copy roofline")
ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
plt.show()
print(f"at {sizes[-1]:,} elements: fused fast math reaches {rates['fused, fast math'][-1] / rates['copy'][-1]:.0%} "
      f"of the copy bandwidth and runs {rates['fused, fast math'][-1] / rates['numpy, op by op'][-1]:.1f}x faster "
      f"than numpy op by op")

# %% [markdown]
# Both roofs of the roofline model are in this picture. While the arrays fit in the caches (the smaller sizes), the copy
# runs at the caches' bandwidth, far above main memory's, and the fused kernels cannot follow: their twenty-odd
# arithmetic operations per element (`tanh` includes a division) make them **compute-bound** there, at a flat rate set
# by the core. Out of the caches (the right end), the copy falls to main memory's bandwidth and the fused kernels come
# close to it: now they are memory-bound, as fast as moving the data once allows, within a small factor. The default
# and the fast-math kernels are close to each other: both vectorise, and the arithmetic the cheaper approximation saves
# matters little next to the memory traffic. numpy's nine passes sit far below the fused kernels at every size, lowest
# where their intermediates no longer fit in the caches. `benchmarks/bench_fusion.py` repeats the measurement at 16M elements against PyTorch (eager,
# `F.gelu(approximate="tanh")` and `torch.compile`); its targets are at least half the copy bandwidth and twice the
# speed of `torch.compile` (everything on one thread).
#
# ### A whole training step
#
# The same backend compiles forward and backward passes. The layer from section 2, larger, with its gradients; the
# generated source of every kernel is in `compiled.source`:

# %%
with runs_your('fusible_groups', 'kernel_source'):
    def mlp_loss(x, y, W1, b1, W2, b2):
        hidden = gelu(x @ W1 + b1)
        return ((hidden @ W2 + b2 - y) ** 2).mean()


    shapes = [(512, 64), (512, 8), (64, 256), (256,), (256, 8), (8,)]
    mlp_args = [(rng.standard_normal(s) / np.sqrt(s[0] if len(s) == 2 else 1)).astype(np.float32) for s in shapes]
    eager_step = mg.value_and_grad(mlp_loss, argnums=(2, 3, 4, 5))
    steps = {
        "eager minigrad": lambda *arrays: eager_step(*[mg.tensor(a) for a in arrays]),  # tensors keep float32
        "numpy backend": jit.compile(mlp_loss, backend="numpy", backward=True),
        "numba backend": jit.compile(mlp_loss, backend="numba", backward=True, fast_math=True),
    }
    results = {name: step(*mlp_args) for name, step in steps.items()}
    (eager_loss, eager_grads) = results["eager minigrad"]
    for name in ["numpy backend", "numba backend"]:
        loss, grads = results[name]
        assert_close(loss.data, eager_loss.data, f"{name}: loss", rtol=1e-5)
        for got, expected in zip(grads[2:], eager_grads):
            assert_close(got.data, expected.data, f"{name}: gradient", rtol=1e-3, atol=1e-6)
    step_times = interleaved_times({name: (lambda step=step: step(*mlp_args)) for name, step in steps.items()}, repeat=7)
    for name, seconds in step_times.items():
        print(f"{name:15s} {seconds * 1e3:6.2f} ms of CPU time per step")
    numba_step = steps["numba backend"]
    print(f"\n{sum(n.op == 'fused' for n in numba_step.runner.graph.nodes)} fused kernels; the first one:\n")
    print(numba_step.source.split("# ---- ")[1])

# %% [markdown]
# The three agree to float32 rounding. Compare the times: eager minigrad records a graph and runs the engine at every
# step; the interpreter of chapter 8 runs the same numpy calls without that bookkeeping; the fused step replaces the
# elementwise passes by kernels. What fusion cannot speed up is the matrix products, which both compiled versions
# hand to BLAS, so the fused step gains far less than section 1's tenfold reduction of elementwise traffic — fusion pays
# most where elementwise work dominates, as in normalisation layers and activations of large tensors. The kernels are many because of the one-output rule: the backward pass
# reads the forward pass's intermediates, so each of them must be written to memory once.
#
# ## 6. The same kernels on a GPU
#
# A GPU runs a kernel as a **grid** of thread blocks, thousands of threads at once, and hides memory latency by switching
# between them. Its memory (HBM on an H100/H200, 3–5 TB/s) is faster than a CPU's, but its arithmetic is faster still:
# the machine balance is in the hundreds of flops per byte, so elementwise kernels are *more* memory-bound on a GPU, and
# fusion matters more. The article's example — matrix product, bias, ReLU — is exactly the epilogue fusion of section 4.
#
# The CUDA backend emits the same groups as `numba.cuda.jit` kernels with a **grid-stride loop**: thread $t$ of a grid of
# $T$ threads computes elements $t, t + T, t + 2T, \dots$, so any grid covers any array, and neighbouring threads touch
# neighbouring addresses, which the memory system serves in one transaction (*coalescing*). Arrays arrive flat; the
# multi-index is derived from the flat index only when an operand broadcasts:

# %%
print(codegen.kernel_source(fused_body(lambda x, b: gelu(x + b), np.ones((4, 8), np.float32), np.ones(8, np.float32)),
                                target="cuda"))

# %% [markdown]
# Where there is no GPU, Numba's **CUDA simulator** runs these kernels: every thread of every block becomes a Python
# thread executing the same source, so the indexing, the grid-stride loop and the results are exactly what a GPU would
# compute — only slowly, so we use small arrays. It must be chosen before `numba.cuda` is imported; the backend does this
# by itself when it finds no CUDA driver. On a machine with a GPU the very same call runs on the device.
# The gradients are checked against eager minigrad's, both in float32: the kernels add in another order, so the two
# differ by the rounding of the largest products (float32 keeps about 7 digits), and an entry near zero can differ from
# eager minigrad's by more than its own size. The check therefore allows each gradient $10^{-5}$ of its largest entry (about a hundred
# float32 rounding steps) on top of $10^{-4}$ relative.

# %%
with runs_your('fusible_groups', 'kernel_source'):
    from minigrad.jit.backends.cuda_backend import simulated

    cuda_step = jit.compile(mlp_loss, backend="cuda", backward=True)
    cuda_rng = np.random.default_rng(9)  # its own generator: the same arrays whichever cells ran before
    tiny_shapes = [(4, 8), (4, 2), (8, 16), (16,), (16, 2), (2,)]  # tiny: simulated threads are slow
    small = [cuda_rng.standard_normal(s).astype(np.float32) for s in tiny_shapes]
    start = time.perf_counter()
    loss, grads = cuda_step(*small)
    seconds = time.perf_counter() - start
    expected_loss, expected_grads = eager_step(*[mg.tensor(a) for a in small])
    print(f"ran on {'the CUDA simulator' if simulated() else 'the GPU'} in {seconds:.2f} s; "
          f"loss {loss.item():.6f} (eager {expected_loss.item():.6f})")
    for got, expected in zip(grads[2:], expected_grads):
        assert_close(got.data, expected.data, "gradient from the CUDA kernels", rtol=1e-4,
                     atol=1e-5 * np.abs(expected.data).max())  # float32 rounding of the largest entries
    print(f"{cuda_step.runner.transfers} host/device copies: matrix products outside an epilogue and reductions run on "
          f"the host in this backend")

# %%
if not simulated():  # a real GPU: the fused GELU's bandwidth against a device-to-device copy
    from numba import cuda

    n_gpu = 1 << 26
    program = jit.get_backend("cuda").compile(jit.trace(gelu, np.zeros(n_gpu, np.float32)))
    (node,) = [v for v in program.graph.nodes if v.op == "fused"]
    gpu_kernel, _ = program.kernels[node.id]
    device_x = cuda.to_device(rng.standard_normal(n_gpu).astype(np.float32))
    device_y, device_copy = cuda.device_array(n_gpu, np.float32), cuda.device_array(n_gpu, np.float32)

    def device_seconds(launch, repeat=10):
        launch()
        cuda.synchronize()
        start, stop = cuda.event(), cuda.event()
        start.record()
        for _ in range(repeat):
            launch()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / 1e3 / repeat

    fused_s = device_seconds(lambda: gpu_kernel[min(-(-n_gpu // 256), 32 * 1024), 256](device_x, device_y))
    copy_s = device_seconds(lambda: device_copy.copy_to_device(device_x))
    print(f"GPU: fused GELU {8 * n_gpu / fused_s / 1e9:.0f} GB/s, device copy {8 * n_gpu / copy_s / 1e9:.0f} GB/s "
          f"({copy_s / fused_s:.0%} of the copy)")
else:
    print("No GPU here: the kernels above ran on the simulator. On a machine with one, this cell measures the fused "
          "GELU's bandwidth against a device-to-device copy.")

# %% [markdown]
# ## Summary
#
# * Elementwise operations are **memory-bound**: their time is the bytes they move divided by the memory bandwidth
#   (the roofline, $T \ge \max(W/P,\ Q/B)$). Run one at a time, a chain of them moves every intermediate through memory;
#   fused, it moves only its inputs and its output.
# * A **fusion group** is a convex set of elementwise operations of one shape with a single output; broadcast views
#   join for free; reductions, matrix products and data movement end groups. Growing groups backwards from their sinks
#   finds them in one pass.
# * A static graph knows shapes, dtypes and constants, so a **code generator** can write a kernel specialised to them:
#   one loop nest, broadcasting as index expressions, constants as typed literals. The source doubles as the cache key.
# * **Epilogue fusion** finishes matrix product, bias and activation while each output row is in the cache; it pays where
#   the product is memory-bound, while large products need BLAS-style blocking.
# * A fused kernel reaches memory speed only if its body vectorises: library calls such as `tanhf` make it
#   compute-bound, vectorisable functions with a bounded error (within 1.75 ulp for the default `tanh`, $< 10^{-6}$
#   relative with fast math) make it memory-bound again.
# * The same generated kernels run on a GPU as grid-stride loops; on the GPU, with its higher machine balance, fusion
#   matters even more.
#
# This closes the path from the computational graph of chapter 1 to a small compiler: the graph is recorded by running
# Python (chapter 1), differentiated by walking it backwards (chapter 2), traced into a static IR, cleaned and planned
# (chapter 8), and finally fused into generated machine code.
#
# ## References
#
# * «Граф вычислений» (Computational graph, in Russian). *MachineLearning wiki*, July 2026.
#   http://machinelearning.ru/wiki/index.php?title=%D0%93%D1%80%D0%B0%D1%84_%D0%B2%D1%8B%D1%87%D0%B8%D1%81%D0%BB%D0%B5%D0%BD%D0%B8%D0%B9
#   (The source article this course follows; its section on operator fusion is quoted at the start of this chapter.)
# * T. Chen, T. Moreau, Z. Jiang, L. Zheng, E. Yan, M. Cowan, H. Shen, L. Wang, Y. Hu, L. Ceze, C. Guestrin,
#   A. Krishnamurthy. TVM: An automated end-to-end optimizing compiler for deep learning. *OSDI* 2018, 578–594.
# * J. Ragan-Kelley, C. Barnes, A. Adams, S. Paris, F. Durand, S. Amarasinghe. Halide: a language and compiler for
#   optimizing parallelism, locality, and recomputation in image processing pipelines. *PLDI* 2013, 519–530.
# * J. D. McCalpin. Memory bandwidth and machine balance in current high performance computers. *IEEE TCCA
#   Newsletter*, December 1995, 19–25. (The STREAM benchmark.)
# * S. Williams, A. Waterman, D. Patterson. Roofline: an insightful visual performance model for multicore architectures.
#   *Communications of the ACM* 52(4):65–76, 2009.
# * D. Hendrycks, K. Gimpel. Gaussian error linear units (GELUs). arXiv:1606.08415, 2016.
# * S. K. Lam, A. Pitrou, S. Seibert. Numba: a LLVM-based Python JIT compiler. *LLVM-HPC* 2015.
# * J. Ansel et al. PyTorch 2: faster machine learning through dynamic Python bytecode transformation and graph
#   compilation. *ASPLOS* 2024. (TorchInductor, the compiler behind `torch.compile`.)
# * M. Abadi et al. TensorFlow: a system for large-scale machine learning. *OSDI* 2016, 265–283. (XLA's fusion grew from
#   this system.)
