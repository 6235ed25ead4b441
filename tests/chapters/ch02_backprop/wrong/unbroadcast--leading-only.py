def unbroadcast(grad, shape):
    """Sums away the leading axes only; stretched axes of length 1 are left as they are."""
    extra = grad.ndim - len(shape)
    if extra:
        grad = grad.sum(axis=tuple(range(extra)))
    return grad
