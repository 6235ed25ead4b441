"""minigrad.jit: trace define-by-run code into a static graph, optimise it, run it on a backend.

`Graph` and `Node` (the IR) are defined in `minigrad.jit.ir`.
"""

from .ir import ELEMENTWISE, Graph, Node

__all__ = ["ELEMENTWISE", "Graph", "Node"]
