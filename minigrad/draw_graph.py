"""Drawing computational graphs: `draw(tensor)` gives a `graphviz.Digraph` that renders anywhere.

The picture is the bipartite form of the graph G = (V, E) the tensors recorded: one *value node*
(a box) per tensor and one *op node* (an ellipse) per operation, with edges input → op → output.
Value nodes say what a student needs when tracing a backward pass by hand: the shape (for a scalar
whose value is shown, the value alone), the dtype when it is not float64, and on request the data and
the gradient, rounded. Their fill says what kind of vertex they are:

* parameter (green): a leaf with `requires_grad=True`, whose `.grad` backward fills;
* input (blue): a leaf without grad, e.g. a batch of data;
* constant (dashed, value shown): a 0-d leaf without grad, usually a Python number such as the 2
  in `x * 2`;
* intermediate (white) and output (orange, thick border: the tensors passed to `draw`).

Checkpointed operations (op name starting with "checkpoint") sit in a dashed purple cluster, and
when the `.grad` of a leaf built with `backward(create_graph=True)` is drawn together with the
forward output (`draw([loss, x.grad])`), the operations only the backward pass created are red and
a dotted ".grad" edge joins the leaf to its gradient.

Rendering (system `dot`, else Graphviz in WebAssembly, else the DOT source with an install hint)
and the styles every drawing shares are in `minigrad.render`; this module is the tensor-graph scene.

Two extension points: an object with a method `__minigrad_draw__(self, **options)` returning a
Digraph (best a `GraphDrawing`; a plain one is wrapped) is drawn by delegation, and `STYLES` holds
the node styles so that such drawings look the same (as `minigrad.jit.draw` does for static graphs,
which `draw` sends there).
"""

import collections
import sys

import graphviz
import numpy as np

from .graph import topological_sort
from .jit.optable import COMMUTATIVE
from .labels import format_array, short
from .render import (
    DEFAULT_MAX_NODES,
    EDGE_ATTR,
    GRAPH_ATTR,
    INSTALL_HINT,
    NODE_ATTR,
    STYLES,
    GraphDrawing,
    GraphvizUnavailable,
    escape_lines,
    resolve_rankdir,
    render_svg,
)
from .tensor import Tensor

__all__ = ["draw", "GraphDrawing", "GraphvizUnavailable", "INSTALL_HINT", "STYLES", "render_svg"]

CHECKPOINT_CLUSTER = {
    "style": "dashed", "color": "#7b3fa0", "fontcolor": "#7b3fa0", "fontsize": "10", "label": "checkpoint: recomputed in backward"
}


# --------------------------------------------------------------------------- drawing


def draw(root, *, show_data=False, show_grad=False, rankdir="auto", max_nodes=DEFAULT_MAX_NODES, names=None):
    """Draw the graph below `root` (a Tensor or a list/tuple of them) as a `GraphDrawing`.

    show_data, show_grad: add each tensor's values / gradient, rounded (a summary when large).
    rankdir: "LR" (inputs on the left), "TB" (inputs on top) or "auto": left to right for shallow
        graphs, top to bottom once more than AUTO_TB_DEPTH operations are chained, since a deep
        graph drawn left to right is wider than a notebook, which then shrinks it past reading.
    max_nodes: at most this many value nodes; larger graphs are elided (below).
    names: labels for tensors, a mapping name -> tensor or (name, tensor) pairs, such as
        `model.named_parameters()`; a drawn `.grad` of a named tensor `x` is labelled "x.grad".

    Elision. A deep network is a long sequence of similar layers, and the readable parts of its
    graph are the two ends: where the inputs and parameters enter and where the loss comes out. So
    a graph above the budget keeps the first and the last max_nodes/2 tensors of the topological
    order and replaces the middle by one node "… N more nodes …" that also names the operations it
    hides (and their repeating pattern, such as "(matmul → add → tanh) repeated"). The cut is moved,
    where possible, to a point where a single tensor crosses it (the output of a layer), so that one
    edge enters and one leaves the elided node. Unlike grouping identical layers, this needs no
    notion of a layer, works for any graph and costs O(|V| + |E|).

    An object with a method `__minigrad_draw__(**options)` is drawn by that method, which receives
    the options above (and should accept and ignore those it does not use).
    """
    if not isinstance(max_nodes, int) or max_nodes < 1:
        raise ValueError(f"draw: max_nodes must be a positive integer, got {max_nodes!r}")
    options = dict(show_data=show_data, show_grad=show_grad, rankdir=rankdir, max_nodes=max_nodes, names=names)
    if _is_static_graph(root):
        from .jit.draw import draw_ir

        return draw_ir(root, **options)
    if hasattr(type(root), "__minigrad_draw__"):
        return _as_drawing(root.__minigrad_draw__(**options), root)
    roots = _as_roots(root)
    return _Scene(roots, options).draw()


def _is_static_graph(root):
    """True for a `minigrad.jit` Graph (the jit is not imported for that: a Graph means it was)."""
    ir = sys.modules.get("minigrad.jit.ir")
    return ir is not None and isinstance(root, ir.Graph)


def _as_drawing(result, root):
    if isinstance(result, GraphDrawing):
        return result
    if isinstance(result, graphviz.Digraph):
        return GraphDrawing.from_digraph(result)
    raise TypeError(
        f"draw: {type(root).__name__}.__minigrad_draw__ must return a graphviz.Digraph, got {type(result).__name__}"
    )


def _as_roots(root):
    roots = tuple(root) if isinstance(root, (list, tuple)) else (root,)
    bad = [type(r).__name__ for r in roots if not isinstance(r, Tensor)]
    if bad or not roots:
        raise TypeError(
            f"draw: expected a Tensor, a non-empty list or tuple of Tensors, or an object with "
            f"__minigrad_draw__; got {type(root).__name__}" + (f" containing {', '.join(bad)}" if bad else "")
        )
    return roots


def _tensors_below(roots, seen=None):
    """Every tensor the roots depend on and not in `seen`, each once, in topological order."""
    order, seen = [], set() if seen is None else seen
    for root in roots:
        freed = root.node is not None and root.node.inputs is None
        for tensor in [root] if freed else topological_sort(root):
            if id(tensor) not in seen:
                seen.add(id(tensor))
                order.append(tensor)
    return order


def _parents(tensor):
    """The inputs of the op that made `tensor`; none for a leaf or a graph freed by backward."""
    return () if tensor.node is None or tensor.node.inputs is None else tensor.node.inputs


def _is_checkpoint(tensor):
    return tensor.node is not None and tensor.node.op.name.startswith("checkpoint")


def _walk(roots):
    """(topological order, ids of backward-graph tensors) for the tensors below `roots`.

    A root that is the `.grad` of a tensor below the roots was built by backward(create_graph=True);
    drawn with a forward output, the tensors only such gradient roots reach form the backward graph.
    """
    order = _tensors_below(roots)
    grads = {id(t.grad) for t in order if isinstance(t.grad, Tensor)}
    forward = [r for r in roots if id(r) not in grads]
    backward = [r for r in roots if id(r) in grads]
    if not (forward and backward):
        return order, set()
    order = _tensors_below(forward)
    n_forward = len(order)
    order += _tensors_below(backward, seen=set(map(id, order)))
    return order, set(map(id, order[n_forward:]))


def _depth(order, hidden):
    """The longest chain of drawn operations (`order` is topological)."""
    depth = {}
    for tensor in order:
        if id(tensor) not in hidden:
            parents = [depth.get(id(p), 0) for p in tensor.parents] if tensor.node is not None and tensor.node.inputs is not None else []
            depth[id(tensor)] = 1 + max(parents, default=0) if tensor.node is not None else 0
    return max(depth.values(), default=0)


class _Scene:
    """One drawing in the making: which tensors appear, as what, and the Digraph being built."""

    def __init__(self, roots, options):
        self.options = options
        self.order, self.backward_ids = _walk(roots)
        self.index = {id(t): i for i, t in enumerate(self.order)}
        self.root_ids = set(map(id, roots))
        self.names = {id(t): name for name, t in dict(options["names"] or {}).items()}
        for tensor in self.order:  # a drawn gradient of a named leaf is called "<name>.grad"
            if id(tensor) in self.names and isinstance(tensor.grad, Tensor) and id(tensor.grad) in self.index:
                self.names.setdefault(id(tensor.grad), f"{self.names[id(tensor)]}.grad")
        self.hidden = _elided(self.order, self.root_ids, options["max_nodes"])
        self.graph = GraphDrawing(
            name="minigrad",
            graph_attr={"rankdir": resolve_rankdir(options["rankdir"], _depth(self.order, self.hidden)), **GRAPH_ATTR},
            node_attr=dict(NODE_ATTR),
            edge_attr=dict(EDGE_ATTR),
        )

    def draw(self):
        for tensor in self.order:
            if id(tensor) not in self.hidden:
                self._add_tensor(tensor)
        if self.hidden:
            self._add_elision()
        self._add_grad_links()
        return self.graph

    # ------------------------------------------------------------------ nodes
    def _add_tensor(self, tensor):
        i = self.index[id(tensor)]
        if _is_checkpoint(tensor):
            with self.graph.subgraph(name=f"cluster_checkpoint_{i}") as cluster:
                cluster.attr(**CHECKPOINT_CLUSTER)
                self._add_value_and_op(cluster, tensor, i)
        else:
            self._add_value_and_op(self.graph, tensor, i)
        self._add_input_edges(tensor, i)

    def _add_value_and_op(self, graph, tensor, i):
        graph.node(f"t{i}", graphviz.nohtml(self._value_label(tensor)), **self._style(tensor, _kind(tensor)))
        if tensor.node is not None:
            graph.node(f"op{i}", graphviz.nohtml(_op_label(tensor)), **self._style(tensor, "op"))
            graph.edge(f"op{i}", f"t{i}")

    def _style(self, tensor, base):
        """The base style of a value or op node with the output/checkpoint/backward overlays."""
        style = dict(STYLES[base])
        overlays = (
            ("output", base != "op" and id(tensor) in self.root_ids),
            ("checkpoint", _is_checkpoint(tensor)),
            ("backward", id(tensor) in self.backward_ids),
        )
        for name, applies in overlays:
            if applies:
                style.update(STYLES[name])
        return style

    def _value_label(self, tensor):
        lines = [self.names[id(tensor)]] if id(tensor) in self.names else []
        show_data = self.options["show_data"] and _kind(tensor) != "constant"
        if _kind(tensor) == "constant":
            described = format_array(tensor.data)
        elif tensor.ndim == 0 and show_data:
            described = ""  # the single number shown below says it is a scalar
        else:
            described = "scalar" if tensor.ndim == 0 else str(tensor.shape)
        if tensor.dtype != np.float64:
            described = f"{described} {tensor.dtype}".strip()
        if described:
            lines.append(described)
        if show_data:
            lines.append(f"data {format_array(tensor.data)}")
        if self.options["show_grad"] and isinstance(tensor.grad, Tensor):
            lines.append(f"grad {format_array(tensor.grad.data)}")
        return escape_lines(lines)

    # ------------------------------------------------------------------ edges
    def _add_input_edges(self, tensor, i):
        if tensor.node is None:
            return
        inputs = _parents(tensor)
        numbered = len(inputs) > 1 and tensor.node.op.name not in COMMUTATIVE  # else by argument position
        from_elided = False
        for position, parent in enumerate(inputs):
            if id(parent) in self.hidden:
                from_elided = True
                continue
            label = {"label": str(position)} if numbered else {}
            self.graph.edge(f"t{self.index[id(parent)]}", f"op{i}", **label)
        if from_elided:
            self.graph.edge("elided", f"op{i}")

    def _add_elision(self):
        hidden = [t for t in self.order if id(t) in self.hidden]
        self.graph.node("elided", graphviz.nohtml(_elision_label(hidden)), **STYLES["elided"])
        feeding = {id(p): p for t in hidden for p in _parents(t) if id(p) not in self.hidden}
        for parent in feeding.values():
            self.graph.edge(f"t{self.index[id(parent)]}", "elided")

    def _add_grad_links(self):
        """Dotted edges from each drawn leaf to its drawn `.grad` (graphs from create_graph=True)."""
        for tensor in self.order:
            grad = tensor.grad
            if isinstance(grad, Tensor) and id(grad) in self.index and not {id(tensor), id(grad)} & self.hidden:
                link = {"label": ".grad", "style": "dotted", "constraint": "false", **STYLES["backward"]}
                self.graph.edge(f"t{self.index[id(tensor)]}", f"t{self.index[id(grad)]}", **link)


def _kind(tensor):
    if tensor.node is not None:
        return "intermediate"
    if tensor.requires_grad:
        return "parameter"
    return "constant" if tensor.ndim == 0 else "input"


def _op_label(tensor):
    node = tensor.node
    lines = [node.op.name]
    lines += [f"{key}={short(value)}" for key, value in node.params.items() if value is not None and value is not False]
    if node.inputs is None:
        lines.append("(inputs freed by backward;")
        lines.append("use retain_graph=True)")
    return escape_lines(lines)


# --------------------------------------------------------------------------- elision


def _elided(order, root_ids, max_nodes):
    """Ids of the tensors to hide so that about `max_nodes` value nodes remain (see `draw`)."""
    if len(order) <= max_nodes:
        return set()
    cuts = _single_tensor_cuts(order, root_ids)
    head = max((c + 1 for c in cuts if max_nodes // 4 <= c + 1 <= max_nodes // 2), default=max_nodes // 2)
    kept = set(map(id, order[:head])) | root_ids
    start = _tail_start(order, head, kept, max_nodes)
    start = min((c + 1 for c in cuts if start <= c + 1 <= (start + len(order)) // 2), default=start)
    kept |= {id(x) for tensor in order[start:] for x in (tensor, *_parents(tensor))}
    return {id(t) for t in order} - kept


def _tail_start(order, head, kept, max_nodes):
    """The earliest position from which the tail (with each op's inputs) still fits the budget."""
    kept, start = set(kept), len(order)
    for i in range(len(order) - 1, head - 1, -1):
        new = {id(order[i]), *map(id, _parents(order[i]))} - kept
        if len(kept) + len(new) > max_nodes:
            break
        kept |= new
        start = i
    return start


def _single_tensor_cuts(order, root_ids):
    """Positions i after which exactly one non-leaf tensor of order[:i+1] is still needed.

    Leaves do not count: a parameter used by many layers is drawn wherever it is needed.
    """
    last_use = {}
    for i, tensor in enumerate(order):
        for parent in _parents(tensor):
            if parent.node is not None:
                last_use[id(parent)] = i
    ending = collections.Counter(last_use.values())
    cuts, live = [], 0
    for i, tensor in enumerate(order):
        live -= ending[i]
        if tensor.node is not None:
            live += 1 if id(tensor) in last_use or id(tensor) in root_ids else 0
        if live == 1 and tensor.node is not None and id(tensor) in last_use and id(tensor) not in root_ids:
            cuts.append(i)
    return cuts


def _elision_label(hidden):
    ops = [t.node.op.name for t in hidden if t.node is not None]
    lines = [f"… {len(hidden):,} more nodes …"]
    period = _period(ops)
    if ops and period == 1:
        lines.append(f"{ops[0]} ×{len(ops):,}")
    elif ops and period <= 6 and len(ops) >= 2 * period:
        lines.append(f"{len(ops):,} ops: ({' → '.join(ops[:period])}) repeated")
    elif ops:
        counts = collections.Counter(ops).most_common()
        lines.append(", ".join(f"{name} ×{n:,}" for name, n in counts[:4]) + (", …" if len(counts) > 4 else ""))
    return escape_lines(lines)


def _period(sequence):
    """The smallest p such that sequence[i] == sequence[i + p] for all i (Knuth–Morris–Pratt failure function)."""
    failure = [0] * len(sequence)
    for i in range(1, len(sequence)):
        k = failure[i - 1]
        while k and sequence[i] != sequence[k]:
            k = failure[k - 1]
        failure[i] = k + (sequence[i] == sequence[k])
    return len(sequence) - (failure[-1] if sequence else 0)
