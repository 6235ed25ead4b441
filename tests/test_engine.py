"""The backward engine: graph shapes, deep graphs, repeated and higher-order backward, grad modes, memory.

PyTorch is the oracle for behaviour that is a convention rather than mathematics: gradients
accumulate into leaves across backward calls, `retain_graph`, `retain_grad`, double backward.
"""

import gc
import sys
import weakref

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad.errors import DtypeError, GraphError
from minigrad.ops import Primitive

RNG_SEED = 20240601


def rng(salt=0):
    return np.random.default_rng(RNG_SEED + salt)


def counted_square():
    """x² as a custom primitive whose VJP rule counts its calls."""
    calls = []

    def vjp(g, out, x):
        calls.append(1)
        return (g * 2.0 * x,)

    square = Primitive("counted_square", forward=np.square, vjp=vjp, jvp=lambda t, out, x: t[0] * 2.0 * x)
    return square, calls


# --------------------------------------------------------------------------- graph shapes
def test_diamond_runs_the_shared_vjp_once_and_sums_both_paths():
    square, calls = counted_square()
    x = mg.tensor(0.7, requires_grad=True)
    s = square(x)  # shared by both branches of the diamond
    y = s.sin() * s.exp() + s
    y.backward()
    assert len(calls) == 1, f"the shared node's VJP ran {len(calls)} times"
    v = 0.49
    expected = (np.cos(v) * np.exp(v) + np.sin(v) * np.exp(v) + 1.0) * 2 * 0.7
    np.testing.assert_allclose(x.grad.data, expected, rtol=1e-12)


def test_diamond_vjp_count_equals_the_number_of_operations():
    x = mg.tensor(rng().standard_normal(3), requires_grad=True)
    a = x * 2.0
    b = x.exp()
    y = (a * b + a).sum()
    n_ops = sum(not t.is_leaf for t in mg.topological_sort(y))
    with mg.autograd.count_vjps() as count:
        y.backward()
    assert n_ops == 5 and count.vjps == n_ops, f"{count.vjps} VJPs for {n_ops} operations"
    np.testing.assert_allclose(x.grad.data, 2 * np.exp(x.data) * (1 + x.data) + 2)


@pytest.mark.parametrize(
    "name, mg_fn, torch_fn",
    [
        ("x*x", lambda x: x * x, lambda x: x * x),
        ("x+x+x", lambda x: x + x + x, lambda x: x + x + x),
        ("x*x*x", lambda x: x * x * x, lambda x: x * x * x),
        ("x@x", lambda x: x @ x, lambda x: x @ x),
        ("fan-out", lambda x: (lambda h: h.tanh() * h + h.sum())(x * 3.0), lambda x: (lambda h: h.tanh() * h + h.sum())(x * 3.0)),
        ("x/x", lambda x: x / x.sin(), lambda x: x / x.sin()),
    ],
)
def test_reused_nodes_accumulate_like_torch(name, mg_fn, torch_fn):
    data = rng(1).standard_normal((3, 3))
    u = rng(2).standard_normal((3, 3))
    x = mg.tensor(data, requires_grad=True)
    mg_fn(x).backward(u)
    t = torch.tensor(data, requires_grad=True)
    torch_fn(t).backward(torch.tensor(u))
    np.testing.assert_allclose(x.grad.data, t.grad.numpy(), rtol=1e-12, err_msg=name)


def test_100k_deep_chain_backward_without_touching_the_recursion_limit():
    limit = sys.getrecursionlimit()
    x = mg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.00001
    assert mg.count_nodes_edges(y) == (200_001, 200_000)  # the chain, plus one constant per step
    y.backward()
    np.testing.assert_allclose(x.grad.data, 1.00001**100_000, rtol=1e-9)
    assert sys.getrecursionlimit() == limit, "backward changed the recursion limit"
    assert limit < 100_000, f"the recursion limit is {limit}: this test proves nothing"


def test_deep_retained_graph_is_freed_without_recursion():
    x = mg.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y.sin()
    y.backward(retain_graph=True)
    probe = weakref.ref(y)
    del y  # deallocating 100k nested tensors must not overflow the C stack
    assert probe() is None


# --------------------------------------------------------------------------- repeated and higher-order backward
@pytest.mark.filterwarnings(r"ignore:Using backward\(\) with create_graph=True")
def test_double_backward_matches_torch():
    data, v = rng(3).standard_normal(4), rng(4).standard_normal(4)
    x = mg.tensor(data, requires_grad=True)
    (x**3 * x.sin()).sum().backward(create_graph=True)
    first = x.grad
    assert first.requires_grad, "create_graph=True must record the backward pass"
    x.grad = None
    (first * v).sum().backward()

    t = torch.tensor(data, requires_grad=True)
    (t**3 * t.sin()).sum().backward(create_graph=True)
    t_first = t.grad
    t.grad = None
    (t_first * torch.tensor(v)).sum().backward()
    np.testing.assert_allclose(first.data, t_first.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.data, t.grad.numpy(), rtol=1e-12)
    closed_form = (6 * data * np.sin(data) + 6 * data**2 * np.cos(data) - data**3 * np.sin(data)) * v
    np.testing.assert_allclose(x.grad.data, closed_form, rtol=1e-12)


def test_without_create_graph_no_backward_graph_is_kept():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.is_leaf and not x.grad.requires_grad


def test_retain_graph_allows_identical_repeated_backward():
    x = mg.tensor(rng(5).standard_normal(3), requires_grad=True)
    y = (x.tanh() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.data.copy()
    x.grad = None
    y.backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.data, first)  # idempotent once the grad is reset
    y.backward()  # accumulates, as in PyTorch
    np.testing.assert_allclose(x.grad.data, 2 * first)
    with pytest.raises(GraphError, match=r"'sum'.*retain_graph=True"):
        y.backward()


def test_second_backward_through_a_freed_graph_names_the_op():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    h = x.tanh()
    (h * 2.0).sum().backward()
    with pytest.raises(GraphError, match="'tanh'") as error:
        (h * 3.0).sum().backward()  # h's graph was freed by the first backward
    assert "retain_graph=True" in str(error.value) and "(2,)" in str(error.value)


def test_grads_accumulate_across_calls_like_torch():
    xd, wd = rng(6).standard_normal(3), rng(7).standard_normal(3)
    x, w = mg.tensor(xd, requires_grad=True), mg.tensor(wd, requires_grad=True)
    (x * w).sum().backward()
    (x**2 * w).sum().backward()
    tx, tw = torch.tensor(xd, requires_grad=True), torch.tensor(wd, requires_grad=True)
    (tx * tw).sum().backward()
    (tx**2 * tw).sum().backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.grad.data, tw.grad.numpy(), rtol=1e-12)
    x.zero_grad()
    assert x.grad is None


def test_leaf_grads_are_independent_arrays():
    x, y = mg.tensor([1.0, 2.0], requires_grad=True), mg.tensor([3.0, 4.0], requires_grad=True)
    u = np.array([1.0, 1.0])
    (x + y).backward(u)  # add hands the same adjoint to both inputs
    x.grad.data *= 10.0
    np.testing.assert_array_equal(y.grad.data, [1.0, 1.0])
    np.testing.assert_array_equal(u, [1.0, 1.0])


def test_backward_with_an_explicit_grad_for_a_vector_output():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).backward(np.array([1.0, 0.0, -1.0]))
    np.testing.assert_allclose(x.grad.data, [2.0, 0.0, -6.0])
    x.grad = None
    (x * 2.0).backward(mg.tensor([1.0, 1.0, 1.0]))
    np.testing.assert_allclose(x.grad.data, [2.0, 2.0, 2.0])


def test_gradients_returns_without_touching_grad():
    x, unused = mg.tensor([1.0, 2.0], requires_grad=True), mg.tensor([5.0], requires_grad=True)
    gx, gu = mg.gradients((x * x).sum(), [x, unused])
    np.testing.assert_allclose(gx.data, [2.0, 4.0])
    np.testing.assert_array_equal(gu.data, [0.0])
    assert x.grad is None and unused.grad is None


# --------------------------------------------------------------------------- grad modes
def test_no_grad_enable_grad_and_set_grad_enabled_as_contexts():
    x = mg.tensor([1.0], requires_grad=True)
    with mg.no_grad():
        assert not mg.is_grad_enabled()
        y = x * 2.0
        with mg.enable_grad():
            z = x * 2.0
    with mg.set_grad_enabled(False):
        w = x * 2.0
    with mg.set_grad_enabled(True):
        v = x * 2.0
    assert mg.is_grad_enabled()
    assert not y.requires_grad and y.is_leaf and not w.requires_grad
    assert z.requires_grad and z.op == "mul" and v.requires_grad


def test_grad_mode_is_restored_after_an_exception():
    with pytest.raises(KeyError), mg.no_grad():
        raise KeyError("boom")
    assert mg.is_grad_enabled()


def test_grad_modes_as_decorators():
    x = mg.tensor([1.0], requires_grad=True)

    @mg.no_grad()
    def frozen(t):
        return t * 2.0

    @mg.enable_grad()
    def recorded(t):
        return t * 2.0

    @mg.set_grad_enabled(False)
    def also_frozen(t):
        return frozen(t) + t

    assert not frozen(x).requires_grad and not also_frozen(x).requires_grad
    with mg.no_grad():
        assert recorded(x).requires_grad
    assert mg.is_grad_enabled() and (x * 2.0).requires_grad
    assert frozen.__name__ == "frozen", "decorators keep the function's name"


# --------------------------------------------------------------------------- leaves, freezing, detach
def test_requires_grad_false_freezes_a_leaf():
    w = mg.tensor([1.0, 2.0])  # frozen
    b = mg.tensor([0.5, 0.5], requires_grad=True)
    x = mg.tensor([3.0, 4.0])
    (x * w + b).sum().backward()
    assert w.grad is None and x.grad is None
    np.testing.assert_allclose(b.grad.data, [1.0, 1.0])
    b.requires_grad_(False)
    with pytest.raises(GraphError, match="does not require grad"):
        (x * w + b).sum().backward()


def test_detach_cuts_the_graph_and_shares_data():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    d = y.detach()
    assert d.is_leaf and not d.requires_grad and np.shares_memory(d.data, y.data)
    (d * x).sum().backward()
    np.testing.assert_allclose(x.grad.data, y.data)  # d is a constant: no 2·3x term


def test_retain_grad_keeps_intermediate_grads_like_torch():
    data = rng(8).standard_normal(3)
    x = mg.tensor(data, requires_grad=True)
    h = (x * 2.0).retain_grad()
    k = h.tanh()
    (k * h).sum().backward()
    t = torch.tensor(data, requires_grad=True)
    th = t * 2.0
    th.retain_grad()
    (th.tanh() * th).sum().backward()
    np.testing.assert_allclose(h.grad.data, th.grad.numpy(), rtol=1e-12)
    assert k.grad is None, "intermediate tensors keep no grad unless asked"


def test_leaves_and_non_leaves():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    c = mg.tensor([3.0, 4.0])
    y = x * c
    assert x.is_leaf and c.is_leaf and not y.is_leaf
    assert x.op is None and y.op == "mul" and y.parents == (x, c) and x.parents == ()
    y.sum().backward()
    assert x.grad is not None and c.grad is None and y.grad is None
    with pytest.raises(GraphError, match="only leaves"):
        y.requires_grad_(False)


# --------------------------------------------------------------------------- dtypes
def test_float32_stays_float32_through_forward_and_backward():
    r = rng(9)
    x = mg.tensor(r.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    w = mg.tensor(r.standard_normal((3, 2)).astype(np.float32), requires_grad=True)
    steps = [x @ w]
    steps.append(steps[-1] * 2.0 + 1)
    steps.append(steps[-1].sigmoid() + steps[-1].tanh() ** 2 + steps[-1].relu() / 3)
    steps.append(mg.softmax(steps[-1], axis=-1) + mg.where(steps[-1] > 0, steps[-1], 0.0))
    steps.append(steps[-1][np.array([0, 0, 2])].max(axis=0) - steps[-1].mean(axis=0))
    steps.append(steps[-1].abs().sqrt().clip(0.0, 5.0).exp().log().sum())
    for i, s in enumerate(steps):
        assert s.dtype == np.float32, f"step {i} made {s.dtype}"
    steps[-1].backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float32
    assert mg.tensor([1.0, 2.0], dtype=np.float32).dtype == np.float32
    assert mg.tensor(np.float32(2.0)).dtype == np.float32


@pytest.mark.parametrize(
    "make",
    [
        lambda: mg.Tensor(np.array([1, 2]), requires_grad=True),
        lambda: mg.tensor([1, 2], dtype=np.int64, requires_grad=True),
        lambda: mg.tensor(np.array([True, False]), requires_grad=True),
        lambda: mg.tensor(np.array([1, 2])).requires_grad_(),
        lambda: mg.zeros(3, dtype=np.int32, requires_grad=True),
    ],
)
def test_integer_tensors_cannot_require_grad(make):
    with pytest.raises(DtypeError, match="int|bool"):
        make()


# --------------------------------------------------------------------------- memory
def _graph_scenarios():
    r = rng(10)

    def forward():
        x = mg.tensor(r.standard_normal((4, 3)), requires_grad=True)
        w = mg.tensor(r.standard_normal((3, 2)), requires_grad=True)
        return (x @ w).tanh().sum()

    def retained():
        out = forward()
        out.backward(retain_graph=True)
        return out

    def freed():
        out = forward()
        out.backward()
        return out

    def create_graph():
        x = mg.tensor(r.standard_normal(3), requires_grad=True)
        out = (x**3).sum()
        (g,) = mg.gradients(out, [x], create_graph=True)
        return (g * g).sum()

    def intermediate_grad():
        x = mg.tensor(r.standard_normal(3), requires_grad=True)
        h = x.sin().retain_grad()
        out = (h * h).sum()
        out.backward(retain_graph=True)
        return out

    def module():
        model = mg.nn.MLP([3, 4, 1], rng=r)
        return mg.nn.mse_loss(model(mg.tensor(r.standard_normal((5, 3)))), np.zeros((5, 1)))

    return [forward, retained, freed, create_graph, intermediate_grad, module]


@pytest.mark.parametrize("scenario", _graph_scenarios(), ids=lambda f: f.__name__)
def test_graphs_are_freed_by_reference_counting_alone(scenario):
    gc.collect()
    gc.disable()
    try:
        out = scenario()
        tensors = [out] + ([] if out.node is None or out.node.inputs is None else mg.topological_sort(out))
        for t in tensors:
            if t.node is not None and t.node.inputs is not None:
                assert all(p is not t for p in t.node.inputs), "a node points back to its output"
        probes = [weakref.ref(t) for t in tensors]
        del out, tensors, t
        alive = sum(p() is not None for p in probes)
        assert alive == 0, f"{alive} of {len(probes)} tensors survive without the cyclic collector"
    finally:
        gc.enable()


# --------------------------------------------------------------------------- graph walks
def test_topological_sort_lists_each_tensor_once_after_its_parents():
    x = mg.tensor(1.5, requires_grad=True)
    a, b = x * 2.0, x.exp()
    y = a * b + a
    order = mg.topological_sort(y)
    assert len(order) == len({id(t) for t in order}) == 6  # x, the constant 2.0, a, b, a*b and y
    position = {id(t): i for i, t in enumerate(order)}
    for t in order:
        assert all(position[id(p)] < position[id(t)] for p in t.parents)
    assert order[-1] is y
    assert mg.count_nodes_edges(y) == (6, 7)


def test_evaluate_reruns_the_forward_pass_with_new_leaf_values():
    x = mg.tensor(1.0, requires_grad=True)
    w = mg.tensor(2.0)
    y = (x * w).exp() + x
    np.testing.assert_allclose(mg.evaluate(y, {x: np.array(0.5)}), np.exp(1.0) + 0.5)
    np.testing.assert_allclose(mg.evaluate(y, {}), y.data)


def test_primitives_do_not_import_the_engine():
    """ops.py is below the engine: it imports unbroadcast from its own module, not from autograd."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(mg.ops.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "autograd" not in imported, f"minigrad/ops.py imports {sorted(imported)}"
    assert mg.unbroadcast is mg.autograd.unbroadcast  # the old public names keep working


def test_record_hooks_see_every_node_in_order_and_leave_cleanly():
    """Observers at once (a hook added by hand, a memory tracker, a jit trace inside it, a tracker inside a
    trace): each sees every recorded node, and leaving one keeps the others."""
    from minigrad import jit
    from minigrad.grad_mode import add_record_hook, remove_record_hook, state

    seen = []
    hook = seen.append
    add_record_hook(hook)
    try:
        with mg.track_saved_bytes() as tracker:
            graph = jit.trace(lambda x: (x * x).exp(), np.ones(100))

        def tracked(x):
            with mg.track_saved_bytes() as inner:
                y = (x * x).exp()
            assert inner.peak > 0
            return y.sin()

        inner_graph = jit.trace(tracked, np.ones(100))
    finally:
        remove_record_hook(hook)
    assert state.record_hooks == ()
    assert [n.op.name for n in seen] == ["mul", "exp", "mul", "exp", "sin"]
    assert [n.op for n in graph.nodes] == ["input", "mul", "exp"] and tracker.peak > 0
    assert [n.op for n in inner_graph.nodes] == ["input", "mul", "exp", "sin"]


def test_a_node_freed_during_backward_is_a_clear_graph_error():
    """A custom backward that runs a backward of its own through the outer graph frees nodes the
    outer pass has still to reach: a GraphError naming the op, not a TypeError from deep inside."""
    class FreesItsInput(mg.Function):
        @staticmethod
        def forward(ctx, y):
            ctx.save_for_backward(y)
            return y * 1.0

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            with mg.enable_grad():
                y.sum().backward()  # frees y's own node, which the outer backward reaches next
            return grad

    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    with pytest.raises(GraphError, match="already freed.*'mul'"):
        FreesItsInput.apply(y).sum().backward()
