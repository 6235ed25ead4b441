"""minigrad.jit.plain: a Graph as plain data and back, trusting nothing on the way in."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.jit import Graph, Node, trace
from minigrad.jit.plain import graph_data, graph_from_data, int_data, param_data, param_from_data, validated


def traced():
    x = mg.tensor(np.arange(6.0).reshape(2, 3))
    return trace(lambda x: (x * 2.0 + 1.0).tanh()[0, 1:].reshape((2,)).sum(axis=0), x)


def same(a, b):
    assert (a.inputs, a.outputs) == (b.inputs, b.outputs)
    for m, n in zip(a.nodes, b.nodes, strict=True):
        assert (m.id, m.op, m.inputs, m.shape, m.dtype) == (n.id, n.op, n.inputs, n.shape, n.dtype)
        assert len(m.params) == len(n.params)
        for (key, value), (key2, value2) in zip(m.params, n.params):
            assert key == key2 and type(value) is type(value2) and np.array_equal(value, value2)


def test_a_traced_graph_survives_the_round_trip():
    graph = traced()
    data = graph_data(graph)
    assert all(type(row[1]) is str and type(row[0]) is int for row in data["nodes"])
    same(graph_from_data(data, "trace(f, x)"), graph)
    validated(graph_from_data(data, "trace(f, x)"), "trace(f, x)")


@pytest.mark.parametrize("value", [np.ones(3), np.float32(2.5), np.dtype("int64"), 3, 2.0, None, "a",
                                   slice(1, None, 2), (1, (2, 3)), [4, 5]])
def test_every_kind_of_param_value_round_trips(value):
    back = param_from_data(param_data(value), "params")
    assert type(back) is type(value)
    assert (np.array_equal(back, value) if isinstance(value, np.ndarray) else back == value)


@pytest.mark.parametrize("data, message", [
    ("a list", "expected a Graph, got a list"),
    ({"nodes": [[0, "input", [], [3], "float64"]], "inputs": [0], "outputs": [0]}, "malformed node data"),
    ({"nodes": [[0, "input", [], [-1], "float64", ["tuple", []]]], "inputs": [0], "outputs": [0]}, "has shape [-1]"),
    ({"nodes": [[0, "input", [], [3], "float99", ["tuple", []]]], "inputs": [0], "outputs": [0]}, "has dtype 'float99'"),
    ({"nodes": [[0, 7, [], [3], "float64", ["tuple", []]]], "inputs": [0], "outputs": [0]}, "an op that is 7"),
    ({"nodes": [[0, "input", [], [3], "float64", ["unknown", "Tensor"]]], "inputs": [0], "outputs": [0]},
     "a param value is a Tensor"),
    ({"nodes": [], "inputs": ["0"], "outputs": []}, "graph.inputs must be a list"),
])
def test_malformed_data_fails_naming_the_call_and_the_field(data, message):
    with pytest.raises(AssertionError, match="^trace\\(f, x\\)") as raised:
        graph_from_data(data, "trace(f, x)")
    assert message in str(raised.value)


def test_what_is_not_a_graph_encodes_as_its_description():
    assert graph_data([1, 2]) == "a list"
    assert graph_data(Graph([object()], [], [])) == "a Graph with a object among its nodes"


def test_validated_names_the_call_on_a_graph_that_reads_a_later_node():
    graph = Graph([Node(0, "neg", (1,), (3,), "float64"), Node(1, "input", (), (3,), "float64")], [1], [0])
    with pytest.raises(AssertionError, match="^eliminate_dead_code returned a malformed graph"):
        validated(graph, "eliminate_dead_code")


def test_int_data_keeps_ints_and_describes_the_rest():
    assert [int_data(3), int_data(np.int64(4))] == [3, 4] and type(int_data(np.int64(4))) is int
    assert [int_data(True), int_data(2.0), int_data("3")] == ["a bool", "a float", "a str"]
