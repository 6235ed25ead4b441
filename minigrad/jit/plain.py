"""Graphs as plain data: what crosses between a test's driver and its checker, or into a JSON file.

`graph_data(graph)` turns a `Graph` into lists, ints, strings and numpy arrays (each param tagged by
`param_data`); `graph_from_data(data, what)` rebuilds the Graph and checks every field on the way,
failing with an AssertionError that starts with `what` (the call being tested, e.g. "trace(f, x)").
The course's chapters 8 and 9 grade with these: a student's function runs in one process and the
test in another, and only plain data may cross, so the decoder trusts nothing it is given.
Anything that is not a Graph encodes as a description ("a list"), which the decoder rejects with
that description in its message.
"""

import numpy as np

from .ir import Graph, Node

_IR_DTYPES = frozenset("bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 "
                       "complex64 complex128".split())


def int_data(value):
    """An id or a length as a Python int; a description of anything else (which the tests reject)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    return f"a {type(value).__name__}"


def _ids_data(values):
    """A list of ids (or a shape) as a list of int_data; a description when it is no list or tuple."""
    if not isinstance(values, (tuple, list)):
        return f"a {type(values).__name__}"
    return [int_data(v) for v in values]


def param_data(value):
    """A param value (an array, a number, a tuple, a slice, a dtype, a Graph) as tagged plain data."""
    if isinstance(value, np.ndarray):
        return ["array", value]
    if isinstance(value, (np.bool_, np.number)):
        return ["scalar", value]
    if isinstance(value, np.dtype):
        return ["dtype", value.name]
    if type(value) in (bool, int, float, str, type(None)):
        return ["py", value]
    if isinstance(value, slice):
        return ["slice", param_data(value.start), param_data(value.stop), param_data(value.step)]
    if isinstance(value, (tuple, list)):
        return ["tuple" if isinstance(value, tuple) else "list", [param_data(v) for v in value]]
    if isinstance(value, Graph):
        return ["graph", graph_data(value)]
    return ["unknown", type(value).__name__]


def graph_data(graph):
    """A Graph as plain data: {"nodes": [[id, op, inputs, shape, dtype, params], ...], "inputs": [...],
    "outputs": [...]}, every param tagged by param_data. For anything that is not a Graph: a description."""
    if not isinstance(graph, Graph):
        return f"a {type(graph).__name__}"
    if not isinstance(graph.nodes, (list, tuple)):
        return f"a Graph whose nodes are a {type(graph.nodes).__name__}"
    rows = []
    for node in graph.nodes:
        if not isinstance(node, Node):
            return f"a Graph with a {type(node).__name__} among its nodes"
        dtype = node.dtype.name if isinstance(node.dtype, np.dtype) else node.dtype
        rows.append([int_data(node.id), node.op if type(node.op) is str else f"a {type(node.op).__name__}",
                     _ids_data(node.inputs), _ids_data(node.shape), dtype if type(dtype) is str else f"a {type(dtype).__name__}",
                     param_data(node.params)])
    return {"nodes": rows, "inputs": _ids_data(graph.inputs), "outputs": _ids_data(graph.outputs)}


def _fail(what, problem):
    raise AssertionError(f"{what}: {problem}")


def _checked_ids(values, what, name):
    """`values` when it is a list of ints (decoded ids or a shape), else the AssertionError naming `name`."""
    if type(values) is not list or not all(type(v) is int for v in values):
        _fail(what, f"{name} must be a list or tuple of int ids, got {values!r:.200}")
    return values


def param_from_data(item, what):
    """The param value param_data described (AssertionError, saying what, on anything malformed)."""
    if type(item) is not list or len(item) < 2 or type(item[0]) is not str:
        _fail(what, f"malformed param data {item!r:.200}")
    tag, body = item[0], item[1:]
    if tag == "array" and len(body) == 1 and type(body[0]) is np.ndarray:
        return body[0]
    if tag == "scalar" and len(body) == 1 and isinstance(body[0], (np.bool_, np.number)):
        return body[0]
    if tag == "py" and len(body) == 1 and type(body[0]) in (bool, int, float, str, type(None)):
        return body[0]
    if tag == "dtype" and len(body) == 1 and body[0] in _IR_DTYPES:
        return np.dtype(body[0])
    if tag == "slice" and len(body) == 3:
        parts = [param_from_data(part, what) for part in body]
        if all(p is None or type(p) is int for p in parts):
            return slice(*parts)
    if tag in ("tuple", "list") and len(body) == 1 and type(body[0]) is list:
        items = [param_from_data(part, what) for part in body[0]]
        return tuple(items) if tag == "tuple" else items
    if tag == "graph" and len(body) == 1:
        return graph_from_data(body[0], what)
    if tag == "unknown" and len(body) == 1:
        _fail(what, f"a param value is a {body[0]}; params hold arrays, numbers, tuples, slices or dtypes")
    _fail(what, f"malformed param data {item!r:.200}")


def graph_from_data(data, what):
    """The Graph that graph_data described, rebuilt here (AssertionError, saying what, on anything that is not
    a well-formed graph; `what` names the call, e.g. "trace(f, x, y)")."""
    if type(data) is str:
        _fail(what, f"expected a Graph, got {data}")
    if type(data) is not dict or set(data) != {"nodes", "inputs", "outputs"} or type(data["nodes"]) is not list:
        _fail(what, f"expected a Graph, got malformed graph data {data!r:.200}")
    nodes = []
    for k, row in enumerate(data["nodes"]):
        if type(row) is not list or len(row) != 6:
            _fail(what, f"malformed node data {row!r:.200}")
        id_, op, inputs, shape, dtype, params = row
        if type(id_) is not int:
            _fail(what, f"node {k} has an id that is {id_!r:.80}, not an int")
        if type(op) is not str:
            _fail(what, f"node %{id_} has an op that is {op!r:.80}, not a str")
        _checked_ids(inputs, what, f"the inputs of node %{id_} ({op})")
        if type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape):
            _fail(what, f"node %{id_} ({op}) has shape {shape!r:.80}: expected a tuple of non-negative ints")
        if type(dtype) is not str or dtype not in _IR_DTYPES:
            _fail(what, f"node %{id_} ({op}) has dtype {dtype!r:.80}: expected a numpy dtype name such as 'float64'")
        params = param_from_data(params, f"{what}, node %{id_} ({op})")
        if type(params) is not tuple or not all(type(p) is tuple and len(p) == 2 and type(p[0]) is str for p in params):
            _fail(what, f"node %{id_} ({op}) has params {params!r:.200}: expected a tuple of (name, value) pairs")
        nodes.append(Node(id_, op, tuple(inputs), tuple(shape), dtype, params))
    inputs = _checked_ids(data["inputs"], what, "graph.inputs")
    outputs = _checked_ids(data["outputs"], what, "graph.outputs")
    return Graph(nodes, list(inputs), list(outputs))


def validated(graph, what):
    """graph.validate() (ids increase, nodes read earlier nodes, inputs and outputs exist), failing with `what`."""
    try:
        return graph.validate()
    except (ValueError, KeyError) as error:
        raise AssertionError(f"{what} returned a malformed graph: {error}") from None
