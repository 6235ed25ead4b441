"""Gradient checkpointing: memory saved and time paid, minigrad beside torch.utils.checkpoint.

    .venv/bin/python benchmarks/bench_checkpoint.py            # N in {16, 64, 256}: a few minutes
    .venv/bin/python benchmarks/bench_checkpoint.py --quick    # a seconds-long smoke run

The model is issue 6's: N blocks of Linear(512, 512) + ReLU on a batch of 256, float64 on both
sides, one thread each. For each depth N it compares a plain forward+backward with
`checkpoint_sequential` over round(√N) segments and prints one JSON line with:

* `peak_ratio`: the peak of minigrad's saved activations (`track_saved_bytes`, over forward and
  backward) with checkpointing divided by without; target <= 2.5/√N. Each segment boundary keeps
  one activation and one segment is rebuilt at a time, so the peak is O(√N) against O(N).
* `overhead`: extra forward+backward time with checkpointing, minigrad's and PyTorch's
  (`use_reentrant=False`), each against its own plain run in the same process; targets: minigrad's
  <= 0.30 and no worse than PyTorch's. Both recompute the forward of every segment but the last.

Before timing, each configuration's gradients are checked against the plain run's.
"""

import harness  # noqa: I001  (first: pins every BLAS library to one thread before numpy loads)

import argparse
import math

import numpy as np

import minigrad as mg
from minigrad import nn

OVERHEAD_TARGET = 0.30


def minigrad_model(depth, width, rng):
    return nn.Sequential(*[nn.Sequential(nn.Linear(width, width, rng=rng), nn.ReLU()) for _ in range(depth)])


def torch_model(torch, model):
    """The same weights in a torch.nn.Sequential of (Linear, ReLU) blocks, float64."""
    blocks = []
    for block in model:
        linear = torch.nn.Linear(*block[0].weight.shape, dtype=torch.float64)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(block[0].weight.data.T))
            linear.bias.copy_(torch.from_numpy(block[0].bias.data))
        blocks.append(torch.nn.Sequential(linear, torch.nn.ReLU()))
    return torch.nn.Sequential(*blocks)


def minigrad_step(model, x, segments):
    """One forward and backward; `segments=None` means no checkpointing."""
    model.zero_grad()
    out = model(x) if segments is None else mg.checkpoint_sequential(model, segments, x)
    (out * out).mean().backward()


def torch_step(torch, model, x, segments):
    from torch.utils.checkpoint import checkpoint_sequential

    model.zero_grad(set_to_none=True)
    out = model(x) if segments is None else checkpoint_sequential(model, segments, x, use_reentrant=False)
    (out * out).mean().backward()


def peak_saved_bytes(model, x, segments):
    with mg.track_saved_bytes() as tracker:
        minigrad_step(model, x, segments)
    return tracker.peak


def check_gradients(model, tmodel, x, tx, torch, segments):
    """Checkpointed gradients equal the plain ones, and minigrad's equal PyTorch's."""
    minigrad_step(model, x, None)
    plain = [p.grad.data.copy() for p in model.parameters()]
    minigrad_step(model, x, segments)
    torch_step(torch, tmodel, tx, segments)
    for got, expected in zip([p.grad.data for p in model.parameters()], plain):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14, err_msg="minigrad checkpointed vs plain")
    np.testing.assert_allclose(
        tmodel[0][0].weight.grad.numpy().T, plain[0], rtol=1e-8, atol=1e-12, err_msg="minigrad vs PyTorch"
    )


def measure(depth, width, batch, repeat, torch):
    rng = np.random.default_rng(depth)
    model = minigrad_model(depth, width, rng)
    x = mg.tensor(rng.standard_normal((batch, width)))
    tmodel, tx = torch_model(torch, model), torch.from_numpy(x.data)
    segments = max(1, round(math.sqrt(depth)))
    check_gradients(model, tmodel, x, tx, torch, segments)

    peak_plain = peak_saved_bytes(model, x, None)
    peak_checkpointed = peak_saved_bytes(model, x, segments)
    runs = harness.time_interleaved(
        {
            "minigrad": lambda: minigrad_step(model, x, None),
            "minigrad_checkpoint": lambda: minigrad_step(model, x, segments),
            "pytorch": lambda: torch_step(torch, tmodel, tx, None),
            "pytorch_checkpoint": lambda: torch_step(torch, tmodel, tx, segments),
        },
        number=1,
        repeat=repeat,
    )
    best = {name: figure["min"] for name, figure in harness.summarize(runs).items()}
    overhead = best["minigrad_checkpoint"] / best["minigrad"] - 1
    torch_overhead = best["pytorch_checkpoint"] / best["pytorch"] - 1
    peak_ratio = peak_checkpointed / peak_plain
    return {
        "benchmark": "checkpoint_sequential",
        "depth": depth,
        "width": width,
        "batch": batch,
        "segments": segments,
        "peak_saved_bytes": {"none": peak_plain, "checkpoint": peak_checkpointed},
        "peak_ratio": round(peak_ratio, 4),
        "peak_ratio_target": round(2.5 / math.sqrt(depth), 4),
        "seconds": {name: round(value, 4) for name, value in best.items()},
        "overhead": round(overhead, 4),
        "pytorch_overhead": round(torch_overhead, 4),
        "overhead_target": OVERHEAD_TARGET,
        "met": {
            "memory": peak_ratio <= 2.5 / math.sqrt(depth),
            "overhead": overhead <= OVERHEAD_TARGET,
            "overhead_vs_pytorch": overhead <= torch_overhead,
        },
        "runs": repeat,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat: checks the script runs")
    args = parser.parse_args(argv)
    torch = harness.single_threaded_torch()
    harness.emit({"benchmark": "machine", **harness.machine(), "command": harness.command_line()})
    if args.quick:
        settings = [(depth, 32, 16, 1) for depth in (4, 9)]
    else:
        settings = [(depth, 512, 256, 5) for depth in (16, 64, 256)]
    for depth, width, batch, repeat in settings:
        harness.emit(measure(depth, width, batch, repeat, torch))


if __name__ == "__main__":
    main()
