"""Learning-rate schedules, as `torch.optim.lr_scheduler`: call `scheduler.step()` once per epoch,
after `optimizer.step()`; the scheduler sets `optimizer.lr`.

    optimizer = optim.SGD(model.parameters(), lr=0.1)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=100)
    for epoch in range(100):
        train_one_epoch(); scheduler.step()

`ReduceLROnPlateau` is stepped with the monitored quantity instead: `scheduler.step(val_loss)`.
"""

import math
from bisect import bisect_right


def _checked_optimizer(optimizer, name):
    if not hasattr(optimizer, "lr") or not hasattr(optimizer, "step"):
        raise TypeError(f"{name}: expected an optimizer (optim.SGD(...), optim.Adam(...)), got {type(optimizer).__name__}")
    return optimizer


def _positive_int(name, what, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: {what} must be a positive integer, got {value!r}")
    return value


class LRScheduler:
    """Base class: `lr_at(epoch)` gives the learning rate of an epoch from the optimizer's initial one.

    The initial rate is the optimizer's `initial_lr`, which the first scheduler sets to its `lr`
    (as PyTorch's `group["initial_lr"]`): schedulers built one after the other for `SequentialLR`
    all start from the rate the optimizer was given, not from what the previous one set.
    """

    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = _checked_optimizer(optimizer, type(self).__name__)
        if getattr(optimizer, "initial_lr", None) is None:
            optimizer.initial_lr = optimizer.lr
        self.base_lr = optimizer.initial_lr
        self.last_epoch = last_epoch
        self.step()

    def lr_at(self, epoch):
        raise NotImplementedError

    def get_last_lr(self):
        return [self.optimizer.lr]

    def step(self):
        self.last_epoch += 1
        self._apply()

    def _apply(self):
        """Set the optimizer's learning rate (and whatever else the schedule drives) for `last_epoch`."""
        self.optimizer.lr = self.lr_at(self.last_epoch)

    def state_dict(self):
        """The scheduler's numbers (epoch, hyperparameters, counters), which `minigrad.save` can keep
        beside the optimizer's state; functions such as LambdaLR's `lr_lambda` are not saved."""
        return {name: value for name, value in vars(self).items() if isinstance(value, (bool, int, float))}

    def load_state_dict(self, state):
        """Restore what `state_dict` returned (its numbers may come back as 0-d arrays from `minigrad.load`)."""
        if not hasattr(state, "items"):
            raise TypeError(f"{type(self).__name__}.load_state_dict: expected a dict from state_dict(), got {type(state).__name__}")
        unknown = sorted(set(state) - set(vars(self)))
        if unknown:
            raise KeyError(f"{type(self).__name__}.load_state_dict: unknown entries {unknown}; this scheduler keeps {sorted(self.state_dict())}")
        for name, value in state.items():
            setattr(self, name, value.item() if hasattr(value, "item") else value)
        self._apply()


class StepLR(LRScheduler):
    """lr · gamma^⌊epoch / step_size⌋: divide the rate by 1/gamma every `step_size` epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        if step_size < 1:
            raise ValueError(f"StepLR: step_size must be a positive number of epochs, got {step_size}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, epoch):
        return self.base_lr * self.gamma ** (epoch // self.step_size)


class MultiStepLR(LRScheduler):
    """lr · gamma^(number of milestones reached)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones, self.gamma = sorted(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, epoch):
        return self.base_lr * self.gamma ** sum(epoch >= m for m in self.milestones)


class ExponentialLR(LRScheduler):
    """lr · gamma^epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, epoch):
        return self.base_lr * self.gamma**epoch


class LambdaLR(LRScheduler):
    """lr · lr_lambda(epoch)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambda = lr_lambda
        super().__init__(optimizer, last_epoch)

    def lr_at(self, epoch):
        return self.base_lr * self.lr_lambda(epoch)


def _cosine(start, end, fraction):
    """From `start` (fraction 0) to `end` (fraction 1) along half a cosine."""
    return end + (start - end) * (1 + math.cos(math.pi * fraction)) / 2


def _linear(start, end, fraction):
    return (end - start) * fraction + start


class CosineAnnealingLR(LRScheduler):
    """eta_min + (lr − eta_min)(1 + cos(π · epoch / T_max)) / 2 (Loshchilov & Hutter 2017, without
    restarts): from lr down to eta_min in T_max epochs, back up over the next T_max, and so on."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        if T_max < 1:
            raise ValueError(f"CosineAnnealingLR: T_max must be a positive number of epochs, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def lr_at(self, epoch):
        return _cosine(self.base_lr, self.eta_min, epoch / self.T_max)


class ConstantLR(LRScheduler):
    """lr · factor for the first `total_iters` epochs, then lr: a fixed warm-up."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if not 0 <= factor <= 1:
            raise ValueError(f"ConstantLR: factor must be in [0, 1], got {factor}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def lr_at(self, epoch):
        return self.base_lr * (self.factor + (epoch >= self.total_iters) * (1 - self.factor))


class LinearLR(LRScheduler):
    """lr times a factor going linearly from `start_factor` to `end_factor` over `total_iters`
    epochs, then staying there: the usual linear warm-up (or a linear decay)."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = _positive_int("LinearLR", "total_iters", total_iters)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, epoch):
        progress = min(self.total_iters, epoch) / self.total_iters
        return self.base_lr * (self.start_factor + (self.end_factor - self.start_factor) * progress)


class PolynomialLR(LRScheduler):
    """lr · (1 − epoch / total_iters)^power, reaching 0 after `total_iters` epochs."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = _positive_int("PolynomialLR", "total_iters", total_iters)
        self.power = power
        super().__init__(optimizer, last_epoch)

    def lr_at(self, epoch):
        return self.base_lr * (1.0 - min(self.total_iters, epoch) / self.total_iters) ** self.power


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter 2017): cosine annealing from lr to eta_min over T_0 epochs, then a
    restart at lr, each period T_mult times longer than the one before. `step(epoch)` takes a
    fractional epoch (epoch + batch / batches) to anneal within epochs, as in PyTorch."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        self.T_0 = _positive_int("CosineAnnealingWarmRestarts", "T_0", T_0)
        self.T_mult = _positive_int("CosineAnnealingWarmRestarts", "T_mult", T_mult)
        if isinstance(eta_min, bool) or not isinstance(eta_min, (int, float)):
            raise TypeError(f"CosineAnnealingWarmRestarts: eta_min must be a number, got {type(eta_min).__name__}")
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def step(self, epoch=None):
        if epoch is None:
            return super().step()
        if epoch < 0:
            raise ValueError(f"CosineAnnealingWarmRestarts: epoch must be >= 0, got {epoch}")
        self.last_epoch = epoch
        self._apply()

    def lr_at(self, epoch):
        since_restart, period = epoch, self.T_0
        if self.T_mult == 1:  # the loop below would get there too, in epoch / T_0 turns
            since_restart %= period
        while since_restart >= period:
            since_restart, period = since_restart - period, period * self.T_mult
        return _cosine(self.base_lr, self.eta_min, since_restart / period)


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin 2019), stepped once per batch: the rate warms up from
    max_lr/div_factor to max_lr over the first pct_start of `total_steps`, then anneals to
    max_lr/(div_factor·final_div_factor); `three_phase=True` comes back to the start before that final
    annealing. With `cycle_momentum` the momentum (SGD, RMSprop) or Adam's beta1 moves the other way,
    between max_momentum and base_momentum, since a large rate wants less momentum.
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        _checked_optimizer(optimizer, "OneCycleLR")
        if total_steps is not None:
            self.total_steps = _positive_int("OneCycleLR", "total_steps", total_steps)
        elif epochs is not None and steps_per_epoch is not None:
            self.total_steps = _positive_int("OneCycleLR", "epochs", epochs) * _positive_int("OneCycleLR", "steps_per_epoch", steps_per_epoch)
        else:
            raise ValueError("OneCycleLR: give total_steps, or epochs and steps_per_epoch")
        if not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: pct_start must be in [0, 1], got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.anneal = _cosine if anneal_strategy == "cos" else _linear
        self.momentum_name = None
        if cycle_momentum:
            self.momentum_name = next((name for name in ("beta1", "momentum") if hasattr(optimizer, name)), None)
            if self.momentum_name is None:
                raise ValueError(
                    f"OneCycleLR: cycle_momentum=True needs an optimizer with momentum (SGD, RMSprop) or beta1 "
                    f"(Adam and its kin), got {type(optimizer).__name__}; pass cycle_momentum=False"
                )
        initial_lr = max_lr / div_factor
        optimizer.initial_lr = initial_lr
        min_lr, warm_up_end = initial_lr / final_div_factor, float(pct_start * self.total_steps) - 1
        # (last step of the phase, its start and end rates, its start and end momenta), as PyTorch's phases
        if three_phase:
            self.phases = [
                (warm_up_end, initial_lr, max_lr, max_momentum, base_momentum),
                (float(2 * pct_start * self.total_steps) - 2, max_lr, initial_lr, base_momentum, max_momentum),
                (self.total_steps - 1, initial_lr, min_lr, max_momentum, max_momentum),
            ]
        else:
            self.phases = [
                (warm_up_end, initial_lr, max_lr, max_momentum, base_momentum),
                (self.total_steps - 1, max_lr, min_lr, base_momentum, max_momentum),
            ]
        super().__init__(optimizer, last_epoch)

    def _phase(self, step):
        """The phase that `step` falls in, and how far into it (0 to 1)."""
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: stepped {step} times, more than total_steps={self.total_steps}")
        start = 0.0
        for phase in self.phases:
            if step <= phase[0] or phase is self.phases[-1]:
                return phase, (step - start) / (phase[0] - start)
            start = phase[0]

    def lr_at(self, epoch):
        (_, start_lr, end_lr, _, _), pct = self._phase(epoch)
        return self.anneal(start_lr, end_lr, pct)

    def _apply(self):
        super()._apply()
        if self.momentum_name:
            (*_, start_momentum, end_momentum), pct = self._phase(self.last_epoch)
            setattr(self.optimizer, self.momentum_name, self.anneal(start_momentum, end_momentum, pct))


class SequentialLR(LRScheduler):
    """Hands over from one schedule to the next at the milestones, each restarting from its epoch 0:
    `SequentialLR(opt, [LinearLR(opt, ...), CosineAnnealingLR(opt, ...)], milestones=[5])` warms up
    for 5 epochs, then anneals."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        self.optimizer = _checked_optimizer(optimizer, "SequentialLR")
        self.schedulers, self.milestones = list(schedulers), list(milestones)
        if not self.schedulers:
            raise ValueError("SequentialLR: expected at least one scheduler, got none")
        for k, scheduler in enumerate(self.schedulers):
            if isinstance(scheduler, ReduceLROnPlateau) or not isinstance(scheduler, LRScheduler):
                raise TypeError(f"SequentialLR: schedulers[{k}] is a {type(scheduler).__name__}, not a scheduler stepped by epoch")
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"SequentialLR: schedulers[{k}] ({type(scheduler).__name__}) belongs to another optimizer")
        if len(self.milestones) != len(self.schedulers) - 1:
            raise ValueError(
                f"SequentialLR: expected one milestone fewer than schedulers, got {len(self.schedulers)} schedulers "
                f"and milestones {self.milestones}"
            )
        # undo the first step each scheduler took when it was built, and start the first one again
        for scheduler in self.schedulers:
            scheduler.last_epoch -= 1
        self.last_epoch = last_epoch + 1
        self._active().step()

    def _active(self):
        return self.schedulers[bisect_right(self.milestones, self.last_epoch)]

    def step(self):
        self.last_epoch += 1
        scheduler = self._active()
        if self.last_epoch in self.milestones:
            scheduler.last_epoch = 0
            scheduler._apply()
        else:
            scheduler.step()

    def _apply(self):
        self._active()._apply()

    def state_dict(self):
        return {**super().state_dict(), "schedulers": {str(k): s.state_dict() for k, s in enumerate(self.schedulers)}}

    def load_state_dict(self, state):
        state = dict(state)
        for k, scheduler_state in state.pop("schedulers", {}).items():
            self.schedulers[int(k)].load_state_dict(scheduler_state)
        super().load_state_dict(state)


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the rate by `factor` once the monitored metric has not improved for more than
    `patience` steps (`step(metric)`, e.g. once per epoch with the validation loss), then waits
    `cooldown` steps before counting again; never below `min_lr`, and changes smaller than `eps`
    are skipped. Better means lower (`mode='min'`) or higher (`'max'`) than the best so far by more
    than `threshold`, relative to it (`threshold_mode='rel'`) or absolute (`'abs'`)."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0.0, eps=1e-8):
        self.optimizer = _checked_optimizer(optimizer, "ReduceLROnPlateau")
        if not 0 <= factor < 1:
            raise ValueError(f"ReduceLROnPlateau: factor must be in [0, 1) to reduce the rate, got {factor}")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        if isinstance(min_lr, bool) or not isinstance(min_lr, (int, float)):
            raise TypeError(f"ReduceLROnPlateau: min_lr must be a number (minigrad optimizers have one rate), got {type(min_lr).__name__}")
        self.mode, self.factor, self.patience, self.threshold, self.threshold_mode = mode, factor, patience, threshold, threshold_mode
        self.cooldown, self.min_lr, self.eps = cooldown, min_lr, eps
        self.last_epoch, self.best = 0, math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = self.cooldown_counter = 0

    def _is_better(self, metric):
        if self.threshold_mode == "rel":
            bound = self.best * (1.0 - self.threshold if self.mode == "min" else self.threshold + 1.0)
        else:
            bound = self.best - self.threshold if self.mode == "min" else self.best + self.threshold
        return metric < bound if self.mode == "min" else metric > bound

    def step(self, metric):
        metric = float(metric)  # a 0-d Tensor or array too
        self.last_epoch += 1
        if self._is_better(metric):
            self.best, self.num_bad_epochs = metric, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in the cooldown do not count
        if self.num_bad_epochs > self.patience:
            lr = max(self.optimizer.lr * self.factor, self.min_lr)
            if self.optimizer.lr - lr > self.eps:
                self.optimizer.lr = lr
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0

    def _apply(self):
        """Nothing: the rate is not a function of the epoch here; the optimizer's own state keeps it."""
