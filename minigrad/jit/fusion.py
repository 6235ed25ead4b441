"""Operator fusion: merge chains of elementwise operations into one kernel each.

On modern hardware an elementwise operation costs what it moves, not what it computes: a float32
`tanh` does a few dozen flops per element while reading and writing 8 bytes, and memory delivers
bytes an order of magnitude slower than cores consume them. Run one by one, GELU's nine operations
move every intermediate through main memory and back (9 reads and 9 writes per element); fused into
one loop, each element is read once, kept in registers through all nine operations, and written
once. Fusion is the main optimisation of XLA, TVM and torch.compile (Inductor).

`fusible_groups(graph)` finds the groups; `fuse(graph)` rewrites each into one "fused" node whose
params hold the group as a small graph of its own (`("body", Graph)`, `("kind", "elementwise")`):

* Members are elementwise operations (`ELEMENTWISE`) of one shape, the group's iteration space.
  Operands of other shapes are read with broadcasting, so a bias row or a scalar costs nothing.
  A `broadcast_to`, or a `reshape` that only adds or removes axes of length 1, is a change of view:
  it joins the group that reads it (the kernel indexes its operand directly) but starts none.
* A kernel writes one result: every member except the last (the sink) is read only by members of
  the group and is not a graph output. A value read by two groups is therefore materialised once
  and read twice, rather than recomputed in both (XLA would duplicate cheap ones; we keep it simple).
* Reductions, matrix products, indexing and reshapes that move data are never members: they end a
  group. Fusing across a reduction would compute the sum once per output element.

Groups grow backwards from their sink, visiting nodes in reverse topological order: a node joins
the group that reads it if all of its readers are compute members of that one group. That rule
makes groups convex (no path leaves a group and comes back into it, which would make the fused node
depend on itself), and maximal under the single-output rule.

`fuse` then merges a 2-D matrix product into the group that is its only reader, when that group
computes at the product's shape: matmul + bias + activation in one kernel ("linear_epilogue"), the
pattern of every dense layer (cuBLAS/oneDNN "epilogues", XLA's output fusion).

Node ids are kept: a fused node takes the id of its sink, and its body keeps the members' ids, so a
fused graph can be compared with the graph it came from.
"""

from ..errors import MinigradError
from .ir import SOURCES, Graph, Node
from .optable import ELEMENTWISE, VIEWS


class InvalidGroups(MinigradError, ValueError):
    """Fusion groups that break a rule (see `check_groups`)."""


def is_broadcast_view(node, operand_shape):
    """True for a broadcast_to, and for a reshape of an operand of `operand_shape` that only inserts
    or removes axes of length 1: operations that change how an array is indexed, not the order of
    its elements."""
    if node.op == "broadcast_to":
        return True
    if node.op == "reshape":
        return tuple(n for n in operand_shape if n != 1) == tuple(n for n in node.shape if n != 1)
    return False


def broadcasts_to(shape, target):
    """True if numpy broadcasting stretches `shape` to exactly `target`."""
    if len(shape) > len(target):
        return False
    return all(n in (1, t) for n, t in zip(reversed(shape), reversed(target)))


def fusible_groups(graph):
    """The fusion groups of `graph`: a list of lists of node ids, each sorted, ordered by sink id.

    Every elementwise node is in exactly one group (possibly alone); view nodes (`is_broadcast_view`)
    are in at most one. See the module docstring for the rules.
    """
    users = graph.users()
    outputs = set(graph.outputs)
    shapes = {n.id: n.shape for n in graph.nodes}
    group_of = {}  # node id -> sink id of its group
    shape_of = {}  # sink id -> the group's shape
    compute = {}  # node id -> True for elementwise members, False for view members
    for node in reversed(graph.nodes):
        readers = users[node.id]
        groups = {group_of.get(r) for r in readers}
        joinable = (
            readers
            and node.id not in outputs
            and len(groups) == 1
            and None not in groups
            and all(compute[r] for r in readers)
        )
        sink = groups.pop() if joinable else None
        if node.op in ELEMENTWISE:
            if sink is not None and node.shape == shape_of[sink]:
                group_of[node.id] = sink
            else:
                group_of[node.id] = node.id
                shape_of[node.id] = node.shape
            compute[node.id] = True
        elif (
            node.op in VIEWS
            and sink is not None
            and is_broadcast_view(node, shapes[node.inputs[0]])
            and broadcasts_to(node.shape, shape_of[sink])
        ):
            group_of[node.id] = sink
            compute[node.id] = False
    groups = {}
    for member, sink in group_of.items():
        groups.setdefault(sink, []).append(member)
    return [sorted(groups[sink]) for sink in sorted(groups)]


def fuse(graph, epilogues=True, epilogue_max_inner=None):
    """A new graph in which each fusion group is one "fused" node (see the module docstring).

    epilogues: also merge a matmul into the elementwise group that is its only reader.
    epilogue_max_inner: merge only products whose inner dimension k is at most this (None: any).
        A backend with a fast BLAS sets it: for large k the product is compute-bound, and BLAS's
        blocked product then wins over a one-pass kernel's simple loops.
    Scalar constants read by a group move into its body, so a kernel's structure includes them;
    larger constants stay outside and become inputs of the fused node.
    """
    by_id = {n.id: n for n in graph.nodes}
    users = graph.users()
    groups = [set(g) for g in fusible_groups(graph)]
    if epilogues:
        max_inner = float("inf") if epilogue_max_inner is None else epilogue_max_inner
        groups = [_with_epilogue(g, by_id, users, graph.outputs, max_inner) for g in groups]
    sink_of = {}
    fused = {}
    for members in groups:
        sink = max(members)
        fused[sink] = _fused_node(sorted(members), by_id)
        sink_of.update({m: sink for m in members})
    nodes = []
    for node in graph.nodes:
        if node.id in fused:
            nodes.append(fused[node.id])
        elif node.id not in sink_of:
            nodes.append(node)
    return Graph(_without_unread_constants(nodes, graph.outputs), list(graph.inputs), list(graph.outputs))


def _with_epilogue(members, by_id, users, outputs, max_inner):
    """`members` plus the 2-D matmul that only they read, if there is one of the group's shape and dtype."""
    sink = by_id[max(members)]
    shape = sink.shape
    for member in sorted(members):
        for source in by_id[member].inputs:
            node = by_id[source]
            if (
                node.op == "matmul"
                and node.shape == shape
                and len(shape) == 2
                and node.dtype == sink.dtype
                and all(len(by_id[i].shape) == 2 for i in node.inputs)
                and by_id[node.inputs[0]].shape[1] <= max_inner
                and source not in outputs
                and set(users[source]) <= members
                and all(by_id[r].op in ELEMENTWISE for r in users[source])
            ):
                return members | {source}
    return members


def _fused_node(members, by_id):
    """The "fused" node computing the group `members` (sorted ids): one body graph, one output."""
    inside = set(members)
    sources = sorted({s for m in members for s in by_id[m].inputs} - inside)
    matmul_operands = {s for m in members if by_id[m].op == "matmul" for s in by_id[m].inputs}
    body, external = [by_id[m] for m in members], []
    for source in sources:
        operand = by_id[source]
        if operand.op == "constant" and operand.size == 1 and source not in matmul_operands:
            body.append(operand)  # becomes a literal of the kernel
        else:
            external.append(source)
            body.append(Node(source, "input", (), operand.shape, operand.dtype))
    body.sort(key=lambda n: n.id)
    sink = by_id[members[-1]]
    kind = "linear_epilogue" if matmul_operands else "elementwise"
    graph = Graph(body, external, [sink.id])
    return Node(sink.id, "fused", tuple(external), sink.shape, sink.dtype, (("body", graph), ("kind", kind)))


def _without_unread_constants(nodes, outputs):
    """Drop constants that only fused bodies read now (they moved into the bodies)."""
    read = set(outputs)
    for node in nodes:
        read.update(node.inputs)
    return [n for n in nodes if n.op != "constant" or n.id in read]


def fused_bodies(graph):
    """(fused node, body graph, kind) for every fused node of `graph`, in order."""
    return [(n, dict(n.params)["body"], dict(n.params)["kind"]) for n in graph.nodes if n.op == "fused"]


def describe_groups(graph):
    """One line per fusion group: its ops in order, e.g. '%12 <- mul, add, tanh (4 ops, (64, 256))'."""
    by_id = {n.id: n for n in graph.nodes}
    lines = []
    for group in fusible_groups(graph):
        ops = [by_id[i].op for i in group if by_id[i].op not in SOURCES]
        lines.append(f"%{group[-1]} <- {', '.join(ops)} ({len(ops)} ops, {by_id[group[-1]].shape})")
    return lines


def check_groups(graph, groups):
    """Raise InvalidGroups, saying which rule fails where, unless `groups` are the fusion groups of
    `graph`. A restatement of the rules that does not use `fusible_groups`:

    1. groups are non-empty sorted lists of ids, disjoint, listed in the order of their last ids;
       every elementwise node is in one;
    2. a group ends with an elementwise node (its sink); its elementwise members have the sink's
       shape; its other members are broadcast views of nodes outside the group whose shape
       broadcasts to the sink's;
    3. every member but the sink is read only by elementwise members of its group, and is not a
       graph output (one value leaves a kernel);
    4. maximal: no node outside a group satisfies 2 and 3 for it while all of its readers are there.
    Returns None when all hold.
    """
    by_id = {n.id: n for n in graph.nodes}
    users, outputs = graph.users(), set(graph.outputs)
    owner = {}
    for group in groups:
        if not group or list(group) != sorted(group):
            raise InvalidGroups(f"group {group}: expected a non-empty list of node ids in increasing order")
        for member in group:
            if member not in by_id:
                raise InvalidGroups(f"group {group}: the graph has no node %{member}")
            if member in owner:
                raise InvalidGroups(f"%{member} is in two groups, {owner[member]} and {group}")
            owner[member] = group
    sinks = [group[-1] for group in groups]
    if sinks != sorted(sinks):
        raise InvalidGroups(f"groups {groups}: expected them in the order of their last ids, {sorted(sinks)}")
    missing = [str(n) for n in graph.nodes if n.op in ELEMENTWISE and n.id not in owner]
    if missing:
        raise InvalidGroups("elementwise nodes in no group:\n  " + "\n  ".join(missing))
    for group in groups:
        members, sink = set(group), by_id[group[-1]]
        if sink.op not in ELEMENTWISE:
            raise InvalidGroups(f"group {group} must end with an elementwise node, ends with {sink}")
        for member in group:
            _check_member(by_id[member], by_id, members, sink, group)
        for member in group[:-1]:
            _check_single_output(by_id[member], by_id, users[member], outputs, members, group)
        for node in graph.nodes:
            readers = users[node.id]
            if node.id in members or node.id in outputs or not readers:
                continue
            if all(r in members and by_id[r].op in ELEMENTWISE for r in readers) and _fits(node, by_id, members, sink):
                raise InvalidGroups(f"{node} could join group {group} (all its readers are there) but is left out")
    return None


def _fits(node, by_id, members, sink):
    """Rule 2 for a node that is or would be a member of a group ending in `sink`."""
    if node.op in ELEMENTWISE:
        return node.shape == sink.shape
    return (
        node.op in VIEWS
        and node.inputs[0] not in members
        and is_broadcast_view(node, by_id[node.inputs[0]].shape)
        and broadcasts_to(node.shape, sink.shape)
    )


def _check_member(node, by_id, members, sink, group):
    if not _fits(node, by_id, members, sink):
        raise InvalidGroups(
            f"{node} cannot be in group {group} (shape {sink.shape}): members are elementwise ops of the "
            f"group's shape, or broadcast views of values computed outside it"
        )


def _check_single_output(node, by_id, readers, outputs, members, group):
    if node.id in outputs:
        raise InvalidGroups(f"{node} is a graph output inside group {group}: only its last node may leave it")
    outside = [r for r in readers if r not in members or by_id[r].op not in ELEMENTWISE]
    if outside:
        raise InvalidGroups(
            f"{node} in group {group} is read by {', '.join(f'%{r}' for r in outside)} outside the group "
            f"(or by a view): the kernel would have to write it too"
        )
