"""`torch.distributions.constraints` for minigrad (`minigrad.distributions.constraints`): the sets
a transform maps from and to (its `domain` and `codomain`), each with the number of trailing
dimensions one element of it has (`event_dim`: 0 for a number, 1 for a vector) and a `check` of
values, which names the set when a value falls outside it.

A user's own transform declares them as in PyTorch, e.g. `domain = constraints.real_vector` for a
coupling layer of a normalizing flow (`examples/flow_moons.py`).
"""

import numpy as np

__all__ = [
    "Constraint", "boolean", "greater_than", "greater_than_eq", "half_open_interval", "independent", "integer_interval",
    "interval", "less_than", "lower_cholesky", "lower_triangular", "multinomial", "nonnegative", "nonnegative_integer",
    "one_hot", "open_interval", "positive", "positive_definite", "positive_integer", "real", "real_vector", "simplex",
    "unit_interval",
]


class Constraint:
    """A set of values: `check(value)` is an elementwise boolean array over the value's batch (its
    last `event_dim` dimensions are one element each); `str(c)` says what the set is."""

    event_dim = 0
    description = "any value"
    is_discrete = False

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
        low = "" if lower is None else ("[" if lower_closed else "(") + _bound(lower, "low")
        high = "" if upper is None else _bound(upper, "high") + ("]" if upper_closed else ")")
        if lower is not None and upper is not None:
            self.description = f"in {low}, {high}"
        elif lower is not None:
            self.description = ("≥ " if lower_closed else "> ") + _bound(lower, "its lower bound")
        else:
            self.description = ("≤ " if upper_closed else "< ") + _bound(upper, "its upper bound")

    def check(self, value):
        ok = np.ones(np.shape(value), dtype=bool)
        if self.lower is not None:
            ok &= (value >= self.lower) if self.lower_closed else (value > self.lower)
        if self.upper is not None:
            ok &= (value <= self.upper) if self.upper_closed else (value < self.upper)
        return ok


def _bound(value, name):
    """A bound as text: the number, or `name` for a tensor of them (a distribution's support
    between its parameters: Uniform's low and high)."""
    return f"{float(np.asarray(value)):g}" if np.size(value) == 1 else name


class _OneHot(Constraint):
    event_dim = 1
    description = "one-hot vectors (a single 1, the rest 0)"
    is_discrete = True

    def check(self, value):
        return np.all((value == 0) | (value == 1), axis=-1) & (np.sum(value, axis=-1) == 1)


class _Multinomial(Constraint):
    """Count vectors: entries ≥ 0 summing to at most `upper_bound` (PyTorch's weaker check: a
    Multinomial's counts sum to exactly its total_count, which its log_prob checks)."""

    event_dim = 1
    is_discrete = True

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        self.description = f"count vectors summing to at most {_bound(upper_bound, 'total_count')}"

    def check(self, value):
        return np.all(np.asarray(value) >= 0, axis=-1) & (np.sum(value, axis=-1) <= self.upper_bound)


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


class _Integers(_Interval):
    """The whole numbers in an interval (counts, class indices): `is_discrete`, as PyTorch's."""

    is_discrete = True

    def __init__(self, lower=None, upper=None):
        super().__init__(lower, upper)
        self.description = f"whole numbers {self.description}"

    def check(self, value):
        return (np.mod(value, 1) == 0) & super().check(value)


class _Boolean(Constraint):
    description = "0 or 1"
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _Simplex(Constraint):
    """Probability vectors: entries ≥ 0 summing to 1 (within 1e-6, as PyTorch's)."""

    event_dim = 1
    description = "probability vectors (entries ≥ 0 summing to 1)"

    def check(self, value):
        return np.all(value >= 0, axis=-1) & (np.abs(np.sum(value, axis=-1) - 1) < 1e-6)


class _LowerTriangular(Constraint):
    event_dim = 2
    description = "lower-triangular square matrices"

    def check(self, value):
        value = np.asarray(value)
        return np.all(np.tril(value) == value, axis=(-2, -1))


class _LowerCholesky(_LowerTriangular):
    description = "lower-triangular matrices with a positive diagonal (Cholesky factors)"

    def check(self, value):
        return super().check(value) & np.all(np.diagonal(value, axis1=-2, axis2=-1) > 0, axis=-1)


class _PositiveDefinite(Constraint):
    """Symmetric matrices with a Cholesky factor (PyTorch's test: a symmetric one whose Cholesky
    factorization succeeds)."""

    event_dim = 2
    description = "symmetric positive-definite matrices"

    def check(self, value):
        value = np.asarray(value, dtype=np.float64)
        symmetric = np.all(np.isclose(value, np.swapaxes(value, -1, -2), rtol=1e-6, atol=1e-6), axis=(-2, -1))
        with np.errstate(invalid="ignore"):  # a negative pivot: NaN, not positive
            smallest = np.linalg.eigvalsh(value)[..., 0] if value.size else np.zeros(value.shape[:-2])
        return symmetric & (smallest > 0)


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


def less_than(upper_bound):
    return _Interval(upper=upper_bound, upper_closed=False)


def independent(base_constraint, reinterpreted_batch_ndims):
    return _Independent(base_constraint, reinterpreted_batch_ndims)


def integer_interval(lower_bound, upper_bound):
    return _Integers(lower_bound, upper_bound)


def multinomial(upper_bound):
    return _Multinomial(upper_bound)


def _named(constraint, description):
    constraint.description = description
    return constraint


real = _Real()
real_vector = independent(real, 1)
positive = _named(greater_than(0.0), "positive")
nonnegative = _named(greater_than_eq(0.0), "non-negative")
unit_interval = interval(0.0, 1.0)
boolean = _Boolean()
nonnegative_integer = _Integers(0)
positive_integer = _Integers(1)
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
one_hot = _OneHot()
