"""`Module` and `Parameter`: the bookkeeping that lets a model list, freeze and reset its weights."""

import numpy as np

from ..errors import ShapeError
from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that a `Module` owns and an optimiser updates (requires grad by default)."""

    __slots__ = ()

    def __init__(self, data, requires_grad=True):
        super().__init__(np.array(data, dtype=np.result_type(np.asarray(data).dtype, np.float64)), requires_grad)


class Module:
    """Base class of layers and models: subclasses set attributes and define `forward`.

    Parameters are found by walking attributes (and lists, tuples and dicts of them), so a model
    never registers anything by hand. `requires_grad=False` on a parameter freezes it: backward
    then neither visits nor updates it.
    """

    training = True

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def __repr__(self):
        return f"{type(self).__name__}()"

    def named_parameters(self, prefix=""):
        """(name, parameter) pairs, each parameter once, in attribute order."""
        seen = set()
        stack = [(prefix, self)]
        while stack:
            name, value = stack.pop()
            if isinstance(value, Parameter):
                if id(value) not in seen:
                    seen.add(id(value))
                    yield name, value
            elif isinstance(value, Module):
                children = vars(value).items()
                stack.extend(reversed([(f"{name}.{k}" if name else k, v) for k, v in children]))
            elif isinstance(value, (list, tuple)):
                stack.extend(reversed([(f"{name}.{i}", v) for i, v in enumerate(value)]))
            elif isinstance(value, dict):
                stack.extend(reversed([(f"{name}.{k}", v) for k, v in value.items()]))

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def modules(self):
        """This module and every module inside it."""
        found, stack = [], [self]
        while stack:
            value = stack.pop()
            if isinstance(value, Module):
                found.append(value)
                stack.extend(reversed(list(vars(value).values())))
            elif isinstance(value, (list, tuple)):
                stack.extend(reversed(value))
            elif isinstance(value, dict):
                stack.extend(reversed(list(value.values())))
        return found

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None

    def requires_grad_(self, flag=True):
        """Freeze (False) or unfreeze (True) every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad = flag
        return self

    def train(self, mode=True):
        for m in self.modules():
            m.training = mode
        return self

    def eval(self):
        return self.train(False)

    def num_parameters(self):
        return sum(p.size for p in self.parameters())

    def state_dict(self):
        return {name: p.data.copy() for name, p in self.named_parameters()}

    def load_state_dict(self, state):
        for name, p in self.named_parameters():
            if state[name].shape != p.shape:
                raise ShapeError(f"load_state_dict: {name} has shape {p.shape}, the state has {state[name].shape}")
            p.data = np.array(state[name], dtype=p.dtype)
