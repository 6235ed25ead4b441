def euler_solve(f, y0, t0, t1, n_steps):
    """Returns only y(t1) instead of the whole trajectory."""
    h = (t1 - t0) / n_steps
    y = y0 if isinstance(y0, Tensor) else Tensor(y0)
    for k in range(n_steps):
        y = y + h * f(t0 + k * h, y)
    return y
