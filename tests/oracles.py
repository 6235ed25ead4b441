"""Oracles the library tests compare minigrad against, written independently of minigrad.

* Central differences, implemented here from scratch (not `minigrad.gradcheck`), so a bug in
  minigrad's own checker cannot hide a bug in a VJP rule.
* PyTorch on the CPU in float64, the reference implementation of the same semantics.

Everything is deterministic: inputs come from `np.random.default_rng(seed)` and hypothesis runs
derandomized with `SETTINGS`.
"""

import numpy as np
import torch
from hypothesis import settings

import minigrad as mg

# Property-based tests: few examples, no deadline (a shared 2-core machine), same examples every run.
SETTINGS = settings(max_examples=15, deadline=None, database=None, derandomize=True)

EPS = 1e-6  # central-difference step: truncation error O(eps²) ≈ 1e-12, rounding O(1e-16 / eps) ≈ 1e-10
FD_TOL = dict(rtol=1e-5, atol=1e-7)  # analytic versus central differences
TORCH_TOL = dict(rtol=1e-9, atol=1e-11)  # analytic versus PyTorch (same float64 maths, other order)


def central_difference_vjp(fn, arrays, cotangent, eps=EPS):
    """uᵀJ for every input of `fn` (float64 arrays -> array) by central differences of ⟨u, fn(x)⟩."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]  # private contiguous copies we perturb
    grads = []
    for a in arrays:
        flat, grad = a.reshape(-1), np.zeros(a.size)
        for k in range(a.size):
            saved = flat[k]
            flat[k] = saved + eps
            up = np.sum(cotangent * fn(*arrays))
            flat[k] = saved - eps
            down = np.sum(cotangent * fn(*arrays))
            flat[k] = saved
            grad[k] = (up - down) / (2 * eps)
        grads.append(grad.reshape(a.shape))
    return grads


def central_difference_jvp(fn, arrays, tangents, eps=EPS):
    """J v by central differences along the direction v: (fn(x + eps v) - fn(x - eps v)) / 2 eps."""
    up = fn(*[np.asarray(a, np.float64) + eps * t for a, t in zip(arrays, tangents)])
    down = fn(*[np.asarray(a, np.float64) - eps * t for a, t in zip(arrays, tangents)])
    return (np.asarray(up) - np.asarray(down)) / (2 * eps)


def numpy_fn(f):
    """A minigrad function of tensors as a function of float64 arrays (values only, no graph)."""

    def on_arrays(*arrays):
        with mg.no_grad():
            return f(*[mg.tensor(np.asarray(a, np.float64)) for a in arrays]).data

    return on_arrays


def minigrad_vjp(f, arrays, cotangent):
    """(f(x), uᵀJ) through `Tensor.backward(grad=u)`: the path training loops take."""
    xs = [mg.tensor(np.array(a, np.float64), requires_grad=True) for a in arrays]
    out = f(*xs)
    out.backward(mg.tensor(cotangent))
    return out.data, [np.zeros_like(x.data) if x.grad is None else x.grad.data for x in xs]


def torch_vjp(f, arrays, cotangent):
    """(f(x), uᵀJ) from PyTorch in float64; inputs the output does not use get zeros."""
    xs = [torch.tensor(np.array(a, np.float64), requires_grad=True) for a in arrays]
    out = f(*xs)
    grads = torch.autograd.grad(out, xs, torch.tensor(cotangent), allow_unused=True)
    return out.detach().numpy(), [np.zeros(x.shape) if g is None else g.numpy() for x, g in zip(xs, grads)]


def as_torch_index(index):
    """A numpy index (ints, slices, arrays) in the form torch indexing accepts."""
    if isinstance(index, tuple):
        return tuple(as_torch_index(i) for i in index)
    return torch.from_numpy(index) if isinstance(index, np.ndarray) else index


def compare_with_torch(mg_fn, torch_fn, arrays, second=False, atol=1e-10, rtol=1e-10):
    """The same function in minigrad and in PyTorch, on the same float64 `arrays`: its values, the
    gradients of ⟨u, output⟩ for a random u and, when `second`, the gradients of ⟨w, those
    gradients⟩ (second derivatives). A gradient that does not depend on the inputs (a linear or
    piecewise-linear function) must give second derivatives 0 on both sides."""
    rng = np.random.default_rng(20261201)
    xs = [mg.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, tout = mg_fn(*xs), torch_fn(*ts)
    assert out.shape == tuple(tout.shape), (out.shape, tuple(tout.shape))
    np.testing.assert_allclose(out.data, tout.detach().numpy(), atol=atol, rtol=rtol)
    u = rng.standard_normal(out.shape)
    grads = mg.gradients((out * mg.tensor(u)).sum(), xs, create_graph=second)
    tgrads = torch.autograd.grad((tout * torch.tensor(u)).sum(), ts, create_graph=second)
    for g, tg in zip(grads, tgrads):
        np.testing.assert_allclose(g.data, tg.detach().numpy(), atol=atol, rtol=rtol)
    if not second:
        return
    ws = [rng.standard_normal(a.shape) for a in arrays]
    s = sum((g * mg.tensor(w)).sum() for g, w in zip(grads, ws))
    ts2 = sum((g * torch.tensor(w)).sum() for g, w in zip(tgrads, ws))
    if not (s.requires_grad and ts2.requires_grad):
        for g in mg.gradients(s, xs) if s.requires_grad else ():
            assert not g.data.any()
        for tg in torch.autograd.grad(ts2, ts, allow_unused=True) if ts2.requires_grad else ():
            assert tg is None or not tg.any()
        return
    for g, tg in zip(mg.gradients(s, xs), torch.autograd.grad(ts2, ts, allow_unused=True)):
        expected = np.zeros(g.shape) if tg is None else tg.numpy(force=True)  # force: torch's ZeroTensor
        np.testing.assert_allclose(g.data, expected, atol=atol, rtol=rtol * 10)


# The elementwise functions beyond exp, log, sin, cos, tanh, sigmoid and erf, each on inputs inside
# its domain (away from its poles): name -> (domain low, high). The derivative tests (first, second,
# forward mode) build their cases from this one list.
ELEMENTWISE_DOMAINS = {
    "erfc": (-2.5, 2.5), "erfinv": (-0.95, 0.95), "log1p": (-0.9, 3.0), "expm1": (-3.0, 3.0), "exp2": (-3.0, 3.0), "tan": (-1.2, 1.2),
    "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atan": (-3.0, 3.0), "sinh": (-3.0, 3.0), "cosh": (-3.0, 3.0),
    "asinh": (-3.0, 3.0), "acosh": (1.1, 4.0), "atanh": (-0.9, 0.9), "lgamma": (0.3, 6.0), "digamma": (0.3, 6.0),
    "i0": (-30.0, 30.0),  # both sides of |x| = 20, where the Bessel functions switch series
}
# torch's trigamma (and so the derivative of its digamma, the second of its lgamma) is accurate to
# ~1e-9 relative only; minigrad's polygamma functions to ~1e-15 (test_elementwise checks them
# against the series they are sums of). The cases that reach it are compared this closely.
ORACLE_RTOL = {"lgamma": 1e-8, "digamma": 1e-8}
# The primitives the torch-oracle tables (double backward, forward mode) cannot hold: a Gamma draw
# as a function of its concentration has no torch counterpart that takes the draw (torch's
# `_standard_gamma` draws its own), and the draw's gradient has no derivative, in PyTorch either.
# tests/test_distributions.py checks both against torch's incomplete gamma function and checks
# that their second derivatives are refused by name. Nor can they hold the incomplete gamma
# functions, whose derivative in a torch lacks: that file checks those against 30-digit mpmath (and
# against torch in x, to second order).
CHECKED_IN_TEST_DISTRIBUTIONS = {"standard_gamma", "standard_gamma_grad", "gammainc", "gammaincc"}


def elementwise_cases(rng, shape):
    """{name: (minigrad function, torch function, [input])} for ELEMENTWISE_DOMAINS, the two
    binary ones (atan2 around the whole circle, hypot), ndtri and the Bessel functions i0e, i1, i1e
    (torch.special's)."""
    cases = {
        name: (lambda x, name=name: getattr(x, name)(), getattr(torch, name), [rng.uniform(low, high, shape)])
        for name, (low, high) in ELEMENTWISE_DOMAINS.items()
    }
    cases["atan2"] = (mg.atan2, torch.atan2, [rng.standard_normal(shape), rng.standard_normal(shape[-1:])])
    cases["hypot"] = (mg.hypot, torch.hypot, [rng.standard_normal(shape), rng.standard_normal(shape[-1:])])
    cases["ndtri"] = (mg.ndtri, torch.special.ndtri, [rng.uniform(0.02, 0.98, shape)])
    for name in ("i0e", "i1", "i1e"):
        cases[name] = (getattr(mg, name), getattr(torch.special, name), [rng.uniform(*ELEMENTWISE_DOMAINS["i0"], shape)])
    return cases


def linalg_cases(rng, n=3):
    """{name: (minigrad function, torch function, inputs)} for the linear-algebra primitives, on
    well-conditioned matrices; cholesky's input is made symmetric positive definite inside the
    function (X Xᵀ + n I), so that both libraries differentiate through the same symmetric matrix."""

    def spd(lib):
        return lambda x: lib.linalg.cholesky(x @ x.mT + lib.eye(n, dtype=x.dtype) * n)

    a = rng.standard_normal((2, n, n)) + 2 * np.eye(n)
    tall, wide = rng.standard_normal((2, n + 2, n)), rng.standard_normal((2, n, n + 2))
    return {
        "inv": (mg.linalg.inv, torch.linalg.inv, [a]),
        "solve": (mg.linalg.solve, torch.linalg.solve, [a, rng.standard_normal((n, 2))]),
        "det": (mg.linalg.det, torch.linalg.det, [a]),
        "logabsdet": (lambda x: mg.linalg.slogdet(x).logabsdet, lambda x: torch.linalg.slogdet(x).logabsdet, [a]),
        "cholesky": (spd(mg), spd(torch), [rng.standard_normal((n, n))]),
        "eigvalsh": (lambda x: mg.linalg.eigvalsh(x + x.mT), lambda x: torch.linalg.eigvalsh(x + x.mT), [a]),
        # each eigenvector is defined up to its sign, which the two libraries' LAPACK calls may not
        # agree on: the case squares them
        "eigh_vectors": (lambda x: mg.linalg.eigh(x + x.mT).eigenvectors ** 2, lambda x: torch.linalg.eigh(x + x.mT).eigenvectors ** 2, [a]),
        # QR, SVD and pinv on a tall and a wide stack, where the rules' projections onto the
        # complement of the factors' columns are not zero; the singular vectors squared, as above
        "qr_q": (lambda x: mg.linalg.qr(x).Q, lambda x: torch.linalg.qr(x).Q, [tall]),
        "svdvals": (mg.linalg.svdvals, torch.linalg.svdvals, [wide]),
        "svd_u": (lambda x: mg.linalg.svd(x, full_matrices=False).U ** 2, lambda x: torch.linalg.svd(x, full_matrices=False).U ** 2, [tall]),
        "svd_vh": (lambda x: mg.linalg.svd(x, full_matrices=False).Vh ** 2, lambda x: torch.linalg.svd(x, full_matrices=False).Vh ** 2, [wide]),
        "pinv": (mg.linalg.pinv, torch.linalg.pinv, [wide]),
        "matrix_exp": (mg.linalg.matrix_exp, torch.linalg.matrix_exp, [a * 0.8]),  # ‖A‖₁ past θ₁₃: squarings too
    }
