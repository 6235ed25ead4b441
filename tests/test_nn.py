"""`minigrad.nn` and `minigrad.optim`: layers, parameter discovery, losses and optimisers against PyTorch."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import minigrad as mg
from minigrad import nn, optim
from minigrad.errors import GraphError


def rng(seed=0):
    return np.random.default_rng(20240801 + seed)


# --------------------------------------------------------------------------- layers
def test_linear_shapes_and_initialisation_bound():
    layer = nn.Linear(3, 5, rng=rng())
    assert layer.weight.shape == (3, 5) and layer.bias.shape == (5,)
    assert np.abs(layer.weight.data).max() <= 1 / np.sqrt(3) and np.abs(layer.bias.data).max() <= 1 / np.sqrt(3)
    x = rng(1).standard_normal((7, 3))
    out = layer(mg.tensor(x))
    assert out.shape == (7, 5)
    np.testing.assert_allclose(out.data, x @ layer.weight.data + layer.bias.data)
    assert layer(mg.tensor(x[0])).shape == (5,)
    no_bias = nn.Linear(3, 5, bias=False, rng=rng())
    assert no_bias.bias is None and len(no_bias.parameters()) == 1


def test_mlp_layers_shapes_and_parameter_count():
    model = nn.MLP([2, 16, 16, 1], activation="relu", rng=rng())
    kinds = [type(layer).__name__ for layer in model.layers]
    assert kinds == ["Linear", "ReLU", "Linear", "ReLU", "Linear"], "the last layer stays linear"
    assert model(mg.tensor(rng(1).standard_normal((8, 2)))).shape == (8, 1)
    assert model.num_parameters() == (2 * 16 + 16) + (16 * 16 + 16) + (16 + 1)
    assert len(model) == 5 and model[0] is model.layers[0]
    with pytest.raises(ValueError, match="activation"):
        nn.MLP([2, 1], activation="swish")


def test_mlp_matches_the_same_network_in_torch():
    model = nn.MLP([3, 4, 2], activation="tanh", rng=rng())
    x = rng(1).standard_normal((5, 3))
    (w1, b1), (w2, b2) = [(torch.tensor(layer.weight.data), torch.tensor(layer.bias.data)) for layer in model.layers[::2]]
    expected = torch.tanh(torch.tensor(x) @ w1 + b1) @ w2 + b2
    np.testing.assert_allclose(model(mg.tensor(x)).data, expected.numpy(), rtol=1e-12)


class Nested(nn.Module):
    def __init__(self):
        self.blocks = [nn.Linear(2, 3, rng=rng()), nn.Linear(3, 3, rng=rng(1))]
        self.heads = {"a": nn.Linear(3, 1, rng=rng(2)), "b": nn.Sequential(nn.Tanh(), nn.Linear(3, 2, rng=rng(3)))}
        self.scale = nn.Parameter(np.ones(1))
        self.tied = self.blocks[0]  # the same layer reachable twice: its parameters count once
        self.alias = self.scale
        self.note = "not a parameter"
        self.data = mg.tensor([1.0, 2.0])  # a plain tensor is not a parameter


def test_named_parameters_walk_lists_dicts_and_list_shared_parameters_once():
    model = Nested()
    names = [name for name, _ in model.named_parameters()]
    assert names == [
        "blocks.0.weight", "blocks.0.bias", "blocks.1.weight", "blocks.1.bias",
        "heads.a.weight", "heads.a.bias", "heads.b.layers.1.weight", "heads.b.layers.1.bias", "scale",
    ]
    params = model.parameters()
    assert len({id(p) for p in params}) == len(params) == 9
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in params)
    assert model.tied.weight is params[0]
    assert len(model.modules()) >= 6


def test_freezing_a_layer_skips_its_gradients_and_updates():
    model = nn.MLP([2, 3, 1], rng=rng())
    model[0].requires_grad_(False)
    frozen = model[0].weight.data.copy()
    trainable = model[2].weight.data.copy()
    loss = nn.mse_loss(model(mg.tensor(rng(1).standard_normal((4, 2)))), np.ones((4, 1)))
    loss.backward()
    assert model[0].weight.grad is None and model[0].bias.grad is None
    assert model[2].weight.grad is not None
    optim.SGD(model.parameters(), lr=0.1).step()
    np.testing.assert_array_equal(model[0].weight.data, frozen)
    assert not np.allclose(model[2].weight.data, trainable)
    model.requires_grad_(False)
    with pytest.raises(GraphError, match="does not require grad"):
        nn.mse_loss(model(mg.tensor(np.ones((1, 2)))), np.ones((1, 1))).backward()


def test_state_dict_round_trip():
    model, other = nn.MLP([2, 4, 1], rng=rng()), nn.MLP([2, 4, 1], rng=rng(1))
    x = mg.tensor(rng(2).standard_normal((3, 2)))
    state = model.state_dict()
    assert sorted(state) == ["layers.0.bias", "layers.0.weight", "layers.2.bias", "layers.2.weight"]
    before = model(x).data.copy()
    for p in model.parameters():
        p.data += 1.0  # training changes the model, not the saved state
    assert not np.allclose(model(x).data, before)
    other.load_state_dict(state)
    model.load_state_dict(state)
    np.testing.assert_array_equal(model(x).data, before)
    np.testing.assert_array_equal(other(x).data, before)
    bad = dict(state, **{"layers.0.weight": np.zeros((3, 3))})
    with pytest.raises(ValueError, match=r"layers\.0\.weight"):
        other.load_state_dict(bad)


def test_train_and_eval_flags_reach_every_module():
    model = Nested()
    model.eval()
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


# --------------------------------------------------------------------------- losses
def _loss_pair(mg_loss, torch_loss, prediction, target):
    p = mg.tensor(prediction, requires_grad=True)
    loss = mg_loss(p, target)
    loss.backward()
    tp = torch.tensor(prediction, requires_grad=True)
    t_target = torch.tensor(target)
    t_loss = torch_loss(tp, t_target)
    t_loss.backward()
    np.testing.assert_allclose(loss.data, t_loss.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(p.grad.data, tp.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_mse_loss_matches_torch():
    r = rng(3)
    _loss_pair(nn.mse_loss, F.mse_loss, r.standard_normal((6, 2)), r.standard_normal((6, 2)))


def test_cross_entropy_matches_torch_even_for_huge_logits():
    r = rng(4)
    logits = r.standard_normal((6, 4))
    logits[0] *= 1000.0  # would overflow a naive softmax
    labels = r.integers(0, 4, 6)
    _loss_pair(nn.cross_entropy, F.cross_entropy, logits, labels)


def test_binary_cross_entropy_with_logits_matches_torch_even_for_huge_logits():
    r = rng(5)
    logits = np.concatenate([r.standard_normal(6), [-800.0, 800.0]])
    targets = np.concatenate([r.uniform(0, 1, 6), [1.0, 0.0]])
    _loss_pair(nn.binary_cross_entropy_with_logits, F.binary_cross_entropy_with_logits, logits, targets)


# --------------------------------------------------------------------------- optimisers
def _train_side_by_side(make_mg, make_torch, steps=5):
    """Run the same optimiser on the same parameters and loss in both libraries; return both."""
    r = rng(6)
    w0, b0, x, y = r.standard_normal((3, 2)), r.standard_normal(2), r.standard_normal((8, 3)), r.standard_normal((8, 2))
    w, b = nn.Parameter(w0), nn.Parameter(b0)
    tw, tb = torch.tensor(w0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    opt, t_opt = make_mg([w, b]), make_torch([tw, tb])
    for _ in range(steps):
        opt.zero_grad()
        nn.mse_loss((mg.tensor(x) @ w + b).tanh(), y).backward()
        opt.step()
        t_opt.zero_grad()
        F.mse_loss(torch.tanh(torch.tensor(x) @ tw + tb), torch.tensor(y)).backward()
        t_opt.step()
    return (w, b), (tw, tb), (w0, b0)


@pytest.mark.parametrize(
    "kwargs",
    [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.05, momentum=0.5, weight_decay=0.1), dict(lr=0.1, weight_decay=0.01)],
    ids=str,
)
def test_sgd_matches_torch(kwargs):
    ours, theirs, start = _train_side_by_side(lambda p: optim.SGD(p, **kwargs), lambda p: torch.optim.SGD(p, **kwargs))
    for p, t, p0 in zip(ours, theirs, start):
        assert not np.allclose(p.data, p0), "the parameters did not move"
        np.testing.assert_allclose(p.data, t.detach().numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    "kwargs", [dict(lr=0.01), dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6), dict(lr=0.01, weight_decay=0.1)], ids=str
)
def test_adam_matches_torch(kwargs):
    ours, theirs, start = _train_side_by_side(lambda p: optim.Adam(p, **kwargs), lambda p: torch.optim.Adam(p, **kwargs), steps=8)
    for p, t, p0 in zip(ours, theirs, start):
        assert not np.allclose(p.data, p0), "the parameters did not move"
        np.testing.assert_allclose(p.data, t.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_optimizer_arguments_are_checked():
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="learning rate"):
        optim.Adam([nn.Parameter(np.ones(2))], lr=0.0)


def test_zero_grad_forgets_gradients():
    model = nn.MLP([2, 2, 1], rng=rng())
    opt = optim.SGD(model.parameters(), lr=0.1)
    nn.mse_loss(model(mg.tensor(np.ones((1, 2)))), np.zeros((1, 1))).backward()
    assert all(p.grad is not None for p in model.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    nn.mse_loss(model(mg.tensor(np.ones((1, 2)))), np.zeros((1, 1))).backward()
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_a_tiny_mlp_learns_two_moons():
    r = rng(7)
    n = 128
    angle = r.uniform(0, np.pi, n)
    labels = r.integers(0, 2, n)
    points = np.stack([np.cos(angle) + labels, np.sin(angle) * (1 - 2 * labels) + 0.5 * labels], axis=1)
    points += 0.1 * r.standard_normal(points.shape)
    model = nn.MLP([2, 16, 16, 2], activation="tanh", rng=r)
    opt = optim.Adam(model.parameters(), lr=0.05)
    x = mg.tensor(points)
    losses = []
    for _ in range(150):
        opt.zero_grad()
        loss = nn.cross_entropy(model(x), labels)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    accuracy = np.mean(model(x).data.argmax(axis=1) == labels)
    assert losses[-1] < 0.25 * losses[0], f"loss went from {losses[0]:.3f} to {losses[-1]:.3f}"
    assert accuracy > 0.95, f"training accuracy {accuracy:.2f}"


# --------------------------------------------------------------------------- init, apply, dtypes
def test_init_functions_follow_torch_formulas_in_minigrads_layout():
    w = mg.tensor(np.zeros((300, 200)))  # minigrad's (in, out): fan_in 300, fan_out 200
    t = torch.zeros(200, 300, dtype=torch.float64)  # the same layer in torch's (out, in)
    cases = [
        (lambda a: nn.init.xavier_uniform_(a, rng=rng()), torch.nn.init.xavier_uniform_),
        (lambda a: nn.init.kaiming_uniform_(a, nonlinearity="relu", rng=rng()), lambda a: torch.nn.init.kaiming_uniform_(a, nonlinearity="relu")),
        (lambda a: nn.init.kaiming_normal_(a, rng=rng()), torch.nn.init.kaiming_normal_),
        (lambda a: nn.init.xavier_normal_(a, gain=2.0, rng=rng()), lambda a: torch.nn.init.xavier_normal_(a, gain=2.0)),
        (lambda a: nn.init.normal_(a, 1.0, 0.5, rng=rng()), lambda a: torch.nn.init.normal_(a, 1.0, 0.5)),
    ]
    torch.manual_seed(0)
    for k, (ours, theirs) in enumerate(cases):
        assert ours(w) is w
        theirs(t)
        np.testing.assert_allclose(w.data.std(), t.std().item(), rtol=0.03)
        if k < 2:  # uniform: the same bound
            np.testing.assert_allclose(np.abs(w.data).max(), t.abs().max().item(), rtol=0.01)
        np.testing.assert_allclose(w.data.mean(), t.mean().item(), atol=0.02)
    assert nn.init.zeros_(w).data.max() == 0.0 and nn.init.ones_(w).data.min() == 1.0
    assert nn.init.calculate_gain("tanh") == torch.nn.init.calculate_gain("tanh")
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        nn.init.xavier_uniform_(mg.tensor(np.zeros(3)))


def test_apply_visits_every_module_children_first():
    model = nn.MLP([2, 3, 1], rng=rng())
    seen = []
    assert model.apply(lambda m: seen.append(type(m).__name__)) is model
    assert seen[-1] == "MLP" and seen.count("Linear") == 2

    def init(m):
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.bias)

    model.apply(init)
    assert all(not layer.bias.data.any() for layer in model.layers if isinstance(layer, nn.Linear))


def test_float32_model_computes_in_float32_like_torch():
    model = nn.MLP([3, 8, 2], rng=rng())
    torch_model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    with torch.no_grad():
        for ours, theirs in zip([model.layers[0], model.layers[2]], [torch_model[0], torch_model[2]]):
            theirs.weight.copy_(torch.tensor(ours.weight.data.T))
            theirs.bias.copy_(torch.tensor(ours.bias.data))
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    assert model.float() is model and all(p.dtype == np.float32 for p in model.parameters())
    x = rng(3).standard_normal((4, 3)).astype(np.float32)
    out = model(mg.tensor(x))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.data, torch_model(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    optimizer.step()  # the optimizer made before .float() still holds the same parameters
    assert all(p.dtype == np.float32 for p in model.parameters())
    assert model.double().layers[0].weight.dtype == np.float64
    with pytest.raises(TypeError, match="floating-point dtype"):
        model.to(np.int64)


def test_layers_take_a_dtype():
    for make in [lambda d: nn.Linear(3, 2, rng=rng(), dtype=d), lambda d: nn.MLP([3, 4, 2], rng=rng(), dtype=d),
                 lambda d: nn.RNNCell(3, 2, rng=rng(), dtype=d), lambda d: nn.RNN(3, 2, rng=rng(), dtype=d)]:
        single, double = make(np.float32), make(np.float64)
        assert all(p.dtype == np.float32 for p in single.parameters())
        for a, b in zip(single.parameters(), double.parameters()):
            np.testing.assert_array_equal(a.data, b.data.astype(np.float32))  # the same draws
    xs = mg.tensor(np.ones((4, 2, 3), np.float32))
    outputs, last = nn.RNN(3, 2, rng=rng(), dtype=np.float32)(xs)
    assert outputs.dtype == last.dtype == np.float32
