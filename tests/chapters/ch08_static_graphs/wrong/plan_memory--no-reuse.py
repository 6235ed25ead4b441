def plan_memory(graph):
    """Correct liveness, but every value gets fresh memory above the previous one: never any reuse."""
    intervals = {}
    for step, node in enumerate(graph.nodes):
        if node.op not in ("input", "constant"):
            intervals[node.id] = [step, step]
        for source in node.inputs:
            if source in intervals:
                intervals[source][1] = step
    for output in graph.outputs:
        if output in intervals:
            intervals[output][1] = len(graph.nodes)
    intervals = {i: tuple(interval) for i, interval in intervals.items()}
    sizes = {i: aligned(graph.node(i).nbytes) for i in intervals}
    offsets, top = {}, 0
    for i in intervals:
        offsets[i], top = top, top + sizes[i]
    return MemoryPlan(offsets, sizes, intervals, top, "none")
