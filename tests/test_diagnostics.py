"""minigrad.diagnostics: gradient norms per layer and per step, and Jacobian spectral norms."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.diagnostics import grad_norms, jacobian_singular_values, layer_grad_norms


def test_layer_grad_norms_are_the_weight_gradient_norms_first_layer_first():
    rng = np.random.default_rng(0)
    model = nn.MLP([3, 5, 4, 2], activation="tanh", rng=rng)
    x, y = mg.tensor(rng.standard_normal((6, 3))), mg.tensor(rng.standard_normal((6, 2)))
    norms = layer_grad_norms(model, x, y)
    nn.mse_loss(model(x), y).backward()
    expected = [np.linalg.norm(model[i].weight.grad.data) for i in (0, 2, 4)]
    np.testing.assert_allclose(norms, expected, rtol=1e-12)


def test_layer_grad_norms_leave_grads_alone_and_reach_nested_layers():
    rng = np.random.default_rng(1)
    model = nn.Sequential(nn.Linear(2, 3, rng=rng), nn.ResidualBlock(3, rng=rng), nn.Linear(3, 1, rng=rng))
    x, y = mg.tensor(rng.standard_normal((4, 2))), mg.tensor(rng.standard_normal((4, 1)))
    sentinel = mg.tensor(np.full((2, 3), 7.0))
    model[0].weight.grad = sentinel
    norms = layer_grad_norms(model, x, y, loss_fn=lambda out, target: ((out - target) ** 4).sum())
    assert model[0].weight.grad is sentinel and model[2].weight.grad is None
    assert len(norms) == 4  # Linear, the block's two, Linear
    weights = [model[0].weight, model[1].linear1.weight, model[1].linear2.weight, model[2].weight]
    expected = [np.linalg.norm(g.data) for g in mg.gradients(((model(x) - y) ** 4).sum(), weights)]
    np.testing.assert_allclose(norms, expected, rtol=1e-12)


def test_layer_grad_norms_needs_linear_layers():
    with pytest.raises(ValueError, match="no Linear layers"):
        layer_grad_norms(nn.Tanh(), mg.zeros(1, 1), mg.zeros(1, 1))


def test_grad_norms_of_intermediate_states():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    h1 = x * 3.0
    h2 = h1 * 2.0
    unrelated = x * 5.0
    norms = grad_norms(h2.sum(), [h1, h2, x, unrelated])
    np.testing.assert_allclose(norms, [2 * np.sqrt(2), np.sqrt(2), 6 * np.sqrt(2), 0.0])


def test_jacobian_singular_values():
    rng = np.random.default_rng(2)
    linear = nn.Linear(4, 3, rng=rng)
    x = rng.standard_normal(4)
    values = jacobian_singular_values([linear, nn.Tanh(), nn.Sigmoid()], x)
    h = linear(mg.tensor(x)).data
    s = 1 / (1 + np.exp(-np.tanh(h)))
    expected = [
        np.linalg.svd(linear.weight.data, compute_uv=False),
        np.sort(1 - np.tanh(h) ** 2)[::-1],  # a diagonal Jacobian: its entries are its singular values
        np.sort(s * (1 - s))[::-1],
    ]
    assert [v.shape for v in values] == [(3,), (3,), (3,)]
    for got, want in zip(values, expected):
        np.testing.assert_allclose(got, want, rtol=1e-10)
