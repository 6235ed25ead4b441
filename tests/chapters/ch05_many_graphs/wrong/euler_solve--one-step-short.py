def euler_solve(f, y0, t0, t1, n_steps):
    """Off by one: counts y0 as a step, so it takes n_steps - 1 steps and stops short of t1."""
    h = (t1 - t0) / n_steps
    y = y0 if isinstance(y0, Tensor) else Tensor(y0)
    states = [y]
    for k in range(n_steps - 1):
        y = y + h * f(t0 + k * h, y)
        states.append(y)
    return mg.stack(states)
