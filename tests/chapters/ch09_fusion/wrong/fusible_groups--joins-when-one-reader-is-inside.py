def fusible_groups(graph):
    """Joins the group of any one reader, so a value read outside its group is not materialised (two outputs)."""
    users = graph.users()
    outputs = set(graph.outputs)
    shapes = {n.id: n.shape for n in graph.nodes}
    group_of = {}  # node id -> the id of its group's sink
    elementwise_member = {}  # node id -> True for elementwise members, False for views
    for node in reversed(graph.nodes):
        readers = users[node.id]
        groups = sorted(group_of[r] for r in readers if elementwise_member.get(r))
        sink = None
        if node.id not in outputs and groups:
            sink = groups[0]
        if node.op in ELEMENTWISE:
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
