"""Every error path: a `MinigradError` subclass whose message names the operation and the shapes or values.

Each case gives the expected class and fragments the message must contain, so that a message
that stops naming the op or the offending shape fails here, not in front of a student.
"""

import re

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.errors import DtypeError, GraphError, MinigradError, ShapeError


def x23():
    return mg.tensor(np.ones((2, 3)), requires_grad=True)


def freed_twice():
    x = x23()
    y = (x.exp() * 2.0).sum()
    y.backward()
    y.backward()


def freed_through_a_shared_intermediate():
    x = x23()
    h = x.sigmoid()
    (h * 2.0).sum().backward()
    (h * 3.0).sum().backward()


def backward_of_a_no_grad_result():
    x = x23()
    with mg.no_grad():
        y = (x * 2.0).sum()
    y.backward()


def cycle(call):
    """A graph made cyclic by hand: a's node takes b, which was computed from a."""
    x = mg.tensor(2.0, requires_grad=True)
    a = x * 3.0
    b = a.exp()
    a.node.inputs = (b, a.node.inputs[1])
    call(b)


CASES = {
    # shape mismatches
    "add": (lambda: x23() + mg.tensor(np.ones(4)), ShapeError, ["add", "(2, 3)", "(4,)"]),
    "mul-broadcast": (lambda: x23() * mg.tensor(np.ones((3, 2))), ShapeError, ["mul", "(2, 3)", "(3, 2)"]),
    "matmul": (lambda: x23() @ mg.tensor(np.ones((4, 5))), ShapeError, ["matmul", "(2, 3)", "(4, 5)"]),
    "matmul-1d": (lambda: mg.tensor(np.ones(3)) @ mg.tensor(np.ones(4)), ShapeError, ["matmul", "(3,)", "(4,)"]),
    "matmul-batch": (lambda: mg.tensor(np.ones((2, 3, 4))) @ mg.tensor(np.ones((3, 4, 5))), ShapeError,
                     ["matmul", "(2, 3, 4)", "(3, 4, 5)"]),
    "matmul-0d": (lambda: mg.tensor(2.0) @ x23(), ShapeError, ["matmul", "()", "(2, 3)"]),
    "broadcast_to": (lambda: x23().broadcast_to((4, 3, 2)), ShapeError, ["broadcast_to", "(2, 3)", "(4, 3, 2)"]),
    "where": (lambda: mg.where(np.ones(4, bool), x23(), 0.0), ShapeError, ["where", "(2, 3)"]),
    "concatenate": (lambda: mg.concatenate([x23(), mg.tensor(np.ones((2, 4)))]), ShapeError,
                    ["concatenate", "(2, 3)", "(2, 4)"]),
    "stack": (lambda: mg.stack([x23(), mg.tensor(np.ones((2, 4)))]), ShapeError, ["stack", "(2, 3)", "(2, 4)"]),
    "getitem": (lambda: x23()[5], ShapeError, ["getitem", "(2, 3)", "index 5"]),
    "getitem-fancy": (lambda: x23()[np.array([0, 7])], ShapeError, ["getitem", "(2, 3)", "index 7"]),
    # reshape
    "reshape": (lambda: x23().reshape(4, 2), ShapeError, ["reshape", "(2, 3)", "(4, 2)"]),
    "reshape-two-unknowns": (lambda: x23().reshape(-1, -1), ShapeError, ["reshape", "(2, 3)", "(-1, -1)"]),
    # axes
    "sum-axis": (lambda: x23().sum(axis=2), ShapeError, ["sum", "axis 2", "2 dimensions"]),
    "mean-axis": (lambda: x23().mean(axis=-3), ShapeError, ["mean", "axis -3"]),
    "max-axis": (lambda: x23().max(axis=(0, 5)), ShapeError, ["max", "axis 5"]),
    "transpose-axis": (lambda: x23().transpose(0, 5), ShapeError, ["transpose", "(0, 5)", "(2, 3)"]),
    "transpose-repeated": (lambda: x23().transpose((1, 1)), ShapeError, ["transpose", "(1, 1)"]),
    "permute-not-a-permutation": (lambda: x23().permute(0, 0), ShapeError, ["permute", "(0, 0)", "(2, 3)"]),
    "swapaxes": (lambda: x23().swapaxes(0, 3), ShapeError, ["swapaxes", "(0, 3)", "(2, 3)"]),
    "expand_dims": (lambda: x23().expand_dims(4), ShapeError, ["expand_dims", "axis 4", "(2, 3)"]),
    "concatenate-axis": (lambda: mg.concatenate([x23(), x23()], axis=3), ShapeError, ["concatenate", "axis 3"]),
    "logsumexp-axis": (lambda: mg.logsumexp(x23(), axis=5), ShapeError, ["logsumexp", "axis 5"]),
    # backward
    "backward-non-scalar": (lambda: (x23() * 2.0).backward(), GraphError, ["backward", "(2, 3)", "grad="]),
    "backward-grad-shape": (lambda: (x23() * 2.0).backward(np.ones(3)), ShapeError, ["backward", "(3,)", "(2, 3)"]),
    "backward-no-grad": (lambda: mg.tensor([1.0, 2.0]).sum().backward(), GraphError, ["backward", "does not require grad"]),
    "backward-under-no_grad": (backward_of_a_no_grad_result, GraphError, ["backward", "no_grad"]),
    "backward-twice": (freed_twice, GraphError, ["'sum'", "()", "retain_graph=True"]),
    "backward-freed-intermediate": (freed_through_a_shared_intermediate, GraphError, ["'sigmoid'", "(2, 3)", "retain_graph"]),
    "grad-non-scalar": (lambda: mg.grad(lambda t: t * 2.0)(np.ones(3)), GraphError, ["(3,)"]),
    "vjp-cotangent-shape": (lambda: mg.vjp(lambda t: t.sin(), np.ones(3))[1](np.ones(4)), ShapeError, ["(4,)", "(3,)"]),
    "jvp-tangent-shape": (lambda: mg.jvp(lambda t: t.sin(), (np.ones(3),), (np.ones((2, 3)),)), ShapeError,
                          ["jvp", "(2, 3)", "(3,)"]),
    "cycle-backward": (lambda: cycle(lambda out: out.backward()), GraphError, ["cycle", "op exp", "()"]),
    "cycle-topological-sort": (lambda: cycle(mg.topological_sort), GraphError, ["topological_sort", "cycle"]),
    # dtypes
    "int-requires-grad": (lambda: mg.tensor(np.array([1, 2]), requires_grad=True), DtypeError, ["int64", "(2,)"]),
    "int-requires_grad_": (lambda: mg.tensor(np.array([1, 2])).requires_grad_(), DtypeError, ["requires_grad_", "int64"]),
    # losses
    "cross_entropy-label-too-big": (lambda: nn.cross_entropy(x23(), np.array([0, 3])), ShapeError,
                                    ["cross_entropy", "[0, 3)", "(2, 3)", "label 3", "position 1"]),
    "cross_entropy-negative-label": (lambda: nn.cross_entropy(x23(), np.array([-1, 0])), ShapeError,
                                     ["cross_entropy", "label -1", "position 0"]),
    "cross_entropy-float-labels": (lambda: nn.cross_entropy(x23(), np.array([0.0, 1.0])), DtypeError,
                                   ["cross_entropy", "float64"]),
    "cross_entropy-label-count": (lambda: nn.cross_entropy(x23(), np.array([0, 1, 2])), ShapeError,
                                  ["cross_entropy", "(2, 3)", "(3,)"]),
    "mse_loss": (lambda: nn.mse_loss(x23(), np.ones((3, 2))), ShapeError, ["mse_loss", "(2, 3)", "(3, 2)"]),
    "bce-with-logits": (lambda: nn.binary_cross_entropy_with_logits(x23(), np.ones(3)), ShapeError,
                        ["binary_cross_entropy_with_logits", "(2, 3)", "(3,)"]),
    "load_state_dict": (lambda: nn.Linear(2, 3).load_state_dict({"weight": np.ones((3, 2)), "bias": np.ones(3)}),
                        ShapeError, ["load_state_dict", "weight", "(2, 3)", "(3, 2)"]),
}


@pytest.mark.parametrize("name", CASES)
def test_error_class_and_message(name):
    action, error_class, fragments = CASES[name]
    with pytest.raises(MinigradError) as caught:
        action()
    assert isinstance(caught.value, error_class), f"{name}: {type(caught.value).__name__}, expected {error_class.__name__}"
    message = str(caught.value)
    missing = [f for f in fragments if f not in message]
    assert not missing, f"{name}: message {message!r} does not mention {missing}"


def test_errors_are_also_the_builtin_exceptions_callers_expect():
    assert issubclass(ShapeError, ValueError) and issubclass(GraphError, RuntimeError) and issubclass(DtypeError, TypeError)
    for cls in (ShapeError, GraphError, DtypeError):
        assert issubclass(cls, MinigradError)


def test_a_failed_operation_leaves_no_partial_state():
    x = x23()
    with pytest.raises(ShapeError):
        x + mg.tensor(np.ones(4))
    (x * 2.0).sum().backward()  # the failed call recorded nothing
    np.testing.assert_array_equal(x.grad.data, np.full((2, 3), 2.0))


def test_the_freed_graph_error_is_raised_before_any_gradient_is_added():
    x = x23()
    y = (x * 3.0).sum()
    y.backward()
    before = x.grad.data.copy()
    with pytest.raises(GraphError, match=re.escape("retain_graph=True")):
        y.backward()
    np.testing.assert_array_equal(x.grad.data, before)
