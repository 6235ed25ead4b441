def count_nodes_edges(output):
    """Counts by recursion over the parents: right on small graphs, dies on deep ones."""
    seen = set()

    def count(tensor):
        if id(tensor) in seen:
            return 0, 0
        seen.add(id(tensor))
        vertices, edges = 1, len(tensor.parents)
        for parent in tensor.parents:
            v, e = count(parent)
            vertices, edges = vertices + v, edges + e
        return vertices, edges

    return count(output)
