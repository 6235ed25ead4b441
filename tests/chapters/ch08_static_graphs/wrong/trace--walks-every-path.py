def trace(fn, *example_inputs):
    """Its own walk below the outputs, parents first, that gives each tensor one node but does not remember which
    tensors it has already walked below: right on every graph, and 2**40 steps on a ladder of 40 shared steps."""
    inputs = [mg.tensor(np.array(x.data if isinstance(x, mg.Tensor) else x), requires_grad=True) for x in example_inputs]
    with mg.enable_grad():
        result = fn(*inputs)
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    ids, nodes = {}, []

    def add(tensor, op, operands=(), params=()):
        ids[id(tensor)] = len(nodes)
        data = np.asarray(tensor.data)
        nodes.append(Node(len(nodes), op, tuple(operands), data.shape, data.dtype.name, params))

    def visit(tensor):
        if not tensor.is_leaf:
            for parent in tensor.node.inputs:
                visit(parent)
        if id(tensor) in ids:
            return
        if tensor.is_leaf:
            add(tensor, "constant", params=(("value", np.array(tensor.data)),))
        else:
            node = tensor.node
            add(tensor, node.op.name, [ids[id(p)] for p in node.inputs], tuple(sorted(node.params.items())))

    for tensor in inputs:
        add(tensor, "input")
    for output in outputs:
        visit(output)
    return Graph(nodes, list(range(len(inputs))), [ids[id(t)] for t in outputs])
