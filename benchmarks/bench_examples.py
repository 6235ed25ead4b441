"""Each example's training step (examples/) against the same model in PyTorch, one thread each.

    .venv/bin/python benchmarks/bench_examples.py            # the full run (about a minute)
    .venv/bin/python benchmarks/bench_examples.py --quick    # a seconds-long smoke run

One step is what the example's `train` loop does once: forward, loss, zero_grad, backward, (clip,)
optimizer and schedule step, on the example's own batch size, in float64. The PyTorch twin of each
model is the one tests/test_examples.py proves equal to it step by step (imported from there, so
there is one definition of each), loaded with the same weights; before timing, both take two steps
on the same batch and must report the same losses (within 1e-6). Then they take turns, run by run,
on process CPU time (harness.time_interleaved). Each JSON line gives minigrad's best time per step,
PyTorch's, and their ratio (below 1: minigrad is faster); the first line says what machine (the CPU
model) and versions, the last sums the ratios up.
"""

import harness  # noqa: I001  (first: pins every BLAS library to one thread before numpy loads)

import argparse
import contextlib
import importlib
import math
import sys
from pathlib import Path

import numpy as np

import minigrad as mg
from minigrad import nn, optim

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPOSITORY / "examples"), str(REPOSITORY / "tests")]
from test_examples import BAYES_IMPORTS, FLOW_IMPORTS, GP_IMPORTS, MAKEMORE_IMPORTS, VAE_IMPORTS, TorchCharLSTM, TorchCharMLP, _in_torch, _torch_twin, low_rank_draws  # noqa: E402  (the twins the tests prove equal)

AGREE = 1e-6


def _example(name):
    return importlib.import_module(name)


def _classifier(torch, model, module, x, y, optimizer, torch_optimizer, schedule=None, torch_schedule=None):
    """(minigrad_step, pytorch_step) of a classifier trained on one fixed batch (x, y)."""
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def minigrad_step():
        loss = nn.cross_entropy(model(mg.tensor(x)), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if schedule is not None:
            schedule.step()
        return loss.item()

    def pytorch_step():
        loss = torch.nn.functional.cross_entropy(module(tx), ty)
        torch_optimizer.zero_grad()
        loss.backward()
        torch_optimizer.step()
        if torch_schedule is not None:
            torch_schedule.step()
        return loss.item()

    return minigrad_step, pytorch_step


def mlp_digits(torch):
    ex = _example("mlp_digits")
    x, y, _, _ = ex.data()
    index = ex.batches(len(x), 64, 1)[0]
    model = ex.make_model()
    T = torch.nn
    module = _torch_twin(model, T.Sequential(T.Linear(64, 64), T.ReLU(), T.Linear(64, 10)))
    steps = _classifier(torch, model, module, x[index], y[index], optim.Adam(model.parameters(), lr=1e-2),
                        torch.optim.Adam(module.parameters(), lr=1e-2))
    return steps, model.num_parameters(), "MLP 64-64-10, batch 64, Adam"


def cnn_digits(torch):
    ex = _example("cnn_digits")
    x, y, _, _ = ex.data()
    index = ex.batches(len(x), 32, 1)[0]
    model = ex.make_model()
    T = torch.nn
    module = _torch_twin(model, T.Sequential(T.Conv2d(1, 8, 3, padding=1), T.ReLU(), T.MaxPool2d(2), T.Conv2d(8, 16, 3, padding=1),
                                             T.ReLU(), T.MaxPool2d(2), T.Flatten(), T.Linear(64, 10)))
    steps = _classifier(torch, model, module, x[index], y[index], optim.Adam(model.parameters(), lr=3e-3),
                        torch.optim.Adam(module.parameters(), lr=3e-3))
    return steps, model.num_parameters(), "2 conv 3x3 + max-pool, linear; 8x8 images, batch 32, Adam"


def char_mlp(torch):
    ex = _example("char_mlp")
    contexts, targets, alphabet = ex.data()
    index = np.random.default_rng(0).integers(0, len(contexts), 128)
    model = ex.make_model(len(alphabet))
    module = _torch_twin(model, TorchCharMLP(len(alphabet), ex.BLOCK))
    optimizer = optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
    torch_optimizer = torch.optim.SGD(module.parameters(), lr=0.3, momentum=0.9)
    horizon = 10**6  # the schedule's period: its step is timed, its learning rate stays ~0.3
    steps = _classifier(torch, model, module, contexts[index], targets[index], optimizer, torch_optimizer,
                        optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=horizon, eta_min=0.003),
                        torch.optim.lr_scheduler.CosineAnnealingLR(torch_optimizer, T_max=horizon, eta_min=0.003))
    return steps, model.num_parameters(), f"Embedding {len(alphabet)}x12, 4 characters of context, tanh 96, batch 128, SGD momentum + cosine schedule"


def char_lstm(torch, unroll=16):
    ex = _example("char_lstm")
    streams, alphabet = ex.data()
    inputs, targets, _ = next(ex.chunks(streams, unroll))
    model = ex.make_model(len(alphabet))
    module = _torch_twin(model, TorchCharLSTM(len(alphabet)))
    optimizer, torch_optimizer = optim.Adam(model.parameters(), lr=1e-2), torch.optim.Adam(module.parameters(), lr=1e-2)
    flat_targets = targets.T.reshape(-1)
    tinputs, tflat = torch.from_numpy(inputs), torch.from_numpy(flat_targets)
    state = {"minigrad": None, "pytorch": None}  # carried, detached, from step to step: truncated backpropagation

    def minigrad_step():
        logits, (h, c) = model(inputs, state["minigrad"])
        loss = nn.cross_entropy(logits.reshape(-1, logits.shape[-1]), flat_targets)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        state["minigrad"] = (h.detach(), c.detach())
        return loss.item()

    def pytorch_step():
        logits, (h, c) = module(tinputs, state["pytorch"])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tflat)
        torch_optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
        torch_optimizer.step()
        state["pytorch"] = (h.detach(), c.detach())
        return loss.item()

    return (minigrad_step, pytorch_step), model.num_parameters(), f"LSTMCell 16-64 unrolled {unroll} steps over {streams.shape[0]} streams, clipped, Adam"


def manual_sgd(torch, lr=0.5):
    ex = _example("manual_sgd")
    x, y, _, _ = ex.data()
    w, b = ex.make_parameters()
    tw, tb = (torch.tensor(p.data, requires_grad=True) for p in (w, b))
    tx, rows = torch.from_numpy(x), np.arange(len(y))

    def minigrad_step():  # the example's own loop, once: loss, backward, w -= lr * w.grad under no_grad
        return ex.train(w, b, x, y, 1, lr=lr)[0]

    def pytorch_step():
        loss = -torch.log_softmax(tx @ tw + tb, dim=1)[rows, y].mean()
        loss.backward()
        with torch.no_grad():
            tw.sub_(lr * tw.grad)
            tb.sub_(lr * tb.grad)
        tw.grad = tb.grad = None
        return loss.item()

    return (minigrad_step, pytorch_step), w.size + b.size, f"softmax regression 64-10, full batch of {len(x)}, w -= lr * w.grad under no_grad"


def polynomial_fit(torch, lr=1e-3):
    ex = _example("polynomial_fit")
    x, y = ex.data()
    xx = x.unsqueeze(-1).pow(mg.tensor([1, 2, 3]))  # the nn fit, PyTorch's tutorial's third program
    model = ex.make_nn_model()
    module = _torch_twin(model, torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1)))
    optimizer, torch_optimizer = optim.RMSprop(model.parameters(), lr=lr), torch.optim.RMSprop(module.parameters(), lr=lr)
    txx, ty = torch.from_numpy(xx.data), torch.from_numpy(y.data)

    def minigrad_step():
        loss = nn.mse_loss(model(xx), y, reduction="sum")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()

    def pytorch_step():
        loss = torch.nn.functional.mse_loss(module(txx), ty, reduction="sum")
        torch_optimizer.zero_grad()
        loss.backward()
        torch_optimizer.step()
        return loss.item()

    return (minigrad_step, pytorch_step), model.num_parameters(), f"Linear 3-1 on (x, x², x³), {len(y.data)} points, sum of squares, RMSprop"


def gpt(torch):
    """One step of the GPT example's training loop at its own hyperparameters, against the same
    file run with torch (tests/test_examples.py), both in float64 and without dropout."""
    ex, theirs = _example("gpt"), _in_torch("gpt")
    for program in (vars(ex), theirs):
        program["dropout"] = 0.0  # random masks drawn by two libraries could not agree
    train_data, _, vocab_size, _, _ = ex.data()
    rng = np.random.default_rng(0)
    starts = rng.integers(0, len(train_data) - ex.block_size, ex.batch_size)
    x = np.stack([train_data.data[i : i + ex.block_size] for i in starts])
    y = np.stack([train_data.data[i + 1 : i + ex.block_size + 1] for i in starts])
    model = ex.GPTLanguageModel(vocab_size)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    module = theirs["GPTLanguageModel"](model.lm_head.weight.shape[1])
    torch.set_default_dtype(previous)
    module.load_state_dict({k: torch.from_numpy(v) for k, v in nn.utils.torch_state_dict(model).items()}, strict=False)
    optimizer, torch_optimizer = optim.AdamW(model.parameters(), lr=ex.learning_rate), torch.optim.AdamW(module.parameters(), lr=ex.learning_rate)
    xb, yb, txb, tyb = mg.tensor(x), mg.tensor(y), torch.from_numpy(x), torch.from_numpy(y)

    def minigrad_step():  # his loop's body, once
        _, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.item()

    def pytorch_step():
        _, loss = module(txb, tyb)
        torch_optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch_optimizer.step()
        return loss.item()

    what = f"GPT {ex.n_layer} blocks x {ex.n_head} heads, {ex.n_embd} channels, context {ex.block_size}, batch {ex.batch_size}, AdamW"
    return (minigrad_step, pytorch_step), model.num_parameters(), what


def gaussian_process(torch, lr=0.05):
    """One step of the Gaussian-process example's fit (the marginal likelihood through a Cholesky
    factor and a triangular solve, Adam), against the same file run with torch."""
    ex, theirs = _example("gaussian_process"), _in_torch("gaussian_process", GP_IMPORTS)
    x, y = ex.data()
    tx, ty = torch.from_numpy(x.data), torch.from_numpy(y.data)
    model, module = ex.GaussianProcess(), theirs["GaussianProcess"]()
    optimizer, torch_optimizer = optim.Adam(model.parameters(), lr=lr), torch.optim.Adam(module.parameters(), lr=lr)

    def step(gp, optimizer, x, y):
        optimizer.zero_grad()
        loss = gp.negative_log_likelihood(x, y)
        loss.backward()
        optimizer.step()
        return loss.item()

    what = f"squared-exponential GP on {len(y.data)} points: Cholesky, triangular solve, Adam on 3 log-parameters"
    return (lambda: step(model, optimizer, x, y), lambda: step(module, torch_optimizer, tx, ty)), 3, what


def makemore_batchnorm(torch):
    """One pass of his makemore Part 3 loop (forward through the hand-written layers,
    retain_grad, backward, the manual update, the update-ratio statistics) on a fixed batch,
    against the same file run with torch (tests/test_examples.py), both in float64."""
    ex, theirs = _example("makemore_batchnorm"), _in_torch("makemore_batchnorm", MAKEMORE_IMPORTS)
    Xtr, Ytr, _, _, _, _, itos = ex.data()
    ix = np.random.default_rng(0).integers(0, Xtr.shape[0], ex.batch_size)
    vars(ex)["get_batch"] = lambda X, Y: (X[mg.tensor(ix)], Y[mg.tensor(ix)])
    theirs["get_batch"] = lambda X, Y: (X[torch.from_numpy(ix)], Y[torch.from_numpy(ix)])
    model = ex.make_model(len(itos))
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    module = theirs["make_model"](len(itos))
    torch.set_default_dtype(previous)
    with torch.no_grad():
        for p, tp in zip(model[2], module[2], strict=True):
            tp.copy_(torch.from_numpy(p.data))
    tX, tY = torch.from_numpy(Xtr.data), torch.from_numpy(Ytr.data)

    def minigrad_step():
        return 10 ** ex.train(*model, Xtr, Ytr, 1)[0][0]

    def pytorch_step():
        return 10 ** theirs["train"](*module, tX, tY, 1)[0][0]

    what = f"his 6 Linear+BatchNorm1d(+Tanh) layers, {ex.n_hidden} units, batch {ex.batch_size}, manual SGD and statistics"
    return (minigrad_step, pytorch_step), sum(p.size for p in model[2]), what


@contextlib.contextmanager
def _fixed_draws(family, rsample):
    """`family.rsample` (a distribution class's) replaced by `rsample` while inside: the same draws
    in both libraries, so that the two steps report the same losses (and neither times its RNG)."""
    saved = family.rsample
    family.rsample = rsample
    try:
        yield
    finally:
        family.rsample = saved


def vae_digits(torch, batch_size=64, lr=3e-3):
    """One step of the VAE example's training (the posterior, one reparameterized draw, the
    Bernoulli likelihood, the KL divergence to the prior, Adam) on a fixed batch, against the same
    file run with torch, with the same draws ε on both sides."""
    ex, theirs = _example("vae_digits"), _in_torch("vae_digits", VAE_IMPORTS)
    x = ex.data()[:batch_size]
    tx = torch.from_numpy(x.data)
    mg.manual_seed(0)
    model = ex.VAE()
    module = _torch_twin(model, theirs["VAE"]())
    optimizer, torch_optimizer = optim.Adam(model.parameters(), lr=lr), torch.optim.Adam(module.parameters(), lr=lr)
    eps = np.random.default_rng(0).standard_normal((batch_size, 2))
    draws, torch_draws = mg.tensor(eps), torch.from_numpy(eps)

    def step(vae, optimizer, x, normal, draws):
        with _fixed_draws(normal, lambda self, sample_shape=(): self.loc + self.scale * draws):
            optimizer.zero_grad()
            loss = -vae.elbo(x)
            loss.backward()
            optimizer.step()
        return loss.item()

    what = f"VAE 64-128-2-128-64, batch {batch_size}: Independent Normal posterior, rsample, Bernoulli pixels, KL to the prior, Adam"
    return ((lambda: step(model, optimizer, x, mg.distributions.Normal, draws),
             lambda: step(module, torch_optimizer, tx, torch.distributions.Normal, torch_draws)),
            sum(p.size for p in model.parameters()), what)


def flow_moons(torch, batch_size=256, lr=0.01):
    """One step of the flow example's training (six affine couplings, the user's own Transform, in
    a TransformedDistribution: the inverse through every layer, the log-determinants, the base
    density, Adam) on a fixed batch, against the same file run with torch, from the same weights."""
    ex, theirs = _example("flow_moons"), _in_torch("flow_moons", FLOW_IMPORTS)
    x = ex.moons(batch_size)
    tx = torch.from_numpy(x.data)
    mg.manual_seed(0)
    model = ex.Flow()
    module = _torch_twin(model, theirs["Flow"]())
    optimizer, torch_optimizer = optim.Adam(model.parameters(), lr=lr), torch.optim.Adam(module.parameters(), lr=lr)

    def step(flow, optimizer, x):
        optimizer.zero_grad()
        loss = flow.nll(x)
        loss.backward()
        optimizer.step()
        return loss.item()

    what = f"RealNVP flow, 6 affine couplings (1-32-32-2 nets), batch {batch_size}: inverse, log-determinants, base density, Adam"
    return (lambda: step(model, optimizer, x), lambda: step(module, torch_optimizer, tx)), sum(p.size for p in model.parameters()), what


def bayesian_regression(torch, draws=32, lr=0.02):
    """One step of the variational-inference example's training (a LowRankMultivariateNormal
    posterior's draws, the Gaussian likelihood of 30 points, the KL divergence to the prior,
    transform_to, Adam), against the same file run with torch, with the same draws on both sides."""
    ex, theirs = _example("bayesian_regression"), _in_torch("bayesian_regression", BAYES_IMPORTS)
    x, y = ex.data()
    tx, ty = torch.from_numpy(x.data), torch.from_numpy(y.data)
    mg.manual_seed(0)
    model = ex.Posterior()
    module = _torch_twin(model, theirs["Posterior"]())
    optimizer, torch_optimizer = optim.Adam(model.parameters(), lr=lr), torch.optim.Adam(module.parameters(), lr=lr)
    eps, eta = np.random.default_rng(0).standard_normal((2, draws, model.loc.shape[0]))

    def step(posterior, optimizer, phi, y, family, as_tensor):
        with _fixed_draws(family, low_rank_draws(eps, eta, as_tensor)):
            optimizer.zero_grad()
            loss = -posterior.elbo(phi, y, draws)
            loss.backward()
            optimizer.step()
        return loss.item()

    phi, tphi = ex.features(x), theirs["features"](tx)
    what = f"VI of 4 weights, {draws} draws of a LowRankMultivariateNormal, 30 points, KL to the prior, Adam"
    return ((lambda: step(model, optimizer, phi, y, mg.distributions.LowRankMultivariateNormal, mg.tensor),
             lambda: step(module, torch_optimizer, tphi, ty, torch.distributions.LowRankMultivariateNormal, torch.from_numpy)),
            sum(p.size for p in model.parameters()), what)


EXAMPLES = {"mlp_digits": mlp_digits, "cnn_digits": cnn_digits, "char_mlp": char_mlp, "char_lstm": char_lstm, "manual_sgd": manual_sgd,
            "polynomial_fit": polynomial_fit, "gpt": gpt, "makemore_batchnorm": makemore_batchnorm,
            "gaussian_process": gaussian_process, "vae_digits": vae_digits, "flow_moons": flow_moons,
            "bayesian_regression": bayesian_regression}


def _calls_per_run(step, seconds):
    """How many calls of `step` take about `seconds` (at least one)."""
    start = harness.clock()
    step()
    return max(1, round(seconds / max(harness.clock() - start, 1e-6)))


def measure(name, torch, quick):
    (minigrad_step, pytorch_step), parameters, what = EXAMPLES[name](torch)
    for _ in range(2):  # the same model from the same weights: the same losses, step after step
        ours, theirs = minigrad_step(), pytorch_step()
        if not math.isclose(ours, theirs, rel_tol=0, abs_tol=AGREE):
            raise AssertionError(f"{name}: minigrad's loss {ours!r} and PyTorch's {theirs!r} differ")
    number = _calls_per_run(minigrad_step, 0.02 if quick else 0.2)
    runs = harness.time_interleaved({"minigrad": minigrad_step, "pytorch": pytorch_step}, number, 2 if quick else 9)
    figures = harness.summarize(runs, scale=1e3)
    record = {"benchmark": f"{name}_step", "unit": "ms", "what": what}
    record.update({contender: round(figure["min"], 4) for contender, figure in figures.items()})
    record["ratio"] = round(figures["minigrad"]["min"] / figures["pytorch"]["min"], 3)
    record["median"] = {contender: round(figure["median"], 4) for contender, figure in figures.items()}
    record["runs"], record["calls_per_run"] = figures["minigrad"]["runs"], number
    record["parameters"] = int(parameters)
    harness.emit(record)
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run (figures are noisy)")
    harness.add_timing_options(parser)
    args = parser.parse_args(argv)
    harness.apply_timing_options(args)
    torch = harness.single_threaded_torch()
    harness.emit({"benchmark": "machine", "command": harness.command_line(), "quick": args.quick, "clock": args.clock, **harness.machine()})
    harness.freeze_heap()
    records = [measure(name, torch, args.quick) for name in EXAMPLES]
    ratios = {r["benchmark"]: r["ratio"] for r in records}
    geometric_mean = math.exp(sum(math.log(r) for r in ratios.values()) / len(ratios))
    harness.emit({"benchmark": "summary", "ratios": ratios, "geometric_mean_ratio": round(geometric_mean, 3)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
