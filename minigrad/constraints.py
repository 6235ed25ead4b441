"""`torch.distributions.constraints` for minigrad (`minigrad.distributions.constraints`): the sets
a transform maps from and to (its `domain` and `codomain`), each with the number of trailing
dimensions one element of it has (`event_dim`: 0 for a number, 1 for a vector) and a `check` of
values, which names the set when a value falls outside it.

A user's own transform declares them as in PyTorch, e.g. `domain = constraints.real_vector` for a
coupling layer of a normalizing flow (`examples/flow_moons.py`).
"""

import numpy as np

__all__ = [
    "Constraint", "greater_than", "greater_than_eq", "half_open_interval", "independent", "interval", "nonnegative",
    "open_interval", "positive", "real", "real_vector", "unit_interval",
]


class Constraint:
    """A set of values: `check(value)` is an elementwise boolean array over the value's batch (its
    last `event_dim` dimensions are one element each); `str(c)` says what the set is."""

    event_dim = 0
    description = "any value"

    def check(self, value):
        return np.ones(np.shape(value), dtype=bool)

    def __str__(self):
        return self.description

    def __repr__(self):
        return f"constraints.{type(self).__name__.lstrip('_')}({self.description})"


class _Real(Constraint):
    description = "real numbers (not NaN)"

    def check(self, value):
        return value == value  # False for NaN only


class _Interval(Constraint):
    """lower ⊲ value ⊲ upper, each end open or closed (None: no bound)."""

    def __init__(self, lower=None, upper=None, lower_closed=True, upper_closed=True):
        self.lower, self.upper, self.lower_closed, self.upper_closed = lower, upper, lower_closed, upper_closed
        low = "" if lower is None else ("[" if lower_closed else "(") + f"{lower:g}"
        high = "" if upper is None else f"{upper:g}" + ("]" if upper_closed else ")")
        if lower is not None and upper is not None:
            self.description = f"in {low}, {high}"
        elif lower is not None:
            self.description = ("≥ " if lower_closed else "> ") + f"{lower:g}"
        else:
            self.description = ("≤ " if upper_closed else "< ") + f"{upper:g}"

    def check(self, value):
        ok = np.ones(np.shape(value), dtype=bool)
        if self.lower is not None:
            ok &= (value >= self.lower) if self.lower_closed else (value > self.lower)
        if self.upper is not None:
            ok &= (value <= self.upper) if self.upper_closed else (value < self.upper)
        return ok


class _Independent(Constraint):
    """`base` on each of the last `reinterpreted_batch_ndims` dimensions, read as one element."""

    def __init__(self, base, reinterpreted_batch_ndims):
        self.base, self.reinterpreted_batch_ndims = base, int(reinterpreted_batch_ndims)
        self.event_dim = base.event_dim + self.reinterpreted_batch_ndims
        self.description = f"{base.description}, in events of {self.event_dim} dimension{'s' * (self.event_dim != 1)}"

    def check(self, value):
        ok = self.base.check(value)
        n = self.reinterpreted_batch_ndims
        return ok.all(axis=tuple(range(-n, 0))) if n else ok


def interval(lower_bound, upper_bound):
    return _Interval(lower_bound, upper_bound)


def half_open_interval(lower_bound, upper_bound):
    return _Interval(lower_bound, upper_bound, upper_closed=False)


def open_interval(lower_bound, upper_bound):
    """(lower, upper): minigrad's, for maps whose inverse is infinite at both ends (tanh's)."""
    return _Interval(lower_bound, upper_bound, lower_closed=False, upper_closed=False)


def greater_than(lower_bound):
    return _Interval(lower_bound, lower_closed=False)


def greater_than_eq(lower_bound):
    return _Interval(lower_bound)


def independent(base_constraint, reinterpreted_batch_ndims):
    return _Independent(base_constraint, reinterpreted_batch_ndims)


def _named(constraint, description):
    constraint.description = description
    return constraint


real = _Real()
real_vector = independent(real, 1)
positive = _named(greater_than(0.0), "positive")
nonnegative = _named(greater_than_eq(0.0), "non-negative")
unit_interval = interval(0.0, 1.0)
