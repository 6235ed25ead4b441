def backward(output):
    """Assumes every rule returns an adjoint for every input: crashes where one is legitimately None (the mask of
    relu, a step function, has no derivative)."""
    adjoints = {id(output): mg.ones_like(output)}
    with mg.no_grad():
        for tensor in reversed(topological_sort(output)):
            adjoint = adjoints.pop(id(tensor), None)
            if adjoint is None:
                continue
            if tensor.is_leaf:
                tensor.grad = adjoint if tensor.grad is None else tensor.grad + adjoint
                continue
            node = tensor.node
            for parent, parent_adjoint in zip(node.inputs, node.op.vjp(adjoint, tensor, *node.inputs, **node.params)):
                if not parent.requires_grad:
                    continue
                if parent_adjoint.shape != parent.shape:
                    parent_adjoint = mg.unbroadcast(parent_adjoint, parent.shape)
                previous = adjoints.get(id(parent))
                adjoints[id(parent)] = parent_adjoint if previous is None else previous + parent_adjoint
