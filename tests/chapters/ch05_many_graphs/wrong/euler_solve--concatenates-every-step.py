def euler_solve(f, y0, t0, t1, n_steps):
    """Grows the trajectory by concatenation at every step: right values, but n²/2 rows copied."""
    h = (t1 - t0) / n_steps
    y = y0 if isinstance(y0, Tensor) else Tensor(y0)
    trajectory = y.reshape(1, *y.shape)
    for k in range(n_steps):
        y = y + h * f(t0 + k * h, y)
        trajectory = mg.concatenate([trajectory, y.reshape(1, *y.shape)])
    return trajectory
