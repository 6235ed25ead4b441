class Checkpoint(mg.Function):
    """Treats a call whose arguments all are constants as needing no node: returns fn(*args) unchecked, so a
    layer's closed-over weights keep all its activations (and no 'checkpoint' node is recorded)."""

    name = "checkpoint"

    @staticmethod
    def forward(ctx, fn, *args):
        ctx.fn = fn
        ctx.rng = RandomState()
        copies = [leaf_copy(a) for a in args]
        with mg.enable_grad():
            result = fn(*copies)
        ctx.add_inputs(*captured_leaves(result, copies))
        ctx.save_for_backward(*args)
        return result

    @staticmethod
    def backward(ctx, *grads):
        leaves = [leaf_copy(a) for a in ctx.saved_tensors]
        with mg.enable_grad(), replaying(ctx.rng):
            result = ctx.fn(*leaves)
            outputs = result if isinstance(result, tuple) else (result,)
            total = sum((o * g).sum() for o, g in zip(outputs, grads))
        sources = leaves + list(ctx.added_inputs)
        wanted = [t for t in sources if t.requires_grad]
        adjoints = iter(mg.gradients(total, wanted))
        return (None,) + tuple(next(adjoints) if t.requires_grad else None for t in sources)


def checkpoint(fn, *args):
    if not mg.is_grad_enabled() or not any(a.requires_grad for a in args):
        return fn(*args)
    return Checkpoint.apply(fn, *args)
