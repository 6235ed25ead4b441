"""Everyday mistakes a PyTorch user makes get errors that say what was passed and what to pass, and
the in-place updates PyTorch code relies on (`with no_grad(): w -= lr * w.grad`) work, with a clear
error when an in-place change would corrupt a value a recorded graph still needs."""

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import DtypeError, GraphError, MinigradError, ShapeError


def _model():
    return mg.nn.MLP([3, 4, 1], rng=np.random.default_rng(0))


# --------------------------------------------------------------------------- optimizers and clipping
@pytest.mark.parametrize("optimizer", [mg.optim.SGD, mg.optim.Adam])
@pytest.mark.parametrize(
    "params, message",
    [
        (lambda m: m, r"got the module MLP itself; pass its parameters: model.parameters\(\)"),
        (lambda m: m.parameters, r"got the method model.parameters itself; call it"),
        (lambda m: np.zeros((3, 4)), r"got a numpy array \(shape \(3, 4\)\)"),
        (lambda m: [p.data for p in m.parameters()], r"parameter 0 is a ndarray, shape \(3, 4\), not a Tensor"),
        (lambda m: m.parameters()[0], r"got one Tensor \(shape \(3, 4\)\); pass a list"),
        (lambda m: 0.1, r"expected an iterable of Tensors"),
    ],
)
def test_optimizers_say_what_to_pass(optimizer, params, message):
    with pytest.raises(TypeError, match=message) as caught:
        optimizer(params(_model()), lr=0.1)
    assert optimizer.__name__ in str(caught.value)


def test_optimizers_still_take_generators_and_lists():
    model = _model()
    mg.optim.SGD((p for p in model.parameters()), lr=0.1)
    mg.optim.Adam(list(model.parameters()), lr=0.1)
    with pytest.raises(TypeError, match="learning rate must be a number"):
        mg.optim.SGD(model.parameters(), lr="0.1")


@pytest.mark.parametrize("clip", [lambda m: mg.nn.utils.clip_grad_norm_(m, 1.0), lambda m: mg.nn.utils.clip_grad_value_(m, 1.0)])
def test_clipping_a_module_says_to_pass_its_parameters(clip):
    with pytest.raises(TypeError, match=r"clip_grad_(norm|value)_: got the module MLP itself.*model.parameters\(\)"):
        clip(_model())


# --------------------------------------------------------------------------- grad
def test_grad_argnums_out_of_range():
    with pytest.raises(IndexError, match=r"grad: argnums 2 asks for argument 2, but the function was called with 2 positional arguments"):
        mg.grad(lambda x, y: (x * y).sum(), argnums=2)(np.ones(2), np.ones(2))
    with pytest.raises(IndexError, match=r"argnums \(0, 5\) asks for argument 5"):
        mg.grad(lambda x: x.sum(), argnums=(0, 5))(np.ones(2))
    with pytest.raises(TypeError, match="argnums must be an int or a non-empty tuple of ints, got 'x'"):
        mg.grad(lambda x: x.sum(), argnums="x")(np.ones(2))
    assert mg.grad(lambda x, y: (x * y).sum(), argnums=-1)(np.ones(2), np.full(2, 3.0)).data.tolist() == [1.0, 1.0]


def test_grad_of_a_function_returning_a_float():
    with pytest.raises(GraphError, match=r"grad: f must return a scalar Tensor, got float \(a .item\(\), float\(\) or numpy call inside f cuts the graph\)"):
        mg.grad(lambda x: (x * x).sum().item())(np.ones(2))
    with pytest.raises(GraphError, match=r"grad: f must return a scalar.*got shape \(3,\)"):
        mg.grad(lambda x: x * 2.0)(np.ones(3))


def test_grad_of_a_constant_function_is_zero_like_torch_func():
    got = mg.grad(lambda x: mg.tensor(2.0))(np.ones(3))
    expected = torch.func.grad(lambda x: torch.tensor(2.0, dtype=torch.float64) + 0 * x.sum())(torch.ones(3, dtype=torch.float64))
    np.testing.assert_array_equal(got.data, expected.numpy())
    gx, gy = mg.grad(lambda x, y: (y * 0.0 + 1.0).sum(), argnums=(0, 1))(np.ones(2), np.ones(2))
    assert gx.data.tolist() == [0.0, 0.0] and gy.data.tolist() == [0.0, 0.0]
    value, g = mg.value_and_grad(lambda x: mg.tensor(5.0))(np.ones(2))
    assert value.item() == 5.0 and g.shape == (2,)


# --------------------------------------------------------------------------- tensor API mistakes
@pytest.mark.parametrize("axis", [1.5, "1", (0, 1.0), True])
def test_reductions_reject_a_non_integer_axis(axis):
    x = mg.tensor(np.ones((2, 3)))
    for name in ["sum", "mean", "max"]:
        with pytest.raises(ShapeError, match=rf"{name}: axis must be an int or a tuple of ints"):
            getattr(x, name)(axis=axis)


def test_size_is_the_element_count_and_calling_it_explains():
    x = mg.tensor(np.ones((2, 3)))
    assert x.size == 6 and isinstance(x.size, int) and x.size + 1 == 7
    with pytest.raises(TypeError, match=r"Tensor.size is the number of elements \(6\).*x.size\(\) is x.shape"):
        x.size()
    with pytest.raises(TypeError, match=r"x.size\(1\) is x.shape\[1\]"):
        x.size(1)


def test_dim_and_keepdim_beside_axis_and_keepdims():
    data = np.random.default_rng(0).standard_normal((3, 4))
    x, t = mg.tensor(data), torch.tensor(data)
    np.testing.assert_allclose(x.sum(dim=1, keepdim=True).data, t.sum(dim=1, keepdim=True).numpy())
    np.testing.assert_allclose(x.mean(dim=0).data, t.mean(dim=0).numpy())
    np.testing.assert_allclose(x.max(dim=1).values.data, t.max(dim=1).values.numpy())
    np.testing.assert_allclose(x.amin(dim=(0, 1)).data, t.amin(dim=(0, 1)).numpy())
    with pytest.raises(TypeError, match="pass axis= or dim="):
        x.sum(axis=0, dim=0)


def test_ragged_lists_and_strings_name_tensor():
    with pytest.raises(ShapeError, match=r"Tensor: the data is a ragged nested sequence.*element 0 has length 3, element 1 has length 2"):
        mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0]])
    with pytest.raises(DtypeError, match=r"Tensor: strings are not numbers: got \['1', '2'\]"):
        mg.tensor(["1", "2"])


# --------------------------------------------------------------------------- in-place updates
def test_manual_sgd_step_under_no_grad_matches_torch():
    rng = np.random.default_rng(1)
    w0, x, y = rng.standard_normal((3, 1)), rng.standard_normal((8, 3)), rng.standard_normal((8, 1))
    w = mg.tensor(w0.copy(), requires_grad=True)
    tw = torch.tensor(w0.copy(), requires_grad=True)
    for _ in range(3):
        loss = ((mg.tensor(x) @ w - y) ** 2).mean()
        loss.backward()
        with mg.no_grad():
            w -= 0.1 * w.grad
            w.grad.zero_()
        t_loss = ((torch.tensor(x) @ tw - torch.tensor(y)) ** 2).mean()
        t_loss.backward()
        with torch.no_grad():
            tw -= 0.1 * tw.grad
            tw.grad.zero_()
        assert w.is_leaf and w.requires_grad, "still the same trainable leaf"
        np.testing.assert_allclose(loss.item(), t_loss.item(), rtol=1e-14)
    np.testing.assert_allclose(w.data, tw.detach().numpy(), rtol=1e-14)


def test_in_place_methods_match_torch():
    a = np.arange(6.0).reshape(2, 3)
    x, t = mg.tensor(a.copy()), torch.tensor(a.copy())
    for name, args in [("add_", (np.ones(3),)), ("sub_", (2.0,)), ("mul_", (3.0,)), ("div_", (2.0,))]:
        assert getattr(x, name)(*args) is x
        getattr(t, name)(*[torch.tensor(v) if isinstance(v, np.ndarray) else v for v in args])
        np.testing.assert_allclose(x.data, t.numpy(), err_msg=name)
    x.add_(np.ones(3), alpha=2.0)
    t.add_(torch.ones(3, dtype=torch.float64), alpha=2.0)
    x[0, 1] = -5.0
    t[0, 1] = -5.0
    x[1] = mg.tensor([7.0, 8.0, 9.0])
    t[1] = torch.tensor([7.0, 8.0, 9.0])
    np.testing.assert_allclose(x.data, t.numpy())
    x.copy_(np.full(3, 4.0))
    assert x.data.tolist() == [[4.0] * 3] * 2
    assert x.fill_(1.5).data.tolist() == [[1.5] * 3] * 2 and x.zero_().data.tolist() == [[0.0] * 3] * 2
    view = x.numpy()
    x += 1.0
    assert view[0, 0] == 1.0, "in place: the array (and views of it) change, as in PyTorch"


def test_in_place_keeps_dtype_and_shape():
    x = mg.tensor(np.ones(3, dtype=np.float32))
    x -= np.full(3, 0.5)  # float64 into float32: cast, as PyTorch does
    assert x.dtype == np.float32 and x.data.tolist() == [0.5] * 3
    with pytest.raises(ShapeError, match=r"-=: cannot write a value of shape \(2, 3\) into a tensor of shape \(3,\)"):
        x -= np.ones((2, 3))
    labels = mg.tensor(np.array([1, 2]))
    with pytest.raises(DtypeError, match="float64 value cannot be stored in place in a tensor of dtype int64"):
        labels += 0.5
    scalar = mg.tensor(2.0) * 3.0  # 0-d results hold numpy scalars
    scalar += 1.0
    assert scalar.item() == 7.0


def test_in_place_on_a_trainable_leaf_while_recording_is_refused():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(GraphError, match=r"-=: in-place change of a leaf tensor \(shape \(2,\)\) that requires grad.*mg.no_grad"):
        w -= 1.0
    with pytest.raises(GraphError, match="add_: in-place change of a leaf"):
        w.add_(1.0)
    with pytest.raises(GraphError, match="item assignment"):
        w[0] = 3.0
    assert w.data.tolist() == [1.0, 2.0]


def test_operators_on_graph_tensors_stay_out_of_place():
    """`h += x @ w` in a forward pass keeps building the graph (Python rebinds h), as it always did."""
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    h = mg.tensor([0.0, 0.0])
    first = h
    h += w * 2.0
    assert h is not first and h.op == "add" and first.data.tolist() == [0.0, 0.0]
    h *= w
    h.sum().backward()
    np.testing.assert_allclose(w.grad.data, [4.0, 8.0])
    with pytest.raises(GraphError, match="part of a recorded graph"):
        (w * 1.0).add_(1.0)


def test_backward_refuses_a_value_changed_in_place_after_use():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    loss = (w.exp() * w).sum()
    with mg.no_grad():
        w -= 0.5
    with pytest.raises(GraphError, match=r"backward: the input 1 of 'mul' \(shape \(2,\)\) was changed in place after 'mul' used it"):
        loss.backward()
    y = w.exp()
    with mg.no_grad():
        y.mul_(2.0)  # exp's VJP reads its output
    with pytest.raises(GraphError, match="the output of 'exp'"):
        y.sum().backward()
    fresh = (w.exp() * w).sum()  # a forward pass after the update is fine
    fresh.backward()
    np.testing.assert_allclose(w.grad.data, np.exp(w.data) * (1 + w.data))
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    t_loss = (t.exp() * t).sum()
    with torch.no_grad():
        t -= 0.5
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        t_loss.backward()


def test_parameters_updated_in_place_still_train_a_module():
    model = _model()
    x = mg.tensor(np.random.default_rng(2).standard_normal((5, 3)))
    before = model(x).sum().item()
    with mg.no_grad():
        for p in model.parameters():
            p.mul_(0.0)
    assert model(x).sum().item() == 0.0 != before
    assert all(p.is_leaf and p.requires_grad for p in model.parameters())
    assert isinstance(MinigradError("x"), Exception)


@pytest.mark.parametrize("make", [lambda ps: mg.optim.SGD(ps, lr=0.1, momentum=0.9), lambda ps: mg.optim.Adam(ps, lr=0.1)])
def test_backward_through_a_graph_recorded_before_an_optimizer_step_raises(make):
    model = _model()
    optimizer = make(model.parameters())
    x = mg.tensor(np.random.default_rng(3).standard_normal((5, 3)))
    loss = model(x).sum()
    loss.backward(retain_graph=True)
    optimizer.step()
    with pytest.raises(GraphError, match="changed in place after"):
        loss.backward()
    optimizer.zero_grad()
    model(x).sum().backward()  # a new forward pass is fine
    optimizer.step()
