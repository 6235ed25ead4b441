"""Errors minigrad raises for bad input.

Each message names the operation and the shapes or values involved, so a student sees what went
wrong in their own terms instead of a bare numpy traceback.
"""


class MinigradError(Exception):
    """Base class of every error minigrad raises on purpose."""


class ShapeError(MinigradError, ValueError):
    """Operands whose shapes an operation cannot combine."""


class GraphError(MinigradError, RuntimeError):
    """A graph that cannot be differentiated: freed by an earlier backward, cyclic, non-scalar root."""


class DtypeError(MinigradError, TypeError):
    """A dtype an operation cannot use, e.g. an integer tensor that asks for gradients."""


class LinAlgError(MinigradError, ValueError):
    """A matrix a linear-algebra operation cannot use: singular for an inverse or a solve, not
    positive definite for a Cholesky factor (numpy's and PyTorch's LinAlgError)."""
