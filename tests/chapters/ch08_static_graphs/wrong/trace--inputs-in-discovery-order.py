def trace(fn, *example_inputs):
    """Numbers the inputs in the order the graph walk meets them, not in argument order."""
    inputs = [mg.tensor(np.array(x.data if isinstance(x, mg.Tensor) else x), requires_grad=True) for x in example_inputs]
    with mg.enable_grad():
        result = fn(*inputs)
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    ids, nodes = {}, []
    input_set = {id(t) for t in inputs}

    def add(tensor, op, operands=(), params=()):
        ids[id(tensor)] = len(nodes)
        data = np.asarray(tensor.data)
        nodes.append(Node(len(nodes), op, tuple(operands), data.shape, data.dtype.name, params))

    for output in outputs:
        for tensor in mg.topological_sort(output):
            if id(tensor) in ids:
                continue
            if id(tensor) in input_set:
                add(tensor, "input")
            elif tensor.is_leaf:
                add(tensor, "constant", params=(("value", np.array(tensor.data)),))
            else:
                node = tensor.node
                add(tensor, node.op.name, [ids[id(p)] for p in node.inputs], tuple(sorted(node.params.items())))
    for tensor in inputs:
        if id(tensor) not in ids:
            add(tensor, "input")
    return Graph(nodes, sorted(ids[id(t)] for t in inputs), [ids[id(t)] for t in outputs])
