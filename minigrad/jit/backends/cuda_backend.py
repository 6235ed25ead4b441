"""The CUDA backend: the same fused groups as `@cuda.jit` kernels, on a GPU or on Numba's simulator.

Each fused node becomes a grid-stride kernel (`codegen.kernel_source(body, target="cuda")`): thread
t of a grid of T threads computes elements t, t + T, t + 2T, ..., so any grid size covers any array
and consecutive threads touch consecutive addresses (coalesced loads). Arguments arrive flat; the
kernel derives the multi-index from the flat index only when some operand broadcasts.

Where there is no GPU, the kernels run on the Numba CUDA simulator: the same Python source executed
thread by thread on the CPU. It is slow (use tiny arrays) but it runs exactly the indexing code a GPU
would, which is what a course needs. The simulator must be chosen before `numba.cuda` is first
imported (`NUMBA_ENABLE_CUDASIM=1`); `load_cuda()` does that by itself when it finds no GPU driver.

What runs where: fused kernels on the device, every other operation (matrix products outside an
epilogue, reductions, indexing) with numpy on the host; a value is copied between the two only when
an operation on the other side reads it, and `program.transfers` counts the copies. A production
backend would have device kernels for everything; here the point is the fused kernels.

numba-cuda is in maintenance mode upstream. Everything CUDA-specific is in this file and in the
CUDA branch of `codegen` (about 30 lines), behind the `Backend` interface: another GPU toolkit
(CuPy raw kernels, Triton, Warp) would replace these two pieces and nothing else.
"""

import ctypes
import os
import sys

import numpy as np

from ..codegen import condition_arrays, kernel_source
from ..fusion import fuse, fused_bodies
from ...ops import PRIMITIVES
from ..ir import SOURCES
from ..kernel_cache import load_module
from . import Backend

THREADS_PER_BLOCK = 256
MAX_BLOCKS = 32 * 1024  # enough to fill any current GPU; the grid-stride loop covers the rest


def gpu_present():
    """True if the CUDA driver is installed and sees at least one device (asked without numba)."""
    names = ["nvcuda.dll"] if sys.platform == "win32" else ["libcuda.so.1", "libcuda.so", "libcuda.dylib"]
    for name in names:
        try:
            driver = ctypes.CDLL(name)
        except OSError:
            continue
        count = ctypes.c_int(0)
        return driver.cuInit(0) == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    return False


def load_cuda():
    """`numba.cuda`, on the simulator unless a GPU is present (or the simulator was asked for).

    If numba.cuda is already imported, it is returned as it is: the choice was made then.
    """
    if "numba.cuda" not in sys.modules:
        if os.environ.get("NUMBA_ENABLE_CUDASIM") is None and not gpu_present():
            os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        import numba.core.config

        numba.core.config.reload_config()  # numba may be loaded already (by the CPU backend): re-read the variable
    from numba import cuda

    return cuda


def simulated():
    """True if CUDA kernels run on the simulator (after `load_cuda`)."""
    import numba.core.config

    return bool(numba.core.config.ENABLE_CUDASIM)


class CudaBackend(Backend):
    """Fused kernels as Numba CUDA kernels (see the module docstring).

    fast_math: compile kernels with CUDA's fast approximate math (`fastmath=True`).
    """

    name = "cuda"

    def __init__(self, fast_math=False, epilogues=True, threads_per_block=THREADS_PER_BLOCK):
        self.fast_math, self.epilogues, self.threads_per_block = fast_math, epilogues, threads_per_block

    def compile(self, graph):
        cuda = load_cuda()
        fused = fuse(graph, epilogues=self.epilogues)
        kernels, sources = {}, []
        for node, body, kind in fused_bodies(fused):
            source = kernel_source(body, target="cuda", fast_math=self.fast_math)
            conditions = [cuda.to_device(c.reshape(-1)) for c in condition_arrays(body)]
            kernels[node.id] = (load_module(source).kernel, conditions)
            sources.append(f"# ---- %{node.id} = fused({', '.join(f'%{i}' for i in node.inputs)}): {kind}\n{source}")
        return CudaProgram(cuda, fused, kernels, "\n".join(sources), self.threads_per_block)


class CudaProgram:
    """`program(*arrays)` runs the fused graph: kernels on the device, the rest on the host."""

    def __init__(self, cuda, graph, kernels, source, threads_per_block):
        self.cuda, self.graph, self.kernels, self.source = cuda, graph, kernels, source
        self.threads_per_block = threads_per_block
        self.constants = {n.id: n.param_dict["value"] for n in graph.nodes if n.op == "constant"}
        self.device_constants = {}  # id -> device copy, made once, on first use by a kernel
        self.transfers = 0  # host <-> device copies made by the last call

    def __call__(self, *arrays):
        if len(arrays) != len(self.graph.inputs):
            raise TypeError(f"compiled graph takes {len(self.graph.inputs)} inputs, got {len(arrays)}")
        self.transfers = 0
        host = dict(self.constants)  # id -> numpy array
        host.update({i: np.ascontiguousarray(a) for i, a in zip(self.graph.inputs, arrays)})
        device = {}  # id -> flat device array
        for node in self.graph.nodes:
            if node.op in SOURCES:
                continue
            if node.op == "fused":
                device[node.id] = self._launch(node, [self._on_device(i, host, device) for i in node.inputs])
            else:
                values = [self._on_host(i, host, device) for i in node.inputs]
                host[node.id] = np.asarray(PRIMITIVES[node.op].forward(*values, **node.param_dict))
        return [np.array(self._on_host(i, host, device)) for i in self.graph.outputs]

    def _launch(self, node, inputs):
        kernel, conditions = self.kernels[node.id]
        out = self.cuda.device_array(node.size, dtype=node.dtype)
        blocks = min(max(-(-node.size // self.threads_per_block), 1), MAX_BLOCKS)
        kernel[blocks, self.threads_per_block](*inputs, *conditions, out)
        return out

    def _on_device(self, i, host, device):
        if i not in device:
            if i in self.constants:
                if i not in self.device_constants:
                    self.device_constants[i] = self.cuda.to_device(np.ascontiguousarray(self.constants[i]).reshape(-1))
                device[i] = self.device_constants[i]
            else:
                device[i] = self.cuda.to_device(np.ascontiguousarray(host[i]).reshape(-1))
                self.transfers += 1
        return device[i]

    def _on_host(self, i, host, device):
        if i not in host:
            node = self.graph.node(i)
            host[i] = device[i].copy_to_host().reshape(node.shape)
            self.transfers += 1
        return host[i]
