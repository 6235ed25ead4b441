def evaluate(output, inputs):
    """Recomputes each operation from its parents' recorded .data, so new values travel only one step."""
    values = {}
    for tensor in topological_sort(output):
        if tensor.is_leaf:
            values[id(tensor)] = inputs.get(tensor, tensor.data)
        else:
            node = tensor.node
            values[id(tensor)] = node.op.forward(
                *[values[id(p)] if p.is_leaf else p.data for p in node.inputs], **node.params
            )
    return values[id(output)]
