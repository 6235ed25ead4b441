def unbroadcast(grad, shape):
    """Sums the right axes with keepdims=True but never reshapes: the leading axes stay, as length 1."""
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1
    )
    return grad.sum(axis=axes, keepdims=True) if axes else grad
