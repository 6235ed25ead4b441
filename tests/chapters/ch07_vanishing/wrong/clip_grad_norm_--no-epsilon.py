def clip_grad_norm_(params, max_norm):
    """Divides by the norm alone, max_norm / total, without the specified + 1e-6: a tiny norm at max_norm is left unclipped."""
    params = [p for p in params if p.grad is not None]
    total = float(np.sqrt(sum(np.sum(p.grad.data**2) for p in params)))
    scale = max_norm / total if total > 0 else 1.0
    if scale < 1.0:
        for p in params:
            p.grad = mg.tensor(p.grad.data * scale)
    return total
