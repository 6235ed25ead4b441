def checkpoint(fn, *args):
    """The node's inputs are the arguments only: weights fn closes over never get gradients."""
    if not mg.is_grad_enabled():
        return fn(*args)
    rng = RandomState()
    copies = [leaf_copy(a) for a in args]
    result = fn(*copies)
    packed = pack(result)
    if not packed.requires_grad:
        return result

    def vjp(g, out, *inputs):
        leaves = [leaf_copy(a) for a in inputs]
        with mg.enable_grad(), replaying(rng):
            rebuilt = pack(fn(*leaves))
        wanted = [t for t in leaves if t.requires_grad]
        adjoints = iter(mg.gradients(rebuilt, wanted, grad=g))
        return tuple(next(adjoints) if t.requires_grad else None for t in leaves)

    op = Primitive("checkpoint", forward=None, vjp=vjp, jvp=None)
    node = Node(op, tuple(args), {})
    return unpack(Tensor._result(packed.data, node), result)
