"""The grader's process boundary (course.wire), in one process: two endpoints on a socket pair.

What the sandbox sends, the judge's restricted unpickler must refuse unless it is plain data or a
tensor: classes, functions, subclasses of plain types, object arrays. Tensors must keep their
identity across the boundary and bring back what the student's code did to them; a 20,000-node
chain must cross without recursion.
"""

import io
import os
import pickle
import threading

import numpy as np
import pytest

import minigrad as mg
from course import wire


class AlwaysEqual(list):
    def __eq__(self, other):
        return True


def _refuse(obj, key_for):
    """The sandbox's policy, reduced: module-level names by reference, nothing else."""
    if wire.by_reference(obj):
        return None
    raise wire.NotPlainData(type(obj).__name__)


@pytest.fixture
def pair():
    """(judge endpoint, sandbox endpoint, call): call(fn, *args) runs fn on the sandbox side."""
    judge_end, sandbox_end = wire.socket_pair()
    judge = wire.Endpoint(judge_end, wire.JUDGE, True, lambda o, k: None if wire.by_reference(o) else ("object",), _refuse)
    sandbox = wire.Endpoint(sandbox_end, wire.STUDENT, False, _refuse, lambda key, d: None)

    def call(fn, *args):
        outcome = {}

        def serve():
            try:
                received = sandbox.recv()
                sandbox.send(("return", fn(*received)))
            except Exception as error:  # noqa: BLE001 - handed back to the test
                outcome["error"] = error
                sandbox.send(("failed", repr(error)))

        worker = threading.Thread(target=serve)
        worker.start()
        judge.send(args)
        reply = judge.recv(deadline=None)
        worker.join()
        if "error" in outcome:
            raise outcome["error"]
        return reply[1]

    yield judge, sandbox, call
    judge_end.close()
    sandbox_end.close()


def test_tensors_keep_identity_and_bring_back_gradients(pair):
    _, _, call = pair
    x1, x2 = mg.tensor(2.0, requires_grad=True), mg.tensor(5.0, requires_grad=True)
    y = x1.log() + x1 * x2 - x2.sin()
    order = call(mg.topological_sort, y)
    assert order[0] in (x1, x2) and order[-1] is y, "the sort's result must hold the judge's own tensors"
    call(mg.backward, y)
    assert x1.grad is not None and np.isclose(x1.grad.item(), 1 / 2 + 5), x1.grad
    assert np.isclose(x2.grad.item(), 2 - np.cos(5.0)), x2.grad


def test_in_place_changes_come_back(pair):
    _, _, call = pair
    x = mg.tensor(np.array([1.0, 2.0]))

    def scale(t):
        t.data *= 3
        return None

    call(scale, x)
    assert np.array_equal(x.data, [3.0, 6.0]), x.data


def test_deep_chain_crosses_without_recursion(pair):
    _, _, call = pair
    x = y = mg.tensor(0.5, requires_grad=True)
    for _ in range(20_000):
        y = y.tanh()
    order = call(mg.topological_sort, y)
    assert len(order) == 20_001 and order[0] is x and order[-1] is y


def test_subclass_of_plain_type_is_refused_at_the_source(pair):
    _, _, call = pair
    with pytest.raises(wire.NotPlainData):
        call(lambda: AlwaysEqual([1]))


@pytest.mark.parametrize("payload", [
    pickle.dumps(AlwaysEqual([1])),  # a list subclass (its class lives in the sandbox)
    pickle.dumps(os.system),  # a function
    pickle.dumps(np.array([object()], dtype=object)[:0]),  # an object array
    b"cos\nsystem\n(S'true'\ntR.",  # hand-written: call os.system
])
def test_restricted_unpickler_refuses_anything_but_plain_data(payload):
    with pytest.raises((wire.WireError, pickle.UnpicklingError)):
        value = wire.RestrictedUnpickler(io.BytesIO(payload), None).load()
        wire.check_plain_tree(value, frozenset())


def test_plain_values_and_arrays_cross(pair):
    _, _, call = pair
    value = call(lambda: ({"a": (1, 2.5, None)}, np.arange(6.0).reshape(2, 3), np.float32(1.5), slice(1, None), ...))
    assert value[0] == {"a": (1, 2.5, None)} and value[1].shape == (2, 3) and type(value[2]) is np.float32
    assert value[3] == slice(1, None) and value[4] is Ellipsis
