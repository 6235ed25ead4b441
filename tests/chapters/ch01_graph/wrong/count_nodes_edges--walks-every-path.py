def count_nodes_edges(output):
    """Counts each tensor once, but walks every path to it: right counts, exponential work on shared subgraphs."""
    seen, edges = set(), 0
    stack = [output]
    while stack:
        tensor = stack.pop()
        if id(tensor) not in seen:
            seen.add(id(tensor))
            edges += len(tensor.parents)
        stack.extend(tensor.parents)  # pushed again on every visit, not only on the first
    return len(seen), edges
