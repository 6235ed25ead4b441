"""Shared timing helpers for the benchmark scripts: one thread, warm-up, repeated runs, JSON lines.

Import this module before numpy or torch: the BLAS libraries read their thread-count variables
once, when they load, and a benchmark of Python overhead must not be blurred by thread pools
(nor compare one thread of minigrad against sixteen of PyTorch).
"""

import os

for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_variable] = "1"

import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402


CLOCKS = {
    # CPU time of this process: what the code costs, whatever else the machine is doing. On a
    # shared machine (the course's reference one has 2 cores and many users) wall time mostly
    # measures how long the process waited for a core.
    "cpu": time.process_time,
    # Elapsed time: the usual choice on an otherwise idle machine.
    "wall": time.perf_counter,
}
clock = CLOCKS["cpu"]


def use_clock(name):
    """Time everything that follows with `CLOCKS[name]`."""
    global clock
    clock = CLOCKS[name]


def add_timing_options(parser):
    """The options every engine benchmark shares: which clock, and whether to steady the allocator."""
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu", help="process CPU time (default) or wall time")
    parser.add_argument("--default-allocator", action="store_true", help="leave glibc's malloc thresholds alone (see harness.steady_allocator)")


def apply_timing_options(args):
    use_clock(args.clock)
    if not args.default_allocator:
        steady_allocator()


def single_threaded_torch():
    """Import torch limited to one intra-op and one inter-op thread."""
    import torch

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set, or work has already started: harmless for these timings
        pass
    return torch


def freeze_heap():
    """Move every object alive now (the interpreter's, numpy's, torch's) out of the GC's sight.

    CPython's cyclic collector walks every tracked object in a full collection, and importing
    torch alone creates ~160k of them. A benchmark that builds a large graph triggers full
    collections, and would pay for walking torch's objects as well as its own: a cost of having
    imported the peer, not of the engine (the 100k-node chain: minigrad's forward 6.8 -> 3.6 µs per
    operation, micrograd's 14 -> 10). `gc.freeze()` (Python 3.7+) parks them for the rest of the run.
    """
    gc.collect()
    gc.freeze()


# glibc's mallopt parameters (malloc.h): M_TRIM_THRESHOLD and M_MMAP_THRESHOLD.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
STEADY_MMAP_THRESHOLD = 64 << 20  # arrays below 64 MiB come from the heap...
STEADY_TRIM_THRESHOLD = 1 << 30  # ...and up to 1 GiB of freed heap stays with the process
allocator = {"glibc": None, "tuned": False}


def steady_allocator():
    """Keep freed memory in the process, so that no contender pays page faults for reusing it.

    By default glibc's malloc hands large blocks back to the kernel when they are freed (it unmaps
    them, or trims the top of the heap once more than a few MiB lie free there), and the next
    allocation of that size faults every page in again. A training step that frees its gradients
    and temporaries and allocates them again the next step pays this every step: the MLP step of
    `bench_engine.py` took ~800 page faults and ~0.7 ms of system time per step, a third of the
    step, for minigrad and numpy by hand alike, but only in some runs (whether a step trims depends
    on where its blocks lie in the heap), so the figures were bimodal. PyTorch's allocator pays
    nothing of it. Fixing both thresholds (which also turns off glibc's own adjustment of them)
    measures the engines and their arithmetic rather than the allocator; it changes no result.
    Elsewhere than on glibc (macOS, musl) nothing is changed, and `allocator` says so.
    """
    libc_name, version = platform.libc_ver()
    if libc_name != "glibc":
        return allocator
    import ctypes

    libc = ctypes.CDLL(None)
    ok = libc.mallopt(_M_MMAP_THRESHOLD, STEADY_MMAP_THRESHOLD) == 1 and libc.mallopt(_M_TRIM_THRESHOLD, STEADY_TRIM_THRESHOLD) == 1
    allocator.update(glibc=version, tuned=ok)
    if ok:
        allocator.update(mmap_threshold=STEADY_MMAP_THRESHOLD, trim_threshold=STEADY_TRIM_THRESHOLD)
    return allocator


def time_interleaved(contenders, number, repeat, warmup=1):
    """Seconds per call of each contender: {name: [run_1, ..., run_repeat]}.

    `contenders` maps a name to a zero-argument function. Each run calls a function `number` times
    and divides; the contenders take turns run by run, so that a burst of load on a shared machine
    hits all of them rather than whichever happened to be running. The garbage collector stays on
    (it is part of what an engine costs) but starts each run from a clean slate.
    """
    for fn in contenders.values():
        for _ in range(warmup):
            fn()
    runs = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, fn in contenders.items():
            gc.collect()
            start = clock()
            for _ in range(number):
                fn()
            runs[name].append((clock() - start) / number)
    return runs


def summarize(runs, scale=1.0):
    """The best (min) and median of each contender's runs, multiplied by `scale` (e.g. 1e6 for µs).

    The minimum is the figure compared: on a shared machine noise only ever adds time, so the
    fastest run is the closest to the cost of the code itself. The median is printed alongside.
    """
    return {
        name: {"min": min(values) * scale, "median": statistics.median(values) * scale, "runs": len(values)}
        for name, values in runs.items()
    }


def machine():
    """What the figures were measured on."""
    import numpy

    info = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "processor": _cpu_model(),
        "cpu": _cpu_identity(),
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,  # 1, 5, 15 minutes
        "numpy": numpy.__version__,
        "allocator": dict(allocator),  # see steady_allocator
    }
    try:
        info["torch"] = single_threaded_torch().__version__
    except ImportError:
        info["torch"] = None
    return info


def _cpuinfo():
    """The first processor's fields in /proc/cpuinfo ({} where there is none): every core of these
    machines is the same kind."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


def _cpu_model():
    return _cpuinfo().get("model name") or platform.processor() or "unknown"


# The vector extensions a fused kernel's speed depends on (512-bit registers, AMX for the products).
_VECTOR_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_tile")


def _cpu_identity():
    """Vendor, family, model and vector extensions from /proc/cpuinfo, or {} where there is none.

    Virtual machines often report a bare "AMD EPYC" as the model name, the same for Zen 4
    (family 25) and Zen 5 (family 26), which differ twice over in vector width: the family and
    model tell the CPU kinds apart where the name does not.
    """
    fields = _cpuinfo()
    if not fields:
        return {}
    flags = set(fields.get("flags", "").split())
    return {
        "vendor": fields.get("vendor_id"),
        "family": fields.get("cpu family"),
        "model": fields.get("model"),
        "stepping": fields.get("stepping"),
        "vector_extensions": [flag for flag in _VECTOR_FLAGS if flag in flags],
    }


def emit(record):
    """Print one measurement as a JSON line (flushed, so a reader sees it at once)."""
    print(json.dumps(record, sort_keys=False), flush=True)


def command_line():
    return " ".join([os.path.basename(sys.executable)] + sys.argv)
