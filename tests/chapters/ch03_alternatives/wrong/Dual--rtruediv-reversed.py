# __rtruediv__ divides the wrong way round: 1.0 / a computes a / 1.0.
# Written out whole rather than patched from the library's source, so that it also runs in the student bundle.
import numpy as np


class Dual:
    """primal + tangent·ε with ε² = 0: a value and its derivative along one direction."""

    __slots__ = ("primal", "tangent")
    __array_ufunc__ = None  # numpy defers to our reflected operators: `ndarray * Dual` -> Dual

    def __init__(self, primal, tangent=0.0):
        self.primal = primal
        self.tangent = tangent

    def __repr__(self):
        return f"Dual({self.primal!r}, {self.tangent!r})"

    @staticmethod
    def lift(x):
        """A plain number (or array) as a dual number: a constant, so its tangent is zero."""
        return x if isinstance(x, Dual) else Dual(x, 0.0)

    # (a + bε) ± (c + dε) = (a ± c) + (b ± d)ε
    def __add__(self, other):
        other = Dual.lift(other)
        return Dual(self.primal + other.primal, self.tangent + other.tangent)

    def __radd__(self, other):
        return Dual.lift(other) + self

    def __neg__(self):
        return Dual(-self.primal, -self.tangent)

    def __sub__(self, other):
        return self + (-Dual.lift(other))

    def __rsub__(self, other):
        return Dual.lift(other) + (-self)

    # (a + bε)(c + dε) = ac + (ad + bc)ε, since ε² = 0: the product rule
    def __mul__(self, other):
        other = Dual.lift(other)
        return Dual(self.primal * other.primal, self.tangent * other.primal + self.primal * other.tangent)

    def __rmul__(self, other):
        return Dual.lift(other) * self

    # (a + bε) / (c + dε) = a/c + (bc − ad)/c² ε: the quotient rule
    def __truediv__(self, other):
        other = Dual.lift(other)
        quotient = self.primal / other.primal
        return Dual(quotient, (self.tangent - quotient * other.tangent) / other.primal)

    def __rtruediv__(self, other):
        return self / Dual.lift(other)

    # f(a + bε) = f(a) + f'(a) b ε: the chain rule, one line per elementary function
    def sin(self):
        return Dual(np.sin(self.primal), np.cos(self.primal) * self.tangent)

    def cos(self):
        return Dual(np.cos(self.primal), -np.sin(self.primal) * self.tangent)

    def exp(self):
        value = np.exp(self.primal)
        return Dual(value, value * self.tangent)

    def log(self):
        return Dual(np.log(self.primal), self.tangent / self.primal)

    def tanh(self):
        value = np.tanh(self.primal)
        return Dual(value, (1.0 - value * value) * self.tangent)
        ### END SOLUTION
