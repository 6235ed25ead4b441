def eliminate_dead_code(graph):
    """Keeps the outputs and the nodes they read directly, forgetting that liveness is transitive."""
    live = set(graph.outputs)
    for output in graph.outputs:
        live.update(graph.node(output).inputs)
    keep = live | set(graph.inputs)
    return Graph([n for n in graph.nodes if n.id in keep], list(graph.inputs), list(graph.outputs))
