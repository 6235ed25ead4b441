def eliminate_dead_code(graph):
    """Removes unused inputs too, which changes the program's arguments."""
    live = set(graph.outputs)
    for node in reversed(graph.nodes):
        if node.id in live:
            live.update(node.inputs)
    return Graph([n for n in graph.nodes if n.id in live], [i for i in graph.inputs if i in live], list(graph.outputs))
