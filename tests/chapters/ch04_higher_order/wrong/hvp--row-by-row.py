def hvp(f, x, v):
    """Right values, wrong cost: one more reverse pass per coordinate, each giving a row of H, dotted with v
    (n + 1 backward passes instead of two; memory stays O(n), so only time gives it away)."""
    x = Tensor(x.data if isinstance(x, Tensor) else x, requires_grad=True)
    v = v.data if isinstance(v, Tensor) else np.asarray(v)
    (gradient,) = mg.gradients(f(x), [x], create_graph=True)
    flat = gradient.reshape(-1)
    rows = [mg.gradients(flat[k], [x], retain_graph=True)[0].data.reshape(-1) for k in range(flat.shape[0])]
    return Tensor((np.stack(rows) @ v.reshape(-1)).reshape(x.shape))
