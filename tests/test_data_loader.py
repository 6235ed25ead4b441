"""minigrad.data's TensorDataset and DataLoader against torch.utils.data's, and PyTorch's
Quickstart training loop ported onto them (the digits for FashionMNIST)."""

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import nn, optim
from minigrad.data import DataLoader, TensorDataset, load_digits

X = np.arange(22.0).reshape(11, 2)
Y = np.arange(11) % 3


def _torch_batches(batch_size, drop_last=False):
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.from_numpy(X), torch.from_numpy(Y)), batch_size=batch_size, drop_last=drop_last)
    return [(x.numpy(), y.numpy()) for x, y in loader]


@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (4, False), (4, True), (11, False), (20, False), (20, True)])
def test_batches_in_order_are_torchs(batch_size, drop_last):
    loader = DataLoader(TensorDataset(X, Y), batch_size=batch_size, drop_last=drop_last)
    ours = [(x.data, y.data) for x, y in loader]
    theirs = _torch_batches(batch_size, drop_last)
    assert len(ours) == len(theirs) == len(loader)
    for (x, y), (tx, ty) in zip(ours, theirs):
        np.testing.assert_array_equal(x, tx)
        np.testing.assert_array_equal(y, ty)
        assert x.dtype == tx.dtype and y.dtype == ty.dtype


def test_shuffled_epochs_hold_every_example_once_in_a_new_order():
    loader = DataLoader(TensorDataset(X, Y), batch_size=4, shuffle=True, rng=np.random.default_rng(0))
    epochs = [np.concatenate([x.data[:, 0] // 2 for x, _ in loader]).astype(int) for _ in range(3)]
    for order in epochs:
        assert sorted(order) == list(range(11))
    assert len({tuple(order) for order in epochs}) == 3, "each epoch draws a new order"
    for x, y in loader:  # the fields of a row stay together
        np.testing.assert_array_equal(x.data[:, 0] // 2 % 3, y.data)


def test_shuffling_follows_manual_seed():
    def first_epoch():
        return np.concatenate([x.data[:, 0] for x, _ in DataLoader(TensorDataset(X, Y), batch_size=3, shuffle=True)])

    mg.manual_seed(5)
    first = first_epoch()
    mg.manual_seed(5)
    np.testing.assert_array_equal(first_epoch(), first)


def test_any_dataset_with_len_and_getitem_is_batched_field_by_field():
    class Squares:
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return np.full(3, float(i)), i * i

    batches = list(DataLoader(Squares(), batch_size=2))
    assert [len(b[0].data) for b in batches] == [2, 2, 1]
    np.testing.assert_array_equal(batches[1][0].data, [[2.0] * 3, [3.0] * 3])
    np.testing.assert_array_equal(batches[1][1].data, [4, 9])
    assert batches[0][1].dtype == np.int64 and not batches[0][0].requires_grad

    class Singles(Squares):
        def __getitem__(self, i):
            return np.full(2, float(i))

    (first, *_) = DataLoader(Singles(), batch_size=5)
    assert isinstance(first, mg.Tensor) and first.shape == (5, 2)


def test_bad_datasets_and_batch_sizes_get_clear_errors():
    with pytest.raises(mg.ShapeError, match=r"same first axis .* \[\(11, 2\), \(10,\)\]"):
        TensorDataset(X, Y[:10])
    with pytest.raises(ValueError, match="batch_size must be a positive int, got 0"):
        DataLoader(TensorDataset(X), batch_size=0)

    class Ragged:
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return np.zeros(i + 1), i

    with pytest.raises(mg.ShapeError, match=r"examples \(field 0\) of a batch must have one shape .* \[\(1,\), \(2,\)\] among examples \[0, 1\]"):
        next(iter(DataLoader(Ragged(), batch_size=2)))


# --------------------------------------------------------------------------- the Quickstart, ported
# PyTorch's "Quickstart" tutorial: its train() and test() loops (renamed, so that pytest does not
# collect them) with `torch` replaced by `mg`
# (`X.to(device)` included), on the digits instead of FashionMNIST; float64 and unshuffled on both
# sides so that every batch's loss can be compared.
def quickstart_train(dataloader, model, loss_fn, optimizer, device="cpu"):
    losses = []
    model.train()
    for X, y in dataloader:
        X, y = X.to(device), y.to(device)
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses


def quickstart_test(dataloader, model, loss_fn, no_grad, device="cpu"):
    model.eval()
    test_loss, correct = 0, 0
    with no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).float().sum().item()
    return test_loss / len(dataloader), correct / len(dataloader.dataset)


def test_pytorchs_quickstart_loop_runs_on_the_loader_and_agrees_with_torch():
    images, labels = load_digits()
    x = images.reshape(-1, 64)[:600] / 16.0
    y = labels[:600]
    model = nn.Sequential(nn.Linear(64, 32, rng=np.random.default_rng(0)), nn.ReLU(), nn.Linear(32, 10, rng=np.random.default_rng(1)))
    module = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10)).double()
    module.load_state_dict({k: torch.from_numpy(v) for k, v in nn.utils.torch_state_dict(model).items()})
    ours = DataLoader(TensorDataset(x, y), batch_size=64)
    theirs = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), batch_size=64)
    optimizer, torch_optimizer = optim.SGD(model.parameters(), lr=0.5), torch.optim.SGD(module.parameters(), lr=0.5)
    losses = []
    for epoch in range(4):
        losses += quickstart_train(ours, model, nn.CrossEntropyLoss(), optimizer)
        tlosses = quickstart_train(theirs, module, torch.nn.CrossEntropyLoss(), torch_optimizer)
        np.testing.assert_allclose(losses[-len(tlosses):], tlosses, rtol=1e-9)
    assert losses[-1] < losses[0] / 3, "it learns"
    np.testing.assert_allclose(quickstart_test(ours, model, nn.CrossEntropyLoss(), mg.no_grad), quickstart_test(theirs, module, torch.nn.CrossEntropyLoss(), torch.no_grad), rtol=1e-9)


def _lambda_module(nn):
    class Lambda(nn.Module):  # the tutorial's own
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    return Lambda


def _howards_cnn(lib):
    """The tutorial's last CNN, a Sequential of Lambda layers, convolutions and an adaptive pool
    (8×8 digits for MNIST's 28×28; `x.size(0)` written `x.shape[0]`: the porting guide says why)."""
    nn, Lambda = lib.nn, _lambda_module(lib.nn)
    return nn.Sequential(
        Lambda(lambda x: x.view(-1, 1, 8, 8)),
        nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        Lambda(lambda x: x.view(x.shape[0], -1)),
    )


def test_what_is_torch_nn_really_runs_as_written_and_agrees_with_torch():
    """Jeremy Howard's tutorial "What is torch.nn really?" on the digits: the model from scratch (its
    own log_softmax, nll by indexing with `range(...)`, accuracy, the update under no_grad with
    `grad.zero_()`), then its CNN trained on a DataLoader with momentum, `train()` and `eval()`;
    float64 on both sides, the same weights, the batches in order."""
    images, labels = load_digits()
    x_np, y_np = images.reshape(-1, 64)[:320] / 16.0, labels[:320]
    w0 = np.random.default_rng(5).standard_normal((64, 10)) / 8.0
    torch_cnn = _howards_cnn(torch).double()
    cnn = _howards_cnn(mg)
    nn.utils.load_torch_state_dict(cnn, torch_cnn.state_dict())
    results = {}
    for lib, model_cnn, loader, dataset in ((mg, cnn, DataLoader, TensorDataset), (torch, torch_cnn, torch.utils.data.DataLoader, torch.utils.data.TensorDataset)):
        x_train, y_train = map(lib.tensor, (x_np, y_np))
        n, c = x_train.shape
        weights = lib.tensor(w0)
        weights.requires_grad_()
        bias = lib.zeros(10, requires_grad=True, dtype=lib.float64)

        def log_softmax(x):
            return x - x.exp().sum(-1).log().unsqueeze(-1)

        def model(xb):
            return log_softmax(xb @ weights + bias)

        def nll(input, target):
            return -input[range(target.shape[0]), target].mean()

        def accuracy(out, yb):
            preds = lib.argmax(out, dim=1)
            return (preds == yb).float().mean()

        bs, lr = 64, 0.5
        for epoch in range(2):
            for i in range((n - 1) // bs + 1):
                start_i = i * bs
                end_i = start_i + bs
                xb = x_train[start_i:end_i]
                yb = y_train[start_i:end_i]
                pred = model(xb)
                loss = nll(pred, yb)
                loss.backward()
                with lib.no_grad():
                    weights -= weights.grad * lr
                    bias -= bias.grad * lr
                    weights.grad.zero_()
                    bias.grad.zero_()
        scratch = [nll(model(xb), yb).item(), accuracy(model(xb), yb).item()]

        train_dl = loader(dataset(x_train, y_train), batch_size=bs)
        opt = lib.optim.SGD(model_cnn.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for epoch in range(2):
            model_cnn.train()
            for xb, yb in train_dl:
                loss = lib.nn.functional.cross_entropy(model_cnn(xb), yb)
                loss.backward()
                opt.step()
                opt.zero_grad()
                losses.append(loss.item())
            model_cnn.eval()
        results[lib.__name__] = scratch, losses
    (scratch, losses), (t_scratch, t_losses) = results["minigrad"], results["torch"]
    np.testing.assert_allclose(scratch, t_scratch, rtol=1e-9)
    assert scratch[1] > 0.5, "the logistic model from scratch learns the digits"
    assert len(losses) == 10
    np.testing.assert_allclose(losses, t_losses, rtol=1e-8)
