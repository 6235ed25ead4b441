def clip_grad_norm_(params, max_norm):
    """Clamps each entry to [-max_norm, max_norm]: clip_grad_value_, not clip_grad_norm_."""
    params = [p for p in params if p.grad is not None]
    total = float(np.sqrt(sum(np.sum(p.grad.data**2) for p in params)))
    for p in params:
        p.grad = mg.tensor(np.clip(p.grad.data, -max_norm, max_norm))
    return total
