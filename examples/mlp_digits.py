"""An MLP classifies the UCI handwritten digits (8x8 images), trained with Adam on minibatches.

    python examples/mlp_digits.py            # 500 steps, about ten seconds; test accuracy ~96%
    python examples/mlp_digits.py --steps 50

The same program in PyTorch differs by its imports and Linear's weight layout (minigrad's is
(in, out)); tests/test_examples.py runs both from the same weights and compares them step by step.
"""

import argparse

import numpy as np

import minigrad as mg
from minigrad import nn, optim
from minigrad.data import load_digits


def data(n_test=297):
    """(x_train, y_train, x_test, y_test): pixels scaled to [0, 1], flattened to 64 features."""
    images, labels = load_digits()
    x = images.reshape(len(images), 64) / 16.0
    order = np.random.default_rng(0).permutation(len(x))  # a fixed split
    test, train = order[:n_test], order[n_test:]
    return x[train], labels[train], x[test], labels[test]


def make_model(seed=0):
    return nn.MLP([64, 64, 10], activation="relu", rng=np.random.default_rng(seed))


def batches(n, batch_size, steps, seed=0):
    """The index arrays of `steps` minibatches drawn without replacement within each epoch."""
    rng = np.random.default_rng(seed)
    order, out = np.array([], dtype=np.int64), []
    for _ in range(steps):
        if len(order) < batch_size:
            order = np.concatenate([order, rng.permutation(n)])
        out.append(order[:batch_size])
        order = order[batch_size:]
    return out


def accuracy(model, x, y):
    with mg.no_grad():
        return float((model(mg.tensor(x)).data.argmax(axis=1) == y).mean())


def train(model, x, y, steps, batch_size=64, lr=1e-2, seed=0, log_every=0):
    optimizer = optim.Adam(model.parameters(), lr=lr)
    losses = []
    for step, index in enumerate(batches(len(x), batch_size, steps, seed)):
        loss = nn.cross_entropy(model(mg.tensor(x[index])), y[index])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if log_every and (step % log_every == 0 or step == steps - 1):
            print(f"step {step:4d}  loss {loss.item():.4f}")
    return losses


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args(argv)
    x_train, y_train, x_test, y_test = data()
    model = make_model()
    print(f"{model.num_parameters()} parameters; {len(x_train)} training and {len(x_test)} test images")
    train(model, x_train, y_train, args.steps, log_every=max(1, args.steps // 10))
    print(f"train accuracy {accuracy(model, x_train, y_train):.3f}, test accuracy {accuracy(model, x_test, y_test):.3f}")


if __name__ == "__main__":
    main()
