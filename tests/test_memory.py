"""minigrad.memory: counting saved bytes, tracking their peak, and gradient checkpointing.

Checkpointed gradients are compared with plain backward on the same functions (random MLPs,
several inputs and outputs, randomness inside the checkpointed function, parameters it closes
over); `saved_bytes` with counts done by hand.
"""

import json
import weakref
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.grad_mode import state
from minigrad.memory import buffer_of

F8 = 8  # bytes per float64


def leaf(shape, seed=0, requires_grad=True):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=requires_grad)


def grads_of(tensors):
    return [None if t.grad is None else t.grad.data.copy() for t in tensors]


def assert_same_grads(got, expected):
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert (g is None) == (e is None), f"gradient {i}: one is None"
        if g is not None:
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14, err_msg=f"gradient {i}")


def checkpoint_nodes(output):
    return [t.node for t in mg.topological_sort(output) if t.op == "checkpoint"]


# --------------------------------------------------------------------------- saved_bytes
def test_saved_bytes_hand_count_chain():
    x = leaf((3, 4))
    y = x.tanh()  # saves x: a leaf, not counted
    assert mg.saved_bytes(y) == 0
    z = y * y  # saves y (one buffer, held twice)
    assert mg.saved_bytes(z) == 12 * F8
    out = z.sum()  # saves z
    assert mg.saved_bytes(out) == 24 * F8


def test_saved_bytes_counts_views_and_shared_subexpressions_once():
    x = leaf((4, 5))
    y = x.exp()
    flat = y.reshape(20)  # a view of y's buffer
    t = y.T  # another view
    out = (flat * 2.0).sum() + (t * t).sum() + (y * y).sum()
    # held: y's buffer (by reshape, transpose and the three multiplications, through views),
    # flat * 2, t * t and y * y (by the sums), and four 0-d partial sums (by the two additions)
    expected = buffer_of(y.data).nbytes + 3 * 20 * F8 + 4 * F8
    assert mg.saved_bytes(out) == expected


def test_saved_bytes_ignores_leaves_and_constants_and_freed_graphs():
    x, w = leaf((2, 3)), leaf((3, 3), seed=1)
    out = (x @ w).sum()
    assert mg.saved_bytes(out) == 2 * 3 * F8  # only x @ w; x and w are leaves
    out.backward()
    assert mg.saved_bytes(out) == 0
    with mg.no_grad():
        assert mg.saved_bytes((x @ w).sum()) == 0


# --------------------------------------------------------------------------- track_saved_bytes
def test_tracker_peak_matches_saved_bytes_and_returns_to_zero():
    x = leaf((8, 8))
    with mg.track_saved_bytes() as tracker:
        h = x
        for _ in range(10):
            h = (h @ x).tanh()
        out = h.sum()
        at_end_of_forward = mg.saved_bytes(out)
        assert tracker.current == at_end_of_forward
        out.backward()
        del h
    assert tracker.peak == at_end_of_forward
    assert tracker.current == 0
    assert state.record_hooks == ()


def test_trackers_nest():
    x = leaf((5,))
    with mg.track_saved_bytes() as outer:
        a = x.exp() * 2.0
        with mg.track_saved_bytes() as inner:
            b = (a * a).sum()
        assert inner.peak == 2 * 5 * F8  # a (saved by a * a) and a * a (saved by the sum)
    assert outer.peak == 3 * 5 * F8  # and x.exp(), saved by * 2.0 before the inner block
    del b


def test_tracker_peak_falls_as_backward_frees_the_graph():
    """The engine lets go of activations as it passes them, so a checkpointed chain peaks at O(√N)."""
    depth = 36
    x = leaf((16, 16))
    layers = [nn.Sequential(nn.Linear(16, 16, rng=np.random.default_rng(i)), nn.Tanh()) for i in range(depth)]
    peaks = {}
    for segments in (1, 6):
        with mg.track_saved_bytes() as tracker:
            mg.checkpoint_sequential(layers, segments, x).sum().backward()
        peaks[segments] = tracker.peak
    assert peaks[6] <= 2.5 / math.sqrt(depth) * peaks[1], peaks


# --------------------------------------------------------------------------- checkpoint
@pytest.mark.parametrize("seed", range(6))
def test_checkpointed_random_mlps_match_plain_backward(seed):
    rng = np.random.default_rng(seed)
    sizes = [int(n) for n in rng.integers(2, 9, size=rng.integers(3, 7))]
    activation = ["tanh", "relu", "sigmoid"][seed % 3]
    model = nn.MLP(sizes, activation=activation, rng=rng)
    x = mg.tensor(rng.standard_normal((4, sizes[0])), requires_grad=True)
    params = [x] + model.parameters()

    (model(x) ** 2).sum().backward()
    expected = grads_of(params)
    for p in params:
        p.grad = None
    out = mg.checkpoint(model, x)
    assert out.op == "checkpoint"
    assert {id(t) for t in out.parents} == {id(t) for t in params}  # the input, and the weights fn closes over
    (out**2).sum().backward()
    assert_same_grads(grads_of(params), expected)


def test_checkpoint_several_inputs_outputs_and_non_tensor_arguments():
    a, b, w = leaf((3, 4)), leaf((4,), seed=1), leaf((3, 4), seed=2)

    def fn(a, power, b):
        return (a * b + w) ** power, (a - w).exp().sum(axis=0)

    def loss(first, second):
        return (first * first).sum() + (second * b).sum()

    loss(*fn(a, 3, b)).backward()
    expected = grads_of([a, b, w])
    for t in (a, b, w):
        t.grad = None
    first, second = mg.checkpoint(fn, a, 3, b)
    assert first.shape == (3, 4) and second.shape == (4,)
    assert len(checkpoint_nodes(second)) == 1
    loss(first, second).backward()
    assert_same_grads(grads_of([a, b, w]), expected)


def test_checkpoint_gives_parameters_it_closes_over_their_gradients():
    layer = nn.Linear(3, 2, rng=np.random.default_rng(0))
    x = leaf((5, 3), requires_grad=False)  # data: only the closed-over parameters need gradients
    out = mg.checkpoint(lambda inp: layer(inp).tanh(), x)
    assert out.requires_grad
    out.sum().backward()
    got = grads_of(layer.parameters())
    layer.zero_grad()
    layer(x).tanh().sum().backward()
    assert_same_grads(got, grads_of(layer.parameters()))


def dropout(x, p=0.5):
    return x * mg.tensor((np.random.rand(*x.shape) > p) / (1 - p))


def test_checkpoint_replays_numpy_global_randomness():
    x = leaf((50,))
    np.random.seed(3)
    out = mg.checkpoint(lambda v: dropout(v.tanh()), x)
    np.random.rand(10)  # the stream moves on between forward and backward
    state_before_backward = np.random.get_state()[1].copy()
    out.sum().backward()
    np.testing.assert_array_equal(np.random.get_state()[1], state_before_backward)  # restored afterwards
    got = x.grad.data.copy()
    x.grad = None
    np.random.seed(3)
    dropout(x.tanh()).sum().backward()
    np.testing.assert_array_equal(got, x.grad.data)


def test_checkpoint_replays_listed_generators_and_shows_why_it_must():
    x = leaf((200,))
    rng = np.random.default_rng(5)

    def noisy(v):
        return v * mg.tensor(rng.random(v.shape) > 0.5)

    expected_rng = np.random.default_rng(5)
    expected = (expected_rng.random(200) > 0.5).astype(float)
    mg.checkpoint(noisy, x, generators=[rng]).sum().backward()
    np.testing.assert_array_equal(x.grad.data, expected)
    x.grad = None
    rng = np.random.default_rng(5)
    mg.checkpoint(noisy, x).sum().backward()  # rng not listed: the recomputation draws a new mask
    assert not np.array_equal(x.grad.data, expected)


def test_checkpoint_replays_only_functions_that_draw():
    x = leaf((50,))
    quiet = mg.checkpoint(lambda v: v.exp(), x)
    assert quiet.node.params["ctx"].rng is None, "a function drawing nothing needs no random state in backward"
    noisy = mg.checkpoint(lambda v: v * mg.tensor(np.random.rand(50) > 0.5), x)
    assert noisy.node.params["ctx"].rng is not None
    rng = np.random.default_rng(7)
    listed = mg.checkpoint(lambda v: v * mg.tensor(rng.random(50) > 0.5), x, generators=[rng])
    assert listed.node.params["ctx"].rng is not None, "a draw from a listed generator counts as drawing"
    np.random.seed(3)
    np.random.randn()  # numpy's legacy normal draws two values and keeps one for the next call:
    gauss = mg.checkpoint(lambda v: v * np.random.randn(), x)  # this draw moves no Mersenne Twister word
    expected = np.random.RandomState(3).randn(2)[1]
    gauss.sum().backward()
    np.testing.assert_allclose(x.grad.data, np.full(50, expected))


def test_checkpoint_with_gradients_leaves_grad_untouched():
    x, w = leaf((3,)), leaf((3,), seed=1)
    out = mg.checkpoint(lambda v: (v * w).sin().sum(), x)
    gx, gw = mg.gradients(out, [x, w])
    np.testing.assert_allclose(gx.data, np.cos(x.data * w.data) * w.data)
    np.testing.assert_allclose(gw.data, np.cos(x.data * w.data) * x.data)
    assert x.grad is None and w.grad is None


def test_checkpoint_supports_higher_order_derivatives():
    w = leaf((4,), seed=1)

    def f(v):
        return ((v.tanh() * w).sum() * v.sin()).sum()

    def f_checkpointed(v):
        return mg.checkpoint(f, v)

    x, v = leaf((4,), seed=2), leaf((4,), seed=3, requires_grad=False)
    for mode in ("reverse-over-reverse", "forward-over-reverse"):
        np.testing.assert_allclose(
            mg.hvp(f_checkpointed, x, v, mode=mode).data, mg.hvp(f, x, v, mode=mode).data, rtol=1e-12, err_msg=mode
        )


def test_checkpoint_records_nothing_without_grad_and_evaluates_like_the_plain_function():
    x = leaf((3,))
    with mg.no_grad():
        assert mg.checkpoint(lambda v: v.exp(), x).node is None
    out = mg.checkpoint(lambda v: v.exp() * 2.0, x)
    np.testing.assert_allclose(mg.evaluate(out, {x: np.zeros(3)}), 2 * np.ones(3))


def test_checkpoint_keeps_only_its_inputs():
    x = leaf((10, 10))
    h = x.exp()
    plain = mg.saved_bytes(((h @ h).tanh() @ h).tanh().sum())
    kept = mg.saved_bytes(mg.checkpoint(lambda v: ((v @ v).tanh() @ v).tanh(), h).sum())
    assert kept == 2 * 100 * F8  # h, and the checkpoint's output summed by .sum()
    assert plain > kept


def test_checkpoint_rejects_functions_that_do_not_return_tensors():
    with pytest.raises(mg.MinigradError, match="must return a tensor"):
        mg.checkpoint(lambda v: v.data, leaf((2,)))


# --------------------------------------------------------------------------- checkpoint_sequential
def shaped_chain(widths, seed=0):
    """Layers whose outputs have distinct widths, so a boundary's shape names the layer before it."""
    rng = np.random.default_rng(seed)
    return [nn.Sequential(nn.Linear(a, b, rng=rng), nn.Tanh()) for a, b in zip(widths[:-1], widths[1:])]


@pytest.mark.parametrize("n_layers, segments", [(7, 3), (8, 4), (5, 5), (6, 1), (10, 4)])
def test_checkpoint_sequential_boundaries_and_gradients(n_layers, segments):
    widths = list(range(2, n_layers + 3))
    layers = shaped_chain(widths)
    x = leaf((3, widths[0]))
    params = [x] + [p for layer in layers for p in layer.parameters()]
    h = x
    for layer in layers:
        h = layer(h)
    (h**2).sum().backward()
    expected = grads_of(params)
    for p in params:
        p.grad = None

    out = mg.checkpoint_sequential(layers, segments, x)
    sizes = [len(part) for part in np.array_split(np.arange(n_layers), segments)]
    starts = np.cumsum([0] + sizes)[:-2]  # checkpointed segments start at these layers
    nodes = checkpoint_nodes(out)
    assert len(nodes) == segments - 1
    assert sorted(node.inputs[0].shape[1] for node in nodes) == [widths[s] for s in starts]
    (out**2).sum().backward()
    assert_same_grads(grads_of(params), expected)


def test_checkpoint_sequential_accepts_a_sequential_and_checks_segments():
    model = nn.Sequential(*shaped_chain([2, 3, 4]))
    x = leaf((1, 2))
    np.testing.assert_allclose(mg.checkpoint_sequential(model, 2, x).data, model(x).data)
    for bad in (0, 3):
        with pytest.raises(ValueError, match="between 1 and 2"):
            mg.checkpoint_sequential(model, bad, x)


# --------------------------------------------------------------------------- the benchmark runs
def test_checkpoint_benchmark_quick_run_prints_json_lines():
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_checkpoint.py"
    done = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert records[0]["benchmark"] == "machine"
    for record in records[1:-1]:
        assert record["benchmark"] == "checkpoint_sequential"
        assert set(record["seconds"]) == {"minigrad", "minigrad_checkpoint", "pytorch", "pytorch_checkpoint"}
        assert all(0 < f["min"] <= f["median"] for f in record["seconds"].values())
        assert 0 < record["peak_ratio"] < 1
        assert 0 < record["flop_floor"] < 1 / 3
        assert isinstance(record["met"]["overhead"], bool)
    assert records[-1]["benchmark"] == "checkpoint_summary"
    assert records[-1]["all_met"] == all(all(r["met"].values()) for r in records[1:-1])


def test_checkpoint_lets_go_of_the_activations_inside():
    inside = []

    def fn(v):
        h = v.exp()
        inside.append(weakref.ref(h))
        return (h * h).sin()

    x = leaf((4,))
    out = mg.checkpoint(fn, x)
    assert inside[0]() is None, "the forward run's activations outlived checkpoint()"
    out.sum().backward()
    assert len(inside) == 2 and inside[1]() is None, "the recomputation's activations outlived backward"


def test_tracker_sees_nodes_built_by_hand_and_keeps_a_history():
    x = leaf((3,))
    h = x.exp()
    with mg.track_saved_bytes() as tracker:
        out = mg.Tensor._result(h.data * 2, mg.Node(None, (h,), {}))  # no Primitive involved
        assert tracker.current == tracker.peak == 3 * F8
        del h, out
        assert tracker.current == 0 and tracker.history == [3 * F8, 0]
