def euler_solve(f, y0, t0, t1, n_steps):
    """Evaluates the slope at t0 + (k + 1) h, the end of the step, with the state from its start."""
    h = (t1 - t0) / n_steps
    y = y0 if isinstance(y0, Tensor) else Tensor(y0)
    states = [y]
    for k in range(1, n_steps + 1):
        y = y + h * f(t0 + k * h, y)
        states.append(y)
    return mg.stack(states)
