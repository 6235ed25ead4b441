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
# # Chapter 8 — Static graphs: tracing, dead code and memory plans
#
# Every graph so far was built *while the program ran*. Each operation on tensors that require gradients recorded a
# node, and the next call of the same function recorded a new graph from scratch. This style is called
# **define-by-run**; Chainer introduced it to deep learning (Tokui et al. 2015) and PyTorch made it the norm
# (Paszke et al. 2019). Its strength is that the model *is* the Python program: `if`, `for`, `print` and the debugger
# work as usual, and each input may take a different path through the code.
#
# The first frameworks worked the other way round. In Theano (Bergstra et al. 2010) and TensorFlow 1.x (Abadi et al.
# 2016) the programmer first **defines** the graph symbolically — placeholders for data, variables for weights, no
# numbers anywhere — and then **runs** it, many times, in a session that feeds data in:
#
# ```python
# # TensorFlow 1.x: define ...
# x = tf.placeholder(tf.float32, [None, 784])
# W = tf.Variable(tf.zeros([784, 10]))
# y = tf.nn.softmax(tf.matmul(x, W))
# # ... and run
# with tf.Session() as session:
#     session.run(tf.global_variables_initializer())
#     probabilities = session.run(y, feed_dict={x: batch})
# ```
#
# This **define-and-run** style is awkward to write (branches become graph operations such as `tf.cond`, and an error
# shows up at `run`, far from the line that caused it), but it has one decisive advantage: the framework sees the
# **whole program before running any of it**, and a whole program can be optimised. It can
#
# * drop the operations whose results nobody needs (**dead-code elimination**);
# * decide in advance where every intermediate tensor lives and reuse memory between tensors whose lifetimes do not
#   overlap (**memory planning**, or memory pooling);
# * merge chains of operations into single kernels that keep intermediates in registers (**operator fusion**,
#   chapter 9), and place operations on devices.
#
# | | define-and-run (static) | define-by-run (dynamic) |
# | --- | --- | --- |
# | examples | Theano, TensorFlow 1.x, Caffe | Chainer, PyTorch, minigrad |
# | the graph is built | once, before any data | on every call, by running the code |
# | control flow | graph operations (`tf.cond`, `tf.while_loop`) | Python's `if` and `for` |
# | debugging | errors at `session.run` | errors at the line, `print` works |
# | optimisation | whole-program: DCE, memory plans, fusion | one operation at a time |
#
# Modern frameworks keep both: you write define-by-run code and a **just-in-time compiler** turns it into a static
# graph for execution — `jax.jit` (Frostig et al. 2018), `tf.function`, `torch.compile` (Ansel et al. 2024), with
# XLA or Triton behind them. The bridge between the two worlds is **tracing**: run the Python function once, record
# what it does, and keep the recording as the program.
#
# In this chapter you build the three pieces of such a compiler, on top of minigrad's recording machinery:
#
# 1. `trace(fn, *example_inputs)` — a Python function to a static graph in a small intermediate representation (IR);
# 2. `eliminate_dead_code(graph)` — remove what no output depends on;
# 3. `plan_memory(graph)` — liveness analysis and an assignment of every intermediate to a place in one memory arena.
#
# The library's versions live in `minigrad.jit`, which assembles them into `minigrad.jit.compile(fn)`: the last
# section trains a network with a compiled training step.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib

import numpy as np
import matplotlib.pyplot as plt
from tqdm.auto import tqdm

import minigrad as mg
import minigrad.jit as jit
from minigrad.jit import Graph, InvalidPlan, MemoryPlan, Node, check_plan
from minigrad.jit.backends.numpy_backend import PlannedInterpreter, run_graph
from minigrad.jit.draw import draw_ir
from minigrad.jit.memory_plan import aligned
from minigrad.jit.plots import live_bytes_over_time, plot_memory_plan
from minigrad.jit.trace import trace_with_structure
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
# ## 1. A static graph, written down
#
# A computation is a sequence of assignments $v_i = \varphi_i(v_{\mathrm{Pa}(i)})$, each applying a primitive
# $\varphi_i$ to earlier values — the evaluation trace of chapter 1. A static graph records that sequence *without
# the values*: for every vertex, which primitive, which inputs, and the shape and dtype of what it will produce. The
# IR of `minigrad.jit` is exactly that list:
#
# * a `Node(id, op, inputs, shape, dtype, params)`: `op` is a primitive's name from `minigrad.ops` (`"mul"`,
#   `"tanh"`, `"matmul"`, `"sum"`, …), or `"input"` (an argument of the program), or `"constant"` (a value fixed in
#   the graph, held in `params` as `(("value", array),)`); `inputs` are the ids of the nodes it reads; `params` are
#   the primitive's keyword parameters as a sorted tuple of `(name, value)` pairs, e.g. `(("axis", (0,)), ("keepdims", True))`;
# * a `Graph(nodes, inputs, outputs)`: the nodes in topological order (every node after the nodes it reads, ids
#   increasing), the ids of the input nodes in argument order, and the ids of the returned nodes.
#
# Here is $y = \tanh(x \cdot w + 1)$ written by hand, define-and-run style: first the graph, then data for it. The
# reference interpreter `run_graph` evaluates the nodes in order with each primitive's forward function.

# %%
hand_built = Graph(
    nodes=[
        Node(0, "input", (), (3,), "float64"),
        Node(1, "input", (), (3,), "float64"),
        Node(2, "mul", (0, 1), (3,), "float64"),
        Node(3, "constant", (), (), "float64", (("value", np.array(1.0)),)),
        Node(4, "add", (2, 3), (3,), "float64"),
        Node(5, "tanh", (4,), (3,), "float64"),
    ],
    inputs=[0, 1],
    outputs=[5],
)
print(hand_built)
print("run on data:", run_graph(hand_built, np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0])))
mg.draw(hand_built)


# %% [markdown]
# The drawing uses the conventions of eager graphs: inputs in blue, constants dashed, operations as ellipses, the
# output in orange. Value boxes are labelled by node id (`%4`) and shape; inputs are called `x0`, `x1`, … by position.
#
# ## 2. Tracing
#
# Writing graphs by hand is what define-and-run asked of its users. A tracer writes them for us: it calls the Python
# function once, on **example inputs**, and records every primitive that runs. minigrad already records — that is how
# `backward` knows what to do — so tracing is mostly a change of representation:
#
# 1. make each example input a fresh leaf tensor that requires grad, so that everything computed from it records a
#    `Node(op, inputs, params)`;
# 2. call `fn` on them (under `mg.enable_grad()`, in case the caller disabled recording);
# 3. walk the recorded graph below the outputs in topological order (`mg.topological_sort`, chapter 1) and emit one IR
#    node per tensor: an `"input"` for each argument, a `"constant"` for any other leaf (a weight closed over by
#    `fn`, a Python number lifted to a tensor, a mask), and otherwise a node named after the operation that produced
#    the tensor, `tensor.node.op.name`, reading the ids of `tensor.node.inputs`, with `tensor.node.params` (a dict)
#    turned into a sorted tuple.
#
# Ids are positions in the node list: the inputs take ids $0, \dots, k-1$ in argument order, even if `fn` reads them
# in another order or not at all, since they are the parameters of the program. A tensor reachable from several
# outputs (or several times) becomes one node. A constant holds a *copy* of its data: the graph must not change
# when the weight it came from is later updated in place.
#
# Because the backward pass of minigrad is itself made of minigrad operations, a traced function may contain one:
# `trace(mg.grad(f), x)` records the forward pass *and* the operations that compute the gradient (`grad` sees that
# its input is being differentiated and records its backward pass, chapter 4), giving one static program for a
# training step.

# %% [markdown]
# ### Graded: `trace(fn, *example_inputs)`
#
# Return the `Graph` of `fn` as described above. Useful pieces: `mg.tensor(data, requires_grad=True)`,
# `mg.topological_sort(t)` (everything `t` depends on, parents first), `t.is_leaf`, `t.node.op.name`,
# `t.node.inputs`, `t.node.params`, and `np.asarray(t.data)` for the shape and the dtype name (`.dtype.name`).
# Tensors are hashable by identity, so a dict `{id(tensor): node_id}` remembers which tensors already have a node.

# %% nbgrader={"grade": false, "grade_id": "trace", "locked": false, "schema_version": 3, "solution": true}
def trace(fn, *example_inputs):
    """The static graph of `fn`, recorded by running it once on `example_inputs`.

    The example inputs (float arrays or tensors) become fresh leaves that require grad, so that
    every operation `fn` applies to them records its `Node`. The graph lists, in order:

    * one "input" node per argument (ids 0, 1, ... in argument order);
    * every tensor the outputs depend on, parents before children (a topological order):
      a leaf that is not an input becomes a "constant" node whose params are
      `(("value", a copy of its data),)`; a tensor made by an operation becomes a node with the
      operation's name (`tensor.node.op.name`), the ids of its inputs, and its params as a sorted
      tuple of (name, value) pairs.

    `outputs` holds the ids of what `fn` returns: one Tensor, or a tuple/list of them.
    """
    ### BEGIN SOLUTION
    inputs = [mg.tensor(np.array(x.data if isinstance(x, mg.Tensor) else x), requires_grad=True) for x in example_inputs]
    with mg.enable_grad():
        result = fn(*inputs)
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    ids, nodes = {}, []

    def add(tensor, op, operands=(), params=()):
        ids[id(tensor)] = len(nodes)
        data = np.asarray(tensor.data)
        nodes.append(Node(len(nodes), op, tuple(operands), data.shape, data.dtype.name, params))

    for tensor in inputs:
        add(tensor, "input")
    for output in outputs:
        for tensor in mg.topological_sort(output):
            if id(tensor) in ids:
                continue
            if tensor.is_leaf:
                add(tensor, "constant", params=(("value", np.array(tensor.data)),))
            else:
                node = tensor.node
                add(tensor, node.op.name, [ids[id(p)] for p in node.inputs], tuple(sorted(node.params.items())))
    return Graph(nodes, list(range(len(inputs))), [ids[id(t)] for t in outputs])
    ### END SOLUTION


# %% [markdown]
# The tests compare your graph's structure with what the definition says, then *run* it with the reference
# interpreter on inputs different from the example inputs, against eager minigrad: a graph that lost a constant, mixed
# up the inputs or recorded the wrong parameters computes something else.

# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_trace", "locked": true, "schema_version": 3, "solution": false}
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


def ladder(x, depth):
    """`depth` steps of y = (y + y) * 0.5, which leave y = x: each step reads the one before twice, so the graph has
    2**depth paths from the output down to x. A walk that visits each tensor once takes 3 * depth steps; a walk that
    does not remember what it has visited follows every path."""
    for _ in range(depth):
        x = (x + x) * 0.5
    return x


def traced(source, examples, names=None):
    """Driver: your trace of the program `source` on the example arrays, as data (graph_data)."""
    return graph_data(trace(program(source, names), *examples))


def traced_then_updated(weight):
    """Driver: your trace of x * w for a weight tensor w, then w's data overwritten with 100s in place (as an
    optimizer step does); returns the graph as data, read after the update."""
    w = mg.tensor(np.array(weight))
    graph = trace(lambda x: x * w, np.ones(len(weight)))
    w.data[...] = 100.0
    return graph_data(graph)


# %% nbgrader={"grade": true, "grade_id": "test_trace_structure", "locked": true, "points": 2, "schema_version": 3, "solution": false}
def traced_graph(source, *examples):
    """Your trace of the program on the examples, rebuilt here from the data the driver returned."""
    return graph_from_data(drive(traced, source, list(examples)), f"trace({source}, ...)")


g = traced_graph("lambda x, y: (x * y + 1.0).tanh()", np.array([1.0, 2.0]), np.array([3.0, 4.0]))
validated(g, "trace((x * y + 1.0).tanh(), x, y)")  # ids increase, every node reads earlier nodes, inputs/outputs exist
assert_equal([n.op for n in g.nodes[:2]], ["input", "input"], "the first nodes of the graph: one 'input' per argument")
assert_equal(g.inputs, [0, 1], "graph.inputs: the ids of the input nodes, in argument order")
assert_equal(sorted(n.op for n in g.nodes if n.op not in ("input", "constant")), ["add", "mul", "tanh"],
             "the operations recorded for (x * y + 1.0).tanh()")
constants = [n for n in g.nodes if n.op == "constant"]
assert_equal(len(constants), 1, "number of constant nodes (the 1.0)")
assert "value" in constants[0].param_dict, f"the constant node's params should hold its value, got {constants[0].params}"
assert_close(constants[0].param_dict["value"], 1.0, "the value held by the constant node")
assert_equal(len(g.outputs), 1, "one output")
out = g.node(g.outputs[0])
assert_equal((out.op, out.shape, out.dtype), ("tanh", (2,), "float64"), "the output node's (op, shape, dtype)")
mul = next(n for n in g.nodes if n.op == "mul")
assert_equal(mul.inputs, (0, 1), "the ids the mul node reads (x is input 0, y is input 1)")
print("trace: inputs, constants and operations are recorded")
### BEGIN HIDDEN TESTS
g = traced_graph("lambda x, y: y.exp() * x", np.ones(3), np.full(3, 2.0))  # y is used first
validated(g, "trace")
assert_equal(g.inputs, [0, 1], "inputs in argument order even when fn reads y first")
exp = next(n for n in g.nodes if n.op == "exp")
assert_equal(exp.inputs, (1,), "exp reads y, input 1")
g = traced_graph("lambda x, unused: x.sum(axis=0, keepdims=True)", np.ones((2, 3), np.float32), np.ones(4))
validated(g, "trace")
assert_equal(len(g.inputs), 2, "an unused argument is still an input")
assert_equal(g.node(g.inputs[1]).shape, (4,), "shape of the unused input")
total = next(n for n in g.nodes if n.op == "sum")
assert_equal(total.params, (("axis", (0,)), ("keepdims", True)), "params: the sorted (name, value) pairs of sum")
assert_equal((total.shape, total.dtype), ((1, 3), "float32"), "shape and dtype of a float32 sum")
g = traced_graph("lambda x: (x * x, x.exp() * x * x)", np.ones(2))
validated(g, "trace")
assert_equal(len(g.outputs), 2, "two outputs for a tuple result")
assert_equal(sum(n.op == "exp" for n in g.nodes), 1, "a tensor reached from two outputs is one node")
assert_equal(len({n.id for n in g.nodes}), len(g.nodes), "node ids are unique")
# Shared subexpressions: a ladder of 40 steps has 2**40 paths from the output to x; each tensor is visited once.
try:
    g = graph_from_data(drive(traced, "lambda x: ladder(x, 40)", [np.ones(3)], seconds=2), "trace(ladder(x, 40))")
except TimeoutError:
    raise AssertionError("trace did not finish a ladder of 40 steps y = (y + y) * 0.5 in 2 s: its graph has 2**40 "
                         "paths from the output to x, and a walk that follows every path never ends. Give each tensor "
                         "one node, and visit it once (mg.topological_sort does)") from None
validated(g, "trace(ladder(x, 40))")
assert_equal(sorted(n.op for n in g.nodes if n.op in ("add", "mul")), ["add"] * 40 + ["mul"] * 40,
             "the operations of a ladder of 40 steps (each tensor once)")
assert_close(run_graph(g, np.array([1.0, -2.0, 3.0]))[0], [1.0, -2.0, 3.0], "the traced ladder run on new inputs")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_trace_runs_on_new_inputs", "locked": true, "points": 3, "schema_version": 3, "solution": false}
rng = np.random.default_rng(8)
weights = {"W": rng.standard_normal((3, 4)), "b": rng.standard_normal(4)}
programs = {
    "(x @ W + b).relu().sum(axis=1)": ("lambda x: (x @ mg.tensor(W) + mg.tensor(b)).relu().sum(axis=1)", [(5, 3)]),
    "x * y - x / 2": ("lambda x, y: x * y - x / 2.0", [(2, 3), (3,)]),
    "mean of tanh(x).T": ("lambda x: x.tanh().T.mean(axis=0)", [(4, 2)]),
    "x[1:] ** 2 reshaped": ("lambda x: (x[1:] ** 2).reshape(2, 3)", [(3, 3)]),
}
for name, (source, shapes) in programs.items():
    graph = graph_from_data(drive(traced, source, [np.ones(s) for s in shapes], weights), f"trace({name})")
    new_inputs = [rng.standard_normal(s) for s in shapes]
    (got,) = run_graph(graph, *new_inputs)  # the library's interpreter runs your graph here
    assert_close(got, program(source, weights)(*[mg.tensor(a) for a in new_inputs]).data,
                 f"{name}: the traced graph run on new inputs, against eager minigrad", rtol=1e-12, atol=1e-12)
print("trace: the graphs compute what the functions compute, on inputs they were not traced with")
### BEGIN HIDDEN TESTS
graph = graph_from_data(drive(traced_then_updated, [1.0, 2.0]), "trace(lambda x: x * w)")
# the weight's array was overwritten with 100s after tracing: the trace must hold a copy of it
assert_close(run_graph(graph, np.array([3.0, 4.0]))[0], [3.0, 8.0], "a constant keeps the value it had at trace time")

loss = "lambda x, v: ((x @ v).relu() ** 2).sum() + (x * v.sum()).sin().mean()"
x0, v0 = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
grads = graph_from_data(drive(traced, f"mg.grad({loss}, argnums=(0, 1))", [x0, v0]), "trace(grad(f, argnums=(0, 1)))")
assert_equal(len(grads.outputs), 2, "trace(grad(f, argnums=(0, 1))) has two outputs")
for _ in range(2):
    x1, v1 = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    expected = mg.grad(program(loss), argnums=(0, 1))(x1, v1)
    for k, (got, want) in enumerate(zip(run_graph(grads, x1, v1), expected)):
        assert_close(got, want.data, f"traced backward pass, gradient {k}, on new inputs", rtol=1e-10, atol=1e-12)
pair = graph_from_data(drive(traced, "lambda x, y: (x + y, (x * y).sum())", [np.ones(2), np.ones(2)]), "trace of a pair")
a, s = run_graph(pair, np.array([1.0, 2.0]), np.array([3.0, 5.0]))
assert_close(a, [4.0, 7.0], "first of two outputs")
assert_close(s, 13.0, "second of two outputs")
### END HIDDEN TESTS

# %% [markdown]
# ### Experiment: the graph of a training step
#
# A two-layer perceptron with its weights passed as arguments (so that they are inputs of the program, not constants),
# and its loss:

# %%
with runs_your('trace'):
    def mlp_loss(x, y, W1, b1, W2, b2):
        hidden = (x @ W1 + b1).tanh()
        return ((hidden @ W2 + b2 - y) ** 2).mean()


    rng = np.random.default_rng(0)
    shapes = {"x": (32, 8), "y": (32, 1), "W1": (8, 16), "b1": (16,), "W2": (16, 1), "b2": (1,)}
    example = [rng.standard_normal(s) * 0.5 for s in shapes.values()]
    forward = trace(mlp_loss, *example)
    print(forward)
    display(mg.draw(forward, names={**dict(zip(shapes, forward.inputs)), "loss": forward.outputs[0]}, rankdir="TB"))

# %% [markdown]
# Now the same loss with its gradients. `mg.grad(mlp_loss, argnums=(2, 3, 4, 5))` is an ordinary Python function
# that returns four gradient tensors; tracing it records the forward pass, then the backward pass that the engine ran
# in reverse topological order — the adjoint recursion $\bar v_i = \sum_{j \in \mathrm{Ch}(i)} \bar v_j\,
# \partial v_j / \partial v_i$ unrolled into primitives, with `transpose`, `matmul`, `sum` and `reshape` for
# broadcasting undone. Red nodes in eager drawings of `create_graph=True` graphs are these same operations. In the
# drawing, the forward pass runs from the inputs at the top to `%14`, the residual $\hat y - y$; the loss itself is
# not in the trace, since no gradient needs its value. Below, the backward pass fans out to the four gradients
# (orange).

# %%
with runs_your('trace'):
    training_step = trace(mg.grad(mlp_loss, argnums=(2, 3, 4, 5)), *example)
    ops_forward = [n.op for n in forward.nodes if n.op not in ("input", "constant")]
    ops_step = [n.op for n in training_step.nodes if n.op not in ("input", "constant")]
    print(f"forward: {len(ops_forward)} operations; forward + backward: {len(ops_step)} operations")
    print("operations only the backward pass adds:", sorted(set(ops_step) - set(ops_forward)))
    gradient_names = {f"dL/d{name}": i for name, i in zip(["W1", "b1", "W2", "b2"], training_step.outputs)}
    display(mg.draw(training_step, names={**dict(zip(shapes, training_step.inputs)), **gradient_names}, rankdir="TB", max_nodes=60))

# %% [markdown]
# The backward pass costs a small multiple of the forward pass in operations — the cheap-gradient principle of
# chapter 2, here visible as a node count. Run on fresh data, the traced step gives the same gradients as eager
# minigrad:

# %%
with runs_your('trace'):
    fresh = [rng.standard_normal(s) * 0.5 for s in shapes.values()]
    traced_grads = run_graph(training_step, *fresh)
    eager_grads = mg.grad(mlp_loss, argnums=(2, 3, 4, 5))(*fresh)
    for name, got, expected in zip(["W1", "b1", "W2", "b2"], traced_grads, eager_grads):
        print(f"d loss / d {name}: max |traced - eager| = {np.max(np.abs(got - expected.data)):.1e}")

# %% [markdown]
# ### The limits of tracing
#
# A trace records **what ran**, not what the code says. Everything Python decides by looking at the values of
# tensors — an `if` on a tensor, a loop whose length depends on data, a comparison that builds a mask — is decided
# once, with the example inputs, and frozen into the graph. Here is a function with a branch:

# %%
with runs_your('trace'):
    def branchy(x):
        if x.sum() > 0:  # Python looks at the data here
            return x * 2.0
        return -x


    frozen = trace(branchy, np.array([1.0, 2.0]))  # traced with a positive sum: the first branch
    print(frozen)
    negative = np.array([-1.0, -2.0])
    print("eager on [-1, -2]:  ", branchy(mg.tensor(negative)).data)
    print("traced on [-1, -2]: ", run_graph(frozen, negative)[0], " <- the branch taken at trace time")


# %% [markdown]
# The graph has no `if` in it: the comparison produced a Python `bool`, which minigrad cannot record. The same
# happens to a mask built with a comparison (`mg.where(x > 0, x, 0 * x)` stores the mask of the example input as a
# constant), to `.item()` and `.numpy()` escapes, and to weights closed over by the function, which are copied as
# constants (pass them as arguments to keep them live). Each framework answers differently:
#
# * TensorFlow 1.x makes control flow part of the graph (`tf.cond`, `tf.while_loop`), so the graph has branches;
#   JAX does the same with `jax.lax.cond` and raises an error when a traced value is used as a Python `bool`;
# * `torch.jit.script` compiled the Python source itself instead of tracing it;
# * `torch.compile` records **guards** — the assumptions the trace made, such as shapes, dtypes and the branch
#   taken — and checks them at every call, retracing when one fails or falling back to eager Python at a
#   "graph break".
#
# `minigrad.jit.compile` guards on shapes and dtypes only: a call with a new signature traces again. Data-dependent
# branches stay the user's responsibility, which is the usual contract of a tracing JIT. The library's own
# operations are written so that this never bites: the backward pass of `relu` multiplies by a mask computed by a
# primitive (`relu_mask`) inside the graph rather than by a constant, so a traced backward pass recomputes the mask
# for every new input.

# %% [markdown]
# ## 3. Dead-code elimination
#
# A node is **dead** if no output depends on it: removing it cannot change any result. Formally, the set of live
# nodes is the smallest set $L$ that contains the outputs and is closed under taking inputs,
#
# $$ L \supseteq \mathrm{outputs}, \qquad i \in L \;\Rightarrow\; \mathrm{Pa}(i) \subseteq L . $$
#
# Since every node comes after the nodes it reads, one sweep over the nodes in *reverse* topological order computes
# $L$: when a node is reached, all of its users have been visited, so whether it is live is already known; if it is,
# its inputs become live. That is $O(|V| + |E|)$, the cost of a backward pass — it is a backward pass, propagating
# "is needed" instead of adjoints.
#
# Your `trace` never produces dead code: it walks back *from the outputs*, which is dead-code elimination done while
# tracing. Real tracers record everything that runs (JAX's `jaxpr`, `torch.fx`, and `minigrad.jit.trace`, which
# listens on the hook every new node calls), because only that is faithful to the program, and then run DCE as a
# pass. Dead code is common in traced programs:
#
# * intermediates computed and dropped by user code (logging, a value used only in an `if`);
# * **adjoints nobody asked for**: a VJP rule computes the adjoint of every input, so the backward pass of `x / n` also
#   computes $\partial(x/n)/\partial n$ for the constant $n$ — eager minigrad computes it and throws it away, a static
#   graph can drop it before running;
# * the forward value itself when only gradients are returned, and outputs removed by later passes.

# %% [markdown]
# ### Graded: `eliminate_dead_code(graph)`
#
# Return a new `Graph` with only the live nodes, plus every input node (inputs are the program's parameters: removing
# an unused one would shift the arguments after it). Keep the surviving nodes' ids and order, and the graph's
# `inputs` and `outputs` lists; do not modify the graph you are given.

# %% nbgrader={"grade": false, "grade_id": "eliminate_dead_code", "locked": false, "schema_version": 3, "solution": true}
def eliminate_dead_code(graph):
    """A new Graph holding only the nodes the outputs depend on, and every input.

    A node is live if it is an output or an input of a live node. Inputs stay even when unused
    (they are the program's parameters). Surviving nodes keep their ids and their order; the
    graph given is not modified.
    """
    ### BEGIN SOLUTION
    live = set(graph.outputs)
    for node in reversed(graph.nodes):  # every user of a node comes after it
        if node.id in live:
            live.update(node.inputs)
    keep = live | set(graph.inputs)
    return Graph([n for n in graph.nodes if n.id in keep], list(graph.inputs), list(graph.outputs))
    ### END SOLUTION


# %% [markdown]
# The first test uses a graph with two outputs and a dead branch; the second graphs recorded by the library's tracer,
# dead code included, whose results must not change.

# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_dce", "locked": true, "schema_version": 3, "solution": false}
def recorded(fn, *examples, backward=False):
    """The library's tracer, `minigrad.jit.trace`: it records every operation that ran, dead code included, so the
    tests and experiments below use it to make graphs with dead code. It is called here by the name of the function
    that does its work, `trace_with_structure`, which stays the library's in the student bundle, where `jit.trace`
    runs your `trace` (which never records dead code)."""
    return trace_with_structure(fn, examples, backward)[0]


def pruned(data, other_outputs=()):
    """Driver: your eliminate_dead_code on the graph the test sent (as data). Returns the result and the graph you
    were given, read after the call (eliminate_dead_code must not modify it), and for each list in `other_outputs`
    the result for a second graph over the same list of nodes with those outputs (passes share what they keep:
    what the first call removed from its graph would be missing from the second)."""
    graph = graph_from_data(data, "the test's graph")
    result = eliminate_dead_code(graph)
    facts = {"result": graph_data(result), "given": graph_data(graph)}
    facts["again"] = [graph_data(eliminate_dead_code(Graph(graph.nodes, graph.inputs, list(outputs)))) for outputs in other_outputs]
    return facts


def pruned_all(datas):
    """Driver: your eliminate_dead_code on each graph the test sent; the results as data."""
    return [graph_data(eliminate_dead_code(graph_from_data(data, "the test's graph"))) for data in datas]


def dce_result(got, what):
    """(result, graph given as read after the call, [results for the other outputs]) from what `pruned` returned,
    each rebuilt as a Graph."""
    if type(got) is not dict or set(got) != {"result", "given", "again"} or type(got["again"]) is not list:
        raise AssertionError(f"{what}: malformed driver result {got!r:.200}")
    return (graph_from_data(got["result"], what), graph_from_data(got["given"], f"{what}, the graph given"),
            [graph_from_data(g, what) for g in got["again"]])


# %% nbgrader={"grade": true, "grade_id": "test_eliminate_dead_code_two_outputs", "locked": true, "points": 2, "schema_version": 3, "solution": false}
graph = Graph(
    nodes=[
        Node(0, "input", (), (4,), "float64"),
        Node(1, "input", (), (4,), "float64"),
        Node(2, "exp", (0,), (4,), "float64"),     # live: %4 reads it
        Node(3, "sin", (1,), (4,), "float64"),     # dead
        Node(4, "neg", (2,), (4,), "float64"),     # output
        Node(5, "cos", (3,), (4,), "float64"),     # dead
        Node(6, "mul", (0, 1), (4,), "float64"),   # output
    ],
    inputs=[0, 1],
    outputs=[4, 6],
)
# Then a second graph over the same list of nodes, with outputs [5] (passes share what they keep): it needs %1, %3, %5.
pruned_graph, given, (second,) = dce_result(drive(pruned, graph_data(graph), [[5]]), "eliminate_dead_code(graph)")
assert_equal([n.id for n in pruned_graph.nodes], [0, 1, 2, 4, 6],
             "ids of the nodes kept (the outputs %4 and %6 and everything they read; %3 and %5 are dead)")
assert_equal((pruned_graph.inputs, pruned_graph.outputs), ([0, 1], [4, 6]), "(inputs, outputs) of the pruned graph")
assert_equal(len(given.nodes), 7, "the graph given must not be modified (its number of nodes)")
assert_equal((given.inputs, given.outputs), ([0, 1], [4, 6]), "the graph given must not be modified (its inputs, outputs)")
assert_equal([n.id for n in second.nodes], [0, 1, 3, 5],
             "ids kept for a second graph over the same nodes with outputs [5] (the first call must leave the nodes alone)")
print("eliminate_dead_code: keeps what both outputs need and nothing else")
### BEGIN HIDDEN TESTS
unused_input = Graph([Node(0, "input", (), (2,), "float64"), Node(1, "input", (), (2,), "float64"),
                      Node(2, "exp", (0,), (2,), "float64"), Node(3, "sin", (2,), (2,), "float64")], [0, 1], [2])
identity = Graph([Node(0, "input", (), (2,), "float64"), Node(1, "exp", (0,), (2,), "float64")], [0], [0])
rng = np.random.default_rng(5)
graphs = []
for trial in range(30):  # random wiring: compare with the definition (closure under inputs)
    n_nodes = int(rng.integers(3, 25))
    nodes = [Node(0, "input", (), (), "float64")]
    for i in range(1, n_nodes):
        sources = tuple(int(s) for s in rng.integers(0, i, size=int(rng.integers(1, 3))))
        nodes.append(Node(i, "add" if len(sources) == 2 else "neg", sources, (), "float64"))
    outputs = [int(o) for o in rng.integers(0, n_nodes, size=int(rng.integers(1, 4)))]
    graphs.append(Graph(nodes, [0], outputs))
results = drive(pruned_all, [graph_data(g) for g in [unused_input, identity, *graphs]])
assert type(results) is list and len(results) == 32, f"eliminate_dead_code: malformed driver result {results!r:.200}"
results = [graph_from_data(r, "eliminate_dead_code(graph)") for r in results]
assert_equal([n.id for n in results[0].nodes], [0, 1, 2], "an unused input is kept, dead %3 is not")
assert_equal([n.id for n in results[1].nodes], [0], "a program returning its input")
# Shared subexpressions: %i = %(i-1) + %(i-1) for 60 steps has 2**60 paths from the output to the input; an unused
# node at the end is dead. Each node is visited once.
steps = [Node(0, "input", (), (), "float64")] + [Node(i, "add", (i - 1, i - 1), (), "float64") for i in range(1, 61)]
ladder_graph = Graph(steps + [Node(61, "neg", (60,), (), "float64")], [0], [60])
try:
    (got,) = drive(pruned_all, [graph_data(ladder_graph)], seconds=2)
except TimeoutError:
    raise AssertionError("eliminate_dead_code did not finish a ladder of 60 nodes %i = %(i-1) + %(i-1) in 2 s: it has "
                         "2**60 paths from the output to the input, and a walk that follows every path never ends. "
                         "Decide for each node once (one sweep in reverse order does)") from None
assert_equal([n.id for n in graph_from_data(got, "eliminate_dead_code(ladder)").nodes], list(range(61)),
             "the nodes kept of the ladder (all but the unused %61)")
for trial, (graph, got) in enumerate(zip(graphs, results[2:])):
    live, stack = set(), list(graph.outputs)
    while stack:
        i = stack.pop()
        if i not in live:
            live.add(i)
            stack.extend(graph.node(i).inputs)
    assert_equal([n.id for n in got.nodes], sorted(live | {0}), f"random graph {trial}: the nodes kept ({graph})")
    assert_equal(got.nodes, [n for n in graph.nodes if n.id in live | {0}], f"random graph {trial}: nodes kept unchanged, in order")
    assert_equal((got.inputs, got.outputs), (graph.inputs, graph.outputs), f"random graph {trial}: (inputs, outputs)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_eliminate_dead_code_traced_programs", "locked": true, "points": 2, "schema_version": 3, "solution": false}
def with_dead_code(x, y):
    unused = (x * y).exp()  # computed, never used
    return (x.tanh() - y).sum(), x.sin()

rng = np.random.default_rng(6)
args = [rng.standard_normal(3), rng.standard_normal(3)]
graph = recorded(with_dead_code, *args, backward=True)  # the library's tracer records everything that ran
pruned_graph, _, _ = dce_result(drive(pruned, graph_data(graph)), "eliminate_dead_code(traced graph)")
validated(pruned_graph, "eliminate_dead_code(traced graph)")
kept = {m.id for m in pruned_graph.nodes}
dead_ops = sorted(n.op for n in graph.nodes if n.id not in kept)
assert "exp" in dead_ops, f"the unused exp should be removed; removed ops: {dead_ops}"
recorded_keys = {n.key() for n in graph.nodes}
changed = [str(n) for n in pruned_graph.nodes if n.key() not in recorded_keys]
assert not changed, f"eliminate_dead_code: the nodes kept must be the graph's own nodes, unchanged; not in the graph: {changed[:3]}"
assert_equal(len(pruned_graph.outputs), 4, "outputs: the loss, x.sin(), and two gradients")
new = [rng.standard_normal(3), rng.standard_normal(3)]
for k, (got, expected) in enumerate(zip(run_graph(pruned_graph, *new), run_graph(graph, *new))):
    assert_close(got, expected, f"output {k} after dead-code elimination, against before", rtol=0, atol=0)
print(f"eliminate_dead_code: {len(graph.nodes) - len(pruned_graph.nodes)} dead nodes removed ({', '.join(dead_ops)}); results unchanged")
### BEGIN HIDDEN TESTS
only_grads = recorded(mg.grad(lambda x: (x.exp() * 3.0).sum()), np.ones(4))
pruned_graph, _, _ = dce_result(drive(pruned, graph_data(only_grads)), "eliminate_dead_code(trace of a gradient)")
assert "sum" not in [n.op for n in pruned_graph.nodes], "the loss itself (its sum) is dead when only the gradient is returned"
assert_close(run_graph(pruned_graph, np.zeros(4))[0], np.full(4, 3.0), "the gradient after DCE")
### END HIDDEN TESTS

# %% [markdown]
# ### Experiment: what a traced training step does not need
#
# The library's tracer keeps dead code, so we can look at it (`recorded`, defined with the tests above, is that tracer,
# `minigrad.jit.trace`, under a name that stays the library's in the student bundle). `draw_ir(graph, dim=...)` draws the nodes your pass
# removes faded:

# %%
with runs_your('eliminate_dead_code'):
    def small_loss(x, w):
        prediction = (x * w).sum(axis=1)
        return ((prediction - 1.0) ** 2).mean()


    full = recorded(small_loss, np.ones((4, 3)), np.ones(3), backward=True)
    pruned = eliminate_dead_code(full)
    dead = [n for n in full.nodes if n.id not in {m.id for m in pruned.nodes}]
    print("dead nodes:")
    for n in dead:
        print("   ", n)
    output_names = dict(zip(["loss", "dL/dx", "dL/dw"], full.outputs))
    display(draw_ir(full, names={"x": 0, "w": 1, **output_names}, dim={n.id for n in dead}, rankdir="TB"))

# %% [markdown]
# The dead nodes are adjoints of constants: `sub`'s rule returns $-\bar v$ for the constant $1.0$ (the `neg`), and the
# `div` of the mean computes the adjoint of its constant denominator, $-\bar v \cdot \mathrm{out} / n$ (the constant
# $-\bar v = -1$, a `mul` and a `div`). The engine computed each of them and dropped it (chapter 4's `count_vjps`
# counts such adjoints as *discarded*). After the pass, the program is:

# %%
with runs_your('eliminate_dead_code'):
    display(mg.draw(pruned, names={"x": 0, "w": 1, **output_names}, rankdir="TB"))

# %% [markdown]
# How much of a recorded program is dead depends on the program:

# %%
with runs_your('eliminate_dead_code'):
    def mlp_relu_loss(x, y, W1, b1, W2, b2):
        return (((x @ W1 + b1).relu() @ W2 + b2 - y) ** 2).mean()


    cases = {
        "MLP loss, forward only": (mlp_loss, False),
        "MLP loss + gradients": (mlp_loss, True),
        "ReLU MLP loss + gradients": (mlp_relu_loss, True),
        "gradients only, grad(mlp_loss)": (mg.grad(mlp_loss, argnums=(2, 3, 4, 5)), False),
    }
    print(f"{'program':34s} {'recorded':>9s} {'live':>6s} {'dead':>6s}")
    for name, (fn, backward) in cases.items():
        full = recorded(fn, *example, backward=backward)
        live = eliminate_dead_code(full)
        print(f"{name:34s} {len(full.nodes):9d} {len(live.nodes):6d} {len(full.nodes) - len(live.nodes):6d}")


# %% [markdown]
# A forward pass traced on its own has no dead code. A training step that returns the loss and the gradients of every
# input drops only the adjoint of the mean's constant denominator (three nodes). When only the weights' gradients are returned, a quarter of the program is dead: the loss value itself
# (`power`, `sum`, `div`) and the adjoints of the data `x` and `y`, which nobody asked for.

# %% [markdown]
# ## 4. Memory planning
#
# Eager execution allocates every result when it is computed and frees it when Python drops the last reference to
# it; the allocator never knows what comes next. A static graph knows the whole schedule. Number the steps by
# position in the node list, $t = 0, 1, \dots, T-1$. The value of node $v$ is **defined** at its own step $d(v)$ and
# **last used** at
#
# $$ \ell(v) = \max\big(d(v),\; \max_{u \,:\, v \in \mathrm{Pa}(u)} d(u)\big), \qquad \ell(v) = T \text{ if } v \text{ is an output} $$
#
# (an output is handed to the caller after the last step). Its **liveness interval** is $[d(v), \ell(v)]$, both ends
# included: at step $\ell(v)$ the reader still needs it while it writes its own result. Two values whose intervals
# are disjoint are never needed at the same time and may occupy the same bytes. A **memory plan** assigns every
# value an offset $o(v)$ in one arena such that
#
# $$ [d(u), \ell(u)] \cap [d(v), \ell(v)] \neq \varnothing \;\Rightarrow\; [o(u), o(u) + s(u)) \cap [o(v), o(v) + s(v)) = \varnothing , $$
#
# with $s(v)$ the value's size in bytes (rounded up to 64, so that every buffer starts on a cache line). Its cost is
# the arena size, the **peak** $\max_v o(v) + s(v)$. Two numbers frame it:
#
# * **no reuse**, $\sum_v s(v)$: every value in its own buffer (what a graph that frees nothing needs);
# * the **liveness lower bound**, $\max_t \sum_{v \,:\, d(v) \le t \le \ell(v)} s(v)$: the values live at step $t$
#   all exist at once, so no plan can do better.
#
# Only fragmentation separates a plan from the lower bound. Finding the best offsets is the *dynamic storage
# allocation* problem, NP-hard in general (Garey and Johnson 1979), but simple greedy rules come close on neural
# network graphs. Chen et al. (2016) describe this liveness-based memory sharing (together with in-place operations)
# as the first memory optimisation of a static graph, before the gradient checkpointing of chapter 6; Pisarchyk and
# Lee (2020) compare greedy placement rules for inference in TensorFlow Lite, and the "greedy by size" rule used
# below is one of theirs. Inputs and constants live outside the arena: the caller owns them.

# %% [markdown]
# ### Graded: `plan_memory(graph)`
#
# Compute the liveness intervals and give every operation's value an offset. Any rule that never overlaps two values
# live at a common step is correct; the simplest good one is **first fit in order of definition**: for each value,
# look at the values already placed whose intervals overlap its own, and take the lowest offset where it fits between
# them (or above them all). Return a `MemoryPlan(offsets, sizes, intervals, peak_bytes)` — dicts keyed by node id,
# intervals as `(first, last)` tuples, sizes from `aligned(node.nbytes)`. The plan object computes `no_reuse_bytes`
# and `lower_bound_bytes` from your intervals and sizes.
#
# The tests check your plans with `check_plan(graph, plan)`, an independent validator: it recomputes liveness from the
# graph, straight from the definition, and raises `InvalidPlan` naming two values that are live at the same time in
# overlapping memory.

# %% nbgrader={"grade": false, "grade_id": "plan_memory", "locked": false, "schema_version": 3, "solution": true}
def plan_memory(graph):
    """A MemoryPlan placing the value of every operation of `graph` in one arena, reusing memory.

    Steps are positions in `graph.nodes`. The value of an operation (not of an "input" or a
    "constant") is live from the step of its node to the step of its last reader, both included;
    an output stays live to step len(graph.nodes); a value nobody reads lives at its own step only.
    Each value needs `aligned(node.nbytes)` bytes at an offset that is a multiple of 64, and two
    values live at a common step must not overlap. Returns
    `MemoryPlan(offsets, sizes, intervals, peak_bytes)` with dicts keyed by node id:
    offsets[id] (bytes), sizes[id] (aligned bytes), intervals[id] = (first, last), and the arena
    size peak_bytes = max(offset + size).
    """
    ### BEGIN SOLUTION
    intervals = {}
    for step, node in enumerate(graph.nodes):
        if node.op not in ("input", "constant"):
            intervals[node.id] = [step, step]
        for source in node.inputs:
            if source in intervals:
                intervals[source][1] = step
    for output in graph.outputs:
        if output in intervals:
            intervals[output][1] = len(graph.nodes)
    intervals = {i: tuple(interval) for i, interval in intervals.items()}
    sizes = {i: aligned(graph.node(i).nbytes) for i in intervals}
    offsets = {}
    for i, (first, last) in intervals.items():  # in order of definition: first fit
        offset = 0
        overlapping = [j for j in offsets if intervals[j][0] <= last and first <= intervals[j][1]]
        for j in sorted(overlapping, key=offsets.get):
            if offset + sizes[i] <= offsets[j]:
                break  # the gap below j is big enough
            offset = max(offset, offsets[j] + sizes[j])
        offsets[i] = offset
    peak = max((offsets[i] + sizes[i] for i in offsets), default=0)
    return MemoryPlan(offsets, sizes, intervals, peak, "first_fit")
    ### END SOLUTION


# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_plan", "locked": true, "schema_version": 3, "solution": false}
def plan_data(plan):
    """A MemoryPlan's fields as plain data (a description for anything else)."""
    if not isinstance(plan, MemoryPlan):
        return f"a {type(plan).__name__}"
    data = {name: dict(getattr(plan, name)) if isinstance(getattr(plan, name), dict) else f"a {type(getattr(plan, name)).__name__}"
            for name in ("offsets", "sizes", "intervals")}
    data["peak_bytes"] = int_data(plan.peak_bytes)
    return data


def planned(data):
    """Driver: your plan_memory for the graph the test sent (as data); the plan as data."""
    return plan_data(plan_memory(graph_from_data(data, "the test's graph")))


def planned_all(datas):
    """Driver: your plan_memory for each graph the test sent; the plans as data."""
    return [plan_data(plan_memory(graph_from_data(data, "the test's graph"))) for data in datas]


def reference_bounds(graph):
    """(no reuse, liveness lower bound) in bytes for `graph`, computed here from the library's liveness intervals."""
    intervals = jit.liveness(graph)
    sizes = {i: aligned(graph.node(i).nbytes) for i in intervals}
    reference = MemoryPlan({}, sizes, intervals, 0)
    return reference.no_reuse_bytes, reference.lower_bound_bytes


def plan_from_data(data, what):
    """The MemoryPlan that plan_data described, rebuilt here (AssertionError on anything malformed)."""
    if type(data) is str:
        raise AssertionError(f"{what} should return a MemoryPlan, got {data}")
    if type(data) is not dict or set(data) != {"offsets", "sizes", "intervals", "peak_bytes"}:
        raise AssertionError(f"{what}: malformed plan data {data!r:.200}")

    def integer(value, name):
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            return int(value)
        raise AssertionError(f"{what}: {name} must be an int, got {value!r:.80}")

    fields = {}
    for name in ("offsets", "sizes", "intervals"):
        table = data[name]
        if type(table) is not dict:
            raise AssertionError(f"{what}: plan.{name} must be a dict keyed by node id, got {table!r:.80}")
        fields[name] = {}
        for key, value in table.items():
            key = integer(key, f"a key of plan.{name}")
            if name == "intervals":
                if type(value) not in (tuple, list) or len(value) != 2:
                    raise AssertionError(f"{what}: plan.intervals[{key}] must be a pair (first, last), got {value!r:.80}")
                value = type(value)(integer(v, f"plan.intervals[{key}]") for v in value)
            else:
                value = integer(value, f"plan.{name}[{key}]")
            fields[name][key] = value
    return MemoryPlan(fields["offsets"], fields["sizes"], fields["intervals"], integer(data["peak_bytes"], "plan.peak_bytes"))


# %% nbgrader={"grade": true, "grade_id": "test_plan_memory_liveness", "locked": true, "points": 2, "schema_version": 3, "solution": false}
graph = recorded(lambda x: (x.exp() * x.sin()).sum(), np.ones(16))
# steps: 0 input x, 1 exp, 2 sin, 3 mul (reads exp and sin), 4 sum (the output)
plan = plan_from_data(drive(planned, graph_data(graph)), "plan_memory(graph)")
assert_equal(plan.intervals, {1: (1, 3), 2: (2, 3), 3: (3, 4), 4: (4, 5)},
             "liveness intervals {id: (defined, last used)}: the output %4 lives to step len(nodes) = 5")
assert_equal(plan.sizes, {1: 128, 2: 128, 3: 128, 4: 64}, "sizes: 16 float64 = 128 bytes, a scalar rounded up to 64")
assert_equal(plan.lower_bound_bytes, 384, "lower bound: exp, sin and mul are live together at step 3")
check_plan(graph, plan)
assert_equal(plan.peak_bytes, max(plan.offsets[i] + plan.sizes[i] for i in plan.offsets), "peak_bytes: the arena size")
print("plan_memory: liveness intervals and sizes are right")
### BEGIN HIDDEN TESTS
dead_value = Graph([Node(0, "input", (), (8,), "float64"), Node(1, "exp", (0,), (8,), "float64"),
                    Node(2, "sin", (0,), (8,), "float64"), Node(3, "neg", (2,), (8,), "float64")], [0], [3])
read_later = Graph([Node(0, "input", (), (8,), "float64"), Node(1, "exp", (0,), (8,), "float64"),
                    Node(2, "neg", (1,), (8,), "float64"), Node(3, "sin", (2,), (8,), "float64")], [0], [1, 3])
f32 = recorded(lambda x: x * 2.0, np.ones(100, np.float32))
no_operations = Graph([Node(0, "input", (), (3,), "float64"), Node(1, "input", (), (2,), "float64")], [0, 1], [1])
plans = drive(planned_all, [graph_data(g) for g in (dead_value, read_later, f32, no_operations)])
assert type(plans) is list and len(plans) == 4, f"plan_memory: malformed driver result {plans!r:.200}"
dead_plan, later_plan, f32_plan, empty_plan = (plan_from_data(p, "plan_memory(graph)") for p in plans)
assert_equal(dead_plan.intervals, {1: (1, 1), 2: (2, 3), 3: (3, 4)}, "a value nobody reads lives at its own step")
check_plan(dead_value, dead_plan)
assert_equal(later_plan.intervals, {1: (1, 4), 2: (2, 3), 3: (3, 4)}, "an output read by a later node lives to the end")
check_plan(read_later, later_plan)
assert_equal(f32_plan.sizes, {2: 448}, "100 float32 = 400 bytes, aligned to 448")
# A graph with no operations (it returns an input): nothing to place, an arena of 0 bytes.
assert_equal((empty_plan.offsets, empty_plan.sizes, empty_plan.intervals, empty_plan.peak_bytes), ({}, {}, {}, 0),
             "the plan of a graph with no operations (offsets, sizes, intervals, peak_bytes)")
### END HIDDEN TESTS

# %% nbgrader={"grade": false, "grade_id": "helpers_mlp", "locked": true, "schema_version": 3, "solution": false}
def mlp_loss_for_tests(x, y, W1, b1, W2, b2, W3, b3):
    hidden = (x @ W1 + b1).tanh()
    hidden = (hidden @ W2 + b2).relu()
    return ((hidden @ W3 + b3 - y) ** 2).mean()


_rng = np.random.default_rng(12)
mlp_example = [_rng.standard_normal(s) for s in [(64, 32), (64, 4), (32, 64), (64,), (64, 64), (64,), (64, 4), (4,)]]

# %% nbgrader={"grade": true, "grade_id": "test_plan_memory_valid_and_compact", "locked": true, "points": 3, "schema_version": 3, "solution": false}
chain = recorded(lambda x: x.exp().sin().cos().tanh().exp(), np.ones(1000))
plan = plan_from_data(drive(planned, graph_data(chain)), "plan_memory(chain)")
check_plan(chain, plan)
assert_equal(plan.peak_bytes, 2 * 8000, "a chain of equal-sized operations needs 2 buffers (operand and result)")

diamond = recorded(lambda x: (x.exp() + x.sin()) * (x.cos() - x.tanh()), np.ones((50, 50)))
check_plan(diamond, plan_from_data(drive(planned, graph_data(diamond)), "plan_memory(diamond)"))

step = recorded(mlp_loss_for_tests, *mlp_example, backward=True)  # dead code included: it lives one step
plan = plan_from_data(drive(planned, graph_data(step)), "plan_memory(MLP training step)")
check_plan(step, plan)
no_reuse, lower_bound = reference_bounds(step)  # every value in its own aligned buffer; the values live at once
print(f"MLP training step: peak {plan.peak_bytes} bytes, no reuse {no_reuse}, lower bound {lower_bound}")
assert plan.peak_bytes <= 0.6 * no_reuse, (
    f"the plan of an MLP training step should need at most 60% of no reuse ({0.6 * no_reuse:.0f} bytes), "
    f"got {plan.peak_bytes}")
got = PlannedInterpreter(step, plan)(*mlp_example)  # the library's interpreter, in an arena laid out by your plan
for k, (a, b) in enumerate(zip(got, run_graph(step, *mlp_example))):
    assert_close(a, b, f"output {k} of the MLP step run in your plan's arena", rtol=1e-12, atol=1e-12)
print("plan_memory: valid plans; the MLP step runs correctly inside your arena")
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(11)
graphs = []
for trial in range(40):  # random graphs of mixed sizes and dtypes
    nodes = [Node(0, "input", (), (8,), "float64")]
    for i in range(1, int(rng.integers(2, 30))):
        sources = tuple(int(s) for s in rng.integers(0, i, size=int(rng.integers(1, 4))))
        nodes.append(Node(i, "sum", sources, (int(rng.choice([1, 7, 100, 333, 1000])),), str(rng.choice(["float64", "float32"]))))
    outputs = [int(o) for o in rng.integers(1, len(nodes), size=int(rng.integers(1, 3)))]
    graphs.append(Graph(nodes, [0], outputs))
plans = drive(planned_all, [graph_data(g) for g in graphs])
assert type(plans) is list and len(plans) == len(graphs), f"plan_memory: malformed driver result {plans!r:.200}"
for trial, (graph, data) in enumerate(zip(graphs, plans)):
    plan = plan_from_data(data, f"plan_memory(random graph {trial})")
    try:
        check_plan(graph, plan)
    except InvalidPlan as error:
        raise AssertionError(f"random graph {trial}: {error}") from None
    assert plan.peak_bytes <= reference_bounds(graph)[0], f"random graph {trial}: peak above no reuse"
    assert all(o % 64 == 0 for o in plan.offsets.values()), f"random graph {trial}: offsets must be multiples of 64"
### END HIDDEN TESTS

# %% [markdown]
# ### Experiment: memory plans as pictures
#
# A plan is a set of rectangles in the plane of time and address: value $v$ occupies the addresses
# $[o(v), o(v) + s(v))$ during the steps $[d(v), \ell(v)]$. A plan is valid when no two rectangles overlap; the peak is
# the top of the highest one. Here is the training step of a three-layer perceptron (batch 64) without reuse, with
# your plan, and with the library's `greedy_by_size` rule, which places the *largest* values first, each in the
# tightest gap among the already placed values that overlap it in time:

# %%
with runs_your('eliminate_dead_code', 'plan_memory'):
    step = eliminate_dead_code(recorded(mlp_loss_for_tests, *mlp_example, backward=True))
    loss_id = step.outputs[0]  # the trace lists the forward pass up to the loss, then the backward pass
    phase = {n.id: "forward pass" if n.id <= loss_id else "backward pass" for n in step.nodes}
    plans = {
        "no reuse": jit.plan_memory(step, "none"),
        "your plan (first fit)": plan_memory(step),
        "greedy by size (library)": jit.plan_memory(step, "greedy_by_size"),
    }
    fig, axes = plt.subplots(3, 1, figsize=(11, 9.5), sharex=True)
    for ax, (name, plan) in zip(axes, plans.items()):
        check_plan(step, plan)
        plot_memory_plan(step, plan, ax=ax, title=f"{name}: peak {plan.peak_bytes / 1024:.0f} KiB", groups=phase, label_ops=False)
        ax.set_xlabel("")
    axes[-1].set_xlabel("step (position in the graph)")
    plt.tight_layout()
    plt.show()

# %% [markdown]
# Without reuse every value gets fresh addresses above all earlier ones: the rectangles climb a staircase, and the
# bytes of a dead value are never used again. With a plan, a value's bytes are taken over as soon as it is dead. The
# colours show who holds memory: the forward activations (blue) are the long rectangles — they live from the forward
# pass until the backward pass reads them (chapter 6's saved activations); the backward pass's values (orange) are
# short-lived and recycle each other's memory. The next figure follows the bytes live at each step, whose maximum
# is the lower bound:

# %%
with runs_your('eliminate_dead_code', 'plan_memory'):
    plan = plans["greedy by size (library)"]
    live = live_bytes_over_time(plan, len(step.nodes))
    fig, ax = plt.subplots(figsize=(11, 3.4))
    ax.step(np.arange(len(live)), live / 1024, where="post", color="black", label="bytes live at step t")
    for name, style in [("no reuse", "--"), ("your plan (first fit)", "-."), ("greedy by size (library)", ":")]:
        ax.axhline(plans[name].peak_bytes / 1024, linestyle=style, color="gray", label=f"peak, {name}")
    ax.axvspan(0, [n.id for n in step.nodes].index(loss_id) + 0.5, color="tab:blue", alpha=0.08, label="forward pass")
    ax.set(xlabel="step (position in the graph)", ylabel="KiB", xlim=(0, len(step.nodes) + 1),
           title="Bytes live at each step: their maximum is the liveness lower bound")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    plt.show()

# %% [markdown]
# Now the same comparison as the network gets deeper (width 128, batch 64): the peak of each plan against no reuse
# and the lower bound. `best_fit` is what an allocator can do *without* knowing the future — at each definition, the
# smallest free block that fits; blocks are freed after their last use — as a caching allocator does at run time.

# %%
with runs_your('eliminate_dead_code', 'plan_memory'):
    def deep_loss(x, y, *params):
        h = x
        for k in range(0, len(params), 2):
            h = h @ params[k] + params[k + 1]
            if k + 2 < len(params):
                h = h.tanh()
        return ((h - y) ** 2).mean()


    depths = [1, 2, 4, 6, 8, 12, 16]
    width, batch = 128, 64
    peaks = {name: [] for name in ["no reuse", "your plan (first fit)", "best fit (online)", "greedy by size", "lower bound"]}
    for depth in tqdm(depths, desc="depth"):
        params = []
        for _ in range(depth):
            params += [rng.standard_normal((width, width)) / np.sqrt(width), np.zeros(width)]
        args = [rng.standard_normal((batch, width)), rng.standard_normal((batch, width)), *params]
        graph = eliminate_dead_code(recorded(deep_loss, *args, backward=True))
        mine = plan_memory(graph)
        check_plan(graph, mine)
        peaks["no reuse"].append(mine.no_reuse_bytes)
        peaks["your plan (first fit)"].append(mine.peak_bytes)
        peaks["best fit (online)"].append(jit.plan_memory(graph, "best_fit").peak_bytes)
        peaks["greedy by size"].append(jit.plan_memory(graph, "greedy_by_size").peak_bytes)
        peaks["lower bound"].append(mine.lower_bound_bytes)

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
    for color, (name, values) in zip(plt.cm.tab10.colors, peaks.items()):
        style = {"color": "black", "linestyle": ":"} if name == "lower bound" else {"color": color, "marker": "o"}
        left.plot(depths, np.array(values) / 2**20, label=name, **style)
        if name != "no reuse":
            right.plot(depths, np.array(values) / np.array(peaks["lower bound"]), label=name, **style)
    left.set(xlabel="depth (layers)", ylabel="MiB", title="Peak memory of a training step")
    right.set(xlabel="depth (layers)", ylabel="peak / lower bound", title="The plans against the lower bound")
    left.legend(fontsize=8)
    right.legend(fontsize=8)
    plt.tight_layout()
    plt.show()
    for name, values in peaks.items():
        print(f"{name:24s} depth {depths[-1]}: {values[-1] / 2**20:6.2f} MiB  ({values[-1] / peaks['no reuse'][-1]:.0%} of no reuse)")

# %% [markdown]
# All curves grow linearly with depth: a training step must keep every layer's activation for the backward pass, so
# even the lower bound is $O(N)$ — planning removes the waste, not the activations themselves (that takes chapter 6's
# checkpointing, which trades recomputation for a lower bound of $O(\sqrt N)$). What planning buys is the slope: the
# planned peaks sit at a fraction of no reuse. The order of placement matters more than the cleverness of the fit:
# first fit in definition order fragments the arena as small backward values land between large activations, while
# placing the largest values first packs them so that the small ones fill the gaps, and on these graphs reaches the
# lower bound itself.

# %% [markdown]
# ## 5. Everything together: `minigrad.jit.compile`
#
# `jit.compile(fn, backward=True)` traces `fn` (with its gradients) on the first call, removes dead code, and hands the
# graph to a backend. The `"numpy"` backend plans the memory and compiles an interpreter that runs every operation
# *into* its planned buffer (numpy's `out=` argument), reusing one arena for every call. Later calls with the same
# input shapes and dtypes skip Python's recording entirely; a new signature traces again. Chapter 9 adds backends that
# generate fused kernels from the same graph.
#
# Here a compiled training step fits a small network to a noisy sine, and its first step is checked against eager
# minigrad:

# %%
with runs_your('trace', 'eliminate_dead_code'):
    def regression_loss(x, y, W1, b1, W2, b2):
        return (((x @ W1 + b1).tanh() @ W2 + b2 - y) ** 2).mean()


    compiled_step = jit.compile(regression_loss, backward=True)
    x = np.linspace(-3, 3, 128).reshape(-1, 1)
    y = np.sin(x) + 0.05 * rng.standard_normal(x.shape)
    params = [rng.standard_normal((1, 32)), np.zeros(32), rng.standard_normal((32, 1)) / 6, np.zeros(1)]

    loss, grads = compiled_step(x, y, *params)
    eager_loss, eager_grads = mg.value_and_grad(regression_loss, argnums=(2, 3, 4, 5))(x, y, *params)
    print(f"first step: compiled loss {loss.item():.12f}, eager {eager_loss.item():.12f}")
    print("largest gradient difference:", max(float(np.max(np.abs(g.data - e.data))) for g, e in zip(grads[2:], eager_grads)))
    print(compiled_step, "-", len(compiled_step.graph.nodes), "nodes, arena", compiled_step.runner.plan.peak_bytes, "bytes")

    losses = []
    for _ in tqdm(range(1500), desc="training (compiled step)"):
        loss, grads = compiled_step(x, y, *params)
        params = [p - 0.05 * g.data for p, g in zip(params, grads[2:])]
        losses.append(loss.item())

# %%
with runs_your('trace', 'eliminate_dead_code'):
    eager_step = mg.value_and_grad(regression_loss, argnums=(2, 3, 4, 5))
    times = interleaved_times({"eager": lambda: eager_step(x, y, *params), "compiled": lambda: compiled_step(x, y, *params)},
                              repeat=5, number=40)  # CPU time, one BLAS thread, the fastest of 5 interleaved runs of 40 steps
    print(f"one training step: eager {times['eager'] * 1e6:.0f} µs, compiled (numpy interpreter) {times['compiled'] * 1e6:.0f} µs")

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 3.8))
    left.semilogy(losses)
    left.set(xlabel="step", ylabel="mean squared error", title="training with the compiled step")
    prediction = (np.tanh(x @ params[0] + params[1]) @ params[2] + params[3])
    right.plot(x, y, ".", markersize=3, label="data")
    right.plot(x, prediction, label="network")
    right.set(xlabel="x", ylabel="y", title="the trained network on the data")
    right.legend()
    plt.show()

# %% [markdown]
# The compiled step gives eager minigrad's loss and gradients to rounding (the same primitives run in the same order)
# and trains the network as eager code would. The timing line compares the two on this small problem; the interpreter
# saves the recording of the graph and the engine's bookkeeping, but still calls numpy once per operation, so each
# intermediate still makes a round trip through memory. Removing those round trips is the subject of chapter 9:
# operator fusion, which turns chains of elementwise operations into single generated kernels.
#
# ## Summary
#
# * **Define-and-run** (Theano, TensorFlow 1.x) builds the whole graph before any data and runs it many times;
#   **define-by-run** (Chainer, PyTorch) builds it anew on every call by running Python. Static graphs can be optimised
#   as a whole; dynamic ones are easier to write and debug. JIT compilers join the two.
# * **Tracing** turns define-by-run code into a static graph by running it once on example inputs and recording the
#   primitives that ran — including the backward pass, since minigrad's backward is made of primitives. Whatever Python
#   decided by looking at values (branches, loop counts, masks, closed-over weights) is frozen into the trace; real
#   JITs guard their assumptions and retrace.
# * **Dead-code elimination** keeps the smallest set containing the outputs and closed under inputs: one reverse sweep,
#   $O(|V| + |E|)$. Traced programs have dead code — adjoints of constants that every VJP rule computes, values computed
#   and dropped.
# * **Memory planning** computes liveness intervals $[d(v), \ell(v)]$ and gives values whose intervals do not overlap
#   the same memory. Its peak lies between the liveness lower bound, $\max_t \sum_{v \text{ live at } t} s(v)$, and no
#   reuse, $\sum_v s(v)$; a validator that recomputes liveness independently proves a plan safe. On MLP training steps
#   a plan needs a fifth to a third of no reuse, and placing the largest values first reaches the lower bound.
#
# ## References
#
# * Abadi, M. et al. TensorFlow: a system for large-scale machine learning. *12th USENIX Symposium on Operating Systems
#   Design and Implementation (OSDI 16)*, 2016, pp. 265–283.
# * Ansel, J. et al. PyTorch 2: faster machine learning through dynamic Python bytecode transformation and graph
#   compilation. *ASPLOS 2024*.
# * Bergstra, J. et al. Theano: a CPU and GPU math compiler in Python. *Proceedings of the 9th Python in Science
#   Conference (SciPy 2010)*, pp. 3–10.
# * Chen, T., Xu, B., Zhang, C., Guestrin, C. Training deep nets with sublinear memory cost. arXiv:1604.06174, 2016.
# * Frostig, R., Johnson, M. J., Leary, C. Compiling machine learning programs via high-level tracing. *SysML 2018*.
# * Garey, M. R., Johnson, D. S. *Computers and Intractability: A Guide to the Theory of NP-Completeness*. Freeman,
#   1979 (problem SR2, dynamic storage allocation).
# * Paszke, A. et al. PyTorch: an imperative style, high-performance deep learning library. *Advances in Neural
#   Information Processing Systems 32 (NeurIPS 2019)*, pp. 8024–8035.
# * Pisarchyk, Y., Lee, J. Efficient memory management for deep neural net inference. arXiv:2001.03288, 2020.
# * Tokui, S., Oono, K., Hido, S., Clayton, J. Chainer: a next-generation open source framework for deep learning.
#   *Workshop on Machine Learning Systems (LearningSys) at NIPS 2015*.
