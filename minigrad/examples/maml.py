"""MAML (Finn, Abbeel & Levine 2017): learn an initialisation that adapts to a new task in one step.

For a task with support set S and query set Q, one inner step of gradient descent adapts the
meta-parameters θ to θ' = θ - α ∇_θ L_S(θ); the meta-objective is the query loss *after*
adaptation, L_Q(θ'). Its gradient goes back through the inner step,

    ∇_θ L_Q(θ') = (I - α ∇²_θ L_S(θ)) ∇_θ' L_Q(θ'),

so it contains a Hessian-vector product: the inner gradient must be computed with
`create_graph=True`. First-order MAML drops the Hessian term by treating the inner gradient as
a constant, which is cheaper and often nearly as good.

The model is functional, `forward(params, x)`, because the adapted parameters θ' are ordinary
tensors computed from θ, not the leaves a `Module` owns.
"""

from collections import namedtuple

import numpy as np

from ..autograd import gradients
from ..nn.losses import mse_loss
from ..tensor import Tensor

Task = namedtuple("Task", "x_support y_support x_query y_query")
Task.__doc__ = "A few-shot regression task: adapt on the support set, evaluate on the query set."


def sinusoid(amplitude, phase, x):
    """The task family of Finn et al. (2017): y = A sin(x - φ)."""
    return amplitude * np.sin(x - phase)


def sample_sinusoid_task(rng, n_support=10, n_query=10):
    """A random sinusoid (A ∈ [0.1, 5], φ ∈ [0, π], x ∈ [-5, 5]); returns (task, (A, φ))."""
    amplitude, phase = rng.uniform(0.1, 5.0), rng.uniform(0.0, np.pi)
    x = rng.uniform(-5.0, 5.0, (n_support + n_query, 1))
    y = sinusoid(amplitude, phase, x)
    task = Task(Tensor(x[:n_support]), Tensor(y[:n_support]), Tensor(x[n_support:]), Tensor(y[n_support:]))
    return task, (amplitude, phase)


def init_mlp(sizes, rng):
    """Parameters [W1, b1, W2, b2, ...] of an MLP with the given layer sizes.

    Weights are Gaussian with variance 2 / fan-in, biases zero: wide enough initial features
    that one inner step of a few-shot task can reshape the function.
    """
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        params.append(Tensor(rng.normal(0.0, np.sqrt(2.0 / n_in), (n_in, n_out)), requires_grad=True))
        params.append(Tensor(np.zeros(n_out), requires_grad=True))
    return params


def mlp(params, x):
    """The functional MLP: tanh between layers, a linear last layer.

    Finn et al. used ReLU; tanh's curvature makes the second-order term of the meta-gradient
    matter more, and in our short training runs it meta-learns several times faster.
    """
    for i in range(0, len(params), 2):
        x = x @ params[i] + params[i + 1]
        if i + 2 < len(params):
            x = x.tanh()
    return x


def adapt(params, forward, x, y, inner_lr, inner_steps=1, first_order=False):
    """θ' after `inner_steps` steps of SGD on the MSE of `forward(θ, x)` against `y`.

    The steps stay in the graph: θ' is a differentiable function of θ. With `first_order`, each
    inner gradient is a constant (no `create_graph`), so θ' depends on θ only through the identity.
    The graphs are retained because later steps and the outer loss reach θ through earlier steps.
    """
    adapted = list(params)
    for _ in range(inner_steps):
        loss = mse_loss(forward(adapted, x), y)
        grads = gradients(loss, adapted, retain_graph=True, create_graph=not first_order)
        adapted = [p - inner_lr * g for p, g in zip(adapted, grads)]
    return adapted


def maml_step(params, forward, tasks, optimizer, inner_lr, inner_steps=1, first_order=False):
    """One meta-update of `params` (θ) by `optimizer`; returns the meta-loss as a float.

    For every task: adapt θ on its support set with `inner_steps` steps of SGD (learning rate
    `inner_lr`, MSE loss), then take the MSE of the adapted model on its query set. The meta-loss
    is the mean over tasks; its gradient flows back through the inner steps into θ, and only the
    meta-gradient lands in θ's `.grad` before `optimizer.step()`.
    """
    optimizer.zero_grad()
    query_losses = []
    for task in tasks:
        adapted = adapt(params, forward, task.x_support, task.y_support, inner_lr, inner_steps, first_order)
        query_losses.append(mse_loss(forward(adapted, task.x_query), task.y_query))
    meta_loss = sum(query_losses[1:], query_losses[0]) / len(query_losses)
    meta_loss.backward()
    optimizer.step()
    return meta_loss.item()
