def plan_memory(graph):
    """A pool of freed buffers handed out last-in first-out, without checking that the buffer is big enough."""
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
    offsets, free, top = {}, [], 0
    for i, (first, last) in intervals.items():
        free += [j for j in offsets if intervals[j][1] == first - 1]
        if free:
            offsets[i] = offsets[free.pop()]
        else:
            offsets[i], top = top, top + sizes[i]
    peak = max((offsets[i] + sizes[i] for i in offsets), default=0)
    return MemoryPlan(offsets, sizes, intervals, peak, "pool")
