def hvp(f, x, v):
    """Right wherever the Hessian has a graph, but a (piecewise) linear f gives a constant gradient, which
    mg.gradients refuses to differentiate: GraphError instead of H v = 0."""
    x = Tensor(x.data if isinstance(x, Tensor) else x, requires_grad=True)
    v = v if isinstance(v, Tensor) else Tensor(v)
    (gradient,) = mg.gradients(f(x), [x], create_graph=True)
    (product,) = mg.gradients((gradient * v).sum(), [x])
    return product
