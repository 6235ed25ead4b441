class Checkpoint(mg.Function):
    """A cheat: keeps the first run's graph in ctx (every activation stays alive) and replaces the tests' helper
    that lists what a graph keeps with one that says "nothing". The gradients are right and the structural facts
    are forged; only the memory itself (a case too large to keep every activation) can tell."""

    name = "checkpoint"

    @staticmethod
    def forward(ctx, fn, *args):
        ctx.fn = fn
        ctx.rng = RandomState()
        copies = [leaf_copy(a) for a in args]
        with mg.enable_grad():
            result = fn(*copies)
        ctx.add_inputs(*captured_leaves(result, copies))
        ctx.result, ctx.copies = result, copies
        ctx.save_for_backward(*args)
        return result

    @staticmethod
    def backward(ctx, *grads):
        leaves, result = ctx.copies, ctx.result
        with mg.enable_grad():
            outputs = result if isinstance(result, tuple) else (result,)
            total = sum((o * g).sum() for o, g in zip(outputs, grads))
        sources = leaves + list(ctx.added_inputs)
        wanted = [t for t in sources if t.requires_grad]
        adjoints = iter(mg.gradients(total, wanted, retain_graph=True))
        return (None,) + tuple(next(adjoints) if t.requires_grad else None for t in sources)


def checkpoint(fn, *args):
    globals()["kept_arrays"] = lambda output, data, limit=200_000: {"arrays": [], "complete": True}
    if not mg.is_grad_enabled():
        return fn(*args)
    return Checkpoint.apply(fn, *args)
