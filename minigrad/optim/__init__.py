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
    graph recorded before it raises, as in PyTorch, instead of using the updated weights. Subclasses
    give `_update(i, g)`, the amount to subtract from parameter i given its gradient g; `step()`
    prepares g the same way for all of them (`maximize`, `weight_decay`).
    """

    decoupled_weight_decay = False  # an option of the Adam family (AdamW's default); the others add the decay to g

    def __init__(self, params, lr, weight_decay=0.0, maximize=False):
        self.params = parameter_list(params, type(self).__name__)
        if not self.params:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        if isinstance(lr, bool) or not isinstance(lr, (int, float, np.integer, np.floating)):
            raise TypeError(f"{type(self).__name__}: the learning rate must be a number, got {type(lr).__name__}")
        if lr <= 0:
            raise ValueError(f"{type(self).__name__}: learning rate must be positive, got {lr}")
        self.lr = lr
        self.initial_lr = None  # the lr a schedule starts from, set by the first scheduler (PyTorch's group["initial_lr"])
        self.weight_decay = self._checked("weight_decay", weight_decay)
        self.maximize = bool(maximize)

    def _checked(self, name, value, low=0.0, below=None):
        """`value` if it is a number ≥ `low` (no bound if None) and < `below` (if given), else an error
        naming the optimizer and the value: a bad hyperparameter fails here, not as NaNs steps later."""
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{type(self).__name__}: {name} must be a number, got {type(value).__name__} {value!r}")
        if (low is not None and value < low) or (below is not None and value >= below):
            bounds = f"in [{low}, {below})" if below is not None else f">= {low}"
            raise ValueError(f"{type(self).__name__}: {name} must be {bounds}, got {value}")
        return value

    def _betas(self, betas):
        """The pair (beta1, beta2), each in [0, 1): the decay rates of the running moments."""
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise TypeError(f"{type(self).__name__}: betas must be a pair (beta1, beta2), got {betas!r}")
        return tuple(self._checked(f"betas[{k}]", beta, below=1.0) for k, beta in enumerate(betas))

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

    def step(self):
        """Update every parameter that takes part in training now (frozen or unused ones are skipped),
        as PyTorch's optimizers do: g is the gradient, negated with `maximize` (gradient ascent), plus
        weight_decay·p (L2 regularisation), or with `decoupled_weight_decay` the weights shrink by
        lr·weight_decay·p instead, outside the adaptive scaling (Loshchilov & Hutter 2019)."""
        for i, p in enumerate(self.params):
            if not p.requires_grad or p.grad is None:
                continue
            g = -p.grad.data if self.maximize else p.grad.data
            if self.weight_decay and self.decoupled_weight_decay:
                p.data *= 1.0 - self.lr * self.weight_decay
            elif self.weight_decay:
                g = g + self.weight_decay * p.data
            p.data -= self._update(i, g)
            versions.bump(p)  # a graph recorded before the step must not backpropagate with the new values

    def _update(self, i, g):
        raise NotImplementedError


class SGD(Optimizer):
    """Stochastic gradient descent. With `momentum` it steps along a velocity
    v ← momentum·v + (1 − dampening)·g (v = g on the first step), as PyTorch does; `nesterov=True`
    (Sutskever et al. 2013) steps along g + momentum·v, looking one velocity step ahead."""

    def __init__(self, params, lr=0.01, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, *, maximize=False):
        super().__init__(params, lr, weight_decay, maximize)
        self.momentum = self._checked("momentum", momentum)
        self.dampening = self._checked("dampening", dampening, low=None)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(f"SGD: nesterov=True needs momentum > 0 and dampening = 0, got momentum={momentum}, dampening={dampening}")
        self.nesterov = bool(nesterov)
        self.velocity = [None] * len(self.params)

    def _update(self, i, g):
        if self.momentum:
            v = self.velocity[i]
            v = g.copy() if v is None else self.momentum * v + (1 - self.dampening) * g  # a copy: zero_grad(False) zeroes g in place
            self.velocity[i] = v
            g = g + self.momentum * v if self.nesterov else v
        return self.lr * g


class _Moments(Optimizer):
    """The Adam family's common state: betas, eps, step counts, the running mean m of g and the
    running second moment v (`_second_moment` says how v follows g)."""

    def __init__(self, params, lr, betas, eps, weight_decay, maximize, decoupled_weight_decay=False):
        super().__init__(params, lr, weight_decay, maximize)
        self.beta1, self.beta2 = self._betas(betas)
        self.eps = self._checked("eps", eps)
        if decoupled_weight_decay:
            self.decoupled_weight_decay = True
        self.m = [np.zeros_like(p.data) for p in self.params]
        self.v = [np.zeros_like(p.data) for p in self.params]
        self.steps = [0] * len(self.params)

    def _advance(self, i, g):
        """Count a step of parameter i and fold g into its moments; returns the step number t."""
        self.steps[i] += 1
        self.m[i] = self.beta1 * self.m[i] + (1 - self.beta1) * g
        self.v[i] = self._second_moment(self.v[i], g)
        return self.steps[i]

    def _second_moment(self, v, g):
        return self.beta2 * v + (1 - self.beta2) * g * g


class Adam(_Moments):
    """Adam (Kingma & Ba 2015): per-parameter steps scaled by running moments of the gradient.
    With `amsgrad=True` (Reddi, Kale & Kumar 2018) a step divides by the largest second moment seen
    so far, so that the effective step size never grows."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *, maximize=False, decoupled_weight_decay=False):
        super().__init__(params, lr, betas, eps, weight_decay, maximize, decoupled_weight_decay)
        self.v_max = [np.zeros_like(p.data) if amsgrad else None for p in self.params]

    def _update(self, i, g):
        t = self._advance(i, g)
        if self.v_max[i] is not None:
            np.maximum(self.v_max[i], self.v[i], out=self.v_max[i])
        m_hat = self.m[i] / (1 - self.beta1**t)
        v_hat = (self.v[i] if self.v_max[i] is None else self.v_max[i]) / (1 - self.beta2**t)
        return self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter 2019), as PyTorch's `AdamW`: each step
    first shrinks the weights, p ← p − lr·weight_decay·p, then takes Adam's step on the bare gradient."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize, decoupled_weight_decay=True)


class Adamax(_Moments):
    """Adamax (Kingma & Ba 2015, section 7): Adam with the infinity norm, v ← max(beta2·v, |g| + eps),
    in place of the root mean square; v needs no bias correction, so steps stay bounded by lr."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, maximize)

    def _second_moment(self, v, g):
        return np.maximum(self.beta2 * v, np.abs(g) + self.eps)

    def _update(self, i, g):
        t = self._advance(i, g)
        return self.lr / (1 - self.beta1**t) * (self.m[i] / self.v[i])


class NAdam(_Moments):
    """NAdam (Dozat 2016): Adam with Nesterov momentum, PyTorch's variant, whose momentum coefficient
    mu_t = beta1·(1 − 0.96^(t·momentum_decay)/2) warms up over the first steps."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, momentum_decay=4e-3, *, decoupled_weight_decay=False, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, maximize, decoupled_weight_decay)
        self.momentum_decay = self._checked("momentum_decay", momentum_decay)
        self.mu_product = [1.0] * len(self.params)  # mu_1·…·mu_t, the bias correction of the momentum

    def _update(self, i, g):
        t = self._advance(i, g)
        mu = self.beta1 * (1.0 - 0.5 * 0.96 ** (t * self.momentum_decay))
        mu_next = self.beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * self.momentum_decay))
        self.mu_product[i] *= mu
        denom = np.sqrt(self.v[i] / (1 - self.beta2**t)) + self.eps
        return (self.lr * (1.0 - mu) / (1.0 - self.mu_product[i])) * (g / denom) + (
            self.lr * mu_next / (1.0 - self.mu_product[i] * mu_next)
        ) * (self.m[i] / denom)


class RAdam(_Moments):
    """RAdam (Liu et al. 2020): Adam whose adaptive step is rectified by how reliable the second
    moment is; while its effective sample size rho_t is at most 5 (the first few steps) it takes
    plain momentum steps instead, a warm-up that needs no tuning."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *, decoupled_weight_decay=False, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, maximize, decoupled_weight_decay)

    def _update(self, i, g):
        t = self._advance(i, g)
        m_hat = self.m[i] / (1 - self.beta1**t)
        bias_correction2 = 1 - self.beta2**t
        rho_inf = 2 / (1 - self.beta2) - 1
        rho_t = rho_inf - 2 * t * self.beta2**t / bias_correction2
        if rho_t <= 5.0:
            return m_hat * self.lr
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        return m_hat * self.lr * (bias_correction2**0.5 / (np.sqrt(self.v[i]) + self.eps)) * rect


class Adagrad(Optimizer):
    """Adagrad (Duchi, Hazan & Singer 2011): steps divided by √(sum of all past g²) + eps, so that
    often-updated coordinates slow down; the rate itself decays as lr / (1 + (t − 1)·lr_decay)."""

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10, *, maximize=False):
        super().__init__(params, lr, weight_decay, maximize)
        self.lr_decay = self._checked("lr_decay", lr_decay)
        self.eps = self._checked("eps", eps)
        initial = self._checked("initial_accumulator_value", initial_accumulator_value)
        self.sum_sq = [np.full_like(p.data, initial) for p in self.params]
        self.steps = [0] * len(self.params)

    def _update(self, i, g):
        self.steps[i] += 1
        self.sum_sq[i] = self.sum_sq[i] + g * g
        return self.lr / (1 + (self.steps[i] - 1) * self.lr_decay) * (g / (np.sqrt(self.sum_sq[i]) + self.eps))


class RMSprop(Optimizer):
    """RMSprop (Tieleman & Hinton 2012), PyTorch's variant: steps divided by √(running mean of g²) + eps;
    `centered=True` divides by the running variance instead, `momentum` accumulates the scaled steps."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False, *, maximize=False):
        super().__init__(params, lr, weight_decay, maximize)
        self.alpha, self.eps = self._checked("alpha", alpha), self._checked("eps", eps)
        self.momentum, self.centered = self._checked("momentum", momentum), centered
        self.square_avg = [np.zeros_like(p.data) for p in self.params]
        self.grad_avg = [np.zeros_like(p.data) for p in self.params]
        self.buffer = [np.zeros_like(p.data) for p in self.params]

    def _update(self, i, g):
        self.square_avg[i] = self.alpha * self.square_avg[i] + (1 - self.alpha) * g * g
        if self.centered:
            self.grad_avg[i] = self.alpha * self.grad_avg[i] + (1 - self.alpha) * g
            avg = np.sqrt(self.square_avg[i] - self.grad_avg[i] ** 2) + self.eps
        else:
            avg = np.sqrt(self.square_avg[i]) + self.eps
        if self.momentum:
            self.buffer[i] = self.momentum * self.buffer[i] + g / avg
            return self.lr * self.buffer[i]
        return self.lr * g / avg


from . import lr_scheduler  # noqa: E402  (it needs Optimizer defined)
