class Checkpoint(mg.Function):
    """The node's inputs are the arguments only (no ctx.add_inputs): weights fn closes over never get gradients."""

    name = "checkpoint"

    @staticmethod
    def forward(ctx, fn, *args):
        ctx.fn = fn
        ctx.rng = RandomState()
        with mg.enable_grad():
            result = fn(*[leaf_copy(a) for a in args])
        ctx.save_for_backward(*args)
        return result

    @staticmethod
    def backward(ctx, *grads):
        leaves = [leaf_copy(a) for a in ctx.saved_tensors]
        with mg.enable_grad(), replaying(ctx.rng):
            result = ctx.fn(*leaves)
            outputs = result if isinstance(result, tuple) else (result,)
            total = sum((o * g).sum() for o, g in zip(outputs, grads))
        wanted = [t for t in leaves if t.requires_grad]
        adjoints = iter(mg.gradients(total, wanted))
        return (None,) + tuple(next(adjoints) if t.requires_grad else None for t in leaves)


def checkpoint(fn, *args):
    if not mg.is_grad_enabled():
        return fn(*args)
    return Checkpoint.apply(fn, *args)
