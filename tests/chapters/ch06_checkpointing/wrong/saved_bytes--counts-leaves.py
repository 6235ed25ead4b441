def saved_bytes(output):
    """Counts parameters and data too, as if the graph kept them alive."""
    buffers = {}
    seen = set()
    stack = [output]
    while stack:
        tensor = stack.pop()
        if id(tensor) in seen or tensor.node is None or tensor.node.inputs is None:
            continue
        seen.add(id(tensor))
        for parent in tensor.node.inputs:
            owner = parent.data
            while isinstance(owner.base, np.ndarray):
                owner = owner.base
            buffers[id(owner)] = owner.nbytes
            stack.append(parent)
    return sum(buffers.values())
