def euler_solve(f, y0, t0, t1, n_steps):
    """Integrate dy/dt = f(t, y) from t0 to t1 with n_steps explicit Euler steps, differentiably.

    h = (t1 - t0) / n_steps and y_{k+1} = y_k + h f(t0 + k h, y_k) for k = 0, ..., n_steps - 1.
    Returns a Tensor of shape (n_steps + 1, *y0.shape): y_0 = y0, y_1, ..., y_{n_steps}.
    Gradients flow to y0 and to every tensor f uses.
    """
    h = (t1 - t0) / n_steps
    y = y0 if isinstance(y0, Tensor) else Tensor(y0)
    states = [y]
    for k in range(n_steps):
        y.data += h * f(t0 + k * h, y).data  # one state (the caller's y0), updated in place
        states.append(y)
    return mg.stack(states)
