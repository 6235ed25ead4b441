class Checkpoint(mg.Function):
    """Runs fn on the arguments themselves (not leaf copies), then frees that first run's graph by setting
    every node's inputs to None: which also cuts the arguments' own history, so nothing before the
    checkpoint gets a gradient."""

    name = "checkpoint"

    @staticmethod
    def forward(ctx, fn, *args):
        ctx.fn = fn
        ctx.rng = RandomState()
        with mg.enable_grad():
            result = fn(*args)
        ctx.add_inputs(*captured_leaves(result, args))
        for tensor in mg.topological_sort(result if isinstance(result, Tensor) else result[0]):  # drop the activations
            if tensor.node is not None:
                tensor.node.inputs = None
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
    if not mg.is_grad_enabled():
        return fn(*args)
    return Checkpoint.apply(fn, *args)
