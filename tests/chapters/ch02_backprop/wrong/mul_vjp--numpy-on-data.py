def mul_vjp(g, out, x, y):
    """Right values, computed with numpy on .data: the adjoints are cut from any graph (no chapter 4)."""
    return (Tensor(g.data * y.data), Tensor(g.data * x.data))
