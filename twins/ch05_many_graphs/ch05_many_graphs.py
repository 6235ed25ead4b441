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
# # Chapter 5 — Training systems of graphs
#
# Until now one training step meant one graph: data and parameters in, a loss out, one backward pass, one update.
# Many of the most interesting models are instead **systems** of graphs that feed each other:
#
# * a **generative adversarial network** trains two networks against each other: the generator's output is the
#   discriminator's input, and each is updated in turn while the other stays fixed;
# * in **multi-agent learning with differentiable communication**, one agent's message is another agent's input,
#   and the listener's mistakes are what teach the speaker to speak;
# * a **diffusion model** or a **neural ODE** applies the same small network hundreds of times inside a numerical
#   solver, and training differentiates through the whole unrolled process.
#
# The article this course follows (the MachineLearning wiki's «Граф вычислений», *Computational graph*: see the
# references) lists exactly these architectures as the places where computational graphs stop
# being a single forward/backward pass. The engine itself needs nothing new — whatever we build, backward sees one
# DAG — but *what we record, what we freeze and what we cut* decides who learns from whom. In this chapter you will
#
# 1. compare the three switches — training, **freezing** (`requires_grad=False`) and **cutting** (`detach`,
#    `no_grad`) — by the gradients they let through and the backward work they cost;
# 2. implement **`discriminator_step`** and **`generator_step`** and train a GAN on a one-dimensional distribution;
# 3. implement **`communication_loss`** and watch a speaker and a listener invent a code — and fail to, once the
#    gradient through the message is cut;
# 4. implement **`euler_solve`**, fit the parameters of a predator–prey ODE *through* the solver, and measure how
#    the memory kept for the backward pass grows with the number of steps;
# 5. train a small **diffusion model**, sample from it by the reverse stochastic process and by the probability-flow
#    ODE (your `euler_solve`, integrating backwards in time), and take a gradient *through* the 100-step sampler — with
#    and without checkpointing it.
#
# As in every chapter, `minigrad` is the finished reference library ([chapter 1](../ch01_graph/ch01_graph.ipynb#reference-library)
# says why); the graded functions are yours, and the experiments plug them into it. Demonstrations that run your functions
# say so, instead of stopping, while those functions are not written yet.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib
import time

import numpy as np
import matplotlib.pyplot as plt
from tqdm.auto import tqdm

import minigrad as mg
from minigrad import Tensor
from minigrad.autograd import count_vjps
from minigrad.memory import track_saved_bytes
from minigrad.nn import binary_cross_entropy_with_logits, cross_entropy
from minigrad.testing import assert_close, assert_equal, drive, interleaved_times
from threadpoolctl import threadpool_limits

threadpool_limits(1, user_api="blas")  # small matrices: one BLAS thread is the fastest, and steady on a busy machine

@contextlib.contextmanager
def runs_your(*names):
    """Around a demonstration that runs your functions: until they work, it says so instead of stopping Run All."""
    try:
        yield
    except Exception as error:
        print(f"This demonstration runs your {', '.join(names)}; it stopped with {type(error).__name__}: {error}\n"
              f"Write (or fix) the function it names above, then run this cell again.")



# %% [markdown]
# ## 1. Train, freeze or cut
#
# Take two modules in a row, $x \to A \to B \to$ loss, and look at the three things we can do to each edge of the
# system:
#
# * **train**: every parameter requires grad; the backward pass visits every operation and every parameter gets a
#   gradient;
# * **freeze** a module (`module.requires_grad_(False)`): its parameters are constants. Gradients still flow
#   *through* its operations to whatever lies below, but its weights collect no `.grad` — and if nothing below
#   requires grad either, its operations record no nodes at all and cost nothing in backward;
# * **cut** an edge (`h.detach()`, or computing `h` inside `with mg.no_grad():`): the tensor becomes a leaf, and
#   backward stops there; nothing below it learns from this loss.
#
# We count the VJP rules each backward pass evaluates with `minigrad.autograd.count_vjps()`, and also the adjoints
# computed for inputs that did not need one and were thrown away (`discarded`).

# %%
rng = np.random.default_rng(0)
A, B = mg.nn.MLP([4, 32, 32], rng=rng), mg.nn.MLP([32, 32, 1], rng=rng)
x = mg.tensor(rng.standard_normal((64, 4)))


def backward_through(frozen=(), cut=False):
    for module in (A, B):
        module.zero_grad()
        module.requires_grad_(module not in frozen)
    with count_vjps() as counter:
        h = A(x)
        B(h.detach() if cut else h).sum().backward()
    got_grads = {name: all(p.grad is not None for p in m.parameters()) for name, m in (("A", A), ("B", B))}
    return counter, got_grads


setups = {
    "train both": {},
    "freeze B (the GAN generator step)": {"frozen": (B,)},
    "freeze A (fine-tuning a head)": {"frozen": (A,)},
    "cut between (the GAN discriminator step)": {"cut": True},
}
print(f"{'':42s} {'VJPs':>5s} {'discarded':>10s}   A gets .grad   B gets .grad")
for name, options in setups.items():
    counter, got = backward_through(**options)
    print(f"{name:42s} {counter.vjps:5d} {counter.discarded:10d}   {got['A']!s:12s}   {got['B']!s:12s}")
for module in (A, B):
    module.requires_grad_(True)


# %% [markdown]
# Reading the table:
#
# * **Freezing A** removes A's whole subgraph: none of A's inputs requires grad, so its operations recorded no
#   nodes, and backward has fewer VJPs to run. This is why fine-tuning only the top of a large pretrained network is
#   cheap.
# * **Freezing B** leaves the VJP count unchanged: every operation of B must still pass the gradient on to A. What
#   it saves is the *weight* adjoints. `matmul`'s rule skips the product $X^\top \bar Y$ when the weight needs no
#   gradient (PyTorch's rules do the same with `needs_input_grad`) — that product costs as much as the one that is
#   kept. Elementwise rules do not bother: `add` returns its adjoint for the frozen bias too, and the engine drops it
#   (the `discarded` column). A cheap array copy is not worth a special case; a matrix product is.
# * **Cutting** stops backward at the cut: A is never visited, whatever its parameters say.
#
# GANs use both tools, one per step.
#
# ## 2. Generative adversarial networks
#
# A GAN (Goodfellow et al. 2014) learns to sample from a data distribution $p_{\text{data}}$ without ever writing
# down a density. A **generator** $G_\theta$ maps noise $z \sim \mathcal N(0, I)$ to a sample $G_\theta(z)$; a
# **discriminator** $D_\phi$ maps a sample to a logit, the log-odds that it is real. They play a two-player game:
#
# $$
# \min_\theta \max_\phi \; \mathbb E_{x \sim p_{\text{data}}}\big[\log \sigma(D_\phi(x))\big]
#  + \mathbb E_{z}\big[\log\big(1 - \sigma(D_\phi(G_\theta(z)))\big)\big] .
# $$
#
# Training alternates two steps, each a different graph over the same two networks:
#
# * **discriminator step**: minimise the binary cross-entropy of $D$ on a batch of real samples (label 1) plus that
#   on a batch of generated samples (label 0). The generated samples are *data* for this step: compute them inside
#   `mg.no_grad()` so that no gradient reaches $G$, and no graph of $G$ is even recorded;
# * **generator step**: minimise $-\log \sigma(D(G(z)))$, the binary cross-entropy of $D(G(z))$ against the label
#   1. (This is the *non-saturating* loss that Goodfellow et al. recommend: $\log(1 - \sigma(D(G(z))))$ has
#   vanishing gradients exactly when $G$ is bad and $D$ confident, early in training.) The gradient must flow
#   **through** $D$ to reach $G$ — but $D$'s parameters must not collect it: **freeze** $D$ for the step
#   (`requires_grad_(False)`) and make it trainable again afterwards. Forgetting to freeze is a classic bug: the
#   generator's gradient stays in $D$'s `.grad` and, unless every step is careful to zero it, leaks into the next
#   discriminator update with the wrong sign.
#
# The two functions receive the networks (`minigrad.nn` modules: calling one on a batch of shape `(batch, in)`
# gives `(batch, out)`), the optimizer of the network they update, and the batches as tensors. Each zeroes its
# optimizer's gradients, computes its loss with `binary_cross_entropy_with_logits(logits, targets)` (a target
# tensor of ones or zeros shaped like the logits), backpropagates, steps, and returns the loss as a float.

# %% nbgrader={"grade": false, "grade_id": "discriminator_step", "locked": false, "schema_version": 3, "solution": true}
def discriminator_step(generator, discriminator, optimizer, real, z):
    """One update of the discriminator; returns its loss as a float.

    real: Tensor (batch, dim) of data samples; z: Tensor (batch', noise_dim) of noise.
    Loss: mean BCE-with-logits of discriminator(real) against 1, plus that of
    discriminator(generator(z)) against 0. The generator is only run forward (no gradient and no
    graph for it); `optimizer` holds the discriminator's parameters.
    """
    ### BEGIN SOLUTION
    optimizer.zero_grad()
    with mg.no_grad():
        fake = generator(z)
    real_logits, fake_logits = discriminator(real), discriminator(fake)
    loss = binary_cross_entropy_with_logits(real_logits, Tensor(np.ones(real_logits.shape))) + \
        binary_cross_entropy_with_logits(fake_logits, Tensor(np.zeros(fake_logits.shape)))
    loss.backward()
    optimizer.step()
    return loss.item()
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "generator_step", "locked": false, "schema_version": 3, "solution": true}
def generator_step(generator, discriminator, optimizer, z):
    """One update of the generator; returns its loss as a float.

    z: Tensor (batch, noise_dim) of noise. Loss: mean BCE-with-logits of discriminator(generator(z))
    against 1 (non-saturating). The discriminator is frozen (requires_grad False) during the step,
    so it collects no .grad, and is trainable again afterwards; `optimizer` holds the generator's
    parameters.
    """
    ### BEGIN SOLUTION
    optimizer.zero_grad()
    discriminator.requires_grad_(False)
    try:
        logits = discriminator(generator(z))
        loss = binary_cross_entropy_with_logits(logits, Tensor(np.ones(logits.shape)))
        loss.backward()
    finally:
        discriminator.requires_grad_(True)
    optimizer.step()
    return loss.item()
    ### END SOLUTION


# %% [markdown]
# The tests compare your updates with gradients computed a completely different way: the same networks written in
# numpy and differentiated by central differences, $\partial L / \partial w_i \approx
# \big(L(w + \epsilon e_i) - L(w - \epsilon e_i)\big) / 2\epsilon$ (chapter 3), on networks small enough for that.

# %% nbgrader={"grade": false, "grade_id": "helpers_numpy_references", "locked": true, "schema_version": 3, "solution": false}
# How the tests work: a *driver* (a function marked "Driver") builds the networks and batches itself from a seed,
# calls your function and returns what came back as plain data: numbers and arrays (parameters, gradients), never
# tensors or modules; `drive(driver, ...)` runs it. The test then builds the same networks from the same seed and
# computes what should have happened its own way (numpy and central differences, or the reference library). When
# your notebook is graded, drivers run beside your code and the tests in a separate process.
from minigrad.examples.gan import discriminator_step as library_discriminator_step
from minigrad.examples.gan import generator_step as library_generator_step


def arrays_of(module):
    """Copies of a module's parameter arrays, in parameters() order."""
    return [p.data.copy() for p in module.parameters()]


def numpy_mlp(arrays, x, final=None):
    """The forward pass of minigrad.nn.MLP (tanh between layers) in plain numpy, from its parameter arrays."""
    for i in range(0, len(arrays), 2):
        x = x @ arrays[i] + arrays[i + 1]
        if i + 2 < len(arrays):
            x = np.tanh(x)
    return np.tanh(x) if final == "tanh" else x


def bce_logits(logits, label):
    """Mean binary cross-entropy of sigmoid(logits) against a constant label 0 or 1, stably."""
    return np.mean(np.logaddexp(0.0, -logits if label == 1 else logits))


def numpy_cross_entropy(logits, targets):
    log_probs = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
    return -np.mean(log_probs[np.arange(len(targets)), targets])


def numerical_gradients(loss, arrays, eps=1e-6):
    """Central differences of loss(arrays) with respect to every element of every array."""
    arrays = [a.copy() for a in arrays]
    grads = []
    for a in arrays:
        grad = np.zeros_like(a)
        for index in np.ndindex(a.shape):
            saved = a[index]
            a[index] = saved + eps
            up = loss(arrays)
            a[index] = saved - eps
            down = loss(arrays)
            a[index] = saved
            grad[index] = (up - down) / (2 * eps)
        grads.append(grad)
    return grads


def gan_setup(seed, generator_sizes=(2, 6, 1), batch=8):
    """A small generator and discriminator (minigrad.nn.MLP) and batches of real data and noise."""
    rng = np.random.default_rng(seed)
    generator = mg.nn.MLP(list(generator_sizes), rng=rng)
    discriminator = mg.nn.MLP([1, 5, 1], rng=rng)
    real = rng.normal(2.0, 0.5, (batch, 1))
    z = rng.standard_normal((batch + 2, generator_sizes[0]))
    return generator, discriminator, real, z


def reference_discriminator_loss(g_arrays, d_arrays, real, z):
    fake = numpy_mlp(g_arrays, z)
    return bce_logits(numpy_mlp(d_arrays, real), 1) + bce_logits(numpy_mlp(d_arrays, fake), 0)


def reference_generator_loss(g_arrays, d_arrays, z):
    return bce_logits(numpy_mlp(d_arrays, numpy_mlp(g_arrays, z)), 1)


def described(value):
    return f"{type(value).__name__} {repr(value)[:80]}"


def grad_data(grad):
    """A .grad as plain data: its array, None, or a description of anything else."""
    if grad is None:
        return None
    return np.array(grad.data, dtype=np.float64) if isinstance(grad, Tensor) else described(grad)


def parameter_data(module):
    """Each parameter of a module as plain data: its array, its .grad and whether it requires grad."""
    return [{"data": np.array(p.data, dtype=np.float64), "grad": grad_data(p.grad), "requires_grad": p.requires_grad is True}
            for p in module.parameters()]


def float_data(value):
    return float(value) if isinstance(value, float) else described(value)


def with_stale_grads(module, value):
    for p in module.parameters():
        p.grad = Tensor(np.full(p.shape, value))


def discriminator_stepped(seed, lr, stale=None, generator_sizes=(2, 6, 1), batch=8):
    """Driver: your discriminator_step on gan_setup(seed, generator_sizes, batch) with SGD(lr) on the discriminator
    (whose .grad is first filled with `stale` when given); the loss it returned, both modules' parameters after."""
    generator, discriminator, real, z = gan_setup(seed, generator_sizes, batch)
    if stale is not None:
        with_stale_grads(discriminator, stale)
    loss = discriminator_step(generator, discriminator, mg.optim.SGD(discriminator.parameters(), lr=lr), Tensor(real), Tensor(z))
    return {"loss": float_data(loss), "generator": parameter_data(generator), "discriminator": parameter_data(discriminator)}


def generator_stepped(seed, lr, stale=None, generator_sizes=(2, 6, 1), batch=8):
    """Driver: your generator_step on gan_setup(seed, generator_sizes, batch) with SGD(lr) on the generator (whose
    .grad is first filled with `stale` when given); the loss it returned, both modules' parameters after."""
    generator, discriminator, real, z = gan_setup(seed, generator_sizes, batch)
    if stale is not None:
        with_stale_grads(generator, stale)
    loss = generator_step(generator, discriminator, mg.optim.SGD(generator.parameters(), lr=lr), Tensor(z))
    return {"loss": float_data(loss), "generator": parameter_data(generator), "discriminator": parameter_data(discriminator)}


def generator_steps_alternated(seed, rounds):
    """Driver: `rounds` times your generator_step then the library's discriminator step (SGD, lr 0.1, each) on
    gan_setup(seed); both modules' parameters after every step."""
    generator, discriminator, real, z = gan_setup(seed)
    g_opt, d_opt = mg.optim.SGD(generator.parameters(), lr=0.1), mg.optim.SGD(discriminator.parameters(), lr=0.1)
    history = []
    for _ in range(rounds):
        generator_step(generator, discriminator, g_opt, Tensor(z))
        history.append({"generator": parameter_data(generator), "discriminator": parameter_data(discriminator)})
        library_discriminator_step(generator, discriminator, d_opt, Tensor(real), Tensor(z))
        history.append({"generator": parameter_data(generator), "discriminator": parameter_data(discriminator)})
    return history


class CostlyGenerator(mg.nn.Module):
    """A generator that is cheap to run and costly to differentiate: a small MLP plus `reads` lookups in a table of
    `entries` parameters. A lookup costs next to nothing forward, but its VJP scatters into a zero array as large as
    the whole table, so a backward pass through this generator costs reads × entries. The table starts at zero: what
    it holds changes no cost, and drawing 10 million random numbers took longer than the whole honest step."""

    def __init__(self, rng, entries=10_000_000, reads=20_000, noise_dim=2, batch=10):
        self.net = mg.nn.MLP([noise_dim, 6, 1], rng=rng)
        self.table = mg.nn.Parameter(np.zeros(entries))
        self.index = rng.integers(0, entries, (batch, 1))
        self.reads = reads

    def forward(self, z):
        out = self.net(z)
        for _ in range(self.reads):
            out = out + self.table[self.index]
        return out


def costly_gan_setup(seed):
    rng = np.random.default_rng(seed)
    generator = CostlyGenerator(rng)
    discriminator = mg.nn.MLP([1, 5, 1], rng=rng)
    return generator, discriminator, rng.normal(2.0, 0.5, (8, 1)), rng.standard_normal((10, 2))


def discriminator_stepped_costly(seed, lr):
    """Driver: your discriminator_step (SGD(lr) on the discriminator) with costly_gan_setup(seed)'s generator;
    the loss it returned and the discriminator's parameters after (the table is too large to send)."""
    generator, discriminator, real, z = costly_gan_setup(seed)
    loss = discriminator_step(generator, discriminator, mg.optim.SGD(discriminator.parameters(), lr=lr), Tensor(real), Tensor(z))
    return {"loss": float_data(loss), "discriminator": parameter_data(discriminator)}


def step_loss(got, what):
    """The loss from a stepped driver's result, checked to be a float."""
    if not (isinstance(got, dict) and "loss" in got):
        raise AssertionError(f"{what}: expected the step's facts, got {got!r:.200}")
    loss = got["loss"]
    assert isinstance(loss, float), f"{what} should return the loss as a float, got {loss}"
    return loss


def parameters_of(got, key, like, what):
    """got[key] (parameter_data of a module), checked against the arrays `like` of the same module: one entry per
    parameter, each with a float64 array of the right shape, a .grad (array or None) and a requires_grad flag."""
    params = got.get(key) if isinstance(got, dict) else None
    if not (isinstance(params, list) and len(params) == len(like)):
        raise AssertionError(f"{what}: expected the {len(like)} parameters of the {key}, got {params!r:.200}")
    for i, (p, start) in enumerate(zip(params, like)):
        if not (isinstance(p, dict) and set(p) == {"data", "grad", "requires_grad"} and isinstance(p["data"], np.ndarray)
                and p["data"].dtype == np.float64 and p["data"].shape == start.shape and type(p["requires_grad"]) is bool
                and (p["grad"] is None or isinstance(p["grad"], (np.ndarray, str)))):
            raise AssertionError(f"{what}: {key} parameter {i} is not a parameter of shape {start.shape}: {p!r:.200}")
    return params


def check_step(after, before, lr, expected_grads, what):
    """The SGD step the parameters took, (before - after) / lr, must equal the expected gradients."""
    for i, (p, start, grad) in enumerate(zip(after, before, expected_grads)):
        assert_close((start - p["data"]) / lr, grad, f"{what}: step taken by parameter {i}, (before - after) / lr",
                     rtol=1e-5, atol=1e-7)


# %% nbgrader={"grade": true, "grade_id": "test_discriminator_step_update", "locked": true, "points": 3, "schema_version": 3, "solution": false}
got = drive(discriminator_stepped, 0, 0.1)
generator, discriminator, real, z = gan_setup(0)  # the same networks and batches, built here from the same seed
g0, d0 = arrays_of(generator), arrays_of(discriminator)
loss = step_loss(got, "discriminator_step")
assert_close(loss, reference_discriminator_loss(g0, d0, real, z), "discriminator loss (BCE on real vs 1 + BCE on fake vs 0)")
expected = numerical_gradients(lambda arrays: reference_discriminator_loss(g0, arrays, real, z), d0)
check_step(parameters_of(got, "discriminator", d0, "discriminator_step"), d0, 0.1, expected, "discriminator_step")
print("discriminator_step: loss and update agree with central differences")
### BEGIN HIDDEN TESTS
# a stale gradient left in the discriminator must not leak into the update
got = drive(discriminator_stepped, 1, 0.05, 7.0, (2, 6, 1), 5)
generator, discriminator, real, z = gan_setup(1, batch=5)
g0, d0 = arrays_of(generator), arrays_of(discriminator)
expected = numerical_gradients(lambda arrays: reference_discriminator_loss(g0, arrays, real, z), d0)
check_step(parameters_of(got, "discriminator", d0, "discriminator_step after a stale .grad"), d0, 0.05, expected,
           "discriminator_step after a stale .grad")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_discriminator_step_generator_untouched", "locked": true, "points": 2, "schema_version": 3, "solution": false}
got = drive(discriminator_stepped, 2, 0.1)
generator, _, _, _ = gan_setup(2)
g0 = arrays_of(generator)
for i, (p, start) in enumerate(zip(parameters_of(got, "generator", g0, "discriminator_step"), g0)):
    assert p["grad"] is None, (f"generator parameter {i} received a gradient in the discriminator step: the generated "
                               f"samples must be computed under mg.no_grad() (or detached)")
    assert_close(p["data"], start, f"generator parameter {i} after the discriminator step (unchanged)")
print("discriminator_step: the generator got no gradient and did not move")
### BEGIN HIDDEN TESTS
for i, p in enumerate(got["generator"]):
    assert p["requires_grad"] is True, (f"generator parameter {i} is frozen after discriminator_step: the generator "
                                        f"must stay trainable for the next generator step")
# No backward work in the generator. This one is cheap to run but costly to differentiate: it reads 20,000 times
# from a table of 10 million parameters, and each read's VJP fills an array as large as the table. Run forward
# only, the step takes well under a second; a backward pass through it takes minutes (15-30 ms a read).
try:
    got = drive(discriminator_stepped_costly, 3, 0.1, seconds=10)
except TimeoutError:
    raise AssertionError(
        "discriminator_step did not finish within 10 s with a generator that is cheap to run but costly to "
        "differentiate: no backward pass may run through the generator (compute the fake samples under "
        "mg.no_grad(), or detach them)"
    ) from None
generator, discriminator, real, z = costly_gan_setup(3)  # the reference: the library's step on the same networks
d0 = arrays_of(discriminator)
want = library_discriminator_step(generator, discriminator, mg.optim.SGD(discriminator.parameters(), lr=0.1), Tensor(real), Tensor(z))
assert_close(step_loss(got, "discriminator_step"), want, "discriminator loss with the costly generator")
for i, (p, expected) in enumerate(zip(parameters_of(got, "discriminator", d0, "discriminator_step"), arrays_of(discriminator))):
    assert_close(p["data"], expected, f"discriminator parameter {i} after a step with the costly generator", rtol=1e-7, atol=1e-9)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_generator_step_update", "locked": true, "points": 3, "schema_version": 3, "solution": false}
got = drive(generator_stepped, 4, 0.1)
generator, discriminator, real, z = gan_setup(4)  # the same networks and batches, built here from the same seed
g0, d0 = arrays_of(generator), arrays_of(discriminator)
loss = step_loss(got, "generator_step")
assert_close(loss, reference_generator_loss(g0, d0, z), "generator loss (BCE of D(G(z)) against 1)")
expected = numerical_gradients(lambda arrays: reference_generator_loss(arrays, d0, z), g0)
check_step(parameters_of(got, "generator", g0, "generator_step"), g0, 0.1, expected, "generator_step")
print("generator_step: loss and update agree with central differences")
### BEGIN HIDDEN TESTS
got = drive(generator_stepped, 5, 0.2, -3.0, (3, 4, 4, 1), 6)
generator, discriminator, real, z = gan_setup(5, generator_sizes=(3, 4, 4, 1), batch=6)
g0, d0 = arrays_of(generator), arrays_of(discriminator)
expected = numerical_gradients(lambda arrays: reference_generator_loss(arrays, d0, z), g0)
what = "generator_step (deeper generator, stale .grad before the step)"
check_step(parameters_of(got, "generator", g0, what), g0, 0.2, expected, what)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_generator_step_discriminator_frozen", "locked": true, "points": 2, "schema_version": 3, "solution": false}
got = drive(generator_stepped, 6, 0.1)
_, discriminator, _, _ = gan_setup(6)
d0 = arrays_of(discriminator)
for i, (p, start) in enumerate(zip(parameters_of(got, "discriminator", d0, "generator_step"), d0)):
    assert p["grad"] is None, (f"discriminator parameter {i} collected a gradient in the generator step: freeze the "
                               f"discriminator (requires_grad_(False)) while the generator's loss is backpropagated")
    assert_close(p["data"], start, f"discriminator parameter {i} after the generator step (unchanged)")
    assert p["requires_grad"] is True, f"discriminator parameter {i} is still frozen after generator_step: unfreeze it"
print("generator_step: the discriminator collected no gradient, did not move, and is trainable again")
### BEGIN HIDDEN TESTS
# the generator step must still work (and leave D trainable) when called repeatedly, alternating with D steps:
# the same two rounds, run here with the library's steps, must give the same parameters after every step
history = drive(generator_steps_alternated, 7, 2)
generator, discriminator, real, z = gan_setup(7)
g_opt, d_opt = mg.optim.SGD(generator.parameters(), lr=0.1), mg.optim.SGD(discriminator.parameters(), lr=0.1)
assert isinstance(history, list) and len(history) == 4, f"expected the parameters after 4 steps, got {history!r:.200}"
for k, after in enumerate(history):
    if k % 2 == 0:
        library_generator_step(generator, discriminator, g_opt, Tensor(z))
        what = f"after generator_step number {k // 2 + 1} (alternating with discriminator steps)"
    else:
        library_discriminator_step(generator, discriminator, d_opt, Tensor(real), Tensor(z))
        what = f"after the discriminator step that follows generator_step number {k // 2 + 1}"
    for key, module in (("generator", generator), ("discriminator", discriminator)):
        want = arrays_of(module)
        for i, (p, expected) in enumerate(zip(parameters_of(after, key, want, what), want)):
            assert_close(p["data"], expected, f"{what}: {key} parameter {i}", rtol=1e-7, atol=1e-9)
            assert p["requires_grad"] is True, f"{what}: {key} parameter {i} is frozen"
### END HIDDEN TESTS

# %% [markdown]
# ### A GAN on a bimodal distribution
#
# The data: a mixture of two Gaussians, $\tfrac12\mathcal N(-2, 0.5^2) + \tfrac12\mathcal N(2, 0.5^2)$. The
# generator maps 4-dimensional noise through two hidden layers of 32 tanh units to one number; the discriminator
# has the same shape in reverse. Both use Adam with $\beta_1 = 0.5$, the usual choice for GANs (momentum that
# remembers less of a moving target). We snapshot the generator's distribution during training.

# %%
with runs_your('discriminator_step', 'generator_step'):
    def real_samples(rng, n):
        # ½ N(-2, 0.5²) + ½ N(2, 0.5²)
        centres = np.where(rng.random(n) < 0.5, -2.0, 2.0)
        return (centres + 0.5 * rng.standard_normal(n)).reshape(-1, 1)


    NOISE, BATCH, GAN_STEPS, SNAPSHOTS = 4, 128, 1200, (0, 150, 400, 1200)
    rng = np.random.default_rng(0)
    G = mg.nn.MLP([NOISE, 32, 32, 1], rng=rng)
    D = mg.nn.MLP([1, 32, 32, 1], rng=rng)
    g_opt = mg.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
    d_opt = mg.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
    fixed_noise = Tensor(rng.standard_normal((4000, NOISE)))


    def generated():
        with mg.no_grad():
            return G(fixed_noise).data.ravel()


    snapshots, d_losses, g_losses = {0: generated()}, [], []
    for step in tqdm(range(1, GAN_STEPS + 1), desc="GAN"):
        d_losses.append(discriminator_step(G, D, d_opt, Tensor(real_samples(rng, BATCH)), Tensor(rng.standard_normal((BATCH, NOISE)))))
        g_losses.append(generator_step(G, D, g_opt, Tensor(rng.standard_normal((BATCH, NOISE)))))
        if step in SNAPSHOTS:
            snapshots[step] = generated()


# %%
with runs_your('discriminator_step', 'generator_step'):
    grid = np.linspace(-4.5, 4.5, 300)
    density = 0.5 * (np.exp(-0.5 * ((grid + 2) / 0.5) ** 2) + np.exp(-0.5 * ((grid - 2) / 0.5) ** 2)) / (0.5 * np.sqrt(2 * np.pi))
    fig, axes = plt.subplots(1, len(SNAPSHOTS), figsize=(16, 3.4), sharey=True)
    for ax, step in zip(axes, SNAPSHOTS):
        ax.hist(snapshots[step], bins=np.linspace(-4.5, 4.5, 60), density=True, color="tab:orange", alpha=0.7, label="generated")
        ax.plot(grid, density, "k", label="data density")
        ax.set(title=f"after {step} steps", xlabel="x", xlim=(-4.5, 4.5), ylim=(0, 1.2))
    axes[0].set_ylabel("density")
    with mg.no_grad():
        belief = D(Tensor(grid.reshape(-1, 1))).sigmoid().data.ravel()
    axes[-1].plot(grid, belief, "tab:blue", label="σ(D(x)) at the end")
    axes[0].legend(*axes[-1].get_legend_handles_labels(), fontsize=8, loc="upper left")  # the first panel has room
    plt.show()

    fig, ax = plt.subplots(figsize=(8, 3))
    smooth = lambda values: np.convolve(values, np.ones(25) / 25, mode="valid")
    ax.plot(smooth(d_losses), label="discriminator loss")
    ax.plot(smooth(g_losses), label="generator loss")
    ax.axhline(2 * np.log(2), color="tab:blue", linestyle=":", label="2 log 2 (D cannot tell)")
    ax.axhline(np.log(2), color="tab:orange", linestyle=":", label="log 2 (G's loss when D says ½)")
    ax.set(xlabel="step", ylabel="binary cross-entropy", title="GAN losses (running mean of 25)")
    ax.legend(fontsize=8)
    plt.show()
    print(f"fraction of generated samples near each mode: {np.mean(snapshots[GAN_STEPS] < 0):.2f} left, {np.mean(snapshots[GAN_STEPS] > 0):.2f} right")


# %% [markdown]
# The generator starts as a narrow blob near zero, spreads out, and splits into two modes at the data's two peaks.
# The losses do not decrease towards zero as in ordinary training — they hover near the game's equilibrium, where
# the discriminator outputs $\sigma(D(x)) \approx \tfrac12$ and its loss is $2\log 2$: it cannot tell real from
# generated. That is the sign of a working GAN, and also why GANs are hard to monitor. The remaining
# imperfections — sharp spikes where the generator folds its noise onto a mode, tails of the wrong width, a thin
# bridge of samples between the modes (the generator is a continuous map of unimodal noise, so it must cross the gap
# somewhere) — and the discriminator's dip in belief between the modes, which is what keeps pushing samples out of
# the gap, are the subject of a large literature on GAN training (Wasserstein GANs, gradient penalties, spectral normalisation); a gradient penalty, incidentally, puts a
# gradient into the loss and needs chapter 4's double backward.
#
# ## 3. Differentiable communication between agents
#
# Foerster et al. (2016) and Sukhbaatar et al. (2016) asked whether agents can *learn to communicate*. If the message
# one agent sends is a continuous vector computed by its network, and another agent's network reads it, then the
# two networks form one differentiable graph: the receiver's loss backpropagates **through the message** into the
# sender's weights. Foerster et al. call this *differentiable inter-agent learning* (DIAL); the speaker learns what
# to say from how the listener fails.
#
# Our version is a referential game (a Lewis signalling game). A **speaker** sees one of $K = 8$ objects (a one-hot
# vector) and emits a message $m \in [-1, 1]^3$ (an MLP followed by $\tanh$). The channel adds Gaussian noise,
# $\tilde m = m + \varepsilon$, $\varepsilon \sim \mathcal N(0, 0.5^2 I)$ — following DIAL, noise during training
# pushes the bounded messages towards well-separated, almost discrete codes. A **listener** sees only $\tilde m$ and
# outputs logits over the $K$ objects. The only loss is the listener's cross-entropy; both agents are updated from it.
#
# `communication_loss` builds that shared graph for one batch. The speaker and listener are modules; the noise is
# given (an array shaped like the message, or `None` for a clean channel), which keeps the function deterministic
# and testable.

# %% nbgrader={"grade": false, "grade_id": "communication_loss", "locked": false, "schema_version": 3, "solution": true}
def communication_loss(speaker, listener, observations, targets, noise=None):
    """The listener's cross-entropy, differentiable with respect to both agents' parameters.

    observations: array or Tensor (batch, obs_dim), what the speaker sees.
    targets: integer array (batch,), the class the listener must name.
    noise: array (batch, message_dim) added to the message on the channel, or None.
    message = speaker(observations); received = message + noise; logits = listener(received);
    returns cross_entropy(logits, targets) as a scalar Tensor (the caller calls backward()).
    """
    ### BEGIN SOLUTION
    message = speaker(observations if isinstance(observations, Tensor) else Tensor(observations))
    received = message if noise is None else message + Tensor(noise)
    return cross_entropy(listener(received), targets)
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "helpers_communication", "locked": true, "schema_version": 3, "solution": false}
def agents(seed, n_objects=4, message_dim=3, hidden=5):
    """A speaker (MLP then tanh) and a listener (MLP), small enough for central differences."""
    rng = np.random.default_rng(seed)
    speaker = mg.nn.Sequential(mg.nn.MLP([n_objects, hidden, message_dim], rng=rng), mg.nn.Tanh())
    listener = mg.nn.MLP([message_dim, hidden, n_objects], rng=rng)
    return speaker, listener


def game_batch(seed, batch=7, n_objects=4, message_dim=3, noise_scale=0.5):
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, n_objects, batch)
    return np.eye(n_objects)[targets], targets, noise_scale * rng.standard_normal((batch, message_dim))


def reference_game_loss(speaker_arrays, listener_arrays, observations, targets, noise):
    message = numpy_mlp(speaker_arrays, observations, final="tanh")
    received = message if noise is None else message + noise
    return numpy_cross_entropy(numpy_mlp(listener_arrays, received), targets)


def communicated(seed, n_objects=4, message_dim=3, batch=7, channel="noisy", observations_as="array", backward=False):
    """Driver: your communication_loss on agents(seed, n_objects, message_dim) and game_batch(seed, batch, ...).
    channel: "noisy" (the batch's noise), "None" (noise=None given) or "left out" (no noise argument); the observations
    as an array or a "Tensor". Returns the loss (its shape and value, if it is a Tensor) and, when `backward`, the
    .grad of every speaker and listener parameter after loss.backward()."""
    speaker, listener = agents(seed, n_objects, message_dim)
    observations, targets, noise = game_batch(seed, batch, n_objects, message_dim)
    if observations_as == "Tensor":
        observations = Tensor(observations)
    if channel == "left out":
        loss = communication_loss(speaker, listener, observations, targets)
    else:
        loss = communication_loss(speaker, listener, observations, targets, noise if channel == "noisy" else None)
    if not isinstance(loss, Tensor):
        return {"loss": described(loss)}
    facts = {"loss": {"shape": tuple(loss.shape), "value": np.array(loss.data, dtype=np.float64)}}
    if backward:
        loss.backward()
        facts["speaker"] = parameter_data(speaker)
        facts["listener"] = parameter_data(listener)
    return facts


def loss_value(got, what):
    """The loss's value from communicated's result, checked to be a scalar Tensor's."""
    loss = got.get("loss") if isinstance(got, dict) else got
    if not (isinstance(loss, dict) and set(loss) == {"shape", "value"} and loss["shape"] == ()
            and isinstance(loss["value"], np.ndarray) and loss["value"].shape == () and loss["value"].dtype == np.float64):
        shown = f"a Tensor of shape {loss['shape']}" if isinstance(loss, dict) and "shape" in loss else loss
        raise AssertionError(f"{what}: expected a scalar Tensor, got {shown!r:.200}")
    return loss["value"]


# %% nbgrader={"grade": true, "grade_id": "test_communication_loss_value", "locked": true, "points": 2, "schema_version": 3, "solution": false}
got = drive(communicated, 0)
speaker, listener = agents(0)  # the same agents and batch, built here from the same seed
observations, targets, noise = game_batch(0)
want = reference_game_loss(arrays_of(speaker), arrays_of(listener), observations, targets, noise)
assert_close(loss_value(got, "communication_loss"), want, "communication_loss with channel noise")
print("communication_loss: the value agrees with a numpy speaker and listener")
### BEGIN HIDDEN TESTS
speaker, listener = agents(1, n_objects=5, message_dim=2)
observations, targets, _ = game_batch(1, batch=9, n_objects=5, message_dim=2)
want = reference_game_loss(arrays_of(speaker), arrays_of(listener), observations, targets, None)
assert_close(loss_value(drive(communicated, 1, 5, 2, 9, "left out"), "communication_loss, clean channel"), want,
             "communication_loss, clean channel")
assert_close(loss_value(drive(communicated, 1, 5, 2, 9, "None", "Tensor"), "communication_loss with observations given as a Tensor"),
             want, "communication_loss with observations given as a Tensor")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_communication_loss_trains_speaker", "locked": true, "points": 3, "schema_version": 3, "solution": false}
got = drive(communicated, 2, 4, 3, 7, "noisy", "array", True)
speaker, listener = agents(2)  # the same agents and batch, built here from the same seed
observations, targets, noise = game_batch(2)
s0, l0 = arrays_of(speaker), arrays_of(listener)
loss_value(got, "communication_loss")
expected = numerical_gradients(lambda arrays: reference_game_loss(arrays, l0, observations, targets, noise), s0)
for i, (p, want) in enumerate(zip(parameters_of(got, "speaker", s0, "communication_loss(...).backward()"), expected)):
    assert p["grad"] is not None, (f"speaker parameter {i} got no gradient: the listener's loss must reach the speaker "
                                   f"through the message (no detach)")
    assert_close(p["grad"], want, f"gradient of speaker parameter {i}", rtol=1e-5, atol=1e-7)
print("communication_loss: the listener's loss trains the speaker")
### BEGIN HIDDEN TESTS
expected = numerical_gradients(lambda arrays: reference_game_loss(s0, arrays, observations, targets, noise), l0)
for i, (p, want) in enumerate(zip(parameters_of(got, "listener", l0, "communication_loss(...).backward()"), expected)):
    assert p["grad"] is not None, f"listener parameter {i} got no gradient"
    assert_close(p["grad"], want, f"gradient of listener parameter {i}", rtol=1e-5, atol=1e-7)
### END HIDDEN TESTS

# %% [markdown]
# ### Learning to talk — and not learning, with the wire cut
#
# We train the pair with Adam on batches of 64 random objects, twice from the same initialisation: once as written,
# and once with the message **detached** before it enters the channel. Detaching changes nothing in the forward
# pass — the listener receives exactly the same numbers — but the speaker's parameters never get a gradient, so
# the speaker keeps its random initial code. Accuracy is measured on fresh noisy messages.

# %%
with runs_your('communication_loss'):
    N_OBJECTS, MESSAGE_DIM, CHANNEL_NOISE, GAME_STEPS = 8, 3, 0.5, 1500


    class Detached(mg.nn.Module):
        # wraps a speaker and cuts the graph at its message: same numbers, no gradient into the speaker
        def __init__(self, speaker):
            self.speaker = speaker

        def forward(self, x):
            return self.speaker(x).detach()


    def play(cut, seed=0):
        rng = np.random.default_rng(seed)
        speaker = mg.nn.Sequential(mg.nn.MLP([N_OBJECTS, 32, MESSAGE_DIM], rng=rng), mg.nn.Tanh())
        listener = mg.nn.MLP([MESSAGE_DIM, 32, N_OBJECTS], rng=rng)
        optimizer = mg.optim.Adam(speaker.parameters() + listener.parameters(), lr=1e-2)
        sender = Detached(speaker) if cut else speaker
        eval_targets = rng.integers(0, N_OBJECTS, 2000)
        eval_noise = CHANNEL_NOISE * rng.standard_normal((2000, MESSAGE_DIM))
        accuracy = []
        for step in tqdm(range(GAME_STEPS), desc="detached message" if cut else "shared graph", leave=False):
            targets = rng.integers(0, N_OBJECTS, 64)
            optimizer.zero_grad()
            communication_loss(sender, listener, np.eye(N_OBJECTS)[targets], targets,
                               CHANNEL_NOISE * rng.standard_normal((64, MESSAGE_DIM))).backward()
            optimizer.step()
            if step % 25 == 0 or step == GAME_STEPS - 1:
                with mg.no_grad():
                    logits = listener(speaker(Tensor(np.eye(N_OBJECTS)[eval_targets])) + Tensor(eval_noise))
                accuracy.append((step, np.mean(logits.data.argmax(axis=1) == eval_targets)))
        return speaker, accuracy


    games = {label: play(cut) for label, cut in [("shared graph", False), ("message detached", True)]}
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    for label, (_, accuracy) in games.items():
        steps, values = zip(*accuracy)
        ax.plot(steps, values, label=f"{label}: final accuracy {values[-1]:.2f}")
    ax.axhline(1 / N_OBJECTS, color="gray", linestyle=":", label="chance")
    ax.set(xlabel="training step", ylabel="listener accuracy (noisy channel)", ylim=(0, 1), title="Referential game, 8 objects")
    ax.legend()
    plt.show()


# %% [markdown]
# With the shared graph the pair reaches high accuracy; with the wire cut the listener does its best with
# whatever the random speaker happens to say, and stalls far lower. The learned code explains the difference. Here
# is each speaker's message for every object (large dots), with a cloud of what the listener receives through the
# noisy channel:

# %%
with runs_your('communication_loss'):
    fig = plt.figure(figsize=(11, 4.6))
    colors = plt.cm.tab10(np.arange(N_OBJECTS))
    cloud_rng = np.random.default_rng(3)
    for k, (label, (speaker, _)) in enumerate(games.items()):
        ax = fig.add_subplot(1, 2, k + 1, projection="3d")
        with mg.no_grad():
            codes = speaker(Tensor(np.eye(N_OBJECTS))).data
        for obj in range(N_OBJECTS):
            cloud = codes[obj] + CHANNEL_NOISE * cloud_rng.standard_normal((60, MESSAGE_DIM))
            ax.scatter(*cloud.T, color=colors[obj], s=8, alpha=0.6, depthshade=False)
            ax.scatter(*codes[obj], color=colors[obj], s=80, edgecolor="k", depthshade=False)
        ax.set(xlim=(-1.8, 1.8), ylim=(-1.8, 1.8), zlim=(-1.8, 1.8), xticks=[-1, 0, 1], yticks=[-1, 0, 1], zticks=[-1, 0, 1],
               xlabel="$m_1$", ylabel="$m_2$", zlabel="$m_3$", title=label)
    fig.suptitle("The speaker's message for each object (large dots) and what the listener receives (small dots)")
    plt.show()
    print("messages of the trained speaker (rounded):")
    print(np.round(games["shared graph"][0](Tensor(np.eye(N_OBJECTS))).data, 2))


# %% [markdown]
# Trained through the listener's loss, the speaker pushes its eight messages to the eight corners of the cube
# $[-1, 1]^3$ — as far apart as a bounded message can be, so that the noise rarely carries one into another's
# region. It has invented a 3-bit code, with nobody telling it that codes or bits exist: the only signal was the
# gradient of the listener's error, flowing backwards through the channel. The detached speaker's messages stay
# where initialisation put them, bunched together inside the noise, and no listener can decode them reliably.
#
# ## 4. Differentiating through a solver
#
# Diffusion models and neural ODEs describe data by a process in time. A diffusion model generates a sample by
# running a learned denoising network for hundreds of steps (Ho et al. 2020), and can equivalently integrate a
# *probability-flow* ODE (Song et al. 2021); a neural ODE (Chen et al. 2018) defines a layer as the solution of
# $\dot y = f_\theta(t, y)$. To train them, or any model with an ODE inside, we need gradients of a loss on the
# solution with respect to $\theta$ and $y_0$.
#
# The direct way — *discretise, then differentiate* — treats the solver as ordinary code. **Explicit Euler** with
# $n$ steps of size $h = (t_1 - t_0)/n$ computes
#
# $$
# y_{k+1} = y_k + h\, f(t_0 + k h,\ y_k), \qquad k = 0, 1, \ldots, n - 1,
# $$
#
# and every step is a handful of tensor operations, so the trajectory $y_0, \ldots, y_n$ is one long graph. One
# backward pass through it gives the exact gradient of the *discrete* solution. Euler's global error is $O(h)$;
# higher-order methods such as the classical fourth-order Runge–Kutta (`minigrad.ode.rk4_solve`, error $O(h^4)$,
# four evaluations of $f$ per step) differentiate the same way.
#
# `euler_solve(f, y0, t0, t1, n_steps)` returns the whole trajectory, a tensor of shape `(n_steps + 1, *y0.shape)`
# with $y_0$ first and $y_n \approx y(t_1)$ last (`mg.stack` joins a list of tensors along a new first axis).
# $f(t, y)$ receives the time as a Python float and the state as a tensor; any parameters it uses are captured
# tensors, which is how gradients reach them.

# %% nbgrader={"grade": false, "grade_id": "euler_solve", "locked": false, "schema_version": 3, "solution": true}
def euler_solve(f, y0, t0, t1, n_steps):
    """Integrate dy/dt = f(t, y) from t0 to t1 with n_steps explicit Euler steps, differentiably.

    h = (t1 - t0) / n_steps and y_{k+1} = y_k + h f(t0 + k h, y_k) for k = 0, ..., n_steps - 1.
    Returns a Tensor of shape (n_steps + 1, *y0.shape): y_0 = y0, y_1, ..., y_{n_steps}.
    Gradients flow to y0 and to every tensor f uses.
    """
    ### BEGIN SOLUTION
    h = (t1 - t0) / n_steps
    y = y0 if isinstance(y0, Tensor) else Tensor(y0)
    states = [y]
    for k in range(n_steps):
        y = y + h * f(t0 + k * h, y)
        states.append(y)
    return mg.stack(states)
    ### END SOLUTION


# %% deletable=false editable=false nbgrader={"grade": false, "grade_id": "helpers_euler", "locked": true, "schema_version": 3, "solution": false}
ODE_FIELDS = {  # the slopes f(t, y) the tests integrate, by name, each made from its parameter a (a number or a Tensor)
    "a y": lambda a: lambda t, y: a * y,
    "cos t": lambda a: lambda t, y: y * 0.0 + np.cos(t),
    "-y": lambda a: lambda t, y: -y,
}


def tensor_data(value):
    """A Tensor as plain data (its shape and values), or a description of anything else."""
    if not isinstance(value, Tensor):
        return described(value)
    return {"shape": tuple(value.shape), "values": np.array(value.data, dtype=np.float64)}


def integrated(field, a, y0, t0, t1, n_steps):
    """Driver: your euler_solve(ODE_FIELDS[field](a), Tensor(y0), t0, t1, n_steps); the trajectory as tensor_data."""
    return tensor_data(euler_solve(ODE_FIELDS[field](a), Tensor(y0), t0, t1, n_steps))


def integrated_gradients(a, y0, t0, t1, n_steps, of, y0_requires_grad=False):
    """Driver: your euler_solve on dy/dt = a y, with a = Tensor(a, requires_grad=True) and y0 = Tensor(y0), then
    backward from the last state (of="last") or from the sum of the trajectory (of="sum"); a.grad and y0.grad after."""
    a = Tensor(a, requires_grad=True)
    y0 = Tensor(y0, requires_grad=y0_requires_grad)
    trajectory = euler_solve(ODE_FIELDS["a y"](a), y0, t0, t1, n_steps)
    (trajectory[-1] if of == "last" else trajectory.sum()).backward()
    return {"a": grad_data(a.grad), "y0": grad_data(y0.grad)}


def integrated_at_scale(n_steps, dim, seed):
    """Driver: your euler_solve on y' = -½ y for a random state of `dim` numbers, n_steps steps from t = 0 to 1 (nothing
    requires grad, so no graph is kept); the trajectory's shape and its rows 0, 1, n/2 and n (all of it is too large
    to send)."""
    y0 = np.random.default_rng(seed).standard_normal(dim)
    trajectory = euler_solve(ODE_FIELDS["a y"](-0.5), Tensor(y0), 0.0, 1.0, n_steps)
    if not isinstance(trajectory, Tensor):
        return described(trajectory)
    rows = [0, 1, n_steps // 2, n_steps]
    return {"shape": tuple(trajectory.shape), "rows": np.array(trajectory.data[rows], dtype=np.float64)}


def trajectory_of(got, what):
    """The values from integrated's result, checked to be a float64 array of the shape it reports."""
    if not (isinstance(got, dict) and set(got) == {"shape", "values"} and isinstance(got["values"], np.ndarray)
            and got["values"].dtype == np.float64 and got["shape"] == got["values"].shape):
        raise AssertionError(f"{what}: expected a Tensor, got {got!r:.200}")
    return got["values"]


def gradient_of(got, name, what):
    """got[name] from integrated_gradients' result: a float64 array (None fails with `what`)."""
    grad = got.get(name) if isinstance(got, dict) else None
    if grad is None:
        raise AssertionError(what)
    if not (isinstance(grad, np.ndarray) and grad.dtype == np.float64):
        raise AssertionError(f"{name}.grad is not a Tensor: {grad!r:.200}")
    return grad


# %% [markdown]
# For $\dot y = a y$, Euler has a closed form, $y_k = y_0 (1 + a h)^k$, and so do its derivatives:
# $\partial y_n / \partial a = y_0\, n h\, (1 + a h)^{n-1}$ and $\partial y_n / \partial y_0 = (1 + a h)^n$.
# The tests use these (hidden ones also integrate backwards in time, $t_1 < t_0$, and take 40,000 steps within
# 10 seconds), and a slope that depends on time only, $\dot y = \cos t$, whose Euler solution is the left
# Riemann sum $y_n = y_0 + h \sum_{k<n} \cos(t_0 + k h)$.

# %% nbgrader={"grade": true, "grade_id": "test_euler_solve_values", "locked": true, "points": 3, "schema_version": 3, "solution": false}
a, h, n = -0.8, 2.0 / 25, 25
trajectory = trajectory_of(drive(integrated, "a y", a, 3.0, 1.0, 3.0, n), "euler_solve(lambda t, y: a * y, Tensor(3.0), 1.0, 3.0, 25)")
assert_equal(trajectory.shape, (n + 1,), "shape of the trajectory for a scalar y0 and 25 steps")
assert_close(trajectory, 3.0 * (1 + a * h) ** np.arange(n + 1), "Euler trajectory of y' = a y (expected y0 (1 + a h)^k)")
print("euler_solve: the trajectory of y' = a y matches y0 (1 + a h)^k")
### BEGIN HIDDEN TESTS
# the slope is evaluated at t0 + k h, the start of each step, for a vector state
t0, t1, n = 0.5, 2.5, 16
h = (t1 - t0) / n
trajectory = trajectory_of(drive(integrated, "cos t", None, [1.0, -2.0], t0, t1, n), "euler_solve of y' = cos t")
assert_equal(trajectory.shape, (n + 1, 2), "shape of the trajectory for y0 of shape (2,) and 16 steps")
riemann = np.concatenate([[0.0], np.cumsum(h * np.cos(t0 + h * np.arange(n)))])
assert_close(trajectory[:, 1], -2.0 + riemann, "Euler trajectory of y' = cos t (a left Riemann sum)")
# a matrix state and one single step
trajectory = trajectory_of(drive(integrated, "-y", None, np.ones((2, 3)), 0.0, 0.3, 1), "one Euler step of y' = -y")
assert_close(trajectory, np.stack([np.ones((2, 3)), 0.7 * np.ones((2, 3))]), "one Euler step of y' = -y with h = 0.3")
# backwards in time, t1 < t0 so h < 0 (a diffusion sampler integrates from t = 1 down to 0)
t0, t1, n = 2.0, 0.0, 20
h = (t1 - t0) / n
trajectory = trajectory_of(drive(integrated, "cos t", None, [0.5], t0, t1, n), "euler_solve of y' = cos t from t = 2 back to 0")
riemann = np.concatenate([[0.0], np.cumsum(h * np.cos(t0 + h * np.arange(n)))])
assert_close(trajectory[:, 0], 0.5 + riemann, "Euler trajectory of y' = cos t from t0 = 2 back to t1 = 0 (h = (t1 - t0) / n < 0)")
# The right answer, but work that explodes: growing the trajectory by concatenation copies all of it at every step,
# n²/2 rows in all. At 40,000 steps of a state of 600 numbers, one stack at the end takes well under a second;
# copying, many minutes: only the first finishes within the 10 s allowed.
n, dim = 40_000, 600
try:
    got = drive(integrated_at_scale, n, dim, 4, seconds=10)
except (TimeoutError, MemoryError) as error:
    raise AssertionError(
        f"euler_solve did not finish {n:,} steps of a state of {dim} numbers within 10 s ({type(error).__name__}): "
        f"collect the states in a list and stack them once at the end (concatenating at every step copies the whole "
        f"trajectory each time)") from None
assert isinstance(got, dict) and got.get("shape") == (n + 1, dim), f"euler_solve at {n:,} steps: expected a Tensor of shape {(n + 1, dim)}, got {got!r:.200}"
y0, h = np.random.default_rng(4).standard_normal(dim), 1.0 / n
assert_close(got["rows"], np.stack([y0 * (1 - 0.5 * h) ** k for k in (0, 1, n // 2, n)]),
             f"rows 0, 1, n/2 and n of the Euler trajectory of y' = -y/2 with {n:,} steps")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_euler_solve_gradient", "locked": true, "points": 2, "schema_version": 3, "solution": false}
n, h = 40, 1.5 / 40
got = drive(integrated_gradients, 0.3, 2.0, 0.0, 1.5, n, "last")  # a = Tensor(0.3, requires_grad=True), y0 = 2
grad = gradient_of(got, "a", "no gradient reached the parameter a of f: the trajectory must stay in the graph")
assert_close(grad, 2.0 * n * h * (1 + 0.3 * h) ** (n - 1), "d y_n / d a (expected y0 n h (1 + a h)^(n-1))")
print("euler_solve: d y_n / d a matches the closed form")
### BEGIN HIDDEN TESTS
got = drive(integrated_gradients, -0.5, np.array([1.0, 2.0]), 2.0, 4.0, 10, "sum", True)
h = 0.2
grad = gradient_of(got, "y0", "no gradient reached y0: the trajectory must stay in the graph")
assert_close(grad, np.full(2, sum((1 - 0.5 * h) ** k for k in range(11))), "d(sum of the trajectory) / d y0")
### END HIDDEN TESTS

# %% [markdown]
# ### Fitting a predator–prey model through the solver
#
# The Lotka–Volterra equations describe prey $u$ (say, hares) and predators $v$ (lynxes):
#
# $$
# \dot u = \alpha u - \beta u v, \qquad \dot v = \delta u v - \gamma v .
# $$
#
# Prey grow at rate $\alpha$ and are eaten at rate $\beta$ per predator; predators starve at rate $\gamma$ and grow
# at rate $\delta$ per prey. We observe both populations at 31 times over $t \in [0, 15]$, with 5% multiplicative
# noise, from the true parameters $(\alpha, \beta, \delta, \gamma) = (1, 0.1, 0.075, 1.5)$ — and pretend not to know
# them. Starting 20–25% off, we fit all four (as logarithms, so they stay positive) by Adam on the mean squared error
# of the log-populations, differentiating through **your Euler solver with 300 steps** and, for comparison,
# through RK4 with 60 steps (written in the next cell: four slopes per step, averaged). Each loss evaluation is a graph
# of a few thousand operations.

# %%
with runs_your('euler_solve'):
    def rk4_solve(f, y0, t0, t1, n_steps):
        # the classical fourth-order Runge–Kutta method, with the same interface and output as euler_solve
        h, y = (t1 - t0) / n_steps, y0
        states = [y]
        for k in range(n_steps):
            t = t0 + k * h
            k1 = f(t, y)
            k2 = f(t + h / 2, y + (h / 2) * k1)
            k3 = f(t + h / 2, y + (h / 2) * k2)
            k4 = f(t + h, y + h * k3)
            y = y + (h / 6) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            states.append(y)
        return mg.stack(states)


    TRUE_RATES = np.array([1.0, 0.1, 0.075, 1.5])          # alpha, beta, delta, gamma
    Y0, T_END, N_OBS = np.array([10.0, 5.0]), 15.0, 31


    def lotka_volterra(log_rates):
        alpha, beta, delta, gamma = (log_rates.exp()[i] for i in range(4))
        growth = mg.stack([alpha, -gamma])              # per-capita rates without interaction
        interaction = mg.stack([-beta, delta])          # per-capita effect of the *other* species
        return lambda t, y: y * (growth + interaction * y[::-1])


    reference = rk4_solve(lotka_volterra(Tensor(np.log(TRUE_RATES))), Tensor(Y0), 0.0, T_END, 3000).data
    obs_times = np.linspace(0, T_END, N_OBS)
    observed = reference[np.linspace(0, 3000, N_OBS).astype(int)] * np.exp(0.05 * np.random.default_rng(0).standard_normal((N_OBS, 2)))


    def fit(solver, n_steps, iterations=60):
        log_rates = Tensor(np.log([0.8, 0.125, 0.09, 1.2]), requires_grad=True)
        optimizer = mg.optim.Adam([log_rates], lr=0.05)
        at_obs = np.linspace(0, n_steps, N_OBS).astype(int)
        losses = []
        for _ in tqdm(range(iterations), desc=f"{solver.__name__}, {n_steps} steps", leave=False):
            optimizer.zero_grad()
            trajectory = solver(lotka_volterra(log_rates), Tensor(Y0), 0.0, T_END, n_steps)
            loss = ((trajectory[at_obs].log() - np.log(observed)) ** 2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return np.exp(log_rates.data), losses


    fits = {}
    for solver, n_steps in [(euler_solve, 300), (rk4_solve, 60)]:
        label = f"{solver.__name__}, {n_steps} steps"
        start = time.perf_counter()
        fits[label] = rates, losses = fit(solver, n_steps)
        off = np.abs(rates / TRUE_RATES - 1)
        print(f"{label:22s} {time.perf_counter() - start:4.1f} s, fitted (α, β, δ, γ) = {np.round(rates, 3)} "
              f"({off.max():.0%} off at worst), final loss {losses[-1]:.4f}")
    print(f"true (α, β, δ, γ) = {TRUE_RATES}; the noise alone gives a loss of about {0.05 ** 2:.4f}")


# %%
with runs_your('euler_solve'):
    fig, axes = plt.subplots(1, 2, figsize=(14, 4))
    fine_times = np.linspace(0, T_END, 3001)
    for i, species in enumerate(["prey u", "predators v"]):
        axes[0].plot(obs_times, observed[:, i], "o", color=f"C{i}", label=f"observed {species}")
        axes[0].plot(fine_times, reference[:, i], color=f"C{i}", alpha=0.3, linewidth=4, label=f"true {species}")
    for (label, (rates, losses)), style in zip(fits.items(), ["--", ":"]):
        exact = rk4_solve(lotka_volterra(Tensor(np.log(rates))), Tensor(Y0), 0.0, T_END, 3000).data
        for i in range(2):
            axes[0].plot(fine_times, exact[:, i], "k", linestyle=style, linewidth=1, label=f"fitted by {label}" if i == 0 else None)
        axes[1].semilogy(losses, label=label)
    axes[0].set(xlabel="t", ylabel="population", title="Fitted parameters, integrated accurately", ylim=(0, 60))
    axes[0].legend(fontsize=8, ncol=3, loc="upper center")
    axes[1].axhline(0.05 ** 2, color="gray", linestyle=":", label="noise level")
    axes[1].set(xlabel="Adam iteration", ylabel="MSE of the log-populations", title="Fitting through the solver")
    axes[1].legend()
    plt.show()


# %% [markdown]
# Both fits converge, but to different answers. Gradient descent faithfully fits the model it differentiates —
# here, the *Euler discretisation* of Lotka–Volterra with $h = 0.05$, whose orbits slowly spiral outwards. The
# parameters that make that discrete model match the data are biased, and when we integrate them accurately
# (the dashed curve) the fit is visibly off. RK4 with a fifth of the steps reaches the noise floor and recovers every
# rate to within about 8% — what 5% noise on 31 observations allows — where Euler's $\delta$ is 21% off. Differentiating through a solver gives exact gradients of the *numerical* solution, so its
# accuracy is part of the model.
#
# ### Memory: every step is kept for the backward pass
#
# The backward pass needs the inputs each operation saw, so the whole trajectory's intermediate values stay in
# memory until it runs. `minigrad.memory.track_saved_bytes()` counts the bytes of the arrays recorded operations hold
# for their backward pass while a block runs (each buffer once; chapter 6 has you write `saved_bytes`, the same count
# on a finished graph). We measure it for your Euler solver on a batch of 256 trajectories of a
# 16-dimensional state with a small tanh network as $f$, the shape of a neural ODE's hidden state:

# %%
with runs_your('euler_solve'):
    rng = np.random.default_rng(0)
    W = Tensor(rng.standard_normal((16, 16)) / 4, requires_grad=True)
    batch_y0 = Tensor(rng.standard_normal((256, 16)))
    STEP_COUNTS = [25, 50, 100, 200, 400]
    held, nodes = [], []
    for n in tqdm(STEP_COUNTS, desc="steps"):
        with track_saved_bytes() as tracker:
            trajectory = euler_solve(lambda t, y: (y @ W).tanh(), batch_y0, 0.0, 1.0, n)
        held.append(tracker.current)  # what the graph holds now that the trajectory is built
        nodes.append(mg.count_nodes_edges(trajectory)[0])
        del trajectory
    per_step = np.polyfit(STEP_COUNTS, held, 1)[0]
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    ax.plot(STEP_COUNTS, np.array(held) / 2**20, "o-")
    ax.set(xlabel="Euler steps n", ylabel="MiB held for backward", title="Saved activations grow linearly with the steps")
    plt.show()
    print(f"about {per_step / 2**10:.0f} KiB per step ({per_step / batch_y0.data.nbytes:.1f} copies of the state), "
          f"{held[-1] / 2**20:.1f} MiB and {nodes[-1]:,} tensors for {STEP_COUNTS[-1]} steps")


# %% [markdown]
# Memory grows in proportion to the number of steps: each Euler step keeps a few copies of the state (the product
# $y W$ before the $\tanh$, the $\tanh$ itself, $h f$ and the new state). For a diffusion model with a large network
# run over a thousand steps that is prohibitive, and there are two ways out. Chen et al. (2018) solve a second,
# *adjoint* ODE backwards in time, which needs only $O(1)$ memory but recomputes the trajectory and differentiates
# the continuous rather than the discrete solution. **Checkpointing** — the subject of chapter 6 — keeps only some
# of the states and recomputes the others during the backward pass, and with $\sqrt n$ checkpoints brings the
# memory down to $O(\sqrt n)$ for a modest amount of extra computation.
#

# %% [markdown]
# ## 5. A diffusion model, for real
#
# A diffusion model (Sohl-Dickstein et al. 2015; Ho et al. 2020; Song et al. 2021) learns to *undo* noise. The
# **forward process** destroys a data point $x_0$ gradually: at time $t \in [0, 1]$,
#
# $$
# x_t = \alpha(t)\, x_0 + \sigma(t)\, \varepsilon, \qquad \varepsilon \sim \mathcal N(0, 1), \qquad
# \alpha(t) = e^{-\frac12 \int_0^t \beta(s)\, ds}, \quad \sigma(t)^2 = 1 - \alpha(t)^2,
# $$
#
# with the **noise schedule** $\beta(t) = \beta_{\min} + t\,(\beta_{\max} - \beta_{\min})$ — Song et al.'s
# variance-preserving process, the continuous-time limit of Ho et al.'s Markov chain. Here $\beta_{\min} = 0.1$ and
# $\beta_{\max} = 10$, so that $\alpha(1) = 0.08$: at $t = 1$ almost nothing of the data is left, and $x_1$ is close to
# a standard normal. A small network $\varepsilon_\theta(x, t)$ — an MLP with two hidden layers of 64 tanh units,
# trained with minigrad like any other — learns to tell which noise was added, by minimising
# $\mathbb E\,\lVert \varepsilon_\theta(x_t, t) - \varepsilon \rVert^2$ over data points, times and noises drawn fresh at
# every step. That is all the training there is: one graph per step, no unrolling.
#
# Generating runs the process backwards. The network's noise estimate gives the **score**
# $\nabla_x \log p_t(x) \approx -\varepsilon_\theta(x, t) / \sigma(t)$, and two samplers use it, both from $t = 1$ down
# to $t = 10^{-3}$ in 100 steps:
#
# * the **reverse-time SDE** (Anderson 1982; Song et al. 2021),
#   $dx = \big[-\tfrac12\beta(t)\, x - \beta(t) \nabla_x \log p_t(x)\big]\, dt + \sqrt{\beta(t)}\, d\bar w$, by
#   Euler–Maruyama: each step adds fresh noise;
# * the **probability-flow ODE**, $\dot x = -\tfrac12 \beta(t) \big(x + \nabla_x \log p_t(x)\big)$, whose solutions
#   have the same marginals $p_t$ but no noise at all: a deterministic map from the prior's $x_1$ to a sample. We
#   integrate it with **your `euler_solve`**, backwards in time ($h < 0$).
#
# The data is the GAN's: $\tfrac12\mathcal N(-2, 0.5^2) + \tfrac12\mathcal N(2, 0.5^2)$.

# %%
BETA_MIN, BETA_MAX, T_MIN, SAMPLER_STEPS = 0.1, 10.0, 1e-3, 100


def beta(t):
    return BETA_MIN + t * (BETA_MAX - BETA_MIN)


def alpha(t):  # x_t = alpha(t) x_0 + sigma(t) noise
    return np.exp(-0.5 * (BETA_MIN * t + 0.5 * (BETA_MAX - BETA_MIN) * t ** 2))


def sigma(t):
    return np.sqrt(1.0 - alpha(t) ** 2)


def mixture(rng, n):  # ½ N(-2, 0.5²) + ½ N(2, 0.5²), as for the GAN
    return (np.where(rng.random(n) < 0.5, -2.0, 2.0) + 0.5 * rng.standard_normal(n)).reshape(-1, 1)


rng = np.random.default_rng(0)
denoiser_net = mg.nn.MLP([2, 64, 64, 1], rng=rng)


def denoiser(x, t):
    """ε_θ(x, t): the noise the network sees in x (batch, 1) at time t (a float, or an array shaped like x)."""
    t = np.broadcast_to(np.asarray(t, dtype=np.float64), x.shape)
    return denoiser_net(mg.concatenate([x, Tensor(2 * t - 1)], axis=1))


optimizer = mg.optim.Adam(denoiser_net.parameters(), lr=3e-3)
denoising_losses = []
for step in tqdm(range(3000), desc="denoiser"):
    x0, t, noise = mixture(rng, 256), rng.uniform(T_MIN, 1.0, (256, 1)), rng.standard_normal((256, 1))
    optimizer.zero_grad()
    loss = ((denoiser(Tensor(alpha(t) * x0 + sigma(t) * noise), t) - Tensor(noise)) ** 2).mean()
    loss.backward()
    optimizer.step()
    denoising_losses.append(loss.item())


def probability_flow(w=1.0):
    """The slope of the probability-flow ODE, dx/dt = -½ β(t) (x + score), score = -w ε_θ / σ (w = 1: as trained)."""
    return lambda t, x: -0.5 * beta(t) * (x - w * denoiser(x, t) / sigma(t))


def reverse_sde(x, n_steps, rng):
    """Euler–Maruyama on the reverse-time SDE from t = 1 down to T_MIN; the whole path, (n_steps + 1, *x.shape)."""
    h = (T_MIN - 1.0) / n_steps
    path = [x.data]
    for k in range(n_steps):
        t = 1.0 + k * h
        drift = -0.5 * beta(t) * x + beta(t) * denoiser(x, t) / sigma(t)
        x = x + h * drift + np.sqrt(beta(t) * -h) * Tensor(rng.standard_normal(x.shape))
        path.append(x.data)
    return np.stack(path)


def describe(samples):
    samples = samples.ravel()
    return (f"mean {samples.mean():+.2f}, variance {samples.var():.2f}, {np.mean(samples < 0):.0%} left of 0, "
            f"spread around the modes E(|x| - 2)² = {np.mean((np.abs(samples) - 2) ** 2):.3f}")


prior = np.random.default_rng(1).standard_normal((2000, 1))  # x_1, shared by both samplers
ode_paths = None
with mg.no_grad():
    sde_paths = reverse_sde(Tensor(prior), SAMPLER_STEPS, np.random.default_rng(2))
    with runs_your("euler_solve"):
        ode_paths = euler_solve(probability_flow(), Tensor(prior), 1.0, T_MIN, SAMPLER_STEPS).data
print(f"data (200,000 draws)   {describe(mixture(np.random.default_rng(3), 200_000))}")
print(f"reverse SDE, 100 steps {describe(sde_paths[-1])}")
if ode_paths is not None:
    print(f"probability-flow ODE   {describe(ode_paths[-1])}")

# %%
with runs_your('euler_solve'):
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.6))
    axes[0].semilogy(np.convolve(denoising_losses, np.ones(50) / 50, mode="valid"))
    axes[0].set(xlabel="training step", ylabel="denoising MSE (running mean of 50)", title="Training the denoiser")
    grid = np.linspace(-4.5, 4.5, 300)
    density = 0.5 * (np.exp(-0.5 * ((grid + 2) / 0.5) ** 2) + np.exp(-0.5 * ((grid - 2) / 0.5) ** 2)) / (0.5 * np.sqrt(2 * np.pi))
    bins = np.linspace(-4.5, 4.5, 60)
    axes[1].hist(sde_paths[-1].ravel(), bins=bins, density=True, alpha=0.5, label="reverse SDE")
    if ode_paths is not None:
        axes[1].hist(ode_paths[-1].ravel(), bins=bins, density=True, histtype="step", linewidth=1.5, label="probability-flow ODE")
    axes[1].plot(grid, density, "k", label="data density")
    axes[1].set(xlabel="x", ylabel="density", title="2,000 samples, 100 steps each")
    axes[1].legend(fontsize=8)
    times = np.linspace(1.0, T_MIN, SAMPLER_STEPS + 1)
    for ax, paths, name in [(axes[2], sde_paths, "reverse SDE"), (axes[3], ode_paths, "probability-flow ODE")]:
        if paths is not None:
            ax.plot(times, paths[:, :40, 0], linewidth=0.7, alpha=0.8)
        ax.set(xlabel="t (sampling runs from t = 1 to 0)", ylabel="x_t", title=f"40 trajectories: {name}", xlim=(1, 0), ylim=(-4, 4))
    plt.show()


# %% [markdown]
# Both samplers turn the standard normal at $t = 1$ into the two modes (the statistics above: both put close to
# half the samples on each side and reproduce the data's variance to within about 10 %). The trajectories show the
# difference: the SDE's paths jitter all the way and cross each other, the ODE's are smooth curves that never cross —
# in one dimension the probability flow is a monotone map, so it keeps the order of the prior's samples. The ODE's
# samples come out a little more spread around the modes than the SDE's: the noise the SDE keeps adding also corrects
# the network's errors, while the ODE carries each error to the end.
#
# ### A gradient through the sampler
#
# A sampler is a computation like any other, so a loss on its *samples* can be differentiated with respect to
# anything inside it: the schedule, the step sizes, a sampler parameter. As an example, scale the predicted noise by a
# factor $w$ (at $w > 1$ the score is amplified and samples are pulled harder towards the modes — the same idea as the
# *guidance scale* of conditional diffusion models) and tune it so that the ODE sampler's spread around the modes,
# $\mathbb E(|x| - 2)^2$, which came out too large above, matches the data's 0.25. The gradient of
# $\big(\text{spread} - 0.25\big)^2$ with respect to $\log w$ runs backwards through all 100 steps of the ODE
# sampler — 100 evaluations of the network, one long graph — and Adam follows it for 20 steps, on a fixed batch of 256
# prior draws.

# %%
TARGET_SPREAD = 0.25  # the data's E(|x| - 2)²: 0.5² within a mode
tuning_prior = Tensor(np.random.default_rng(4).standard_normal((256, 1)))


def spread(x):
    return ((x.abs() - 2.0) ** 2).mean()


def sampler_objective(log_w, x1=tuning_prior):
    """(the squared miss of the target spread, the spread) for samples of the ODE sampler with w = exp(log_w)."""
    samples = euler_solve(probability_flow(log_w.exp()), x1, 1.0, T_MIN, SAMPLER_STEPS)[-1]
    achieved = spread(samples)
    return (achieved - TARGET_SPREAD) ** 2, achieved


log_w = Tensor(0.0, requires_grad=True)
tuner = mg.optim.Adam([log_w], lr=0.05)
tuning = []  # (w, spread) at every Adam step
with runs_your("euler_solve"):
    for _ in tqdm(range(20), desc="tuning w through the sampler"):
        w_now = float(np.exp(log_w.data))
        tuner.zero_grad()
        objective, achieved = sampler_objective(log_w)
        objective.backward()
        tuner.step()
        tuning.append((w_now, achieved.item()))
    with mg.no_grad():
        tuned = euler_solve(probability_flow(float(np.exp(log_w.data))), Tensor(prior), 1.0, T_MIN, SAMPLER_STEPS).data[-1]
    print(f"w = {tuning[0][0]:.2f}: spread of the tuning batch {tuning[0][1]:.3f}; after 20 Adam steps w = {np.exp(log_w.data):.3f}, "
          f"spread {tuning[-1][1]:.3f} (target {TARGET_SPREAD})")
    print(f"2,000 new samples with the tuned w: {describe(tuned)}")
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.4))
    axes[0].plot([s for _, s in tuning], "o-", label="spread of the 256 tuning samples")
    axes[0].axhline(TARGET_SPREAD, color="gray", linestyle=":", label="target")
    axes[0].set(xlabel="Adam step on log w", ylabel="E(|x| - 2)²", title="Tuning the sampler through 100 steps")
    axes[0].legend(fontsize=8)
    axes[1].hist(ode_paths[-1].ravel(), bins=bins, density=True, alpha=0.5, label="w = 1 (as trained)")
    axes[1].hist(tuned.ravel(), bins=bins, density=True, histtype="step", linewidth=1.5, label=f"w = {np.exp(log_w.data):.2f} (tuned)")
    axes[1].plot(grid, density, "k", label="data density")
    axes[1].set(xlabel="x", title="2,000 ODE samples before and after tuning")
    axes[1].legend(fontsize=8)
    plt.show()


# %% [markdown]
# Adam overshoots, swings back and settles near the target within 20 steps, with $w$ only a few per cent above 1:
# the gradient through 100 sampler steps is an ordinary gradient. It also shows what such tuning can and cannot do.
# The spread now matches the data's, but the printed variance moved *away* from the data's 4.25: amplifying the score
# narrows the modes and pulls them slightly inwards. One knob fitted to one statistic repairs that statistic, not the
# network's errors — which is why practitioners tune sampler parameters against several statistics, or against a
# sample-quality score, while the denoiser itself is trained only on the forward process.
#
# ### What the gradient through the sampler keeps in memory — and checkpointing it by hand
#
# Every one of the 100 steps keeps its activations (the network's hidden layers for 256 samples, the slope, the new
# state) until the backward pass. Checkpointing (chapter 6 builds `minigrad.checkpoint` for it) keeps only a few
# states: run the sampler once without a graph, remembering the state at the start of each of $S$ segments; then
# walk the segments backwards, re-running each one *with* a graph from a leaf copy of its starting state and
# backpropagating the adjoint that the later segments handed back ($\bar x_{\text{start}}$ from $\bar x_{\text{end}}$,
# with `mg.gradients(..., grad=...)`), adding up the gradient of $\log w$ on the way. Only one segment's graph exists
# at any time. We measure the peak of the bytes held for backward with `minigrad.memory.track_saved_bytes`, and the
# time with `minigrad.testing.interleaved_times` (CPU time, the fastest of three runs taking turns).

# %%
def unrolled_gradient(log_w):
    objective, _ = sampler_objective(log_w)
    return mg.gradients(objective, [log_w])[0].item()


def checkpointed_gradient(log_w, segments=10):
    """The same gradient, keeping only the segment boundaries; each segment recomputed with a graph in backward."""
    times, steps = np.linspace(1.0, T_MIN, segments + 1), SAMPLER_STEPS // segments
    starts = [tuning_prior]
    with mg.no_grad():  # forward: no graph, only the state at the start of every segment
        for a, b in zip(times[:-1], times[1:]):
            starts.append(euler_solve(probability_flow(log_w.exp()), starts[-1], a, b, steps)[-1])
    end = Tensor(starts[-1].data, requires_grad=True)
    (adjoint,) = mg.gradients((spread(end) - TARGET_SPREAD) ** 2, [end])
    total = 0.0
    for k in reversed(range(segments)):  # backward: one segment's graph at a time
        start = Tensor(starts[k].data, requires_grad=True)
        end = euler_solve(probability_flow(log_w.exp()), start, times[k], times[k + 1], steps)[-1]
        adjoint, g = mg.gradients(end, [start, log_w], grad=adjoint)
        total += g.item()
    return total


with runs_your("euler_solve"):
    probe = Tensor(0.3, requires_grad=True)
    results = {}
    for name, method in [("unrolled", unrolled_gradient), ("checkpointed, 10 segments", checkpointed_gradient)]:
        with track_saved_bytes() as tracker:
            results[name] = method(probe)
        results[name] = (results[name], tracker.peak)
    seconds = interleaved_times({name: (lambda m=m: m(probe)) for name, m in
                                 [("unrolled", unrolled_gradient), ("checkpointed, 10 segments", checkpointed_gradient)]}, repeat=3)
    for name, (value, peak) in results.items():
        print(f"{name:26s} d objective / d log w = {value:+.12f}, peak held for backward {peak / 2**20:5.1f} MiB, "
              f"{seconds[name]:.2f} s of CPU")
    print(f"memory ÷ {results['unrolled'][1] / results['checkpointed, 10 segments'][1]:.1f}, time × "
          f"{seconds['checkpointed, 10 segments'] / seconds['unrolled']:.2f}")

# %% [markdown]
# The two gradients agree to rounding, and the checkpointed one holds about a tenth of the memory: one segment of
# 10 steps instead of 100 (the 11 saved states are single columns of 256 numbers, next to nothing beside a segment's
# activations). It pays with one extra forward pass through the sampler, the recomputation — which the printed time
# ratio shows. This is the trade chapter 6 studies: with $S = \sqrt n$ segments both the saved states and the one
# rebuilt segment are $O(\sqrt n)$.

# %% [markdown]
# ## Summary
#
# * A system of networks is still one graph to the engine; what learns from which loss is decided by three switches.
#   **Freezing** (`requires_grad=False`) lets gradients pass through a module without its weights collecting them;
#   a frozen subgraph with nothing trainable below it is not even recorded, so backward skips it. **Cutting**
#   (`detach`, `no_grad`) stops gradients entirely.
# * **GANs** alternate two graphs over two networks: the discriminator step cuts the generator off (its samples are
#   data), the generator step backpropagates *through* a frozen discriminator. Losses hover near the game's
#   equilibrium rather than falling to zero.
# * **Differentiable communication**: a message that is a tensor makes two agents one graph, and the listener's loss
#   trains the speaker. Cut the message and the speaker learns nothing; with a noisy channel, the trained pair
#   invented a discrete code on its own.
# * **Diffusion**: a denoiser trained on the forward noising process, one graph per step; sampling runs the reverse
#   SDE or the probability-flow ODE over 100 steps, and a loss on the samples differentiates through all of them —
#   one long graph whose memory checkpointing cuts to one segment's.
# * **Solvers in the graph**: an unrolled Euler or Runge–Kutta solver is differentiated like any code, giving exact
#   gradients of the numerical solution — whose discretisation error then biases the fit — at a memory cost linear
#   in the number of steps, which chapter 6 reduces.
#
# ## References
#
# * «Граф вычислений» (*Computational graph*), MachineLearning wiki, July 2026 — the article this course follows:
#   <http://machinelearning.ru/wiki/index.php?title=%D0%93%D1%80%D0%B0%D1%84_%D0%B2%D1%8B%D1%87%D0%B8%D1%81%D0%BB%D0%B5%D0%BD%D0%B8%D0%B9>.
# * I. Goodfellow, J. Pouget-Abadie, M. Mirza, B. Xu, D. Warde-Farley, S. Ozair, A. Courville, Y. Bengio.
#   *Generative adversarial nets.* NeurIPS 2014.
# * J. Foerster, Y. Assael, N. de Freitas, S. Whiteson. *Learning to communicate with deep multi-agent reinforcement
#   learning.* NeurIPS 2016.
# * S. Sukhbaatar, A. Szlam, R. Fergus. *Learning multiagent communication with backpropagation.* NeurIPS 2016.
# * D. Lewis. *Convention: A Philosophical Study.* Harvard University Press, 1969 — signalling games.
# * R. T. Q. Chen, Y. Rubanova, J. Bettencourt, D. Duvenaud. *Neural ordinary differential equations.* NeurIPS 2018.
# * J. Sohl-Dickstein, E. Weiss, N. Maheswaranathan, S. Ganguli. *Deep unsupervised learning using nonequilibrium
#   thermodynamics.* ICML 2015.
# * B. D. O. Anderson. *Reverse-time diffusion equation models.* Stochastic Processes and their Applications 12(3), 1982.
# * J. Ho, A. Jain, P. Abbeel. *Denoising diffusion probabilistic models.* NeurIPS 2020.
# * Y. Song, J. Sohl-Dickstein, D. P. Kingma, A. Kumar, S. Ermon, B. Poole. *Score-based generative modeling through
#   stochastic differential equations.* ICLR 2021.
# * E. Hairer, S. P. Nørsett, G. Wanner. *Solving Ordinary Differential Equations I*, 2nd ed., Springer 1993 —
#   Euler and Runge–Kutta methods and their orders.
# * A. Griewank, A. Walther. *Evaluating Derivatives*, 2nd ed., SIAM 2008 — chapter 12 on reversal schedules and
#   checkpointing.
