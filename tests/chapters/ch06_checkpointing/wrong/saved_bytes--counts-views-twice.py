def saved_bytes(output):
    """Counts each saved tensor's own nbytes: a view and its base are counted separately."""
    sizes = {}
    seen = set()
    stack = [output]
    while stack:
        tensor = stack.pop()
        if id(tensor) in seen or tensor.node is None or tensor.node.inputs is None:
            continue
        seen.add(id(tensor))
        for parent in tensor.node.inputs:
            if parent.node is not None:
                sizes[id(parent)] = parent.data.nbytes
            stack.append(parent)
    return sum(sizes.values())
