"""The optimizers and the learning-rate schedulers against PyTorch in float64, step by step."""

import inspect

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import nn, optim


@pytest.fixture(autouse=True)
def _torch_in_float64():
    """PyTorch keeps scalar optimizer state (step counts, NAdam's product of momenta) in its default
    dtype: float64 here, as minigrad does, or NAdam's float32 product would differ by 1e-9."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


def _twins(seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal(4)]
    return [mg.tensor(a, requires_grad=True) for a in arrays], [torch.tensor(a, requires_grad=True) for a in arrays]


def _loss(params, x, lib):
    w, b = params
    out = (x @ w + b).tanh() if lib is mg else torch.tanh(x @ w + b)
    return (out * out).sum() + (w * w * w).sum()


def _run(make_mine, make_theirs, steps=6, schedule=None, each=None):
    """Train both sides; after every step the parameters, the last rates and whatever `each(opt, topt)`
    checks must agree."""
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
        if each:
            each(opt, topt)
    return mine


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


def _both(name, **kwargs):
    """(ours, PyTorch's) makers of the scheduler `name` for an optimizer."""
    return tuple(lambda o, lib=lib: getattr(lib.optim.lr_scheduler, name)(o, **kwargs) for lib in (mg, torch))


def _sequence(parts, milestones):
    """(ours, PyTorch's) makers of a SequentialLR over the schedulers (name, kwargs) in `parts`."""
    return tuple(
        lambda o, lib=lib: lib.optim.lr_scheduler.SequentialLR(
            o, [getattr(lib.optim.lr_scheduler, name)(o, **kwargs) for name, kwargs in parts], milestones=milestones
        )
        for lib in (mg, torch)
    )


SCHEDULES = {
    "step": _both("StepLR", step_size=2, gamma=0.5),
    "multistep": _both("MultiStepLR", milestones=[1, 4], gamma=0.3),
    "exponential": _both("ExponentialLR", gamma=0.8),
    "lambda": _both("LambdaLR", lr_lambda=lambda e: 1 / (1 + e)),
    "cosine": _both("CosineAnnealingLR", T_max=4, eta_min=0.01),
    "linear": _both("LinearLR"),
    "linear-warm-up": _both("LinearLR", start_factor=0.25, total_iters=4),
    "linear-decay": _both("LinearLR", start_factor=1.0, end_factor=0.1, total_iters=3),
    "constant": _both("ConstantLR", factor=0.5, total_iters=3),
    "polynomial": _both("PolynomialLR", total_iters=6, power=2.0),
    "polynomial-defaults": _both("PolynomialLR"),
    "warm-restarts": _both("CosineAnnealingWarmRestarts", T_0=3),
    "warm-restarts-growing": _both("CosineAnnealingWarmRestarts", T_0=2, T_mult=2, eta_min=0.01),
    "one-cycle": _both("OneCycleLR", max_lr=0.5, total_steps=10),
    "one-cycle-fixed-momentum": _both("OneCycleLR", max_lr=0.5, total_steps=9, cycle_momentum=False),
    "one-cycle-three-phase-linear": _both(
        "OneCycleLR", max_lr=0.5, epochs=2, steps_per_epoch=5, pct_start=0.25, anneal_strategy="linear", three_phase=True,
        div_factor=10.0, final_div_factor=100.0, base_momentum=0.8, max_momentum=0.9,
    ),
    "sequential": _sequence([("LinearLR", {"start_factor": 0.1, "total_iters": 3}), ("CosineAnnealingLR", {"T_max": 4})], [3]),
    "sequential-three": _sequence(
        [("ConstantLR", {"factor": 0.5, "total_iters": 1}), ("ExponentialLR", {"gamma": 0.8}), ("StepLR", {"step_size": 2})], [2, 5]
    ),
    # OneCycleLR sets the initial rate the later parts start from: max_lr / div_factor
    "sequential-one-cycle": _sequence([("OneCycleLR", {"max_lr": 0.5, "total_steps": 4}), ("ConstantLR", {"factor": 0.5, "total_iters": 2})], [4]),
    # a part built to resume at epoch 2 still restarts at 0 on its milestone
    "sequential-restarts": _sequence([("ConstantLR", {"factor": 0.5, "total_iters": 2}), ("ExponentialLR", {"gamma": 0.8, "last_epoch": 2})], [3]),
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


# --------------------------------------------------------------------------- options and new optimizers
# (optimizer, its arguments, an option): with and without the option the steps match PyTorch's, and
# the option changes the trajectory, so that it took part
OPTIONS = [
    ("SGD", {"lr": 0.05, "momentum": 0.9}, {"dampening": 0.5}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}, {"nesterov": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "weight_decay": 0.1}, {"nesterov": True}),
    ("SGD", {"lr": 0.01, "momentum": 0.9}, {"maximize": True}),
    ("Adam", {"lr": 0.1, "weight_decay": 0.1}, {"decoupled_weight_decay": True}),
    ("Adam", {"lr": 0.1}, {"maximize": True}),
    ("AdamW", {"lr": 0.1, "amsgrad": True}, {"maximize": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}, {"maximize": True}),
    ("Adagrad", {}, {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1}, {"lr_decay": 0.5}),
    ("Adagrad", {"lr": 0.1}, {"initial_accumulator_value": 0.5}),
    ("Adagrad", {"lr": 0.1}, {"eps": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1}, {"weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1}, {"maximize": True}),
    ("Adamax", {}, {"lr": 0.1}),
    ("Adamax", {"lr": 0.1}, {"betas": (0.8, 0.9)}),
    ("Adamax", {"lr": 0.1}, {"eps": 0.1}),
    ("Adamax", {"lr": 0.1}, {"weight_decay": 0.1}),
    ("Adamax", {"lr": 0.1}, {"maximize": True}),
    ("NAdam", {}, {"lr": 0.1}),
    ("NAdam", {"lr": 0.1}, {"momentum_decay": 0.1}),
    ("NAdam", {"lr": 0.1}, {"betas": (0.8, 0.9), "eps": 1e-3}),
    ("NAdam", {"lr": 0.1, "weight_decay": 0.1}, {"decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.1}, {"maximize": True}),
    ("RAdam", {}, {"lr": 0.1}),
    ("RAdam", {"lr": 0.1}, {"betas": (0.8, 0.99), "eps": 1e-3}),
    ("RAdam", {"lr": 0.1, "weight_decay": 0.1}, {"decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.1}, {"maximize": True}),
]


@pytest.mark.parametrize("name, kwargs, option", OPTIONS, ids=[f"{n}-{o}" for n, _, o in OPTIONS])
def test_options_match_torch_and_change_the_steps(name, kwargs, option):
    finals = [  # 8 steps: RAdam's rectified steps start at the 6th
        _run(lambda p: getattr(optim, name)(p, **kw), lambda p: getattr(torch.optim, name)(p, **kw), steps=8)
        for kw in (kwargs, {**kwargs, **option})
    ]
    assert not np.allclose(finals[0][0].data, finals[1][0].data), f"{option} made no difference"


def test_momentum_survives_gradients_zeroed_in_place():
    def make(lib):
        return lambda p: lib.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.1)

    mine, theirs = _twins()
    opt, topt = make(mg)(mine), make(torch)(theirs)
    x = np.random.default_rng(1).standard_normal((5, 3))
    for _ in range(4):
        opt.zero_grad(set_to_none=False), topt.zero_grad(set_to_none=False)  # the first velocity is not the gradient itself
        _loss(mine, mg.tensor(x), mg).backward(), _loss(theirs, torch.tensor(x), torch).backward()
        opt.step(), topt.step()
    np.testing.assert_allclose(mine[0].data, theirs[0].detach().numpy(), rtol=1e-12)


def test_radam_takes_plain_momentum_steps_while_the_variance_is_untractable():
    (w, b), _ = _twins()
    start = w.data.copy()
    opt = optim.RAdam([w, b], lr=0.1)
    _loss([w, b], mg.tensor(np.ones((2, 3))), mg).backward()
    opt.step()
    np.testing.assert_allclose(w.data, start - 0.1 * w.grad.data, rtol=1e-14)  # m̂ = g on step 1, not Adam's g/|g|


# (optimizer, arguments that PyTorch refuses too, the error ours gives)
BAD_ARGUMENTS = [
    ("SGD", {"momentum": 0.0, "nesterov": True}, ValueError, r"SGD: nesterov=True needs momentum > 0 and dampening = 0, got momentum=0.0"),
    ("SGD", {"momentum": 0.9, "dampening": 0.1, "nesterov": True}, ValueError, r"SGD: nesterov=True .* dampening=0.1"),
    ("SGD", {"momentum": -0.5}, ValueError, r"SGD: momentum must be >= 0.0, got -0.5"),
    ("Adam", {"betas": (0.9, 1.0)}, ValueError, r"Adam: betas\[1\] must be in \[0.0, 1.0\), got 1.0"),
    ("NAdam", {"betas": 0.9}, TypeError, r"NAdam: betas must be a pair \(beta1, beta2\), got 0.9"),
    ("AdamW", {"weight_decay": "0.1"}, TypeError, r"AdamW: weight_decay must be a number, got str '0.1'"),
    ("Adamax", {"eps": -1e-8}, ValueError, r"Adamax: eps must be >= 0.0, got -1e-08"),
    ("RAdam", {"weight_decay": -0.1}, ValueError, r"RAdam: weight_decay must be >= 0.0, got -0.1"),
    ("Adagrad", {"lr_decay": -0.1}, ValueError, r"Adagrad: lr_decay must be >= 0.0, got -0.1"),
    ("Adagrad", {"initial_accumulator_value": -1.0}, ValueError, r"Adagrad: initial_accumulator_value must be >= 0.0, got -1.0"),
    ("NAdam", {"momentum_decay": -1.0}, ValueError, r"NAdam: momentum_decay must be >= 0.0, got -1.0"),
    ("RMSprop", {"alpha": -0.1}, ValueError, r"RMSprop: alpha must be >= 0.0, got -0.1"),
]


@pytest.mark.parametrize("name, kwargs, error, message", BAD_ARGUMENTS, ids=[f"{n}-{k}" for n, k, _, _ in BAD_ARGUMENTS])
def test_bad_optimizer_arguments_are_refused_as_pytorch_does(name, kwargs, error, message):
    mine, theirs = _twins()
    with pytest.raises(error, match=message):
        getattr(optim, name)(mine, **kwargs)
    with pytest.raises((ValueError, TypeError)):
        getattr(torch.optim, name)(theirs, **kwargs)


S = optim.lr_scheduler
NAMES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam"]
SCHEDULERS = ["StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "PolynomialLR", "ExponentialLR", "LambdaLR", "CosineAnnealingLR",
              "CosineAnnealingWarmRestarts", "OneCycleLR", "SequentialLR", "ReduceLROnPlateau"]


@pytest.mark.parametrize("mine, theirs", [(getattr(optim, n), getattr(torch.optim, n)) for n in NAMES]
                         + [(getattr(S, n), getattr(torch.optim.lr_scheduler, n)) for n in SCHEDULERS], ids=NAMES + SCHEDULERS)
def test_arguments_have_pytorchs_names_order_and_defaults(mine, theirs):
    ours, torchs = inspect.signature(mine).parameters, inspect.signature(theirs).parameters
    assert list(ours) == [name for name in torchs if name in ours], "a name PyTorch lacks, or another order"
    for name, parameter in ours.items():
        if (mine, name) != (optim.SGD, "lr"):  # minigrad's SGD keeps lr=0.01, PyTorch's is 1e-3 since 2.6
            assert parameter.default == torchs[name].default, name


@pytest.mark.parametrize(
    "make",
    [
        lambda p: optim.Adam(p, lr=0.05),
        lambda p: optim.SGD(p, lr=0.05, momentum=0.9),
        lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True),
        lambda p: optim.RMSprop(p, centered=True, momentum=0.5),
        lambda p: optim.AdamW(p, lr=0.05),
        lambda p: optim.Adagrad(p, lr=0.1, lr_decay=0.1),
        lambda p: optim.Adamax(p, lr=0.05),
        lambda p: optim.NAdam(p, lr=0.05),
        lambda p: optim.RAdam(p, lr=0.05),
    ],
    ids=["Adam", "SGD", "SGD-nesterov", "RMSprop", "AdamW", "Adagrad", "Adamax", "NAdam", "RAdam"],
)
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


# --------------------------------------------------------------------------- the new schedulers
@pytest.mark.parametrize("name, kwargs, attribute", [
    ("SGD", {"lr": 0.1, "momentum": 0.9}, "momentum"),
    ("RMSprop", {}, "momentum"),  # PyTorch turns momentum on too, from 0
    ("Adam", {}, "beta1"),
    ("NAdam", {}, "beta1"),
])
@pytest.mark.parametrize("three_phase", [False, True])
def test_one_cycle_cycles_momentum_or_beta1_as_pytorch(name, kwargs, attribute, three_phase):
    seen = []

    def same_momentum(opt, topt):
        group = topt.param_groups[0]
        seen.append(group["betas"][0] if attribute == "beta1" else group["momentum"])
        assert getattr(opt, attribute) == pytest.approx(seen[-1], rel=1e-12)

    schedule = _both("OneCycleLR", max_lr=0.05, total_steps=10, three_phase=three_phase)  # phases end on steps 2 (4) and 9
    _run(lambda p: getattr(optim, name)(p, **kwargs), lambda p: getattr(torch.optim, name)(p, **kwargs), 9, schedule, same_momentum)
    assert min(seen) == pytest.approx(0.85) and max(seen) == pytest.approx(0.95)


def test_schedules_start_from_the_rate_the_optimizer_has_when_the_first_is_built():
    opt, topt = optim.SGD(_twins()[0], lr=0.1), torch.optim.SGD(_twins()[1], lr=0.1)
    opt.lr = topt.param_groups[0]["lr"] = 0.05
    first, tfirst = S.ConstantLR(opt, factor=0.5), torch.optim.lr_scheduler.ConstantLR(topt, factor=0.5)
    second, tsecond = S.StepLR(opt, step_size=1), torch.optim.lr_scheduler.StepLR(topt, step_size=1)  # from 0.05, not 0.025
    assert (first.base_lr, second.base_lr) == (tfirst.base_lrs[0], tsecond.base_lrs[0]) == (0.05, 0.05)
    optim.SGD(_twins()[0], lr=0.1).load_state_dict(opt.state_dict())  # an optimizer without a scheduler takes initial_lr


def test_warm_restarts_take_fractional_epochs_as_pytorch():
    opt, topt = optim.SGD(_twins()[0], lr=0.1), torch.optim.SGD(_twins()[1], lr=0.1)
    sched, tsched = S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.01), torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(topt, T_0=2, T_mult=2, eta_min=0.01)
    lrs = []
    for epoch in range(7):
        for batch in range(4):
            sched.step(epoch + batch / 4), tsched.step(epoch + batch / 4)
            lrs.append(tsched.get_last_lr()[0])
            assert sched.get_last_lr()[0] == pytest.approx(lrs[-1], rel=1e-12)
    assert sum(b > a for a, b in zip(lrs, lrs[1:])) == 2, "restarts after 2 and 2 + 4 epochs"


METRICS = [1.0, 0.9, 0.9, 0.95, 0.91, 0.92, 0.5] + [0.6 + 0.01 * k for k in range(13)]  # better, worse, plateaus, slowly worse


@pytest.mark.parametrize("kwargs", [
    {},
    {"patience": 2},
    {"patience": 1, "cooldown": 2, "factor": 0.5},
    {"mode": "max", "patience": 1, "threshold": 0.05, "threshold_mode": "abs"},
    {"mode": "max", "patience": 0, "threshold": 0.02},
    {"patience": 0, "threshold": 0.2, "threshold_mode": "abs"},
    {"patience": 0, "factor": 0.5, "min_lr": 0.3},
    {"patience": 0, "factor": 0.8, "eps": 0.15},  # 1 → 0.8 → 0.64, then the change is under eps
])
def test_reduce_on_plateau_matches_torch(kwargs):
    opt, topt = optim.SGD(_twins()[0], lr=1.0), torch.optim.SGD(_twins()[1], lr=1.0)
    sched, tsched = S.ReduceLROnPlateau(opt, **kwargs), torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kwargs)
    for metric in METRICS:
        sched.step(mg.tensor(metric)), tsched.step(metric)
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12)
        assert (sched.best, sched.num_bad_epochs, sched.cooldown_counter) == (tsched.best, tsched.num_bad_epochs, tsched.cooldown_counter)
        assert type(sched.best) is float, "the metric is kept as a number, not as the Tensor given"
    assert opt.lr < 1.0, "the rate was reduced"


@pytest.mark.parametrize("name", sorted(SCHEDULES) + ["plateau"])
def test_scheduler_state_survives_save_and_load(name, tmp_path):
    make = SCHEDULES[name][0] if name in SCHEDULES else lambda o: S.ReduceLROnPlateau(o, patience=1)

    def advance(sched, epochs):
        for epoch in epochs:
            sched.step(METRICS[epoch]) if name == "plateau" else sched.step()
            yield sched.optimizer.lr, sched.optimizer.momentum

    def sgd():
        return optim.SGD(_twins()[0], lr=0.1, momentum=0.9)

    straight = list(advance(make(sgd()), range(8)))
    first = make(sgd())
    head = list(advance(first, range(4)))
    mg.save({"optimizer": first.optimizer.state_dict(), "scheduler": first.state_dict()}, tmp_path / "ckpt")
    back = mg.load(tmp_path / "ckpt")
    second = make(sgd())
    second.optimizer.load_state_dict(back["optimizer"])
    second.load_state_dict(back["scheduler"])
    np.testing.assert_allclose(head + list(advance(second, range(4, 8))), straight, rtol=1e-15)
    assert len({lr for lr, _ in straight}) > 1


def _step_past_the_end(o):
    sched = S.OneCycleLR(o, max_lr=0.1, total_steps=2)
    for _ in range(3):
        sched.step()


BAD_SCHEDULES = [
    (lambda o: S.LinearLR(o, start_factor=0.0), ValueError, r"LinearLR: start_factor must be in \(0, 1\], got 0.0"),
    (lambda o: S.LinearLR(o, end_factor=1.5), ValueError, r"LinearLR: end_factor must be in \[0, 1\], got 1.5"),
    (lambda o: S.LinearLR(o, total_iters=0), ValueError, r"LinearLR: total_iters must be a positive integer, got 0"),
    (lambda o: S.ConstantLR(o, factor=2.0), ValueError, r"ConstantLR: factor must be in \[0, 1\], got 2.0"),
    (lambda o: S.PolynomialLR(o, total_iters=2.5), ValueError, r"PolynomialLR: total_iters must be a positive integer, got 2.5"),
    (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=0), ValueError, r"CosineAnnealingWarmRestarts: T_0 must be a positive integer, got 0"),
    (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), ValueError, r"CosineAnnealingWarmRestarts: T_mult .* got 0"),
    (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"), TypeError, r"CosineAnnealingWarmRestarts: eta_min must be a number, got str"),
    (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2).step(-1), ValueError, r"CosineAnnealingWarmRestarts: epoch must be >= 0, got -1"),
    (lambda o: S.OneCycleLR(o, max_lr=0.1), ValueError, r"OneCycleLR: give total_steps, or epochs and steps_per_epoch"),
    (lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=0), ValueError, r"OneCycleLR: total_steps must be a positive integer, got 0"),
    (lambda o: S.OneCycleLR(o, max_lr=0.1, epochs=2, steps_per_epoch=0), ValueError, r"OneCycleLR: steps_per_epoch .* got 0"),
    (lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=9, pct_start=1.5), ValueError, r"OneCycleLR: pct_start must be in \[0, 1\], got 1.5"),
    (lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=9, anneal_strategy="exp"), ValueError, r"OneCycleLR: anneal_strategy .* got 'exp'"),
    (lambda o: S.OneCycleLR(optim.Adagrad(o.params), max_lr=0.1, total_steps=9), ValueError, r"OneCycleLR: cycle_momentum=True needs .* got Adagrad"),
    (_step_past_the_end, ValueError, r"OneCycleLR: stepped 3 times, more than total_steps=2"),
    (lambda o: S.SequentialLR(o, [], milestones=[]), ValueError, r"SequentialLR: expected at least one scheduler"),
    (lambda o: S.SequentialLR(o, [S.ConstantLR(o), S.ExponentialLR(o, 0.9)], milestones=[]), ValueError, r"SequentialLR: expected one milestone fewer than schedulers, got 2 schedulers and milestones \[\]"),
    (lambda o: S.SequentialLR(o, [S.ReduceLROnPlateau(o)], milestones=[]), TypeError, r"SequentialLR: schedulers\[0\] is a ReduceLROnPlateau"),
    (lambda o: S.SequentialLR(o, [S.ConstantLR(optim.SGD(o.params))], milestones=[]), ValueError, r"SequentialLR: schedulers\[0\] \(ConstantLR\) belongs to another optimizer"),
    (lambda o: S.ReduceLROnPlateau(o, factor=1.0), ValueError, r"ReduceLROnPlateau: factor must be in \[0, 1\) to reduce the rate, got 1.0"),
    (lambda o: S.ReduceLROnPlateau(o, mode="avg"), ValueError, r"ReduceLROnPlateau: mode must be 'min' or 'max', got 'avg'"),
    (lambda o: S.ReduceLROnPlateau(o, threshold_mode="pct"), ValueError, r"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got 'pct'"),
    (lambda o: S.ReduceLROnPlateau(o, min_lr=[0.1]), TypeError, r"ReduceLROnPlateau: min_lr must be a number"),
    (lambda o: S.ReduceLROnPlateau(nn.Linear(2, 2)), TypeError, r"ReduceLROnPlateau: expected an optimizer"),
    (lambda o: S.LinearLR(o).load_state_dict({"last_epochh": 1}), KeyError, r"LinearLR.load_state_dict: unknown entries \['last_epochh'\]"),
]


@pytest.mark.parametrize("make, error, message", BAD_SCHEDULES, ids=[m.replace("\\", "")[:60] for _, _, m in BAD_SCHEDULES])
def test_bad_scheduler_arguments_say_which_and_why(make, error, message):
    with pytest.raises(error, match=message):
        make(optim.SGD(_twins()[0], lr=0.1))
