def mul_vjp(g, out, x, y):
    """Each input's adjoint multiplied by itself instead of by the other input."""
    return (g * x, g * y)
