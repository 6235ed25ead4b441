"""Softmax regression on the digits with no nn and no optim: the weights are plain tensors, and the
update is the idiom every PyTorch tutorial starts with,

    with mg.no_grad():
        w -= lr * w.grad
    w.grad = None

`no_grad` keeps the update itself out of the graph; `-=` changes the leaf in place (the same
tensor object, so nothing else has to be told about it).

    python examples/manual_sgd.py            # 300 full-batch steps, a few seconds; test accuracy ~95%
"""

import argparse

import numpy as np

import minigrad as mg

from mlp_digits import data  # noqa: E402  (examples/ is the script's folder)


def make_parameters(seed=0):
    rng = np.random.default_rng(seed)
    w = mg.tensor(rng.standard_normal((64, 10)) * 0.01, requires_grad=True)
    b = mg.tensor(np.zeros(10), requires_grad=True)
    return w, b


def loss_fn(w, b, x, y):
    logits = mg.tensor(x) @ w + b
    log_probs = mg.log_softmax(logits, axis=1)
    return -log_probs[np.arange(len(y)), y].mean()


def train(w, b, x, y, steps, lr=0.5, log_every=0):
    losses = []
    for step in range(steps):
        loss = loss_fn(w, b, x, y)
        loss.backward()
        with mg.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        w.grad = None
        b.grad = None
        losses.append(loss.item())
        if log_every and (step % log_every == 0 or step == steps - 1):
            print(f"step {step:4d}  loss {loss.item():.4f}")
    return losses


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args(argv)
    x_train, y_train, x_test, y_test = data()
    w, b = make_parameters()
    train(w, b, x_train, y_train, args.steps, log_every=max(1, args.steps // 10))
    accuracy = ((x_test @ w.data + b.data).argmax(axis=1) == y_test).mean()
    print(f"test accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
