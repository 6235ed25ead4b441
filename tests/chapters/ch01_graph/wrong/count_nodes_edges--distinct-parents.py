def count_nodes_edges(output):
    """Counts an operation's distinct inputs, so x * x has one edge instead of two."""
    order = topological_sort(output)
    return len(order), sum(len({id(p) for p in tensor.parents}) for tensor in order)
