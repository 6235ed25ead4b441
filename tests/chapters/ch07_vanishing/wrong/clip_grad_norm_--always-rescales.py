def clip_grad_norm_(params, max_norm):
    """Rescales to max_norm even when the norm is below it, blowing small gradients up."""
    params = [p for p in params if p.grad is not None]
    total = float(np.sqrt(sum(np.sum(p.grad.data**2) for p in params)))
    for p in params:
        p.grad = mg.tensor(p.grad.data * (max_norm / (total + 1e-6)))
    return total
