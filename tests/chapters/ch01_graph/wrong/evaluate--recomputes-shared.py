def evaluate(output, inputs):
    """Right values without recursion, but no memory of what was computed: a shared tensor is recomputed once
    per path to it, exponential work on shared subgraphs."""
    results = []
    stack = [(output, False)]
    while stack:
        tensor, ready = stack.pop()
        if tensor.is_leaf:
            results.append(inputs.get(tensor, tensor.data))
            continue
        node = tensor.node
        if ready:
            count = len(node.inputs)
            arguments = results[len(results) - count:]
            del results[len(results) - count:]
            results.append(node.op.forward(*arguments, **node.params))
            continue
        stack.append((tensor, True))
        for parent in reversed(node.inputs):
            stack.append((parent, False))
    return results[-1]
