def topological_sort(output):
    """Lists each tensor once, but expands a shared tensor again on every path to it (exponential work)."""
    order, emitted, open_ = [], set(), set()
    stack = [(output, False)]
    while stack:
        tensor, parents_done = stack.pop()
        if parents_done:
            open_.discard(id(tensor))
            if id(tensor) not in emitted:
                emitted.add(id(tensor))
                order.append(tensor)
            continue
        if id(tensor) in open_:
            raise GraphError("topological_sort: the graph has a cycle")
        open_.add(id(tensor))
        stack.append((tensor, True))
        stack.extend((parent, False) for parent in tensor.parents)
    return order
