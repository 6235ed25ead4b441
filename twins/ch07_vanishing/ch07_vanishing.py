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
# # Chapter 7 — Vanishing and exploding gradients
#
# Backpropagation delivers exact gradients — and for deep networks and recurrent networks unrolled over long
# sequences, those exact gradients can be useless: vanishingly small for the first layers (they stop learning)
# or astronomically large (one step throws the weights anywhere, or to `inf`). Both come from the same fact: the
# gradient that reaches an early layer is a **product of many Jacobians**, and long products of numbers that are
# not close to 1 go to 0 or to infinity exponentially fast (Hochreiter 1991; Bengio, Simard & Frasconi 1994).
#
# In this chapter you will
#
# 1. derive the product and implement **`layer_grad_norms(model, x, y)`**, which measures it layer by layer;
# 2. measure gradient norms per layer in deep sigmoid and tanh networks at several initialisations, and the
#    largest singular value of each layer's Jacobian that explains them;
# 3. measure gradient norms per time step in an unrolled recurrent network, vanishing and exploding;
# 4. implement **`ResidualBlock`** and see skip connections give gradients a short path (He et al. 2016);
# 5. implement **`clip_grad_norm_(params, max_norm)`** and see it stop an exploding RNN from diverging
#    (Pascanu, Mikolov & Bengio 2013).
#
# Each experiment ends with a short **written question**, graded by your instructor (the cell that says
# *YOUR ANSWER HERE*: a few sentences, using the numbers and plots above it). Code cells marked *graded* contain
# `raise NotImplementedError()` for you to replace; the test cells after them check your work (some tests are
# hidden and run only when your notebook is graded). As in every chapter, `minigrad` is the finished reference
# library ([chapter 1](../ch01_graph/ch01_graph.ipynb#reference-library) says why).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread (set before numpy loads): steadier on shared machines

import numpy as np
import matplotlib.pyplot as plt
from tqdm.auto import tqdm

import minigrad as mg
from minigrad import nn, optim
from minigrad.diagnostics import grad_norms, jacobian_singular_values
from minigrad.nn.layers import ACTIVATIONS
from minigrad.testing import assert_close, assert_equal, drive


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
# ## 1. The gradient is a product of Jacobians
#
# Take an MLP written with row vectors, as `minigrad` computes it: $z_l = h_{l-1} W_l + b_l$ and
# $h_l = \phi(z_l)$ for $l = 1, \dots, L$, with input $h_0 = x$ and a loss $\ell(h_L)$. The chain rule, one layer
# at a time, is the backward pass of chapter 2:
#
# $$\frac{\partial \ell}{\partial h_{l-1}} = \Big(\frac{\partial \ell}{\partial h_l} \odot \phi'(z_l)\Big)\, W_l^\top
# \qquad\Longrightarrow\qquad
# \frac{\partial \ell}{\partial h_{l}} = \frac{\partial \ell}{\partial h_L}\; \prod_{k=L}^{l+1} \operatorname{diag}\big(\phi'(z_k)\big)\, W_k^\top .$$
#
# Each factor $J_k = \operatorname{diag}(\phi'(z_k)) W_k^\top$ is the (transposed) Jacobian of layer $k$. Norms are
# submultiplicative, so with $\sigma_{\max}$ the largest singular value,
#
# $$\Big\|\frac{\partial \ell}{\partial h_{l}}\Big\| \le \Big\|\frac{\partial \ell}{\partial h_L}\Big\|\;
# \prod_{k=l+1}^{L} \max|\phi'| \cdot \sigma_{\max}(W_k).$$
#
# If the factors are below 1 the gradient shrinks geometrically on its way down — it **vanishes**; if they are
# above 1 it can **explode**. The logistic sigmoid has $\max \sigma' = 1/4$, so unless the weights make up a factor
# of 4 at every layer, 20 sigmoid layers shrink gradients by $4^{-20} \approx 10^{-12}$. For tanh, $\max
# \tanh' = 1$ (at 0): the weights' scale decides. The gradient of a weight matrix is
# $\partial \ell / \partial W_l = h_{l-1}^\top\, \partial \ell / \partial z_l$: it inherits the same factor, which is
# what an optimiser sees.
#
# A quick check that the product really is the gradient: the Jacobian of a three-layer tanh network equals the
# product of its layers' Jacobians.

# %%
rng = np.random.default_rng(0)
layers = [nn.Sequential(nn.Linear(4, 4, rng=rng), nn.Tanh()) for _ in range(3)]
x0 = mg.tensor(rng.standard_normal(4))
h, product = x0, np.eye(4)
for layer in layers:
    product = mg.jacobian(layer, h).data @ product  # chain rule: J_3 J_2 J_1
    h = layer(h)
whole = mg.jacobian(nn.Sequential(*layers), x0).data
print("max |J_network - J_3 J_2 J_1| =", np.abs(whole - product).max())


# %% [markdown]
# ## 2. Measuring it: gradient norms per layer
#
# `layer_grad_norms(model, x, y)` returns, for every `nn.Linear` layer of `model` in the order
# `model.modules()` lists them (input side first), the Frobenius norm of the gradient of the mean squared error
# loss `nn.mse_loss(model(x), y)` with respect to that layer's **weight**, as a numpy array.
#
# It is a diagnostic that may run in the middle of training, so it must not disturb training: leave every
# parameter's `.grad` exactly as it was. `mg.gradients(loss, tensors)` returns gradients without accumulating them
# (`loss.backward()` would add to whatever `.grad` already holds).

# %% nbgrader={"grade": false, "grade_id": "layer_grad_norms", "locked": false, "schema_version": 3, "solution": true}
def layer_grad_norms(model, x, y):
    """‖∂loss/∂W‖ (Frobenius) for the weight W of each nn.Linear in model.modules() order.

    loss = nn.mse_loss(model(x), y). Returns a numpy array with one norm per Linear layer and
    leaves every parameter's .grad untouched.
    """
    ### BEGIN SOLUTION
    weights = [module.weight for module in model.modules() if isinstance(module, nn.Linear)]
    loss = nn.mse_loss(model(x), y)
    return np.array([np.linalg.norm(g.data) for g in mg.gradients(loss, weights)])
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "helpers_layer_grad_norms", "locked": true, "schema_version": 3, "solution": false}
# How the tests work: a *driver* (the functions marked "Driver") builds a model from a seed, calls your function
# on it and returns what came back as plain data: numbers, strings, lists, arrays, never tensors or models.
# `drive(driver, ...)` runs it; a *checker* then builds the same case itself and compares. When your notebook is
# graded, drivers run beside your code and checkers in a separate process, so a test trusts nothing but those facts.

def as_result(value):
    """What a function returned, as it crosses: an array or a number as it is, a Tensor as its data, a list or
    tuple of numbers as an array, anything else as the name of its type."""
    if isinstance(value, mg.Tensor):
        value = value.data
    if isinstance(value, (list, tuple)):
        try:
            value = np.array([v.data if isinstance(v, mg.Tensor) else v for v in value], dtype=float)
        except (TypeError, ValueError):
            return f"a {type(value).__name__} of {', '.join(sorted({type(v).__name__ for v in value}))}"
    if isinstance(value, np.ndarray):
        return value if value.dtype.kind in "biuf" else f"a numpy array of {value.dtype}"
    if isinstance(value, np.number) or type(value) in (int, float):
        return value
    return f"a {type(value).__name__}"


def grad_of(tensor):
    """A tensor's .grad as it crosses: a copy of its data, None without one, or the name of what else it holds."""
    grad = tensor.grad
    if grad is None:
        return None
    return np.array(grad.data) if isinstance(grad, mg.Tensor) else f"a {type(grad).__name__}"


def check_shape(got, shape, what):
    """Fail, saying what came back, unless `got` is a numpy array of numbers of that shape."""
    if not isinstance(got, np.ndarray) or got.dtype.kind not in "biuf":
        shown = got if isinstance(got, str) else f"{got!r:.200}"
        raise AssertionError(f"{what}: expected an array of shape {tuple(shape)}, got {shown}")
    if got.shape != tuple(shape):
        raise AssertionError(f"{what}: expected shape {tuple(shape)}, got shape {got.shape}")


def check_array(got, expected, what, **tolerance):
    """Fail, saying what came back, unless `got` is a numpy array of numbers close to `expected`."""
    check_shape(got, np.shape(expected), what)
    assert_close(got, expected, what, **tolerance)


def norms_case(case):
    """(model, x, y) for a layer_grad_norms test case, ("mlp", seed), ("small", seed), ("deep", seed) or
    ("nested", seed): everything is drawn from the seed, so a driver and a checker build the same case."""
    kind, seed = case
    rng = np.random.default_rng(seed)
    if kind == "mlp":  # 3 Linear layers
        model, n_in, n_out, batch = nn.MLP([3, 5, 4, 2], activation="tanh", rng=rng), 3, 2, 6
    elif kind == "small":  # 2 Linear layers
        model, n_in, n_out, batch = nn.MLP([2, 3, 1], activation="tanh", rng=rng), 2, 1, 4
    elif kind == "deep":  # 7 sigmoid layers
        model, n_in, n_out, batch = nn.MLP([2] + [8] * 6 + [1], activation="sigmoid", rng=rng), 2, 1, 5
    elif kind == "nested":  # a Linear inside a Sequential inside a Sequential
        model = nn.Sequential(nn.Linear(2, 3, rng=rng), nn.Sequential(nn.Tanh(), nn.Linear(3, 3, rng=rng)),
                              nn.Linear(3, 1, rng=rng))
        n_in, n_out, batch = 2, 1, 5
    else:
        raise ValueError(f"unknown layer_grad_norms case {case!r}")
    x, y = mg.tensor(rng.standard_normal((batch, n_in))), mg.tensor(rng.standard_normal((batch, n_out)))
    return model, x, y


def preset_grads(model, preset):
    """Gradients of a training step in progress, not yet used by the optimiser: None (no .grad anywhere),
    "first" (the first weight's .grad holds 7.0s) or "all" (that, and every other .grad holds 1.0s).
    Returns each parameter's .grad tensor (None where it has none)."""
    params = model.parameters()
    for p in params:
        p.grad = mg.tensor(np.ones(p.shape)) if preset == "all" else None
    if preset in ("first", "all"):
        params[0].grad = mg.tensor(np.full(params[0].shape, 7.0))
    return [p.grad for p in params]


def measured_norms(case, preset=None, calls=1):
    """Driver: your layer_grad_norms(model, x, y) on the case's model, `calls` times in a row, after
    preset_grads(model, preset). Returns each call's result and, for every parameter, its .data and .grad
    afterwards and whether .grad is still the very tensor it held before."""
    model, x, y = norms_case(case)
    params = model.parameters()
    before = preset_grads(model, preset)
    results = [as_result(layer_grad_norms(model, x, y)) for _ in range(calls)]
    return {"norms": results, "data": [np.array(p.data) for p in params], "grads": [grad_of(p) for p in params],
            "kept": [p.grad is grad for p, grad in zip(params, before)]}


def reference_norms(case):
    """The norms computed another way, on the checker's own copy of the case: backward, then read the .grad."""
    model, x, y = norms_case(case)
    nn.mse_loss(model(x), y).backward()
    return np.array([np.linalg.norm(m.weight.grad.data) for m in model.modules() if isinstance(m, nn.Linear)])


def check_norms(got, case, what, shape_what=None):
    """`got` (one result from measured_norms) must be the case's norms as a numpy array, first layer first."""
    expected = reference_norms(case)
    if not isinstance(got, np.ndarray):
        shown = got if isinstance(got, str) else f"{got!r:.200}"
        raise AssertionError(f"{what}: expected a numpy array with one norm per Linear layer, got {shown}")
    assert_equal(got.shape, expected.shape, shape_what or f"shape of {what} (one norm per Linear layer)")
    check_array(got, expected, what)


def check_left_alone(got, case, preset, what):
    """Every parameter's .data and .grad after `what` (from measured_norms) must be as before the call: the
    checker's own copy of the case, with the same preset gradients, says what they were."""
    model, _, _ = norms_case(case)
    before = preset_grads(model, preset)
    named = list(model.named_parameters())
    if type(got) is not dict or any(type(got.get(k)) is not list or len(got[k]) != len(named) for k in ("data", "grads", "kept")):
        raise AssertionError(f"{what}: the driver's result is malformed: {got!r:.200}")
    for (name, p), data, grad, kept, old in zip(named, got["data"], got["grads"], got["kept"], before):
        name = f"model.{name}"
        check_array(data, p.data, f"{name}.data after {what} (it must not change the parameters)", rtol=0, atol=0)
        if old is None:
            if grad is not None:
                raise AssertionError(f"{what} gave a parameter a .grad ({name} had none, now has {grad if isinstance(grad, str) else 'one'})")
            continue
        if grad is None:
            raise AssertionError(f"{what} changed a parameter's .grad: {name}.grad was set, now it is None")
        check_array(grad, old.data, f"{what} changed a parameter's .grad ({name}.grad)", rtol=0, atol=0)
        if kept is not True:
            raise AssertionError(f"{what} changed a parameter's .grad: {name}.grad is no longer the tensor it was "
                                 f"(leave every .grad exactly as it was)")


# %% nbgrader={"grade": true, "grade_id": "test_layer_grad_norms_values", "locked": true, "points": 3, "schema_version": 3, "solution": false}
norms = drive(measured_norms, ("mlp", 0))["norms"][0]
check_norms(norms, ("mlp", 0), "layer_grad_norms (first layer first)", "shape of layer_grad_norms for an MLP with 3 Linear layers")
print("layer_grad_norms:", np.round(norms, 4))
### BEGIN HIDDEN TESTS
check_norms(drive(measured_norms, ("deep", 2))["norms"][0], ("deep", 2), "layer_grad_norms of a 7-layer sigmoid MLP")
check_norms(drive(measured_norms, ("nested", 3))["norms"][0], ("nested", 3), "layer_grad_norms with nested Sequentials")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_layer_grad_norms_leaves_grads", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# The first weight holds a gradient from an earlier step, not yet used by the optimiser; the others have none.
got = drive(measured_norms, ("small", 1), "first", 2)
check_left_alone(got, ("small", 1), "first", "layer_grad_norms")
check_norms(got["norms"][0], ("small", 1), "layer_grad_norms when a .grad is already set")
check_norms(got["norms"][1], ("small", 1), "layer_grad_norms called twice (the result must not accumulate)")
print("layer_grad_norms: .grad untouched")
### BEGIN HIDDEN TESTS
got = drive(measured_norms, ("small", 1), "all")
check_norms(got["norms"][0], ("small", 1), "layer_grad_norms when every .grad is set")
check_left_alone(got, ("small", 1), "all", "layer_grad_norms when every .grad is set")
### END HIDDEN TESTS

# %% [markdown]
# ### Experiment: depth, activation and initialisation
#
# Thirty hidden layers of width 64, on a 2-D regression problem, with weights drawn $\mathcal{N}(0, s^2)$ at three
# scales: small ($s^2 = 0.5/n_{\text{in}}$), Glorot/Xavier ($s^2 = 2/(n_{\text{in}} + n_{\text{out}})$, chosen to keep
# the variance of activations and of gradients roughly constant through tanh layers; Glorot & Bengio 2010) and large
# ($s^2 = 4/n_{\text{in}}$). Two measurements per network, both on a log scale:
#
# * top row: $\|\partial \ell / \partial W_l\|$ for every layer — your `layer_grad_norms`, what an optimiser sees;
# * bottom row: $\|\partial \ell / \partial h_l\|$, the **backpropagated signal** at the output of each hidden layer
#   (`grad_norms(loss, tensors)` from `minigrad.diagnostics` returns the norms of the gradients of `loss` with
#   respect to any tensors, intermediate ones included) — the product of Jacobians itself.
#
# The two differ by the forward pass: $\partial \ell / \partial W_l = h_{l-1}^\top\, \partial \ell / \partial z_l$
# also contains the activations $h_{l-1}$.

# %%
rng = np.random.default_rng(0)
X = rng.uniform(-2, 2, (256, 2))
data_x, data_y = mg.tensor(X), mg.tensor(np.sin(2 * X[:, :1]) * np.cos(1.5 * X[:, 1:]))

INITS = {
    "small  s² = 0.5/n_in": lambda n_in, n_out: np.sqrt(0.5 / n_in),
    "Xavier s² = 2/(n_in+n_out)": lambda n_in, n_out: np.sqrt(2 / (n_in + n_out)),
    "large  s² = 4/n_in": lambda n_in, n_out: np.sqrt(4 / n_in),
}


def initialise(model, std, seed=0):
    # Gaussian weights with standard deviation std(n_in, n_out), zero biases.
    rng = np.random.default_rng(seed)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            n_in, n_out = m.weight.shape
            m.weight.data = rng.standard_normal((n_in, n_out)) * std(n_in, n_out)
            m.bias.data[:] = 0.0
    return model


def deep_mlp(activation, std, depth=30, width=64):
    return initialise(nn.MLP([2] + [width] * depth + [1], activation=activation), std)


def signal_norms(model, x, y):
    # ‖∂ℓ/∂h_l‖ at the output of every hidden layer (after its activation), input side first.
    hidden, h = [], x
    for module in model:
        h = module(h)
        if not isinstance(module, nn.Linear):
            hidden.append(h)
    return grad_norms(nn.mse_loss(h, y), hidden)


signals, signal_rate = {}, {}  # the signal per layer; its average factor per layer on its way down
for activation in ["sigmoid", "tanh"]:
    for name, std in INITS.items():
        signals[activation, name] = signal = signal_norms(deep_mlp(activation, std), data_x, data_y)
        signal_rate[activation, name] = np.exp(np.mean(np.diff(np.log(signal))))

with uses_your("layer_grad_norms"):
    fig, axes = plt.subplots(2, 2, figsize=(11, 6.5), sharex=True)
    for column, activation in enumerate(["sigmoid", "tanh"]):
        for name, std in INITS.items():
            weights = layer_grad_norms(deep_mlp(activation, std), data_x, data_y)
            signal = signals[activation, name]
            axes[0, column].semilogy(np.arange(1, len(weights) + 1), weights, "o-", ms=3, label=name)
            axes[1, column].semilogy(np.arange(1, len(signal) + 1), signal, "o-", ms=3, label=name)
        axes[0, column].set_title(f"{activation}, 30 hidden layers")
        axes[1, column].set_xlabel("layer (1 = next to the input)")
    axes[0, 0].set_ylabel(r"$\|\partial \ell / \partial W_l\|$"); axes[1, 0].set_ylabel(r"$\|\partial \ell / \partial h_l\|$")
    axes[1, 1].legend(fontsize=8); plt.tight_layout(); plt.show()

# %% [markdown]
# **Question 1.** In the sigmoid network, both rows fall steeply towards the input at all three scales. In the
# tanh network, the backpropagated signal (bottom) vanishes, stays level or grows towards the input depending on the
# scale, yet the weight-gradient norms (top) vary much less with depth — with small weights they are flat, only
# their level is tiny. Explain both, using the bound of section 1 and
# $\partial \ell / \partial W_l = h_{l-1}^\top\, \partial \ell / \partial z_l$.

# %% [markdown] nbgrader={"grade": true, "grade_id": "written_init_norms", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer.* Every layer multiplies the backpropagated signal by $\operatorname{diag}(\phi'(z))\,W^\top$. For the
# sigmoid $\phi' \le 1/4$, and none of these scales makes the weights stretch by a factor 4 per layer, so the signal
# shrinks geometrically (many orders of magnitude over 30 layers) whatever the scale; the sigmoid's outputs stay
# around 0.5, so the activations $h_{l-1}$ do not shrink and the weight gradients inherit the signal's decay. For tanh,
# $\phi' \approx 1$ near 0, so the weights decide: small weights shrink the signal at every layer, Xavier's scale keeps
# it level, large weights make it grow towards the input (tempered where units saturate). In the nearly linear
# regime of small weights, the forward activations shrink going up by the same factor per layer as the signal
# shrinks going down, so the product $h_{l-1}^\top \partial\ell/\partial z_l$ is flat — tiny everywhere rather than tiny
# at the bottom: weight-gradient norms alone can hide a vanishing signal. With large weights the units saturate, the
# activations cannot keep growing, and part of the signal's growth remains visible in the weight gradients.

# %% [markdown]
# ## 3. The singular values of each layer's Jacobian
#
# The bound uses, layer by layer, $\sigma_{\max}(J_k)$ with $J_k = \operatorname{diag}(\phi'(z_k))\, W_k^\top$: the most
# the layer can stretch a vector passing back through it. A vector pointing in a random direction is stretched by
# about the **root-mean-square** singular value $\sqrt{\tfrac{1}{n}\sum_i \sigma_i^2} = \|J_k\|_F / \sqrt{n}$ instead.
# `jacobian_singular_values(layers, x)` (from `minigrad.diagnostics`) computes all singular values of each layer's
# Jacobian, with `mg.jacobian`, along one forward pass of a single example. Here a "layer" is a `Linear` followed by
# its activation; the legend shows geometric means over the layers (the first, 2 → 64, left out).

# %%
example = data_x.data[0]
plt.figure(figsize=(8, 4))
for (name, std), color in zip(tqdm(list(INITS.items()), desc="initialisations"), ["C0", "C1", "C2"]):
    model = deep_mlp("tanh", std)
    pairs = [nn.Sequential(model[i], model[i + 1]) for i in range(0, len(model) - 1, 2)]
    values = jacobian_singular_values(pairs, example)
    top = np.array([v[0] for v in values])
    rms = np.array([np.sqrt(np.mean(v**2)) for v in values])
    mean_top, mean_rms = np.exp(np.mean(np.log(top[1:]))), np.exp(np.mean(np.log(rms[1:])))
    layer = np.arange(1, len(top) + 1)
    plt.semilogy(layer, top, "o-", ms=3, color=color, label=f"{name}: σ_max {mean_top:.2f}, rms {mean_rms:.2f}")
    plt.semilogy(layer, rms, "s--", ms=3, color=color)
    print(f"{name}: σ_max {mean_top:.2f}, rms {mean_rms:.2f}, measured signal factor per layer "
          f"{1 / signal_rate['tanh', name]:.2f} (sigmoid: {1 / signal_rate['sigmoid', name]:.2f})")
plt.plot([], [], "k-", label="solid: σ_max (largest singular value)")
plt.plot([], [], "k--", label="dashed: rms singular value")
plt.axhline(1.0, color="k", lw=0.8)
plt.gca().yaxis.set_major_formatter(plt.ScalarFormatter())
plt.gca().yaxis.set_minor_formatter(plt.NullFormatter())
plt.yticks([0.5, 0.7, 1, 1.5, 2, 3, 5])
plt.xlabel("layer (Linear + tanh; 1 = next to the input)"); plt.ylabel("singular values of $J_l$")
plt.title("tanh, 30 layers: how much each layer stretches")
plt.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1)); plt.show()

# %% [markdown]
# **Question 2.** For each tanh initialisation, compare the geometric means of $\sigma_{\max}$ and of the rms
# singular value with the measured factor per layer by which the signal of section 2 grows on its way down (printed
# above). Which one predicts it? Why is the product of the $\sigma_{\max}$ only an upper bound, and why is it a poor
# predictor over 30 layers?

# %% [markdown] nbgrader={"grade": true, "grade_id": "written_spectral", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer.* The rms singular value (about 0.70, 0.98 and 1.15 here) matches the measured per-layer factor of
# the signal, while $\sigma_{\max}$ is above 1 for all three initialisations (about 1.4, 1.9 and 2.8) although the
# small-init signal shrinks. $\|AB\| \le \|A\|\,\|B\|$ is an equality only if what comes out of one layer lies along
# the most-stretched direction of the next; a generic gradient spreads its energy over all singular directions, so
# each layer stretches it by roughly the rms singular value. Over 30 layers the gap compounds: $(1.9/0.98)^{30}$ is a
# factor of about $10^8$, so the product of $\sigma_{\max}$ says little about the actual growth.

# %% [markdown]
# ## 4. Recurrent networks: the same product, over time
#
# A recurrent network applies **one** cell at every time step, $h_t = \phi(x_t W_{ih} + h_{t-1} W_{hh} + b)$.
# Unrolled over $T$ steps it is a $T$-layer network whose layers share the matrix $W_{hh}$, and the gradient reaching
# step $t$ from a loss at step $T$ contains
#
# $$\frac{\partial \ell}{\partial h_t} = \frac{\partial \ell}{\partial h_T}\prod_{k=T}^{t+1}
# \operatorname{diag}\big(\phi'(z_k)\big)\, W_{hh}^\top .$$
#
# With the *same* matrix in every factor, the growth rate is governed by the singular values of $W_{hh}$ (for an
# orthogonal $W_{hh}$ scaled by $\rho$, every singular value is $\rho$). A linear RNN makes it exact: $\|\partial \ell
# / \partial h_t\| \propto \rho^{T-t}$. Below, `nn.RNN` runs 60 steps, `hidden_states` returns the state tensor of
# every step, and `grad_norms(loss, states)` gives $\|\partial \ell / \partial h_t\|$ for each of them.

# %%
T, HIDDEN = 60, 32
sequence = mg.tensor(np.random.default_rng(0).standard_normal((T, 16, 1)))


def orthogonal(n, scale, seed=2):
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    return scale * q  # every singular value equals `scale`


def per_step_norms(activation, scale):
    rnn = nn.RNN(1, HIDDEN, activation=activation, rng=np.random.default_rng(1))
    rnn.cell.weight_hh.data = orthogonal(HIDDEN, scale)
    states = rnn.hidden_states(sequence)
    return grad_norms(states[-1].sum(), states)


fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
for ax, (activation, scales) in zip(axes, [("identity", [0.9, 1.0, 1.1]), ("tanh", [0.9, 1.5, 3.0])]):
    for scale in scales:
        ax.semilogy(np.arange(1, T + 1), per_step_norms(activation, scale), label=f"ρ = {scale}")
    ax.set(title=f"{'linear' if activation == 'identity' else activation} RNN, loss at step {T}",
           xlabel="time step t", ylabel=r"$\|\partial \ell / \partial h_t\|$")
    ax.legend()
plt.show()


# %% [markdown]
# **Question 3.** Read the slope of the linear RNN's curves (per step) and relate it to $\rho$. For the tanh RNN,
# why does $\rho = 0.9$ vanish faster than in the linear case, and what does that imply for learning a dependency
# between step 1 and step 60?

# %% [markdown] nbgrader={"grade": true, "grade_id": "written_rnn", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer.* For the linear RNN each step back multiplies the gradient by $\rho$ exactly: the log-norm falls by
# $\log 0.9$ per step for $\rho = 0.9$ (a factor $0.9^{59} \approx 2 \cdot 10^{-3}$ over the sequence), stays flat for
# $\rho = 1$ and grows by a factor 1.1 per step for $\rho = 1.1$. Tanh adds a factor $\tanh'(z) \le 1$ per step, so
# with $\rho = 0.9$ every factor is even smaller and the gradient vanishes faster; with large $\rho$ the product can
# still explode where units are not saturated. A signal at step 1 then reaches the loss at step 60 through a
# gradient many orders of magnitude smaller (or larger) than the one from recent steps: the network learns the
# short-range dependencies and cannot learn the long one (Bengio, Simard & Frasconi 1994).

# %% [markdown]
# ## 5. Skip connections: a short path for gradients
#
# A residual block computes $y = x + F(x)$ instead of $y = F(x)$ (He et al. 2016). Its Jacobian is
#
# $$\frac{\partial y}{\partial x} = I + \frac{\partial F}{\partial x},$$
#
# so the backward pass through $L$ blocks multiplies by $\prod_l (I + \partial F_l / \partial x)$. Expanded, this
# product contains the identity path — a gradient that reaches the first block without passing through a single
# nonlinearity — plus every shorter or longer detour through the $F_l$. Gradients no longer need every factor to be
# close to 1; they need only that the branches do not cancel the identity. The same idea carries the gradient
# through Transformers, highway networks, and — over time — LSTMs' cell state.
#
# Implement `ResidualBlock(dim, hidden=None, activation="tanh", rng=None)`:
#
# * attributes `linear1 = nn.Linear(dim, hidden, rng=rng)`, `activation` (an instance of `ACTIVATIONS[activation]`,
#   the dictionary `nn.MLP` uses: `"tanh"`, `"relu"`, `"sigmoid"`, `"identity"`), and
#   `linear2 = nn.Linear(hidden, dim, rng=rng)`, created in that order; `hidden` defaults to `dim`;
# * an unknown activation name raises `ValueError`;
# * `forward(x)` returns `x + linear2(activation(linear1(x)))`, a new tensor (it leaves `x` as it was).

# %% nbgrader={"grade": false, "grade_id": "ResidualBlock", "locked": false, "schema_version": 3, "solution": true}
class ResidualBlock(nn.Module):
    """y = x + linear2(activation(linear1(x))), for inputs with `dim` features."""

    def __init__(self, dim, hidden=None, activation="tanh", rng=None):
        ### BEGIN SOLUTION
        if activation not in ACTIVATIONS:
            raise ValueError(f"ResidualBlock: activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        hidden = dim if hidden is None else hidden
        self.linear1 = nn.Linear(dim, hidden, rng=rng)
        self.activation = ACTIVATIONS[activation]()
        self.linear2 = nn.Linear(hidden, dim, rng=rng)
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        return x + self.linear2(self.activation(self.linear1(x)))
        ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "helpers_ResidualBlock", "locked": true, "schema_version": 3, "solution": false}
PHI = {"tanh": np.tanh, "relu": lambda z: np.maximum(z, 0), "sigmoid": lambda z: 1 / (1 + np.exp(-z)), "identity": lambda z: z}


def set_weights(linear, weight, bias):
    linear.weight.data = np.array(weight, dtype=float)
    linear.bias.data = np.array(bias, dtype=float)


def random_weights(dim, hidden, seed):
    """(W1, b1, W2, b2) for a block with `dim` features and `hidden` units, drawn from the seed."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((dim, hidden)) / np.sqrt(dim), rng.standard_normal(hidden) * 0.1,
            rng.standard_normal((hidden, dim)) / np.sqrt(hidden), rng.standard_normal(dim) * 0.1)


def branch(x, weights, phi):
    """F(x) = phi(x W1 + b1) W2 + b2 in numpy, for weights (W1, b1, W2, b2)."""
    W1, b1, W2, b2 = (np.asarray(w, dtype=float) for w in weights)
    return phi(x @ W1 + b1) @ W2 + b2


def new_block(dim, options):
    """Your ResidualBlock(dim, **options), an option "seed" passed as rng=np.random.default_rng(seed)."""
    options = dict(options)
    if "seed" in options:
        options["rng"] = np.random.default_rng(options.pop("seed"))
    return ResidualBlock(dim, **options)


def built_block(dim, options):
    """Driver: builds new_block(dim, options); returns "ValueError" if that raised one, else the shapes of
    linear1.weight and linear2.weight, the activation's class name and the ACTIVATIONS names it is an
    instance of, every parameter's name and shape, and the two weights' values."""
    try:
        block = new_block(dim, options)
    except ValueError:
        return "ValueError"
    return {"linear1": tuple(block.linear1.weight.shape), "linear2": tuple(block.linear2.weight.shape),
            "activation": type(block.activation).__name__,
            "kinds": [name for name, kind in ACTIVATIONS.items() if isinstance(block.activation, kind)],
            "parameters": [(name, tuple(p.shape)) for name, p in block.named_parameters()],
            "weights": [np.array(block.linear1.weight.data), np.array(block.linear2.weight.data)]}


def block_run(dim, options, weights, x, upstream):
    """Driver: new_block(dim, options) with weights (W1, b1, W2, b2) put into linear1 and linear2, then
    y = block(x) for a leaf x that requires grad, and y.backward(upstream). Returns y's data, x's data
    afterwards, x.grad, and every parameter's name, shape and .grad."""
    block = new_block(dim, options)
    W1, b1, W2, b2 = weights
    set_weights(block.linear1, W1, b1)
    set_weights(block.linear2, W2, b2)
    x = mg.tensor(x, requires_grad=True)
    y = block(x)
    if not isinstance(y, mg.Tensor):
        return f"a {type(y).__name__}"
    output = np.array(y.data)
    y.backward(upstream)
    return {"output": output, "x": np.array(x.data), "x_grad": grad_of(x),
            "parameters": [(name, tuple(p.shape), grad_of(p)) for name, p in block.named_parameters()]}


def block_jacobian(dim, options, weights, x):
    """Driver: the Jacobian dy/dx (mg.jacobian) of new_block(dim, options), with the given weights, at a 1-D x."""
    block = new_block(dim, options)
    W1, b1, W2, b2 = weights
    set_weights(block.linear1, W1, b1)
    set_weights(block.linear2, W2, b2)
    return np.array(mg.jacobian(block, mg.tensor(x)).data)


def check_built(got, what):
    """The facts from built_block, after checking their form (a block that raised fails here)."""
    if got == "ValueError":
        raise AssertionError(f"{what} raised ValueError")
    shape = lambda s: type(s) is tuple and all(type(n) is int for n in s)
    if (type(got) is not dict or not shape(got.get("linear1")) or not shape(got.get("linear2"))
            or type(got.get("activation")) is not str or type(got.get("kinds")) is not list
            or type(got.get("parameters")) is not list
            or not all(type(e) is tuple and len(e) == 2 and type(e[0]) is str and shape(e[1]) for e in got["parameters"])
            or type(got.get("weights")) is not list or len(got["weights"]) != 2):
        raise AssertionError(f"{what}: the driver's result is malformed: {got!r:.200}")
    return got


def expected_run(activation, weights, x, upstream):
    """The checker's own y = x + F(x) (numpy) and gradients of x and of the four parameters (reference minigrad)."""
    W1, b1, W2, b2 = (mg.tensor(np.array(w, dtype=float), requires_grad=True) for w in weights)
    xt = mg.tensor(np.array(x, dtype=float), requires_grad=True)
    y = xt + ACTIVATIONS[activation]()(xt @ W1 + b1) @ W2 + b2
    y.backward(np.array(upstream, dtype=float))
    grads = {"linear1.weight": W1, "linear1.bias": b1, "linear2.weight": W2, "linear2.bias": b2}
    return x + branch(x, weights, PHI[activation]), xt.grad.data, {k: t.grad.data for k, t in grads.items()}


def check_block_run(got, activation, weights, x, upstream, what, x_grad_what=None, parameters=True):
    """`got` (from block_run) against the checker's own values: the output (`what`), x left as it was, and
    x.grad (`x_grad_what`, if given) and the parameters' gradients (if `parameters`) after y.backward."""
    if isinstance(got, str):
        raise AssertionError(f"{what}: expected the block to return a Tensor, got {got}")
    if (type(got) is not dict or set(got) != {"output", "x", "x_grad", "parameters"} or type(got["parameters"]) is not list
            or not all(type(e) is tuple and len(e) == 3 and type(e[0]) is str for e in got["parameters"])):
        raise AssertionError(f"{what}: the driver's result is malformed: {got!r:.200}")
    output, x_grad, grads = expected_run(activation, weights, x, upstream)
    check_array(got["output"], output, what)
    check_array(got["x"], x, "x.data after the forward pass (ResidualBlock must leave its input as it was)", rtol=0, atol=0)
    if x_grad_what:
        if got["x_grad"] is None:
            raise AssertionError(f"{x_grad_what}: x.grad is None after y.backward(g): no gradient reached x")
        check_array(got["x_grad"], x_grad, x_grad_what)
    if parameters:
        found = {name: grad for name, _, grad in got["parameters"]}
        for name, expected in grads.items():
            if name not in found:
                raise AssertionError(f"{what}: the block has no parameter {name}; it has {sorted(found)}")
            if found[name] is None:
                raise AssertionError(f"{what}: {name}.grad is None after y.backward(g): {name} does not take part in y")
            check_array(found[name], expected, f"{name}.grad after y.backward(g), {what}")


# %% nbgrader={"grade": true, "grade_id": "test_ResidualBlock_structure", "locked": true, "points": 2, "schema_version": 3, "solution": false}
got = check_built(drive(built_block, 3, {"hidden": 5, "activation": "sigmoid", "seed": 0}), "ResidualBlock(3, hidden=5, activation='sigmoid')")
assert_equal(got["linear1"], (3, 5), "linear1.weight.shape of ResidualBlock(3, hidden=5)")
assert_equal(got["linear2"], (5, 3), "linear2.weight.shape of ResidualBlock(3, hidden=5)")
assert got["kinds"] == ["sigmoid"], f"activation='sigmoid' should give an nn.Sigmoid, got a {got['activation']}"
assert_equal(len(got["parameters"]), 4, "number of parameter tensors (two weights, two biases)")
assert_equal(check_built(drive(built_block, 4, {}), "ResidualBlock(4)")["linear1"], (4, 4), "linear1.weight.shape when hidden defaults to dim")
print("ResidualBlock: structure as specified")
### BEGIN HIDDEN TESTS
if drive(built_block, 3, {"activation": "swish"}) != "ValueError":
    raise AssertionError("ResidualBlock(3, activation='swish') should raise ValueError")
got = check_built(drive(built_block, 2, {"activation": "relu"}), "ResidualBlock(2, activation='relu')")
assert got["kinds"] == ["relu"], f"activation='relu' should give an nn.ReLU, got a {got['activation']}"
got = check_built(drive(built_block, 2, {}), "ResidualBlock(2)")
assert got["kinds"] == ["tanh"], f"the default activation is tanh, got a {got['activation']}"
got, b = check_built(drive(built_block, 3, {"hidden": 2, "seed": 5}), "ResidualBlock(3, hidden=2)"), np.random.default_rng(5)
check_array(got["weights"][0], nn.Linear(3, 2, rng=b).weight.data, "linear1 drawn first from rng")
check_array(got["weights"][1], nn.Linear(2, 3, rng=b).weight.data, "linear2 drawn next from rng")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_ResidualBlock_forward", "locked": true, "points": 3, "schema_version": 3, "solution": false}
weights = ([[1.0, -1.0, 0.5], [0.0, 2.0, -0.5]], [0.1, 0.0, -0.2], [[1.0, 0.0], [0.5, -1.0], [0.0, 2.0]], [0.0, 0.3])
x, g = np.array([[0.5, -1.0], [2.0, 0.0]]), np.array([[1.0, -2.0], [0.5, 3.0]])
got = drive(block_run, 2, {"hidden": 3, "activation": "tanh"}, weights, x, g)
check_block_run(got, "tanh", weights, x, g, "ResidualBlock(x) = x + linear2(tanh(linear1(x)))")
print("ResidualBlock: forward is x + F(x)")
### BEGIN HIDDEN TESTS
weights, xw = random_weights(4, 7, 3), np.random.default_rng(4).standard_normal((5, 4))
got = drive(block_run, 4, {"hidden": 7, "activation": "sigmoid", "seed": 3}, weights, xw, np.ones((5, 4)))
check_block_run(got, "sigmoid", weights, xw, np.ones((5, 4)), "sigmoid block, hidden 7")
weights, xr = random_weights(3, 3, 6), np.random.default_rng(7).standard_normal((2, 3))
got = drive(block_run, 3, {"activation": "relu", "seed": 6}, weights, xr, xr[::-1].copy())
check_block_run(got, "relu", weights, xr, xr[::-1].copy(), "relu block")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_ResidualBlock_skip", "locked": true, "points": 2, "schema_version": 3, "solution": false}
W1, b1, _, _ = random_weights(3, 3, 1)
weights = (W1, b1, np.zeros((3, 3)), np.zeros(3))  # F(x) = 0: only the skip is left
x, g = np.array([[1.0, -2.0, 0.5]]), np.array([[1.0, 2.0, 3.0]])
got = drive(block_run, 3, {"activation": "tanh", "seed": 1}, weights, x, g)
check_block_run(got, "tanh", weights, x, g, "ResidualBlock(x) when linear2 is all zeros (the identity)",
                x_grad_what="the gradient through a block whose branch is zero (passed unchanged)", parameters=False)
print("ResidualBlock: the skip passes values and gradients through")
### BEGIN HIDDEN TESTS
W1, b1, W2, b2 = weights = random_weights(3, 3, 2)
xf = np.random.default_rng(3).standard_normal(3)
jac = drive(block_jacobian, 3, {"activation": "tanh"}, weights, xf)
z = xf @ W1 + b1
expected = np.eye(3) + (W2.T * (1 - np.tanh(z) ** 2)) @ W1.T
check_array(jac, expected, "the block's Jacobian I + dF/dx")
g = np.random.default_rng(4).standard_normal((2, 3))
xs = np.random.default_rng(5).standard_normal((2, 3))
check_block_run(drive(block_run, 3, {"activation": "tanh"}, weights, xs, g), "tanh", weights, xs, g,
                "ResidualBlock(x) for random weights", x_grad_what="x.grad through a block: g (the skip) + g dF/dx (the branch)",
                parameters=False)
### END HIDDEN TESTS

# %% [markdown]
# ### Experiment: ten blocks with and without the skip
#
# Two networks with the same layers: `Linear(2, 32)`, ten blocks of two `Linear(32, 32)` layers around an
# activation, `Linear(32, 1)`. In one the blocks are your `ResidualBlock`s; in the other, the same blocks without
# the skip (`PlainBlock` below overrides `forward` to return only $F(x)$). First the gradient norms at
# initialisation (tanh and sigmoid), then 200 Adam steps of the tanh networks on the regression problem of
# section 2.

# %%
class PlainBlock(ResidualBlock):
    # The same two layers without the skip connection: y = F(x).
    def forward(self, x):
        return self.linear2(self.activation(self.linear1(x)))


def ten_block_net(block, activation, seed=1):
    rng = np.random.default_rng(seed)
    blocks = [block(32, activation=activation, rng=rng) for _ in range(10)]
    return nn.Sequential(nn.Linear(2, 32, rng=rng), *blocks, nn.Linear(32, 1, rng=rng))


def train(model, steps=200, lr=3e-3, desc=""):
    opt = optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in tqdm(range(steps), desc=desc, leave=False):
        loss = nn.mse_loss(model(data_x), data_y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


with uses_your("ResidualBlock", "layer_grad_norms"):
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    for activation, style in [("tanh", "-"), ("sigmoid", "--")]:
        for block, color in [(ResidualBlock, "C0"), (PlainBlock, "C3")]:
            label = f"{activation}, {'with' if block is ResidualBlock else 'without'} skip"
            model = ten_block_net(block, activation)
            norms = layer_grad_norms(model, data_x, data_y)
            left.semilogy(np.arange(1, len(norms) + 1), norms, style, color=color, marker="o", ms=3, label=label)
            if activation == "tanh":
                right.semilogy(train(model, desc=label), style, color=color, label=label)
    left.set(xlabel="Linear layer (input side first)", ylabel=r"$\|\partial \ell / \partial W\|$", title="at initialisation")
    right.set(xlabel="Adam step", ylabel="training loss (MSE)", title="training")
    left.legend(fontsize=8); right.legend(fontsize=8); plt.show()


# %% [markdown]
# **Question 4.** How do the gradient norms of the first layers differ with and without the skip, and how does that
# show in the training curves? Use the Jacobian $I + \partial F / \partial x$ in your explanation.

# %% [markdown] nbgrader={"grade": true, "grade_id": "written_skip", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer.* Without the skip, the first layers' gradients are orders of magnitude smaller than the last
# layers' (each block multiplies the signal by $\partial F / \partial x$, which shrinks it here, most of all with the
# sigmoid), so the early layers barely move and the loss stays on a plateau near the variance of the target. With
# the skip, each block multiplies by $I + \partial F/\partial x$: the identity term carries the gradient to the first
# layers undiminished, the norms are of the same order at every depth, all layers learn from the first step, and the
# loss falls by two orders of magnitude in the same 200 steps.

# %% [markdown]
# ## 6. Clipping: keeping one exploding step from wrecking training
#
# Vanishing gradients need architecture (skips, gates, careful initialisation). Exploding ones have a blunt and
# effective remedy: **clip the gradient norm** before the optimiser step (Pascanu, Mikolov & Bengio 2013). Treat all
# gradients as one long vector $g$; if its norm exceeds a threshold, scale the whole vector down:
#
# $$g \leftarrow g \cdot \min\Big(1, \frac{\text{max\_norm}}{\|g\|_2 + 10^{-6}}\Big).$$
#
# Scaling *all* gradients by the *same* factor keeps the step's direction and shortens only its length; clipping
# each tensor separately, or each entry (`clip_grad_value_`), changes the direction too.
#
# Implement `clip_grad_norm_(params, max_norm)` like PyTorch's:
#
# * `params` is any iterable of parameters — a list, or a generator such as
#   `(p for p in model.parameters() if p.requires_grad)` — and it is consumed once: a generator can be
#   walked only one time, so collect the parameters in a list first if you need two passes;
# * consider the parameters whose `.grad` is not `None` (skip the others);
# * the total norm is the 2-norm over all their gradient entries together;
# * if `max_norm / (total + 1e-6) < 1`, replace each `.grad` by a new tensor, the old one times that factor (rather
#   than editing `.grad.data` in place: a gradient computed with `create_graph=True` is part of a graph, and other
#   values may depend on its array);
# * return the total norm **before** clipping, as a Python float (training loops log it).

# %% nbgrader={"grade": false, "grade_id": "clip_grad_norm_", "locked": false, "schema_version": 3, "solution": true}
def clip_grad_norm_(params, max_norm):
    """Scale the gradients of `params` together so that their global 2-norm is at most `max_norm`.

    `params` is any iterable of parameters (a list, a generator), consumed once. Returns the
    global norm before clipping (a float); parameters without a .grad are skipped; clipped
    gradients are new tensors.
    """
    ### BEGIN SOLUTION
    params = [p for p in params if p.grad is not None]
    total = float(np.sqrt(sum(np.sum(p.grad.data**2) for p in params)))
    scale = max_norm / (total + 1e-6)
    if scale < 1.0:
        for p in params:
            p.grad = mg.tensor(p.grad.data * scale)
    return total
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "helpers_clip_grad_norm_", "locked": true, "schema_version": 3, "solution": false}
def with_grads(*grads):
    """Parameters holding the given gradients (None: a parameter without .grad)."""
    params = []
    for g in grads:
        p = nn.Parameter(np.zeros(np.shape(g) if g is not None else 1))
        p.grad = None if g is None else mg.tensor(np.array(g, dtype=float))
        params.append(p)
    return params


def clip_params(case):
    """The parameters of a clipping case: ("grads", [g, ...]) holds the given gradients (None: no .grad);
    "x_plus_y": x = [1, 2] and y = [3, 4] after (x + y).sum().backward(), both gradients from one adjoint."""
    if case == "x_plus_y":
        x, y = nn.Parameter(np.array([1.0, 2.0])), nn.Parameter(np.array([3.0, 4.0]))
        (x + y).sum().backward()
        return [x, y]
    kind, grads = case
    if kind != "grads":
        raise ValueError(f"unknown clipping case {case!r}")
    return with_grads(*grads)


def clipped(case, max_norm, passed_as="list"):
    """Driver: your clip_grad_norm_(params, max_norm) on the case's parameters, handed over as a list or as a
    generator (which can be iterated only once). Returns what it returned, every parameter's .grad afterwards, and
    what the .grad tensors held before the call hold afterwards (the old gradients)."""
    params = clip_params(case)
    before = [p.grad for p in params]
    given = params if passed_as == "list" else (p for p in params)
    total = clip_grad_norm_(given, max_norm)
    return {"total": as_result(total), "grads": [grad_of(p) for p in params],
            "old": [None if g is None else np.array(g.data) for g in before]}


def clip_facts(got, count, what):
    """(total, grads) from a `clipped` result, after checking its form."""
    if (type(got) is not dict or set(got) != {"total", "grads", "old"} or type(got["grads"]) is not list
            or len(got["grads"]) != count or type(got["old"]) is not list or len(got["old"]) != count):
        raise AssertionError(f"{what}: the driver's result is malformed: {got!r:.200}")
    return got["total"], got["grads"]


def check_total(got, expected, what, **tolerance):
    """The norm clip_grad_norm_ returned must be a number (a Python float) close to `expected`."""
    number = type(got) in (int, float) or isinstance(got, (np.floating, np.integer)) or (
        isinstance(got, np.ndarray) and got.shape == () and got.dtype.kind in "iuf")
    if not number:
        raise AssertionError(f"{what}: expected a float, got {got if isinstance(got, str) else repr(got)[:200]}")
    assert_close(got, expected, what, **tolerance)


def check_clipped(got, case, max_norm, what):
    """Everything `clipped` reports against the checker's own numpy: the global norm of its own copy of the
    case's gradients, and each gradient scaled by max_norm / (norm + 1e-6) when that factor is below 1."""
    grads = [grad_of(p) for p in clip_params(case)]
    total, grads_after = clip_facts(got, len(grads), what)
    norm = float(np.sqrt(sum(np.sum(g ** 2) for g in grads if g is not None)))
    factor = max_norm / (norm + 1e-6)
    check_total(total, norm, f"the norm {what} returns (the global norm before clipping)")
    for i, (g, after, old) in enumerate(zip(grads, grads_after, got["old"])):
        if g is not None:
            check_array(old, g, f"the tensor params[{i}].grad held before {what} (it must stay as it was: make new "
                        f"gradient tensors rather than scaling .grad.data in place)", rtol=0, atol=0)
        if g is None:
            if after is not None:
                raise AssertionError(f"{what}: params[{i}] had no .grad and must keep .grad None")
            continue
        check_array(after, g * factor if factor < 1 else g, f"params[{i}].grad after {what}", rtol=1e-5, atol=0)


# %% nbgrader={"grade": true, "grade_id": "test_clip_grad_norm__values", "locked": true, "points": 3, "schema_version": 3, "solution": false}
case = ("grads", [[3.0, 4.0], [12.0]])  # a and b: global norm sqrt(9 + 16 + 144) = 13
got = drive(clipped, case, 1.0)
total, (a, b) = clip_facts(got, 2, "clip_grad_norm_([a, b], max_norm=1.0)")
check_total(total, 13.0, "clip_grad_norm_ returns the global norm before clipping")
check_array(a, np.array([3.0, 4.0]) / 13.0, "a.grad after clipping to max_norm=1", rtol=1e-5)
check_array(b, np.array([12.0]) / 13.0, "b.grad after clipping to max_norm=1", rtol=1e-5)
check_clipped(got, case, 1.0, "clip_grad_norm_([a, b], max_norm=1.0)")
print("clip_grad_norm_: scales to max_norm and returns the norm before")
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(0)
grads = [rng.standard_normal(s) * 10 for s in [(3, 4), (4,), (2, 2, 2)]]
got = drive(clipped, ("grads", grads), 2.5)
total, after = clip_facts(got, 3, "clip_grad_norm_ of three random gradients")
expected_total = np.sqrt(sum(np.sum(g**2) for g in grads))
check_total(total, expected_total, "the global norm of three random gradients")
for g, new in zip(grads, after):
    check_array(new, g * 2.5 / (expected_total + 1e-6), "a clipped random gradient")
check_clipped(got, ("grads", grads), 2.5, "clip_grad_norm_ of three random gradients")

# At the edge of the guard: a global norm of 1e-7 with max_norm = 1e-7 is scaled by 1e-7 / (1e-7 + 1e-6) = 0.09.
case = ("grads", [[6e-8, 8e-8]])
got = drive(clipped, case, 1e-7)
total, (tiny,) = clip_facts(got, 1, "clip_grad_norm_ of a tiny gradient")
check_total(total, 1e-7, "the global norm of a gradient of norm 1e-7", rtol=1e-6, atol=0)
check_array(tiny, np.array([6e-8, 8e-8]) * (1e-7 / (1e-7 + 1e-6)), "a gradient of norm 1e-7 clipped to max_norm=1e-7: "
            "the factor is max_norm / (total + 1e-6) = 0.09 (1e-6 added to the norm, in the denominator)", rtol=1e-5, atol=0)
check_clipped(got, case, 1e-7, "clip_grad_norm_ of a gradient of norm 1e-7 with max_norm=1e-7")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_clip_grad_norm__global", "locked": true, "points": 3, "schema_version": 3, "solution": false}
case = ("grads", [[30.0, 40.0], [0.6, 0.8]])  # a and b: norms 50 and 1, one large, one small
got = drive(clipped, case, 5.0)
_, (a, b) = clip_facts(got, 2, "clip_grad_norm_([a, b], max_norm=5.0)")
check_shape(a, (2,), "a.grad after clipping")
check_shape(b, (2,), "b.grad after clipping")
assert_close(b / a, [0.02, 0.02], "b.grad / a.grad after clipping (one factor for all tensors keeps the direction)", rtol=1e-6)
new_total = np.sqrt(np.sum(a**2) + np.sum(b**2))
assert_close(new_total, 5.0, "global norm after clipping to max_norm=5", rtol=1e-5)
check_clipped(got, case, 5.0, "clip_grad_norm_([a, b], max_norm=5.0)")
print("clip_grad_norm_: one factor for all gradients")
### BEGIN HIDDEN TESTS
got = drive(clipped, "x_plus_y", 1.0)
total, (x, y) = clip_facts(got, 2, "clip_grad_norm_([x, y], 1.0)")
check_total(total, np.sqrt(4.0), "norm of the gradients of x and y in (x + y).sum()")
check_array(x, np.ones(2) / 2.0, "x.grad after clipping the gradients of (x + y).sum()", rtol=1e-5)
check_array(y, np.ones(2) / 2.0, "y.grad after clipping the gradients of (x + y).sum()", rtol=1e-5)
check_clipped(got, "x_plus_y", 1.0, "clip_grad_norm_([x, y], 1.0)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_clip_grad_norm__no_op", "locked": true, "points": 2, "schema_version": 3, "solution": false}
case = ("grads", [[0.3, 0.4], None, [1.2]])  # a, b, c: global norm 1.3; b has no gradient
got = drive(clipped, case, 2.0)
total, (a, b, c) = clip_facts(got, 3, "clip_grad_norm_([a, b, c], max_norm=2.0)")
check_total(total, 1.3, "clip_grad_norm_ below the threshold still returns the norm")
check_array(a, [0.3, 0.4], "a.grad when the norm is already below max_norm (unchanged)")
assert b is None, "a parameter without .grad must keep .grad None"
check_array(c, [1.2], "c.grad when the norm is already below max_norm (unchanged)")
check_clipped(got, case, 2.0, "clip_grad_norm_([a, b, c], max_norm=2.0)")
print("clip_grad_norm_: leaves small gradients alone")
### BEGIN HIDDEN TESTS
got = drive(clipped, ("grads", [[1e-3, 0.0]]), 1.0)
_, (tiny,) = clip_facts(got, 1, "clip_grad_norm_ of a small gradient")
check_array(tiny, [1e-3, 0.0], "a small gradient must not be scaled up")
check_clipped(got, ("grads", [[1e-3, 0.0]]), 1.0, "clip_grad_norm_ of a small gradient")

# All gradients zero (a norm of 0, below the 1e-6 guard): nothing to scale, no division by zero, no NaN.
got = drive(clipped, ("grads", [[0.0, 0.0], [0.0]]), 1.0)
total, (z1, z2) = clip_facts(got, 2, "clip_grad_norm_ of zero gradients")
check_total(total, 0.0, "the norm clip_grad_norm_ returns for zero gradients", rtol=0, atol=0)
check_array(z1, [0.0, 0.0], "a zero gradient after clip_grad_norm_ (unchanged, no NaN)", rtol=0, atol=0)
check_array(z2, [0.0], "a zero gradient after clip_grad_norm_ (unchanged, no NaN)", rtol=0, atol=0)

# Any iterable, consumed once: a generator of parameters can be walked only one time.
case = ("grads", [[6.0, 8.0]])
got = drive(clipped, case, 1.0, "generator")
total, (g,) = clip_facts(got, 1, "clip_grad_norm_ of a generator of parameters")
check_total(total, 10.0, "clip_grad_norm_ of a generator of parameters")
check_array(g, np.array([6.0, 8.0]) / (10.0 + 1e-6), "the gradient after clip_grad_norm_ of a generator of parameters "
            "(max_norm=1: scaled by 1/10; a generator can be iterated only once: collect the parameters in a list first)", rtol=1e-5)
check_clipped(got, case, 1.0, "clip_grad_norm_ of a generator of parameters")
### END HIDDEN TESTS

# %% [markdown]
# ### Experiment: an exploding RNN, with and without clipping
#
# A linear RNN (hidden size 16, 30 steps) learns to output the scaled sum of its inputs, $y = \sum_t x_t / \sqrt{T}$
# — easy for a linear recurrence with $W_{hh} = I$ on one direction. We start from an orthogonal $W_{hh}$
# ($\rho = 1$) and train with plain SGD at learning rate 0.05, on a fresh batch of 32 sequences per step. The first
# gradients are large although nothing explodes yet: the output depends on all 30 inputs, through powers of
# $W_{hh}$ up to the 29th, and with $\rho = 1$ every one of them has norm 1, so none of the 30 steps' contributions
# fades and they add up; a step that pushes $\rho$ above 1 makes the
# next gradients larger still, and without clipping the run reaches `inf` within a few steps. With
# `clip_grad_norm_(params, 1.0)` every step has length at most $0.05 \cdot 1.0$, and the same run trains. The right
# panel shows the global norm *before* clipping, against the threshold `max_norm` (dotted). The loss of a
# clipped run zig-zags from step to step, so the legend reports its mean over the last 20 steps.

# %%
def train_rnn(clip, steps=150, lr=0.05, seed=0):
    rng = np.random.default_rng(seed)
    rnn = nn.RNN(1, 16, activation="identity", rng=rng)
    rnn.cell.weight_hh.data = orthogonal(16, 1.0, seed=seed)
    head = nn.Linear(16, 1, rng=rng)
    params = rnn.parameters() + head.parameters()
    opt = optim.SGD(params, lr=lr)
    losses, norms = [], []
    for _ in tqdm(range(steps), desc=f"clip={clip}", leave=False):
        xs = rng.standard_normal((30, 32, 1))
        with np.errstate(over="ignore", invalid="ignore"):  # the unclipped run overflows on purpose
            _, h = rnn(mg.tensor(xs))
            loss = nn.mse_loss(head(h), mg.tensor(xs.sum(axis=0) / np.sqrt(30)))
            opt.zero_grad()
            loss.backward()
            norms.append(clip_grad_norm_(params, clip) if clip else float(np.sqrt(sum(np.sum(p.grad.data**2) for p in params))))
            opt.step()
        losses.append(loss.item())
        if not np.isfinite(loss.item()):
            break  # diverged: nothing left to learn
    return losses, norms


with uses_your("clip_grad_norm_"):
    MAX_NORM = 1.0
    LOSS_RANGE = (0.02, 100)  # the diverging run leaves it: the clipped run's progress stays visible
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    for clip, color in [(None, "C3"), (MAX_NORM, "C0")]:
        losses, norms = train_rnn(clip)
        label = "no clipping" if clip is None else f"clip_grad_norm_(params, {clip})"
        fate = (f"mean loss {np.mean(losses[-20:]):.2g} over steps {len(losses) - 19}–{len(losses)}" if np.isfinite(losses[-1])
                else f"diverged at step {len(losses)}")
        left.semilogy(np.where(np.isfinite(losses), losses, np.nan), color=color, label=f"{label}: {fate}")
        right.semilogy(np.where(np.isfinite(norms), norms, np.nan), color=color, label=label)
        finite = np.array(norms)[np.isfinite(norms)]
        print(f"{label:>28}: {fate}; gradient norm before clipping: median {np.median(finite):.3g}, "
              f"largest {finite.max():.3g}, above max_norm at {np.mean(finite > MAX_NORM):.0%} of the steps")
        if not np.isfinite(losses[-1]):
            largest = max(l for l in losses if np.isfinite(l))
            left.annotate(f"off the scale: up to {largest:.0e}, then inf", xy=(len(losses) - 2, LOSS_RANGE[1]),
                          xytext=(20, 20), fontsize=8, color=color, arrowprops=dict(arrowstyle="->", color=color))
    right.axhline(MAX_NORM, color="k", ls=":", lw=1, label=f"max_norm = {MAX_NORM}")
    left.set(xlabel="SGD step", ylabel="loss (MSE)", title="linear RNN, T = 30, lr = 0.05", ylim=LOSS_RANGE)
    right.set(xlabel="SGD step", ylabel="gradient norm before clipping", title="global gradient norm")
    left.legend(fontsize=8, loc="lower left"); right.legend(fontsize=8); plt.show()

# %% [markdown]
# **Question 5.** Why does the unclipped run diverge instead of just taking a few bad steps? What does clipping
# change about each step, and why does the clipped run still learn although its gradient norm stays above
# `max_norm` at every step, i.e. every step is clipped? Why does its loss zig-zag and level off instead of converging
# to 0, and what would you change to go further?

# %% [markdown] nbgrader={"grade": true, "grade_id": "written_clipping", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# *Model answer.* The gradient contains powers of $W_{hh}$ up to the sequence length, so a step that makes $\rho$
# slightly larger than 1 makes the next gradient exponentially larger; the next step is larger still — a feedback
# loop that reaches `inf` in a few steps. Clipping keeps the direction of each step (all gradients scaled by one
# factor) but caps its length at lr · max_norm, so no single step can throw the weights into the exploding region.
# Since every step is clipped, the run is normalised gradient descent: steps of fixed length 0.05 along the
# (stochastic) gradient direction, which still points downhill, so the loss falls (here from about 1.5 to 0.1–0.3). A step
# of fixed length cannot shrink near the minimum: it overshoots across the valley and comes back, hence the
# alternating loss and gradient norm and a loss that levels off at a floor set by lr · max_norm (and the batch
# noise). Shorter steps once the loss has dropped — a decaying learning rate, or a smaller `max_norm` — let it go
# further (lr = 0.01 reaches about 0.01 in 300 steps).

# %% [markdown]
# ## Summary
#
# * The gradient reaching layer $l$ (or time step $t$) is the output gradient times a product of Jacobians
#   $\operatorname{diag}(\phi') W^\top$; its norm changes geometrically with depth, at a rate bounded by
#   $\max|\phi'| \cdot \sigma_{\max}(W)$ per layer: vanishing below 1, exploding above.
# * Sigmoid ($\phi' \le 1/4$) vanishes at any reasonable scale; tanh depends on the initialisation, which Xavier
#   balances near 1. Recurrent networks reuse one $W_{hh}$, so its singular values set the rate over time.
# * Skip connections turn each factor into $I + \partial F / \partial x$: an identity path carries gradients to the
#   first layers, and deep networks train.
# * Clipping the global gradient norm bounds each step's length while keeping its direction: exploding gradients
#   stop wrecking training. `layer_grad_norms` and `grad_norms` are the measurements that tell you which problem
#   you have.
#
# ## References
#
# * S. Hochreiter. *Untersuchungen zu dynamischen neuronalen Netzen.* Diploma thesis, TU München, 1991.
# * Y. Bengio, P. Simard, P. Frasconi. *Learning Long-Term Dependencies with Gradient Descent is Difficult.*
#   IEEE Transactions on Neural Networks 5(2), 1994.
# * X. Glorot, Y. Bengio. *Understanding the Difficulty of Training Deep Feedforward Neural Networks.* AISTATS 2010.
# * R. Pascanu, T. Mikolov, Y. Bengio. *On the Difficulty of Training Recurrent Neural Networks.* ICML 2013.
# * K. He, X. Zhang, S. Ren, J. Sun. *Deep Residual Learning for Image Recognition.* CVPR 2016.
# * I. Goodfellow, Y. Bengio, A. Courville. *Deep Learning.* MIT Press, 2016 (sections 8.2.5 and 10.7).
