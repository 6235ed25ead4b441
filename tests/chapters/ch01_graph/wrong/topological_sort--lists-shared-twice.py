def topological_sort(output):
    """Depth-first search without a set of finished tensors: shared tensors are listed once per path."""
    order, open_ = [], set()
    stack = [(output, False)]
    while stack:
        tensor, parents_done = stack.pop()
        if parents_done:
            open_.discard(id(tensor))
            order.append(tensor)
            continue
        if id(tensor) in open_:
            raise GraphError("topological_sort: the graph has a cycle")
        open_.add(id(tensor))
        stack.append((tensor, True))
        stack.extend((parent, False) for parent in tensor.parents)
    return order
