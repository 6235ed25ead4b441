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
