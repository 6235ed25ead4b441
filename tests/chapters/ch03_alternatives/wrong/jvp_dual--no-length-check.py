def jvp_dual(f, x, v):
    """`(f(x), J v)` by one forward pass of `f` on dual numbers.

    `x` and `v` are sequences of the same length: the primals and the tangents (the direction v)
    of `f`'s positional arguments. Seeding input i with tangent vᵢ makes every intermediate
    carry its derivative along v, so the output's tangent is the directional derivative
    Σᵢ ∂f/∂xᵢ vᵢ. An output that does not depend on the inputs (a plain number) has tangent 0.
    """
    out = Dual.lift(f(*[Dual(primal, tangent) for primal, tangent in zip(x, v)]))
    return out.primal, out.tangent
