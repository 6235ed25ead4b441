def hvp(f, x, v):
    """Central differences of the gradient along v, made by shifting the caller's own array in place, and
    never shifted back: x is left moved by -h v (the values themselves are right to ~1e-10)."""
    data = x.data if isinstance(x, Tensor) else x  # the caller's array, not a copy
    v = v.data if isinstance(v, Tensor) else np.asarray(v)
    h = 1e-5
    data += h * v
    up = mg.grad(f)(Tensor(data.copy()))
    data -= 2 * h * v
    down = mg.grad(f)(Tensor(data.copy()))
    return Tensor((up.data - down.data) / (2 * h))
