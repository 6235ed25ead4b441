def hvp(f, x, v):
    """Forms gᵀv with @: right for vectors, but a scalar x or a matrix X makes it fail (or not a scalar)."""
    x = Tensor(x.data if isinstance(x, Tensor) else x, requires_grad=True)
    v = v if isinstance(v, Tensor) else Tensor(v)
    (gradient,) = mg.gradients(f(x), [x], create_graph=True)
    if not gradient.requires_grad:
        return Tensor(np.zeros_like(x.data))
    (product,) = mg.gradients(gradient @ v, [x])
    return product
