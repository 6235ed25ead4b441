def euler_solve(f, y0, t0, t1, n_steps):
    """Divides the interval by the number of states instead of the number of steps."""
    h = (t1 - t0) / (n_steps + 1)
    y = y0 if isinstance(y0, Tensor) else Tensor(y0)
    states = [y]
    for k in range(n_steps):
        y = y + h * f(t0 + k * h, y)
        states.append(y)
    return mg.stack(states)
