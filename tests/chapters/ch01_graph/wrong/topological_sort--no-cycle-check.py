def topological_sort(output):
    """Iterative depth-first search that skips every tensor seen before, finished or not: right on DAGs,
    but a cycle goes unnoticed and some order comes back."""
    order, seen = [], set()
    stack = [(output, False)]
    while stack:
        tensor, parents_done = stack.pop()
        if parents_done:
            order.append(tensor)
            continue
        if id(tensor) in seen:
            continue
        seen.add(id(tensor))
        stack.append((tensor, True))
        stack.extend((parent, False) for parent in tensor.parents if id(parent) not in seen)
    return order
