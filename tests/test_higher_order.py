"""Higher-order derivatives: every primitive's VJP rule is itself differentiable.

PyTorch's double backward is the oracle: for each primitive F we differentiate
s = Σ_i ⟨w_i, ∂⟨u, F(x)⟩/∂x_i⟩ with respect to every input x_j *and* the cotangent u, in both
libraries, on random inputs. That exercises the VJP rule as a function of all its arguments, which
is what `create_graph=True`, `hvp` and MAML rely on.
"""

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import ops
from minigrad.autograd import count_vjps
from oracles import CHECKED_IN_TEST_DISTRIBUTIONS, ORACLE_RTOL, elementwise_cases, linalg_cases

RNG = np.random.default_rng(20240405)


def _positive(*shape):
    return RNG.uniform(0.5, 2.0, shape)


def _away_from_zero(*shape):
    """Random values with |x| >= 0.3, so that kinks (relu, abs, clip) are never straddled."""
    return RNG.choice([-1.0, 1.0], shape) * RNG.uniform(0.3, 2.0, shape)


def _fancy_index():
    return np.array([0, 2, 2, 1])


# name -> (minigrad function, torch function, input arrays); both functions take the same inputs.
PRIMITIVES = {
    "add": (lambda x, y: x + y, lambda x, y: x + y, [RNG.standard_normal((3, 4)), RNG.standard_normal((4,))]),
    "sub": (lambda x, y: x - y, lambda x, y: x - y, [RNG.standard_normal((3, 1)), RNG.standard_normal((3, 4))]),
    "mul": (lambda x, y: x * y, lambda x, y: x * y, [RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))]),
    "mul_broadcast": (lambda x, y: x * y, lambda x, y: x * y, [RNG.standard_normal((2, 3, 4)), RNG.standard_normal((3, 1))]),
    "div": (lambda x, y: x / y, lambda x, y: x / y, [RNG.standard_normal((3, 4)), _away_from_zero(3, 4)]),
    "neg": (lambda x: -x, lambda x: -x, [RNG.standard_normal((5,))]),
    "power_int": (lambda x: x**3, lambda x: x**3, [RNG.standard_normal((5,))]),
    "power_frac": (lambda x: x**2.5, lambda x: x**2.5, [_positive(5)]),
    "sqrt": (lambda x: x.sqrt(), torch.sqrt, [_positive(5)]),
    "power_tensor": (lambda x, y: x**y, lambda x, y: x**y, [_positive(4), RNG.standard_normal((4,))]),
    "exp": (lambda x: x.exp(), torch.exp, [RNG.standard_normal((3, 2))]),
    "log": (lambda x: x.log(), torch.log, [_positive(3, 2)]),
    "sin": (lambda x: x.sin(), torch.sin, [RNG.standard_normal((3, 2))]),
    "cos": (lambda x: x.cos(), torch.cos, [RNG.standard_normal((3, 2))]),
    "tanh": (lambda x: x.tanh(), torch.tanh, [RNG.standard_normal((3, 2))]),
    "sigmoid": (lambda x: x.sigmoid(), torch.sigmoid, [RNG.standard_normal((3, 2))]),
    "log_softmax": (lambda x: mg.log_softmax(x, axis=0), lambda x: torch.log_softmax(x, dim=0), [RNG.standard_normal((3, 2))]),
    "softmax": (lambda x: mg.softmax(x, axis=1) * x, lambda x: torch.softmax(x, dim=1) * x, [RNG.standard_normal((3, 4))]),
    "relu": (lambda x: x.relu(), torch.relu, [_away_from_zero(3, 4)]),
    "abs": (lambda x: x.abs(), torch.abs, [_away_from_zero(3, 4)]),
    "clip": (lambda x: x.clip(-0.5, 0.5), lambda x: x.clamp(-0.5, 0.5), [_away_from_zero(6)]),
    # steps: gradient zeros (times x, so that the second derivative is not trivially zero too)
    **{name: (lambda x, name=name: getattr(x, name)() * x, lambda x, name=name: getattr(x, name)() * x, [_away_from_zero(6) * 2.3])
       for name in ("floor", "ceil", "trunc", "round")},
    "astype": (
        lambda x: x.astype(np.float64) * x.astype(np.float64),
        lambda x: x.to(torch.float64) * x.to(torch.float64),
        [RNG.standard_normal(4).astype(np.float32)],
    ),
    "where": (
        lambda x, y: mg.where(np.array([True, False, True]), x, y),
        lambda x, y: torch.where(torch.tensor([True, False, True]), x, y),
        [RNG.standard_normal((2, 3)), RNG.standard_normal((3,))],
    ),
    "matmul": (lambda x, y: x @ y, lambda x, y: x @ y, [RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))]),
    "matmul_batched_broadcast": (
        lambda x, y: x @ y,
        lambda x, y: x @ y,
        [RNG.standard_normal((2, 3, 4)), RNG.standard_normal((4, 5))],
    ),
    "matmul_vector": (lambda x, y: x @ y, lambda x, y: x @ y, [RNG.standard_normal((3, 4)), RNG.standard_normal(4)]),
    "sum": (lambda x: x.sum(axis=1), lambda x: x.sum(dim=1), [RNG.standard_normal((3, 4))]),
    "sum_keepdims": (lambda x: x.sum(axis=0, keepdims=True), lambda x: x.sum(dim=0, keepdim=True), [RNG.standard_normal((3, 4))]),
    "mean": (lambda x: x.mean(), lambda x: x.mean(), [RNG.standard_normal((3, 4))]),
    "max": (lambda x: x.max(axis=1), lambda x: x.max(dim=1).values, [RNG.standard_normal((3, 4))]),
    "reshape": (lambda x: x.reshape(4, 3), lambda x: x.reshape(4, 3), [RNG.standard_normal((3, 4))]),
    "transpose": (lambda x: x.transpose(2, 0, 1), lambda x: x.permute(2, 0, 1), [RNG.standard_normal((2, 3, 4))]),
    "broadcast_to": (lambda x: x.broadcast_to((2, 3, 4)), lambda x: x.broadcast_to((2, 3, 4)), [RNG.standard_normal((3, 1))]),
    "getitem_basic": (lambda x: x[1:, ::2], lambda x: x[1:, ::2], [RNG.standard_normal((3, 4))]),
    "getitem_fancy": (lambda x: x[_fancy_index()], lambda x: x[torch.tensor(_fancy_index())], [RNG.standard_normal((3, 2))]),
    "scatter": (
        lambda x: ops.scatter(x, index=_fancy_index(), shape=(3, 2)),
        lambda x: torch.zeros(3, 2, dtype=x.dtype).index_add(0, torch.tensor(_fancy_index()), x),
        [RNG.standard_normal((4, 2))],
    ),
    "concatenate": (
        lambda x, y: mg.concatenate([x, y], axis=1),
        lambda x, y: torch.cat([x, y], dim=1),
        [RNG.standard_normal((2, 3)), RNG.standard_normal((2, 1))],
    ),
    "stack": (lambda x, y: mg.stack([x, y]), lambda x, y: torch.stack([x, y]), [RNG.standard_normal(3), RNG.standard_normal(3)]),
    # Compositions whose second derivatives are easy to get subtly wrong.
    "log_softmax_rows": (
        lambda x: mg.log_softmax(x, axis=1),
        lambda x: torch.log_softmax(x, dim=1),
        [RNG.standard_normal((2, 5))],
    ),
    "bce_with_logits": (
        lambda x, t: mg.nn.binary_cross_entropy_with_logits(x, t),
        lambda x, t: torch.nn.functional.binary_cross_entropy_with_logits(x, t),
        [_away_from_zero(6), RNG.uniform(0, 1, 6)],
    ),
    "bce_with_logits_at_zero": (  # the logit 0 exactly: sigmoid(0) = 1/2, not a subgradient of 0
        lambda x, t: mg.nn.binary_cross_entropy_with_logits(x, t),
        lambda x, t: torch.nn.functional.binary_cross_entropy_with_logits(x, t),
        [np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.5])],
    ),
    "pow": (lambda x, y: x**y, torch.pow, [RNG.uniform(0.5, 2.0, (2, 3)), RNG.standard_normal(3)]),
    "pow_negative_base": (
        lambda x: x ** mg.tensor([2.0, 3.0, -2.0]),
        lambda x: x ** torch.tensor([2.0, 3.0, -2.0], dtype=x.dtype),
        [-RNG.uniform(0.5, 2.0, (2, 3))],
    ),
    "rpow": (lambda x: 3.0**x, lambda x: 3.0**x, [RNG.standard_normal((2, 3))]),
    "softplus": (ops.softplus, torch.nn.functional.softplus, [RNG.standard_normal(5) * 5]),
    "maximum": (mg.maximum, torch.maximum, [RNG.standard_normal((2, 3)), RNG.standard_normal(3)]),
    "minimum": (mg.minimum, torch.minimum, [RNG.standard_normal((2, 3)), RNG.standard_normal(3)]),
    "select": (
        lambda x, y: ops.select(ops.less(x, y), x * y, y.sin()),
        lambda x, y: torch.where(x < y, x * y, y.sin()),
        [RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))],
    ),
    "stop_gradient": (lambda x: ops.stop_gradient(x) * x * x, lambda x: x.detach() * x * x, [RNG.standard_normal(4)]),
    "cumsum": (lambda x: (x * x).cumsum(axis=0), lambda x: (x * x).cumsum(dim=0), [RNG.standard_normal((4, 3))]),
    "erf": (ops.erf, torch.erf, [RNG.standard_normal((2, 3)) * 2]),
    # division with a rounded quotient: remainder's and fmod's rules take the quotient (a step)
    "remainder": (mg.remainder, torch.remainder, [RNG.uniform(-6, 6, (3, 4)), _away_from_zero(4) * 2]),
    "fmod": (mg.fmod, torch.fmod, [RNG.uniform(-6, 6, (3, 4)), _away_from_zero(4) * 2]),
    "floor_divide": (
        lambda x, y: mg.floor_divide(x, y) * x * y,
        lambda x, y: torch.div(x, y, rounding_mode="floor") * x * y,  # torch.floor_divide has no derivative
        [RNG.uniform(-6, 6, (3, 4)), _away_from_zero(4) * 2],
    ),
    **elementwise_cases(RNG, (2, 3)),
    **linalg_cases(RNG),
    "argmax": (
        lambda x: ops.argmax(x, axis=1, keepdims=True).astype(np.float64) * x,
        lambda x: x.argmax(dim=1, keepdim=True).to(x.dtype) * x,
        [RNG.standard_normal((3, 4))],
    ),
    **{
        name: (
            lambda x, y, op=getattr(ops, name): op(x, y).astype(np.float64) * x * y,
            lambda x, y, name=name: getattr(torch, {"equal": "eq"}.get(name, name))(x, y).to(x.dtype) * x * y,
            [np.array([0.0, 1.0, 2.0, -1.0]), np.array([0.0, 2.0, 1.0, -1.0])],
        )
        for name in ["greater", "greater_equal", "less", "less_equal", "equal", "not_equal"]
    },
}


def _second_derivatives_minigrad(fn, arrays, u, ws):
    xs = [mg.Tensor(a.copy(), requires_grad=True) for a in arrays]
    cotangent = mg.Tensor(u, requires_grad=True)
    out = fn(*xs)
    first = mg.gradients((out * cotangent).sum(), xs, create_graph=True)
    s = sum((g * mg.Tensor(w)).sum() for g, w in zip(first, ws))
    if not s.requires_grad:  # a linear primitive: its VJP does not depend on the inputs at all
        return [g.data for g in first], [np.zeros_like(a, dtype=np.float64) for a in arrays + [u]]
    second = mg.gradients(s, xs + [cotangent])
    return [g.data for g in first], [g.data for g in second]


def _second_derivatives_torch(fn, arrays, u, ws):
    xs = [torch.tensor(a, requires_grad=True) for a in arrays]
    cotangent = torch.tensor(u, requires_grad=True)
    out = fn(*xs)
    first = torch.autograd.grad((out * cotangent).sum(), xs, create_graph=True)
    s = sum((g * torch.tensor(w)).sum() for g, w in zip(first, ws))
    second = torch.autograd.grad(s, xs + [cotangent], allow_unused=True)
    zeros = [np.zeros_like(a, dtype=np.float64) for a in arrays + [u]]
    return [g.detach().numpy() for g in first], [z if g is None else g.numpy(force=True) for g, z in zip(second, zeros)]


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_double_backward_matches_torch(name, rng):
    mg_fn, torch_fn, arrays = PRIMITIVES[name]
    out_shape = mg_fn(*[mg.Tensor(a) for a in arrays]).shape
    u = rng.standard_normal(out_shape)
    ws = [rng.standard_normal(a.shape).astype(a.dtype) for a in arrays]
    got_first, got_second = _second_derivatives_minigrad(mg_fn, arrays, u, ws)
    want_first, want_second = _second_derivatives_torch(torch_fn, arrays, u, ws)
    tol = 1e-5 if any(a.dtype == np.float32 for a in arrays) else ORACLE_RTOL.get(name, 1e-10)
    for i, (got, want) in enumerate(zip(got_first, want_first)):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{name}: first derivative, input {i}")
    labels = [f"input {i}" for i in range(len(arrays))] + ["cotangent"]
    for label, got, want in zip(labels, got_second, want_second):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{name}: second derivative w.r.t. {label}")


def test_the_cases_cover_every_primitive():
    """A primitive added to minigrad.ops without a double-backward case here fails this test."""
    primitives = set(ops.PRIMITIVES) - CHECKED_IN_TEST_DISTRIBUTIONS
    used = set()
    for mg_fn, _, arrays in PRIMITIVES.values():
        xs = [mg.Tensor(a, requires_grad=True) for a in arrays]
        out = mg_fn(*xs)
        first = mg.gradients((out * mg.Tensor(np.ones(out.shape))).sum(), xs, create_graph=True)
        for tensor in [out, *first]:
            used |= {t.op for t in mg.topological_sort(tensor) if t.op is not None}
    assert primitives <= used, f"primitives without a double-backward case: {sorted(primitives - used)}"


# --------------------------------------------------------------------------- grad(grad(f)) on scalars
SCALAR_CASES = {
    # f, f'', at x
    "x**4": (lambda x: x**4, lambda x: 12 * x**2, 1.3),
    "sin(x)*exp(x)": (lambda x: x.sin() * x.exp(), lambda x: 2 * np.cos(x) * np.exp(x), 0.7),
    "tanh(x)": (lambda x: x.tanh(), lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2), 0.4),
    "log(x)/x": (lambda x: x.log() / x, lambda x: (2 * np.log(x) - 3) / x**3, 2.0),
    "sigmoid(x)": (lambda x: x.sigmoid(), lambda x: (s := 1 / (1 + np.exp(-x))) * (1 - s) * (1 - 2 * s), -0.8),
    "x**x": (lambda x: x**x, lambda x: x**x * ((np.log(x) + 1) ** 2 + 1 / x), 1.5),
}


@pytest.mark.parametrize("name", sorted(SCALAR_CASES))
def test_grad_of_grad_matches_closed_form(name):
    f, second, x = SCALAR_CASES[name]
    got = mg.grad(mg.grad(f))(mg.tensor(x))
    np.testing.assert_allclose(got.item(), second(x), rtol=1e-10, err_msg=f"f = {name}")


def test_third_derivative_composes():
    # d³/dx³ sin(x) = -cos(x)
    third = mg.grad(mg.grad(mg.grad(lambda x: x.sin())))(mg.tensor(0.3))
    np.testing.assert_allclose(third.item(), -np.cos(0.3), rtol=1e-12)


def test_backward_create_graph_keeps_the_first_graph_for_the_second_backward():
    # As in PyTorch, retain_graph defaults to create_graph: x.grad's graph reaches into the first graph.
    x = mg.tensor([0.3, -1.2], requires_grad=True)
    ((x * x).sin()).sum().backward(create_graph=True)
    first = x.grad
    x.grad = None
    first.sum().backward()
    xt = torch.tensor([0.3, -1.2], dtype=torch.float64, requires_grad=True)
    (gt,) = torch.autograd.grad((xt * xt).sin().sum(), xt, create_graph=True)
    gt.sum().backward()
    np.testing.assert_allclose(x.grad.data, xt.grad.numpy(), rtol=1e-12)


# --------------------------------------------------------------------------- hvp and hessian
def _rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def _mlp_loss(x):
    # a tiny network whose weights are the variable: matmul, tanh, broadcasting, reductions
    w1, w2 = x[:12].reshape(3, 4), x[12:16].reshape(4, 1)
    inputs = mg.Tensor(np.linspace(-1, 1, 15).reshape(5, 3))
    return ((inputs @ w1).tanh() @ w2).sigmoid().log().mean()


FUNCTIONS = {
    "rosenbrock": (_rosenbrock, lambda x: (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum(), 6),
    "mlp": (
        _mlp_loss,
        lambda x: torch.sigmoid(
            torch.tanh(torch.linspace(-1, 1, 15, dtype=torch.float64).reshape(5, 3) @ x[:12].reshape(3, 4))
            @ x[12:16].reshape(4, 1)
        ).log().mean(),
        16,
    ),
    "logsumexp_quartic": (
        lambda x: mg.logsumexp(x * x * x, axis=0) + (x**4).sum(),
        lambda x: torch.logsumexp(x**3, dim=0) + (x**4).sum(),
        5,
    ),
}


@pytest.mark.parametrize("mode", ["forward-over-reverse", "reverse-over-reverse"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_hvp_matches_torch(name, mode, rng):
    f, f_torch, n = FUNCTIONS[name]
    x, v = rng.standard_normal(n) * 0.5, rng.standard_normal(n)
    got = mg.hvp(f, mg.tensor(x), mg.tensor(v), mode=mode)
    _, want = torch.autograd.functional.hvp(f_torch, torch.tensor(x), torch.tensor(v))
    np.testing.assert_allclose(got.data, want.numpy(), rtol=1e-9, atol=1e-10, err_msg=f"{name}, {mode}")


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_hessian_matches_torch(name, rng):
    f, f_torch, n = FUNCTIONS[name]
    x = rng.standard_normal(n) * 0.5
    got = mg.hessian(f, mg.tensor(x))
    want = torch.autograd.functional.hessian(f_torch, torch.tensor(x))
    np.testing.assert_allclose(got.data, want.numpy(), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(got.data, got.data.T, rtol=1e-9, atol=1e-10, err_msg="a Hessian is symmetric")


@pytest.mark.parametrize("mode", ["forward-over-reverse", "reverse-over-reverse"])
def test_hvp_costs_a_constant_number_of_vjps_whatever_the_dimension(mode, rng):
    """Pearlmutter's point: H v costs a few gradients, never one pass per input like the Hessian."""
    counts = {}
    for n in (4, 64):
        x, v = mg.tensor(rng.standard_normal(n)), mg.tensor(rng.standard_normal(n))
        with count_vjps() as counter:
            mg.hvp(_rosenbrock, x, v, mode=mode)
        counts[n] = counter.vjps
    assert counts[4] == counts[64], f"VJPs evaluated for n=4 and n=64: {counts}"
    x = mg.tensor(rng.standard_normal(64))
    with count_vjps() as one_gradient:
        mg.grad(_rosenbrock)(x)
    with count_vjps() as hessian:
        mg.hessian(_rosenbrock, x)
    assert hessian.vjps == 64 * one_gradient.vjps, (hessian, one_gradient)
    assert counts[64] <= 5 * one_gradient.vjps, (counts, one_gradient)  # a few gradients, not 64


def test_hvp_rejects_an_unknown_mode():
    with pytest.raises(ValueError, match="reverse-over-reverse"):
        mg.hvp(_rosenbrock, mg.tensor(np.ones(3)), mg.tensor(np.ones(3)), mode="sideways")


# --------------------------------------------------------------------------- Adam against torch.optim.Adam
@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_adam_matches_torch(weight_decay, rng):
    start = rng.standard_normal((3, 2))
    p = mg.nn.Parameter(start.copy())
    pt = torch.tensor(start.copy(), requires_grad=True)
    opt = mg.optim.Adam([p], lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=weight_decay)
    opt_t = torch.optim.Adam([pt], lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=weight_decay)
    target = rng.standard_normal((3, 2))
    for _ in range(25):
        opt.zero_grad()
        ((p - mg.Tensor(target)) ** 4).sum().backward()
        opt.step()
        opt_t.zero_grad()
        ((pt - torch.tensor(target)) ** 4).sum().backward()
        opt_t.step()
    np.testing.assert_allclose(p.data, pt.detach().numpy(), rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------- frozen parameters
def _fine_tuning_model(freeze_backbone):
    rng = np.random.default_rng(0)
    backbone = mg.nn.MLP([4, 16, 16, 16], rng=rng)
    head = mg.nn.Linear(16, 1, rng=rng)
    backbone.requires_grad_(not freeze_backbone)
    x = mg.Tensor(rng.standard_normal((8, 4)))
    return backbone, head, lambda: (head(backbone(x).tanh()) ** 2).mean()


def test_frozen_parameters_get_no_grad_and_cost_no_backward_work():
    counts = {}
    for frozen in (False, True):
        backbone, head, loss = _fine_tuning_model(frozen)
        with count_vjps() as counter:
            loss().backward()
        counts[frozen] = counter.vjps
        assert all(p.grad is not None for p in head.parameters())
        if frozen:
            assert all(p.grad is None for p in backbone.parameters()), "a frozen parameter got a .grad"
    # The frozen backbone records no graph at all, so only the head's operations are walked: its
    # matmul and bias add, the square, the mean (sum, divide). Unfrozen, backward also runs the
    # backbone's 3 matmuls, 3 bias adds, 2 hidden tanh and the tanh on its output.
    assert counts[True] == 5, counts
    assert counts[False] == counts[True] + 9, counts


def test_frozen_parameter_in_the_middle_still_passes_gradients_through():
    """The GAN generator step: the discriminator is frozen, yet the gradient flows through it."""
    rng = np.random.default_rng(1)
    generator, discriminator = mg.nn.Linear(2, 3, rng=rng), mg.nn.MLP([3, 5, 1], rng=rng)
    discriminator.requires_grad_(False)
    z = mg.Tensor(rng.standard_normal((4, 2)))
    with count_vjps() as counter:
        discriminator(generator(z)).sum().backward()
    assert all(p.grad is None for p in discriminator.parameters())
    assert all(p.grad is not None and np.abs(p.grad.data).sum() > 0 for p in generator.parameters())
    # 8 VJPs: the generator's matmul and add, the discriminator's 2 matmuls, 2 adds and tanh, the sum.
    # matmul skips the adjoint of an operand that needs none (frozen weights, the data z: each would
    # cost a whole matrix product); the elementwise add does not bother, so the discriminator's two
    # frozen biases get adjoints that the engine drops.
    assert counter == mg.autograd.VJPCount(vjps=8, discarded=2), counter


def test_count_vjps_nests_and_stops_counting_on_exit():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with count_vjps() as outer:
        (x * x).sum().backward()
        with count_vjps() as inner:
            (x.exp()).sum().backward()
    (x.sin()).sum().backward()
    assert (inner.vjps, outer.vjps) == (2, 4)
