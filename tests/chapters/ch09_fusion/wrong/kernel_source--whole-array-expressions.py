def kernel_source(body):
    """Right values, but no loop: whole-array numpy expressions inside the kernel, each allocating a temporary."""
    arrays = {"math.": "np.", "max({0}, 0.0)": "np.maximum({0}, 0.0)", "abs({0})": "np.abs({0})"}
    out = body.node(body.outputs[0])
    names, lines = {}, []
    for node in body.nodes:
        if node.op == "input":
            names[node.id] = f"a{body.inputs.index(node.id)}"
        elif node.op == "constant":
            names[node.id] = f"v{node.id}"
            lines.append(f"v{node.id} = {float(np.asarray(node.param_dict['value']))!r}")
        else:
            template = EXPRESSIONS[node.op]
            for scalar, vectorised in arrays.items():
                template = template.replace(scalar, vectorised)
            names[node.id] = f"v{node.id}"
            lines.append(f"v{node.id} = " + template.format(*[names[i] for i in node.inputs], **node.param_dict))
    lines.append(f"out[...] = {names[out.id]}")
    arguments = [f"a{k}" for k in range(len(body.inputs))] + ["out"]
    header = ["import numpy as np", "from numba import njit", "", "", "@njit(cache=True)", f"def kernel({', '.join(arguments)}):"]
    return "\n".join(header + ["    " + line for line in lines]) + "\n"
