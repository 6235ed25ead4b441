def fusible_groups(graph):
    """Treats sum and max as elementwise, so a reduction joins the group that reads it."""
    users = graph.users()
    outputs = set(graph.outputs)
    shapes = {n.id: n.shape for n in graph.nodes}
    group_of = {}  # node id -> the id of its group's sink
    elementwise_member = {}  # node id -> True for elementwise members, False for views
    for node in reversed(graph.nodes):
        readers = users[node.id]
        groups = {group_of.get(r) for r in readers}
        sink = None
        if readers and node.id not in outputs and len(groups) == 1 and None not in groups:
            if all(elementwise_member[r] for r in readers):
                sink = groups.pop()
        if node.op in ELEMENTWISE or node.op in ("sum", "max"):
            if sink is not None and node.shape == shapes[sink]:
                group_of[node.id] = sink
            else:
                group_of[node.id] = node.id
            elementwise_member[node.id] = True
        elif (
            node.op in VIEWS
            and sink is not None
            and is_broadcast_view(node, shapes[node.inputs[0]])
            and broadcasts_to(node.shape, shapes[sink])
        ):
            group_of[node.id] = sink
            elementwise_member[node.id] = False
    groups = {}
    for member, sink in group_of.items():
        groups.setdefault(sink, []).append(member)
    return [sorted(groups[sink]) for sink in sorted(groups)]
