"""Tracing: run a define-by-run Python function once and keep the graph it recorded as a static `Graph`.

minigrad already records every operation as it runs (that is what backward walks). Tracing reuses
that: the example inputs become fresh leaves that require grad, so each operation on them records a
`Node`, and `recording()` collects those Nodes as they are made. Each becomes an IR node, in the
order they ran. Leaves that are not inputs (weights closed over, Python numbers, masks) become
"constant" nodes holding a copy of their value at trace time. Everything that ran is in the graph,
used or not: removing the unused part is the job of `eliminate_dead_code`.

With `backward=True` the gradients are taken with `create_graph=True`, so the operations of the
backward pass are recorded too and the graph computes the value and the gradients in one program
(`trace(grad(f), x)` does the same: `grad` records its backward when its input is being traced).

What tracing cannot see: Python. An `if`, a loop bound or an index computed from the *values* of
tensors runs once, at trace time, and only the branch taken is recorded; comparisons (`x > 0`) give
constant masks, and `.detach()` gives a constant. The traced graph then silently computes the same
branch, mask or value for every later input. This is the price of define-and-run (TensorFlow 1.x
needed `tf.cond` and `tf.while_loop` for it; `torch.jit.trace` and `jax.jit` have the same limit).
`trace` shows that limit as it is; `trace_strict`, which `minigrad.jit.compile` uses, refuses to
freeze a value instead (a `TracerError` naming the line), records comparisons and masks as
operations, and reads closed-over parameters at call time.
"""

import numpy as np

from ..autograd import gradients
from ..errors import DtypeError, GraphError
from ..grad_mode import add_record_hook, enable_grad, remove_record_hook
from ..tensor import Tensor, TracerError, tracing  # noqa: F401 (TracerError: minigrad.jit re-exports it)
from ..ops import PRIMITIVES
from .ir import Graph, Node


def trace(fn, *example_inputs, backward=False):
    """The static graph of `fn` run on `example_inputs` (arrays or Tensors, floating point).

    The graph's inputs are the example inputs in order; its outputs are what `fn` returns (a
    Tensor, or a tuple/list of them), followed with `backward=True` by the gradient of the first
    output (a scalar) with respect to each input.
    """
    graph, _ = trace_with_structure(fn, example_inputs, backward)
    return graph


def trace_with_structure(fn, example_inputs, backward=False):
    """(graph, rebuild): `rebuild(list_of_values)` puts the graph's outputs back in the nesting `fn` returned."""
    inputs = [_tracer(x, position) for position, x in enumerate(example_inputs)]
    with enable_grad(), recording() as nodes:
        result = fn(*inputs)
        outputs, rebuild = _flatten(result)
        if backward:
            outputs, rebuild = _with_gradients(outputs, inputs, rebuild)
    return graph_of(inputs, nodes, outputs), rebuild


def trace_strict(fn, example_inputs, backward=False):
    """(graph, rebuild, parameters): the trace `minigrad.jit.compile` runs, which never freezes a value
    that a later call could change.

    * Tensors computed from the inputs refuse to give up their values (`if t > 0:`, `.item()`,
      `float()`, `.numpy()`, `.tolist()`, a boolean-mask index, `no_grad` around them): each raises
      `TracerError` naming the operation and the line of `fn`, as JAX does.
    * Comparisons of traced tensors are operations of the graph (`greater`, ...), `where` on such a
      mask is `select`, and `.detach()` is `stop_gradient`: masks are recomputed on every call.
    * Leaves that `fn` closes over and that require grad (a model's parameters, which an optimizer
      updates in place or `load_state_dict` replaces) become extra "input" nodes after the
      arguments: `parameters` lists those tensors, whose current `.data` each call passes in.
      Other closed-over leaves (data, constants, numbers) are constants of the graph, as in `trace`.

    What it cannot see: `.data` read directly (a numpy array; `t.data > 0` is a constant mask), and
    Python state (globals, counters) that `fn` reads.
    """
    inputs = [_tracer(x, position) for position, x in enumerate(example_inputs)]
    tracing.depth += 1
    try:
        with enable_grad(), recording() as nodes:
            result = fn(*inputs)
            outputs, rebuild = _flatten(result)
            if backward:
                outputs, rebuild = _with_gradients(outputs, inputs, rebuild)
    finally:
        tracing.depth -= 1
    parameters = _closed_over_parameters(inputs, nodes, outputs)
    return graph_of(inputs + parameters, nodes, outputs), rebuild, parameters


def _closed_over_parameters(inputs, nodes, outputs):
    """Leaves read by the recorded operations (or returned) that require grad and are not inputs, in order."""
    seen = {id(t) for t in inputs}
    found = []
    for tensor in [t for n in nodes for t in (n.inputs or ())] + list(outputs):
        if tensor.node is None and tensor.requires_grad and id(tensor) not in seen:
            seen.add(id(tensor))
            found.append(tensor)
    return found


class recording:
    """`with recording() as nodes:` collects every `Node` recorded inside the block, in order.

    It is one of the hooks each new Node calls (`grad_mode.add_record_hook`), beside any other
    (a `minigrad.memory` tracker), so both can watch the same code.
    """

    def __enter__(self):
        self.nodes = []
        self._hook = self.nodes.append  # one bound method, so that exit removes this very hook
        add_record_hook(self._hook)
        return self.nodes

    def __exit__(self, *exc):
        remove_record_hook(self._hook)
        return False


def _tracer(x, position):
    """A fresh leaf that requires grad, holding a copy of example input `x`."""
    data = np.array(x.data if isinstance(x, Tensor) else x)
    if data.dtype.kind != "f":
        raise DtypeError(
            f"trace: input {position} has dtype {data.dtype} (shape {data.shape}); only floating-point inputs "
            f"are traced. Close over integer data (labels, indices) in fn instead: it becomes a constant."
        )
    return Tensor(data, requires_grad=True)


def _flatten(result):
    """The output tensors of `fn`, and how to put values back into the same tuple/list/single shape."""
    if isinstance(result, Tensor):
        return [result], lambda values: values[0]
    if isinstance(result, (tuple, list)) and result and all(isinstance(r, Tensor) for r in result):
        kind = type(result)
        return list(result), lambda values: kind(values)
    raise TypeError(
        f"trace: fn must return a Tensor or a non-empty tuple/list of Tensors, got {type(result).__name__}"
    )


def _with_gradients(outputs, inputs, rebuild):
    loss = outputs[0]
    if loss.size != 1:
        raise GraphError(f"trace(backward=True): the first output must be a scalar loss, got shape {loss.shape}")
    if not loss.requires_grad:
        raise GraphError("trace(backward=True): the first output does not depend on any input")
    grads = list(gradients(loss, inputs, create_graph=True))
    n = len(outputs)
    return outputs + grads, lambda values: (rebuild(values[:n]), tuple(values[n:]))


def graph_of(inputs, nodes, outputs):
    """The `Graph` of the recorded `nodes` (in recording order), `inputs` being its arguments.

    Inputs get the first ids, in argument order (an unused input stays an argument); then each
    recorded node in turn, preceded by a "constant" node for each leaf it reads for the first time.
    Recording order is topological: an operation is recorded after the operations that made its
    inputs. A recorded operation whose result nobody kept (dead code) is kept too; its shape and
    dtype come from evaluating it once more on the example data.
    """
    builder = _Builder(inputs, nodes, outputs)
    for node in nodes:
        builder.add_operation(node)
    return Graph(builder.ir, list(range(len(inputs))), [builder.operand(t) for t in outputs])


class _Builder:
    """Turns recorded Nodes and the tensors they read into IR nodes with consecutive ids."""

    def __init__(self, inputs, nodes, outputs):
        self.ir, self.tensor_ids, self.node_ids = [], {}, {}
        for tensor in inputs:
            if id(tensor) in self.tensor_ids:
                raise GraphError("trace: the same tensor is passed twice as an input")
            self.tensor_ids[id(tensor)] = self._append("input", (), tensor.data)
        # the tensor each recorded node produced, where one still exists (every input of a later node does)
        self.produced = {id(t.node): t for n in nodes for t in (n.inputs or ()) if t.node is not None}
        self.produced.update({id(t.node): t for t in outputs if t.node is not None})

    def _append(self, op, operands, data, params=()):
        node = Node(len(self.ir), op, tuple(operands), tuple(np.shape(data)), np.asarray(data).dtype.name, params)
        self.ir.append(node)
        return node.id

    def operand(self, tensor):
        """The IR id of `tensor`: its recorded operation, an input, or else a new constant."""
        if tensor.node is not None and id(tensor.node) in self.node_ids:
            return self.node_ids[id(tensor.node)]
        if id(tensor) not in self.tensor_ids:  # a leaf, or computed before tracing began: frozen
            value = np.array(tensor.data)
            self.tensor_ids[id(tensor)] = self._append("constant", (), value, (("value", value),))
        return self.tensor_ids[id(tensor)]

    def add_operation(self, node):
        if node.inputs is None:
            raise GraphError(
                f"trace: the graph of a '{node.op.name}' operation was freed by a backward pass inside fn; "
                f"use backward(create_graph=True) or minigrad.gradients(..., create_graph=True) there"
            )
        name = getattr(node.op, "name", node.op)
        if PRIMITIVES.get(name) is not node.op:
            raise GraphError(
                f"trace: '{name}' is not a primitive of minigrad.ops (minigrad.ops.PRIMITIVES) and cannot be traced: "
                f"an operation defined outside it (a minigrad.Function such as checkpoint's, or a Primitive made by hand) "
                f"runs Python code of its own that a static graph cannot hold; call the operations it is made of instead"
            )
        operands = [self.operand(t) for t in node.inputs]
        out = self.produced.get(id(node))
        data = out.data if out is not None else node.op.forward(*[t.data for t in node.inputs], **node.params)
        self.node_ids[id(node)] = self._append(node.op.name, operands, data, tuple(sorted(node.params.items())))
