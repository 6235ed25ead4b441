def topological_sort(output):
    """The textbook recursive depth-first search: right on small graphs, dies on deep ones."""
    order, done, open_ = [], set(), set()

    def visit(tensor):
        if id(tensor) in done:
            return
        if id(tensor) in open_:
            raise GraphError("topological_sort: the graph has a cycle")
        open_.add(id(tensor))
        for parent in tensor.parents:
            visit(parent)
        open_.discard(id(tensor))
        done.add(id(tensor))
        order.append(tensor)

    visit(output)
    return order
