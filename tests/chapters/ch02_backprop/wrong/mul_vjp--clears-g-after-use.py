def mul_vjp(g, out, x, y):
    """Right adjoints, then frees g's memory by zeroing it in place: the engine may have handed the same adjoint
    to another rule (add passes g to both of its inputs), which then sees zeros."""
    adjoints = (g * y, g * x)
    g.data[...] = 0.0
    return adjoints
