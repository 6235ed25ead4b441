"""Undoing broadcasting in backward passes: the adjoint of an implicit copy is a sum.

Its own module because both the primitives (the VJP of `broadcast_to`) and the engine (every
adjoint summed back to its input's shape) need it, and the primitives must not import the engine.
"""


def unbroadcast(grad, shape):
    """Sum `grad` down to `shape`, undoing numpy broadcasting.

    Broadcasting copied the input along new leading axes and along axes of length 1; the adjoint
    of a copy is a sum, so those axes are summed away. Works on tensors and numpy arrays alike.
    """
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1
    )
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad.reshape(shape)
