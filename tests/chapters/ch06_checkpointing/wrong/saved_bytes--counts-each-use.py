def saved_bytes(output):
    """Adds a buffer once per node that holds it (x * x counts x twice)."""
    total = 0
    seen = set()
    stack = [output]
    while stack:
        tensor = stack.pop()
        if id(tensor) in seen or tensor.node is None or tensor.node.inputs is None:
            continue
        seen.add(id(tensor))
        for parent in tensor.node.inputs:
            if parent.node is not None:
                owner = parent.data
                while isinstance(owner.base, np.ndarray):
                    owner = owner.base
                total += owner.nbytes
            stack.append(parent)
    return total
