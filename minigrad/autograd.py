"""The backward pass: adjoints flow from the output to the leaves in reverse topological order.

For a scalar output y, the adjoint of a vertex is v̄_i = ∂y/∂v_i = Σ_{j ∈ Ch(i)} v̄_j ∂v_j/∂v_i.
Visiting vertices in reverse topological order guarantees that every child has sent its share
before a vertex passes its own adjoint on, so each operation's VJP rule runs exactly once: the
whole pass costs a small constant times the forward pass, O(|V| + |E|).
"""

import contextlib
import dataclasses
import gc
import operator

import numpy as np

from .broadcasting import unbroadcast
from .errors import GraphError, ShapeError
from .grad_mode import set_grad_enabled, state
from .graph import topological_sort
from .tensor import Tensor, _freed_message, _result, hooks, tracing, versions

_data = operator.attrgetter("data")
_hooked = hooks.table  # tensors with gradient hooks (register_hook), by id: empty unless some exist


def _seed(output, grad):
    """The adjoint of the output itself: 1 for a scalar, the caller's vector otherwise."""
    if grad is None:
        data = output.data  # its attributes, not the tensor's properties: one call each fewer
        if data.size != 1:
            raise GraphError(
                f"backward: the output has shape {data.shape}; only a single-element output gets "
                f"an implicit gradient of 1. Pass grad= with shape {data.shape}, or reduce first (.sum())."
            )
        seed = np.empty(data.shape, data.dtype)  # not np.ones (a Python function: twice the time)
        seed.fill(1)
        return Tensor._result(seed, None)
    grad = grad if isinstance(grad, Tensor) else Tensor(grad, dtype=output.dtype)
    if grad.shape != output.shape:
        raise ShapeError(f"backward: grad has shape {grad.shape} but the output has shape {output.shape}")
    return grad


def _accumulate(tensor, grad, create_graph, handed):
    """Leaves keep summing gradients across backward calls, as in PyTorch.

    A leaf's first gradient must be an array of its own: adjoints are shared (add hands one array
    to both inputs, the seed may be the caller's array, a reshape is a view), and an in-place edit
    of one leaf's .grad must not change another's. `handed` holds the ids of the arrays this pass
    has given away already (the seed's first): any other array that owns its memory is a fresh
    result nobody else holds, kept without a copy. (Copying every weight's gradient is a visible part of
    an MLP's training step: benchmarks/README.md.)
    """
    if not create_graph and tensor.grad is None:
        data = grad.data
        if id(data) in handed or not (isinstance(data, np.ndarray) and data.flags.owndata):
            data = data.copy()
        handed.add(id(data))
        grad = Tensor._result(data, None)
    elif not create_graph:
        grad = grad.detach()
    tensor.grad = grad if tensor.grad is None else tensor.grad + grad


def _check_output(output, name):
    if not output.requires_grad:
        raise GraphError(
            f"{name}: the output (shape {output.shape}) does not require grad: no input of the "
            f"computation had requires_grad=True, or it ran under no_grad()"
        )


@dataclasses.dataclass
class VJPCount:
    """What backward passes cost: VJP rules evaluated, and input adjoints computed only to be dropped.

    Elementwise rules return an adjoint for every input, so an input that does not require grad (a
    frozen bias, the data) still costs its share of the rule's arithmetic, which the engine then
    drops: `discarded` counts those. `matmul` skips them (a whole matrix product each), as PyTorch's
    rules do with `needs_input_grad`. Frozen *subgraphs* cost nothing at all: operations whose
    inputs all have `requires_grad=False` record no node, so backward never reaches them.
    """

    vjps: int = 0
    discarded: int = 0


_vjp_counters = []  # the active count_vjps() contexts; empty (and so free to check) otherwise


@contextlib.contextmanager
def count_vjps():
    """Count the VJP rules that backward passes inside the block evaluate (contexts nest)."""
    counter = VJPCount()
    _vjp_counters.append(counter)
    try:
        yield counter
    finally:
        _vjp_counters.remove(counter)


def _count_vjp(inputs, adjoints):
    discarded = sum(a is not None and not t.requires_grad for t, a in zip(inputs, adjoints))
    for counter in _vjp_counters:
        counter.vjps += 1
        counter.discarded += discarded


class _cyclic_gc_paused:
    """Hold off Python's cyclic garbage collector for the duration of a backward pass.

    A pass allocates a few objects per vertex (adjoints, the search stack), and CPython runs a
    collection every 700 net allocations; each full collection walks every live object, the whole
    graph included. A pass creates no reference cycles (graphs have none, and neither do the
    adjoints), so those collections can reclaim nothing (benchmarks/README.md has the figures).
    Collection resumes, counters intact, afterwards. (A class rather than @contextmanager: a
    generator per backward call costs what tiny graphs notice.)
    """

    def __enter__(self):
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was_enabled:
            gc.enable()


def _propagate(output, seed, retain_graph, create_graph, wanted=None):
    """Run every VJP rule once, from `output` down, in reverse topological order.

    With `wanted` (tensors), return their adjoints and leave every `.grad` alone; without it,
    accumulate adjoints into the `.grad` of leaves (and of tensors that asked to retain theirs).

    A pass that records nothing (no create_graph, no forward-mode tangents, no jit trace watching)
    keeps its adjoints as bare numpy arrays: rules marked `array_rule` run on the arrays directly,
    the others get their adjoint wrapped in a Tensor and hand back arrays. Only `.grad` and the
    returned adjoints become Tensors again.
    """
    wanted_ids = None if wanted is None else {id(t) for t in wanted}
    found = {}
    raw = not create_graph and not state.forward_mode_depth and not tracing.depth
    adjoints = {id(output): seed.data if raw else seed}
    handed = {id(seed.data)}  # arrays that leaves' .grad (or the caller) hold: see _accumulate
    with set_grad_enabled(create_graph), _cyclic_gc_paused():
        order = topological_sort(output)
        while order:
            tensor = order.pop()  # popped, not iterated: once its children freed it, a tensor dies here
            adjoint = adjoints.pop(id(tensor), None)
            if adjoint is None or not tensor.requires_grad:
                continue
            if _hooked and id(tensor) in _hooked:  # its gradient is complete here: every child has sent its share
                adjoint = hooks.run(tensor, adjoint, raw)
            node = tensor.node  # None for a leaf
            if wanted_ids is not None:
                if id(tensor) in wanted_ids:
                    found[id(tensor)] = _result(adjoint, None) if raw else adjoint
            elif node is None or tensor._retains_grad:
                _accumulate(tensor, _result(adjoint, None) if raw else adjoint, create_graph, handed)
            if node is None:
                continue
            if node.epoch < versions.clock:  # something changed in place since this node was recorded
                versions.check(tensor, node)
            if node.inputs is None:  # freed after the sort: by a backward run inside a VJP rule
                raise GraphError(_freed_message(tensor))
            parent_adjoints = _run_rule(node, adjoint, tensor, raw)
            if _vjp_counters:
                _count_vjp(node.inputs, parent_adjoints)
            for parent, parent_adjoint in zip(node.inputs, parent_adjoints):
                if parent_adjoint is None or not parent.requires_grad:
                    continue
                shape = parent.data.shape  # .data.shape, not the .shape properties: two calls per edge
                if parent_adjoint.shape != shape:
                    parent_adjoint = unbroadcast(parent_adjoint, shape)
                key = id(parent)
                previous = adjoints.get(key)
                adjoints[key] = parent_adjoint if previous is None else previous + parent_adjoint
            if not retain_graph:
                node.inputs = None  # free the saved inputs; a second backward fails loudly
    return found


def _run_rule(node, adjoint, out, raw):
    """The node's input adjoints: Tensors in a recording pass, arrays (or None) in a raw one."""
    op = node.op
    if not raw:
        return op.vjp(adjoint, out, *node.inputs, **node.params)
    if op.array_rule:  # arithmetic operators only: the same rule, on the arrays
        return op.vjp(adjoint, out.data, *map(_data, node.inputs), **node.params)
    if op.array_vjp is not None:  # the rule written out for arrays (inputs stay tensors)
        return op.array_vjp(adjoint, out.data, *node.inputs, **node.params)
    adjoints = op.vjp(_result(adjoint, None), out, *node.inputs, **node.params)
    return [None if a is None else a.data for a in adjoints]


def backward(output, grad=None, retain_graph=None, create_graph=False):
    """Accumulate d(output)/d(leaf) into `.grad` of every leaf below `output` that requires grad.

    `retain_graph` defaults to `create_graph` (as in PyTorch): the recorded backward pass refers to
    the first graph's tensors, so differentiating it again needs that graph intact.
    """
    _check_output(output, "backward")
    retain_graph = create_graph if retain_graph is None else retain_graph
    _propagate(output, _seed(output, grad), retain_graph, create_graph)


def gradients(output, inputs, grad=None, retain_graph=None, create_graph=False):
    """d(output)/d(input) for each of `inputs`, returned instead of accumulated (like torch.autograd.grad).

    An input the output does not depend on gets zeros. The graph is kept by default when
    `create_graph=True`, since the result is usually differentiated again through it.
    """
    _check_output(output, "gradients")
    retain_graph = create_graph if retain_graph is None else retain_graph
    found = _propagate(output, _seed(output, grad), retain_graph, create_graph, wanted=inputs)
    return tuple(found[id(t)] if id(t) in found else Tensor._result(np.zeros_like(t.data), None) for t in inputs)
