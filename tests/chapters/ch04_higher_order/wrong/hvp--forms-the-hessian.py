def hvp(f, x, v):
    """Right values, wrong cost: forms the whole Hessian (one pass per coordinate), then multiplies."""
    x = Tensor(x.data if isinstance(x, Tensor) else x)
    v = v.data if isinstance(v, Tensor) else v
    return Tensor(mg.hessian(f, x).data @ v)
