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


# --------------------------------------------------------------------------- PyTorch state dicts
def _owners(model):
    """(name, PyTorch's prefix, owning module, attribute, tensor) for every entry of
    `model.state_dict()`: its parameters and persistent buffers. The owner of a parameter held in a
    list or dict is that container. PyTorch's prefix is the name's path without the `layers` level
    inside a ModuleList or Sequential (`layers.0.weight` is PyTorch's `0.weight`; a model's own
    attribute called `layers` stays, as in `layers.0.self_attn...` of a TransformerEncoder)."""
    from .layers import ModuleList

    found = []
    for name, tensor in model._state().items():
        *path, attr = name.split(".")
        owner, kept = model, []
        for part in path:
            if not (isinstance(owner, ModuleList) and part == "layers"):
                kept.append(part)
            owner = owner[int(part)] if isinstance(owner, (list, tuple)) else owner[part] if isinstance(owner, dict) else getattr(owner, part)
        found.append((name, "".join(part + "." for part in kept), owner, attr, tensor))
    return found


def _to_torch(module, attr, array):
    """(torch name suffix, array in PyTorch's layout) pairs for one minigrad parameter."""
    from .conv import _Conv
    from .layers import Linear
    from .recurrent import GRUCell, LSTMCell, RNNCell, _Recurrent

    if isinstance(module, (Linear, LSTMCell, GRUCell, RNNCell, _Recurrent)) and attr.startswith("weight"):
        return [(attr, array.T)]
    if isinstance(module, _Conv) and not module.transposed and attr == "weight":
        return [(attr, array.swapaxes(0, 1))]
    if isinstance(module, RNNCell) and attr == "bias":  # PyTorch keeps two biases that add
        return [("bias_ih", array), ("bias_hh", np.zeros_like(array))]
    return [(attr, array)]


def _from_torch(module, attr, arrays):
    """The inverse of `_to_torch`: one minigrad array from PyTorch's piece(s)."""
    from .conv import _Conv
    from .layers import Linear
    from .recurrent import GRUCell, LSTMCell, RNNCell, _Recurrent

    if isinstance(module, RNNCell) and attr == "bias":
        return arrays[0] + arrays[1]
    if isinstance(module, (Linear, LSTMCell, GRUCell, RNNCell, _Recurrent)) and attr.startswith("weight"):
        return arrays[0].T
    if isinstance(module, _Conv) and not module.transposed and attr == "weight":
        return arrays[0].swapaxes(0, 1)
    return arrays[0]


def _numpy(value):
    if hasattr(value, "detach") and hasattr(value, "cpu") and not isinstance(value, Tensor):  # a torch.Tensor, without importing torch
        return value.detach().cpu().numpy()
    return value.data if isinstance(value, Tensor) else np.asarray(value)


def torch_state_dict(model):
    """The state of `model` (parameters and persistent buffers) under PyTorch's names and layouts, as numpy arrays: Linear,
    the recurrent layers' weights transposed to (out, in), Conv1d and Conv2d weights to (out, in / groups, *kernel), an
    RNNCell's one bias split into bias_ih and a zero bias_hh. Load into the PyTorch model with
    `torch_model.load_state_dict({k: torch.from_numpy(v) for k, v in torch_state_dict(model).items()})`.
    """
    state = {}
    for _, prefix, module, attr, tensor in _owners(model):
        for suffix, array in _to_torch(module, attr, tensor.data):
            state[prefix + suffix] = np.ascontiguousarray(array).copy()
    return state


def load_torch_state_dict(model, state, strict=True):
    """Load a PyTorch model's `state_dict()` (torch tensors or arrays) into the equivalent minigrad
    `model`: the inverse of `torch_state_dict` (layouts converted, RNNCell's two biases added, a
    Sequential's `layers.` level matched to PyTorch's bare indices). Names and shapes are checked
    by `model.load_state_dict` (`strict=` as there); returns its (missing_keys, unexpected_keys),
    in minigrad's names and PyTorch's respectively.
    """
    if not hasattr(state, "items"):
        raise TypeError(f"load_torch_state_dict: expected a PyTorch state dict (torch_model.state_dict()), got {type(state).__name__}")
    state = {k: _numpy(v) for k, v in state.items()}
    converted, used = {}, set()
    for name, prefix, module, attr, tensor in _owners(model):
        pieces = _to_torch(module, attr, tensor.data)
        if not all(prefix + suffix in state for suffix, _ in pieces):
            continue
        used.update(prefix + suffix for suffix, _ in pieces)
        arrays = [state[prefix + suffix] for suffix, _ in pieces]
        converted[name] = _from_torch(module, attr, arrays)
    unexpected = [k for k in state if k not in used]
    expected = torch_state_dict(model)
    absent = [k for k in expected if k not in state]
    if strict and (unexpected or absent):
        from .module import StateDictError

        problems = []
        if absent:
            problems.append(f"missing key(s) {', '.join(map(repr, absent))}")
        if unexpected:
            problems.append(f"unexpected key(s) {', '.join(map(repr, unexpected))}")
        raise StateDictError(
            f"load_torch_state_dict: the PyTorch state does not match {type(model).__name__}: {'; '.join(problems)}. "
            f"Its parameters in PyTorch's names are {', '.join(map(repr, expected))}; pass strict=False to load only "
            f"the names both have"
        )
    from .module import LoadResult

    missing, _ = model.load_state_dict(converted, strict=strict)
    return LoadResult(missing, unexpected)
