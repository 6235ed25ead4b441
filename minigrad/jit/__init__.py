"""minigrad.jit: trace define-by-run code into a static graph, optimise it, run it on a backend.

    import minigrad.jit as jit
    graph = jit.trace(f, x)                   # the IR: print(graph), minigrad.draw(graph)
    graph = jit.eliminate_dead_code(graph)    # passes map a Graph to a Graph (or to a plan)
    plan = jit.plan_memory(graph)             # liveness -> buffers sharing one arena
    fast = jit.compile(f, backend="numpy")    # traces on the first call per input signature

The IR (`Graph`, `Node`) is in `minigrad.jit.ir`; backends are in `minigrad.jit.backends`;
`minigrad.jit.draw.draw_ir` draws a graph with some nodes faded (graphviz loads only there).
"""

from .backends import BACKENDS, Backend, get_backend
from .compile import Compiled, compile
from .dce import eliminate_dead_code, live_nodes
from .ir import ELEMENTWISE, Graph, Node
from .memory_plan import InvalidPlan, MemoryPlan, check_plan, liveness, plan_memory
from .trace import trace

__all__ = [
    "BACKENDS",
    "Backend",
    "Compiled",
    "ELEMENTWISE",
    "Graph",
    "InvalidPlan",
    "MemoryPlan",
    "Node",
    "check_plan",
    "compile",
    "eliminate_dead_code",
    "get_backend",
    "live_nodes",
    "liveness",
    "plan_memory",
    "trace",
]
