def saved_bytes(output):
    """Right counting (each buffer once), but no set of walked tensors: a shared tensor is walked again along
    every path that reaches it, exponentially many in a ladder."""
    buffers = {}
    stack = [output]
    while stack:
        tensor = stack.pop()
        if tensor.node is None or tensor.node.inputs is None:
            continue
        for parent in tensor.node.inputs:
            if parent.node is not None:
                owner = parent.data
                while isinstance(owner.base, np.ndarray):
                    owner = owner.base
                buffers[id(owner)] = owner.nbytes
            stack.append(parent)
    return sum(buffers.values())
