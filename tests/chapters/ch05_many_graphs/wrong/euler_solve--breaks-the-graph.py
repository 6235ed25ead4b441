def euler_solve(f, y0, t0, t1, n_steps):
    """Updates the numpy arrays: the values are right, but no gradient can flow through the steps."""
    h = (t1 - t0) / n_steps
    y = y0 if isinstance(y0, Tensor) else Tensor(y0)
    states = [y]
    for k in range(n_steps):
        y = Tensor(y.data + h * f(t0 + k * h, y).data)
        states.append(y)
    return mg.stack(states)
