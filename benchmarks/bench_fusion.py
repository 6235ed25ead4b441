"""Operator fusion: a fused GELU kernel against unfused numpy, PyTorch and the machine's copy bandwidth.

    .venv/bin/python benchmarks/bench_fusion.py                # 16M float32 elements, about 2 minutes
    .venv/bin/python benchmarks/bench_fusion.py --quick        # 1M elements, fewer runs
    .venv/bin/python benchmarks/bench_fusion.py --no-torch-compile   # skip Inductor's ~1 minute compile
    .venv/bin/python benchmarks/bench_fusion.py --accuracy     # only: every float32 through tanh/exp/sigmoid (~6 CPU minutes)
    python3 benchmarks/bench_fusion.py --gpu-only              # only the GPU section (a machine with a GPU)

GELU, tanh form (Hendrycks & Gimpel 2016), float32: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Its cost model is memory traffic: a fused kernel reads 4 bytes and writes 4 bytes per element; the
same formula run one numpy operation at a time moves each of its ~8 intermediates through memory.
So the fused kernel's achieved bandwidth, 8 bytes x elements / seconds, is compared with the
machine's copy bandwidth measured in the same run (np.copyto: also 4 bytes read and 4 written per
float32) — the roofline of a memory-bound kernel.

Contenders (all single-threaded, CPU clock, interleaved runs; see harness.py):
* minigrad_fused: the kernel `jit.compile(gelu, backend="numba")` generates with no options (tanh
  from `jit.fastmath`'s accurate vectorisable functions, 512-bit vectors where the CPU has them),
  called on preallocated arrays (what the compiled function runs for this group); the only option
  passed is parallel_threshold, to keep it on one thread like every other contender;
* minigrad_compiled: the compiled function end to end (input checks, the kernel, the copy of the
  result out of the planned arena);
* minigrad_fused_fast_math: the same with fast_math=True (tanh within 1e-6 relative, fewer operations);
* minigrad_fused_libm: the kernel with math.tanh (libm, one element at a time: no SIMD), the
  library's default before the accurate vectorisable functions (`kernel_source(libm=True)`);
* numpy_unfused (the formula as written, x**3 included), numpy_unfused_products (x*x*x: numpy's float32
  power is a slow scalar loop), numpy_inplace (x*x*x, every step into a preallocated array: the best
  numpy does one operation at a time);
* torch_eager (the formula op by op), torch_gelu (F.gelu(approximate="tanh"), ATen's hand-written
  vectorised kernel), torch_compile (Inductor; its failure is reported, not raised);
* copy: np.copyto, the bandwidth roofline.
Targets (issue 13): the default fused kernel >= 10x numpy (the formula as written), >= 2x
torch.compile, >= 70% of copy bandwidth; the summary lists the speed-up over every contender, the
stronger numpy forms included, the CPU model and the load average before and after the runs (the
reference machine is shared: CPU time is measured, but a loaded machine still slows memory).

All cores, as a user calls it: `jit.compile(gelu, backend="numba")` with no options runs its
kernel on every core (parallel from `parallel_threshold` elements); that kernel and the compiled
function end to end are timed in wall time against a copy on every core (a Numba prange loop on
the same threads), the roofline of a memory-bound kernel on the whole machine (target >= 70%).

Also: compile latency of 30-operation fused groups (four of them, cold, in a fresh process with an
empty kernel cache) and the start of a second process that finds them in the disk cache (target
< 0.1 s per kernel; Numba's import and its compiler's one-time start, paid by the first kernel of
a process, are reported separately); and, only when a GPU is present, the fused kernel's
bandwidth on the device against a device-to-device copy (target >= 70%) and chapter 9's compiled
training step with backend="cuda" against the CPU backends and PyTorch on the same GPU
(`--gpu-only` runs just this section; `tools/gpu_check.sh` runs it with the CUDA tests and chapter 9).
"""

import harness  # noqa: I001  (first: pins every BLAS library to one thread before numpy loads)

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from minigrad import jit

TARGETS = {"numpy_unfused": 10.0, "torch_compile": 2.0}  # fused speed-up over these peers
COPY_FRACTION_TARGET = 0.7
GPU_COPY_FRACTION_TARGET = 0.7
# mlp_loss's (x, y, W1, b1, W2, b2): chapter 9's model, batch 8192 and 1024 hidden units on a GPU
GPU_STEP_SHAPES = [(8192, 64), (8192, 8), (64, 1024), (1024,), (1024, 8), (8,)]
GPU_STEP_SHAPES_SIMULATED = [(4, 8), (4, 2), (8, 16), (16,), (16, 2), (2,)]
CACHED_START_TARGET = 0.1  # seconds per kernel
BYTES_PER_ELEMENT = 8  # float32: one read, one write
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu(x):
    """GELU (tanh form) in minigrad operations; also works unchanged on numpy arrays and torch tensors."""
    return 0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044715 * x**3)).tanh())


def numpy_gelu(x):
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


def numpy_gelu_products(x):
    """x**3 as x * x * x: numpy's float32 power with a float exponent calls a scalar routine per element."""
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))))


def numpy_gelu_into(x, t):
    """The best numpy can do one operation at a time: every step into a preallocated array (no
    allocation, no page faults), as a memory-planned interpreter runs it. Returns the result, t[-1]."""
    f32 = np.float32
    np.multiply(x, x, out=t[0])
    np.multiply(t[0], x, out=t[0])
    np.multiply(t[0], f32(0.044715), out=t[0])
    np.add(x, t[0], out=t[0])
    np.multiply(t[0], f32(SQRT_2_OVER_PI), out=t[0])
    np.tanh(t[0], out=t[0])
    np.add(t[0], f32(1.0), out=t[0])
    np.multiply(x, f32(0.5), out=t[1])
    np.multiply(t[1], t[0], out=t[1])
    return t[1]


def fused_kernel(n, **options):
    """(compiled function, kernel(x, out)) for GELU on n float32 elements, single-threaded."""
    compiled = jit.compile(gelu, backend="numba", parallel_threshold=sys.maxsize, **options)
    compiled(np.zeros(n, np.float32))
    (kernel,) = compiled.runner.kernels.values()
    return compiled, kernel


def libm_kernel(n):
    """kernel(x, out) for GELU with math.tanh, one element at a time (codegen's libm=True)."""
    from minigrad.jit.codegen import kernel_source
    from minigrad.jit.fusion import fuse, fused_bodies
    from minigrad.jit.kernel_cache import load_module

    ((_, body, _),) = fused_bodies(fuse(jit.trace(gelu, np.zeros(n, np.float32))))
    return load_module(kernel_source(body, parallel=False, libm=True)).kernel


def torch_contenders(x):
    torch = harness.single_threaded_torch()
    import torch.nn.functional as F

    t = torch.from_numpy(x)

    def eager(x):
        return 0.5 * x * (1.0 + torch.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3)))

    contenders = {"torch_eager": lambda: eager(t), "torch_gelu": lambda: F.gelu(t, approximate="tanh")}
    return torch, eager, t, contenders


def measure_gelu(n, repeat, with_torch_compile):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    out, copy_out = np.empty_like(x), np.empty_like(x)
    buffers = [np.empty_like(x), np.empty_like(x)]
    compiled, kernel = fused_kernel(n)
    _, fast_kernel = fused_kernel(n, fast_math=True)
    slow_kernel = libm_kernel(n)
    reference = numpy_gelu(x.astype(np.float64))
    contenders = {
        "minigrad_fused": lambda: kernel(x, out),
        "minigrad_compiled": lambda: compiled(x),
        "minigrad_fused_fast_math": lambda: fast_kernel(x, out),
        "minigrad_fused_libm": lambda: slow_kernel(x, out),
        "numpy_unfused": lambda: numpy_gelu(x),
        "numpy_unfused_products": lambda: numpy_gelu_products(x),
        "numpy_inplace": lambda: numpy_gelu_into(x, buffers),
        "copy": lambda: np.copyto(copy_out, x),
    }
    torch, eager, t, torch_ones = torch_contenders(x)
    contenders.update(torch_ones)
    compile_note = "skipped (--no-torch-compile)"
    if with_torch_compile:
        try:
            start = time.perf_counter()
            compiled_torch = torch.compile(eager)
            compiled_torch(t)
            compile_note = f"compiled in {time.perf_counter() - start:.1f} s (wall)"
            contenders["torch_compile"] = lambda: compiled_torch(t)
        except Exception as error:  # no C++ toolchain, an Inductor bug...: report it, measure the rest
            compile_note = f"failed: {type(error).__name__}: {str(error).splitlines()[0][:300] if str(error) else ''}"
    check = {
        "minigrad_fused": lambda: (kernel(x, out), out)[1],
        "minigrad_compiled": lambda: compiled(x).data,
        "minigrad_fused_fast_math": lambda: (fast_kernel(x, out), out)[1],
        "minigrad_fused_libm": lambda: (slow_kernel(x, out), out)[1],
        "numpy_unfused": lambda: numpy_gelu(x),
        "numpy_unfused_products": lambda: numpy_gelu_products(x),
        "numpy_inplace": lambda: numpy_gelu_into(x, buffers).copy(),
        **{name: (lambda f=f: f().numpy()) for name, f in contenders.items() if name.startswith("torch")},
    }
    for name, result in check.items():  # every contender computes GELU before anyone is timed
        np.testing.assert_allclose(result(), reference, rtol=2e-5, atol=2e-6, err_msg=name)
    runs = harness.time_interleaved(contenders, number=1, repeat=repeat)
    return harness.summarize(runs), compile_note


def gelu_records(n, repeat, with_torch_compile):
    load_before = os.getloadavg()
    figures, compile_note = measure_gelu(n, repeat, with_torch_compile)
    fused = figures["minigrad_fused"]["min"]
    copy_bandwidth = BYTES_PER_ELEMENT * n / figures["copy"]["min"]
    for name, figure in figures.items():
        yield {
            "benchmark": "gelu_tanh_float32",
            "contender": name,
            "elements": n,
            "seconds_min": figure["min"],
            "seconds_median": figure["median"],
            "runs": figure["runs"],
            "model_GB_per_s": BYTES_PER_ELEMENT * n / figure["min"] / 1e9,  # 8 bytes/element, as if fused
            "fused_speedup_over_this": figure["min"] / fused,
        }
    achieved = BYTES_PER_ELEMENT * n / fused
    targets = {f"fused >= {v:g}x {k}": figures[k]["min"] / fused >= v for k, v in TARGETS.items() if k in figures}
    targets[f"fused >= {COPY_FRACTION_TARGET:.0%} of copy bandwidth"] = achieved / copy_bandwidth >= COPY_FRACTION_TARGET
    yield {
        "benchmark": "gelu_summary",
        "elements": n,
        "processor": harness.machine()["processor"],
        "clock": "process CPU time, best of runs",
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "fused_vs_torch_compile": figures["torch_compile"]["min"] / fused if "torch_compile" in figures else None,
        "fused_GB_per_s": achieved / 1e9,
        "copy_GB_per_s": copy_bandwidth / 1e9,
        "fused_fraction_of_copy_bandwidth": achieved / copy_bandwidth,
        "speedups": {name: figure["min"] / fused for name, figure in figures.items() if name != "minigrad_fused"},
        "torch_compile": compile_note,
        "targets": targets,
    }


# --------------------------------------------------------------------------- all cores, as a user calls it
def _wall_figures(contenders, repeat):
    """harness's interleaved best-of runs, in wall time: for work on every core (CPU time would add
    up the threads) or on a device."""
    harness.use_clock("wall")
    try:
        return harness.summarize(harness.time_interleaved(contenders, number=1, repeat=repeat))
    finally:
        harness.use_clock("cpu")


def all_core_records(n, repeat):
    """The default fused kernel (every core) and the compiled function end to end, against a copy
    on every core, in wall time: CPU time would add up the threads."""
    import numba

    @numba.njit(parallel=True)
    def parallel_copy(x, out):
        for i in numba.prange(x.size):
            out[i] = x[i]

    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    out, copy_out = np.empty_like(x), np.empty_like(x)
    compiled = jit.compile(gelu, backend="numba")
    compiled(x)
    (kernel,) = compiled.runner.kernels.values()
    parallel_copy(x, copy_out)
    reference = numpy_gelu(x.astype(np.float64))
    kernel(x, out)
    for name, result in {"kernel": out, "compiled": compiled(x).data}.items():
        np.testing.assert_allclose(result, reference, rtol=2e-5, atol=2e-6, err_msg=name)
    np.testing.assert_array_equal(copy_out, x)
    figures = _wall_figures({"minigrad_fused": lambda: kernel(x, out), "minigrad_compiled": lambda: compiled(x),
                             "copy": lambda: parallel_copy(x, copy_out)}, repeat)
    copy = figures["copy"]["min"]
    fraction = copy / figures["minigrad_fused"]["min"]  # both move 8 bytes per element
    yield {
        "benchmark": "gelu_all_cores",
        "elements": n,
        "threads": numba.get_num_threads(),
        "clock": "wall, best of runs",
        "load_average": os.getloadavg(),
        **{f"{name}_seconds": figure["min"] for name, figure in figures.items()},
        "fused_GB_per_s": BYTES_PER_ELEMENT * n / figures["minigrad_fused"]["min"] / 1e9,
        "copy_GB_per_s": BYTES_PER_ELEMENT * n / copy / 1e9,
        "fused_fraction_of_copy_bandwidth": fraction,
        "compiled_fraction_of_copy_bandwidth": copy / figures["minigrad_compiled"]["min"],
        "targets": {f"fused >= {COPY_FRACTION_TARGET:.0%} of all-core copy bandwidth": fraction >= COPY_FRACTION_TARGET},
    }


# --------------------------------------------------------------------------- compile latency and the disk cache
THIRTY_OPS = """
import time, json
t0 = time.perf_counter()
import numba, numpy as np
t1 = time.perf_counter()
from minigrad import jit
from minigrad.jit.backends import numba_backend

loads = []


def timed_load(source, load=numba_backend.load_module):
    start = time.perf_counter()
    module = load(source)
    loads.append((time.perf_counter() - start, module))
    return module


numba_backend.load_module = timed_load  # the time of each kernel's import: compiled, or found on disk


def thirty(c):
    def f(x, y):
        h = x
        for k in range(6):  # 5 operations per round, 30 in all
            h = ((h * c + y).tanh() - h).exp()
        return h
    return f


x = np.linspace(-1, 1, 4096, dtype=np.float32)
programs = [jit.compile(thirty(c), backend="numba") for c in (0.9, 0.8, 0.7, 0.6)]  # 4 different kernels
t2 = time.perf_counter()
programs[0](x, x)
t3 = time.perf_counter()
for compiled in programs[1:]:
    compiled(x, x)
print(json.dumps({
    "numba_import_s": t1 - t0,
    "first_call_s": t3 - t2,
    "kernel_load_s": [seconds for seconds, _ in loads],
    "ops_in_group": sum(n.op not in ("input", "constant") for n in programs[0].graph.nodes),
    "cache_hits": sum(sum(m.kernel.stats.cache_hits.values()) for _, m in loads),
    "cache_misses": sum(sum(m.kernel.stats.cache_misses.values()) for _, m in loads),
}))
"""


def compile_latency_records():
    with tempfile.TemporaryDirectory() as directory:
        env = {**os.environ, "MINIGRAD_CACHE_DIR": directory}
        runs = []
        for label in ("cold", "cached"):
            done = subprocess.run([sys.executable, "-c", THIRTY_OPS], env=env, capture_output=True, text=True, check=True)
            runs.append((label, json.loads(done.stdout.splitlines()[-1])))
    for label, run in runs:
        # the first load of a process also pays Numba's one-time start of its compiler (~0.3 s)
        first, *others = run["kernel_load_s"]
        per_kernel = sum(others) / len(others)
        record = {"benchmark": "compile_latency_30_ops", "process": label, "clock": "wall", **run,
                  "kernels": len(run["kernel_load_s"]), "first_kernel_s": first, "per_kernel_s": per_kernel}
        if label == "cached":
            record["targets"] = {f"cached start < {CACHED_START_TARGET} s per kernel": per_kernel < CACHED_START_TARGET}
        yield record


# --------------------------------------------------------------------------- accuracy, every float32
def accuracy_records(step=1):
    """The worst error, in ulps of the float32 result, of the float32 tanh, exp and sigmoid the
    default kernels inline (`jit.fastmath`), over every float32 bit pattern (every `step`-th), against
    the C library's float64 functions; NaN must stay NaN and overflow must give inf exactly when the
    float64 value rounds past FLT_MAX. Each input costs a call of the function and one of libm."""
    import numba
    from llvmlite import ir
    from numba.extending import intrinsic

    from minigrad.jit import fastmath

    @intrinsic
    def float32_of_bits(typingctx, bits):
        def codegen(context, builder, signature, args):
            return builder.bitcast(builder.trunc(args[0], ir.IntType(32)), ir.FloatType())

        return numba.types.float32(numba.types.int64), codegen

    @numba.njit
    def exact_sigmoid(x):
        e = math.exp(-abs(x))
        return (1.0 if x >= 0 else e) / (1.0 + e)

    def sweep(function, exact):
        @numba.njit
        def run(start, stop, step):
            worst, where, wrong = 0.0, 0, 0
            for bits in range(start, stop, step):
                x = float32_of_bits(bits)
                got, want = np.float64(function(x)), exact(np.float64(x))
                if want != want or abs(want) > 3.4028235677973366e38:  # NaN, or rounds to inf in float32
                    if not (got != got if want != want else got == math.copysign(math.inf, want)):
                        wrong += 1
                    continue
                _, exponent = math.frexp(want)
                error = abs(got - want) / math.ldexp(1.0, max(exponent - 1, -126) - 23)
                if error > worst:
                    worst, where = error, bits
            return worst, where, wrong

        return run

    functions = {"tanh": (fastmath.tanh_f32_accurate, math.tanh), "exp": (fastmath.exp_f32_accurate, math.exp),
                 "sigmoid": (fastmath.sigmoid_f32_accurate, exact_sigmoid)}
    for name, (function, exact) in functions.items():
        start = time.process_time()
        worst, where, wrong = sweep(numba.njit(lambda x, f=function: f(x)), exact)(0, 2**32, step)
        yield {"benchmark": "accuracy_float32", "function": name, "inputs": len(range(0, 2**32, step)),
               "worst_ulp": worst, "at": float(np.array([where], np.uint32).view(np.float32)[0]),
               "wrong_special_values": wrong, "documented_bound_ulp": fastmath.MAX_ULP_ERROR[name],
               "cpu_seconds": time.process_time() - start,
               "targets": {f"{name} within {fastmath.MAX_ULP_ERROR[name]} ulp": worst <= fastmath.MAX_ULP_ERROR[name] and not wrong}}


# --------------------------------------------------------------------------- on a GPU
def _cuda(simulator):
    """`numba.cuda` on the GPU, or on the simulator when asked (tests); None when there is no GPU."""
    from minigrad.jit.backends.cuda_backend import gpu_present, load_cuda

    if not (simulator or gpu_present()):
        return None
    if simulator:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    return load_cuda()


def gpu_records(n, repeat, simulator=False):
    """Fused GELU on the device against a device-to-device copy (CUDA events time the device)."""
    from minigrad.jit.backends.cuda_backend import CudaBackend, simulated

    cuda = _cuda(simulator)
    if cuda is None:
        yield {"benchmark": "gpu_gelu", "skipped": "no GPU present"}
        return
    program = CudaBackend().compile(jit.trace(gelu, np.zeros(n, np.float32)))
    (node,) = [node for node in program.graph.nodes if node.op == "fused"]
    kernel, _ = program.kernels[node.id]
    x = cuda.to_device(np.random.default_rng(0).standard_normal(n).astype(np.float32))
    out, copy_out = cuda.device_array(n, np.float32), cuda.device_array(n, np.float32)
    threads = program.threads_per_block
    blocks = min(-(-n // threads), 32 * 1024)

    def timed(launch):
        """Best of `repeat` device times (CUDA events); the simulator keeps no device time: wall clock."""
        launch()
        cuda.synchronize()
        best = math.inf
        for _ in range(repeat):
            start, stop, began = cuda.event(), cuda.event(), time.perf_counter()
            start.record()
            launch()
            stop.record()
            stop.synchronize()
            seconds = time.perf_counter() - began if simulated() else start.elapsed_time(stop) / 1e3
            best = min(best, seconds)
        return best

    fused = timed(lambda: kernel[blocks, threads](x, out))
    copy = timed(lambda: copy_out.copy_to_device(x))
    np.testing.assert_allclose(out.copy_to_host(), numpy_gelu(x.copy_to_host().astype(np.float64)), rtol=1e-5, atol=1e-6)
    fraction = copy / fused  # both move 8 bytes per element
    name = getattr(cuda.get_current_device(), "name", "CUDA simulator")
    yield {
        "benchmark": "gpu_gelu",
        "simulated": simulated(),
        "device": name.decode() if isinstance(name, bytes) else str(name),
        "elements": n,
        "fused_seconds": fused,
        "copy_seconds": copy,
        "fused_GB_per_s": BYTES_PER_ELEMENT * n / fused / 1e9,
        "copy_GB_per_s": BYTES_PER_ELEMENT * n / copy / 1e9,
        "fused_fraction_of_copy_bandwidth": fraction,
        "targets": {f"fused >= {GPU_COPY_FRACTION_TARGET:.0%} of device copy bandwidth": fraction >= GPU_COPY_FRACTION_TARGET},
    }


def mlp_loss(x, y, w1, b1, w2, b2):
    """Chapter 9's compiled training step: a GELU layer and a linear head, mean squared error."""
    hidden = gelu(x @ w1 + b1)
    return ((hidden @ w2 + b2 - y) ** 2).mean()


def gpu_training_step_records(shapes, repeat, simulator=False):
    """Chapter 9's training step (`mlp_loss`, gradients of the four weights) compiled with
    backend="cuda" against the same program on the CPU (backend="numba", eager minigrad) and, where
    PyTorch has CUDA, the same model in PyTorch on the GPU: wall time per call, results checked
    against eager minigrad first. The CUDA backend runs its fused kernels on the device and the
    matrix products outside an epilogue on the host, so `transfers` (host/device copies per call)
    is part of the figure."""
    from minigrad.jit.backends.cuda_backend import simulated

    import minigrad as mg

    cuda = _cuda(simulator)
    if cuda is None:
        yield {"benchmark": "gpu_training_step", "skipped": "no GPU present"}
        return
    rng = np.random.default_rng(9)
    arrays = [(rng.standard_normal(s) / np.sqrt(s[0] if len(s) == 2 else 1)).astype(np.float32) for s in shapes]
    eager = mg.value_and_grad(mlp_loss, argnums=(2, 3, 4, 5))
    steps = {
        "minigrad_cuda": jit.compile(mlp_loss, backend="cuda", backward=True),
        "minigrad_numba_cpu": jit.compile(mlp_loss, backend="numba", backward=True),
        "minigrad_eager_cpu": lambda *a: eager(*[mg.tensor(v) for v in a]),
    }
    expected_loss, expected_grads = steps["minigrad_eager_cpu"](*arrays)
    for name in ("minigrad_cuda", "minigrad_numba_cpu"):
        loss, grads = steps[name](*arrays)
        np.testing.assert_allclose(loss.data, expected_loss.data, rtol=1e-4, err_msg=f"{name}: loss")
        for got, want in zip(grads[2:], expected_grads):
            np.testing.assert_allclose(got.data, want.data, rtol=1e-3, atol=1e-5 * np.abs(want.data).max(), err_msg=f"{name}: gradient")
    transfers = steps["minigrad_cuda"].runner.transfers  # the copies the last call made
    torch_note = _torch_cuda_step(arrays, steps, expected_loss)
    figures = _wall_figures({name: (lambda step=step: step(*arrays)) for name, step in steps.items()}, repeat)
    seconds = {name: figure["min"] for name, figure in figures.items()}
    name = getattr(cuda.get_current_device(), "name", "CUDA simulator")
    yield {
        "benchmark": "gpu_training_step",
        "simulated": simulated(),
        "device": name.decode() if isinstance(name, bytes) else str(name),
        "shapes": [list(s) for s in shapes],
        "dtype": "float32",
        "clock": "wall",
        "seconds_min": seconds,
        "transfers_per_call": transfers,
        "torch_cuda": torch_note,
        "cuda_vs_numba_cpu": seconds["minigrad_numba_cpu"] / seconds["minigrad_cuda"],
        "cuda_vs_torch_cuda": seconds["torch_cuda"] / seconds["minigrad_cuda"] if "torch_cuda" in seconds else None,
    }


def _torch_cuda_step(arrays, steps, expected_loss):
    """Adds steps["torch_cuda"] (`mlp_loss` itself on torch tensors on the GPU, with its backward,
    synchronized) where torch has CUDA; returns what was done, for the record."""
    try:
        import torch
    except ImportError:
        return "skipped: torch is not installed"
    if not torch.cuda.is_available():
        return "skipped: torch has no CUDA device"
    x, y, *weights = (torch.from_numpy(a).cuda() for a in arrays)
    for w in weights:
        w.requires_grad_(True)

    def step(*_):  # the numpy arrays the minigrad contenders take: the tensors above stand for them
        for w in weights:
            w.grad = None
        loss = mlp_loss(x, y, *weights)
        loss.backward()
        torch.cuda.synchronize()
        return loss

    np.testing.assert_allclose(step().item(), float(expected_loss.data), rtol=1e-4, err_msg="torch_cuda: loss")
    steps["torch_cuda"] = step
    return f"torch {torch.__version__} on {torch.cuda.get_device_name()}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1M elements and fewer runs")
    parser.add_argument("--no-torch-compile", action="store_true", help="skip torch.compile (about a minute to compile)")
    parser.add_argument("--gpu-simulator", action="store_true", help="run the GPU section on the CUDA simulator (tiny; tests only)")
    parser.add_argument("--accuracy", action="store_true", help="only the accuracy sweep over every float32 (~10 minutes)")
    parser.add_argument("--accuracy-step", type=int, default=1, help=argparse.SUPPRESS)  # every n-th float32 (tests)
    parser.add_argument("--gpu-only", action="store_true", help="only the GPU section (tools/gpu_check.sh runs this)")
    args = parser.parse_args()
    if args.accuracy:
        harness.emit({"benchmark": "machine", "command": harness.command_line(), **harness.machine()})
        for record in accuracy_records(args.accuracy_step):
            harness.emit(record)
        return
    n, repeat = (1 << 20, 5) if args.quick else (1 << 24, 10)
    harness.emit({"benchmark": "machine", "command": harness.command_line(), "quick": args.quick, "clock": "cpu",
                  "threads": 1, **harness.machine()})
    if not args.gpu_only:
        for record in gelu_records(n, repeat, not args.no_torch_compile):
            harness.emit(record)
        for record in all_core_records(n, repeat):
            harness.emit(record)
        for record in compile_latency_records():
            harness.emit(record)
    gpu_n = 4096 if args.gpu_simulator else (1 << 26)
    for record in gpu_records(gpu_n, 2 if args.gpu_simulator else 20, simulator=args.gpu_simulator):
        harness.emit(record)
    # chapter 9's shapes on the simulator (tiny: every simulated thread is a Python thread); on a GPU,
    # a batch and hidden layer large enough for the device to matter
    step_shapes = GPU_STEP_SHAPES_SIMULATED if args.gpu_simulator else GPU_STEP_SHAPES
    for record in gpu_training_step_records(step_shapes, 2 if args.gpu_simulator else 20, simulator=args.gpu_simulator):
        harness.emit(record)


if __name__ == "__main__":
    main()
