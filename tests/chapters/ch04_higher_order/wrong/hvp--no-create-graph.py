def hvp(f, x, v):
    """Computes the first gradient without create_graph: it is a constant, so the second pass has nothing to differentiate."""
    x = Tensor(x.data if isinstance(x, Tensor) else x, requires_grad=True)
    v = v if isinstance(v, Tensor) else Tensor(v)
    (gradient,) = mg.gradients(f(x), [x])
    (product,) = mg.gradients((gradient * v).sum(), [x])
    return product
