def sum_vjp(g, out, x, axis, keepdims):
    """Broadcasts g to x's shape without first restoring the summed axes (wrong alignment unless keepdims)."""
    return (g.broadcast_to(x.shape),)
