"""`compile(fn)`: write define-by-run code, run it as a static graph.

The first call with given input shapes and dtypes traces `fn` (`trace`), removes dead code and hands
the graph to a backend, which prepares it once (plans memory, generates kernels); later calls with
the same signature skip Python entirely and run the prepared program. A call with a new signature
traces again, as `jax.jit` and `torch.compile` do: shapes are part of a static graph.

Tracing never freezes a value a later call could change (`minigrad.jit.trace.trace_strict`): Python
control flow on a traced tensor's value (`if`, `.item()`, `float()`, a boolean-mask index) raises
`TracerError` naming the line, and so does a random draw (`randn`, a distribution's `rsample`,
Dropout in training mode: numbers drawn once would be every call's; pass draws in as an input);
comparisons and `where` masks are operations of the graph; weights closed over by `fn` (tensors
that require grad, e.g. a model's parameters) are read at every call, so an optimizer step between
calls is seen. The graph takes them as extra inputs after `fn`'s.
"""

import numpy as np

from ..tensor import Tensor
from .backends import get_backend
from .dce import eliminate_dead_code
from .trace import trace_strict


def compile(fn, backend="numpy", backward=False, **options):
    """A function computing what `fn` computes, through a traced and compiled static graph.

    backend: "numpy" (the reference interpreter), "numba" (fused CPU kernels) or "cuda".
    backward: also return the gradients of the first output (a scalar) with respect to every
        input: the compiled function then returns `(fn's result, (grad_0, grad_1, ...))`.
    options: passed to the backend, e.g. `fast_math=True` for "numba" (see its class).
    The result is a `Compiled`; its `.graph` and `.source` show what the last call ran.
    """
    return Compiled(fn, get_backend(backend, **options), backward)


class Compiled:
    """A compiled function: one traced and compiled program per input signature (shapes, dtypes)."""

    def __init__(self, fn, backend, backward):
        self.fn, self.backend, self.backward = fn, backend, backward
        self.programs = {}  # signature -> (graph, runner, rebuild)
        self._last = None
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args):
        arrays = [np.asarray((a if isinstance(a, Tensor) else Tensor(a)).data) for a in args]  # as eager converts
        signature = tuple((a.shape, a.dtype.str) for a in arrays)
        program = self.programs.get(signature)
        if program is not None:
            live = [np.asarray(p.data) for p in program[3]]  # the parameters as they are now
            if tuple((a.shape, a.dtype.str) for a in live) != program[4]:
                program = None  # a parameter changed shape or dtype (load_state_dict, .astype): trace again
        if program is None:
            graph, rebuild, parameters = trace_strict(self.fn, arrays, self.backward)
            graph = eliminate_dead_code(graph)
            live = [np.asarray(p.data) for p in parameters]
            program = (graph, self.backend.compile(graph), rebuild, parameters, tuple((a.shape, a.dtype.str) for a in live))
            self.programs[signature] = program
        self._last = program
        graph, runner, rebuild = program[:3]
        return rebuild([Tensor._result(value, None) for value in runner(*arrays, *live)])

    def _program(self):
        if self._last is None:
            raise RuntimeError("compiled function: call it once first; it traces on its first call")
        return self._last

    @property
    def graph(self):
        """The graph the last call ran (after dead-code elimination)."""
        return self._program()[0]

    @property
    def runner(self):
        """The backend's program for the last call's signature."""
        return self._program()[1]

    @property
    def source(self):
        """The generated source of the last call's program (backends that generate code), else None."""
        return getattr(self.runner, "source", None)

    def __repr__(self):
        name = getattr(self.fn, "__name__", type(self.fn).__name__)
        return f"<compiled {name}: backend {self.backend.name}, {len(self.programs)} traced signature(s)>"
