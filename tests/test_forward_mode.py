"""Forward mode: every primitive's JVP rule agrees with its VJP rule and with PyTorch's forward AD.

Two independent checks per primitive F, on random inputs away from kinks:

* adjointness, ⟨u, J v⟩ = ⟨Jᵀu, v⟩: `minigrad.jvp` (JVP rules) against `minigrad.vjp` (VJP
  rules), so a JVP rule and a VJP rule that disagree cannot both pass;
* PyTorch's forward-mode AD (`torch.func.jvp`, float64) as the oracle for J v itself.

A coverage test proves that the cases below exercise every `Primitive` in `minigrad.ops`.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.func

import minigrad as mg
from minigrad import ops
from oracles import CHECKED_IN_TEST_DISTRIBUTIONS, ORACLE_RTOL, elementwise_cases, linalg_cases

RNG = np.random.default_rng(3)


def _normal(*shape, rng=RNG):
    return rng.standard_normal(shape)


def _positive(*shape):
    return RNG.uniform(0.5, 2.0, shape)


def _away_from_zero(*shape):
    """|x| >= 0.3, so no kink (relu, abs, clip at ±1) is straddled by the check."""
    return RNG.choice([-1.0, 1.0], shape) * RNG.uniform(0.3, 2.0, shape)


_MASK = RNG.random((3, 4)) > 0.5
_FANCY = np.array([0, 2, 2, 1])  # a repeated index: the scatter must accumulate

# name -> (minigrad function, torch function, inputs); both functions take the same inputs.
CASES = {
    "add": (lambda x, y: x + y, lambda x, y: x + y, [_normal(3, 4), _normal(4)]),
    "sub": (lambda x, y: x - y, lambda x, y: x - y, [_normal(3, 1), _normal(3, 4)]),
    "mul": (lambda x, y: x * y, lambda x, y: x * y, [_normal(2, 3, 4), _normal(3, 1)]),
    "div": (lambda x, y: x / y, lambda x, y: x / y, [_normal(3, 4), _away_from_zero(3, 4)]),
    "neg": (lambda x: -x, lambda x: -x, [_normal(5)]),
    "power": (lambda x: x**2.5, lambda x: x**2.5, [_positive(3, 4)]),
    "sqrt": (lambda x: x.sqrt(), torch.sqrt, [_positive(4)]),
    "exp": (lambda x: x.exp(), torch.exp, [_normal(3, 4)]),
    "log": (lambda x: x.log(), torch.log, [_positive(3, 4)]),
    "sin": (lambda x: x.sin(), torch.sin, [_normal(3, 4)]),
    "cos": (lambda x: x.cos(), torch.cos, [_normal(3, 4)]),
    "tanh": (lambda x: x.tanh(), torch.tanh, [_normal(3, 4)]),
    "sigmoid": (lambda x: x.sigmoid(), torch.sigmoid, [_normal(3, 4)]),
    "log_softmax": (lambda x: mg.log_softmax(x, axis=1), lambda x: torch.log_softmax(x, dim=1), [_normal(3, 4)]),
    "softmax": (lambda x: mg.softmax(x, axis=0), lambda x: torch.softmax(x, dim=0), [_normal(3, 4)]),
    "relu": (lambda x: x.relu(), torch.relu, [_away_from_zero(3, 4)]),
    "abs": (lambda x: x.abs(), torch.abs, [_away_from_zero(3, 4)]),
    "clip": (lambda x: x.clip(-1.0, 1.0), lambda x: x.clamp(-1.0, 1.0), [_away_from_zero(3, 4) * 1.5]),
    **{name: (lambda x, name=name: getattr(x, name)() * x, lambda x, name=name: getattr(x, name)() * x, [_away_from_zero(3, 4) * 2.3])
       for name in ("floor", "ceil", "trunc", "round")},
    "astype": (lambda x: x.astype(np.float32), lambda x: x.to(torch.float32), [_normal(3, 4)]),
    "where": (
        lambda x, y: mg.where(_MASK, x, y),
        lambda x, y: torch.where(torch.from_numpy(_MASK), x, y),
        [_normal(3, 4), _normal(3, 4)],
    ),
    "matmul": (lambda x, y: x @ y, lambda x, y: x @ y, [_normal(2, 3, 4), _normal(4, 5)]),
    "matmul_vector": (lambda x, y: x @ y, lambda x, y: x @ y, [_normal(4), _normal(4, 3)]),
    "sum": (lambda x: x.sum(axis=1, keepdims=True), lambda x: x.sum(dim=1, keepdim=True), [_normal(3, 4)]),
    "sum_all": (lambda x: x.sum(), torch.sum, [_normal(3, 4)]),
    "max": (lambda x: x.max(axis=0), lambda x: x.amax(dim=0), [_normal(3, 4)]),
    "reshape": (lambda x: x.reshape(4, 3), lambda x: x.reshape(4, 3), [_normal(3, 4)]),
    "transpose": (lambda x: x.transpose(2, 0, 1), lambda x: x.permute(2, 0, 1), [_normal(2, 3, 4)]),
    "broadcast_to": (lambda x: x.broadcast_to((2, 3, 4)), lambda x: x.broadcast_to((2, 3, 4)), [_normal(3, 1)]),
    "getitem": (lambda x: x[1:, ::2], lambda x: x[1:, ::2], [_normal(3, 4)]),
    "getitem_fancy": (lambda x: x[_FANCY], lambda x: x[torch.from_numpy(_FANCY)], [_normal(3, 4)]),
    "scatter": (
        lambda x: ops.scatter(x, index=_FANCY, shape=(3, 4)),
        lambda x: torch.zeros(3, 4, dtype=x.dtype).index_put((torch.from_numpy(_FANCY),), x, accumulate=True),
        [_normal(4, 4)],
    ),
    "concatenate": (
        lambda x, y: mg.concatenate([x, y], axis=1),
        lambda x, y: torch.cat([x, y], dim=1),
        [_normal(3, 2), _normal(3, 4)],
    ),
    # derivative factors (what relu, abs, clip and max's VJP rules multiply by): zero derivative
    "relu_mask": (ops.relu_mask, lambda x: (x > 0).to(x.dtype), [_away_from_zero(3, 4)]),
    "sign": (ops.sign, torch.sign, [_away_from_zero(3, 4)]),
    "clip_mask": (
        lambda x: ops.clip_mask(x, low=-1.0, high=1.0),
        lambda x: ((x >= -1.0) & (x <= 1.0)).to(x.dtype),
        [_away_from_zero(3, 4) * 1.5],
    ),
    "argmax_weights": (
        lambda x: ops.argmax_weights(x, x.max(axis=0), axis=(0,)),
        lambda x: (x == x.amax(dim=0, keepdim=True)).to(x.dtype),
        [_normal(3, 4)],
    ),
    # the binary power (tensor exponent, scalar base), softplus, maximum/minimum and where with a
    # mask computed in the graph (what jit.compile traces `where(x > 0, ...)` into)
    "pow": (lambda x, y: x**y, torch.pow, [_positive(3, 4), _normal(4)]),
    "pow_negative_base": (lambda x: x ** mg.tensor([2.0, 3.0, -1.0, 4.0]), lambda x: x ** torch.tensor([2.0, 3.0, -1.0, 4.0], dtype=x.dtype), [-_positive(3, 4)]),
    "rpow": (lambda x: 2.0**x, lambda x: 2.0**x, [_normal(3, 4)]),
    "softplus": (ops.softplus, torch.nn.functional.softplus, [_normal(3, 4) * 5]),
    "maximum": (mg.maximum, torch.maximum, [_normal(3, 4), _normal(4)]),
    "minimum": (mg.minimum, torch.minimum, [_normal(3, 4), _normal(4)]),
    "select": (lambda x, y: ops.select(ops.greater(x, y), x, y), lambda x, y: torch.where(x > y, x, y), [_normal(3, 4), _normal(3, 4)]),
    "stop_gradient": (lambda x: ops.stop_gradient(x) * x, lambda x: x.detach() * x, [_normal(3, 4)]),
    "maximum_weight": (ops.maximum_weight, lambda x, y: (x > y).to(x.dtype) + 0.5 * (x == y).to(x.dtype), [_normal(3, 4), _normal(3, 4)]),
    "pow_zero_base": (
        lambda x, y: ops.pow_zero_base(x, y).astype(np.float64),
        lambda x, y: ((x == 0) & (y >= 0)).to(x.dtype),
        [np.array([0.0, 0.0, 1.0, -1.0]), np.array([1.0, -1.0, 0.0, 2.0])],
    ),
    "cumsum": (lambda x: x.cumsum(axis=1), lambda x: x.cumsum(dim=1), [_normal(3, 4)]),
    "erf": (ops.erf, torch.erf, [_normal(3, 4) * 2]),
    "remainder": (mg.remainder, torch.remainder, [RNG.uniform(-6, 6, (3, 4)), _away_from_zero(4) * 2]),
    "fmod": (mg.fmod, torch.fmod, [RNG.uniform(-6, 6, (3, 4)), _away_from_zero(4) * 2]),
    "floor_divide": (  # a step: its tangent is zeros (torch.floor_divide has no derivative, this div has)
        lambda x, y: mg.floor_divide(x, y) * x,
        lambda x, y: torch.div(x, y, rounding_mode="floor") * x,
        [RNG.uniform(-6, 6, (3, 4)), _away_from_zero(4) * 2],
    ),
    **elementwise_cases(RNG, (3, 4)),
    **linalg_cases(RNG),
    "argmax": (lambda x: ops.argmax(x, axis=1, keepdims=False).astype(np.float64), lambda x: x.argmax(dim=1).to(x.dtype), [_normal(3, 4)]),
    **{
        name: (
            lambda x, y, op=getattr(ops, name): op(x, y).astype(np.float64),
            lambda x, y, name=name: getattr(torch, {"equal": "eq"}.get(name, name))(x, y).to(x.dtype),
            [np.array([0.0, 1.0, 2.0, -1.0]), np.array([0.0, 2.0, 1.0, -1.0])],
        )
        for name in ["greater", "greater_equal", "less", "less_equal", "equal", "not_equal"]
    },
}
TOLERANCE = {"astype": dict(rtol=1e-6, atol=1e-6)}  # the float32 output rounds the tangent too
TOLERANCE.update({name: dict(rtol=rtol, atol=1e-12) for name, rtol in ORACLE_RTOL.items()})
EXACT = dict(rtol=1e-10, atol=1e-12)


def _minigrad_jvp(f, inputs, tangents):
    out, tangent = mg.jvp(f, [mg.tensor(x) for x in inputs], [mg.tensor(t) for t in tangents])
    return out.data, tangent.data


@pytest.mark.parametrize("name", CASES)
def test_jvp_is_adjoint_of_vjp(name, rng):
    """⟨u, J v⟩ from the JVP rules equals ⟨Jᵀu, v⟩ from the VJP rules, summed over the inputs."""
    f, _, inputs = CASES[name]
    tangents = [rng.standard_normal(x.shape) for x in inputs]
    out, jv = _minigrad_jvp(f, inputs, tangents)
    u = rng.standard_normal(np.shape(out))
    _, vjp_fn = mg.vjp(f, *[mg.tensor(x) for x in inputs])
    jtu = [g.data for g in vjp_fn(mg.tensor(u, dtype=np.asarray(out).dtype))]
    forward = float(np.sum(u * jv))
    reverse = sum(float(np.sum(g * t)) for g, t in zip(jtu, tangents))
    np.testing.assert_allclose(forward, reverse, **TOLERANCE.get(name, EXACT), err_msg=f"{name}: <u, Jv> != <J^T u, v>")


@pytest.mark.parametrize("name", CASES)
def test_jvp_matches_torch_forward_mode(name, rng):
    """Value and tangent agree with `torch.func.jvp` in float64."""
    f, f_torch, inputs = CASES[name]
    tangents = [rng.standard_normal(x.shape) for x in inputs]
    out, jv = _minigrad_jvp(f, inputs, tangents)
    torch_out, torch_jv = torch.func.jvp(
        f_torch, tuple(torch.from_numpy(x) for x in inputs), tuple(torch.from_numpy(t) for t in tangents)
    )
    tolerance = TOLERANCE.get(name, EXACT)
    np.testing.assert_allclose(out, torch_out.numpy(), **tolerance, err_msg=f"{name}: value")
    np.testing.assert_allclose(jv, torch_jv.numpy(), **tolerance, err_msg=f"{name}: tangent")
    assert np.shape(jv) == tuple(torch_jv.shape), f"{name}: tangent shape {np.shape(jv)}, torch {tuple(torch_jv.shape)}"


def test_cases_cover_every_primitive():
    """A primitive added to minigrad.ops without a case here fails this test, by name."""
    primitives = set(ops.PRIMITIVES) - CHECKED_IN_TEST_DISTRIBUTIONS
    exercised = set()
    for f, _, inputs in CASES.values():
        out = f(*[mg.tensor(x, requires_grad=True) for x in inputs])
        exercised |= {t.op for t in mg.topological_sort(out) if t.op is not None}
    assert primitives <= exercised, f"no forward-mode case exercises {sorted(primitives - exercised)}"


def test_jvp_of_composite_matches_torch(rng):
    """Tangents flow through a chain of primitives with fan-out, not only through one rule."""

    def f(x, w):  # torch tensors have the same methods: one function for both libraries
        h = (x @ w).tanh()
        return h * h.sum() - x[:, :1] * 2.0

    x, w, tx, tw = _normal(3, 4, rng=rng), _normal(4, 2, rng=rng), _normal(3, 4, rng=rng), _normal(4, 2, rng=rng)
    _, jv = _minigrad_jvp(f, [x, w], [tx, tw])
    _, torch_jv = torch.func.jvp(f, tuple(map(torch.from_numpy, (x, w))), tuple(map(torch.from_numpy, (tx, tw))))
    np.testing.assert_allclose(jv, torch_jv.numpy(), **EXACT)


def test_jvp_of_a_constant_function_is_zero():
    out, tangent = mg.jvp(lambda x: mg.tensor([1.0, 2.0]), (mg.tensor(3.0),), (mg.tensor(1.0),))
    np.testing.assert_array_equal(tangent.data, np.zeros(2))


def test_jvp_leaves_no_tangent_behind(rng):
    """After `jvp`, neither inputs nor output carry tangents: a later plain computation is unaffected."""
    x = mg.tensor(_normal(3, rng=rng))
    out, _ = mg.jvp(lambda a: a.sin() * 2.0, (x,), (mg.tensor(np.ones(3)),))
    assert x._tangent is None and out._tangent is None
    assert (x * 2.0)._tangent is None


@pytest.mark.parametrize(
    "f, f_torch, shape",
    [
        (lambda x: (x * x).sum().reshape(1) * x[:2], lambda x: (x * x).sum() * x[:2], (4,)),
        (lambda x: (x.reshape(2, 3) @ x.reshape(3, 2)).tanh(), lambda x: torch.tanh(x.reshape(2, 3) @ x.reshape(3, 2)), (6,)),
    ],
)
def test_jacobian_forward_and_reverse_agree_with_torch(f, f_torch, shape, rng):
    x = _normal(*shape, rng=rng)
    expected = torch.func.jacfwd(f_torch)(torch.from_numpy(x)).numpy()
    for mode in ("forward", "reverse"):
        np.testing.assert_allclose(mg.jacobian(f, x, mode=mode).data, expected, **EXACT, err_msg=mode)


def test_jacobian_rejects_unknown_mode():
    with pytest.raises(ValueError, match="mode must be 'reverse' or 'forward', got 'sideways'"):
        mg.jacobian(lambda x: x, np.ones(2), mode="sideways")


def test_modes_benchmark_quick_run_prints_json_lines():
    """The benchmark runs and reports both modes of both libraries (it checks their Jacobians agree first)."""
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_modes.py"
    done = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert records[0]["benchmark"] == "machine"
    seen = {(r["benchmark"], r["size"], r["mode"]): r for r in records[1:]}
    assert set(seen) == {(f"jacobian_{kind}", size, mode) for kind in ("loss", "curve") for size in (4, 16)
                         for mode in ("forward", "reverse")}
    for (benchmark, size, mode), record in seen.items():
        many = (benchmark == "jacobian_loss") == (mode == "forward")  # N JVPs for a loss, M VJPs for a curve
        assert record["passes"] == (size if many else 1)
        assert record["minigrad"] > 0 and record["pytorch"] > 0 and record["ratio"] > 0
