def count_nodes_edges(output):
    """Counts only the operations as vertices, forgetting inputs and constants."""
    order = topological_sort(output)
    return sum(not tensor.is_leaf for tensor in order), sum(len(tensor.parents) for tensor in order)
