"""Learning-rate schedules, as `torch.optim.lr_scheduler`: call `scheduler.step()` once per epoch,
after `optimizer.step()`; the scheduler sets `optimizer.lr`.

    optimizer = optim.SGD(model.parameters(), lr=0.1)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=100)
    for epoch in range(100):
        train_one_epoch(); scheduler.step()
"""

import math


class LRScheduler:
    """Base class: `lr_at(epoch)` gives the learning rate of an epoch from the optimizer's initial one."""

    def __init__(self, optimizer, last_epoch=-1):
        if not hasattr(optimizer, "lr") or not hasattr(optimizer, "step"):
            raise TypeError(f"{type(self).__name__}: expected an optimizer (optim.SGD(...), optim.Adam(...)), got {type(optimizer).__name__}")
        self.optimizer = optimizer
        self.base_lr = optimizer.lr
        self.last_epoch = last_epoch
        self.step()

    def lr_at(self, epoch):
        raise NotImplementedError

    def get_last_lr(self):
        return [self.optimizer.lr]

    def step(self):
        self.last_epoch += 1
        self.optimizer.lr = self.lr_at(self.last_epoch)

    def state_dict(self):
        return {"last_epoch": self.last_epoch, "base_lr": self.base_lr}

    def load_state_dict(self, state):
        self.last_epoch, self.base_lr = state["last_epoch"], state["base_lr"]
        self.optimizer.lr = self.lr_at(self.last_epoch)


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


class CosineAnnealingLR(LRScheduler):
    """eta_min + (lr − eta_min)(1 + cos(π · epoch / T_max)) / 2 (Loshchilov & Hutter 2017, without
    restarts): from lr down to eta_min in T_max epochs, back up over the next T_max, and so on."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        if T_max < 1:
            raise ValueError(f"CosineAnnealingLR: T_max must be a positive number of epochs, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def lr_at(self, epoch):
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * epoch / self.T_max)) / 2
