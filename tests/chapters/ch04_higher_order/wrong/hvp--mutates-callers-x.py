def hvp(f, x, v):
    """Differentiates the caller's own x (marking it as requiring grad) with backward(): leaves a .grad behind."""
    x.requires_grad_()
    v = v if isinstance(v, Tensor) else Tensor(v)
    (gradient,) = mg.gradients(f(x), [x], create_graph=True)
    x.grad = None
    (gradient * v).sum().backward()
    return x.grad
