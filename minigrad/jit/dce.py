"""Dead-code elimination: drop every node no output depends on.

A traced program computes more than it returns. The backward pass of `x * w` computes an adjoint
for both operands even when `w` is a constant (the rule does not know; eager mode computes it and
throws it away), a function traced for its gradient also computes the loss, and user code leaves
unused intermediates. In a static graph these are visible: walk backwards from the outputs,
marking each node's inputs; whatever is unmarked can never influence a result, so it is removed.
One pass in reverse topological order suffices, because every user of a node comes after it.
"""

from .ir import Graph


def live_nodes(graph):
    """The ids of the nodes the outputs depend on (outputs included)."""
    live = set(graph.outputs)
    for node in reversed(graph.nodes):
        if node.id in live:
            live.update(node.inputs)
    return live


def eliminate_dead_code(graph):
    """A new `Graph` with only the nodes the outputs depend on, plus every input.

    Inputs stay even when unused: they are the compiled function's parameters, and removing one
    would shift the arguments after it. Node ids are kept, so the graphs before and after can be
    compared node by node.
    """
    keep = live_nodes(graph) | set(graph.inputs)
    return Graph([n for n in graph.nodes if n.id in keep], list(graph.inputs), list(graph.outputs))
