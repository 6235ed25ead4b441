def eliminate_dead_code(graph):
    """Deletes the dead nodes from the graph it was given and returns that same graph."""
    live = set(graph.outputs)
    for node in reversed(graph.nodes):
        if node.id in live:
            live.update(node.inputs)
    keep = live | set(graph.inputs)
    graph.nodes[:] = [n for n in graph.nodes if n.id in keep]
    return graph
