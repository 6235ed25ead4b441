def evaluate(output, inputs):
    """Recursion with a memo: right on small graphs, dies on deep ones."""
    values = {}

    def value(tensor):
        if id(tensor) not in values:
            if tensor.is_leaf:
                values[id(tensor)] = inputs.get(tensor, tensor.data)
            else:
                node = tensor.node
                values[id(tensor)] = node.op.forward(*[value(p) for p in node.inputs], **node.params)
        return values[id(tensor)]

    return value(output)
