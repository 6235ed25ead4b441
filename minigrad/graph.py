"""Walking the computational graph G = (V, E) that tensors record as they are computed.

Vertices are tensors; an edge runs from each input of an operation to its output. These walks are
iterative (an explicit stack, never recursion), so a chain of 100,000 operations needs no change
to Python's recursion limit. They are chapter 1's graded exercises, in their reference form.
"""

from .errors import GraphError

_OPEN, _DONE = "open", "done"  # the two states of a vertex during the search


def topological_sort(output):
    """Every tensor `output` depends on, each once, inputs before the tensors computed from them.

    Depth-first search with an explicit stack of (tensor, iterator over its parents): the top
    tensor resumes its iterator, descends into the first parent not seen yet, and is emitted once
    the iterator is exhausted, i.e. after all of its parents. A parent met again while it is still
    open (on the stack) closes a cycle: an error, not a hang.
    """
    order = []
    mark = {id(output): _OPEN}  # id -> _OPEN while on the stack, _DONE once emitted
    stack = [(output, iter(output.parents))]
    while stack:
        tensor, parents = stack[-1]
        for parent in parents:
            key = id(parent)
            seen = mark.get(key)
            if seen is _DONE:
                continue
            if seen is _OPEN:
                raise GraphError(
                    f"topological_sort: the graph has a cycle: a tensor of shape {parent.shape} "
                    f"(op {parent.op}) is its own ancestor"
                )
            if parent.node is None:
                # A leaf has no parents to wait for: emit it at once instead of pushing it. Half
                # the vertices of a typical graph are leaves (weights, data, constants), so this
                # halves the stack traffic (measured: benchmarks/README.md).
                mark[key] = _DONE
                order.append(parent)
                continue
            mark[key] = _OPEN
            stack.append((parent, iter(parent.parents)))
            break  # expand the parent first; this tensor's iterator resumes afterwards
        else:  # every parent is emitted
            stack.pop()
            mark[id(tensor)] = _DONE
            order.append(tensor)
    return order


def count_nodes_edges(output):
    """|V| and |E| of the graph below `output`: tensors, and (input, operation output) pairs."""
    order = topological_sort(output)
    return len(order), sum(len(tensor.parents) for tensor in order)


def evaluate(output, inputs):
    """Re-run the forward pass with new leaf values; `inputs` maps leaf tensors to arrays.

    Each vertex is computed as v_i = φ_i(v_Pa(i)) in topological order, so every parent's value
    exists before it is needed. Leaves missing from `inputs` keep their current data.
    """
    values = {}
    for tensor in topological_sort(output):
        if tensor.is_leaf:
            values[id(tensor)] = inputs.get(tensor, tensor.data)
        else:
            node = tensor.node
            values[id(tensor)] = node.op.forward(*[values[id(p)] for p in node.inputs], **node.params)
    return values[id(output)]
