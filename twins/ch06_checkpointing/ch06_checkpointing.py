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
# # Chapter 6 — Memory: saved activations and gradient checkpointing
#
# Reverse mode buys every gradient of a scalar loss for the price of a few forward passes (chapter 2). The bill
# arrives in **memory**: the backward pass needs values the forward pass computed, so every one of them must be
# kept until backward gets to it. For a network of depth $N$ that is $O(N)$ saved activations — on accelerators,
# the reason large models run out of memory long before they run out of arithmetic.
#
# **Gradient checkpointing** (Chen et al. 2016, after Griewank's checkpointing of adjoint codes) keeps only a few
# activations — the *checkpoints* — and recomputes the others during the backward pass, one segment at a time.
# With about $\sqrt{N}$ segments the memory drops from $O(N)$ to $O(\sqrt{N})$, for the price of at most one extra
# forward pass (here up to about 50% more time: section
# 6 measures it and says why).
#
# In this chapter you will
#
# 1. see which values each operation keeps for its backward pass, and implement **`saved_bytes(output)`**, which
#    counts the bytes a graph holds for backward;
# 2. watch that memory rise during the forward pass and fall during the backward pass;
# 3. implement **`checkpoint(fn, *args)`**: one graph node that keeps only the inputs of `fn` and runs `fn` again
#    inside the backward pass — with parameters, several outputs, and random numbers handled correctly;
# 4. implement **`checkpoint_sequential(layers, segments, x)`**, derive why $\sqrt{N}$ segments is the right
#    number, and measure memory and time against depth and against the number of segments.
#
# As in every chapter, `minigrad` is [the finished reference library](../ch01_graph/ch01_graph.ipynb#reference-library)
# (`mg.checkpoint` and friends exist there); you rebuild its memory tools. Cells marked *graded* contain `raise NotImplementedError()` for you to replace; the cells after
# them test your work (some tests are hidden and run only when your notebook is graded).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread (set before numpy loads): steadier timings

import contextlib
import gc
import sys
import types

import numpy as np
import matplotlib.pyplot as plt
from tqdm.auto import tqdm

import minigrad as mg
from minigrad import Tensor, nn
from minigrad.memory import RandomState, captured_leaves, leaf_copy, replaying, track_saved_bytes
from minigrad.testing import assert_close, assert_equal, drive, interleaved_times


@contextlib.contextmanager
def uses_your(*names):
    """An experiment that runs your functions `names`: until they work, the cell says which one stopped it
    and why, instead of failing, so that Run All carries on to the next exercises."""
    try:
        yield
    except Exception as error:
        plt.close("all")
        print(f"This experiment runs your {' and '.join(names)}. It stopped at {type(error).__name__}: {error}\n"
              f"It will run once {'they work' if len(names) > 1 else 'that works'}.")


# %% [markdown]
# ## 1. What the backward pass needs from the forward pass
#
# Chapter 2's backward pass visits each operation $v_j = \varphi_j(v_{\mathrm{Pa}(j)})$ once and applies its
# vector-Jacobian product: the adjoint $\bar v_j$ goes in, one adjoint per input comes out. Look at what the
# rules read:
#
# | operation | VJP rule | needs from the forward pass |
# | --- | --- | --- |
# | $z = x + y$ | $\bar x = \bar z,\ \bar y = \bar z$ | nothing |
# | $z = x \odot y$ | $\bar x = \bar z \odot y,\ \bar y = \bar z \odot x$ | both inputs |
# | $z = XW$ | $\bar X = \bar Z W^\top,\ \bar W = X^\top \bar Z$ | both inputs |
# | $z = \tanh x$ | $\bar x = \bar z \odot (1 - z^2)$ | its output |
# | $z = \max(x, 0)$ | $\bar x = \bar z \odot [x > 0]$ | the sign of its input |
# | $z = \sum_i x_i$ | $\bar x = \bar z \mathbf{1}$ | only the shape |
#
# Most rules read the values that flowed through the operation, and those values exist only during the forward
# pass — unless someone keeps them. A framework therefore **saves** them: PyTorch calls them *saved tensors* and
# keeps, per operation, exactly what its formula reads; `minigrad` keeps it simpler: a `Node` holds all of its
# input tensors (and the output tensor is at hand when the rule runs). A tensor that is an input of some
# node cannot be freed until backward has passed that node.
#
# Not all of this is a cost of the graph. Leaves — the data batch, the parameters — exist whether or not anyone
# differentiates. What the graph adds are the **activations**: non-leaf tensors kept alive only because a node
# holds them. For an MLP of $N$ layers with batch $B$ and width $w$, each layer keeps a few $B \times w$ arrays,
# so the saved memory is
#
# $$M_{\text{plain}}(N) = c \cdot N \cdot B \cdot w \cdot 8 \text{ bytes (float64)} = O(N),$$
#
# and all of it is alive at the moment the forward pass ends and backward begins. (Forward-mode differentiation,
# chapter 3, saves nothing — it carries tangents along with values — but needs one pass per input: that is the
# trade the whole field made in favour of reverse mode.)
#
# Let us list what a two-layer network's graph holds:

# %%
rng = np.random.default_rng(0)
layer1, layer2 = nn.Linear(4, 3, rng=rng), nn.Linear(3, 2, rng=rng)
x = mg.tensor(rng.standard_normal((5, 4)))  # a batch of data: a leaf
loss = layer2(layer1(x).tanh()).sum()

names = {"x": x, "W1": layer1.weight, "b1": layer1.bias, "W2": layer2.weight, "b2": layer2.bias}
name_of = {id(t): name for name, t in names.items()}
for tensor in mg.topological_sort(loss):
    if tensor.node is not None:
        held = ", ".join(f"{name_of.get(id(p), p.op)} {p.shape}" for p in tensor.parents)
        print(f"{tensor.op:>7} holds: {held}")
mg.draw(loss, names=names)

# %% [markdown]
# ## 2. Counting saved bytes
#
# `saved_bytes(output)` answers "how much memory does this graph hold for its backward pass?". The rules:
#
# * walk every node below `output` (iteratively — graphs can be far deeper than Python's recursion limit of
#   about 1,000; an `id`-keyed `seen` set visits shared tensors once);
# * every input of a node that is **not a leaf** (`tensor.node is not None`) is saved; leaves are not counted;
# * count **buffers, not tensors**: `reshape`, `transpose`, basic slicing and `broadcast_to` return numpy *views*
#   that share memory with the array they came from, so a buffer held by several tensors (or several nodes)
#   counts once. A view's `.base` is the array that owns the memory (`None` for an owner); numpy points `.base`
#   at the owner even for views of views, but a loop `while isinstance(a.base, np.ndarray): a = a.base` is safe
#   either way. Count the owner's `.nbytes`, once per owner (`id(owner)` is a good key);
# * a node freed by backward (`node.inputs is None`) holds nothing.

# %%
a = np.arange(12.0)
v = a.reshape(3, 4).T  # a view of a view
print("v.base is a:", v.base is a, "| v.nbytes =", v.nbytes, "| owner's nbytes =", a.nbytes)
print("a broadcast view:", np.broadcast_to(a[:4], (1000, 4)).base is a, "(it claims", 1000 * 4 * 8, "bytes but owns none)")


# %% nbgrader={"grade": false, "grade_id": "saved_bytes", "locked": false, "schema_version": 3, "solution": true}
def saved_bytes(output):
    """Bytes of the arrays the graph below `output` holds for its backward pass.

    Counts the data of every non-leaf tensor that some node below `output` takes as input, each
    underlying buffer (the array owning the memory, for views) once. Leaves are not counted; a
    freed node (inputs None) holds nothing. Iterative: works on graphs 100,000 operations deep.
    """
    ### BEGIN SOLUTION
    buffers = {}  # id(owner array) -> its size in bytes
    seen = set()
    stack = [output]
    while stack:
        tensor = stack.pop()
        if id(tensor) in seen or tensor.node is None or tensor.node.inputs is None:
            continue
        seen.add(id(tensor))
        for parent in tensor.node.inputs:
            if parent.node is not None:  # an activation, not a leaf
                owner = parent.data
                while isinstance(owner.base, np.ndarray):
                    owner = owner.base
                buffers[id(owner)] = owner.nbytes
            stack.append(parent)
    return sum(buffers.values())
    ### END SOLUTION


# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_saved_bytes", "locked": true, "schema_version": 3, "solution": false}
# How the tests work: a *driver* (the functions marked "Driver") builds a graph from a plain description,
# calls your function on it and returns what came back as plain data (numbers, strings, lists, arrays, never
# tensors); `drive(driver, ...)` runs it. A *checker* then computes the expected answer itself, from its own
# # copy of the same graph, and compares. When your notebook is graded, drivers run beside your code and
# checkers in a separate process, so a test trusts nothing but those facts.

def saved_bytes_case(case):
    """The output tensor of a test graph, described in plain data: "square", ("chain", 5000), ("ladder", 40)...
    Building is deterministic, so a driver and a checker that build the same case get the same graph."""
    kind, *args = case if isinstance(case, (list, tuple)) else (case,)
    x = mg.tensor(np.ones((3, 4)), requires_grad=True)
    y = x.tanh()
    e = mg.tensor(np.ones((4, 5)), requires_grad=True).exp()
    if kind == "tanh_leaf":
        return y
    if kind == "square":
        return y * y
    if kind == "square_sum":
        return (y * y).sum()
    if kind == "matmul":
        return (x @ mg.tensor(np.ones((4, 2)), requires_grad=True)).sum()
    if kind == "exp_affine":  # exp saves y; mul saves exp(y); add saves exp(y)*2 (x is a leaf); sum saves the add
        return (y.exp() * 2.0 + x).sum()
    if kind == "shared":  # y, y*y, sin(y), and the two 0-d sums
        return (y * y).sum() + (y.sin()).sum()
    if kind == "leaf":
        return x
    if kind == "no_grad":
        with mg.no_grad():
            return (x * 3.0).tanh()
    if kind == "reshape":  # a view: shares e's buffer
        flat = e.reshape(20)
        return (flat * flat).sum()
    if kind == "transpose":  # e, e.T (a view of e), e.T*e.T, e*2, two 0-d sums
        return (e.T * e.T).sum() + (e * 2.0).sum()
    if kind == "broadcast":  # basic indexing (a view), then a broadcast view with no memory of its own
        return (e[1].broadcast_to((1000, 5)) * 1.0).sum()
    if kind == "fancy":  # fancy indexing copies
        picked = e[[0, 0, 2]]
        return (picked * picked).sum()
    if kind in ("chain", "chain_freed"):  # args[0] tanh operations on a vector of 10 ones
        h = mg.tensor(np.ones(10), requires_grad=True)
        for _ in range(args[0]):
            h = h.tanh()
        if kind == "chain_freed":
            # frees the graph; said explicitly, because what frees it is the engine's retain_graph=False, not
            # saved_bytes (a backward pass written without that option, like chapter 2's, keeps the graph)
            h.sum().backward(retain_graph=False)
        return h
    if kind == "mul_chain":
        g = mg.tensor(np.ones(3), requires_grad=True)
        for _ in range(args[0]):
            g = g * 1.0
        return g
    if kind == "checkpointed":  # the reference checkpoint keeps only its input
        x2 = mg.tensor(np.ones(3), requires_grad=True)
        return mg.checkpoint(lambda v: (v.exp() * v).sin(), x2.exp()).sum()
    if kind == "ladder":  # v_{k+1} = sin(v_k) * cos(v_k) on 3 numbers: 2**depth paths lead down to x
        v = mg.tensor(np.full(3, 0.3), requires_grad=True)
        for _ in range(args[0]):
            v = v.sin() * v.cos()
        return v
    raise ValueError(f"unknown saved_bytes case {case!r}")


def measured(case):
    """Driver: your saved_bytes on the case's graph, called twice (a measurement must leave the graph as it
    was, so both calls must agree)."""
    output = saved_bytes_case(case)
    first = saved_bytes(output)
    second = saved_bytes(output)
    return {"bytes": first if isinstance(first, (int, np.integer)) else f"a {type(first).__name__}",
            "again": second if isinstance(second, (int, np.integer)) else f"a {type(second).__name__}"}


def check_saved_bytes(got, expected, what):
    """Fail, saying what came back, unless both saved_bytes calls of `measured` returned `expected`."""
    if type(got) is not dict or set(got) != {"bytes", "again"}:
        raise AssertionError(f"{what}: the driver returned something malformed: {got!r:.200}")
    first, second = got["bytes"], got["again"]
    if isinstance(first, str) or type(first) is bool or not isinstance(first, (int, np.integer)):
        raise AssertionError(f"{what}: expected an int (a number of bytes), got {first}")
    assert_equal(int(first), expected, what)
    if isinstance(second, str) or type(second) is bool or not isinstance(second, (int, np.integer)) or int(second) != expected:
        raise AssertionError(
            f"{what}, called a second time on the same graph: expected {expected} again, got {second} "
            f"(saved_bytes must only look at the graph, never change it)"
        )


# %% nbgrader={"grade": true, "grade_id": "test_saved_bytes_hand_counts", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# x is a (3, 4) leaf of ones, y = tanh(x): 12 float64 numbers, 96 bytes.
check_saved_bytes(drive(measured, "tanh_leaf"), 0, "saved_bytes(tanh(x)) where x is a leaf (leaves are not counted)")
check_saved_bytes(drive(measured, "square"), 12 * 8, "saved_bytes(y * y): y's 12 float64 numbers, held twice by one node, counted once")
check_saved_bytes(drive(measured, "square_sum"), 24 * 8, "saved_bytes((y * y).sum()): y and y * y")
check_saved_bytes(drive(measured, "matmul"), 3 * 2 * 8, "saved_bytes((x @ w).sum()): only x @ w (x and w are leaves)")
print("saved_bytes: hand counts agree")
### BEGIN HIDDEN TESTS
check_saved_bytes(drive(measured, "exp_affine"), 4 * 12 * 8, "saved_bytes((exp(y) * 2 + x).sum())")
check_saved_bytes(drive(measured, "shared"), 3 * 96 + 2 * 8, "saved_bytes with a shared subexpression")
check_saved_bytes(drive(measured, "leaf"), 0, "saved_bytes(leaf)")
check_saved_bytes(drive(measured, "no_grad"), 0, "saved_bytes of a result computed under no_grad")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_saved_bytes_views", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# y = exp(x) for a (4, 5) leaf x: 20 float64 numbers, 160 bytes.
check_saved_bytes(drive(measured, "reshape"), 2 * 20 * 8,
                  "saved_bytes((y.reshape(20) ** 2).sum()): y's buffer once, y*y once")
check_saved_bytes(drive(measured, "transpose"), 3 * 20 * 8 + 2 * 8, "saved_bytes with y and its transpose y.T")
print("saved_bytes: views count once")
### BEGIN HIDDEN TESTS
check_saved_bytes(drive(measured, "broadcast"), 20 * 8 + 1000 * 5 * 8, "saved_bytes through indexing and broadcast_to")
check_saved_bytes(drive(measured, "fancy"), 20 * 8 + 2 * 15 * 8, "saved_bytes through fancy indexing (a copy)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_saved_bytes_deep_and_freed", "locked": true, "points": 2, "schema_version": 3, "solution": false}
try:
    got = drive(measured, ("chain", 5000))  # deeper than Python's recursion limit
except RecursionError:
    raise AssertionError("saved_bytes hit Python's recursion limit on a chain of 5,000 operations: "
                         "walk the graph with an explicit stack instead of recursion") from None
check_saved_bytes(got, 4999 * 10 * 8, "saved_bytes of a chain of 5,000 tanh (the first input is a leaf)")
check_saved_bytes(drive(measured, ("chain_freed", 5000)), 0, "saved_bytes after backward freed the graph")
print("saved_bytes: deep graphs work, freed graphs hold nothing")
### BEGIN HIDDEN TESTS
try:
    got = drive(measured, ("mul_chain", 20_000))
except RecursionError:
    raise AssertionError("saved_bytes hit Python's recursion limit on a chain of 20,000 operations") from None
check_saved_bytes(got, 19_999 * 3 * 8, "saved_bytes of a chain of 20,000 operations")
check_saved_bytes(drive(measured, "checkpointed"), 2 * 3 * 8,
                  "saved_bytes of a checkpointed function (its input and its output)")

# In a ladder every tensor has two children, so 2**40 paths lead down to x: a walk that expands a tensor
# again each time it reaches it never finishes. The expected count comes from the reference library.
try:
    got = drive(measured, ("ladder", 40), seconds=2)
except TimeoutError:
    raise AssertionError(
        "saved_bytes did not finish on a ladder of depth 40 (121 tensors, 2**40 paths): visit each tensor "
        "once (keep a set of the tensors already walked and skip them)"
    ) from None
check_saved_bytes(got, mg.saved_bytes(saved_bytes_case(("ladder", 40))), "saved_bytes(ladder of depth 40)")
### END HIDDEN TESTS

# %% [markdown]
# ### Experiment: saved bytes grow linearly with depth
#
# A block `Linear` + `ReLU` on a batch of $B$ rows and width $w$ keeps three $B \times w$ arrays: the product
# $xW$ (held by the bias addition), $xW + b$ (held by the ReLU) and the ReLU's output (held by the next layer's
# product, or by the loss). So $c = 3$ in the formula above — let us check it with your `saved_bytes`.

# %%
WIDTH, BATCH = 128, 64
ACTIVATION = BATCH * WIDTH * 8  # bytes of one B×w float64 activation
batch = mg.tensor(np.random.default_rng(0).standard_normal((BATCH, WIDTH)))


def relu_blocks(depth, width=WIDTH, seed=0):
    # `depth` blocks Linear(width, width) + ReLU: the chain of layers this chapter checkpoints.
    rng = np.random.default_rng(seed)
    return [nn.Sequential(nn.Linear(width, width, rng=rng), nn.ReLU()) for _ in range(depth)]


depths = [1, 2, 4, 8, 16, 32, 64]
with uses_your("saved_bytes"):
    measured = [saved_bytes(nn.Sequential(*relu_blocks(n))(batch).sum()) for n in depths]
    plt.figure(figsize=(5, 3.5))
    plt.plot(depths, np.array(measured) / 2**20, "o", label="saved_bytes (yours)")
    plt.plot(depths, 3 * np.array(depths) * ACTIVATION / 2**20, "--", label=r"$3 N B w \times 8$ bytes")
    plt.xlabel("depth N (Linear + ReLU blocks)"); plt.ylabel("saved for backward (MiB)")
    plt.title(f"batch {BATCH}, width {WIDTH}: O(N)"); plt.legend(); plt.show()

# %% [markdown]
# ## 3. Memory over time
#
# `saved_bytes` is a snapshot. `track_saved_bytes()` (from `minigrad.memory`) follows the same count over time:
# inside its `with` block every new node reports the activations it holds, and each one counts until Python frees
# it. The engine lets go of each tensor as soon as the backward pass is past it (a node drops its inputs once its
# VJP has run), so the curve climbs during the forward pass, peaks as backward starts, and falls back to zero.
# The **peak** is what has to fit in memory.

# %%
chain16 = relu_blocks(16)
with track_saved_bytes() as plain_tracker:
    loss = (nn.Sequential(*chain16)(batch) ** 2).mean()
    plain_backward_starts = len(plain_tracker.history)  # events so far: the whole forward pass
    loss.backward()

plt.figure(figsize=(6, 3.2))
plt.plot(np.array(plain_tracker.history) / ACTIVATION, drawstyle="steps-post", label="saved activations")
plt.axvline(plain_backward_starts, color="grey", ls=":", label="backward starts")
plt.xlabel("events (an activation saved or freed)"); plt.ylabel("live activations (B×w arrays)")
plt.title(f"16 blocks, no checkpointing: peak {plain_tracker.peak / ACTIVATION:.0f} activations"); plt.legend(); plt.show()


# %% [markdown]
# ## 4. Checkpointing a function
#
# The idea: instead of keeping everything `fn` computes, keep only what it was given. In the backward pass, when
# the adjoint of `fn`'s result arrives, **run `fn` again** from those saved inputs — this time recording a graph —
# backpropagate through that fresh graph, and throw it away. Between the forward and the backward pass, `fn`'s
# intermediate activations simply do not exist.
#
# In `minigrad` this is one graph node, whose operation is named `"checkpoint"`. It has no formula of its own: its
# backward *is* the recomputation. An operation with a backward of your own is a **`mg.Function`**, as in PyTorch
# (`torch.autograd.Function`): a class with two static methods,
#
# * `forward(ctx, *args)` computes the result (it runs with recording off, so its operations build no graph) and
#   leaves in `ctx` what backward will need;
# * `backward(ctx, *grads)` gets the adjoint of each output and returns **one gradient per argument of
#   `forward`** (None for an argument that is not a tensor or needs no gradient);
#
# and `Checkpoint.apply(fn, *args)` runs `forward` and records one node whose inputs are the tensor arguments.
#
# ```
# forward:   args ──► [ checkpoint: fn ] ──► output         (fn's own graph is recorded once and dropped)
# backward:  grads ──► run fn(args) again under enable_grad ──► mg.gradients(rebuilt, inputs) with the grads
# ```
#
# Four details make it correct rather than almost correct:
#
# 1. **Inputs only.** Nothing of `fn`'s activations may stay reachable from the result — not through the node, not
#    through `ctx`. Run `fn` on `leaf_copy`s of the arguments (same arrays, fresh leaves), return its result (`apply`
#    keeps only the result's data, so the graph `fn` recorded is dropped), and keep the arguments with
#    `ctx.save_for_backward(*args)`.
# 2. **Parameters `fn` closes over.** A layer called as `checkpoint(layer, x)` uses its weights although they were
#    never passed in. They must be inputs of the node too, or the backward pass never delivers their gradients.
#    To find them, `forward` runs `fn` with recording on (`with mg.enable_grad():`, on the copies) and asks
#    `captured_leaves(result, copies)`: the leaves needing gradients below the result, other than the copies.
#    `ctx.add_inputs(*captured)` makes them inputs of the node, after the arguments — minigrad's one addition to
#    PyTorch's interface, for exactly this case.
# 3. **Randomness.** If `fn` draws random numbers (dropout), the recomputation must draw *the same* numbers, or
#    the gradient belongs to a different function. Save the random state before the first run
#    (`RandomState()`: numpy's global generator) and run the recomputation inside `replaying(state)`, which
#    restores it and afterwards puts the current state back, so the rest of the program's random stream is not
#    disturbed. PyTorch does the same (`preserve_rng_state=True`).
# 4. **Gradient mode.** The engine runs backward rules with recording switched off (unless `create_graph=True`);
#    the recomputation needs a graph to differentiate, so it runs under `mg.enable_grad()`.
#
# A function can return several tensors; `Function` handles that: `apply` returns a tuple, and `backward` gets one
# adjoint per output (zeros for an output the loss does not use). To backpropagate all of them at once, take the
# gradients of the scalar $\sum_i \langle o_i, \bar o_i \rangle$ (each rebuilt output times its adjoint, summed):
# its gradient with respect to an input is exactly the vector-Jacobian product the node owes that input.
#
# | piece | what it is | why `checkpoint` needs it |
# | --- | --- | --- |
# | `class C(mg.Function)`, `name = "checkpoint"` | an operation defined by its `forward` and `backward`; `name` names the node's op | one node standing for all of `fn` |
# | `C.apply(*args)` | runs `forward(ctx, *args)`, records one node (when an input needs a gradient) and returns the result | what `checkpoint` returns |
# | `ctx.save_for_backward(*tensors)`, `ctx.saved_tensors` | tensors kept for backward (the node holds them anyway), and them back in `backward` | the inputs to run `fn` on again |
# | `ctx.add_inputs(*tensors)`, `ctx.added_inputs` | more inputs of the node, after the arguments; their gradients come after the arguments' | the weights `fn` closes over |
# | `ctx.anything = value` | any other value backward needs | `fn` itself, the random state |
# | `leaf_copy(t)` | the same array as a fresh leaf, with the same `requires_grad` | run `fn` on copies, so its graph stops at them and is not tied to the outer graph |
# | `captured_leaves(out, copies)` | the leaves needing gradients below `out` (a tensor or a tuple), other than `copies` | find the closed-over weights |
# | `RandomState()`, `replaying(state)` | numpy's global random state, saved; a block that runs from it and puts the current state back afterwards | dropout draws the same mask twice |
# | `mg.enable_grad()`, `mg.is_grad_enabled()` | a block that records; whether recording is on | forward and backward run with recording off |
# | `mg.gradients(output, tensors)` | the gradients of `tensors` (zeros where unreached), `.grad` untouched | backpropagate through the rebuilt graph |
#
# A recipe:
#
# 1. `checkpoint(fn, *args)`: not recording (`not mg.is_grad_enabled()`)? Return `fn(*args)`: nothing will be
#    differentiated. Otherwise return `Checkpoint.apply(fn, *args)`.
# 2. `forward(ctx, fn, *args)`: keep `fn` and the random state in `ctx` (the state **before** `fn` draws
#    anything); run `fn` on leaf copies under `mg.enable_grad()`; add the captured leaves as inputs; save the
#    arguments; return the result. (`apply` records no node when no input needs a gradient: `fn` on constants only.)
# 3. `backward(ctx, *grads)`: make fresh leaf copies of the saved arguments, run `fn` on them again inside
#    `mg.enable_grad()` and `replaying(...)`, form $\sum_i \langle o_i, \bar o_i \rangle$ (still recording), and take
#    its `mg.gradients` for those of the copies and added inputs that require grad. Return None for `fn`, then one
#    gradient per argument, then one per added input (None where none is needed). Never keep the first run's
#    result or copies in `ctx`: that would keep `fn`'s activations alive until backward.

# %%
# mg.Function at work on a toy operation, "TripleGrad": its output has the values of its first input, and its
# backward multiplies the adjoint by 3 (a made-up rule, only to show the plumbing checkpoint uses).
class TripleGrad(mg.Function):
    @staticmethod
    def forward(ctx, a, c, label):  # tensors and any other values; runs with recording off
        ctx.label = label  # anything backward needs, as an attribute of ctx
        return a * 1.0  # the result's data is whatever forward computes

    @staticmethod
    def backward(ctx, grad):  # one adjoint per output in; one gradient per argument of forward out
        print(f"  {ctx.label}'s backward runs in the backward pass: grad = {grad.data}")
        return grad * 3.0, None, None  # c needs no gradient, label is not a tensor


a = mg.tensor([1.0, 2.0], requires_grad=True)
c = mg.tensor([5.0, 5.0])  # a constant: it needs no gradient
y = TripleGrad.apply(a, c, "triple_grad")
print(f"y = {y.data}, made by op {y.op!r} from inputs of shapes {[t.shape for t in y.parents]}; requires grad: {y.requires_grad}")
print("backward of (y * y).sum(): the adjoint of y is 2y = [2, 4]")
(y * y).sum().backward()
print(f"a.grad = {a.grad.data} (3 × 2y), c.grad = {c.grad}")
class ForgetsTheNones(TripleGrad):
    @staticmethod
    def backward(ctx, grad):
        return grad * 3.0  # one gradient, for three arguments of forward


try:
    (ForgetsTheNones.apply(a, c, "forgets_the_nones") ** 2).sum().backward()
except mg.MinigradError as error:
    print(f"a backward returning one gradient for three arguments is stopped: {error}")


# %% [markdown]
# What to take from it for `checkpoint`: the result's data is whatever `forward` computed (for `checkpoint`, `fn`'s
# result, with `fn`'s own graph dropped); gradients reach exactly the node's inputs (so the closed-over weights must
# be among them: `ctx.add_inputs`); `backward` runs only in the backward pass, with everything `ctx` holds kept alive
# until then (so it must hold nothing big); and a backward that returns the wrong number of gradients, or one of the
# wrong shape, is stopped with an error that names the function.

# %% nbgrader={"grade": false, "grade_id": "checkpoint", "locked": false, "schema_version": 3, "solution": true}
class Checkpoint(mg.Function):
    """One graph node standing for `fn`: forward keeps only its inputs, backward runs `fn` again."""

    name = "checkpoint"  # the node's op

    @staticmethod
    def forward(ctx, fn, *args):
        """`fn(*args)`, leaving in ctx what backward needs (never `fn`'s activations): `fn`, the random state it
        starts from and the arguments; the leaves needing gradients that `fn` closes over become added inputs."""
        ### BEGIN SOLUTION
        ctx.fn = fn
        ctx.rng = RandomState()  # before fn draws any random number
        copies = [leaf_copy(a) for a in args]
        with mg.enable_grad():  # recorded once, only to see what fn depends on
            result = fn(*copies)
        ctx.add_inputs(*captured_leaves(result, copies))  # the weights fn closes over
        ctx.save_for_backward(*args)
        return result
        ### END SOLUTION

    @staticmethod
    def backward(ctx, *grads):
        """Run `fn` again on leaf copies of the saved arguments and backpropagate `grads` (one per output)
        through it. Returns None for `fn`, one gradient per argument, then one per added input."""
        ### BEGIN SOLUTION
        leaves = [leaf_copy(a) for a in ctx.saved_tensors]
        with mg.enable_grad(), replaying(ctx.rng):
            result = ctx.fn(*leaves)
            outputs = result if isinstance(result, tuple) else (result,)
            total = sum((o * g).sum() for o, g in zip(outputs, grads))  # its gradients are the VJPs
        sources = leaves + list(ctx.added_inputs)
        wanted = [t for t in sources if t.requires_grad]
        adjoints = iter(mg.gradients(total, wanted))
        return (None,) + tuple(next(adjoints) if t.requires_grad else None for t in sources)
        ### END SOLUTION


def checkpoint(fn, *args):
    """`fn(*args)`, keeping only the inputs for backward; `fn`'s activations are recomputed then.

    `args` are tensors; `fn` returns a tensor or a tuple of tensors, and so does `checkpoint`. Without grad
    recording (`mg.no_grad()`), just return `fn(*args)`; otherwise `Checkpoint.apply(fn, *args)`: ONE node,
    op "checkpoint", whose inputs are `args` followed by the leaves needing gradients that `fn` closes over
    (none at all when `fn` ran on constants only: then the result has no node and needs no gradient).
    """
    ### BEGIN SOLUTION
    if not mg.is_grad_enabled():
        return fn(*args)  # no graph is recorded: nothing to save
    return Checkpoint.apply(fn, *args)
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "helpers_checkpoint", "locked": true, "schema_version": 3, "solution": false}
def grads_of(tensors):
    """Copies of the tensors' .grad arrays (None where there is none)."""
    return [None if t.grad is None else t.grad.data.copy() for t in tensors]


def reset_grads(tensors):
    for t in tensors:
        t.grad = None


def check_array(got, expected, what, **tolerances):
    """`got` must be a numeric numpy array (or number) close to `expected`."""
    if not isinstance(got, (np.ndarray, np.number, float, int)) or isinstance(got, bool) or np.asarray(got).dtype.kind not in "iuf":
        raise AssertionError(f"{what}: expected an array of numbers, got {got!r:.200}")
    assert_close(got, expected, what, **tolerances)


def check_same_grads(got, expected, what):
    """Gradients with and without checkpointing must agree to rounding."""
    if type(got) is not list:
        raise AssertionError(f"{what}: expected a list of gradients, got {got!r:.200}")
    assert len(got) == len(expected), f"{what}: expected {len(expected)} gradients, got {len(got)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        if e is None or g is None:
            assert g is None and e is None, f"{what}: gradient {i}: expected {e}, got {g}"
        else:
            check_array(g, e, f"{what}: gradient {i}", rtol=1e-9, atol=1e-12)


def dropout(v, p=0.5):
    """Inverted dropout drawing its mask from numpy's global generator."""
    return v * mg.tensor((np.random.rand(*v.shape) > p) / (1 - p))


def block(x, w):
    return ((x @ w).tanh() @ w.T).sigmoid()


def two_outputs(a, b):
    return (a * b).tanh(), (a - b).exp().sum(axis=0)


def checkpoint_case(case):
    """A function to checkpoint and what it runs on, described in plain data: "block", ("net", 2), ...
    Returns {"fn", "args", "leaves" (whose gradients are compared), "loss" (result -> scalar)}. Drivers and
    checkers build the same case the same way (fresh tensors each time)."""
    kind, *args = case if isinstance(case, (list, tuple)) else (case,)
    if kind in ("block", "sin_square"):
        rng = np.random.default_rng(0)
        x = mg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
        w = mg.tensor(rng.standard_normal((3, 3)), requires_grad=True)
        if kind == "sin_square":
            return {"fn": lambda v: (v * v).sin(), "args": [x], "leaves": [x], "loss": lambda out: out.sum()}
        return {"fn": block, "args": [x, w], "leaves": [x, w], "loss": lambda out: (out**2).sum()}
    if kind == "net":  # a random network of 1 to 3 layers, relu and tanh in turn
        r = np.random.default_rng(args[0])
        layers = [nn.Linear(3, 3, rng=r) for _ in range(int(r.integers(1, 4)))]
        inp = mg.tensor(r.standard_normal((2, 3)), requires_grad=True)

        def net(v):
            for i, layer in enumerate(layers):
                v = layer(v)
                v = v.tanh() if i % 2 else v.relu()
            return v

        params = [inp] + [p for layer in layers for p in layer.parameters()]
        return {"fn": net, "args": [inp], "leaves": params, "loss": lambda out: (out**3).sum()}
    if kind in ("layer", "frozen"):
        layer = nn.Linear(3, 2, rng=np.random.default_rng(1))
        if kind == "layer":  # the data needs no grad: only the weights do
            data = mg.tensor(np.random.default_rng(2).standard_normal((5, 3)))
            return {"fn": lambda v: layer(v).tanh(), "args": [data], "leaves": layer.parameters(),
                    "loss": lambda out: out.sum()}
        frozen = nn.Linear(3, 3, rng=np.random.default_rng(3)).requires_grad_(False)
        inp = mg.tensor(np.ones((2, 3)), requires_grad=True)
        return {"fn": lambda v: layer(frozen(v)), "args": [inp],
                "leaves": [inp] + layer.parameters() + frozen.parameters(), "loss": lambda out: out.sum()}
    if kind in ("two_outputs", "first_only"):
        rng = np.random.default_rng(4)
        a = mg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
        b = mg.tensor(rng.standard_normal(4), requires_grad=True)
        if kind == "first_only":  # only the first output is used
            return {"fn": two_outputs, "args": [a, b], "leaves": [a, b], "loss": lambda out: out[0].sum()}
        return {"fn": two_outputs, "args": [a, b], "leaves": [a, b],
                "loss": lambda out: (out[0] ** 2).sum() + (out[1] * b).sum()}
    raise ValueError(f"unknown checkpoint case {case!r}")


def checkpointed(case):
    """Driver: your checkpoint(fn, *args) on the case; returns what it gave back (kind, shapes, values, for a
    single tensor its op, requires_grad and its inputs as numbers: i for args[i], len(args) + j for leaves[j],
    None for anything else), then the leaves' gradients after backward of the case's loss."""
    c = checkpoint_case(case)
    known = c["args"] + c["leaves"]
    result = checkpoint(c["fn"], *c["args"])
    if isinstance(result, Tensor):
        outs, kind = [result], "tensor"
    elif isinstance(result, tuple) and all(isinstance(t, Tensor) for t in result):
        outs, kind = list(result), "tuple"
    else:
        return {"kind": f"a {type(result).__name__}"}
    facts = {"kind": kind, "shapes": [tuple(t.shape) for t in outs], "values": [t.data.copy() for t in outs],
             "requires_grad": [bool(t.requires_grad) for t in outs]}
    if kind == "tensor":
        facts["op"] = result.op
        facts["parents"] = [next((i for i, t in enumerate(known) if t is p), None) for p in result.parents]
    c["loss"](result).backward()
    facts["grads"] = grads_of(c["leaves"])
    return facts


def plain_run(case):
    """Checker: the case without checkpointing, by the reference library: values and gradients."""
    c = checkpoint_case(case)
    result = c["fn"](*c["args"])
    outs = [result] if isinstance(result, Tensor) else list(result)
    c["loss"](result).backward()
    return {"kind": "tensor" if isinstance(result, Tensor) else "tuple", "values": [t.data for t in outs],
            "shapes": [tuple(t.shape) for t in outs], "grads": grads_of(c["leaves"])}


def check_checkpointed(got, case, what):
    """Fail, saying what is wrong, unless `got` (from `checkpointed`) matches the plain function: the same
    kind of result, values and gradients; one node with op "checkpoint" for a single tensor."""
    expected = plain_run(case)
    if type(got) is not dict or type(got.get("kind")) is not str:
        raise AssertionError(f"{what}: the driver returned something malformed: {got!r:.200}")
    n = len(expected["values"])
    if got["kind"] != expected["kind"]:
        wanted = "a tensor" if n == 1 else f"a tuple of {n} tensors"
        raise AssertionError(f"{what}: expected {wanted}, got {got['kind']}")
    if type(got.get("shapes")) is not list or len(got["shapes"]) != n:
        raise AssertionError(f"checkpoint of a function returning {n} tensors must return {n}, got {got.get('shapes')!r:.200}")
    assert_equal(got["shapes"], expected["shapes"], f"{what}: shapes of the outputs")
    for i, (value, e) in enumerate(zip(got["values"], expected["values"])):
        check_array(value, e, f"{what}: value of output {i}" if n > 1 else f"{what}'s value")
    if n == 1:
        if got.get("op") != "checkpoint":
            raise AssertionError(f"checkpoint(...) must return the output of one node with op 'checkpoint', got op {got.get('op')!r}")
        if got.get("requires_grad") != [True]:
            raise AssertionError(f"{what} must require grad when what fn depends on does")
    check_same_grads(got.get("grads"), expected["grads"], f"{what}: checkpointed vs plain gradients")


# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_checkpoint_calls", "locked": true, "schema_version": 3, "solution": false}
def checkpoint_no_grad():
    """Driver: checkpoint(block, x, w) under mg.no_grad(): whether its result records a node, and its value."""
    c = checkpoint_case("block")
    with mg.no_grad():
        out = checkpoint(block, *c["args"])
    if not isinstance(out, Tensor):
        return {"recorded": f"a {type(out).__name__}", "value": None}
    return {"recorded": out.node is not None, "value": out.data.copy()}


def checkpoint_gradients_call():
    """Driver: mg.gradients(checkpoint(block, x, w).sum(), [x, w]), as arrays."""
    c = checkpoint_case("block")
    return [g.data.copy() for g in mg.gradients(checkpoint(block, *c["args"]).sum(), c["args"])]


def checkpoint_constants():
    """Driver: checkpoint(lambda v: (v * v).sin(), c) for a constant c (nothing needs a gradient, grad recording
    on): whether the result requires grad or has a node, and its value."""
    c = mg.tensor(np.linspace(-1.0, 1.0, 6))
    out = checkpoint(lambda v: (v * v).sin(), c)
    if not isinstance(out, Tensor):
        return {"kind": f"a {type(out).__name__}"}
    return {"kind": "tensor", "requires_grad": bool(out.requires_grad), "recorded": out.node is not None,
            "value": out.data.copy()}


# %% nbgrader={"grade": true, "grade_id": "test_checkpoint_gradients", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# block(x, w) = sigmoid(tanh(x @ w) @ w.T); the loss is (out ** 2).sum().
got = drive(checkpointed, "block")
check_checkpointed(got, "block", "checkpoint(block, x, w)")
assert_equal(got["parents"], [0, 1], "the checkpoint node's inputs (0 for x, 1 for w): the arguments")
print("checkpoint: value and gradients agree with the plain function")
### BEGIN HIDDEN TESTS
c = checkpoint_case("sin_square")
got = drive(checkpointed, "sin_square")
check_checkpointed(got, "sin_square", "checkpoint(lambda v: (v * v).sin(), x)")
check_array(got["grads"][0], 2 * c["args"][0].data * np.cos(c["args"][0].data ** 2), "gradient of sin(x*x) through checkpoint")
for seed in range(4):
    check_checkpointed(drive(checkpointed, ("net", seed)), ("net", seed), f"random network {seed}")
got = drive(checkpoint_no_grad)
assert got["recorded"] is False, "under no_grad, checkpoint must record nothing"
c = checkpoint_case("block")
check_array(got["value"], block(*c["args"]).data, "checkpoint(block, x, w)'s value under no_grad")
got = drive(checkpoint_gradients_call)
c = checkpoint_case("block")
block(*c["args"]).sum().backward()
check_same_grads(got, grads_of(c["leaves"]), "mg.gradients through checkpoint")
# A computation on constants only: nothing to differentiate, so no node and no grad.
got = drive(checkpoint_constants)
if type(got) is not dict or got.get("kind") != "tensor":
    raise AssertionError(f"checkpoint of a function of a constant must return a tensor, got {got!r:.200}")
check_array(got["value"], np.sin(np.linspace(-1.0, 1.0, 6) ** 2), "checkpoint(lambda v: (v * v).sin(), constant)'s value")
if got["requires_grad"] is not False or got["recorded"] is not False:
    raise AssertionError("checkpoint of a function of constants only (nothing requires grad) must return a result "
                         f"that does not require grad and has no node; got requires_grad={got['requires_grad']}, "
                         f"node {'recorded' if got['recorded'] else 'None'}")
### END HIDDEN TESTS

# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_checkpoint_memory", "locked": true, "schema_version": 3, "solution": false}
def owner_of(array):
    """The array that owns the memory behind `array` (itself unless it is a view)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def kept_arrays(output, data, limit=200_000):
    """Every float array the graph below `output` keeps alive, as (shape, dtype) per buffer: found by following
    every reference from its nodes (their inputs, their operations and whatever those hold: closures,
    parameters), never through a module or the notebook's globals. Left out: `output`'s own data, `data` (the
    arrays of the leaves the caller made, which live anyway), and gradients. {"arrays": [...], "complete": bool}."""
    blocked = {id(m.__dict__) for m in list(sys.modules.values()) if isinstance(getattr(m, "__dict__", None), dict)}
    blocked.add(id(globals()))
    skip = {id(owner_of(a)) for a in data} | {id(owner_of(output.data))}
    atoms = (type, types.ModuleType, types.CodeType, types.BuiltinFunctionType, str, bytes, int, float, bool)
    found, seen, stack = {}, set(), [output.node]
    while stack and len(seen) < limit:
        obj = stack.pop()
        if obj is None or id(obj) in seen or id(obj) in blocked or isinstance(obj, atoms):
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            buffer = owner_of(obj)
            if id(buffer) not in skip and buffer.dtype.kind in "fc":
                found[id(buffer)] = (tuple(buffer.shape), buffer.dtype.str)
        elif isinstance(obj, Tensor):
            stack.extend((obj.data, obj.node))  # not obj.grad: gradients are not saved activations
        else:
            stack.extend(gc.get_referents(obj))
    return {"arrays": sorted(found.values()), "complete": not stack}


def traced(v):
    h = v.exp()
    return (h * h).tanh()


def memory_case(case):
    """(leaves, parameters' arrays, output computed with `ck` in place of checkpoint) for a memory test."""
    if case == "traced":  # a non-leaf input h = sin(x): saved by the checkpoint node
        x = mg.tensor(np.ones((10, 10)), requires_grad=True)
        return [x], lambda ck: ck(traced, x.sin())
    if case == "segments":  # 12 Linear(8, 8) + tanh blocks in 3 checkpointed segments of 4
        blocks = [nn.Sequential(nn.Linear(8, 8, rng=np.random.default_rng(i)), nn.Tanh()) for i in range(12)]
        big = mg.tensor(np.ones((4, 8)), requires_grad=True)

        def run(ck):
            y = big.sin()
            for part in (blocks[:4], blocks[4:8], blocks[8:]):
                y = ck(nn.Sequential(*part), y)
            return y

        return [big] + [p for b in blocks for p in b.parameters()], run
    raise ValueError(f"unknown memory case {case!r}")


def checkpoint_kept(case):
    """Driver: the case's output made with your checkpoint; the float arrays its graph keeps alive right after
    the forward pass and after backward, its value, and the leaves' gradients."""
    leaves, run = memory_case(case)
    data = [t.data for t in leaves]
    out = run(checkpoint)
    if not isinstance(out, Tensor):
        return {"kind": f"a {type(out).__name__}"}
    after_forward = kept_arrays(out, data)
    value = out.data.copy()
    out.sum().backward()
    return {"kind": "tensor", "after_forward": after_forward, "value": value,
            "after_backward": kept_arrays(out, data), "grads": grads_of(leaves)}


def check_kept(kept, at_most, what, hint):
    """The arrays a graph keeps (from kept_arrays) add up to at most `at_most` bytes, counted here."""
    if type(kept) is not dict or type(kept.get("arrays")) is not list or kept.get("complete") is not True:
        raise AssertionError(f"{what}: could not list what the graph keeps (more than 200,000 objects?): {kept!r:.200}")
    total, shown = 0, []
    for item in kept["arrays"]:
        if (type(item) is not tuple or len(item) != 2 or type(item[0]) is not tuple
                or not all(type(n) is int and n >= 0 for n in item[0]) or type(item[1]) is not str):
            raise AssertionError(f"{what}: malformed array description {item!r:.200}")
        dtype = np.dtype(item[1])
        total += int(np.prod(item[0], dtype=np.int64)) * dtype.itemsize
        shown.append(f"{item[0]} {dtype}")
    if total > at_most:
        raise AssertionError(f"{what}: expected at most {at_most} bytes of activations, got {total} bytes in "
                             f"{len(shown)} arrays ({', '.join(shown[:8])}{', ...' if len(shown) > 8 else ''}): {hint}")


def plain_memory_case(case):
    """Checker: the case's value and leaves' gradients without checkpointing (the reference library)."""
    leaves, run = memory_case(case)
    out = run(lambda fn, *args: fn(*args))
    value = out.data.copy()
    out.sum().backward()
    return value, grads_of(leaves)


def check_checkpoint_kept(got, case, at_most, what):
    if type(got) is not dict or got.get("kind") != "tensor":
        raise AssertionError(f"{what}: expected a tensor, got {got.get('kind') if type(got) is dict else got!r:.200}")
    check_kept(got["after_forward"], at_most, f"{what}, right after the forward pass",
               "an activation inside fn is still alive after checkpoint() returned: it must keep only fn's inputs")
    check_kept(got["after_backward"], at_most, f"{what}, after backward",
               "the recomputed activations are still alive after backward")
    value, grads = plain_memory_case(case)
    check_array(got["value"], value, f"{what}'s value")
    check_same_grads(got["grads"], grads, f"{what}: checkpointed vs plain gradients")


def data_bytes():
    """This process's data segment (heap and private mappings) in bytes, or None where Linux does not say."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None


def halving_step(v):
    return (v * 2.0).tanh() * 0.5


def checkpoint_within_memory(segments, steps, size, budget_mb):
    """Driver: `segments` checkpointed segments of `steps` halving steps each on `size` numbers, forward and
    backward, with at most `budget_mb` MiB more memory than this process uses now (the grader's sandbox has
    1 GiB in all; this makes your own kernel as strict). Returns x's gradient (every 1024th entry) or
    "MemoryError"."""
    import resource

    def segment(v):
        for _ in range(steps):
            v = halving_step(v)
        return v

    x = mg.tensor(np.linspace(-2.0, 2.0, size), requires_grad=True)
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    now = data_bytes()
    if now is not None:
        cap = now + (budget_mb << 20)
        resource.setrlimit(resource.RLIMIT_DATA, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    try:
        y = x * 1.0
        for _ in range(segments):
            y = checkpoint(segment, y)
        y.sum().backward()
        return None if x.grad is None else x.grad.data[::1024].copy()
    except MemoryError:
        return "MemoryError"
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


# %% nbgrader={"grade": true, "grade_id": "test_checkpoint_memory", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# h = sin(x) for a (10, 10) leaf x (800 bytes), out = checkpoint(traced, h) with traced(v) = tanh(exp(v) ** 2).
# The driver lists every float array the graph keeps alive, through node inputs, operations and closures alike.
got = drive(checkpoint_kept, "traced")
check_checkpoint_kept(got, "traced", 100 * 8, "checkpoint(traced, h)")
print("checkpoint: keeps only its inputs")
### BEGIN HIDDEN TESTS
# 3 checkpointed segments of 4 Linear(8, 8) + tanh blocks on a (4, 8) batch: only the 3 segment inputs stay.
got = drive(checkpoint_kept, "segments")
check_checkpoint_kept(got, "segments", 3 * 32 * 8, "3 checkpointed segments of 4 layers")

# 16 checkpointed segments of 4 steps (12 operations) on 2**20 numbers, 8 MiB an activation: keeping every
# activation needs about 1.5 GiB, more than the grader's sandbox has; checkpointing keeps the 16 segment
# inputs and rebuilds one segment at a time (about 250 MiB). The driver allows 512 MiB.
segments, steps, size, budget = 16, 4, 1 << 20, 512
got = drive(checkpoint_within_memory, segments, steps, size, budget, seconds=120)
if isinstance(got, str) and got == "MemoryError":
    raise AssertionError(f"checkpoint ran out of memory on {segments} checkpointed segments of {3 * steps} operations "
                         f"on {size:,} numbers ({budget} MiB allowed): it keeps activations that it should recompute")
v, slope = np.linspace(-2.0, 2.0, size), np.ones(size)
for _ in range(segments * steps):
    t = np.tanh(v * 2.0)
    slope *= 1.0 - t * t
    v = t * 0.5
check_array(got, slope[::1024], "gradient through 16 checkpointed segments (every 1024th entry)", rtol=1e-7)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_checkpoint_parameters", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# layer = Linear(3, 2); the data needs no grad: only the weights need gradients.
got = drive(checkpointed, "layer")
if type(got) is dict and got.get("requires_grad") == [False]:
    raise AssertionError("checkpoint of a layer must require grad when the layer's weights do")
check_checkpointed(got, "layer", "checkpoint(lambda v: layer(v).tanh(), data)")
print("checkpoint: closed-over parameters get their gradients")
### BEGIN HIDDEN TESTS
# A frozen Linear(3, 3) before a trainable one: the frozen weights add no input and get no gradient.
got = drive(checkpointed, "frozen")
check_checkpointed(got, "frozen", "checkpoint(lambda v: layer(frozen(v)), x)")
assert_equal(len(got["parents"]), 3, "inputs of the node: x and the two trainable weights (the frozen layer adds none)")
assert got["grads"][3] is None, "a frozen weight got a gradient"
c = checkpoint_case("frozen")
layer_w, frozen_w = c["leaves"][1].data, c["leaves"][3].data
check_array(got["grads"][0], np.ones((2, 2)) @ layer_w.T @ frozen_w.T, "input gradient through two layers")
### END HIDDEN TESTS

# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_checkpoint_randomness", "locked": true, "schema_version": 3, "solution": false}
def checkpoint_dropout():
    """Driver: x (50 numbers) through checkpoint(lambda v: dropout(v.tanh()), x) from numpy's global seed 0;
    the program then draws 7 numbers, runs backward and draws 5 more. Returns x's gradient and both draws."""
    x = mg.tensor(np.linspace(-1, 1, 50), requires_grad=True)
    np.random.seed(0)
    out = checkpoint(lambda v: dropout(v.tanh()), x)
    between = np.random.rand(7)  # the program draws other numbers between forward and backward
    out.sum().backward()
    return {"grad": None if x.grad is None else x.grad.data.copy(), "between": between, "after": np.random.rand(5)}


def checkpoint_two_dropouts():
    """Driver: two checkpointed dropouts of the same x from seed 1, one backward; x's gradient."""
    x = mg.tensor(np.linspace(-1, 1, 50), requires_grad=True)
    np.random.seed(1)
    first = checkpoint(lambda v: dropout(v), x)
    second = checkpoint(lambda v: dropout(v * 2.0), x)
    (first + second).sum().backward()
    return None if x.grad is None else x.grad.data.copy()


# %% nbgrader={"grade": true, "grade_id": "test_checkpoint_randomness", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# The masks, from the same seed as the driver: numpy's legacy RandomState(0) draws what np.random.seed(0) does.
stream = np.random.RandomState(0)
x = np.linspace(-1, 1, 50)
mask = (stream.rand(50) > 0.5) / 0.5
between, after = stream.rand(7), stream.rand(5)
got = drive(checkpoint_dropout)
if type(got) is not dict or set(got) != {"grad", "between", "after"}:
    raise AssertionError(f"the driver returned something malformed: {got!r:.200}")
check_array(got["between"], between, "numbers drawn right after checkpoint() (fn drew one mask; checkpoint must not draw more)")
check_same_grads([got["grad"]], [mask * (1 - np.tanh(x) ** 2)], "dropout inside checkpoint: the recomputation must draw the same mask")
check_array(got["after"], after, "numbers drawn right after backward: backward changed numpy's random state: restore it after recomputing")
print("checkpoint: randomness replays")
### BEGIN HIDDEN TESTS
stream = np.random.RandomState(1)
m1 = (stream.rand(50) > 0.5) * 2.0
m2 = (stream.rand(50) > 0.5) * 2.0
check_array(drive(checkpoint_two_dropouts), m1 + 2 * m2, "two checkpointed dropouts, each replaying its own mask")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_checkpoint_outputs", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# two_outputs(a, b) = (tanh(a * b), exp(a - b).sum(axis=0)); the loss uses both.
got = drive(checkpointed, "two_outputs")
if type(got) is dict and got.get("kind") != "tuple":
    raise AssertionError(f"checkpoint of a function returning 2 tensors must return a tuple of 2, got {got.get('kind')}")
check_checkpointed(got, "two_outputs", "checkpoint(two_outputs, a, b)")
print("checkpoint: several inputs and outputs")
### BEGIN HIDDEN TESTS
got = drive(checkpointed, "first_only")
check_checkpointed(got, "first_only", "checkpoint(two_outputs, a, b) with only the first output used")
c = checkpoint_case("first_only")
a, b = (t.data for t in c["args"])
check_array(got["grads"][0], (1 - np.tanh(a * b) ** 2) * b, "gradient when only the first output is used")
### END HIDDEN TESTS

# %% [markdown]
# The reference `mg.checkpoint` (`minigrad/checkpointing.py`) is the same `Function` plus a few conveniences:
# non-tensor arguments, extra numpy `Generator`s whose state to replay, no random state kept when `fn` draws
# nothing, and higher-order derivatives (with `create_graph=True` its backward is itself checkpointed). Here is what a checkpointed block looks like — the
# dashed cluster is the one node that stands for the whole of `fn`:

# %%
with uses_your("checkpoint"):
    small = relu_blocks(3, width=4)
    v = mg.tensor(np.ones((2, 4)))
    y = small[2](checkpoint(nn.Sequential(small[0], small[1]), v))
    display(mg.draw(y.sum(), names=[("x", v)] + [(f"{kind}{i + 1}", getattr(block[0], attr))
                                         for i, block in enumerate(small) for kind, attr in [("W", "weight"), ("b", "bias")]]))


# %% [markdown]
# ## 5. Segments, and why $\sqrt{N}$
#
# Checkpointing every block separately helps only a little: each block still keeps its input. The better plan is
# to cut the chain of $N$ layers into $k$ **segments** of $N/k$ layers and checkpoint each segment:
#
# * between forward and backward, only the $k$ segment inputs are alive;
# * during backward, one segment at a time is rebuilt: $N/k$ layers' activations.
#
# With $a$ bytes kept per layer inside a rebuilt segment and $b$ bytes per segment boundary, the peak is
#
# $$M(k) \approx b\,k + a\,\frac{N}{k}, \qquad \frac{dM}{dk} = b - \frac{aN}{k^2} = 0 \;\Rightarrow\; k^\star = \sqrt{\frac{aN}{b}},
# \qquad M(k^\star) = 2\sqrt{abN} = O(\sqrt{N}).$$
#
# Few segments leave long segments to rebuild; many segments leave many boundaries to keep; the two terms balance
# at $k \propto \sqrt{N}$ (Chen et al. 2016). For our blocks $a = 3$ activations and $b = 1$, so the exact
# optimum is near $\sqrt{3N}$, and any $k$ within a factor of two of it is nearly as good. The time cost is the
# forward pass of every segment **but the last** once more — the last segment's backward starts right after its
# forward, so rebuilding it would buy nothing; PyTorch's `checkpoint_sequential` also runs it normally. That is
# at most one extra forward pass, the cheapest part of a training step; section 6 measures what it costs.
#
# Applied recursively (checkpoint segments inside segments), memory falls to $O(\log N)$ for $O(N \log N)$
# compute. For a fixed number of checkpoint slots, Griewank and Walther's *revolve* schedule (2000) is
# provably optimal, placing checkpoints by binomial coefficients; frameworks mostly use the simple $\sqrt{N}$
# rule because layers are not all alike and a little extra memory is cheaper than cleverness.
#
# Implement `checkpoint_sequential(layers, segments, x)`:
#
# * `layers` is any iterable of callables — a list, an `nn.Sequential`, or a generator such as
#   `(block for block in blocks if ...)` — consumed once: a generator can be walked only one time, so make a list
#   of it first; `segments` must be between 1 and the number of layers, otherwise raise `ValueError`;
# * the segment lengths are as equal as possible, **the longer segments first** — exactly what
#   `np.array_split(np.arange(len(layers)), segments)` produces (7 layers in 3 segments: 3, 2, 2);
# * every segment but the last becomes one `checkpoint` (your function) of the segment's layers applied in order
#   (`nn.Sequential(*part)` is such a function); the last segment runs normally.

# %% nbgrader={"grade": false, "grade_id": "checkpoint_sequential", "locked": false, "schema_version": 3, "solution": true}
def checkpoint_sequential(layers, segments, x):
    """Apply `layers` to `x` in order, checkpointing all but the last of `segments` segments.

    `layers` is any iterable of callables (a list, an nn.Sequential, a generator), consumed once.
    Segment lengths differ by at most one, longer segments first (like `np.array_split`).
    Raises ValueError unless 1 <= segments <= the number of layers.
    """
    ### BEGIN SOLUTION
    layers = list(layers)
    if not 1 <= segments <= len(layers):
        raise ValueError(f"checkpoint_sequential: segments must be between 1 and {len(layers)}, got {segments}")
    sizes = [len(part) for part in np.array_split(np.arange(len(layers)), segments)]
    bounds = np.cumsum([0] + sizes)
    for start, stop in zip(bounds[:-2], bounds[1:-1]):
        x = checkpoint(nn.Sequential(*layers[start:stop]), x)
    return nn.Sequential(*layers[bounds[-2]:])(x)
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "helpers_checkpoint_sequential", "locked": true, "schema_version": 3, "solution": false}
def widening_chain(n_layers, seed=0):
    """Linear+tanh layers mapping width 2 -> 3 -> ... -> n_layers + 2: a tensor's width names its layer."""
    rng = np.random.default_rng(seed)
    return [nn.Sequential(nn.Linear(w, w + 1, rng=rng), nn.Tanh()) for w in range(2, n_layers + 2)]


def checkpoint_inputs(output):
    """Widths of the inputs of every "checkpoint" node below `output`, sorted."""
    return sorted(t.parents[0].shape[-1] for t in mg.topological_sort(output) if t.op == "checkpoint")


def boundary_widths(n_layers, segments):
    """Where the checkpointed segments must start (as input widths) under the array_split rule."""
    sizes = [len(p) for p in np.array_split(np.arange(n_layers), segments)]
    return [int(s) + 2 for s in np.cumsum([0] + sizes)[:-2]]


def sequential_boundaries(n_layers, segments, as_module, rows):
    """Driver: your checkpoint_sequential on widening_chain(n_layers) (a list; as_module True: one nn.Sequential;
    "generator": a generator of the layers), on a (rows, 2) batch of ones; the input widths of its checkpoint
    nodes and its value."""
    layers = widening_chain(n_layers)
    given = nn.Sequential(*layers) if as_module is True else (l for l in layers) if as_module == "generator" else layers
    out = checkpoint_sequential(given, segments, mg.tensor(np.ones((rows, 2)), requires_grad=True))
    if not isinstance(out, Tensor):
        return {"widths": [], "value": f"a {type(out).__name__}"}
    return {"widths": checkpoint_inputs(out), "value": out.data.copy()}


def check_boundaries(got, n_layers, segments, rows, given="a list"):
    what = f"{n_layers} layers in {segments} segments, given as {given}"
    try:
        compare_boundaries(got, n_layers, segments, rows, what)
    except AssertionError:
        blame_checkpoint("widening", f"checkpoint_sequential({what})")
        raise


def compare_boundaries(got, n_layers, segments, rows, what):
    if type(got) is not dict or set(got) != {"widths", "value"}:
        raise AssertionError(f"checkpoint_sequential({what}): the driver returned something malformed: {got!r:.200}")
    assert_equal(got["widths"], boundary_widths(n_layers, segments), f"input widths of the checkpoint nodes for {what}")
    check_array(got["value"], nn.Sequential(*widening_chain(n_layers))(mg.tensor(np.ones((rows, 2)))).data,
                f"checkpoint_sequential's value for {what}")


def sequential_case(case):
    """(layers, segments, input, leaves) for a gradient test, built afresh (the dropout case seeds numpy's
    global generator, as its driver and checker both do before running)."""
    if case == "widening":
        layers = widening_chain(7, seed=3)
        segments = 3
    elif case == "dropout":
        np.random.seed(0)
        layers = [nn.Sequential(layer, dropout) for layer in widening_chain(6, seed=4)]
        segments = 2
    else:
        raise ValueError(f"unknown checkpoint_sequential case {case!r}")
    inp = mg.tensor(np.random.default_rng(5).standard_normal((3, 2)), requires_grad=True)
    return layers, segments, inp, [inp] + [p for layer in layers for p in layer.parameters()]


def sequential_gradients(case):
    """Driver: your checkpoint_sequential on the case; its value and every gradient after (out ** 2).sum().backward(),
    or the error it raised (NotImplementedError goes through: it names the exercise left to do)."""
    layers, segments, inp, leaves = sequential_case(case)
    try:
        out = checkpoint_sequential(layers, segments, inp)
        value = out.data.copy()
        (out**2).sum().backward()
    except NotImplementedError:
        raise
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"}
    return {"value": value, "grads": grads_of(leaves)}


def first_segment(case):
    """The case's first segment as one function (what checkpoint_sequential hands your checkpoint), its input and
    the leaves whose gradients count."""
    layers, segments, inp, _ = sequential_case(case)
    first = nn.Sequential(*layers[: len(np.array_split(np.arange(len(layers)), segments)[0])])
    return first, inp, [inp] + first.parameters()


def segment_probe(case):
    """Driver: your checkpoint alone on the case's first segment: the op of its result, its value and gradients
    after (out ** 2).sum().backward(), or the error it raised."""
    first, inp, leaves = first_segment(case)
    try:
        out = checkpoint(first, inp)
        op, value = str(out.op), out.data.copy()
        (out**2).sum().backward()
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"}
    return {"op": op, "value": value, "grads": grads_of(leaves)}


def blame_checkpoint(case, what):
    """checkpoint_sequential runs your checkpoint: when its test fails, say so if checkpoint alone is wrong on the
    case's first segment (the checker's own plain run of that segment says what is right)."""
    got = drive(segment_probe, case)
    first, inp, leaves = first_segment(case)
    plain = first(inp)
    (plain**2).sum().backward()
    try:
        if type(got) is not dict or ("error" not in got and set(got) != {"op", "value", "grads"}):
            raise AssertionError(f"the driver returned something malformed: {got!r:.200}")
        if "error" in got:
            raise AssertionError(f"it raised {got['error']}")
        if got["op"] != "checkpoint":
            raise AssertionError(f"its result is made by op {got['op']!r:.60}, not by one 'checkpoint' node")
        check_array(got["value"], plain.data, "its value")
        check_same_grads(got["grads"], grads_of(leaves), "its gradients")
    except AssertionError as problem:
        raise AssertionError(
            f"{what}: your checkpoint is wrong, which checkpoint_sequential runs on every segment but the last: "
            f"checkpoint(first segment, x) alone fails ({str(problem)[:400]}). Fix checkpoint first (its tests above "
            f"say how); checkpoint_sequential itself may be right."
        ) from None


def check_sequential_gradients(got, case, what):
    try:
        compare_sequential_gradients(got, case, what)
    except AssertionError:
        blame_checkpoint(case, what)
        raise


def compare_sequential_gradients(got, case, what):
    layers, segments, inp, leaves = sequential_case(case)
    plain = nn.Sequential(*layers)(inp)
    (plain**2).sum().backward()
    if type(got) is dict and set(got) == {"error"}:
        raise AssertionError(f"{what}: checkpoint_sequential raised {got['error']}")
    if type(got) is not dict or set(got) != {"value", "grads"}:
        raise AssertionError(f"{what}: the driver returned something malformed: {got!r:.200}")
    check_array(got["value"], plain.data, f"{what}: checkpoint_sequential's value")
    check_same_grads(got["grads"], grads_of(leaves), f"{what}: checkpoint_sequential vs plain gradients")


def sequential_segments(n_layers, segments):
    """Driver: your checkpoint_sequential(widening_chain(n_layers), segments, x): "ValueError" if it raised
    one, else the input widths of its checkpoint nodes."""
    try:
        out = checkpoint_sequential(widening_chain(n_layers), segments, mg.tensor(np.ones((1, 2)), requires_grad=True))
    except ValueError:
        return "ValueError"
    return checkpoint_inputs(out)


# %% nbgrader={"grade": true, "grade_id": "test_checkpoint_sequential_boundaries", "locked": true, "points": 3, "schema_version": 3, "solution": false}
for n_layers, segments in [(6, 3), (7, 3), (5, 1)]:
    check_boundaries(drive(sequential_boundaries, n_layers, segments, False, 2), n_layers, segments, 2)
print("checkpoint_sequential: segment boundaries are right")
### BEGIN HIDDEN TESTS
for n_layers, segments in [(10, 4), (9, 9), (8, 3), (13, 5), (4, 2)]:  # the layers as one nn.Sequential
    check_boundaries(drive(sequential_boundaries, n_layers, segments, True, 1), n_layers, segments, 1, "an nn.Sequential")
# A generator of layers can be walked only once.
check_boundaries(drive(sequential_boundaries, 6, 3, "generator", 2), 6, 3, 2, "a generator")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_checkpoint_sequential_gradients", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# 7 widening Linear+tanh layers in 3 segments; the loss is (out ** 2).sum().
check_sequential_gradients(drive(sequential_gradients, "widening"), "widening", "7 layers in 3 segments")
print("checkpoint_sequential: gradients agree")
### BEGIN HIDDEN TESTS
check_sequential_gradients(drive(sequential_gradients, "dropout"), "dropout", "checkpoint_sequential with dropout inside")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_checkpoint_sequential_checks_segments", "locked": true, "points": 1, "schema_version": 3, "solution": false}
for bad in (0, 5):
    got = drive(sequential_segments, 4, bad)
    if got != "ValueError":
        raise AssertionError(f"checkpoint_sequential(4 layers, segments={bad}) should raise ValueError")
assert_equal(drive(sequential_segments, 4, 1), [], "checkpoint nodes with 1 segment")
print("checkpoint_sequential: rejects impossible segment counts")

# %% [markdown]
# ### Memory over time, again
#
# The same 16 blocks with 4 segments. Left of the orange dotted line, the forward pass climbs only while a segment
# runs (its graph is recorded once, to find its parameters, and dropped), and the segment inputs stay: the troughs
# rise by one activation per segment. The last segment is not checkpointed, so its whole graph is alive when
# backward starts — the peak: 3 kept segment inputs, $3 \times 4$ activations of the last segment and the loss's
# input. Then the backward pass rebuilds one segment at a time: a saw-tooth whose teeth are $\sqrt{N} = 4$ times
# smaller than the plain triangle, for more events (each rebuilt activation is saved and freed once more).

# %%
with uses_your("checkpoint_sequential", "checkpoint"):
    with track_saved_bytes() as checkpointed_run:
        loss = (checkpoint_sequential(chain16, 4, batch) ** 2).mean()
        checkpointed_backward_starts = len(checkpointed_run.history)
        loss.backward()

    plt.figure(figsize=(7, 3.2))
    for run, starts, label, color in [(plain_tracker, plain_backward_starts, "plain", "C0"),
                                      (checkpointed_run, checkpointed_backward_starts, "4 segments", "C1")]:
        plt.plot(np.array(run.history) / ACTIVATION, drawstyle="steps-post", color=color,
                 label=f"{label} (peak {run.peak / ACTIVATION:.0f})")
        plt.axvline(starts, color=color, ls=":", lw=1)
    plt.plot([], [], color="grey", ls=":", lw=1, label="backward starts")
    plt.xlabel("events (an activation saved or freed)"); plt.ylabel("live activations (B×w arrays)")
    plt.title("16 blocks: saved activations over forward + backward"); plt.legend(); plt.show()

# %% [markdown]
# ## 6. Measured: memory and time against depth
#
# Three strategies, on chains of $N$ blocks: no checkpointing (`segments=1`), every block its own segment
# (`segments=N`) and $\sqrt{N}$ segments. For each we record the **peak** saved activations over a full
# forward+backward step, and the step's time: the fastest of seven runs in CPU time, the configurations taking
# turns (on a shared machine, noise only adds time, and a burst of load should hit every configuration alike).

# %%
with uses_your("checkpoint_sequential", "checkpoint"):
    def train_step(blocks, segments):
        for block in blocks:
            block.zero_grad()
        out = checkpoint_sequential(blocks, segments, batch)
        (out * out).mean().backward()


    def peak_saved(blocks, segments):
        # The peak of saved activations over one training step, in B×w arrays.
        with track_saved_bytes() as tracker:
            train_step(blocks, segments)
        return tracker.peak / ACTIVATION


    def forward_only(blocks):
        # The forward pass alone, recording nothing: what recomputing the layers costs at the least.
        with mg.no_grad():
            nn.Sequential(*blocks)(batch)


    def fastest_times(steps, rounds=15):
        # CPU seconds of each function in `steps`: the fastest of `rounds` runs, by minigrad.testing's
        # interleaved_times (CPU time, so that waiting on a busy machine does not count; the garbage collector
        # paused; one BLAS thread; the functions taking turns, so that a burst of load hits all of them).
        contenders = dict(enumerate(steps))
        best = np.full(len(steps), np.inf)
        for _ in tqdm(range(rounds), desc="timing rounds"):
            for i, seconds in interleaved_times(contenders, repeat=1).items():
                best[i] = min(best[i], seconds)
        return best


    depths = [4, 9, 16, 36, 64]
    strategies = {"none": lambda n: 1, "every block": lambda n: n, "√N segments": lambda n: round(np.sqrt(n))}
    chains = {n: relu_blocks(n) for n in depths}
    runs = [(chains[n], segments(n)) for segments in strategies.values() for n in depths]
    peaks = np.array([peak_saved(*run) for run in runs]).reshape(len(strategies), len(depths))
    measured = fastest_times([lambda run=run: train_step(*run) for run in runs] + [lambda: forward_only(chains[depths[-1]])])
    times, forward_time = measured[:-1].reshape(len(strategies), len(depths)), measured[-1]

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    for name, peak, seconds in zip(strategies, peaks, times):
        left.plot(depths, peak, "o-", label=name)
        right.plot(depths, seconds * 1e3, "o-", label=name)
    n = np.array(depths)
    left.plot(n, 1.5 * n, ":", color="grey", lw=1, label="guide ∝ N (slope 1)")
    left.plot(n, 2.5 * np.sqrt(n), "--", color="grey", lw=1, label="guide ∝ √N (slope 1/2)")
    left.set(xscale="log", yscale="log", xlabel="depth N", ylabel="peak saved activations", title="memory: O(N) against O(√N)")
    left.set_xticks(depths, [str(d) for d in depths]); left.minorticks_off()
    right.set(xlabel="depth N", ylabel="forward + backward (CPU ms)", title="time: at most one extra forward")
    left.legend(fontsize=8); right.legend(); plt.show()
    share = forward_time / times[0, -1]
    print(f"N = {depths[-1]}: a forward pass alone (recording nothing) takes {share:.0%} of a plain training step")
    for name, seconds in list(zip(strategies, times))[1:]:
        print(f"{name:>12}: time against none: " + ", ".join(f"N={n}: {t / t0 - 1:+.0%}" for n, t, t0 in zip(depths, seconds, times[0])))
    k = round(np.sqrt(depths[-1]))
    print(f"recomputation floor for √N = {k} segments at N = {depths[-1]}: (1 - 1/{k}) × {share:.0%} = {(1 - 1 / k) * share:+.0%}")

# %% [markdown]
# Checkpointing every block still keeps one activation per block — a third of the plain figure, but still $O(N)$
# (slope 1 on the log-log plot); $\sqrt{N}$ segments keep $O(\sqrt{N})$ (slope 1/2).
#
# In time, $k$ segments pay one more forward pass of every layer outside the last segment: a share $1 - 1/k$ of
# the layers. A forward pass that records nothing takes about a quarter of a plain training step here (printed
# above), so recomputation alone sets a floor of $(1 - 1/k)$ times that share — about 20% for $k = 8$ at $N = 64$.
# The measured cost of $\sqrt{N}$ segments is about +35–50% (printed above; it varies with the depth and from run
# to run), and at $N = 64$ it lies at or above that floor: the recomputation also records a graph, and every
# checkpoint has a fixed cost. On a
# busy machine these percentages move by ten points or so from run to run; what stays is the order of the three
# curves. Checkpointing every block recomputes hardly more, yet costs far more (the orange curve): each checkpoint also pays a fixed cost (saving and restoring
# numpy's random state, starting an inner backward pass), and with blocks this small ($64 \times 128$) that is
# comparable to the block's own forward pass — paid $N - 1$ times. With large layers the matrix products
# dominate: `benchmarks/bench_checkpoint.py` measures width 512 and batch 256 side by side with
# `torch.utils.checkpoint`, and both land at 20–35%, near the floor set by the matrix products alone (one product
# per recomputed layer against three per layer in a plain step: 25–31% for $N$ from 16 to 256).
#
# ## 7. The trade-off curve
#
# Now fix the depth and vary the number of segments. The memory model $M(k) = (k - 1) + 3N/k + 1$ activations
# (the boundaries, one rebuilt segment, the output) predicts the measured peaks closely, with its minimum near
# $\sqrt{3N} \approx 14$. The time grows with $k$ for two reasons: the share of layers recomputed is $1 - 1/k$
# (the last segment is never rebuilt: half of the layers at $k = 2$, seven eighths at $k = 8$), and the fixed cost
# per checkpoint takes over as $k$ approaches $N$. The first cut, from $k = 1$ to $k = 2$, costs the most time; each
# further doubling up to the memory optimum adds less (about ten points here, about as much as the run-to-run noise
# of a busy machine), while memory falls fast (193, 98, 52, 32 activations for $k$ = 1, 2, 4, 8). Past the
# optimum, more segments cost both more memory and more time, most at $k = N$ — which is why $k \approx \sqrt{N}$ is
# the usual choice.

# %%
with uses_your("checkpoint_sequential", "checkpoint"):
    from matplotlib.colors import LogNorm

    N = 64
    chain64 = relu_blocks(N)
    counts = [1, 2, 4, 8, 12, 16, 24, 32, 64]
    peaks = np.array([peak_saved(chain64, k) for k in counts])
    times = fastest_times([lambda k=k: train_step(chain64, k) for k in counts])

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    k = np.arange(1, N + 1)
    left.plot(k, (k - 1) + 3 * N / k + 1, "-", color="grey", label="model (k-1) + 3N/k + 1")
    left.plot(counts, peaks, "o", label="measured")
    left.axvline(np.sqrt(3 * N), ls=":", color="k", label=r"$\sqrt{3N}$")
    left.set(xscale="log", xlabel="segments k", ylabel="peak saved activations", title=f"N = {N} blocks")
    left.set_xticks([1, 2, 4, 8, 16, 32, 64], ["1", "2", "4", "8", "16", "32", "64"]); left.minorticks_off()
    left.legend(loc="upper right", fontsize=8)
    right.plot(times * 1e3, peaks, "-", color="lightgrey", zorder=1)
    points = right.scatter(times * 1e3, peaks, c=counts, cmap="viridis", norm=LogNorm(), zorder=2)
    ticks = [1, 2, 4, 8, 16, 32, 64]
    fig.colorbar(points, ax=right, label="segments k", ticks=ticks, format="%d")
    right.set(xlabel="forward + backward (CPU ms)", ylabel="peak saved activations", title="memory against time")
    plt.show()
    print("time against k = 1:", ", ".join(f"k={c}: {t / times[0] - 1:+.0%}" for c, t in zip(counts, times)))

# %% [markdown]
# ## Summary
#
# * The backward pass reads values the forward pass computed, so a graph keeps every non-leaf input of every
#   operation until backward passes it: $O(N)$ memory in the depth, all of it alive when backward starts.
#   `saved_bytes` counts it (buffers, not tensors: views share memory).
# * `checkpoint(fn, *args)` is one graph node, an `mg.Function` whose backward re-runs `fn`: it keeps `fn`'s inputs only, must treat the
#   parameters `fn` closes over as inputs, must replay `fn`'s random numbers, and records the recomputation
#   with grad enabled.
# * Cutting $N$ layers into $k$ segments costs memory $\approx bk + aN/k$, minimal at $k \propto \sqrt{N}$:
#   $O(\sqrt{N})$ memory for at most one extra forward pass: here up to about +50% time, most of it the
#   recomputation of a share $1 - 1/k$ of the layers. More segments cost a little more
#   time (a share $1 - 1/k$ of the layers is recomputed, and each checkpoint has a fixed cost); the memory falls
#   fast up to $k \approx \sqrt{3N}$ and rises beyond.
#
# ## References
#
# * T. Chen, B. Xu, C. Zhang, C. Guestrin. *Training Deep Nets with Sublinear Memory Cost.* arXiv:1604.06174, 2016.
# * A. Griewank, A. Walther. *Algorithm 799: Revolve: An Implementation of Checkpointing for the Reverse or
#   Adjoint Mode of Computational Differentiation.* ACM Transactions on Mathematical Software 26(1), 2000.
# * A. Griewank, A. Walther. *Evaluating Derivatives: Principles and Techniques of Algorithmic Differentiation*,
#   2nd ed. SIAM, 2008 (chapter 12: reversal schedules and checkpointing).
# * A. G. Baydin, B. A. Pearlmutter, A. A. Radul, J. M. Siskind. *Automatic Differentiation in Machine Learning:
#   a Survey.* JMLR 18(153), 2018.
# * PyTorch documentation: `torch.utils.checkpoint`.
