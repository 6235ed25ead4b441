"""minigrad's engine against PyTorch eager on CPU, one thread each, measured side by side.

    .venv/bin/python benchmarks/bench_engine.py            # the full run (a few minutes)
    .venv/bin/python benchmarks/bench_engine.py --quick    # a seconds-long smoke run

Prints one JSON line per measurement: minigrad's figure, PyTorch's figure from the same run and
their ratio (below 1: minigrad is faster), the target ratio and whether it is met. Three questions:

* per-op overhead: a five-operation expression on 4×4 tensors, forward and backward, per
  operation. The arithmetic is negligible; what is measured is the Python (or C++ dispatcher)
  machinery around it. A hand-written numpy forward and backward is the floor.
* an MLP training step (batch 64, 784-256-256-10, ReLU, cross-entropy, SGD), where the matrix
  products dominate and the engine's overhead should disappear. Float64 on both sides, so that
  both run the same arithmetic; hand-written numpy again as the floor.
* the same step on a tiny MLP (8-8-8-10, batch 4), where the engine's overhead is nearly all of
  it, once as it is and once with an unrelated large product after each layer: what the MLP
  step's products, by evicting the caches, do to that overhead.
* forward and backward of a deep, wide MLP (16 × Linear(512, 512) + ReLU, batch 256), where the
  matrix products are nearly everything: the engine against the numpy floor, and BLAS against BLAS.
* backward through a chain of 100,000 scalar operations, per operation: the engine's cost per
  graph vertex, with micrograd (Karpathy's recursive `Value`) as the contrast: its depth-first
  search recurses once per vertex, so it fails near Python's default recursion limit of 1000.
* forward and backward through 100,000 operations y = tanh(y · w), a second leaf w feeding every
  step: per-operation cost of a deep scalar graph with a nonlinearity and fan-out on a leaf.
* an epoch of a character-level RNN as a self-learner writes it (min-char-rnn's shape: `RNNCell`,
  tanh, 100 hidden units, one-hot characters, 25 steps of truncated backpropagation through time;
  16 streams, a linear head, cross-entropy, clipping, Adam): hundreds of small operations a step.

The MLP line also carries minigrad's ratio to the numpy floor and the floor's to PyTorch (whose
BLAS may be the faster one: then no engine on numpy can reach PyTorch on that machine).

Every comparison first checks that the contenders compute the same numbers. Times are process CPU
time by default (`--clock wall` for elapsed time), the best of several interleaved runs, each
contender warmed up first; objects alive before timing (torch's ~300k among them) are frozen out
of the cyclic garbage collector's sight (`harness.freeze_heap`). Results: benchmarks/README.md.
"""

import harness  # noqa: I001  (first: pins every BLAS library to one thread before numpy loads)

import argparse
import gc
import sys

import numpy as np

import minigrad as mg
from minigrad import nn, optim

TARGETS = {  # the most minigrad may take, as a multiple of PyTorch's time (issue 13, "Eager engine")
    "per_op_4x4": 0.8,
    "mlp_step": 1.0,  # where numpy's BLAS is not the slower one; see MLP_FLOOR_TARGET
    "chain_backward": 0.75,
    "tanh_chain_forward_backward": 0.75,
    "char_rnn_epoch": 1.0,
}
MLP_FLOOR_TARGET = 1.03  # the MLP step may take at most 3 % more than numpy by hand (issue 13)


def _record(name, unit, figures, target=None, **extra):
    """One JSON line: every contender's best figure, and minigrad's ratio to PyTorch."""
    record = {"benchmark": name, "unit": unit}
    record.update({contender: round(figure["min"], 4) for contender, figure in figures.items()})
    record["ratio"] = round(figures["minigrad"]["min"] / figures["pytorch"]["min"], 3)
    if target is not None:
        record["target"] = target
        record["met"] = record["ratio"] <= target
    record["median"] = {contender: round(figure["median"], 4) for contender, figure in figures.items()}
    record["runs"] = figures["minigrad"]["runs"]
    record.update(extra)
    harness.emit(record)
    return record


def _check(what, got, expected):
    if not np.allclose(got, expected, rtol=1e-7, atol=1e-9):
        raise AssertionError(f"{what}: the contenders disagree: {got!r} vs {expected!r}")


# --------------------------------------------------------------------------- per-op overhead
def bench_per_op(torch, quick):
    """((a @ b + c).tanh() * a).sum(), forward and backward: five operations on 4×4 tensors."""
    rng = np.random.default_rng(0)
    a0, b0, c0 = (rng.standard_normal((4, 4)) for _ in range(3))
    ops = 5

    a, b, c = (mg.tensor(v, requires_grad=True) for v in (a0, b0, c0))

    def minigrad_step():
        a.grad = b.grad = c.grad = None
        (((a @ b + c).tanh()) * a).sum().backward()

    ta, tb, tc = (torch.tensor(v, requires_grad=True) for v in (a0, b0, c0))

    def pytorch_step():
        ta.grad = tb.grad = tc.grad = None
        (torch.tanh(ta @ tb + tc) * ta).sum().backward()

    grads = {}

    def numpy_step():
        t = np.tanh(a0 @ b0 + c0)
        (t * a0).sum()
        g_t = a0  # d sum(t * a) / dt, with the output's adjoint 1
        g_z = g_t * (1.0 - t * t)
        grads["a"] = t + g_z @ b0.T
        grads["b"] = a0.T @ g_z
        grads["c"] = g_z

    for step in (minigrad_step, pytorch_step, numpy_step):
        step()
    harness.freeze_heap()  # after the first steps: what the libraries set up lazily is frozen too
    for name, mine, theirs in (("a", a, ta), ("b", b, tb), ("c", c, tc)):
        _check(f"per_op_4x4 d/d{name}", mine.grad.data, theirs.grad.numpy())
        _check(f"per_op_4x4 d/d{name} (numpy)", grads[name], theirs.grad.numpy())

    number, repeat = (200, 3) if quick else (2000, 7)
    runs = harness.time_interleaved(
        {"minigrad": minigrad_step, "pytorch": pytorch_step, "numpy": numpy_step}, number, repeat
    )
    figures = harness.summarize(runs, scale=1e6 / ops)
    return _record("per_op_4x4", "us/op (forward+backward)", figures, TARGETS["per_op_4x4"], ops_per_step=ops)


# --------------------------------------------------------------------------- MLP training step
SIZES = (784, 256, 256, 10)
BATCH = 64
LR = 0.01
PHASES = ("zero_grad+model", "loss", "backward", "optimizer")  # what mark() separates in a step


def _no_mark():
    pass


def _phase_medians(steps, rounds, block):
    """{contender: {phase: median µs}} for `steps` = {name: step(mark)}, each calling mark() after
    each phase; the contenders take turns, `block` consecutive steps at a time."""
    laps = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            for _ in range(block):
                marks = [harness.clock()]
                step(lambda: marks.append(harness.clock()))
                laps[name].append(np.diff(marks) * 1e6)
    return {name: dict(zip(PHASES, np.round(np.median(laps[name], axis=0), 1).tolist())) for name in steps}


def _torch_relu_mlp(torch, weights):
    """PyTorch's twin of a minigrad `nn.MLP` with ReLU: the same (W, b) per layer, float64 (minigrad
    keeps W as in × out, torch as out × in)."""
    layers = []
    for i, (w, bias) in enumerate(weights):
        linear = torch.nn.Linear(*w.shape, dtype=torch.float64)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(w.T))
            linear.bias.copy_(torch.from_numpy(bias))
        layers += [linear] + ([torch.nn.ReLU()] if i < len(weights) - 1 else [])
    return torch.nn.Sequential(*layers)


def _numpy_mlp_step(weights, x0, labels, pause=_no_mark):
    """The numpy floor of an MLP step (3 ReLU layers, cross-entropy, SGD), written out by hand on
    copies of `weights`; `pause()` runs after each of the five layers and before the update (the
    cold-cache line's products go there, as in the other contenders), and the step's `mark()` after
    each of the phases the other contenders mark (`PHASES`)."""
    params = [array.copy() for pair in weights for array in pair]
    onehot = np.eye(weights[-1][1].size)[labels]
    batch = len(labels)

    def numpy_step(mark=_no_mark):
        (w1, b1, w2, b2, w3, b3) = params
        z1 = x0 @ w1 + b1
        pause()
        h1 = np.maximum(z1, 0.0)
        pause()
        z2 = h1 @ w2 + b2
        pause()
        h2 = np.maximum(z2, 0.0)
        pause()
        logits = h2 @ w3 + b3
        pause()
        mark()
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -(log_probs * onehot).sum() / batch
        mark()
        g_logits = (np.exp(log_probs) - onehot) / batch
        g_h2 = (g_logits @ w3.T) * (h2 > 0)
        g_h1 = (g_h2 @ w2.T) * (h1 > 0)
        grads = (x0.T @ g_h1, g_h1.sum(0), h1.T @ g_h2, g_h2.sum(0), h2.T @ g_logits, g_logits.sum(0))
        pause()
        mark()
        for param, grad in zip(params, grads):
            param -= LR * grad
        mark()
        return loss

    return numpy_step


def bench_mlp(torch, quick):
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((BATCH, SIZES[0]))
    labels = rng.integers(0, SIZES[-1], BATCH)

    model = nn.MLP(list(SIZES), activation="relu", rng=np.random.default_rng(2))
    weights = [(layer.weight.data.copy(), layer.bias.data.copy()) for layer in model.layers[::2]]
    sgd = optim.SGD(model.parameters(), lr=LR)
    x = mg.tensor(x0)

    def minigrad_step(mark=_no_mark):
        sgd.zero_grad()
        logits = model(x)
        mark()
        loss = nn.cross_entropy(logits, labels)
        mark()
        loss.backward()
        mark()
        sgd.step()
        mark()
        return loss.item()

    torch_model = _torch_relu_mlp(torch, weights)
    torch_sgd = torch.optim.SGD(torch_model.parameters(), lr=LR)
    tx, tlabels = torch.from_numpy(x0), torch.from_numpy(labels)

    def pytorch_step(mark=_no_mark):
        torch_sgd.zero_grad()
        logits = torch_model(tx)
        mark()
        loss = torch.nn.functional.cross_entropy(logits, tlabels)
        mark()
        loss.backward()
        mark()
        torch_sgd.step()
        mark()
        return loss.item()

    numpy_step = _numpy_mlp_step(weights, x0, labels)

    losses = [step() for step in (minigrad_step, pytorch_step, numpy_step)]
    _check("mlp_step loss", losses[0], losses[1])
    _check("mlp_step loss (numpy)", losses[2], losses[1])
    _check("mlp_step updated weight", model.layers[0].weight.data, torch_model[0].weight.detach().numpy().T)
    harness.freeze_heap()  # after the first steps: torch.optim's lazy imports are frozen too

    number, repeat = (2, 2) if quick else (5, 30)
    runs = harness.time_interleaved(
        {"minigrad": minigrad_step, "pytorch": pytorch_step, "numpy": numpy_step}, number, repeat
    )
    figures = harness.summarize(runs, scale=1e3)
    phases = _phase_medians({"minigrad": minigrad_step, "pytorch": pytorch_step, "numpy": numpy_step}, *((1, 2) if quick else (8, 10)))
    # Two more ratios (issue 13): minigrad against the numpy floor (the engine's own overhead), and
    # the floor against PyTorch (whose BLAS is faster on this machine: above 1, numpy's is slower,
    # and then no numpy-based engine can reach PyTorch).
    floor_ratio = figures["minigrad"]["min"] / figures["numpy"]["min"]
    numpy_to_pytorch = figures["numpy"]["min"] / figures["pytorch"]["min"]
    return _record(
        "mlp_step", "ms/step", figures, TARGETS["mlp_step"], batch=BATCH, sizes=list(SIZES), dtype="float64",
        activation="relu", loss="cross_entropy", phases_us_median=phases,
        ratio_to_numpy=round(floor_ratio, 3), numpy_floor_target=MLP_FLOOR_TARGET,
        numpy_floor_met=floor_ratio <= MLP_FLOOR_TARGET, numpy_to_pytorch=round(numpy_to_pytorch, 3),
        slower_blas="numpy" if numpy_to_pytorch > 1 else "pytorch",
    )


# --------------------------------------------------------------------------- overhead on cold caches
TINY_SIZES, TINY_BATCH = (8, 8, 8, 10), 4
COLD_PRODUCT = ((64, 784), (784, 256))  # the MLP step's first product: what evicts the caches there


def bench_tiny_mlp(torch, quick):
    """The MLP step's engine overhead with and without cold caches: two lines, `tiny_mlp_step` and
    `tiny_mlp_step_cold_caches`.

    A tiny MLP (8-8-8-10, batch 4, the MLP step's code otherwise) costs almost nothing but the
    engine's own Python (or C++) work, so each contender's time above the numpy floor
    (`overhead_us`) is its overhead per step. The cold line runs the same step with one unrelated
    (64×784)·(784×256) product (the MLP step's first, the same in every contender) after each of
    the five layers and one before the optimizer: the products evict the caches that the engine's
    code and objects were in, as the MLP step's own products do. The products cost every contender
    alike, so the overhead they add is what cold caches do to each engine's work.
    """
    rng = np.random.default_rng(4)
    x0 = rng.standard_normal((TINY_BATCH, TINY_SIZES[0]))
    labels = rng.integers(0, TINY_SIZES[-1], TINY_BATCH)
    a, b = (rng.standard_normal(shape) for shape in COLD_PRODUCT)
    cold = [False]

    def evict():
        if cold[0]:
            a @ b

    model = nn.MLP(list(TINY_SIZES), activation="relu", rng=np.random.default_rng(5))
    weights = [(layer.weight.data.copy(), layer.bias.data.copy()) for layer in model.layers[::2]]
    sgd = optim.SGD(model.parameters(), lr=LR)
    x = mg.tensor(x0)

    def minigrad_step():
        sgd.zero_grad()
        h = x
        for layer in model.layers:
            h = layer(h)
            evict()
        loss = nn.cross_entropy(h, labels)
        loss.backward()
        evict()
        sgd.step()
        return loss.item()

    torch_layers = _torch_relu_mlp(torch, weights)
    torch_sgd = torch.optim.SGD(torch_layers.parameters(), lr=LR)
    tx, tlabels = torch.from_numpy(x0), torch.from_numpy(labels)

    def pytorch_step():
        torch_sgd.zero_grad()
        h = tx
        for layer in torch_layers:
            h = layer(h)
            evict()
        loss = torch.nn.functional.cross_entropy(h, tlabels)
        loss.backward()
        evict()
        torch_sgd.step()
        return loss.item()

    numpy_step = _numpy_mlp_step(weights, x0, labels, pause=evict)

    contenders = {"minigrad": minigrad_step, "pytorch": pytorch_step, "numpy": numpy_step}
    losses = [step() for step in contenders.values()]
    _check("tiny_mlp loss", losses[0], losses[1])
    _check("tiny_mlp loss (numpy)", losses[2], losses[1])
    harness.freeze_heap()
    records = []
    for name, is_cold, (number, repeat) in (("tiny_mlp_step", False, (50, 30)), ("tiny_mlp_step_cold_caches", True, (10, 60))):
        cold[0] = is_cold
        runs = harness.time_interleaved(contenders, *((2, 2) if quick else (number, repeat)))
        figures = harness.summarize(runs, scale=1e6)
        overhead = {c: round(figures[c]["min"] - figures["numpy"]["min"], 1) for c in ("minigrad", "pytorch")}
        records.append(_record(
            name, "us/step", figures, sizes=list(TINY_SIZES), batch=TINY_BATCH, dtype="float64", overhead_us=overhead,
            evicting_products=6 if is_cold else 0, product_shapes=[list(shape) for shape in COLD_PRODUCT],
        ))
    return records


# --------------------------------------------------------------------------- a deep, wide MLP
DEEP_LAYERS, DEEP_WIDTH, DEEP_BATCH = 16, 512, 256  # bench_checkpoint.py's model at N = 16


def bench_deep_mlp(torch, quick):
    """Forward and backward of 16 × (Linear(512, 512), ReLU), batch 256, loss = sum of the output:
    the matrix products are ~95 % of the step, so the engine's overhead should vanish against the
    numpy floor, and what remains against PyTorch is the two libraries' BLAS."""
    layers, width = (4, 64) if quick else (DEEP_LAYERS, DEEP_WIDTH)
    rng = np.random.default_rng(3)
    model = nn.Sequential(*[m for _ in range(layers) for m in (nn.Linear(width, width, rng=rng), nn.ReLU())])
    x0 = rng.standard_normal((DEEP_BATCH, width))
    x = mg.tensor(x0)
    weights = [(linear.weight.data.copy(), linear.bias.data.copy()) for linear in model.layers[::2]]
    torch_model = torch.nn.Sequential(*[m for _ in range(layers) for m in (torch.nn.Linear(width, width, dtype=torch.float64), torch.nn.ReLU())])
    with torch.no_grad():
        for (w, bias), linear in zip(weights, torch_model[::2]):
            linear.weight.copy_(torch.from_numpy(w.T))
            linear.bias.copy_(torch.from_numpy(bias))
    tx = torch.from_numpy(x0)

    def minigrad_step():
        model.zero_grad()
        model(x).sum().backward()
        return model.layers[0].weight.grad.data

    def pytorch_step():
        torch_model.zero_grad()
        torch_model(tx).sum().backward()
        return torch_model[0].weight.grad.numpy().T

    def numpy_step():
        inputs, pre_activations = [x0], []
        for w, bias in weights:
            z = inputs[-1] @ w + bias
            pre_activations.append(z)
            inputs.append(np.maximum(z, 0))
        g = np.ones_like(inputs[-1])
        for i in reversed(range(layers)):
            g = g * (pre_activations[i] > 0).astype(g.dtype)
            grad_w, _grad_b = inputs[i].T @ g, g.sum(axis=0)
            if i:
                g = g @ weights[i][0].T
        return grad_w

    results = [step() for step in (minigrad_step, pytorch_step, numpy_step)]
    _check("deep_mlp d/dW_1", results[0], results[1])
    _check("deep_mlp d/dW_1 (numpy)", results[2], results[1])
    harness.freeze_heap()
    number, repeat = (2, 2) if quick else (3, 10)
    runs = harness.time_interleaved({"minigrad": minigrad_step, "pytorch": pytorch_step, "numpy": numpy_step}, number, repeat)
    figures = harness.summarize(runs, scale=1e3)
    return _record(
        "deep_mlp_forward_backward", "ms/step", figures, layers=layers, width=width, batch=DEEP_BATCH, dtype="float64",
        ratio_to_numpy=round(figures["minigrad"]["min"] / figures["numpy"]["min"], 3),
        numpy_to_pytorch=round(figures["numpy"]["min"] / figures["pytorch"]["min"], 3),
    )


# --------------------------------------------------------------------------- the scalar chain
SCALE, SHIFT = 0.9999, 0.0001  # y <- y * SCALE + SHIFT: two operations per step, values stay near 1


def _chain_minigrad(ops):
    x = mg.tensor(0.5, requires_grad=True)
    start = harness.clock()
    y = x
    for _ in range(ops // 2):
        y = y * SCALE + SHIFT
    built = harness.clock()
    y.backward()
    return built - start, harness.clock() - built, x.grad.item()


def _chain_pytorch(torch, ops):
    x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    start = harness.clock()
    y = x
    for _ in range(ops // 2):
        y = y * SCALE + SHIFT
    built = harness.clock()
    y.backward()
    return built - start, harness.clock() - built, x.grad.item()


def _chain_micrograd(ops):
    from micrograd.engine import Value

    x = Value(0.5)
    start = harness.clock()
    y = x
    for _ in range(ops // 2):
        y = y * SCALE + SHIFT
    built = harness.clock()
    y.backward()
    return built - start, harness.clock() - built, x.grad


def _chain_numpy(ops):
    """Reverse mode by hand: the forward pass records each step's local derivative on a tape."""
    start = harness.clock()
    y, tape = np.float64(0.5), []
    for _ in range(ops // 2):
        y = y * SCALE
        tape.append(SCALE)
        y = y + SHIFT
        tape.append(1.0)
    built = harness.clock()
    grad = np.float64(1.0)
    for local in reversed(tape):
        grad = grad * local
    return built - start, harness.clock() - built, float(grad)


def micrograd_recursion_failure(ops=1000):
    """micrograd's backward on a chain of `ops` operations under the default recursion limit."""
    from micrograd.engine import Value

    y = Value(0.5)
    for _ in range(ops // 2):
        y = y * SCALE + SHIFT
    try:
        y.backward()
    except RecursionError as error:
        return f"RecursionError: {error}"
    return None


def micrograd_deepest_chain(most=2000):
    """The longest chain (in operations) whose micrograd backward survives the current recursion limit."""
    low, high = 0, most // 2  # in steps of two operations; bisect for the last step count that works
    while low < high:
        middle = (low + high + 1) // 2
        if micrograd_recursion_failure(2 * middle) is None:
            low = middle
        else:
            high = middle - 1
    return 2 * low


# --------------------------------------------------------------------------- the tanh chain
W = 0.9999  # y <- tanh(y * w), w a second leaf: every step adds to w's adjoint (fan-out on a leaf)


def _tanh_chain_minigrad(ops):
    x, w = mg.tensor(0.5, requires_grad=True), mg.tensor(W, requires_grad=True)
    start = harness.clock()
    y = x
    for _ in range(ops // 2):
        y = (y * w).tanh()
    y.backward()
    return harness.clock() - start, x.grad.item(), w.grad.item()


def _tanh_chain_pytorch(torch, ops):
    x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(W, dtype=torch.float64, requires_grad=True)
    start = harness.clock()
    y = x
    for _ in range(ops // 2):
        y = torch.tanh(y * w)
    y.backward()
    return harness.clock() - start, x.grad.item(), w.grad.item()


def _tanh_chain_numpy(ops):
    """By hand: the forward pass tapes each step's input and output, the backward pass replays it."""
    start = harness.clock()
    y, w, tape = np.float64(0.5), np.float64(W), []
    for _ in range(ops // 2):
        t = np.tanh(y * w)
        tape.append((y, t))
        y = t
    g, g_w = np.float64(1.0), np.float64(0.0)
    for y_in, t in reversed(tape):
        g_z = g * (1.0 - t * t)  # through tanh
        g_w = g_w + g_z * y_in  # through y * w, to each operand
        g = g_z * w
    return harness.clock() - start, float(g), float(g_w)


def bench_tanh_chain(torch, quick):
    """y = tanh(y · w), 50,000 times: 100,000 operations, forward and backward timed together."""
    ops = 2_000 if quick else 100_000
    repeat = 2 if quick else 5
    contenders = {
        "minigrad": _tanh_chain_minigrad,
        "pytorch": lambda n: _tanh_chain_pytorch(torch, n),
        "numpy": _tanh_chain_numpy,
    }  # (micrograd 0.1.0's Value has no tanh)
    for run in contenders.values():
        run(1000)  # warm-up, so that whatever a library sets up lazily is frozen below
    harness.freeze_heap()
    results = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, run in contenders.items():
            gc.collect()
            results[name].append(run(ops))
    expected = results["pytorch"][-1][1:]
    for name, runs in results.items():
        _check(f"tanh chain gradients ({name})", runs[-1][1:], expected)
    total = {name: [r[0] for r in runs] for name, runs in results.items()}
    return _record(
        "tanh_chain_forward_backward", "us/op", harness.summarize(total, 1e6 / ops),
        TARGETS["tanh_chain_forward_backward"], ops=ops,
    )


def bench_chain(torch, quick):
    ops = 2_000 if quick else 100_000
    repeat = 2 if quick else 3
    failure = micrograd_recursion_failure(1000)
    deepest = micrograd_deepest_chain()
    contenders = {
        "minigrad": _chain_minigrad,
        "pytorch": lambda n: _chain_pytorch(torch, n),
        "numpy": _chain_numpy,
        "micrograd": _chain_micrograd,
    }
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 2 * ops + 1000))  # micrograd recurses once per vertex
    try:
        for run in contenders.values():
            run(1000)  # warm-up, so that whatever a library sets up lazily is frozen below
        harness.freeze_heap()
        results = {name: [] for name in contenders}
        for _ in range(repeat):
            for name, run in contenders.items():
                gc.collect()
                results[name].append(run(ops))
    finally:
        sys.setrecursionlimit(old_limit)
    expected = SCALE ** (ops // 2)
    for name, runs in results.items():
        _check(f"chain gradient ({name})", runs[-1][2], expected)

    forward = {name: [r[0] for r in runs] for name, runs in results.items()}
    backward = {name: [r[1] for r in runs] for name, runs in results.items()}
    total = {name: [r[0] + r[1] for r in runs] for name, runs in results.items()}
    extra = {
        "ops": ops,
        "micrograd_default_limit": old_limit,
        "micrograd_at_depth_1000": failure or "no error",
        "micrograd_deepest_at_default_limit": deepest,
    }
    return [
        _record("chain_backward", "us/op", harness.summarize(backward, 1e6 / ops), TARGETS["chain_backward"], **extra),
        _record("chain_forward", "us/op", harness.summarize(forward, 1e6 / ops), ops=ops),
        _record("chain_forward_backward", "us/op", harness.summarize(total, 1e6 / ops), ops=ops),
    ]


# --------------------------------------------------------------------------- a char-RNN epoch
RNN_STEPS, RNN_STREAMS, RNN_HIDDEN, RNN_LR, RNN_CLIP = 25, 16, 100, 1e-2, 5.0


class CharRNN(nn.Module):
    """RNNCell over one-hot characters, a linear head on each hidden state."""

    def __init__(self, vocab, rng):
        self.cell = nn.RNNCell(vocab, RNN_HIDDEN, rng=rng)
        self.head = nn.Linear(RNN_HIDDEN, vocab, rng=rng)

    def forward(self, xs, h):
        logits = []
        for x in xs:
            h = self.cell(x, h)
            logits.append(self.head(h))
        return mg.stack(logits), h


def _torch_char_rnn(torch, vocab):
    class TorchCharRNN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = torch.nn.RNNCell(vocab, RNN_HIDDEN)
            self.head = torch.nn.Linear(RNN_HIDDEN, vocab)

        def forward(self, xs, h):
            logits = []
            for x in xs:
                h = self.cell(x, h)
                logits.append(self.head(h))
            return torch.stack(logits), h

    return TorchCharRNN().double()


def _char_rnn_chunks():
    """(one-hot inputs (time, stream, vocab), next-character labels (time·stream,)) for each window
    of RNN_STEPS characters along 16 parallel streams of the course's text, and the vocabulary size."""
    from minigrad.data import load_text

    text = load_text()
    alphabet = sorted(set(text))
    ids = np.array([alphabet.index(c) for c in text])
    length = len(ids) // RNN_STREAMS
    streams = ids[: RNN_STREAMS * length].reshape(RNN_STREAMS, length)
    one_hot = np.eye(len(alphabet))
    starts = range(0, length - RNN_STEPS - 1, RNN_STEPS)
    return [(one_hot[streams[:, s : s + RNN_STEPS]].transpose(1, 0, 2).copy(), streams[:, s + 1 : s + RNN_STEPS + 1].T.reshape(-1).copy()) for s in starts], len(alphabet)


def bench_char_rnn(torch, quick):
    """One epoch of truncated BPTT over the text: forward, loss, backward, clipping, Adam, per window."""
    chunks, vocab = _char_rnn_chunks()
    model = CharRNN(vocab, np.random.default_rng(0))
    module = _torch_char_rnn(torch, vocab)
    module.load_state_dict({k: torch.from_numpy(v) for k, v in nn.utils.torch_state_dict(model).items()})
    torch_chunks = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in chunks]

    def minigrad_loss(x, y, h):
        logits, h = model(mg.tensor(x), h)
        return nn.cross_entropy(logits.reshape(-1, vocab), y), h

    def pytorch_loss(x, y, h):
        logits, h = module(x, h)
        return torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), y), h

    # The same model: the first window's loss and gradients agree before any step is taken.
    loss, _ = minigrad_loss(*chunks[0], mg.tensor(np.zeros((RNN_STREAMS, RNN_HIDDEN))))
    torch_loss, _ = pytorch_loss(*torch_chunks[0], torch.zeros(RNN_STREAMS, RNN_HIDDEN, dtype=torch.float64))
    loss.backward()
    torch_loss.backward()
    _check("char_rnn loss", loss.item(), torch_loss.item())
    _check("char_rnn d/dW_hh", model.cell.weight_hh.grad.data, module.cell.weight_hh.grad.numpy().T)
    optimizer = optim.Adam(model.parameters(), lr=RNN_LR)
    torch_optimizer = torch.optim.Adam(module.parameters(), lr=RNN_LR)

    def minigrad_epoch():
        h = mg.tensor(np.zeros((RNN_STREAMS, RNN_HIDDEN)))
        for x, y in chunks:
            loss, h = minigrad_loss(x, y, h)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), RNN_CLIP)
            optimizer.step()
            h = h.detach()
        return loss.item()

    def pytorch_epoch():
        h = torch.zeros(RNN_STREAMS, RNN_HIDDEN, dtype=torch.float64)
        for x, y in torch_chunks:
            loss, h = pytorch_loss(x, y, h)
            torch_optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), RNN_CLIP)
            torch_optimizer.step()
            h = h.detach()
        return loss.item()

    minigrad_epoch(), pytorch_epoch()
    harness.freeze_heap()
    number, repeat = (1, 2) if quick else (3, 15)
    runs = harness.time_interleaved({"minigrad": minigrad_epoch, "pytorch": pytorch_epoch}, number, repeat)
    return _record(
        "char_rnn_epoch", "ms/epoch", harness.summarize(runs, scale=1e3), TARGETS["char_rnn_epoch"],
        windows=len(chunks), steps=RNN_STEPS, streams=RNN_STREAMS, hidden=RNN_HIDDEN, vocab=vocab, optimizer="Adam",
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run (figures are noisy)")
    harness.add_timing_options(parser)
    args = parser.parse_args(argv)
    harness.apply_timing_options(args)

    torch = harness.single_threaded_torch()
    harness.emit({"benchmark": "machine", "command": harness.command_line(), "quick": args.quick, "clock": args.clock, **harness.machine()})
    records = [
        bench_per_op(torch, args.quick),
        bench_mlp(torch, args.quick),
        *bench_tiny_mlp(torch, args.quick),
        bench_deep_mlp(torch, args.quick),
        *bench_chain(torch, args.quick),
        bench_tanh_chain(torch, args.quick),
        bench_char_rnn(torch, args.quick),
    ]
    targets = {r["benchmark"]: {"ratio": r["ratio"], "target": r["target"], "met": r["met"]} for r in records if "target" in r}
    mlp = next(r for r in records if r["benchmark"] == "mlp_step")  # its second target: the numpy floor
    targets["mlp_step_numpy_floor"] = {"ratio": mlp["ratio_to_numpy"], "target": MLP_FLOOR_TARGET, "met": mlp["numpy_floor_met"]}
    harness.emit({"benchmark": "summary", "targets": targets, "all_met": all(t["met"] for t in targets.values())})
    return 0


if __name__ == "__main__":
    sys.exit(main())
