def trace(fn, *example_inputs):
    """Makes every leaf an input, so weights and numbers become extra arguments of the program."""
    inputs = [mg.tensor(np.array(x.data if isinstance(x, mg.Tensor) else x), requires_grad=True) for x in example_inputs]
    with mg.enable_grad():
        result = fn(*inputs)
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    ids, nodes, input_ids = {}, [], []

    def add(tensor, op, operands=(), params=()):
        ids[id(tensor)] = len(nodes)
        data = np.asarray(tensor.data)
        nodes.append(Node(len(nodes), op, tuple(operands), data.shape, data.dtype.name, params))

    for tensor in inputs:
        add(tensor, "input")
        input_ids.append(ids[id(tensor)])
    for output in outputs:
        for tensor in mg.topological_sort(output):
            if id(tensor) in ids:
                continue
            if tensor.is_leaf:
                add(tensor, "input")
                input_ids.append(ids[id(tensor)])
            else:
                node = tensor.node
                add(tensor, node.op.name, [ids[id(p)] for p in node.inputs], tuple(sorted(node.params.items())))
    return Graph(nodes, input_ids, [ids[id(t)] for t in outputs])
