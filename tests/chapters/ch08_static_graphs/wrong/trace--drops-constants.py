def trace(fn, *example_inputs):
    """Skips leaves that are not inputs: operations lose their constant operands (x * 2.0 becomes mul(x))."""
    inputs = [mg.tensor(np.array(x.data if isinstance(x, mg.Tensor) else x), requires_grad=True) for x in example_inputs]
    with mg.enable_grad():
        result = fn(*inputs)
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    ids, nodes = {}, []

    def add(tensor, op, operands=(), params=()):
        ids[id(tensor)] = len(nodes)
        data = np.asarray(tensor.data)
        nodes.append(Node(len(nodes), op, tuple(operands), data.shape, data.dtype.name, params))

    for tensor in inputs:
        add(tensor, "input")
    for output in outputs:
        for tensor in mg.topological_sort(output):
            if id(tensor) in ids or tensor.is_leaf:
                continue
            node = tensor.node
            operands = [ids[id(p)] for p in node.inputs if id(p) in ids]
            add(tensor, node.op.name, operands, tuple(sorted(node.params.items())))
    return Graph(nodes, list(range(len(inputs))), [ids[id(t)] for t in outputs])
