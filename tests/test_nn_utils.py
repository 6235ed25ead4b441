"""Gradient clipping, the residual block and the vanilla RNN, against PyTorch (float64)."""

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import nn
from minigrad.nn.utils import clip_grad_norm_, clip_grad_value_


def params_with_grads(seed, shapes=((3, 4), (4,), (2, 2, 2))):
    rng = np.random.default_rng(seed)
    grads = [rng.standard_normal(s) * rng.uniform(0.1, 5) for s in shapes]
    params = [nn.Parameter(rng.standard_normal(s)) for s in shapes]
    for p, g in zip(params, grads):
        p.grad = mg.tensor(g.copy())
    return params, grads


def torch_params(grads):
    tensors = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
    for t, g in zip(tensors, grads):
        t.grad = torch.from_numpy(g.copy())
    return tensors


@pytest.mark.parametrize("max_norm", [0.5, 3.0, 1e6])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
@pytest.mark.parametrize("seed", range(3))
def test_clip_grad_norm_matches_pytorch(seed, max_norm, norm_type):
    params, grads = params_with_grads(seed)
    total = clip_grad_norm_(params, max_norm, norm_type=norm_type)
    expected_params = torch_params(grads)
    expected_total = torch.nn.utils.clip_grad_norm_(expected_params, max_norm, norm_type=norm_type)
    assert total == pytest.approx(expected_total.item(), rel=1e-12)
    for p, t in zip(params, expected_params):
        np.testing.assert_allclose(p.grad.data, t.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_scales_gradients_from_one_adjoint_once_and_skips_missing_grads():
    a, b, unused = (nn.Parameter(np.full(3, v)) for v in (1.0, 2.0, 3.0))
    (a + b).sum().backward()  # a and b receive one adjoint
    total = clip_grad_norm_([a, b, unused], max_norm=1.0)
    assert total == pytest.approx(np.sqrt(6.0))
    np.testing.assert_allclose(a.grad.data, np.ones(3) / np.sqrt(6.0), rtol=1e-6)
    np.testing.assert_allclose(b.grad.data, np.ones(3) / np.sqrt(6.0), rtol=1e-6)
    assert unused.grad is None


def test_clip_grad_norm_accepts_a_single_tensor_and_no_grads():
    p = nn.Parameter(np.array([3.0, 4.0]))
    assert clip_grad_norm_(p, 1.0) == 0.0
    p.grad = mg.tensor([3.0, 4.0])
    assert clip_grad_norm_(p, 1.0) == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.data, [0.6, 0.8], rtol=1e-6)


@pytest.mark.parametrize("clip_value", [0.1, 1.0, 10.0])
def test_clip_grad_value_matches_pytorch(clip_value):
    params, grads = params_with_grads(7)
    clip_grad_value_(params, clip_value)
    expected = torch_params(grads)
    torch.nn.utils.clip_grad_value_(expected, clip_value)
    for p, t in zip(params, expected):
        np.testing.assert_array_equal(p.grad.data, t.grad.numpy())


# --------------------------------------------------------------------------- ResidualBlock
def test_residual_block_matches_pytorch_values_and_gradients():
    rng = np.random.default_rng(0)
    block = nn.ResidualBlock(5, hidden=7, activation="tanh", rng=rng)
    x = mg.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    (block(x) ** 2).sum().backward()

    tx = torch.from_numpy(x.data.copy()).requires_grad_()
    w1, b1, w2, b2 = (torch.from_numpy(p.data.copy()).requires_grad_() for p in block.parameters())
    out = tx + torch.tanh(tx @ w1 + b1) @ w2 + b2
    (out**2).sum().backward()
    np.testing.assert_allclose(block(x).data, out.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-10)
    for p, t in zip(block.parameters(), (w1, b1, w2, b2)):
        np.testing.assert_allclose(p.grad.data, t.grad.numpy(), rtol=1e-10)


def test_residual_block_is_the_identity_when_its_branch_is_zero():
    block = nn.ResidualBlock(3, activation="sigmoid", rng=np.random.default_rng(1))
    block.linear2.weight.data[:] = 0.0
    block.linear2.bias.data[:] = 0.0
    x = mg.tensor([[1.0, -2.0, 0.5]], requires_grad=True)
    y = block(x)
    np.testing.assert_array_equal(y.data, x.data)
    y.backward(np.array([[1.0, 2.0, 3.0]]))
    np.testing.assert_array_equal(x.grad.data, [[1.0, 2.0, 3.0]])
    assert block.linear1.weight.shape == (3, 3) and len(block.parameters()) == 4


def test_residual_block_rejects_unknown_activations():
    with pytest.raises(ValueError, match="activation must be one of"):
        nn.ResidualBlock(3, activation="swish")


# --------------------------------------------------------------------------- RNN
def torch_rnn(rnn, activation):
    cell = rnn.cell
    n_in, n_hidden = cell.weight_ih.shape
    model = torch.nn.RNN(n_in, n_hidden, nonlinearity=activation, dtype=torch.float64)
    with torch.no_grad():
        model.weight_ih_l0.copy_(torch.from_numpy(cell.weight_ih.data.T))
        model.weight_hh_l0.copy_(torch.from_numpy(cell.weight_hh.data.T))
        model.bias_ih_l0.copy_(torch.from_numpy(cell.bias.data))
        model.bias_hh_l0.zero_()
    return model


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_rnn_matches_pytorch_outputs_and_gradients(activation):
    rng = np.random.default_rng(2)
    rnn = nn.RNN(3, 6, activation=activation, rng=rng)
    xs = mg.tensor(rng.standard_normal((9, 4, 3)), requires_grad=True)
    h0 = mg.tensor(rng.standard_normal((4, 6)), requires_grad=True)
    outputs, last = rnn(xs, h0)
    (outputs.sum() + (last**2).sum()).backward()

    model = torch_rnn(rnn, activation)
    txs = torch.from_numpy(xs.data.copy()).requires_grad_()
    th0 = torch.from_numpy(h0.data.copy()[None]).requires_grad_()
    t_outputs, t_last = model(txs, th0)
    (t_outputs.sum() + (t_last**2).sum()).backward()
    np.testing.assert_allclose(outputs.data, t_outputs.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(xs.grad.data, txs.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(h0.grad.data, th0.grad.numpy()[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rnn.cell.weight_hh.grad.data, model.weight_hh_l0.grad.numpy().T, rtol=1e-9)
    np.testing.assert_allclose(rnn.cell.bias.grad.data, model.bias_ih_l0.grad.numpy(), rtol=1e-9)


def test_rnn_hidden_states_are_the_per_step_tensors_and_h0_defaults_to_zero():
    rnn = nn.RNN(2, 3, rng=np.random.default_rng(3))
    xs = mg.tensor(np.random.default_rng(4).standard_normal((5, 1, 2)))
    states = rnn.hidden_states(xs)
    assert len(states) == 5 and all(s.shape == (1, 3) for s in states)
    first = rnn.cell(xs[0], mg.zeros(1, 3))
    np.testing.assert_allclose(states[0].data, first.data)
    with pytest.raises(mg.ShapeError, match=r"\(time, batch, features\)"):
        rnn(mg.zeros(5, 2))
