def checkpoint(fn, *args):
    """A checkpoint node whose VJP backpropagates through the first run's graph, kept in its closure."""
    if not mg.is_grad_enabled():
        return fn(*args)
    copies = [leaf_copy(a) for a in args]
    result = fn(*copies)
    packed = pack(result)
    if not packed.requires_grad:
        return result
    captured = captured_leaves(packed, copies)

    def vjp(g, out, *inputs):
        sources = copies + list(captured)
        wanted = [t for t in sources if t.requires_grad]
        adjoints = iter(mg.gradients(packed, wanted, grad=g, retain_graph=True))
        return tuple(next(adjoints) if t.requires_grad else None for t in sources)

    op = Primitive("checkpoint", forward=None, vjp=vjp, jvp=None)
    node = Node(op, tuple(args) + captured, {})
    return unpack(Tensor._result(packed.data, node), result)
