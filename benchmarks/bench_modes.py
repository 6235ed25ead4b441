"""Forward mode against reverse mode for full Jacobians, minigrad and PyTorch side by side.

    .venv/bin/python benchmarks/bench_modes.py            # the full run (about a minute)
    .venv/bin/python benchmarks/bench_modes.py --quick    # a seconds-long smoke run

Chapter 3's claim, measured: a full Jacobian of f: Rᴺ → Rᴹ costs N forward-mode passes (JVPs) or
M reverse-mode passes (VJPs), so reverse mode wins for a loss (M = 1) and forward mode for a
curve (N = 1). Two functions, on one thread, CPU time:

* loss: f(x) = sin(Σ xᵢ tanh xᵢ + Σ xᵢ²), x ∈ Rᴺ — N JVPs against one VJP;
* curve: g(t) = w ⊙ sin(t w), w ∈ Rᴹ — one JVP against M VJPs.

Each JSON line gives, for one function, size and mode, minigrad's time, PyTorch's time for the
same passes (`torch.func.jvp` one direction at a time, `torch.autograd.grad` one cotangent at a
time: the same algorithm, not vmap's batching) and their ratio (below 1: minigrad is faster), plus
`mode_ratio`: the slower mode's time over the faster mode's, in each library. Every measurement
first checks that the two libraries and both modes produce the same Jacobian.
"""

import harness  # noqa: I001  (first: pins every BLAS library to one thread before numpy loads)

import argparse

import numpy as np

import minigrad as mg


def _unit(size, k):
    e = np.zeros(size)
    e[k] = 1.0
    return e


def _loss(x):  # minigrad tensors and torch tensors have the same methods
    return ((x.tanh() * x).sum() + (x * x).sum()).sin()


def _contenders(kind, size, torch, rng):
    """{(library, mode): zero-argument function returning the full Jacobian as a numpy array}."""
    if kind == "loss":
        x = rng.standard_normal(size)
        xt = torch.from_numpy(x)
        f_mg, f_torch, point, point_torch, inputs, outputs = _loss, _loss, x, xt, size, 1
    else:
        w = rng.standard_normal(size)
        w_mg, w_torch = mg.tensor(w), torch.from_numpy(w)
        f_mg, f_torch = (lambda t: (t * w_mg).sin() * w_mg), (lambda t: (t * w_torch).sin() * w_torch)
        point, point_torch, inputs, outputs = np.array(0.3), torch.tensor(0.3, dtype=torch.float64), 1, size

    def minigrad_forward():
        columns = [mg.jvp(f_mg, (mg.tensor(point),), (mg.tensor(_unit(inputs, k).reshape(point.shape)),))[1].data
                   for k in range(inputs)]
        return np.stack(columns, axis=-1).reshape(outputs, inputs)

    def minigrad_reverse():
        _, vjp_fn = mg.vjp(f_mg, mg.tensor(point))
        rows = [vjp_fn(mg.tensor(_unit(outputs, k).reshape(() if kind == "loss" else (outputs,))))[0].data
                for k in range(outputs)]
        return np.stack(rows).reshape(outputs, inputs)

    def torch_forward():
        columns = [torch.func.jvp(f_torch, (point_torch,), (torch.from_numpy(_unit(inputs, k)).reshape(point_torch.shape),))[1]
                   for k in range(inputs)]
        return torch.stack(columns, dim=-1).reshape(outputs, inputs).numpy()

    def torch_reverse():
        p = point_torch.clone().requires_grad_(True)
        out = f_torch(p).reshape(-1)
        rows = [torch.autograd.grad(out[k], p, retain_graph=True)[0] for k in range(outputs)]
        return torch.stack(rows).reshape(outputs, inputs).numpy()

    return {("minigrad", "forward"): minigrad_forward, ("minigrad", "reverse"): minigrad_reverse,
            ("pytorch", "forward"): torch_forward, ("pytorch", "reverse"): torch_reverse}


def measure(kind, size, repeat, torch, rng):
    """JSON records (one per mode) for the full Jacobian of `kind` at `size`."""
    contenders = _contenders(kind, size, torch, rng)
    reference = contenders[("pytorch", "reverse")]()
    for key, fn in contenders.items():
        if not np.allclose(fn(), reference, rtol=1e-10, atol=1e-12):
            raise AssertionError(f"{kind}, size {size}: {key} disagrees with PyTorch's reverse mode")
    runs = harness.time_interleaved({f"{lib}_{mode}": fn for (lib, mode), fn in contenders.items()}, number=1, repeat=repeat)
    best = {name: figure["min"] for name, figure in harness.summarize(runs).items()}
    passes = {"forward": size if kind == "loss" else 1, "reverse": 1 if kind == "loss" else size}
    slow, fast = ("forward", "reverse") if kind == "loss" else ("reverse", "forward")
    records = []
    for mode in ("forward", "reverse"):
        records.append({
            "benchmark": f"jacobian_{kind}",
            "mode": mode,
            "size": size,
            "passes": passes[mode],
            "unit": "s",
            "minigrad": round(best[f"minigrad_{mode}"], 6),
            "pytorch": round(best[f"pytorch_{mode}"], 6),
            "ratio": round(best[f"minigrad_{mode}"] / best[f"pytorch_{mode}"], 3),
            "mode_ratio": {lib: round(best[f"{lib}_{slow}"] / best[f"{lib}_{fast}"], 2) for lib in ("minigrad", "pytorch")},
            "runs": repeat,
        })
    return records


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat: checks the script runs")
    args = parser.parse_args(argv)
    torch = harness.single_threaded_torch()
    import torch.func  # noqa: F401  (forward-mode AD lives here)

    harness.emit({"benchmark": "machine", **harness.machine(), "command": harness.command_line()})
    sizes, repeat = ([4, 16], 1) if args.quick else ([10, 100, 1000], 3)
    rng = np.random.default_rng(0)
    for kind in ("loss", "curve"):
        for size in sizes:
            for record in measure(kind, size, repeat, torch, rng):
                harness.emit(record)


if __name__ == "__main__":
    main()
