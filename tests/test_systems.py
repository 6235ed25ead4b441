"""Systems of graphs (chapters 4 and 5): MAML, GAN updates, differentiable communication, ODE solvers.

Each reference implementation is checked against an independent oracle: PyTorch running the same
algorithm in float64 (the gradients of a whole training step), or a closed form.
"""

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad.autograd import count_vjps
from minigrad.examples import communication, gan, maml
from minigrad.memory import saved_bytes
from minigrad.ode import euler_solve, rk4_solve

TOL = dict(rtol=1e-9, atol=1e-11)


def _torch_mlp(module):
    """A torch function computing the same MLP (tanh between layers) from the module's weights."""
    weights = [torch.tensor(p.data, requires_grad=True) for p in module.parameters()]

    def forward(x):
        for i in range(0, len(weights), 2):
            x = x @ weights[i] + weights[i + 1]
            if i + 2 < len(weights):
                x = torch.tanh(x)
        return x

    return forward, weights


def _bce_with_logits(logits, label):
    return torch.nn.functional.binary_cross_entropy_with_logits(logits, torch.full_like(logits, label))


def _snapshot(module):
    return [p.data.copy() for p in module.parameters()]


# --------------------------------------------------------------------------- ODE solvers
def test_euler_matches_the_closed_form_of_exponential_growth_and_its_gradient():
    # dy/dt = a y: Euler gives y_k = y0 (1 + a h)^k, and d y_n / d a = y0 n h (1 + a h)^(n - 1).
    a, y0, n, t1 = mg.tensor(-0.7, requires_grad=True), 2.0, 50, 3.0
    h = t1 / n
    trajectory = euler_solve(lambda t, y: a * y, mg.tensor(y0), 0.0, t1, n)
    assert trajectory.shape == (n + 1,)
    np.testing.assert_allclose(trajectory.data, y0 * (1 - 0.7 * h) ** np.arange(n + 1), **TOL)
    trajectory[-1].backward()
    np.testing.assert_allclose(a.grad.item(), y0 * n * h * (1 - 0.7 * h) ** (n - 1), **TOL)


def test_euler_evaluates_the_slope_at_the_start_of_each_step():
    # dy/dt = t from t0 = 1: y_n = y0 + h Σ_k (t0 + k h); an off-by-one in the times changes it.
    t0, t1, n = 1.0, 2.0, 8
    h = (t1 - t0) / n
    trajectory = euler_solve(lambda t, y: y * 0.0 + t, mg.tensor([0.5, -1.0]), t0, t1, n)
    assert trajectory.shape == (n + 1, 2)
    expected = 0.5 + h * np.cumsum([0.0] + [t0 + k * h for k in range(n)])
    np.testing.assert_allclose(trajectory.data[:, 0], expected, **TOL)


def test_rk4_is_fourth_order_and_exact_for_cubic_slopes():
    # y' = 4 t³ integrates exactly (RK4 is Simpson's rule when f ignores y): y(2) - y(0) = 16.
    exact_cubic = rk4_solve(lambda t, y: y * 0.0 + 4.0 * t**3, mg.tensor(1.0), 0.0, 2.0, 3)
    np.testing.assert_allclose(exact_cubic.data[-1], 17.0, **TOL)
    errors = [abs(rk4_solve(lambda t, y: y, mg.tensor(1.0), 0.0, 1.0, n).data[-1] - np.e) for n in (8, 16)]
    assert 14 < errors[0] / errors[1] < 18, f"halving h should divide the error by ~16, got {errors}"


@pytest.mark.parametrize("solver", [euler_solve, rk4_solve])
def test_gradient_through_the_solver_matches_torch(solver):
    # A nonlinear system with a parameter matrix: y' = tanh(W y) - 0.1 y.
    rng = np.random.default_rng(3)
    w0, y0 = rng.standard_normal((3, 3)), rng.standard_normal(3)
    w, y = mg.tensor(w0, requires_grad=True), mg.tensor(y0, requires_grad=True)
    (solver(lambda t, v: (w @ v).tanh() - 0.1 * v, y, 0.0, 2.0, 40) ** 2).sum().backward()

    wt, yt = torch.tensor(w0, requires_grad=True), torch.tensor(y0, requires_grad=True)
    h, v, states = 2.0 / 40, yt, [yt]
    f = lambda v: torch.tanh(wt @ v) - 0.1 * v  # noqa: E731
    for _ in range(40):
        if solver is euler_solve:
            v = v + h * f(v)
        else:
            k1 = f(v)
            k2 = f(v + h / 2 * k1)
            k3 = f(v + h / 2 * k2)
            k4 = f(v + h * k3)
            v = v + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        states.append(v)
    (torch.stack(states) ** 2).sum().backward()
    np.testing.assert_allclose(w.grad.data, wt.grad.numpy(), **TOL)
    np.testing.assert_allclose(y.grad.data, yt.grad.numpy(), **TOL)


def test_saved_activations_grow_linearly_with_the_number_of_steps():
    w = mg.tensor(np.eye(4) * 0.1, requires_grad=True)
    held = {n: saved_bytes(euler_solve(lambda t, v: (w @ v).tanh(), mg.ones(4), 0.0, 1.0, n)) for n in (100, 200, 400)}
    assert held[200] == pytest.approx(2 * held[100], rel=0.05), held
    assert held[400] == pytest.approx(2 * held[200], rel=0.05), held


@pytest.mark.parametrize("n_steps", [0, -3, 2.5])
def test_solver_rejects_a_bad_number_of_steps(n_steps):
    with pytest.raises(ValueError, match="n_steps"):
        euler_solve(lambda t, y: y, mg.tensor(1.0), 0.0, 1.0, n_steps)


# --------------------------------------------------------------------------- MAML
def _linear_tasks(rng, n_tasks=3, d=3):
    tasks = []
    for _ in range(n_tasks):
        xs, xq = rng.standard_normal((6, d)), rng.standard_normal((5, d))
        w_task = rng.standard_normal((d, 1))
        tasks.append(maml.Task(mg.Tensor(xs), mg.Tensor(xs @ w_task), mg.Tensor(xq), mg.Tensor(xq @ w_task)))
    return tasks


@pytest.mark.parametrize("first_order", [False, True])
def test_maml_step_on_linear_regression_matches_the_closed_form(first_order):
    # L_S(w) = mean((X w - y)²): one step w' = w - α ∇L_S(w); the meta-gradient is
    # (I - α ∇²L_S) ∇L_Q(w'), or just ∇L_Q(w') for first-order MAML.
    rng, alpha = np.random.default_rng(0), 0.1
    tasks, w0 = _linear_tasks(rng), rng.standard_normal((3, 1))
    w = mg.Tensor(w0.copy(), requires_grad=True)
    loss = maml.maml_step([w], lambda p, x: x @ p[0], tasks, mg.optim.SGD([w], lr=1.0), alpha, first_order=first_order)

    meta_grad, meta_loss = np.zeros_like(w0), 0.0
    for task in tasks:
        xs, ys, xq, yq = (t.data for t in task)
        hessian = 2 * xs.T @ xs / len(xs)
        adapted = w0 - alpha * 2 * xs.T @ (xs @ w0 - ys) / len(xs)
        query_grad = 2 * xq.T @ (xq @ adapted - yq) / len(xq)
        meta_grad += (query_grad if first_order else (np.eye(3) - alpha * hessian) @ query_grad) / len(tasks)
        meta_loss += np.mean((xq @ adapted - yq) ** 2) / len(tasks)
    np.testing.assert_allclose(loss, meta_loss, **TOL)
    np.testing.assert_allclose(w.grad.data, meta_grad, **TOL)
    np.testing.assert_allclose(w.data, w0 - meta_grad, **TOL)


@pytest.mark.parametrize("first_order", [False, True])
def test_maml_step_with_two_inner_steps_matches_torch(first_order):
    rng = np.random.default_rng(1)
    params = maml.init_mlp([1, 8, 8, 1], rng)
    start = [p.data.copy() for p in params]
    tasks = [maml.sample_sinusoid_task(rng, 5, 7)[0] for _ in range(2)]
    maml.maml_step(params, maml.mlp, tasks, mg.optim.SGD(params, lr=0.5), 0.02, inner_steps=2, first_order=first_order)

    theta = [torch.tensor(a, requires_grad=True) for a in start]

    def forward(ps, x):
        for i in range(0, len(ps), 2):
            x = x @ ps[i] + ps[i + 1]
            x = torch.tanh(x) if i + 2 < len(ps) else x
        return x

    meta_loss = 0.0
    for task in tasks:
        xs, ys, xq, yq = (torch.tensor(t.data) for t in task)
        adapted = theta
        for _ in range(2):
            grads = torch.autograd.grad(((forward(adapted, xs) - ys) ** 2).mean(), adapted, create_graph=not first_order)
            adapted = [p - 0.02 * g for p, g in zip(adapted, grads)]
        meta_loss = meta_loss + ((forward(adapted, xq) - yq) ** 2).mean() / len(tasks)
    meta_grads = torch.autograd.grad(meta_loss, theta)
    for p, a, g in zip(params, start, meta_grads):
        np.testing.assert_allclose(p.grad.data, g.numpy(), **TOL)
        np.testing.assert_allclose(p.data, a - 0.5 * g.numpy(), **TOL)


def test_sinusoid_tasks_follow_finn_et_al():
    rng = np.random.default_rng(2)
    task, (amplitude, phase) = maml.sample_sinusoid_task(rng, n_support=10, n_query=4)
    assert [t.shape for t in task] == [(10, 1), (10, 1), (4, 1), (4, 1)]
    assert 0.1 <= amplitude <= 5.0 and 0.0 <= phase <= np.pi
    assert np.all(np.abs(task.x_support.data) <= 5.0)
    np.testing.assert_allclose(task.y_query.data, amplitude * np.sin(task.x_query.data - phase))


# --------------------------------------------------------------------------- GAN
def _gan(rng, generator_sizes=(2, 6, 1)):
    return mg.nn.MLP(list(generator_sizes), rng=rng), mg.nn.MLP([1, 5, 1], rng=rng)


def test_generator_step_updates_only_the_generator_through_the_frozen_discriminator():
    rng = np.random.default_rng(4)
    generator, discriminator = _gan(rng)
    g_start, d_start = _snapshot(generator), _snapshot(discriminator)
    z = rng.standard_normal((16, 2))
    loss = gan.generator_step(generator, discriminator, mg.optim.SGD(generator.parameters(), lr=0.1), mg.Tensor(z))

    g_torch, g_weights = _torch_mlp(_rebuild(g_start, [2, 6, 1]))
    d_torch, _ = _torch_mlp(_rebuild(d_start, [1, 5, 1]))
    torch_loss = _bce_with_logits(d_torch(g_torch(torch.tensor(z))), 1.0)
    torch_loss.backward()
    np.testing.assert_allclose(loss, torch_loss.item(), **TOL)
    for p, start, w in zip(generator.parameters(), g_start, g_weights):
        np.testing.assert_allclose(p.data, start - 0.1 * w.grad.numpy(), **TOL)
    for p, start in zip(discriminator.parameters(), d_start):
        assert p.grad is None, "the frozen discriminator collected a gradient"
        assert p.requires_grad, "the discriminator must be trainable again after the generator step"
        np.testing.assert_array_equal(p.data, start)


def test_discriminator_step_updates_only_the_discriminator():
    rng = np.random.default_rng(5)
    generator, discriminator = _gan(rng)
    g_start, d_start = _snapshot(generator), _snapshot(discriminator)
    real, z = rng.standard_normal((12, 1)) + 2.0, rng.standard_normal((10, 2))
    loss = gan.discriminator_step(
        generator, discriminator, mg.optim.SGD(discriminator.parameters(), lr=0.1), mg.Tensor(real), mg.Tensor(z)
    )

    g_torch, _ = _torch_mlp(_rebuild(g_start, [2, 6, 1]))
    d_torch, d_weights = _torch_mlp(_rebuild(d_start, [1, 5, 1]))
    fake = g_torch(torch.tensor(z)).detach()
    torch_loss = _bce_with_logits(d_torch(torch.tensor(real)), 1.0) + _bce_with_logits(d_torch(fake), 0.0)
    torch_loss.backward()
    np.testing.assert_allclose(loss, torch_loss.item(), **TOL)
    for p, start, w in zip(discriminator.parameters(), d_start, d_weights):
        np.testing.assert_allclose(p.data, start - 0.1 * w.grad.numpy(), **TOL)
    for p, start in zip(generator.parameters(), g_start):
        assert p.grad is None, "the generator collected a gradient in the discriminator step"
        np.testing.assert_array_equal(p.data, start)


def test_discriminator_step_does_no_backward_work_in_the_generator():
    counts = []
    for sizes in [(2, 6, 1), (2, 6, 6, 6, 6, 1)]:
        rng = np.random.default_rng(6)
        generator, discriminator = _gan(rng, sizes)
        optimizer = mg.optim.SGD(discriminator.parameters(), lr=0.1)
        with count_vjps() as counter:
            gan.discriminator_step(generator, discriminator, optimizer, mg.ones(4, 1), mg.ones(4, 2))
        counts.append(counter.vjps)
    assert counts[0] == counts[1], f"VJPs with a shallow and a deep generator: {counts}"


def _rebuild(arrays, sizes):
    module = mg.nn.MLP(sizes)
    for p, a in zip(module.parameters(), arrays):
        p.data = a.copy()
    return module


# --------------------------------------------------------------------------- communication
@pytest.mark.parametrize("with_noise", [True, False])
def test_the_listeners_loss_trains_the_speaker(with_noise):
    rng = np.random.default_rng(7)
    speaker = mg.nn.Sequential(mg.nn.MLP([4, 5, 3], rng=rng), mg.nn.Tanh())
    listener = mg.nn.MLP([3, 5, 4], rng=rng)
    targets = rng.integers(0, 4, 9)
    observations, noise = np.eye(4)[targets], rng.standard_normal((9, 3)) * 0.3
    loss = communication.communication_loss(speaker, listener, observations, targets, noise if with_noise else None)
    loss.backward()

    s_torch, s_weights = _torch_mlp(speaker.layers[0])
    l_torch, l_weights = _torch_mlp(listener)
    message = torch.tanh(s_torch(torch.tensor(observations)))
    received = message + torch.tensor(noise) if with_noise else message
    torch_loss = torch.nn.functional.cross_entropy(l_torch(received), torch.tensor(targets))
    torch_loss.backward()
    np.testing.assert_allclose(loss.item(), torch_loss.item(), **TOL)
    for p, w in zip(speaker.parameters() + listener.parameters(), s_weights + l_weights):
        np.testing.assert_allclose(p.grad.data, w.grad.numpy(), **TOL)
