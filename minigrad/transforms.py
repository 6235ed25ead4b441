"""Function transformations: `grad`, `value_and_grad`, `vjp`, `jvp`, `hvp`, `jacobian`, `hessian`,
and `gradcheck`.

They take Python functions of tensors and return new functions (or values), JAX-style, on top of
the same engine that `Tensor.backward` uses. They compose: `grad(grad(f))` differentiates the
backward pass of `f`, because the inner `grad` records its backward pass when its input is itself
being differentiated.
"""

import dataclasses

import numpy as np

from .autograd import gradients
from .errors import GraphError, ShapeError
from .grad_mode import enable_grad, state
from .numerical import central_difference
from .tensor import Tensor


def _differentiable(x):
    """`x` as a tensor we can differentiate with respect to, keeping any outer graph or tangent."""
    if isinstance(x, Tensor) and x.requires_grad:
        return x
    data = x.data if isinstance(x, Tensor) else Tensor(x).data  # Tensor's dtype rule: floats keep theirs
    leaf = Tensor._result(data, None)
    leaf.requires_grad = True
    leaf._tangent = x._tangent if isinstance(x, Tensor) else None
    return leaf


def _argnums(argnums):
    return (argnums,) if isinstance(argnums, (int, np.integer)) else tuple(argnums)


def _check_argnums(argnums, args, name):
    if not isinstance(argnums, (int, np.integer)) and not (
        isinstance(argnums, (tuple, list)) and argnums and all(isinstance(i, (int, np.integer)) for i in argnums)
    ):
        raise TypeError(f"{name}: argnums must be an int or a non-empty tuple of ints, got {argnums!r}")
    bad = [i for i in _argnums(argnums) if not -len(args) <= i < len(args)]
    if bad:
        raise IndexError(
            f"{name}: argnums {argnums!r} asks for argument {bad[0]}, but the function was called with "
            f"{len(args)} positional argument{'s' if len(args) != 1 else ''}"
        )


def _check_scalar_output(out, name):
    if not isinstance(out, Tensor):
        hint = " (a .item(), float() or numpy call inside f cuts the graph)" if isinstance(out, (float, int, np.number, np.ndarray)) else ""
        raise GraphError(f"{name}: f must return a scalar Tensor, got {type(out).__name__}{hint}")
    if out.size != 1:
        raise GraphError(
            f"{name}: f must return a scalar (one element) to have a gradient, got shape {out.shape}; "
            f"reduce it (.sum(), .mean()) or use minigrad.vjp / minigrad.jacobian"
        )


def value_and_grad(f, argnums=0):
    """A function returning `(f(*args), df/d args[argnums])` for scalar-valued `f`.

    A function whose result does not depend on the differentiated arguments has a zero gradient.
    """

    def value_and_grad_f(*args):
        _check_argnums(argnums, args, "grad")
        args = list(args)
        nested = any(isinstance(args[i], Tensor) and args[i].requires_grad for i in _argnums(argnums))
        for i in _argnums(argnums):
            args[i] = _differentiable(args[i])
        with enable_grad():
            out = f(*args)
        _check_scalar_output(out, "grad")
        wanted = [args[i] for i in _argnums(argnums)]
        if not out.requires_grad:  # f does not depend on its inputs: its gradient is zero (as in JAX)
            grads = tuple(Tensor._result(np.zeros_like(x.data), None) for x in wanted)
        else:
            grads = gradients(out, wanted, create_graph=nested)
        return out, (grads[0] if isinstance(argnums, int) else grads)

    return value_and_grad_f


def grad(f, argnums=0):
    """The gradient function of a scalar-valued `f`: `grad(f)(x)` is df/dx, shaped like x."""
    value_and_grad_f = value_and_grad(f, argnums)
    return lambda *args: value_and_grad_f(*args)[1]


def vjp(f, *primals):
    """`(f(*primals), vjp_fn)`, where `vjp_fn(u)` is uᵀJ: one reverse pass per call."""
    xs = [_differentiable(p) for p in primals]
    with enable_grad():
        out = f(*xs)

    def vjp_fn(cotangent):
        return gradients(out, xs, grad=cotangent, retain_graph=True)

    return out, vjp_fn


def jvp(f, primals, tangents):
    """`(f(*primals), J v)`: forward mode, the tangent carried along with each value.

    Every primitive's JVP rule runs right after its forward, so memory stays constant in the
    depth of the computation, but each call yields one directional derivative only.
    """
    for i, (p, t) in enumerate(zip(primals, tangents, strict=True)):
        p_shape, t_shape = (v.shape if isinstance(v, Tensor) else np.shape(v) for v in (p, t))
        if p_shape != t_shape:  # numpy would broadcast it silently into a wrong answer
            raise ShapeError(f"jvp: tangent {i} has shape {t_shape} but its primal has shape {p_shape}")
    xs = []
    for p, t in zip(primals, tangents, strict=True):
        x = Tensor._result(p.data if isinstance(p, Tensor) else np.asarray(p, dtype=np.float64), None)
        if isinstance(p, Tensor) and p.requires_grad:
            x = p  # keep an outer reverse-mode graph (reverse-over-forward)
        x._tangent = t if isinstance(t, Tensor) else Tensor(t, dtype=x.dtype)
        xs.append(x)
    state.forward_mode_depth += 1
    try:
        out = f(*xs)
    finally:
        state.forward_mode_depth -= 1
        for x in xs:
            x._tangent = None
    tangent = out._tangent if out._tangent is not None else Tensor(np.zeros_like(out.data))
    out._tangent = None
    return out, tangent


def hvp(f, x, v, mode="forward-over-reverse"):
    """The Hessian-vector product H v of scalar `f` at `x`, without forming H (Pearlmutter 1994).

    "forward-over-reverse" pushes the tangent v through the backward pass; "reverse-over-reverse"
    differentiates ⟨∇f(x), v⟩ once more. Both cost a small multiple of one gradient.
    """
    if mode == "forward-over-reverse":
        return jvp(grad(f), (x,), (v,))[1]
    if mode == "reverse-over-reverse":
        v = v if isinstance(v, Tensor) else Tensor(v)
        return grad(lambda y: (grad(f)(y) * v).sum())(x)
    raise ValueError(f"hvp: mode must be 'forward-over-reverse' or 'reverse-over-reverse', got {mode!r}")


def jacobian(f, x, mode="reverse"):
    """The Jacobian of `f` at `x`, shaped out.shape + x.shape.

    Reverse mode builds it a row at a time (one VJP per output element); forward mode a column at
    a time (one JVP per input element): the cheaper mode is the one with fewer passes, reverse for
    f: Rᴺ → R (one pass instead of N), forward for f: R → Rᴹ (one pass instead of M).
    """
    x = x if isinstance(x, Tensor) else Tensor(x)
    if mode == "reverse":
        out, vjp_fn = vjp(f, x)
        rows = [vjp_fn(_basis(out, k))[0].data for k in range(out.size)]
        return Tensor(np.stack(rows).reshape(out.shape + x.shape))
    if mode == "forward":
        columns = [jvp(f, (x,), (_basis(x, k),))[1].data for k in range(x.size)]
        return Tensor(np.stack(columns, axis=-1).reshape(columns[0].shape + x.shape))
    raise ValueError(f"jacobian: mode must be 'reverse' or 'forward', got {mode!r}")


def _basis(like, k):
    """The k-th standard basis tensor shaped like `like`, one at a time (an identity matrix of
    size n would need n² memory: 800 MB for n = 10⁴)."""
    e = np.zeros(like.shape, dtype=like.dtype)
    e.flat[k] = 1
    return Tensor(e)


def hessian(f, x):
    """The full Hessian of scalar `f` at `x` (forward over reverse): for small checks only."""
    return jacobian(grad(f), x, mode="forward")


@dataclasses.dataclass
class GradcheckReport:
    """The verdict of `gradcheck`, and the element that decided it.

    An element (analytic a, numeric n) passes when |a − n| ≤ atol + rtol·|n|, like
    `numpy.allclose`. The reported element is the one with the largest |a − n| / (atol + rtol·|n|):
    the worst failure, or the element closest to failing. There `relative_error` is the true
    relative error |a − n| / max(|a|, |n|) (0 when both are 0) and `absolute_error` is |a − n|.
    For gradients that are not negligible this is also the element of worst relative error;
    near-zero gradients are judged by `atol` instead, because their relative error is
    finite-difference noise.
    """

    ok: bool
    relative_error: float
    absolute_error: float
    input_index: int
    element: tuple
    analytic: float
    numeric: float
    atol: float
    rtol: float

    def __bool__(self):
        return self.ok

    def __str__(self):
        verdict = "passed" if self.ok else "FAILED"
        tolerance = self.atol + self.rtol * abs(self.numeric)
        if not (np.isfinite(self.analytic) and np.isfinite(self.numeric)):
            return (
                f"gradcheck {verdict}: worst element is input {self.input_index}, element {self.element}: "
                f"analytic {self.analytic:.8g}, numeric {self.numeric:.8g}: a NaN or infinite gradient "
                f"{'matches only the same infinity' if self.ok else 'never passes'} (is f defined and "
                f"differentiable around this point?)"
            )
        return (
            f"gradcheck {verdict}: worst element is input {self.input_index}, element {self.element}: "
            f"analytic {self.analytic:.8g}, numeric {self.numeric:.8g}, relative error {self.relative_error:.2e}, "
            f"absolute error {self.absolute_error:.2e} {'<=' if self.ok else '>'} atol + rtol·|numeric| = {tolerance:.2e}"
        )


class GradcheckError(AssertionError):
    """The analytic gradient disagrees with central differences."""


def gradcheck(f, *inputs, eps=1e-6, atol=1e-5, rtol=1e-3, seed=0, raise_exception=True):
    """Compare every input's gradient with central differences in float64.

    For non-scalar outputs a fixed random cotangent u reduces f to the scalar ⟨u, f(x)⟩, so one
    reverse pass checks the whole Jacobian against 2·(number of input elements) evaluations.
    Returns a truthy `GradcheckReport` (see there for the criterion and what is reported); raises
    `GradcheckError` with the report's text on failure unless `raise_exception=False`.
    """
    xs = [np.array(x.data if isinstance(x, Tensor) else x, dtype=np.float64) for x in inputs]
    out_shape = np.shape(f(*[Tensor(x) for x in xs]).data)
    # A scalar f is checked as it is, so the report shows its true gradient; a vector f through ⟨u, f⟩.
    u = np.random.default_rng(seed).standard_normal(out_shape) if out_shape else np.float64(1.0)

    def scalar_of_input(i):
        """⟨u, f⟩ as a function of input i alone, the others fixed."""
        return lambda a: np.sum(u * f(*[Tensor(a if j == i else x) for j, x in enumerate(xs)]).data)

    _, vjp_fn = vjp(f, *[Tensor(x) for x in xs])
    analytic = [g.data for g in vjp_fn(Tensor(u))]
    numeric = [central_difference(scalar_of_input(i), x, eps) for i, x in enumerate(xs)]
    worst, worst_ratio = None, -1.0
    for i, (a, n) in enumerate(zip(analytic, numeric)):
        with np.errstate(invalid="ignore"):  # inf - inf
            ratio = np.abs(a - n) / (atol + rtol * np.abs(n))
        # A NaN or infinite gradient on either side never passes (inf only matches the same inf):
        # NaN would otherwise compare False with everything and the element would look fine.
        ratio = np.where(np.isfinite(a) & np.isfinite(n), ratio, np.where(a == n, 0.0, np.inf))
        if ratio.size and ratio.max() > worst_ratio:
            worst, worst_ratio = (i, np.unravel_index(np.argmax(ratio), ratio.shape)), float(ratio.max())
    if worst is None:  # no input has any element: nothing to disagree about
        return GradcheckReport(True, 0.0, 0.0, 0, (), 0.0, 0.0, atol, rtol)
    i, element = worst
    a, n = float(analytic[i][element]), float(numeric[i][element])
    scale = max(abs(a), abs(n))
    difference = abs(a - n) if a != n else 0.0  # equal infinities agree; NaN stays NaN
    report = GradcheckReport(
        worst_ratio <= 1.0, difference / scale if scale and np.isfinite(scale) else (0.0 if a == n else float("nan")),
        difference, i, tuple(int(k) for k in element), a, n, atol, rtol,
    )
    if not report.ok and raise_exception:
        raise GradcheckError(str(report))
    return report
