def backward(output):
    """Never sums broadcast adjoints back: a bias gets a gradient with the batch's shape."""
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
                if parent_adjoint is None or not parent.requires_grad:
                    continue
                previous = adjoints.get(id(parent))
                adjoints[id(parent)] = parent_adjoint if previous is None else previous + parent_adjoint
