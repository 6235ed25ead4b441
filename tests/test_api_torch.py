"""The everyday PyTorch tensor API in minigrad: each method or function against PyTorch in float64,
values and gradients (double backward and forward mode for the new primitives are in
tests/test_higher_order.py and tests/test_forward_mode.py)."""

import numpy as np
import pytest
import torch

import minigrad as mg
import minigrad.jit as jit

RNG = np.random.default_rng(21)
DATA = RNG.standard_normal((3, 4))

# name: (minigrad fn, torch fn); both take one tensor of DATA's shape and return a tensor
METHODS = {
    "min": (lambda x: x.min(), lambda x: x.min()),
    "min(dim)": (lambda x: x.min(dim=1, keepdim=True), lambda x: x.amin(dim=1, keepdim=True)),
    "maximum": (lambda x: x.maximum(0.2), lambda x: x.maximum(torch.tensor(0.2, dtype=x.dtype))),
    "minimum": (lambda x: x.minimum(x.flip(1)), lambda x: x.minimum(x.flip(1))),
    "unsqueeze": (lambda x: x.unsqueeze(1), lambda x: x.unsqueeze(1)),
    "squeeze": (lambda x: x.reshape(3, 1, 4).squeeze(), lambda x: x.reshape(3, 1, 4).squeeze()),
    "squeeze(dim)": (lambda x: x.reshape(1, 3, 4).squeeze(0), lambda x: x.reshape(1, 3, 4).squeeze(0)),
    "squeeze(dim not 1)": (lambda x: x.squeeze(1), lambda x: x.squeeze(1)),
    "permute": (lambda x: x.reshape(3, 2, 2).permute(2, 0, 1), lambda x: x.reshape(3, 2, 2).permute(2, 0, 1)),
    "view": (lambda x: x.view(2, 6), lambda x: x.view(2, 6)),
    "view(-1)": (lambda x: x.view(-1), lambda x: x.view(-1)),
    "flip": (lambda x: x.flip(1), lambda x: x.flip(1)),
    "flip(both)": (lambda x: x.flip((0, 1)), lambda x: x.flip((0, 1))),
    "clone": (lambda x: x.clone() * x, lambda x: x.clone() * x),
    "norm": (lambda x: x.norm(), lambda x: x.norm()),
    "norm(dim)": (lambda x: x.norm(dim=1), lambda x: x.norm(dim=1)),
    "norm(p=3)": (lambda x: x.norm(3, dim=0), lambda x: torch.linalg.vector_norm(x, 3, dim=0)),
    "norm(p=1)": (lambda x: x.norm(1), lambda x: x.norm(1)),
    "var": (lambda x: x.var(), lambda x: x.var()),
    "var(dim)": (lambda x: x.var(dim=1, keepdim=True), lambda x: x.var(dim=1, keepdim=True)),
    "var(unbiased=False)": (lambda x: x.var(0, unbiased=False), lambda x: x.var(0, unbiased=False)),
    "std": (lambda x: x.std(dim=0), lambda x: x.std(dim=0)),
    "cumsum": (lambda x: x.cumsum(dim=1), lambda x: x.cumsum(dim=1)),
    "cumsum(0)": (lambda x: (x * x).cumsum(0), lambda x: (x * x).cumsum(0)),
    "mg.exp": (mg.exp, torch.exp),
    "mg.tanh": (mg.tanh, torch.tanh),
    "mg.sum(dim)": (lambda x: mg.sum(x, dim=0), lambda x: torch.sum(x, dim=0)),
    "mg.mean": (mg.mean, torch.mean),
    "mg.matmul": (lambda x: mg.matmul(x, x.T), lambda x: torch.matmul(x, x.T)),
    "mg.cat": (lambda x: mg.cat([x, x * 2.0], dim=1), lambda x: torch.cat([x, x * 2.0], dim=1)),
    "mg.maximum": (lambda x: mg.maximum(x, x.T.reshape(3, 4)), lambda x: torch.maximum(x, x.T.reshape(3, 4))),
    "mg.clamp": (lambda x: mg.clamp(x, -0.5, 0.5), lambda x: torch.clamp(x, -0.5, 0.5)),
    "mg.sqrt": (lambda x: mg.sqrt(x * x + 1.0), lambda x: torch.sqrt(x * x + 1.0)),
    "iteration": (lambda x: mg.stack([row * i for i, row in enumerate(x)]), lambda x: torch.stack([row * i for i, row in enumerate(x)])),
}


@pytest.mark.parametrize("name", METHODS)
def test_method_matches_torch(name):
    fn, torch_fn = METHODS[name]
    x = mg.tensor(DATA, requires_grad=True)
    out = fn(x)
    u = RNG.standard_normal(out.shape)
    out.backward(u)
    t = torch.tensor(DATA, requires_grad=True)
    t_out = torch_fn(t)
    t_out.backward(torch.tensor(u))
    assert out.shape == tuple(t_out.shape), name
    np.testing.assert_allclose(out.data, t_out.detach().numpy(), rtol=1e-12, atol=1e-14, err_msg=name)
    np.testing.assert_allclose(x.grad.data, t.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)


def test_iteration_walks_the_first_axis_and_refuses_a_scalar():
    x = mg.tensor(DATA)
    assert [row.data.tolist() for row in x] == DATA.tolist()
    assert len(list(mg.tensor(DATA[:0]))) == 0
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(mg.tensor(1.0))


def test_norm_at_the_origin_has_gradient_zero_like_torch():
    for p in (2, 3):
        x = mg.tensor(np.zeros(3), requires_grad=True)
        x.norm(p).backward()
        t = torch.zeros(3, dtype=torch.float64, requires_grad=True)
        torch.linalg.vector_norm(t, p).backward()
        np.testing.assert_array_equal(x.grad.data, t.grad.numpy())


def test_integer_results_and_python_values():
    x, t = mg.tensor(DATA), torch.tensor(DATA)
    assert x.argmax().item() == t.argmax().item()
    np.testing.assert_array_equal(x.argmax(dim=1).data, t.argmax(dim=1).numpy())
    np.testing.assert_array_equal(x.argmin(axis=0, keepdims=True).data, t.argmin(dim=0, keepdim=True).numpy())
    np.testing.assert_array_equal(mg.argmax(x, 1).data, torch.argmax(t, 1).numpy())
    assert x.argmax(dim=1).dtype.kind == "i" and not x.argmax().requires_grad
    assert x.numel() == t.numel() == 12 and x.dim() == 2
    assert x.tolist() == t.tolist()


def test_argmax_is_recomputed_by_compiled_code():
    compiled = jit.compile(lambda x: (x * (x.argmax(dim=1, keepdim=True) == 0)).sum())
    for _ in range(3):
        data = RNG.standard_normal((4, 3))
        expected = (data * (data.argmax(axis=1)[:, None] == 0)).sum()
        assert compiled(data).item() == pytest.approx(expected, rel=1e-12)


def test_manual_seed_makes_draws_and_layers_reproducible():
    mg.manual_seed(7)
    first = (mg.randn(3).data, mg.nn.Linear(2, 3).weight.data, mg.nn.RNNCell(2, 2).weight_hh.data)
    mg.manual_seed(7)
    second = (mg.randn(3).data, mg.nn.Linear(2, 3).weight.data, mg.nn.RNNCell(2, 2).weight_hh.data)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(mg.randn(3).data, first[0])
    mg.manual_seed(8)
    assert not np.array_equal(mg.randn(3).data, first[0])


def test_module_level_functions_take_data_too():
    assert mg.exp(0.0).item() == 1.0 and mg.sum([1.0, 2.0]).item() == 3.0
    assert mg.abs(mg.tensor([-1.0])).data.tolist() == [1.0]
    assert sum([1, 2]) == 3, "builtins are untouched outside minigrad's namespace"


def test_dim_keyword_in_functions():
    x, t = mg.tensor(DATA), torch.tensor(DATA)
    np.testing.assert_allclose(mg.softmax(x, dim=0).data, torch.softmax(t, dim=0).numpy(), rtol=1e-12)
    np.testing.assert_allclose(mg.log_softmax(x, dim=1).data, torch.log_softmax(t, dim=1).numpy(), rtol=1e-12)
    np.testing.assert_allclose(mg.logsumexp(x, dim=0, keepdim=True).data, torch.logsumexp(t, dim=0, keepdim=True).numpy(), rtol=1e-12)
    np.testing.assert_array_equal(mg.stack([x, x], dim=1).data, torch.stack([t, t], dim=1).numpy())
    np.testing.assert_array_equal(mg.concatenate([x, x], dim=1).data, torch.cat([t, t], dim=1).numpy())
    with pytest.raises(TypeError, match="not both"):
        mg.softmax(x, axis=0, dim=1)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), ((0, 1), False)])
def test_prod_with_zeros_to_second_order_matches_torch(axis, keepdims):
    data = np.array([[1.0, 2.0, 3.0, -1.5], [0.0, 2.0, 3.0, 0.5], [0.0, 0.0, 4.0, 2.0]])
    u = RNG.standard_normal(np.shape(data.prod(axis=axis, keepdims=keepdims)))
    w = RNG.standard_normal(data.shape)
    x = mg.tensor(data, requires_grad=True)
    out = x.prod(axis=axis, keepdims=keepdims)
    (first,) = mg.gradients(out, [x], grad=mg.tensor(u), create_graph=True)
    (first * mg.tensor(w)).sum().backward()
    t = torch.tensor(data, requires_grad=True)
    if axis is None or isinstance(axis, tuple):
        t_out = t.prod()
    else:
        t_out = t.prod(dim=axis, keepdim=keepdims)
    (t_first,) = torch.autograd.grad(t_out, t, torch.tensor(u).reshape(t_out.shape), create_graph=True)
    (t_first * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(out.data, t_out.detach().numpy().reshape(out.shape), rtol=1e-14)
    np.testing.assert_allclose(first.data, t_first.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(x.grad.data, t.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_prod_edge_shapes_and_compile():
    assert mg.tensor(2.5).prod().item() == 2.5
    assert mg.tensor(np.zeros((2, 0))).prod(axis=1).data.tolist() == [1.0, 1.0]
    assert mg.prod(mg.tensor(np.arange(1.0, 6.0))).item() == 120.0
    compiled = jit.compile(lambda x: x.prod(dim=1))
    for _ in range(2):
        data = RNG.standard_normal((3, 5))
        np.testing.assert_allclose(compiled(data).data, data.prod(axis=1), rtol=1e-14)
