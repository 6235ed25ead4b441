def matmul_vjp(g, out, x, y):
    """No transposes at all: shapes fit only for square matrices, and the values are still wrong."""
    return (g @ y, x @ g)
