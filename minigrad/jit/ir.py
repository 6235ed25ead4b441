"""The jit's intermediate representation: a static graph as a flat list of nodes.

A traced program is a `Graph`: its `nodes` in topological order, each a `Node` saying which
primitive it applies (`op`, the `Primitive.name` of `minigrad.ops`, or "input" / "constant"), to
which earlier nodes (`inputs`, by id), and what it produces (`shape`, `dtype`). Nothing here holds a
Tensor or a numpy result: the graph describes a computation and can be run many times, with new
inputs, by a backend. Passes (dead-code elimination, fusion, memory planning) read a Graph and
return a new one or a plan, never mutating it.

Node ids are unique within a graph and increase in topological order, so `a.id < b.id` whenever
`b` reads `a`. Params are the primitive's keyword parameters as a sorted tuple of (name, value)
pairs. Most values are hashable (axes, shapes, dtypes); a few are numpy arrays (the value of a
"constant", the condition of "where", fancy indices of "getitem") or slices, which Python 3.11
cannot hash: `Node.key()` gives a hashable structural key for every node, for caches.

Which ops exist is `minigrad.ops.PRIMITIVES`; what the passes and backends know about each one
(elementwise or not, its kernel expression, ...) is the table `minigrad.jit.optable`.
"""

import dataclasses
import math

import numpy as np

from ..labels import short

SOURCES = frozenset({"input", "constant"})  # nodes that read no other node


@dataclasses.dataclass(frozen=True)
class Node:
    """One operation of a static graph: `id = op(*inputs, **params) : shape dtype`."""

    id: int
    op: str
    inputs: tuple
    shape: tuple
    dtype: str
    params: tuple = ()

    @property
    def param_dict(self):
        """The params as a dict, ready for `primitive.forward(*arrays, **node.param_dict)`."""
        return dict(self.params)

    @property
    def size(self):
        """Number of elements of the node's value."""
        return math.prod(self.shape)

    @property
    def nbytes(self):
        """Bytes the node's value occupies when materialised (what memory planning allocates)."""
        return self.size * np.dtype(self.dtype).itemsize

    def key(self):
        """A hashable structural key: equal for nodes that compute the same thing the same way.

        Arrays in params enter by dtype, shape and contents, slices as (start, stop, step).
        """
        return (self.id, self.op, self.inputs, self.shape, self.dtype, _hashable(self.params))

    def __str__(self):
        args = [f"%{i}" for i in self.inputs]
        args += [f"{name}={_param_text(value)}" for name, value in self.params]
        return f"%{self.id} = {self.op}({', '.join(args)}) : {self.shape} {self.dtype}"


@dataclasses.dataclass
class Graph:
    """A static graph: nodes in topological order, which of them are inputs and outputs.

    `inputs` lists the ids of the "input" nodes in the order the compiled function takes its
    arguments; `outputs` the ids of the nodes it returns (a node may appear more than once).
    """

    nodes: list
    inputs: list
    outputs: list

    def node(self, id):
        """The node with this id (KeyError naming the id if the graph has none)."""
        index = self._index()
        if id not in index:
            raise KeyError(f"Graph.node: no node %{id} in this graph of {len(self.nodes)} nodes")
        return self.nodes[index[id]]

    def _index(self):
        return {n.id: i for i, n in enumerate(self.nodes)}

    def users(self):
        """For each node id, the ids of the nodes that read it (once per reading node, in order)."""
        users = {n.id: [] for n in self.nodes}
        for n in self.nodes:
            for i in dict.fromkeys(n.inputs):
                users[i].append(n.id)
        return users

    def validate(self):
        """Raise ValueError unless ids are unique and increasing, inputs point backwards and
        `inputs` / `outputs` name nodes of the graph. Returns the graph, for chaining."""
        seen = set()
        for n in self.nodes:
            if seen and n.id <= max(seen):
                raise ValueError(f"Graph: node ids must increase in topological order, %{n.id} comes after %{max(seen)}")
            missing = [i for i in n.inputs if i not in seen]
            if missing:
                raise ValueError(f"Graph: {n} reads {', '.join(f'%{i}' for i in missing)}, not defined before it")
            seen.add(n.id)
        bad_inputs = [i for i in self.inputs if i not in seen or self.node(i).op != "input"]
        bad_outputs = [i for i in self.outputs if i not in seen]
        if bad_inputs or bad_outputs:
            raise ValueError(f"Graph: inputs {bad_inputs} are not input nodes / outputs {bad_outputs} are not nodes")
        return self

    def __str__(self):
        header = f"graph({', '.join(f'%{i}' for i in self.inputs)}) -> ({', '.join(f'%{i}' for i in self.outputs)})"
        return "\n".join([header, *(f"  {n}" for n in self.nodes)])

    def __repr__(self):
        ops = [n.op for n in self.nodes if n.op not in SOURCES]
        return f"<Graph: {len(self.nodes)} nodes ({len(ops)} ops), {len(self.inputs)} inputs, {len(self.outputs)} outputs>"


def _hashable(value):
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, slice):
        return ("slice", value.start, value.stop, value.step)
    if isinstance(value, (tuple, list)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, Graph):
        return ("graph", tuple(n.key() for n in value.nodes), tuple(value.inputs), tuple(value.outputs))
    return value


def _param_text(value):
    """A param value for the listing: a body graph by its size, anything else as `labels.short` writes it."""
    return f"<graph of {len(value.nodes)} nodes>" if isinstance(value, Graph) else short(value, 32)
