"""A small convolutional network on the 8x8 digits: two 3x3 convolutions with max pooling, then a
linear classifier, trained with Adam.

    python examples/cnn_digits.py            # 300 steps, a few seconds of CPU; test accuracy ~95%
    python examples/cnn_digits.py --steps 30

Conv2d's weight has minigrad's layout (in, out, kH, kW); `nn.utils.torch_state_dict(model)` gives
PyTorch's, and tests/test_examples.py trains both from the same weights.
"""

import argparse

import numpy as np

import minigrad as mg
from minigrad import nn, optim
from minigrad.data import load_digits

from mlp_digits import accuracy, batches  # noqa: E402  (examples/ is the script's folder)


def data(n_test=297):
    images, labels = load_digits()
    x = images[:, None, :, :] / 16.0  # (N, 1 channel, 8, 8)
    order = np.random.default_rng(0).permutation(len(x))
    test, train = order[:n_test], order[n_test:]
    return x[train], labels[train], x[test], labels[test]


def make_model(seed=0):
    rng = np.random.default_rng(seed)
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1, rng=rng),  # (N, 8, 8, 8)
        nn.ReLU(),
        nn.MaxPool2d(2),  # (N, 8, 4, 4)
        nn.Conv2d(8, 16, 3, padding=1, rng=rng),  # (N, 16, 4, 4)
        nn.ReLU(),
        nn.MaxPool2d(2),  # (N, 16, 2, 2)
        nn.Flatten(),
        nn.Linear(64, 10, rng=rng),
    )


def train(model, x, y, steps, batch_size=32, lr=3e-3, seed=0, log_every=0):
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
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args(argv)
    x_train, y_train, x_test, y_test = data()
    model = make_model()
    print(f"{model.num_parameters()} parameters")
    train(model, x_train, y_train, args.steps, log_every=max(1, args.steps // 10))
    print(f"test accuracy {accuracy(model, x_test, y_test):.3f}")


if __name__ == "__main__":
    main()
