"""The CUDA backend on Numba's CUDA simulator, in a separate process.

The simulator has to be chosen before `numba.cuda` is first imported, and an import is forever, so
the checks run in a child process started with NUMBA_ENABLE_CUDASIM=1 (this file run as a script).
The simulator runs every CUDA thread as a Python thread: arrays are tiny. The child compiles
programs with backend="cuda" (a few chosen ones, then test_jit_core's random programs) and compares
values and gradients with eager minigrad; it prints one JSON line per check, and the tests here
read them.

With MINIGRAD_CUDA_TESTS=gpu (tools/gpu_check.sh sets it on a machine with an NVIDIA GPU) the same
child runs the same checks on the real device instead, and the tests require that it did.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg

ON_GPU = os.environ.get("MINIGRAD_CUDA_TESTS") == "gpu"  # the same checks on a real GPU, not the simulator
# One worker runs the checks' child process (child_results, a module fixture) for every test here: ungrouped,
# each worker that drew one of these tests ran the whole simulator child again (~17 s).
pytestmark = pytest.mark.xdist_group("cuda-sim")

MASK = np.array([[True, False, True, False]])


def gelu_mlp(x, w, b, v):
    h = x @ w + b
    g = 0.5 * h * (1.0 + (0.7978845608 * (h + 0.044715 * h**3)).tanh())
    return (g.sigmoid() * v).mean()


def broadcasting(x, b, c):
    return (mg.where(MASK, (x + b).relu(), x.abs().clip(0.1, 0.6)) * c.reshape(3, 1)).exp().sum()


def softmax_cross_entropy(x, w):
    logits = x @ w
    return -(logits - logits.max(axis=1, keepdims=True)).exp().sum(axis=1).log().mean() + logits.mean()


PROGRAMS = {  # name: (function, input shapes, dtype)
    "gelu_mlp_float32": (gelu_mlp, [(3, 4), (4, 5), (5,), (3, 5)], np.float32),
    "broadcasting_float64": (broadcasting, [(3, 4), (4,), (3,)], np.float64),
    "softmax_float64": (softmax_cross_entropy, [(2, 3), (3, 4)], np.float64),
}


def run_checks():
    """In the child: every program through the cuda backend, on new inputs, against eager."""
    from minigrad import jit
    from minigrad.jit.backends.cuda_backend import simulated

    rng = np.random.default_rng(0)
    for name, (fn, shapes, dtype) in PROGRAMS.items():
        compiled = jit.compile(fn, backend="cuda", backward=True)
        errors = []
        for _ in range(2):  # the second call reuses the compiled program on other inputs
            arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
            value, grads = compiled(*arrays)
            tensors = [mg.tensor(a) for a in arrays]  # (raw arrays would be promoted to float64)
            expected, expected_grads = mg.value_and_grad(fn, argnums=tuple(range(len(arrays))))(*tensors)
            pairs = [(value, expected)] + list(zip(grads, expected_grads, strict=True))
            errors.append(max(_relative_error(got.data, want.data) for got, want in pairs))
            dtypes_kept = all(got.dtype == want.dtype for got, want in pairs)
        kinds = [n.param_dict["kind"] for n in compiled.runner.graph.nodes if n.op == "fused"]
        print(json.dumps({
            "name": name,
            "simulated": simulated(),
            "max_relative_error": max(errors),
            "dtypes_kept": dtypes_kept,
            "kernels": len(kinds),
            "epilogue": "linear_epilogue" in kinds,
            "grid_stride": "for i in range(start," in compiled.source and "cuda.gridsize(1)" in compiled.source,
        }))


SIGMOID_TAIL = [-100.0, -40.0, -20.0, -17.0, -9.0, 0.0, 9.0, 20.0]


def run_sigmoid_tails():
    """In the child: sigmoid's kernel far into both tails (the tanh form rounded x <= -20 to 0 in float32)."""
    import math

    from minigrad import jit

    for dtype in (np.float32, np.float64):
        compiled = jit.compile(lambda x: x.sigmoid(), backend="cuda")
        x = np.array(SIGMOID_TAIL + ([-700.0] if dtype == np.float64 else []), dtype)
        got = compiled(x).data
        print(json.dumps({"name": f"sigmoid_tails_{np.dtype(dtype).name}", "x": x.tolist(), "got": got.tolist(),
                          "exact": [1 / (1 + math.exp(-v)) for v in x.tolist()], "dtype": str(got.dtype)}))


def run_random_programs():
    """In the child: test_jit_core's random programs (hypothesis, derandomized) through the cuda backend."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from test_jit_core import _assert_matches_eager, _random_inputs, programs

    from minigrad import jit

    checked = []

    @settings(max_examples=8, deadline=None, database=None, derandomize=True)
    @given(programs(), st.integers(0, 2**16))
    def check(program, seed):
        fn, shapes = program
        rng = np.random.default_rng(seed)
        compiled = jit.compile(fn, backend="cuda", backward=True)
        for _ in range(2):
            arrays = _random_inputs(shapes, rng)
            value, grads = compiled(*arrays)
            _assert_matches_eager(fn, arrays, value, grads)  # raises, with the program, on a mismatch
        checked.append(fn.steps)

    check()
    print(json.dumps({"name": "random_programs", "checked": len(checked)}))


def _relative_error(got, want):
    scale = np.maximum(np.abs(want), 1e-3)
    return float(np.max(np.abs(got - want) / scale)) if np.size(want) else 0.0


@pytest.fixture(scope="module")
def child_results(tmp_path_factory):
    if ON_GPU:
        from minigrad.jit.backends.cuda_backend import gpu_present

        assert gpu_present(), "MINIGRAD_CUDA_TESTS=gpu, but the CUDA driver sees no GPU here"
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0" if ON_GPU else "1",
           "MINIGRAD_CACHE_DIR": str(tmp_path_factory.mktemp("kernels"))}
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).resolve())], env=env, capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, f"the CUDA checks' process failed:\n{completed.stderr[-4000:]}"
    lines = [json.loads(line) for line in completed.stdout.splitlines() if line.startswith("{")]
    return {result["name"]: result for result in lines}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cuda_kernels_on_the_simulator_match_eager(child_results, name):
    result = child_results.get(name)
    assert result is not None, f"the CUDA checks' process reported nothing for {name}: {sorted(child_results)}"
    if ON_GPU:
        assert not result["simulated"], "MINIGRAD_CUDA_TESTS=gpu: the kernels should have run on the GPU"
    else:
        assert result["simulated"], "NUMBA_ENABLE_CUDASIM=1 was set: the kernels should have run on the simulator"
    tolerance = 1e-4 if "float32" in name else 1e-10
    assert result["max_relative_error"] < tolerance, f"{name}: values/gradients differ from eager: {result}"
    assert result["dtypes_kept"], f"{name}: a result changed dtype: {result}"
    assert result["grid_stride"], f"{name}: kernels should be grid-stride loops"
    assert result["kernels"] >= 1


def test_matmul_bias_activation_runs_as_one_cuda_kernel(child_results):
    assert child_results["gelu_mlp_float32"]["epilogue"], "x @ w + b then GELU: expected a linear_epilogue kernel"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_kernel_keeps_both_tails_on_the_simulator(child_results, dtype):
    result = child_results[f"sigmoid_tails_{dtype}"]
    assert result["dtype"] == dtype
    got, exact = np.array(result["got"]), np.array(result["exact"])
    tiny = np.finfo(dtype).smallest_subnormal
    # relative error at float32's rounding (one subnormal step for e^-100 in float32), never 0 in the tail
    error_ok = np.abs(got - exact) <= np.maximum(np.abs(exact) * (3e-7 if dtype == "float32" else 1e-15), tiny)
    assert error_ok.all() and (got > 0).all(), f"sigmoid on the simulator, {dtype}: x {result['x']} gave {got}, exact {exact}"


def test_random_programs_on_the_simulator_match_eager(child_results):
    """Values and gradients of random traced programs (every primitive with a fusible or host path)."""
    assert child_results["random_programs"]["checked"] == 8


if __name__ == "__main__":
    run_checks()
    run_sigmoid_tails()
    run_random_programs()
