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
* backward through a chain of 100,000 scalar operations, per operation: the engine's cost per
  graph vertex, with micrograd (Karpathy's recursive `Value`) as the contrast: its depth-first
  search recurses once per vertex, so it fails near Python's default recursion limit of 1000.

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

TARGETS = {  # the most minigrad may take, as a multiple of PyTorch's time (issue 2, "Benchmarks")
    "per_op_4x4": 1.0,
    "mlp_step": 1.0,
    "chain_backward": 0.75,
}


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

    layers = []
    for i, (w, bias) in enumerate(weights):
        linear = torch.nn.Linear(*w.shape, dtype=torch.float64)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(w.T))
            linear.bias.copy_(torch.from_numpy(bias))
        layers += [linear] + ([torch.nn.ReLU()] if i < len(weights) - 1 else [])
    torch_model = torch.nn.Sequential(*layers)
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

    params = [array.copy() for pair in weights for array in pair]
    onehot = np.eye(SIZES[-1])[labels]

    def numpy_step():
        (w1, b1, w2, b2, w3, b3) = params
        h1 = np.maximum(x0 @ w1 + b1, 0.0)
        h2 = np.maximum(h1 @ w2 + b2, 0.0)
        logits = h2 @ w3 + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -(log_probs * onehot).sum() / BATCH
        g_logits = (np.exp(log_probs) - onehot) / BATCH
        g_h2 = (g_logits @ w3.T) * (h2 > 0)
        g_h1 = (g_h2 @ w2.T) * (h1 > 0)
        for param, grad in zip(params, (x0.T @ g_h1, g_h1.sum(0), h1.T @ g_h2, g_h2.sum(0), h2.T @ g_logits, g_logits.sum(0))):
            param -= LR * grad
        return loss

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
    phases = _phase_medians({"minigrad": minigrad_step, "pytorch": pytorch_step}, *((1, 2) if quick else (8, 10)))
    return _record(
        "mlp_step", "ms/step", figures, TARGETS["mlp_step"], batch=BATCH, sizes=list(SIZES), dtype="float64",
        activation="relu", loss="cross_entropy", phases_us_median=phases,
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run (figures are noisy)")
    parser.add_argument("--clock", choices=sorted(harness.CLOCKS), default="cpu", help="process CPU time (default) or wall time")
    args = parser.parse_args(argv)
    harness.use_clock(args.clock)

    torch = harness.single_threaded_torch()
    harness.emit({"benchmark": "machine", "command": harness.command_line(), "quick": args.quick, "clock": args.clock, **harness.machine()})
    records = [bench_per_op(torch, args.quick), bench_mlp(torch, args.quick), *bench_chain(torch, args.quick)]
    targets = {r["benchmark"]: {"ratio": r["ratio"], "target": r["target"], "met": r["met"]} for r in records if "target" in r}
    harness.emit({"benchmark": "summary", "targets": targets, "all_met": all(t["met"] for t in targets.values())})
    return 0


if __name__ == "__main__":
    sys.exit(main())
