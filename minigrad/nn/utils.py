"""Gradient utilities for training loops: clipping by global norm and by value.

Both replace each parameter's `.grad` with a new tensor instead of editing its array in place: a
gradient computed with `create_graph=True` is part of a graph, and other values may depend on it.
"""

import numpy as np

from ..tensor import Tensor


def _with_grads(params, name):
    if not isinstance(params, Tensor):
        from ..optim import parameter_list

        params = parameter_list(params, name)
    params = [params] if isinstance(params, Tensor) else params
    return [p for p in params if p.grad is not None]


def clip_grad_norm_(params, max_norm, norm_type=2.0):
    """Scale all gradients together so that their global norm is at most `max_norm`.

    The norm is taken over every gradient as if they were one long vector (`norm_type` 2 by
    default; `float("inf")` for the largest absolute entry), so clipping changes the step's length
    but not its direction (Pascanu, Mikolov & Bengio 2013). Returns that total norm as it was
    before clipping, like PyTorch, so a training loop can log it.
    """
    params = _with_grads(params, "clip_grad_norm_")
    if not params:
        return 0.0
    norms = [np.linalg.norm(p.grad.data.ravel(), ord=norm_type) for p in params]
    total = float(np.linalg.norm(np.asarray(norms), ord=norm_type))
    scale = max_norm / (total + 1e-6)
    if scale < 1.0:
        for p in params:
            p.grad = Tensor._result(p.grad.data * scale, None)
    return total


def clip_grad_value_(params, clip_value):
    """Clamp every gradient entry to [-clip_value, clip_value] (this changes the step's direction)."""
    for p in _with_grads(params, "clip_grad_value_"):
        p.grad = Tensor._result(np.clip(p.grad.data, -clip_value, clip_value), None)
