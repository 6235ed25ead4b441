"""The reference backend: an interpreter of the IR that runs inside one planned arena.

Compiling plans the memory of the graph (`plan_memory`), allocates one arena of the planned peak
size, and makes for every operation's value a numpy view at its planned offset. Running walks the
nodes in order and writes each result straight into its view (`out=`) where numpy can; other
operations (indexing, reshapes, the rarer primitives) compute with their `Primitive.forward`, the
same code eager minigrad runs, and are copied into the view. Values whose lifetimes do not overlap
share bytes, so a rerun uses exactly the planned peak, however long the program.

One case is not copied: a transpose of an input or a constant that only matrix products read
runs as numpy's view of its operand (BLAS takes a transposed operand as it is, and no
step writes into inputs or constants, which live outside the arena for the whole call). Every
backward pass transposes the weights for its products; copying them into the arena made a compiled
MLP training step 3–7 % slower (benchmarks/README.md).

The arena belongs to the compiled function and is reused by every call, so what a call returns
cannot live in it: an output an operation computes is written into a fresh array of its own at
each call (copying it out of the arena afterwards cost as much again as a fused kernel over large
arrays: benchmarks/README.md), and an output that is an input or a constant is copied. A compiled
function is not safe to call from two threads at once.
"""

import numpy as np

from ...errors import ShapeError
from ...ops import PRIMITIVES
from ..ir import SOURCES
from ..memory_plan import ALIGNMENT, plan_memory
from ..optable import INTO  # the operations numpy computes directly into a planned buffer
from . import Backend


def _kernel(node):
    """A function (inputs..., out) -> None computing `node` into `out`."""
    params = node.param_dict
    if node.op in INTO:
        kernel = INTO[node.op]
        return lambda *args: kernel(*args[:-1], out=args[-1], **params)
    if node.op == "fused":
        body = params["body"]
        return lambda *args: np.copyto(args[-1], run_graph(body, *args[:-1])[0])
    if node.op not in PRIMITIVES:
        raise NotImplementedError(f"numpy backend: no implementation of op {node.op!r} ({node})")
    forward = PRIMITIVES[node.op].forward

    def copy_into(*args):
        args[-1][...] = forward(*args[:-1], **params)

    return copy_into


def _view_kernel(values, k, node):
    """A kernel that stores the primitive's view of its operand as value k (the planned buffer unused)."""
    forward, params = PRIMITIVES[node.op].forward, node.param_dict

    def view(*args):
        values[k] = forward(*args[:-1], **params)

    return view


def _transposes_as_views(graph, kernels):
    """Ids of the transposes that run as views: of an input or a constant, not an output, and read
    only by matrix products the interpreter runs itself (generated kernels take C-contiguous arrays)."""
    by_id, users = {n.id: n for n in graph.nodes}, graph.users()
    return {
        n.id
        for n in graph.nodes
        if n.op == "transpose" and by_id[n.inputs[0]].op in SOURCES and n.id not in graph.outputs
        and users[n.id] and all(by_id[r].op == "matmul" and r not in kernels for r in users[n.id])
    }


class NumpyBackend(Backend):
    """Compiles a graph into a planned interpreter (see the module docstring)."""

    name = "numpy"

    def __init__(self, strategy="greedy_by_size"):
        self.strategy = strategy

    def compile(self, graph):
        return PlannedInterpreter(graph, plan_memory(graph, self.strategy))


class PlannedInterpreter:
    """`interpreter(*arrays)` runs `graph` in the arena `plan` lays out; returns the output arrays.

    kernels: {node id: kernel(*inputs, out)} replacing the interpreter's own for those nodes (how
    the numba backend runs its fused nodes in the same planned arena).
    """

    def __init__(self, graph, plan, kernels=None):
        self.graph, self.plan = graph, plan
        position = {n.id: k for k, n in enumerate(graph.nodes)}
        base = np.empty(plan.peak_bytes + ALIGNMENT, dtype=np.uint8)
        start = -base.ctypes.data % ALIGNMENT  # the arena starts on a cache line
        self.arena = base[start : start + plan.peak_bytes]
        self.values = [None] * len(graph.nodes)  # constants now, planned views now, inputs per call
        for k, node in enumerate(graph.nodes):
            if node.op == "constant":
                self.values[k] = node.param_dict["value"]
            elif node.op not in SOURCES:
                offset = plan.offsets[node.id]
                buffer = self.arena[offset : offset + node.nbytes]
                self.values[k] = buffer.view(node.dtype).reshape(node.shape)
        self.inputs = [(position[i], graph.node(i)) for i in graph.inputs]
        kernels = kernels or {}
        views = _transposes_as_views(graph, kernels)
        self.steps = [
            (_view_kernel(self.values, k, n) if n.id in views else kernels.get(n.id) or _kernel(n),
             [position[i] for i in n.inputs], k)
            for k, n in enumerate(graph.nodes)
            if n.op not in SOURCES
        ]
        self.outputs = [position[i] for i in graph.outputs]
        # computed output -> its planned view, which gives the shape and dtype of its fresh array
        self.fresh = {k: self.values[k] for k in self.outputs if graph.nodes[k].op not in SOURCES}
        # returned as it is: a computed output's first occurrence; a repeat, an input or a constant is copied
        self.as_is = [k in self.fresh and k not in self.outputs[:i] for i, k in enumerate(self.outputs)]

    def __call__(self, *arrays):
        if len(arrays) != len(self.inputs):
            raise TypeError(f"compiled graph takes {len(self.inputs)} inputs, got {len(arrays)}")
        values = self.values
        for (k, node), array in zip(self.inputs, arrays):
            if np.shape(array) != node.shape or np.asarray(array).dtype.name != node.dtype:
                raise ShapeError(
                    f"compiled graph: input {self.graph.inputs.index(node.id)} must have shape {node.shape} and "
                    f"dtype {node.dtype}, got {np.shape(array)} {np.asarray(array).dtype}"
                )
            values[k] = np.asarray(array)
        for k, planned in self.fresh.items():
            values[k] = np.empty_like(planned)
        for kernel, sources, k in self.steps:
            kernel(*[values[s] for s in sources], values[k])
        return [values[k] if as_is else np.array(values[k]) for k, as_is in zip(self.outputs, self.as_is)]


def run_graph(graph, *arrays):
    """Evaluate `graph` on `arrays` with each primitive's own forward and no planning (a fresh
    array per value): the plainest meaning of a graph, and how fused bodies run here."""
    values = {}
    for i, array in zip(graph.inputs, arrays, strict=True):
        values[i] = np.asarray(array)
    for node in graph.nodes:
        if node.op == "constant":
            values[node.id] = node.param_dict["value"]
        elif node.op == "fused":
            values[node.id] = run_graph(node.param_dict["body"], *[values[i] for i in node.inputs])[0]
        elif node.op != "input":
            values[node.id] = np.asarray(PRIMITIVES[node.op].forward(*[values[i] for i in node.inputs], **node.param_dict))
    return [np.array(values[i]) for i in graph.outputs]
