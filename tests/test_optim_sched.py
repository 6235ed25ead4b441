"""AdamW, RMSprop and the learning-rate schedulers against PyTorch in float64, step by step."""

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import nn, optim


def _twins(seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal(4)]
    return [mg.tensor(a, requires_grad=True) for a in arrays], [torch.tensor(a, requires_grad=True) for a in arrays]


def _loss(params, x, lib):
    w, b = params
    out = (x @ w + b).tanh() if lib is mg else torch.tanh(x @ w + b)
    return (out * out).sum() + (w * w * w).sum()


def _run(make_mine, make_theirs, steps=6, schedule=None):
    mine, theirs = _twins()
    opt, topt = make_mine(mine), make_theirs(theirs)
    sched = schedule[0](opt) if schedule else None
    tsched = schedule[1](topt) if schedule else None
    x = np.random.default_rng(1).standard_normal((5, 3))
    for _ in range(steps):
        opt.zero_grad(), topt.zero_grad()
        _loss(mine, mg.tensor(x), mg).backward()
        _loss(theirs, torch.tensor(x), torch).backward()
        opt.step(), topt.step()
        if sched:
            sched.step(), tsched.step()
            assert sched.get_last_lr()[0] == pytest.approx(tsched.get_last_lr()[0], rel=1e-12, abs=1e-15)
        for p, tp in zip(mine, theirs):
            np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=1e-12, atol=1e-14)


AMSGRAD = {"betas": (0.9, 0.5), "lr": 0.1, "amsgrad": True}  # a short memory of g², so that it shrinks and the maximum differs


@pytest.mark.parametrize("kwargs", [{}, {"weight_decay": 0.1, "lr": 0.05}, {"betas": (0.8, 0.9), "eps": 1e-6, "lr": 0.1}, AMSGRAD])
def test_adamw_matches_torch(kwargs):
    _run(lambda p: optim.AdamW(p, **kwargs), lambda p: torch.optim.AdamW(p, **kwargs))


@pytest.mark.parametrize("kind", ["Adam", "AdamW"])
def test_amsgrad_matches_torch_and_changes_the_steps(kind):
    _run(lambda p: getattr(optim, kind)(p, **AMSGRAD), lambda p: getattr(torch.optim, kind)(p, **AMSGRAD), steps=10)
    finals = []
    for amsgrad in (False, True):
        params, _ = _twins()
        opt = getattr(optim, kind)(params, **{**AMSGRAD, "amsgrad": amsgrad})
        for _ in range(10):
            opt.zero_grad()
            _loss(params, mg.tensor(np.random.default_rng(1).standard_normal((5, 3))), mg).backward()
            opt.step()
        finals.append(params[0].data.copy())
    assert not np.allclose(*finals), "the running maximum of the second moment took part"
    restored = getattr(optim, kind)(_twins()[0], amsgrad=True)
    restored.load_state_dict(opt.state_dict())
    np.testing.assert_array_equal(restored.v_max[0], opt.v_max[0])


@pytest.mark.parametrize(
    "kwargs", [{}, {"momentum": 0.9}, {"centered": True}, {"centered": True, "momentum": 0.5, "weight_decay": 0.1, "alpha": 0.9}]
)
def test_rmsprop_matches_torch(kwargs):
    _run(lambda p: optim.RMSprop(p, **kwargs), lambda p: torch.optim.RMSprop(p, **kwargs))


def test_adamw_differs_from_adam_with_weight_decay():
    a, _ = _twins()
    b, _ = _twins()
    for params, opt in [(a, optim.Adam(a, lr=0.1, weight_decay=0.5)), (b, optim.AdamW(b, lr=0.1, weight_decay=0.5))]:
        _loss(params, mg.tensor(np.ones((2, 3))), mg).backward()
        opt.step()
    assert not np.allclose(a[0].data, b[0].data)


SCHEDULES = {
    "step": (lambda o: optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5), lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5)),
    "multistep": (
        lambda o: optim.lr_scheduler.MultiStepLR(o, [1, 4], gamma=0.3),
        lambda o: torch.optim.lr_scheduler.MultiStepLR(o, [1, 4], gamma=0.3),
    ),
    "exponential": (lambda o: optim.lr_scheduler.ExponentialLR(o, 0.8), lambda o: torch.optim.lr_scheduler.ExponentialLR(o, 0.8)),
    "lambda": (
        lambda o: optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (1 + e)),
        lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (1 + e)),
    ),
    "cosine": (
        lambda o: optim.lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.01),
        lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.01),
    ),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedulers_match_torch(name):
    _run(lambda p: optim.SGD(p, lr=0.1, momentum=0.9), lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), steps=9, schedule=SCHEDULES[name])


def test_scheduler_state_round_trip_and_errors():
    params, _ = _twins()
    opt = optim.SGD(params, lr=1.0)
    sched = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(3):
        sched.step()
    assert opt.lr == 0.125
    state = sched.state_dict()
    other = optim.lr_scheduler.StepLR(optim.SGD(params, lr=1.0), step_size=1, gamma=0.5)
    other.load_state_dict(state)
    assert other.optimizer.lr == 0.125
    with pytest.raises(TypeError, match="optimizer"):
        optim.lr_scheduler.StepLR(nn.Linear(2, 2), step_size=1)
    with pytest.raises(ValueError, match="step_size"):
        optim.lr_scheduler.StepLR(opt, step_size=0)
    with pytest.raises(TypeError, match="model.parameters"):
        optim.RMSprop(nn.Linear(2, 2))


@pytest.mark.parametrize("make", [lambda p: optim.Adam(p, lr=0.05), lambda p: optim.SGD(p, lr=0.05, momentum=0.9), lambda p: optim.RMSprop(p, centered=True, momentum=0.5), lambda p: optim.AdamW(p, lr=0.05)])
def test_optimizer_state_survives_save_and_load(make, tmp_path):
    x = mg.tensor(np.random.default_rng(1).standard_normal((5, 3)))

    def steps(params, opt, n):
        for _ in range(n):
            opt.zero_grad()
            _loss(params, x, mg).backward()
            opt.step()

    straight, _ = _twins()
    opt = make(straight)
    steps(straight, opt, 6)
    resumed, _ = _twins()
    first = make(resumed)
    steps(resumed, first, 3)
    mg.save({"params": {str(i): p for i, p in enumerate(resumed)}, "optimizer": first.state_dict()}, tmp_path / "ckpt")
    back = mg.load(tmp_path / "ckpt")
    fresh, _ = _twins(seed=5)
    for i, p in enumerate(fresh):
        p.data = back["params"][str(i)].copy()
    second = make(fresh)
    second.load_state_dict(back["optimizer"])
    steps(fresh, second, 3)
    for a, b in zip(straight, fresh):
        np.testing.assert_allclose(a.data, b.data, rtol=1e-14)
    with pytest.raises(KeyError, match="unknown entries"):
        second.load_state_dict({"velocityy": {}})
