def hvp(f, x, v):
    """Uses backward() twice: the second pass accumulates H v on top of the gradient already in x.grad."""
    x = Tensor(x.data if isinstance(x, Tensor) else x, requires_grad=True)
    v = v if isinstance(v, Tensor) else Tensor(v)
    f(x).backward(create_graph=True)
    (x.grad * v).sum().backward()
    return x.grad.detach()
