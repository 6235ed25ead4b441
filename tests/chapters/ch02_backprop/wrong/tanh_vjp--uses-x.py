def tanh_vjp(g, out, x):
    """1 - x**2 instead of 1 - tanh(x)**2: the input where the output belongs."""
    return (g * (1.0 - x * x),)
