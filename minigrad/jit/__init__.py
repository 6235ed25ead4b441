"""minigrad.jit: trace define-by-run code into a static graph, optimise it, run it on a backend.

    import minigrad.jit as jit
    graph = jit.trace(f, x)                   # the IR: print(graph), minigrad.draw(graph)
    graph = jit.eliminate_dead_code(graph)    # passes map a Graph to a Graph (or to a plan)
    fused = jit.fuse(graph)                   # elementwise groups -> "fused" nodes (see jit.fusion)
    plan = jit.plan_memory(graph)             # liveness -> buffers sharing one arena
    fast = jit.compile(f, backend="numpy")    # traces on the first call per input signature
    fused = jit.compile(f, backend="numba", fast_math=True)  # one generated kernel per group; .source

The IR (`Graph`, `Node`) is in `minigrad.jit.ir`; backends are in `minigrad.jit.backends`;
`minigrad.jit.draw.draw_ir` draws a graph with some nodes faded (graphviz loads only there).
"""

from .backends import BACKENDS, Backend, get_backend
from .compile import Compiled, compile
from .dce import eliminate_dead_code, live_nodes
from .fusion import InvalidGroups, check_groups, fuse, fusible_groups
from .ir import Graph, Node
from .memory_plan import InvalidPlan, MemoryPlan, check_plan, liveness, plan_memory
from .optable import ELEMENTWISE, EXPRESSIONS
from .trace import TracerError, trace, trace_strict

__all__ = [
    "BACKENDS",
    "Backend",
    "Compiled",
    "ELEMENTWISE",
    "EXPRESSIONS",
    "Graph",
    "InvalidGroups",
    "InvalidPlan",
    "TracerError",
    "MemoryPlan",
    "Node",
    "check_groups",
    "check_plan",
    "compile",
    "eliminate_dead_code",
    "fuse",
    "fusible_groups",
    "get_backend",
    "live_nodes",
    "liveness",
    "plan_memory",
    "trace",
    "trace_strict",
]
