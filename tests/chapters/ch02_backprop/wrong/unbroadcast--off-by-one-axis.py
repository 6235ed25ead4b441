def unbroadcast(grad, shape):
    """Finds the length-1 axes of `shape` but forgets to shift them by the number of leading axes."""
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if axes:
        grad = grad.sum(axis=tuple(sorted(set(axes))), keepdims=True)
    return grad.reshape(shape)
