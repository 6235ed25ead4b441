"""Each program in examples/ runs for a few steps beside the same program in PyTorch, started from the
same weights (float64): the losses of every step and the final weights agree within 1e-6. And each
runs as a script, printing its progress."""

import importlib
import math
import random
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import nn

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TOL = 1e-6


@pytest.fixture(scope="module", autouse=True)
def _examples_on_path():
    sys.path.insert(0, str(EXAMPLES))
    yield
    sys.path.remove(str(EXAMPLES))


def example(name):
    return importlib.import_module(name)


def _torch_twin(model, module):
    """The PyTorch module `module` (float64) holding `model`'s weights."""
    module = module.double()
    module.load_state_dict({k: torch.from_numpy(v) for k, v in nn.utils.torch_state_dict(model).items()})
    return module


def _same_gradients(model, module):
    """`model`'s gradients are its PyTorch twin's (Linear's (in, out) against PyTorch's (out, in))."""
    for (name, p), (tname, tp) in zip(model.named_parameters(), module.named_parameters(), strict=True):
        g = p.grad.data.T if p.grad.ndim == 2 else p.grad.data
        np.testing.assert_allclose(g, tp.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=f"{name} / {tname}")


def _same(model, module, losses, tlosses):
    np.testing.assert_allclose(losses, tlosses, rtol=0, atol=TOL)
    theirs = {k: v.detach().numpy() for k, v in module.state_dict().items()}
    mine = nn.utils.torch_state_dict(model)
    assert mine.keys() == theirs.keys()
    for name in mine:
        np.testing.assert_allclose(mine[name], theirs[name], rtol=0, atol=TOL, err_msg=name)
    assert not np.allclose(losses[0], losses[-1]), "the steps changed the model"


def _torch_classifier_steps(module, x, y, index_batches, optimizer):
    losses = []
    for index in index_batches:
        loss = torch.nn.functional.cross_entropy(module(torch.from_numpy(x[index])), torch.from_numpy(y[index]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_mlp_digits_matches_torch():
    ex = example("mlp_digits")
    x, y, _, _ = ex.data()
    model = ex.make_model()
    module = _torch_twin(model, torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)))
    steps = 8
    losses = ex.train(model, x, y, steps)
    tlosses = _torch_classifier_steps(module, x, y, ex.batches(len(x), 64, steps), torch.optim.Adam(module.parameters(), lr=1e-2))
    _same(model, module, losses, tlosses)


def test_cnn_digits_matches_torch():
    ex = example("cnn_digits")
    x, y, _, _ = ex.data()
    assert x.shape[1:] == (1, 8, 8)
    model = ex.make_model()
    T = torch.nn
    module = _torch_twin(
        model,
        T.Sequential(T.Conv2d(1, 8, 3, padding=1), T.ReLU(), T.MaxPool2d(2), T.Conv2d(8, 16, 3, padding=1), T.ReLU(), T.MaxPool2d(2), T.Flatten(), T.Linear(64, 10)),
    )
    steps = 5
    losses = ex.train(model, x, y, steps)
    tlosses = _torch_classifier_steps(module, x, y, ex.batches(len(x), 32, steps), torch.optim.Adam(module.parameters(), lr=3e-3))
    _same(model, module, losses, tlosses)


class TorchCharMLP(torch.nn.Module):
    def __init__(self, vocab, block, embed=12, hidden=96):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab, embed)
        self.flatten = torch.nn.Flatten()
        self.hidden = torch.nn.Linear(block * embed, hidden)
        self.out = torch.nn.Linear(hidden, vocab)

    def forward(self, contexts):
        return self.out(torch.tanh(self.hidden(self.flatten(self.embedding(contexts)))))


def test_char_mlp_matches_torch():
    ex = example("char_mlp")
    contexts, targets, alphabet = ex.data()
    assert contexts.shape == (len(targets), ex.BLOCK)
    model = ex.make_model(len(alphabet))
    module = _torch_twin(model, TorchCharMLP(len(alphabet), ex.BLOCK))
    steps = 8
    losses = ex.train(model, contexts, targets, steps)
    optimizer = torch.optim.SGD(module.parameters(), lr=0.3, momentum=0.9)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps, eta_min=0.003)
    rng = np.random.default_rng(0)  # train's batches: the same draws
    tlosses = []
    for _ in range(steps):
        index = rng.integers(0, len(contexts), 128)
        loss = torch.nn.functional.cross_entropy(module(torch.from_numpy(contexts[index])), torch.from_numpy(targets[index]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        tlosses.append(loss.item())
    _same(model, module, losses, tlosses)
    text = ex.sample(model, alphabet, "the ", length=20)
    assert text.startswith("the ") and len(text) == 24 and set(text) <= set(alphabet)


class TorchCharLSTM(torch.nn.Module):
    def __init__(self, vocab, embed=16, hidden=64):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab, embed)
        self.cell = torch.nn.LSTMCell(embed, hidden)
        self.head = torch.nn.Linear(hidden, vocab)

    def forward(self, ids, state=None):
        x = self.embedding(ids)
        logits = []
        for t in range(ids.shape[1]):
            state = self.cell(x[:, t], state)
            logits.append(self.head(state[0]))
        return torch.stack(logits), state


def test_char_lstm_with_truncated_backpropagation_matches_torch():
    ex = example("char_lstm")
    streams, alphabet = ex.data()
    model = ex.make_model(len(alphabet))
    module = _torch_twin(model, TorchCharLSTM(len(alphabet)))
    unroll = 16
    steps = streams.shape[1] // unroll + 2  # past the end of the streams: the state restarts once
    losses = ex.train(model, streams, steps, unroll=unroll)
    optimizer = torch.optim.Adam(module.parameters(), lr=1e-2)
    state, tlosses = None, []
    for _, (inputs, targets, restart) in zip(range(steps), ex.chunks(streams, unroll)):
        if restart:
            state = None
        logits, state = module(torch.from_numpy(inputs), state)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.from_numpy(targets.T.reshape(-1)))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
        optimizer.step()
        state = (state[0].detach(), state[1].detach())
        tlosses.append(loss.item())
    _same(model, module, losses, tlosses)
    restarts = [r for _, (_, _, r) in zip(range(steps), ex.chunks(streams, unroll))]
    assert restarts.count(True) == 2, "the test runs past one wrap-around of the streams"


def test_manual_sgd_matches_torch():
    ex = example("manual_sgd")
    x, y, _, _ = ex.data()
    w, b = ex.make_parameters()
    tw, tb = (torch.tensor(p.data, requires_grad=True) for p in (w, b))
    assert w.is_leaf
    w_before = w
    steps = 10
    losses = ex.train(w, b, x, y, steps)
    assert w is w_before and w.is_leaf and w.grad is None, "updated in place, gradients cleared"
    tlosses = []
    for _ in range(steps):
        loss = -torch.log_softmax(torch.from_numpy(x) @ tw + tb, dim=1)[np.arange(len(y)), y].mean()
        loss.backward()
        with torch.no_grad():
            tw -= 0.5 * tw.grad
            tb -= 0.5 * tb.grad
        tw.grad = tb.grad = None
        tlosses.append(loss.item())
    np.testing.assert_allclose(losses, tlosses, rtol=0, atol=TOL)
    np.testing.assert_allclose(w.data, tw.detach().numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(b.data, tb.detach().numpy(), rtol=0, atol=TOL)


# PyTorch's tutorial "Learning PyTorch with Examples", as written there (float64, and the start values
# given rather than drawn), beside examples/polynomial_fit.py: every step's loss and the final
# coefficients agree.
def _torch_sine():
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=torch.float64)
    return x, torch.sin(x)


def _torch_by_hand(predict, start, lr, steps):
    x, y = _torch_sine()
    params = [torch.tensor(value, dtype=torch.float64, requires_grad=True) for value in start]
    losses = []
    for _ in range(steps):
        loss = (predict(x, *params) - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad = None
    return losses, [p.item() for p in params]


def _agree(ours, theirs):
    (losses, coefficients), (tlosses, tcoefficients) = ours, theirs
    np.testing.assert_allclose(losses, tlosses, rtol=1e-9)
    np.testing.assert_allclose(coefficients, tcoefficients, rtol=1e-9, atol=1e-12)
    assert losses[-1] < losses[0] / 4, "the fit improves"


def test_polynomial_fit_with_autograd_matches_torch():
    ex = example("polynomial_fit")
    start, steps = ex.initial_coefficients(4), 300
    ours = ex.fit_autograd(*ex.data(), steps, start)
    _agree(ours, _torch_by_hand(lambda x, a, b, c, d: a + b * x + c * x**2 + d * x**3, start, 1e-6, steps))


def test_polynomial_fit_with_a_custom_function_matches_torch():
    ex = example("polynomial_fit")
    ours = ex.fit_function(*ex.data(), 300)
    # P₃ written out for torch's autograd: the example's hand-written backward is checked against it
    theirs = _torch_by_hand(lambda x, a, b, c, d: a + b * 0.5 * (5 * (c + d * x) ** 3 - 3 * (c + d * x)), (0.0, -1.0, 0.0, 0.3), 5e-6, 300)
    _agree(ours, theirs)


def test_polynomial_fit_with_nn_and_rmsprop_matches_torch():
    ex = example("polynomial_fit")
    model, steps = ex.make_nn_model(), 300
    module = _torch_twin(model, torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1)))
    ours = ex.fit_nn(*ex.data(), steps, model)
    x, y = _torch_sine()
    xx = x.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))
    loss_fn, optimizer = torch.nn.MSELoss(reduction="sum"), torch.optim.RMSprop(module.parameters(), lr=1e-3)
    tlosses = []
    for _ in range(steps):
        loss = loss_fn(module(xx), y)
        tlosses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    linear = module[0]
    _agree(ours, (tlosses, [linear.bias.item()] + [linear.weight[:, i].item() for i in range(3)]))


def test_polynomial_fit_with_a_dynamic_graph_matches_torch():
    ex = example("polynomial_fit")
    start, steps = ex.initial_coefficients(5), 300
    ours = ex.fit_dynamic(*ex.data(), steps, ex.DynamicNet(start, random.Random(3)))
    x, y = _torch_sine()
    params = [torch.nn.Parameter(torch.tensor(value, dtype=torch.float64)) for value in start]
    a, b, c, d, e = params
    rng, tlosses = random.Random(3), []
    optimizer = torch.optim.SGD(params, lr=1e-8, momentum=0.9)
    for _ in range(steps):
        y_pred = a + b * x + c * x**2 + d * x**3
        for exponent in range(4, rng.randint(4, 6)):
            y_pred = y_pred + e * x**exponent
        loss = torch.nn.functional.mse_loss(y_pred, y, reduction="sum")
        tlosses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    _agree(ours, (tlosses, [p.item() for p in params]))


def test_polynomial_fit_runs_as_a_script_and_prints_each_fit(capsys):
    example("polynomial_fit").main(["--steps", "3"])
    out = capsys.readouterr().out
    fits = [line[:-1] for line in out.splitlines() if line.endswith(":")]
    assert fits == ["autograd", "function", "nn", "dynamic"], out
    steps = [int(line.split()[1]) for line in out.splitlines() if line.startswith("step ")]
    assert steps == [0, 1, 2] * 4, out
    assert out.count("result (") == 4, out


# --------------------------------------------------------------------------- Karpathy's GPT
# examples/gpt.py is his gpt.py with `torch` replaced by `mg`; replaced back, the same file is his
# PyTorch program. Both run from the same weights on the same batches, float64, without dropout.
GPT_IMPORTS = {
    "import minigrad as mg": "import torch as mg",
    "import minigrad.nn as nn": "import torch.nn as nn",
    "from minigrad.nn import functional as F": "from torch.nn import functional as F",
}
GPT_SMALL = {"batch_size": 4, "block_size": 8, "n_embd": 16, "n_head": 2, "n_layer": 2, "dropout": 0.0}


def _in_torch(name, imports=GPT_IMPORTS):
    """The namespace of examples/`name`.py run with PyTorch imported in place of minigrad."""
    source = (EXAMPLES / f"{name}.py").read_text()
    for ours, theirs in imports.items():
        assert source.count(ours) == 1, ours
        source = source.replace(ours, theirs)
    assert "minigrad" not in source.split('"""', 2)[2], "the program names nothing of minigrad's but its imports"
    namespace = {"__name__": f"{name}_in_torch"}
    exec(compile(source, f"{name}_in_torch", "exec"), namespace)
    return namespace


def test_gpt_is_karpathys_torch_program_and_trains_as_it_does(monkeypatch):
    ex, theirs = example("gpt"), _in_torch("gpt")
    for name, value in GPT_SMALL.items():
        monkeypatch.setattr(ex, name, value)
        theirs[name] = value
    train_data, _, vocab, _, _ = ex.data()
    rng, steps = np.random.default_rng(0), 6
    starts = [rng.integers(0, len(train_data) - 8, 4) for _ in range(steps)]
    batches = [(np.stack([train_data.data[i : i + 8] for i in ix]), np.stack([train_data.data[i + 1 : i + 9] for i in ix])) for ix in starts]
    mg.manual_seed(0)
    model = ex.GPTLanguageModel(vocab)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        module = theirs["GPTLanguageModel"](vocab)
        state = nn.utils.torch_state_dict(model)
        assert any(k.endswith(".tril") for k in state), "register_buffer's masks are in the state, as in PyTorch's"
        module.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})  # strict: the same names
        mine = iter(batches)
        monkeypatch.setattr(ex, "get_batch", lambda data: tuple(mg.tensor(a) for a in next(mine)))
        losses = ex.train(model, None, steps)
        torch_batches = iter(batches)
        theirs["get_batch"] = lambda data: tuple(torch.from_numpy(a) for a in next(torch_batches))
        tlosses = theirs["train"](module, None, steps)
    finally:
        torch.set_default_dtype(previous)
    np.testing.assert_allclose(losses, tlosses, rtol=1e-9)
    assert losses[-1] < losses[0], "it learns"


def test_gpt_runs_as_a_script_and_samples(capsys):
    example("gpt").main(["--steps", "2", "--sample", "20"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("M parameters") and [line.split(":")[0] for line in lines[1:3]] == ["step 0", "step 1"], lines
    assert "train loss" in lines[1] and "val loss" in lines[1]
    assert len(lines[-1]) >= 10, "a sample of text"


@pytest.mark.parametrize("name", ["mlp_digits", "cnn_digits", "char_mlp", "char_lstm", "manual_sgd"])
def test_examples_run_as_scripts_and_print_progress(name, capsys):
    example(name).main(["--steps", "3"])
    out = capsys.readouterr().out
    steps = [int(line.split()[1]) for line in out.splitlines() if line.startswith("step ") and "loss" in line]
    assert steps == [0, 1, 2], out


# --------------------------------------------------------------------------- Gaussian-process regression
GP_IMPORTS = {"import minigrad as mg": "import torch as mg", "from minigrad import optim": "from torch import optim"}


def test_gaussian_process_is_a_torch_program_and_fits_as_it_does(capsys):
    """The same file with torch imported: the same points, every step's loss, the fitted
    hyperparameters and the posterior agree; and the fit finds the data's noise level."""
    ex, theirs = example("gaussian_process"), _in_torch("gaussian_process", GP_IMPORTS)
    rng = np.random.default_rng(3)
    x = rng.uniform(-5.0, 5.0, (15, 1))
    y = np.sin(x[:, 0]) + 0.1 * rng.standard_normal(15)
    grid = np.linspace(-5.0, 5.0, 41)[:, None]
    ours, torch_gp = ex.GaussianProcess(), theirs["GaussianProcess"]()
    losses = ex.fit(ours, mg.tensor(x), mg.tensor(y), 150)
    tlosses = theirs["fit"](torch_gp, torch.from_numpy(x), torch.from_numpy(y), 150)
    np.testing.assert_allclose(losses, tlosses, rtol=1e-9, atol=1e-12)
    for p, tp in zip(ours.parameters(), torch_gp.parameters()):
        np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=1e-9)
    for m, tm in zip(ours.predict(mg.tensor(x), mg.tensor(y), mg.tensor(grid)), torch_gp.predict(*map(torch.from_numpy, (x, y, grid)))):
        np.testing.assert_allclose(m.data, tm.numpy(), rtol=1e-8, atol=1e-12)
    assert losses[-1] < losses[0] - 5, "it learns"
    assert 0.03 < math.exp(ours.log_noise.item()) < 0.3, "the noise level it finds is near the data's 0.1"
    assert capsys.readouterr().out.count("step ") == 2 * 9


def test_gaussian_process_runs_as_a_script(capsys):
    example("gaussian_process").main(["--steps", "3"])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in lines[:2]] == ["0", "2"], lines  # every 20 steps, and the last
    assert lines[2].startswith("lengthscale") and "error of the posterior mean" in lines[3], lines


VAE_IMPORTS = {
    "import minigrad as mg": "import torch as mg",
    "from minigrad import nn, optim": "from torch import nn, optim",
    "from minigrad.data import load_digits  # sklearn.datasets.load_digits in a PyTorch program": "load_digits = None  # the test passes the images in",
    "from minigrad.distributions import Bernoulli, Independent, Normal, kl_divergence": "from torch.distributions import Bernoulli, Independent, Normal, kl_divergence",
}


def test_vae_is_a_torch_program_and_computes_what_it_does(monkeypatch, capsys):
    """From the same weights, on the same images and with the same draws ε: the same posteriors,
    ELBO and gradients as the file run with torch imported; then each library's training, with its
    own draws, raises the ELBO by as much."""
    ex, theirs = example("vae_digits"), _in_torch("vae_digits", VAE_IMPORTS)
    images = ex.data()
    mg.manual_seed(0)
    ours = ex.VAE()
    twin = _torch_twin(ours, theirs["VAE"]())
    x, tx = images[:40], torch.from_numpy(images.data[:40])
    q, tq = ours.posterior(x), twin.posterior(tx)
    for ours_statistic, theirs_statistic in [(q.mean, tq.mean), (q.stddev, tq.stddev)]:
        np.testing.assert_allclose(ours_statistic.data, theirs_statistic.detach().numpy(), rtol=1e-12)
    eps = np.random.default_rng(1).standard_normal((40, 2))  # one ε for both: rsample made deterministic
    monkeypatch.setattr(mg.distributions.Normal, "rsample", lambda self, shape=(): self.loc + self.scale * mg.tensor(eps))
    monkeypatch.setattr(torch.distributions.Normal, "rsample", lambda self, shape=(): self.loc + self.scale * torch.from_numpy(eps))
    elbo, telbo = ours.elbo(x), twin.elbo(tx)
    np.testing.assert_allclose(elbo.item(), telbo.item(), rtol=1e-12)
    elbo.backward()
    telbo.backward()
    _same_gradients(ours, twin)
    monkeypatch.undo()
    mg.manual_seed(2)
    torch.manual_seed(2)
    history = ex.train(ours, images, 3)
    their_history = theirs["train"](twin, torch.from_numpy(images.data), 3)
    assert history[-1] > history[0] + 3 and their_history[-1] > their_history[0] + 3, (history, their_history)
    assert abs(history[-1] - their_history[-1]) < 1.5, (history, their_history)
    assert capsys.readouterr().out.count(" ELBO ") == 6


def test_vae_runs_as_a_script(capsys):
    example("vae_digits").main(["--epochs", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("epoch   0  ELBO") and "codes of the 1797 digits" in lines[1], lines


FLOW_IMPORTS = {
    "import minigrad as mg": "import torch as mg",
    "from minigrad import nn, optim": "from torch import nn, optim",
    "from minigrad.distributions import Independent, MultivariateNormal, Normal, Transform, TransformedDistribution, constraints":
        "from torch.distributions import Independent, MultivariateNormal, Normal, Transform, TransformedDistribution, constraints",
}


def test_flow_is_a_torch_program_and_computes_what_it_does(capsys):
    """A user's own Transform (an affine coupling layer, declared with `constraints.real_vector`)
    in a TransformedDistribution: from the same weights, the same log-densities and gradients as
    the file run with torch imported, the same map and inverse of the same points, and 40 training
    steps on the same batches that agree step by step and lower the NLL."""
    ex, theirs = example("flow_moons"), _in_torch("flow_moons", FLOW_IMPORTS)
    points = ex.moons(400)
    mg.manual_seed(0)
    ours = ex.Flow()
    twin = _torch_twin(ours, theirs["Flow"]())
    x, tx = points[:64], torch.from_numpy(points.data[:64])
    flow, their_flow = ours.distribution(x), twin.distribution(tx)
    assert (flow.batch_shape, flow.event_shape) == ((), (2,)) and tuple(their_flow.event_shape) == (2,)
    np.testing.assert_allclose(flow.log_prob(x).data, their_flow.log_prob(tx).detach().numpy(), rtol=1e-12)
    z = np.random.default_rng(3).standard_normal((5, 2))
    y, ty = mg.tensor(z), torch.from_numpy(z)
    for layer, their_layer in zip(flow.transforms, their_flow.transforms, strict=True):
        y, ty = layer(y), their_layer(ty)
    np.testing.assert_allclose(y.data, ty.detach().numpy(), rtol=1e-12)
    back = mg.tensor(y.data)  # a new tensor: the inverse computed, not the cache's
    for layer in reversed(flow.transforms):
        back = layer.inv(back)
    np.testing.assert_allclose(back.data, z, rtol=1e-10, atol=1e-12)
    nll, their_nll = ours.nll(x), twin.nll(tx)
    nll.backward()
    their_nll.backward()
    _same_gradients(ours, twin)
    ours.zero_grad()
    twin.zero_grad()
    history = ex.train(ours, points, 40)
    their_history = theirs["train"](twin, torch.from_numpy(points.data), 40)
    np.testing.assert_allclose(history, their_history, rtol=1e-8)
    assert np.mean(history[-5:]) < history[0] - 0.3, history
    assert capsys.readouterr().out.count("step ") == 2 * 2
    held_out = ex.moons(400, seed=2)
    assert ex.gaussian_nll(points, held_out) == pytest.approx(theirs["gaussian_nll"](torch.from_numpy(points.data), torch.from_numpy(held_out.data)), rel=1e-12)


def test_flow_runs_as_a_script(capsys):
    example("flow_moons").main(["--steps", "3"])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in lines[:2]] == ["0", "2"] and lines[2].startswith("held-out NLL"), lines


BAYES_IMPORTS = {
    "import minigrad as mg": "import torch as mg",
    "from minigrad import nn, optim": "from torch import nn, optim",
    "from minigrad.distributions import LowRankMultivariateNormal, MultivariateNormal, Normal, constraints, kl_divergence, transform_to":
        "from torch.distributions import LowRankMultivariateNormal, MultivariateNormal, Normal, constraints, kl_divergence, transform_to",
}


def low_rank_draws(eps, eta, as_tensor):
    """A LowRankMultivariateNormal.rsample returning loc + W ε + √D η for these ε and η: the same
    draws in both libraries (bench_examples.py uses it too)."""
    e, h = as_tensor(eps), as_tensor(eta)
    return lambda self, sample_shape=(): self.loc + (self.cov_factor @ e.unsqueeze(-1)).squeeze(-1) + self.cov_diag.sqrt() * h


def _exact_posterior(phi, y, noise):
    """The posterior of the weights given σ, in numpy: N(S Φᵀy/σ², S), S = (ΦᵀΦ/σ² + I)⁻¹."""
    covariance = np.linalg.inv(phi.T @ phi / noise**2 + np.eye(phi.shape[1]))
    return covariance @ phi.T @ y / noise**2, covariance


def _empirical_bayes_noise(phi, y):
    """The σ maximizing log N(y; 0, σ² I + ΦΦᵀ), the marginal likelihood, on a fine grid."""
    def log_evidence(noise):
        _, logdet = np.linalg.slogdet(noise**2 * np.eye(len(y)) + phi @ phi.T)
        return -0.5 * (logdet + y @ np.linalg.solve(noise**2 * np.eye(len(y)) + phi @ phi.T, y))

    grid = np.linspace(0.1, 0.6, 5001)
    return grid[np.argmax([log_evidence(noise) for noise in grid])]


def test_bayesian_regression_is_a_torch_program_and_finds_the_exact_posterior(monkeypatch, capsys):
    """With the same draws, the ELBO and its gradients equal those of the file run with torch
    imported; then each library's variational posterior, trained with its own draws, is the exact
    posterior (computed here, in numpy) to a fraction of its spread, and the noise scale the one
    that maximizes the marginal likelihood."""
    ex, theirs = example("bayesian_regression"), _in_torch("bayesian_regression", BAYES_IMPORTS)
    x, y = ex.data()
    tx, ty = torch.from_numpy(x.data), torch.from_numpy(y.data)
    mg.manual_seed(0)
    ours = ex.Posterior()
    twin = _torch_twin(ours, theirs["Posterior"]())
    eps, eta = np.random.default_rng(4).standard_normal((2, 32, 4))  # the same draws for both
    for module, as_tensor in ((mg.distributions, mg.tensor), (torch.distributions, torch.from_numpy)):
        monkeypatch.setattr(module.LowRankMultivariateNormal, "rsample", low_rank_draws(eps, eta, as_tensor))
    elbo, their_elbo = ours.elbo(ex.features(x), y), twin.elbo(theirs["features"](tx), ty)
    np.testing.assert_allclose(elbo.item(), their_elbo.item(), rtol=1e-12)
    elbo.backward()
    their_elbo.backward()
    for (name, p), (_, tp) in zip(ours.named_parameters(), twin.named_parameters(), strict=True):
        np.testing.assert_allclose(p.grad.data, tp.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)
    monkeypatch.undo()
    phi = np.stack([x.data**k for k in range(4)], axis=-1)
    best_noise = _empirical_bayes_noise(phi, y.data)
    torch.manual_seed(0)
    for model, train, data in ((ours, ex.train, (x, y)), (twin, theirs["train"], (tx, ty))):
        train(model, *data, 1500)
        q, noise = model.q(), model.noise().item()
        mean, covariance = _exact_posterior(phi, y.data, noise)
        spread = np.sqrt(np.diag(covariance))
        np.testing.assert_allclose(q.mean.detach().numpy(), mean, atol=0.1 * spread.min())
        np.testing.assert_allclose(q.stddev.detach().numpy(), spread, rtol=0.1)
        assert abs(noise - best_noise) < 0.01, (noise, best_noise)
    assert capsys.readouterr().out.count("  ELBO ") == 2 * 6


def test_bayesian_regression_runs_as_a_script(capsys):
    example("bayesian_regression").main(["--steps", "10"])
    lines = capsys.readouterr().out.splitlines()  # steps 0, 2, 4, 6, 8 and the last, then the table
    assert lines[0].startswith("step     0  ELBO") and lines[6].startswith("weights") and len(lines) == 11, lines


def test_every_example_is_tested():
    scripts = {p.stem for p in EXAMPLES.glob("*.py")}
    assert scripts == {
        "mlp_digits", "cnn_digits", "char_mlp", "char_lstm", "manual_sgd", "polynomial_fit", "gpt", "makemore_batchnorm", "gaussian_process",
        "vae_digits", "flow_moons", "bayesian_regression",
    }, scripts
    source = "".join(p.read_text() for p in EXAMPLES.glob("*.py"))
    assert "import torch" not in source and "from torch" not in source, "examples need only minigrad"
    assert mg.data.load_digits()[0].shape == (1797, 8, 8)


MAKEMORE_IMPORTS = {"import minigrad as mg": "import torch as mg", "from minigrad.nn import functional as F": "from torch.nn import functional as F"}


def test_makemore_batchnorm_is_karpathys_torch_program_and_trains_as_it_does(monkeypatch):
    """His hand-written layers, manual update and diagnostics, beside PyTorch from the same weights
    on the same batches: losses, update ratios, weights, running statistics, each tanh layer's
    activation and gradient statistics and histograms, and the evaluation loss."""
    ex, theirs = example("makemore_batchnorm"), _in_torch("makemore_batchnorm", MAKEMORE_IMPORTS)
    Xtr, Ytr, Xdev, Ydev, _, _, itos = ex.data()
    C, layers, parameters = ex.make_model(len(itos))
    steps, rng = 8, np.random.default_rng(0)
    batches = [rng.integers(0, Xtr.shape[0], ex.batch_size) for _ in range(steps)]
    mine, their_batches = iter(batches), iter(batches)
    monkeypatch.setattr(ex, "get_batch", lambda X, Y: (lambda ix: (X[ix], Y[ix]))(mg.tensor(next(mine))))
    theirs["get_batch"] = lambda X, Y: (lambda ix: (X[ix], Y[ix]))(torch.from_numpy(next(their_batches)))
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        tC, tlayers, tparameters = theirs["make_model"](len(itos))
        with torch.no_grad():
            for p, tp in zip(parameters, tparameters, strict=True):
                tp.copy_(torch.from_numpy(p.data))
        lossi, ud = ex.train(C, layers, parameters, Xtr, Ytr, steps)
        tlossi, tud = theirs["train"](tC, tlayers, tparameters, torch.from_numpy(Xtr.data), torch.from_numpy(Ytr.data), steps)
        statistics = [ex.activation_statistics(layers, grad=grad) for grad in (False, True)]
        tstatistics = [theirs["activation_statistics"](tlayers, grad=grad) for grad in (False, True)]
        dev, tdev = ex.split_loss(C, layers, Xdev, Ydev), theirs["split_loss"](tC, tlayers, torch.from_numpy(Xdev.data), torch.from_numpy(Ydev.data))
    finally:
        torch.set_default_dtype(previous)
    np.testing.assert_allclose(lossi, tlossi, rtol=1e-10)
    np.testing.assert_allclose(ud, tud, rtol=1e-9, atol=1e-12)  # a BatchNorm gain's first ratio is 1: log10 0, to rounding
    for p, tp in zip(parameters, tparameters):
        np.testing.assert_allclose(p.data, tp.detach().numpy(), atol=1e-12)
    for layer, tlayer in zip(layers, tlayers):
        if isinstance(layer, ex.BatchNorm1d):
            np.testing.assert_allclose(layer.running_mean.data, tlayer.running_mean.numpy(), atol=1e-12)
            np.testing.assert_allclose(layer.running_var.data, tlayer.running_var.numpy(), atol=1e-12)
    for rows, trows in zip(statistics, tstatistics):
        assert [r[0] for r in rows] == [r[0] for r in trows] == [2, 5, 8, 11, 14]
        for row, trow in zip(rows, trows):
            np.testing.assert_allclose(row[1:4], trow[1:4], rtol=1e-9, atol=1e-15)
            for mine_array, their_array in zip(row[4:], trow[4:]):
                np.testing.assert_allclose(np.asarray(mine_array), their_array.numpy(), rtol=1e-9)
    assert 0 < statistics[0][0][3] < 50, "some tanh units saturate, not all"
    np.testing.assert_allclose(dev, tdev, rtol=1e-10)
    assert lossi[-1] < lossi[0], "it learns"


def test_makemore_batchnorm_runs_as_a_script(tmp_path, capsys):
    ex = example("makemore_batchnorm")
    ex.main(["--steps", "30", "--plot", str(tmp_path / "statistics.png")])
    out = capsys.readouterr().out
    assert "46688 parameters" in out and "layer 14 (Tanh): mean" in out and "saturated:" in out
    assert (tmp_path / "statistics.png").read_bytes()[:4] == b"\x89PNG"
    assert len(out.strip().splitlines()[-1].split()) == 10, "ten sampled words"
