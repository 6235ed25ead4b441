def clip_grad_norm_(params, max_norm):
    """Clips each tensor to max_norm on its own: changes the direction of the step."""
    params = [p for p in params if p.grad is not None]
    total = float(np.sqrt(sum(np.sum(p.grad.data**2) for p in params)))
    for p in params:
        norm = np.linalg.norm(p.grad.data)
        if norm > max_norm:
            p.grad = mg.tensor(p.grad.data * (max_norm / (norm + 1e-6)))
    return total
