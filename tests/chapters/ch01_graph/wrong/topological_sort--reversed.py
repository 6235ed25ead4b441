def topological_sort(output):
    """Breadth-first from the output: every tensor once, but children before parents."""
    order, seen, queue = [], {id(output)}, [output]
    while queue:
        tensor = queue.pop(0)
        order.append(tensor)
        for parent in tensor.parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                queue.append(parent)
    return order
