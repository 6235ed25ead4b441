def checkpoint(fn, *args):
    """Records a checkpoint node even when fn ran on constants only: the result claims to require grad."""
    if not mg.is_grad_enabled():
        return fn(*args)
    rng = RandomState()
    copies = [leaf_copy(a) for a in args]
    result = fn(*copies)
    packed = pack(result)
    captured = captured_leaves(packed, copies)
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
