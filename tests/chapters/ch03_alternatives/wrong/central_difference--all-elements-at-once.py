def central_difference(f, x, h=1e-6):
    """∂f/∂x by central differences: (f(x + h eᵢ) − f(x − h eᵢ)) / 2h for every element i of x.

    `f` maps a float64 array shaped like `x` to a scalar; the result has the shape of `x`.
    Costs 2·x.size evaluations of f. The error is O(h²) (the even Taylor terms cancel), against
    O(h) for the one-sided `forward_difference`. `x` itself is never modified: f sees a private
    copy, perturbed in place one element at a time and restored exactly.
    """
    x = np.array(x, dtype=np.float64)
    slope = (float(f(x + h)) - float(f(x - h))) / (2 * h)
    return np.full_like(x, slope)
