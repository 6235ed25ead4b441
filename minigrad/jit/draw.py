"""Drawing a static graph in the style of `minigrad.draw`: `minigrad.draw(graph)` comes here.

The picture is the same bipartite graph as for eager tensors (value boxes, op ellipses, the same
`STYLES`), so a traced program and the eager graph it came from look alike: inputs blue, constants
dashed, outputs orange. Nodes listed in `dim` (the ones dead-code elimination would remove, say)
are drawn faded, so one picture shows what a pass does.
"""

import collections

import graphviz

from ..labels import format_array, short
from ..render import DEFAULT_MAX_NODES, STYLES, GraphDrawing, escape_lines, resolve_rankdir
from .ir import SOURCES
from .optable import COMMUTATIVE

DIMMED = {"color": "#cccccc", "fontcolor": "#aaaaaa", "fillcolor": "#f7f7f7", "style": "dashed,filled"}


def _depth(graph):
    """The longest chain of operations of `graph`."""
    depth = {}
    for node in graph.nodes:
        depth[node.id] = 1 + max((depth[i] for i in node.inputs), default=0) if node.inputs else 0
    return max(depth.values(), default=0)


def draw_ir(graph, *, rankdir="auto", max_nodes=DEFAULT_MAX_NODES, names=None, dim=(), **_ignored):
    """A `GraphDrawing` of `graph`.

    names: labels for nodes, a mapping name -> node id (inputs are named x0, x1, ... otherwise).
    dim: ids of nodes to draw faded (e.g. dead code).
    max_nodes: graphs with more nodes keep the first and last max_nodes/2 and show the middle as
        one "… N more nodes …" box listing the hidden operations.
    """
    labels = {i: f"x{k}" for k, i in enumerate(graph.inputs)}
    labels.update({i: name for name, i in dict(names or {}).items()})
    outputs, dim = set(graph.outputs), set(dim)
    hidden = _hidden(graph, max_nodes)
    drawing = GraphDrawing(
        name="minigrad_jit",
        graph_attr={"rankdir": resolve_rankdir(rankdir, _depth(graph)), "nodesep": "0.2", "ranksep": "0.3", "fontname": "Helvetica"},
        node_attr={"fontname": "Helvetica", "fontsize": "10", "height": "0.3", "margin": "0.06,0.03"},
        edge_attr={"arrowsize": "0.6", "color": "#555555", "fontsize": "8", "fontcolor": "#777777"},
    )
    for node in graph.nodes:
        if node.id in hidden:
            continue
        faded = node.id in dim
        kind = node.op if node.op in SOURCES else "intermediate"
        value_style = _style(kind, output=node.id in outputs, faded=faded)
        drawing.node(f"v{node.id}", graphviz.nohtml(_value_label(node, labels.get(node.id))), **value_style)
        if node.op in SOURCES:
            continue
        drawing.node(f"op{node.id}", graphviz.nohtml(_op_label(node)), **_style("op", faded=faded))
        edge_style = {"color": DIMMED["color"]} if faded else {}
        drawing.edge(f"op{node.id}", f"v{node.id}", **edge_style)
        numbered = len(node.inputs) > 1 and node.op not in COMMUTATIVE
        for position, source in enumerate(node.inputs):
            tail = "elided" if source in hidden else f"v{source}"
            drawing.edge(tail, f"op{node.id}", **({"label": str(position)} if numbered else {}), **edge_style)
    if hidden:
        _add_elision(drawing, graph, hidden)
    return drawing


def _style(kind, output=False, faded=False):
    style = dict(STYLES["input" if kind == "input" else kind])
    if output:
        style.update(STYLES["output"])
    if faded:
        style.update(DIMMED)
    return style


def _value_label(node, name):
    lines = [name or f"%{node.id}"]
    if node.op == "constant" and node.param_dict["value"].size <= 6:
        lines.append(format_array(node.param_dict["value"]))
    else:
        lines.append("scalar" if not node.shape else str(node.shape))
    if node.dtype != "float64":
        lines[-1] += f" {node.dtype}"
    return escape_lines(lines)


def _op_label(node):
    params = node.param_dict
    if node.op == "fused":
        body = params["body"]
        ops = [n.op for n in body.nodes if n.op not in SOURCES]
        return escape_lines([f"fused {params.get('kind', '')}".strip(), " → ".join(ops)[:60]])
    shown = [f"{k}={short(v, 24)}" for k, v in node.params if v is not None and v is not False]
    return escape_lines([node.op, *shown])


def _hidden(graph, max_nodes):
    """Ids of the middle nodes to elide so that about `max_nodes` remain (inputs and outputs stay)."""
    if len(graph.nodes) <= max_nodes:
        return set()
    half = max(max_nodes // 2, 1)
    keep = {n.id for n in graph.nodes[:half] + graph.nodes[-half:]} | set(graph.inputs) | set(graph.outputs)
    middle = {n.id for n in graph.nodes[half:-half]} - keep
    # a node read by a kept node stays too, so every kept op shows all its inputs
    for node in graph.nodes:
        if node.id in keep:
            middle -= set(node.inputs)
    return middle


def _add_elision(drawing, graph, hidden):
    ops = collections.Counter(n.op for n in graph.nodes if n.id in hidden and n.op not in SOURCES).most_common()
    summary = ", ".join(f"{op} ×{count}" for op, count in ops[:4]) + (", …" if len(ops) > 4 else "")
    drawing.node("elided", graphviz.nohtml(escape_lines([f"… {len(hidden)} more nodes …", summary])), **STYLES["elided"])
    feeding = {i for n in graph.nodes if n.id in hidden for i in n.inputs if i not in hidden}
    for source in sorted(feeding):
        drawing.edge(f"v{source}", "elided")
