"""Optimisers: update parameters from their `.grad`, outside any graph."""

import numpy as np

from ..nn.module import clear_grads
from ..tensor import Tensor, versions


def parameter_list(params, name):
    """`params` as a list of Tensors, or a TypeError saying what was passed instead and what to pass."""
    from ..nn.module import Module

    if isinstance(params, Module):
        raise TypeError(f"{name}: got the module {type(params).__name__} itself; pass its parameters: model.parameters()")
    if callable(params) and getattr(params, "__name__", None) == "parameters":
        raise TypeError(f"{name}: got the method model.parameters itself; call it: model.parameters()")
    if isinstance(params, Tensor):
        raise TypeError(f"{name}: got one Tensor (shape {params.shape}); pass a list of tensors: [t]")
    if isinstance(params, np.ndarray):
        raise TypeError(
            f"{name}: got a numpy array (shape {params.shape}); optimizers update Tensors that require grad, "
            f"e.g. [mg.tensor(a, requires_grad=True)] or model.parameters()"
        )
    try:
        params = list(params)
    except TypeError:
        raise TypeError(f"{name}: expected an iterable of Tensors (model.parameters()), got {type(params).__name__}") from None
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            shape = f", shape {np.shape(p)}" if isinstance(p, np.ndarray) else ""
            raise TypeError(
                f"{name}: parameter {i} is a {type(p).__name__}{shape}, not a Tensor; pass Tensors that "
                f"require grad (mg.tensor(a, requires_grad=True), model.parameters())"
            )
    return params


class Optimizer:
    """Holds the parameters; `zero_grad()` forgets gradients, `step()` updates the data in place.

    A step is an in-place change (`minigrad.tensor.versions`): backpropagating afterwards through a
    graph recorded before it raises, as in PyTorch, instead of using the updated weights.
    """

    def __init__(self, params, lr):
        self.params = parameter_list(params, type(self).__name__)
        if not self.params:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        if isinstance(lr, bool) or not isinstance(lr, (int, float, np.integer, np.floating)):
            raise TypeError(f"{type(self).__name__}: the learning rate must be a number, got {type(lr).__name__}")
        if lr <= 0:
            raise ValueError(f"{type(self).__name__}: learning rate must be positive, got {lr}")
        self.lr = lr

    def zero_grad(self, set_to_none=True):
        """Forget the parameters' gradients (see `minigrad.nn.module.clear_grads`)."""
        clear_grads(self.params, set_to_none)

    def state_dict(self):
        """The optimizer's hyperparameters and per-parameter state (moments, step counts) as plain
        numbers and arrays, for `minigrad.save` beside the model's: per-parameter entries are dicts
        keyed by the parameter's position ("0", "1", ...), as in PyTorch."""
        state = {}
        for name, value in vars(self).items():
            if name == "params":
                continue
            if isinstance(value, list) and len(value) == len(self.params):
                entries = {str(i): np.array(v) for i, v in enumerate(value) if v is not None}
                if entries:
                    state[name] = entries
            elif isinstance(value, (bool, int, float, np.number)):
                state[name] = value
        return state

    def load_state_dict(self, state):
        """Restore what `state_dict` returned (possibly through `minigrad.save`/`minigrad.load`)."""
        if not hasattr(state, "items"):
            raise TypeError(f"{type(self).__name__}.load_state_dict: expected a dict from state_dict(), got {type(state).__name__}")
        known = {name for name, value in vars(self).items() if name != "params"}
        unknown = sorted(set(state) - known)
        if unknown:
            raise KeyError(f"{type(self).__name__}.load_state_dict: unknown entries {unknown}; this optimizer keeps {sorted(known)}")
        for name, current in list(vars(self).items()):
            if name == "params":
                continue
            if isinstance(current, list) and len(current) == len(self.params):
                entries = state.get(name, {})
                values = []
                for i, p in enumerate(self.params):
                    if str(i) not in entries:
                        values.append(None if current[i] is None else np.zeros_like(current[i]) if isinstance(current[i], np.ndarray) else 0)
                        continue
                    value = np.asarray(entries[str(i)])
                    if value.ndim == 0 and not isinstance(current[i], np.ndarray):
                        values.append(value.item())  # a step count
                    elif value.shape != p.shape:
                        raise ValueError(f"{type(self).__name__}.load_state_dict: {name}[{i}] has shape {value.shape}, parameter {i} has {p.shape}")
                    else:
                        values.append(value.astype(p.dtype))
                setattr(self, name, values)
            elif name in state:
                value = state[name]
                setattr(self, name, value.item() if isinstance(value, np.ndarray) else value)

    def _with_grads(self):
        """Parameters that take part in training now: frozen or unused ones are skipped."""
        return [(i, p) for i, p in enumerate(self.params) if p.requires_grad and p.grad is not None]


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum and weight decay."""

    def __init__(self, params, lr=0.01, momentum=0.0, weight_decay=0.0):
        super().__init__(params, lr)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.velocity = [None] * len(self.params)

    def step(self):
        for i, p in self._with_grads():
            g = p.grad.data + self.weight_decay * p.data if self.weight_decay else p.grad.data
            if self.momentum:
                v = g if self.velocity[i] is None else self.momentum * self.velocity[i] + g
                self.velocity[i] = v
                g = v
            p.data -= self.lr * g
            versions.bump(p)  # a graph recorded before the step must not backpropagate with the new values


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015): per-parameter steps scaled by running moments of the gradient.
    With `amsgrad=True` (Reddi, Kale & Kumar 2018) a step divides by the largest second moment seen
    so far, so that the effective step size never grows."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False):
        super().__init__(params, lr)
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.weight_decay = weight_decay
        self.m = [np.zeros_like(p.data) for p in self.params]
        self.v = [np.zeros_like(p.data) for p in self.params]
        self.v_max = [np.zeros_like(p.data) if amsgrad else None for p in self.params]
        self.steps = [0] * len(self.params)

    def step(self):
        for i, p in self._with_grads():
            g = p.grad.data + self.weight_decay * p.data if self.weight_decay else p.grad.data
            self.steps[i] += 1
            self.m[i] = self.beta1 * self.m[i] + (1 - self.beta1) * g
            self.v[i] = self.beta2 * self.v[i] + (1 - self.beta2) * g * g
            if self.v_max[i] is not None:
                np.maximum(self.v_max[i], self.v[i], out=self.v_max[i])
            m_hat = self.m[i] / (1 - self.beta1 ** self.steps[i])
            v_hat = (self.v[i] if self.v_max[i] is None else self.v_max[i]) / (1 - self.beta2 ** self.steps[i])
            p.data -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
            versions.bump(p)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter 2019), as PyTorch's `AdamW`: each step
    first shrinks the weights, p ← p − lr·weight_decay·p, then takes Adam's step on the bare gradient."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False):
        super().__init__(params, lr, betas, eps, weight_decay=0.0, amsgrad=amsgrad)
        self.decoupled_weight_decay = weight_decay

    def step(self):
        if self.decoupled_weight_decay:
            for _, p in self._with_grads():
                p.data *= 1.0 - self.lr * self.decoupled_weight_decay
        super().step()


class RMSprop(Optimizer):
    """RMSprop (Tieleman & Hinton 2012), PyTorch's variant: steps divided by √(running mean of g²) + eps;
    `centered=True` divides by the running variance instead, `momentum` accumulates the scaled steps."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False):
        super().__init__(params, lr)
        self.alpha, self.eps, self.weight_decay, self.momentum, self.centered = alpha, eps, weight_decay, momentum, centered
        self.square_avg = [np.zeros_like(p.data) for p in self.params]
        self.grad_avg = [np.zeros_like(p.data) for p in self.params]
        self.buffer = [np.zeros_like(p.data) for p in self.params]

    def step(self):
        for i, p in self._with_grads():
            g = p.grad.data + self.weight_decay * p.data if self.weight_decay else p.grad.data
            self.square_avg[i] = self.alpha * self.square_avg[i] + (1 - self.alpha) * g * g
            if self.centered:
                self.grad_avg[i] = self.alpha * self.grad_avg[i] + (1 - self.alpha) * g
                avg = np.sqrt(self.square_avg[i] - self.grad_avg[i] ** 2) + self.eps
            else:
                avg = np.sqrt(self.square_avg[i]) + self.eps
            if self.momentum:
                self.buffer[i] = self.momentum * self.buffer[i] + g / avg
                p.data -= self.lr * self.buffer[i]
            else:
                p.data -= self.lr * g / avg
            versions.bump(p)


from . import lr_scheduler  # noqa: E402  (it needs Optimizer defined)
