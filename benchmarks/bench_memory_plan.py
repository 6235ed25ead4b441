"""Memory planning on a traced MLP forward+backward: planned peak against no reuse and the lower bound.

    .venv/bin/python benchmarks/bench_memory_plan.py            # three MLP sizes, a few seconds
    .venv/bin/python benchmarks/bench_memory_plan.py --quick    # one small MLP

The program is the training step of an MLP (tanh hidden layers, mean squared error), traced with
its backward pass (`minigrad.jit.trace(loss, x, y, *params, backward=True)`) and cleaned by
dead-code elimination: the graph a compiled training step runs. For each plan strategy
(`greedy_by_size`, planned offline from the whole schedule; `best_fit`, what an allocator that
cannot see the future does; `none`) one JSON line reports the arena it needs against:

* no reuse, every value in its own buffer: target peak <= 60% of it;
* the liveness lower bound, the most bytes live at one step: target peak within 10% of it.

The targets apply to the library's default, `greedy_by_size`. Before any figure is printed, the
plan is checked by the independent validator `check_plan`, and the planned interpreter's loss and
gradients are compared with eager minigrad's on fresh data.
"""

import harness  # noqa: I001  (first: pins every BLAS library to one thread before numpy loads)

import argparse

import numpy as np

import minigrad as mg
from minigrad import jit
from minigrad.jit.backends.numpy_backend import PlannedInterpreter

NO_REUSE_TARGET = 0.60
LOWER_BOUND_TARGET = 1.10
SIZES = {"small": (4, 64, 32), "medium": (8, 256, 128), "large": (16, 512, 256)}  # depth, width, batch


def mlp_loss(x, y, *params):
    """Mean squared error of an MLP whose weights and biases come as arguments (so they are inputs)."""
    h = x
    for k in range(0, len(params), 2):
        h = h @ params[k] + params[k + 1]
        if k + 2 < len(params):
            h = h.tanh()
    return ((h - y) ** 2).mean()


def example(depth, width, batch, rng):
    shapes = [(width, width), (width,)] * depth
    params = [rng.standard_normal(s) / np.sqrt(s[0]) if len(s) == 2 else np.zeros(s) for s in shapes]
    return [rng.standard_normal((batch, width)), rng.standard_normal((batch, width)), *params]


def check_against_eager(graph, plan, arrays):
    """The planned interpreter's loss and gradients equal eager minigrad's (raises otherwise)."""
    loss, *grads = PlannedInterpreter(graph, plan)(*arrays)
    eager_loss, eager_grads = mg.value_and_grad(mlp_loss, argnums=tuple(range(len(arrays))))(*arrays)
    np.testing.assert_allclose(loss, eager_loss.data, rtol=1e-12)
    for got, expected in zip(grads, eager_grads):
        np.testing.assert_allclose(got, expected.data, rtol=1e-10, atol=1e-14)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small MLP only")
    args = parser.parse_args()
    harness.emit({"benchmark": "memory_plan", "command": harness.command_line(), "machine": harness.machine()})
    rng = np.random.default_rng(0)
    for name in ["small"] if args.quick else list(SIZES):
        depth, width, batch = SIZES[name]
        graph = jit.eliminate_dead_code(jit.trace(mlp_loss, *example(depth, width, batch, rng), backward=True))
        for strategy in ("greedy_by_size", "best_fit", "none"):
            plan = jit.plan_memory(graph, strategy)
            jit.check_plan(graph, plan)
            check_against_eager(graph, plan, example(depth, width, batch, rng))
            figures = plan.summary()
            record = {"mlp": name, "depth": depth, "width": width, "batch": batch, "nodes": len(graph.nodes), **figures}
            if strategy == "greedy_by_size":
                record["targets"] = {
                    f"peak <= {NO_REUSE_TARGET:.0%} of no reuse": figures["peak_over_no_reuse"] <= NO_REUSE_TARGET,
                    f"peak within {LOWER_BOUND_TARGET - 1:.0%} of the lower bound": figures["peak_over_lower_bound"]
                    <= LOWER_BOUND_TARGET,
                }
            harness.emit(record)


if __name__ == "__main__":
    main()
