class Checkpoint(mg.Function):
    """Recomputes without restoring the random state: dropout draws a different mask in backward."""

    name = "checkpoint"

    @staticmethod
    def forward(ctx, fn, *args):
        ctx.fn = fn
        copies = [leaf_copy(a) for a in args]
        with mg.enable_grad():
            result = fn(*copies)
        ctx.add_inputs(*captured_leaves(result, copies))
        ctx.save_for_backward(*args)
        return result

    @staticmethod
    def backward(ctx, *grads):
        leaves = [leaf_copy(a) for a in ctx.saved_tensors]
        with mg.enable_grad():
            result = ctx.fn(*leaves)
            outputs = result if isinstance(result, tuple) else (result,)
            total = sum((o * g).sum() for o, g in zip(outputs, grads))
        sources = leaves + list(ctx.added_inputs)
        wanted = [t for t in sources if t.requires_grad]
        adjoints = iter(mg.gradients(total, wanted))
        return (None,) + tuple(next(adjoints) if t.requires_grad else None for t in sources)


def checkpoint(fn, *args):
    if not mg.is_grad_enabled():
        return fn(*args)
    return Checkpoint.apply(fn, *args)
