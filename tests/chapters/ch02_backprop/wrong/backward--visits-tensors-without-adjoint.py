def backward(output):
    """Visits every tensor of the order, with a zero adjoint where none arrived: a constant gets a .grad (a stale
    one is changed) and a leaf that no gradient reaches gets zeros instead of keeping its .grad as it was."""
    adjoints = {id(output): mg.ones_like(output)}
    with mg.no_grad():
        for tensor in reversed(topological_sort(output)):
            adjoint = adjoints.pop(id(tensor), None)
            if adjoint is None:
                adjoint = mg.zeros_like(tensor)
            if tensor.is_leaf:
                tensor.grad = adjoint if tensor.grad is None else tensor.grad + adjoint
                continue
            node = tensor.node
            for parent, parent_adjoint in zip(node.inputs, node.op.vjp(adjoint, tensor, *node.inputs, **node.params)):
                if parent_adjoint is None or not parent.requires_grad:
                    continue
                if parent_adjoint.shape != parent.shape:
                    parent_adjoint = mg.unbroadcast(parent_adjoint, parent.shape)
                previous = adjoints.get(id(parent))
                adjoints[id(parent)] = parent_adjoint if previous is None else previous + parent_adjoint
