def eliminate_dead_code(graph):
    """Starts the sweep from the last output only: what only the other outputs need is removed."""
    live = {graph.outputs[-1]}
    for node in reversed(graph.nodes):
        if node.id in live:
            live.update(node.inputs)
    keep = live | set(graph.inputs)
    return Graph([n for n in graph.nodes if n.id in keep], list(graph.inputs), list(graph.outputs))
