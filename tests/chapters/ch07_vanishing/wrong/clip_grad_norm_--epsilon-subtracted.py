def clip_grad_norm_(params, max_norm):
    """The guard with the wrong sign, max_norm / (total - 1e-6): a norm below 1e-6 gives a negative factor."""
    params = [p for p in params if p.grad is not None]
    total = float(np.sqrt(sum(np.sum(p.grad.data**2) for p in params)))
    scale = max_norm / (total - 1e-6)
    if scale < 1.0:
        for p in params:
            p.grad = mg.tensor(p.grad.data * scale)
    return total
