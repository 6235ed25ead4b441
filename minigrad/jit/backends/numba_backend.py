"""The Numba CPU backend: one generated kernel per fusion group, inside the planned arena.

Compiling a graph:
1. `fuse` rewrites it so each group of elementwise operations (and each matmul + epilogue) is one
   "fused" node;
2. for each fused node, `codegen.kernel_source` writes a Numba kernel: explicit signature (compiled
   once, at load, never again per call), typed float32 constants for float32 graphs,
   `error_model="numpy"` (a division by zero gives inf, as numpy does, and the loop can vectorise
   because no exception path is left), `parallel=True` with `prange` above PARALLEL_THRESHOLD
   elements, a serial loop below;
3. `kernel_cache` stores each source as a file named by its hash, where Numba caches its machine
   code: the same structure in another process or another session loads in milliseconds;
4. the numpy backend's planned interpreter runs the program, calling a kernel for each fused node
   and numpy for the rest (matrix products through BLAS, reductions, indexing), all results living
   in one arena laid out by `plan_memory`.

`compiled.source` shows the kernels that run, one module per fused node.
"""

import numpy as np

from ..codegen import PARALLEL_THRESHOLD, condition_arrays, kernel_source
from ..fusion import fuse, fused_bodies
from ..kernel_cache import load_module
from ..memory_plan import plan_memory
from . import Backend
from .numpy_backend import PlannedInterpreter

EPILOGUE_MAX_INNER = 8


class NumbaBackend(Backend):
    """Fused CPU kernels with Numba.

    fast_math: float32 tanh/exp (hence sigmoid) via the faster approximations of
        `minigrad.jit.fastmath`, relative error below 1e-6; otherwise its accurate vectorisable
        forms (within `fastmath.MAX_ULP_ERROR` ulp of the correctly rounded value), and `math`
        for float64 and the other functions.
    parallel_threshold: elements from which a kernel runs its outer loop with prange on all cores.
    epilogues: fuse matmul + bias + activation into one kernel when the product's inner dimension
        is at most `epilogue_max_inner`; larger products stay with BLAS (blocked, tuned), followed
        by a fused kernel for what comes after them. The default, 8, is where the one-pass kernel
        stopped beating BLAS + fused elementwise kernel on the course's reference machine
        (notebook of chapter 9, section 4; a single-threaded BLAS).
    """

    name = "numba"

    def __init__(
        self,
        fast_math=False,
        parallel_threshold=PARALLEL_THRESHOLD,
        epilogues=True,
        epilogue_max_inner=EPILOGUE_MAX_INNER,
        strategy="greedy_by_size",
    ):
        self.fast_math, self.parallel_threshold = fast_math, parallel_threshold
        self.epilogues, self.epilogue_max_inner, self.strategy = epilogues, epilogue_max_inner, strategy

    def compile(self, graph):
        fused = fuse(graph, epilogues=self.epilogues, epilogue_max_inner=self.epilogue_max_inner)
        kernels, sources = {}, []
        for node, body, kind in fused_bodies(fused):
            parallel = node.size >= self.parallel_threshold
            source = kernel_source(body, parallel=parallel, fast_math=self.fast_math)
            kernels[node.id] = _bind(load_module(source).kernel, condition_arrays(body))
            sources.append(f"# ---- %{node.id} = fused({', '.join(f'%{i}' for i in node.inputs)}): {kind}\n{source}")
        return NumbaProgram(fused, plan_memory(fused, self.strategy), kernels, "\n".join(sources))


def _bind(kernel, conditions):
    """kernel(*inputs, out) with the `where` conditions (constants of the graph) passed after the inputs."""
    if not conditions:
        return kernel
    return lambda *args: kernel(*args[:-1], *conditions, args[-1])


class NumbaProgram(PlannedInterpreter):
    """The planned interpreter with Numba kernels for the fused nodes; `.source` lists them and
    `.kernels` maps each fused node's id to its kernel."""

    def __init__(self, graph, plan, kernels, source):
        super().__init__(graph, plan, kernels)
        self.kernels, self.source = kernels, source
        # A constant the trace folded can be a transposed array (the gradient of `w.T`): kernels take C order only.
        for k, node in enumerate(graph.nodes):
            if node.op == "constant":
                self.values[k] = _contiguous(self.values[k])

    def __call__(self, *arrays):
        # kernels take C-contiguous arrays (their signatures say so); numpy makes copies only where needed
        return super().__call__(*[_contiguous(a) for a in arrays])


def _contiguous(array):
    array = np.asarray(array)
    return array if array.flags.c_contiguous else array.copy(order="C")  # (ascontiguousarray makes 0-d 1-d)
