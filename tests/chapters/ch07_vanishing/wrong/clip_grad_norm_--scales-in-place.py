def clip_grad_norm_(params, max_norm):
    """Scales each .grad's array in place instead of making new tensors: two parameters whose gradients share
    one array (x and y in x + y) are scaled twice."""
    params = [p for p in params if p.grad is not None]
    total = float(np.sqrt(sum(np.sum(p.grad.data**2) for p in params)))
    scale = max_norm / (total + 1e-6)
    if scale < 1.0:
        for p in params:
            p.grad.data *= scale
    return total
