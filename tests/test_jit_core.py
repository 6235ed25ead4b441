"""minigrad.jit core: tracing, dead-code elimination, memory plans and the numpy backend.

The central property: a compiled program computes what eager minigrad computes, values and
gradients, on inputs *other* than the ones it was traced with (hypothesis writes the programs).
Passes are checked against independent re-statements of their definitions: DCE keeps exactly the
nodes the outputs depend on; no memory plan lets two simultaneously live values share a byte (the
validator `check_plan`, itself shown to catch the plans it must reject).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import jit
from minigrad.errors import DtypeError, GraphError, ShapeError
from minigrad.jit.backends import BACKENDS
from minigrad.jit.backends.numpy_backend import PlannedInterpreter, run_graph
from minigrad.jit.ir import Graph, Node

SETTINGS = settings(max_examples=40, deadline=None, database=None, derandomize=True)
STRATEGIES = ("greedy_by_size", "best_fit", "none")
SHAPES = [(3, 4), (4,), (3, 1), (1, 4), ()]  # all broadcast to (3, 4)
MATRIX = np.random.default_rng(99).standard_normal((4, 4))
MASK = np.random.default_rng(98).random((3, 4)) > 0.5

# Each op takes (pool, a, b) -> Tensor broadcastable to (3, 4); together they use every primitive
# whose backward records a data-dependent factor (relu, abs, clip, max), which a trace must not freeze.
UNARY = {
    "exp": lambda a: a.tanh().exp(),
    "log": lambda a: (a * a + 1.0).log(),
    "sin": lambda a: a.sin(),
    "cos": lambda a: a.cos(),
    "tanh": lambda a: a.tanh(),
    "sigmoid": lambda a: a.sigmoid(),
    "relu": lambda a: a.relu(),
    "abs": lambda a: a.abs(),
    "neg": lambda a: -a,
    "square": lambda a: a**2,
    "clip": lambda a: a.clip(-0.5, 0.5),
    "sum0": lambda a: a.broadcast_to((3, 4)).sum(axis=0, keepdims=True),
    "max1": lambda a: a.broadcast_to((3, 4)).max(axis=1, keepdims=True),
    "matmul": lambda a: a.broadcast_to((3, 4)) @ MATRIX,
    "reshape_transpose": lambda a: a.broadcast_to((3, 4)).reshape(4, 3).T,
    "getitem": lambda a: a.broadcast_to((3, 4))[:, ::-1],
    "times_constant": lambda a: a * 0.5 + 2.0,
}
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 1.0),
    "where": lambda a, b: mg.where(MASK, a, b),
}


@st.composite
def programs(draw):
    """(function, input shapes): a random straight-line program over 1-3 inputs, returning a scalar."""
    shapes = draw(st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3))
    steps = draw(
        st.lists(
            st.one_of(
                st.tuples(st.sampled_from(sorted(UNARY)), st.integers(0, 99), st.just(0)),
                st.tuples(st.sampled_from(sorted(BINARY)), st.integers(0, 99), st.integers(0, 99)),
            ),
            min_size=1,
            max_size=8,
        )
    )
    unused_output = draw(st.booleans())

    def program(*inputs):
        pool = list(inputs)
        for name, i, j in steps:
            a, b = pool[i % len(pool)], pool[j % len(pool)]
            pool.append(UNARY[name](a) if name in UNARY else BINARY[name](a, b))
        if unused_output:
            pool[-1].exp()  # computed, never used: dead code in the trace
        return (pool[-1] * pool[-1]).sum() + pool[len(inputs) - 1].sum()

    program.steps = steps
    return program, shapes


def _random_inputs(shapes, rng):
    return [rng.standard_normal(s) for s in shapes]


def _eager_value_and_grads(fn, arrays):
    return mg.value_and_grad(fn, argnums=tuple(range(len(arrays))))(*arrays)


def _assert_matches_eager(fn, arrays, value, grads):
    expected_value, expected_grads = _eager_value_and_grads(fn, arrays)
    np.testing.assert_allclose(value.data, expected_value.data, rtol=1e-10, atol=1e-12, err_msg=f"value, {fn.steps}")
    for k, (got, expected) in enumerate(zip(grads, expected_grads, strict=True)):
        assert got.shape == expected.shape, f"gradient {k}: shape {got.shape}, eager {expected.shape}"
        np.testing.assert_allclose(got.data, expected.data, rtol=1e-9, atol=1e-12, err_msg=f"gradient {k}, {fn.steps}")


# --------------------------------------------------------------------------- compile agrees with eager


@SETTINGS
@given(programs(), st.integers(0, 2**16))
def test_compiled_program_matches_eager_on_new_inputs(program, seed):
    """Values and gradients of the numpy backend equal eager minigrad's, on inputs it was not traced with."""
    fn, shapes = program
    rng = np.random.default_rng(seed)
    compiled = jit.compile(fn, backward=True)
    for _ in range(3):  # the first call traces; the others reuse the program on new data
        arrays = _random_inputs(shapes, rng)
        value, grads = compiled(*arrays)
        _assert_matches_eager(fn, arrays, value, grads)
    assert len(compiled.programs) == 1, "same shapes and dtypes: traced once"


@SETTINGS
@given(programs(), st.integers(0, 2**16), st.sampled_from(STRATEGIES))
def test_every_plan_strategy_runs_the_program_correctly(program, seed, strategy):
    """The planned interpreter computes the same outputs as the unplanned one, whatever the plan."""
    fn, shapes = program
    rng = np.random.default_rng(seed)
    graph = jit.trace(fn, *_random_inputs(shapes, rng), backward=True)
    plan = jit.plan_memory(graph, strategy)
    jit.check_plan(graph, plan)
    arrays = _random_inputs(shapes, rng)
    for got, expected in zip(PlannedInterpreter(graph, plan)(*arrays), run_graph(graph, *arrays), strict=True):
        # not bit for bit: a transpose materialised in the arena may send matmul down another BLAS path
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_compiled_forward_keeps_the_result_structure_and_dtype():
    def two(x, y):
        return x * y, (x - y).sum()

    compiled = jit.compile(two)
    x, y = np.ones((2, 3), np.float32), np.full((2, 3), 2.0, np.float32)
    product, total = compiled(x, y)
    assert isinstance(compiled(x, y), tuple)
    assert product.dtype == np.float32 and product.shape == (2, 3)
    np.testing.assert_array_equal(product.data, x * y)
    assert total.item() == -6.0
    assert not product.requires_grad, "compiled results are plain values, outside any graph"


def test_compile_traces_once_per_signature():
    calls = []

    def f(x):
        calls.append(x.shape)
        return (x * 2.0).sum()

    compiled = jit.compile(f)
    for shape in [(3,), (3,), (4,), (3,), (4,)]:
        assert compiled(np.arange(shape[0], dtype=float)).item() == 2 * sum(range(shape[0]))
    assert calls == [(3,), (4,)], f"fn should run once per new shape, ran for {calls}"
    compiled(np.arange(3, dtype=np.float32))
    assert len(compiled.programs) == 3, "a new dtype is a new signature"
    assert compiled.graph.node(compiled.graph.inputs[0]).dtype == "float32", ".graph is the last call's graph"
    assert compiled.source is None, "the numpy backend generates no source"


def test_compiled_gradients_follow_the_relu_mask_of_new_inputs():
    """The backward of relu multiplies by a mask computed from x: it must be an op, not a frozen constant."""
    compiled = jit.compile(lambda x: x.relu().sum(), backward=True)
    _, (grad,) = compiled(np.array([1.0, -1.0, 2.0]))
    np.testing.assert_array_equal(grad.data, [1.0, 0.0, 1.0])
    _, (grad,) = compiled(np.array([-1.0, 1.0, -2.0]))
    np.testing.assert_array_equal(grad.data, [0.0, 1.0, 0.0])


def test_numpy_backend_writes_into_the_planned_arena():
    """Buffers whose lifetimes do not overlap are the same memory, and the arena is the planned peak."""
    graph = jit.trace(lambda x: x.exp().sin().cos().tanh(), np.ones(1000))
    runner = jit.get_backend("numpy").compile(graph)
    assert runner.arena.nbytes == runner.plan.peak_bytes
    assert runner.plan.peak_bytes == 2 * 8000, "a chain needs two buffers: the operand and the result"
    views = [v for v, n in zip(runner.values, graph.nodes) if n.op not in ("input", "constant")]
    assert np.shares_memory(views[0], views[2]), "exp's buffer is reused by cos once sin has read it"
    np.testing.assert_allclose(runner(np.full(1000, 0.3))[0], np.tanh(np.cos(np.sin(np.exp(0.3)))), rtol=1e-15)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_transposes_of_inputs_read_by_products_are_views_not_copies(backend):
    """A backward pass transposes the weights for its products: where the transposed value is an
    input (memory no step writes) and only products read it, it is a view of the input; a transpose
    of a computed value, or one an elementwise op reads, still gets its planned buffer."""

    def loss(x, w):
        h = (x @ w).tanh()
        return (h @ w.T).sum() + (w.T * 2.0).sum()  # w.T read by a product, and by an elementwise op

    rng = np.random.default_rng(5)
    compiled = jit.compile(loss, backend=backend, backward=True)
    compiled(rng.standard_normal((3, 4)), rng.standard_normal((4, 4)))
    runner = compiled.runner
    graph = runner.graph  # the program as the backend runs it (numba's with its fused nodes)
    position = {n.id: k for k, n in enumerate(graph.nodes)}
    kinds = set()
    for k, node in enumerate(graph.nodes):
        if node.op != "transpose":
            continue
        readers = {m.op for m in graph.nodes if node.id in m.inputs}
        of_input = node.inputs[0] in graph.inputs
        expect_view = of_input and readers == {"matmul"}
        kinds.add(expect_view)
        assert np.shares_memory(runner.values[k], runner.values[position[node.inputs[0]]]) == expect_view, (node, readers)
        assert np.shares_memory(runner.values[k], runner.arena) != expect_view, (node, readers)
    assert kinds == {True, False}, f"the program should have transposes of both kinds: {graph}"
    for _ in range(2):  # later calls, new data: the views follow the new inputs
        x, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 4))
        value, grads = compiled(x, w)
        expected_value, expected_grads = mg.value_and_grad(loss, argnums=(0, 1))(x, w)
        np.testing.assert_allclose(value.data, expected_value.data, rtol=1e-10)
        for got, want in zip(grads, expected_grads, strict=True):
            np.testing.assert_allclose(got.data, want.data, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_outputs_are_fresh_arrays_never_shared_with_the_arena_the_inputs_or_each_other(backend):
    """Computed outputs are written straight into arrays of their own; a value returned twice, an
    input returned as it is, and every output of a second call are separate arrays."""

    def fn(x):
        y = x * 2.0
        return y, y, x, (y + 1.0).exp()

    compiled = jit.compile(fn, backend=backend)
    x = np.ones(3)
    first = [t.data for t in compiled(x)]
    runner = compiled.runner
    second = [t.data for t in compiled(np.full(3, 5.0))]
    for a, b in [(first[0], first[1]), (first[2], x), (first[0], second[0]), (first[3], second[3])]:
        assert not np.shares_memory(a, b)
    assert not any(np.shares_memory(r, runner.arena) for r in first + second)
    np.testing.assert_array_equal(first[0], [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(first[2], x)
    np.testing.assert_allclose(first[3], np.exp(3.0))
    np.testing.assert_allclose(second[3], np.exp(11.0))


def test_interpreter_checks_input_shapes():
    runner = jit.get_backend("numpy").compile(jit.trace(lambda x: x * 2.0, np.ones(3)))
    with pytest.raises(ShapeError, match=r"input 0 must have shape \(3,\) and dtype float64, got \(4,\)"):
        runner(np.ones(4))


# --------------------------------------------------------------------------- tracing


def test_trace_lists_inputs_constants_and_ops_in_order():
    w = mg.tensor([1.0, 2.0, 3.0])  # closed over: a constant

    def f(x):
        return (x * w + 1.0).tanh()

    graph = jit.trace(f, np.zeros(3))
    assert [n.op for n in graph.nodes] == ["input", "constant", "mul", "constant", "add", "tanh"]
    assert [n.id for n in graph.nodes] == list(range(6))
    assert graph.inputs == [0] and graph.outputs == [5]
    np.testing.assert_array_equal(graph.node(1).param_dict["value"], [1.0, 2.0, 3.0])
    assert graph.node(2).inputs == (0, 1) and graph.node(2).shape == (3,) and graph.node(2).dtype == "float64"
    assert "%2 = mul(%0, %1) : (3,) float64" in str(graph)
    w.data[0] = 100.0  # the trace copied the value: later edits of the weight do not leak in
    assert graph.node(1).param_dict["value"][0] == 1.0


def test_trace_records_dead_code_and_dce_removes_it():
    def f(x):
        unused = x.exp()  # noqa: F841 (computed and dropped)
        return x.sin()

    graph = jit.trace(f, np.zeros(2))
    assert [n.op for n in graph.nodes] == ["input", "exp", "sin"]
    assert [n.op for n in jit.eliminate_dead_code(graph).nodes] == ["input", "sin"]


def test_traced_backward_equals_trace_of_grad():
    def f(x, w):
        return ((x @ w).tanh() ** 2).sum()

    x, w = np.random.default_rng(0).standard_normal((2, 3, 4))[0], np.random.default_rng(1).standard_normal((4, 2))
    with_backward = jit.trace(f, x, w, backward=True)
    of_grad = jit.trace(mg.grad(f, argnums=1), x, w)
    assert len(with_backward.outputs) == 3 and len(of_grad.outputs) == 1
    a = run_graph(with_backward, x, w)
    (b,) = run_graph(of_grad, x, w)
    np.testing.assert_allclose(a[2], b, rtol=1e-14)
    np.testing.assert_allclose(b, mg.grad(f, argnums=1)(x, w).data, rtol=1e-14)


def test_tracing_freezes_python_control_flow():
    """The documented limit of `trace`: a branch on a tensor's value is taken once, at trace time;
    `compile` (tests/test_jit_strict.py) refuses it instead of running a frozen branch."""

    def f(x):
        return x * 2.0 if x.sum() > 0 else -x

    graph = jit.trace(f, np.array([1.0, 2.0]))
    frozen = run_graph(graph, np.array([-1.0, -2.0]))[0]  # eager takes the other branch here
    np.testing.assert_array_equal(frozen, [-2.0, -4.0])
    np.testing.assert_array_equal(f(mg.tensor([-1.0, -2.0])).data, [1.0, 2.0])
    with pytest.raises(jit.TracerError, match=r"if.*test_jit_core.py:\d+: return x \* 2.0 if x.sum\(\) > 0"):
        jit.compile(f)(np.array([1.0, 2.0]))


def test_trace_errors_say_what_to_do():
    with pytest.raises(DtypeError, match="input 1 has dtype int64.*Close over integer data"):
        jit.trace(lambda x, y: x, np.ones(2), np.arange(2))
    with pytest.raises(TypeError, match="must return a Tensor"):
        jit.trace(lambda x: x.numpy(), np.ones(2))

    def backward_inside(x):
        y = (x * x).sum()
        y.backward()
        return x * y

    with pytest.raises(GraphError, match="freed by a backward pass inside fn"):
        jit.trace(backward_inside, np.ones(2))
    with pytest.raises(GraphError, match="first output must be a scalar"):
        jit.trace(lambda x: x * 2.0, np.ones(2), backward=True)


def test_trace_refuses_operations_outside_the_registry():
    """checkpoint's node (a minigrad.Function) and a hand-made Primitive, even one named like a registered
    primitive, are refused by name instead of being run as something else."""
    with pytest.raises(GraphError, match="'checkpoint' is not a primitive of minigrad.ops.*minigrad.Function"):
        jit.trace(lambda x: mg.checkpoint(lambda t: (t * t).tanh(), x), np.ones(3))
    with pytest.raises(GraphError, match="'checkpoint' is not a primitive of minigrad.ops"):
        jit.compile(lambda x: mg.checkpoint(lambda t: (t * t).tanh(), x))(np.ones(3))
    impostor = mg.ops.Primitive("exp", forward=np.exp, vjp=None, jvp=None)
    with pytest.raises(GraphError, match="'exp' is not a primitive of minigrad.ops"):
        jit.trace(lambda x: impostor(x), np.ones(3))


def test_registry_holds_each_library_primitive_once():
    named = {p.name: p for p in vars(mg.ops).values() if isinstance(p, mg.ops.Primitive)}
    assert named == mg.ops.PRIMITIVES  # every module-level primitive, and nothing made by hand
    with pytest.raises(ValueError, match="a primitive named 'add' exists already"):
        mg.ops.register(mg.ops.Primitive("add", forward=np.add, vjp=None, jvp=None))


def test_optable_rows_name_registered_primitives():
    """A typo in the table (it once listed "absolute" for "abs") names no primitive and fails here."""
    from minigrad.jit import optable

    assert set(optable.TABLE) <= set(mg.ops.PRIMITIVES), sorted(set(optable.TABLE) - set(mg.ops.PRIMITIVES))
    assert optable.VIEWS <= set(mg.ops.PRIMITIVES) and not optable.VIEWS & optable.ELEMENTWISE
    missing = [op for op in optable.ELEMENTWISE if optable.TABLE[op].expression is None]
    assert not missing, f"elementwise ops without an expression (kernel_source could not fuse them): {missing}"


def test_plain_expressions_compute_the_primitives():
    """chapter 9's EXPRESSIONS: each template, filled with numbers, gives the primitive's value."""
    import math

    from minigrad.jit.optable import EXPRESSIONS

    operands = {"where": (0.75, -2.0, True)}  # x, y, condition
    params = {"power": {"exponent": 3.0}}
    for op, template in EXPRESSIONS.items():
        arity = 3 if "{2}" in template else 2 if "{1}" in template else 1
        args = operands.get(op, (0.75, -2.0))[:arity]
        got = eval(template.format(*map(repr, args), **params.get(op, {})), {"math": math})
        if op == "where":  # the condition is a param of the primitive, the third operand of the kernel
            want = mg.ops.where.forward(np.array(args[0]), np.array(args[1]), condition=True)
        else:
            want = mg.ops.PRIMITIVES[op].forward(*map(np.array, args), **params.get(op, {}))
        assert np.isclose(got, want), f"{op}: {template} gives {got}, the primitive {want}"


def test_trace_chains_an_outer_record_hook():
    """Tracing inside a memory tracker: both see the operations."""
    with mg.track_saved_bytes() as tracker:
        graph = jit.trace(lambda x: (x * x).exp(), np.ones(100))
    assert [n.op for n in graph.nodes] == ["input", "mul", "exp"]
    assert tracker.peak > 0


# --------------------------------------------------------------------------- dead-code elimination


@st.composite
def random_graphs(draw, max_nodes=30):
    """IR graphs with random wiring: additions and negations of one shape, random outputs."""
    n_inputs = draw(st.integers(1, 3))
    shape = draw(st.sampled_from([(2,), (3, 4), ()]))
    nodes = [Node(i, "input", (), shape, "float64") for i in range(n_inputs)]
    for i in range(n_inputs, n_inputs + draw(st.integers(1, max_nodes))):
        if draw(st.booleans()):
            sources = (draw(st.integers(0, i - 1)), draw(st.integers(0, i - 1)))
            nodes.append(Node(i, "add", sources, shape, "float64"))
        else:
            nodes.append(Node(i, "neg", (draw(st.integers(0, i - 1)),), shape, "float64"))
    outputs = draw(st.lists(st.integers(0, len(nodes) - 1), min_size=1, max_size=4))
    return Graph(nodes, list(range(n_inputs)), outputs)


def _ancestors(graph, node_id):
    """Every node `node_id` depends on (itself included), by plain recursion over the inputs."""
    node = graph.node(node_id)
    return {node_id}.union(*(_ancestors(graph, i) for i in node.inputs))


@SETTINGS
@given(random_graphs())
def test_dce_keeps_exactly_what_the_outputs_depend_on(graph):
    needed = set().union(*(_ancestors(graph, o) for o in graph.outputs))
    pruned = jit.eliminate_dead_code(graph)
    kept = {n.id for n in pruned.nodes}
    assert needed <= kept, f"DCE removed nodes the outputs depend on: {sorted(needed - kept)}"
    assert kept == needed | set(graph.inputs), f"DCE kept dead nodes: {sorted(kept - needed - set(graph.inputs))}"
    assert [n for n in graph.nodes if n.id in kept] == pruned.nodes, "surviving nodes keep their order and contents"
    assert pruned.inputs == graph.inputs and pruned.outputs == graph.outputs
    pruned.validate()
    arrays = [np.random.default_rng(0).standard_normal(graph.node(i).shape) for i in graph.inputs]
    for got, expected in zip(run_graph(pruned, *arrays), run_graph(graph, *arrays)):
        np.testing.assert_array_equal(got, expected)


# --------------------------------------------------------------------------- memory plans


@st.composite
def planning_graphs(draw):
    """Random graphs whose values have very different sizes (what makes planning hard)."""
    n_inputs = draw(st.integers(1, 2))
    nodes = [Node(i, "input", (), (8,), "float64") for i in range(n_inputs)]
    for i in range(n_inputs, n_inputs + draw(st.integers(1, 40))):
        sources = tuple(draw(st.lists(st.integers(0, i - 1), min_size=1, max_size=3)))
        length = draw(st.sampled_from([1, 7, 8, 100, 333, 1000]))
        nodes.append(Node(i, "sum", sources, (length,), draw(st.sampled_from(["float64", "float32"]))))
    outputs = draw(st.lists(st.integers(n_inputs, len(nodes) - 1), min_size=1, max_size=3))
    return Graph(nodes, list(range(n_inputs)), outputs)


@SETTINGS
@given(planning_graphs(), st.sampled_from(STRATEGIES))
def test_plans_never_overlap_live_values(graph, strategy):
    plan = jit.plan_memory(graph, strategy)
    jit.check_plan(graph, plan)
    assert plan.lower_bound_bytes <= plan.peak_bytes <= plan.no_reuse_bytes
    assert all(offset % 64 == 0 for offset in plan.offsets.values()), "buffers start on 64-byte boundaries"


@SETTINGS
@given(planning_graphs())
def test_validator_catches_a_buffer_freed_one_step_early(graph):
    """Plan with every last use one step earlier: wherever that changes the plan's answer, check_plan objects."""
    intervals = jit.liveness(graph)
    early = {i: (first, max(first, last - 1)) for i, (first, last) in intervals.items()}
    sizes = {i: jit.memory_plan.aligned(graph.node(i).nbytes) for i in intervals}
    offsets = jit.memory_plan._best_fit(early, sizes)
    plan = jit.MemoryPlan(offsets, sizes, early, max(offsets[i] + sizes[i] for i in offsets))
    truly_overlapping = any(
        intervals[a][0] <= intervals[b][1]
        and intervals[b][0] <= intervals[a][1]
        and offsets[a] < offsets[b] + graph.node(b).nbytes
        and offsets[b] < offsets[a] + graph.node(a).nbytes
        for a in intervals
        for b in intervals
        if a < b
    )
    if truly_overlapping:
        with pytest.raises(jit.InvalidPlan, match="are live at the same time in overlapping memory"):
            jit.check_plan(graph, plan)
    else:
        jit.check_plan(graph, plan)


def test_validator_rejects_overlap_missing_buffers_and_overflow():
    graph = jit.trace(lambda x: x.exp() + x.sin(), np.ones(8))  # exp and sin both live when add runs
    plan = jit.plan_memory(graph)
    jit.check_plan(graph, plan)
    exp_id, sin_id = (n.id for n in graph.nodes if n.op in ("exp", "sin"))
    clash = {**plan.offsets, sin_id: plan.offsets[exp_id]}
    with pytest.raises(jit.InvalidPlan, match=r"%1 = exp.*%2 = sin.*overlapping memory"):
        jit.check_plan(graph, jit.MemoryPlan(clash, plan.sizes, plan.intervals, plan.peak_bytes))
    with pytest.raises(jit.InvalidPlan, match="no buffer for %2 = sin"):
        jit.check_plan(graph, jit.MemoryPlan({exp_id: 0}, plan.sizes, plan.intervals, plan.peak_bytes))
    with pytest.raises(jit.InvalidPlan, match="outside the arena"):
        jit.check_plan(graph, jit.MemoryPlan(plan.offsets, plan.sizes, plan.intervals, 64))


def test_liveness_and_bounds_of_a_small_graph():
    graph = jit.trace(lambda x: (x.exp() * x.sin()).sum(), np.ones(16))
    # steps: 0 input, 1 exp, 2 sin, 3 mul, 4 sum; the output lives to step 5
    assert [n.op for n in graph.nodes] == ["input", "exp", "sin", "mul", "sum"]
    assert jit.liveness(graph) == {1: (1, 3), 2: (2, 3), 3: (3, 4), 4: (4, 5)}
    plan = jit.plan_memory(graph)
    assert plan.no_reuse_bytes == 3 * 128 + 64
    assert plan.lower_bound_bytes == 3 * 128, "exp, sin and mul are live together at step 3"
    assert plan.peak_bytes == plan.lower_bound_bytes
    assert plan.summary()["peak_over_no_reuse"] == pytest.approx(384 / 448)


def test_plan_memory_rejects_unknown_strategies():
    with pytest.raises(ValueError, match="unknown strategy 'lifo'.*best_fit"):
        jit.plan_memory(jit.trace(lambda x: x * 2.0, np.ones(2)), "lifo")


# --------------------------------------------------------------------------- IR, drawing, backends


def test_graph_helpers():
    graph = jit.trace(lambda x: x.exp() * x, np.ones(2))
    assert graph.users() == {0: [1, 2], 1: [2], 2: []}
    assert graph.node(1).nbytes == 16 and graph.node(1).size == 2
    with pytest.raises(KeyError, match="no node %7"):
        graph.node(7)
    hash(graph.node(1).key())
    broken = Graph([Node(0, "input", (), (2,), "float64"), Node(1, "neg", (2,), (2,), "float64")], [0], [1])
    with pytest.raises(ValueError, match="reads %2, not defined before it"):
        broken.validate()


def test_nodes_with_array_params_have_hashable_keys():
    graph = jit.trace(lambda x: mg.where(np.array([True, False]), x, x * 2.0)[np.array([1, 0])], np.ones(2))
    keys = {n.key() for n in graph.nodes}
    assert len(keys) == len(graph.nodes)


def test_graph_draws_through_minigrad_draw():
    graph = jit.trace(lambda x, w: (x @ w).relu().sum(), np.ones((2, 3)), np.ones((3, 4)), backward=True)
    drawing = mg.draw(graph)
    for text in ("matmul", "relu_mask", "x0", "(3, 4)"):
        assert text in drawing.source, f"{text!r} missing from the drawing"
    big = jit.trace(lambda x: x.sin().sin().sin().sin().sin().sin().sin().sin(), np.ones(2))
    assert "more nodes" in mg.draw(big, max_nodes=4).source


def test_fused_nodes_run_their_body():
    """A "fused" node (made by the fusion pass) is interpreted by running its body graph."""
    body = jit.trace(lambda a, b: (a * b).tanh(), np.ones(3), np.ones(3))
    graph = Graph(
        [
            Node(0, "input", (), (3,), "float64"),
            Node(1, "input", (), (3,), "float64"),
            Node(2, "fused", (0, 1), (3,), "float64", (("body", body), ("kind", "elementwise"))),
            Node(3, "neg", (2,), (3,), "float64"),
        ],
        [0, 1],
        [3],
    )
    x, y = np.array([0.1, 0.2, 0.3]), np.array([1.0, -2.0, 3.0])
    expected = -np.tanh(x * y)
    np.testing.assert_allclose(jit.get_backend("numpy").compile(graph)(x, y)[0], expected, rtol=1e-15)
    np.testing.assert_allclose(run_graph(graph, x, y)[0], expected, rtol=1e-15)
    assert "<graph of" in str(graph)


def test_backend_registry_errors(monkeypatch):
    with pytest.raises(ValueError, match="unknown backend 'tpu'; the backends are numpy, numba, cuda"):
        jit.compile(lambda x: x, backend="tpu")
    monkeypatch.setitem(BACKENDS, "numba", "minigrad.jit.backends.not_written_yet:NumbaBackend")
    with pytest.raises(NotImplementedError, match="'numba' backend is not available.*not_written_yet.py does not exist"):
        jit.get_backend("numba")


def test_import_stays_light():
    import subprocess
    import sys

    code = "import sys, minigrad.jit; print(sorted(m for m in ('numba', 'matplotlib', 'graphviz') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]", f"import minigrad.jit loaded {loaded}"


def test_ir_imports_no_drawing_code():
    """Drawing a Graph is dispatched by minigrad.draw: the IR itself knows nothing of pictures."""
    import subprocess
    import sys

    code = "import sys, minigrad.jit.ir; print(sorted(m for m in ('minigrad.jit.draw', 'minigrad.draw_graph', 'minigrad.render', 'graphviz') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]", f"import minigrad.jit.ir loaded {loaded}"
