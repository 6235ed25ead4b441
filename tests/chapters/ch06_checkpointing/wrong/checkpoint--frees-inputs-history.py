def checkpoint(fn, *args):
    """Runs fn on the arguments themselves (not leaf copies), then frees that first run's graph by setting
    every node's inputs to None: which also cuts the arguments' own history, so nothing before the
    checkpoint gets a gradient."""
    if not mg.is_grad_enabled():
        return fn(*args)
    rng = RandomState()
    result = fn(*args)
    packed = pack(result)
    if not packed.requires_grad:
        return result
    captured = captured_leaves(packed, args)
    for tensor in mg.topological_sort(packed):  # drop the first run's activations
        if tensor.node is not None:
            tensor.node.inputs = None
    n_args = len(args)

    def vjp(g, out, *inputs):
        leaves = [leaf_copy(a) for a in inputs[:n_args]]
        with mg.enable_grad(), replaying(rng):
            rebuilt = pack(fn(*leaves))
        sources = leaves + list(inputs[n_args:])
        wanted = [t for t in sources if t.requires_grad]
        adjoints = iter(mg.gradients(rebuilt, wanted, grad=g))
        return tuple(next(adjoints) if t.requires_grad else None for t in sources)

    op = Primitive("checkpoint", forward=None, vjp=vjp, jvp=None)
    node = Node(op, tuple(args) + captured, {})
    return unpack(Tensor._result(packed.data, node), result)
