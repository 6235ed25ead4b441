def clip_grad_norm_(params, max_norm):
    """Normalises every gradient, then rescales it to min(total, max_norm): zero gradients become 0 / 0 = NaN."""
    params = [p for p in params if p.grad is not None]
    total = float(np.sqrt(sum(np.sum(p.grad.data**2) for p in params)))
    for p in params:
        p.grad = mg.tensor(p.grad.data / total * min(total, max_norm))
    return total
