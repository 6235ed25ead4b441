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
    with pytest.raises(ValueError, match="batch_size must be a positive int or None, got 0"):
        DataLoader(TensorDataset(X), batch_size=0)

    class Ragged:
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return np.zeros(i + 1), i

    with pytest.raises(mg.ShapeError, match=r"field 0 of the examples of a batch must have one shape .* \[\(1,\), \(2,\)\].* \(examples \[0, 1\]\)"):
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


# --------------------------------------------------------------------------- Dataset, collation, samplers, splits
class _Pairs:
    """A map-style dataset written as PyTorch's tutorial "Datasets & DataLoaders" writes one, for
    either library: dict examples holding an array, a float, an int label and a string."""

    def __init__(self, data):
        class Pairs(data.Dataset):
            def __init__(self, n):
                self.n = n

            def __len__(self):
                return self.n

            def __getitem__(self, idx):
                return {"image": np.full((2, 3), idx, dtype=np.float32), "weight": idx / 2, "label": idx % 3, "name": f"item{idx}"}

        self.dataset = Pairs(7)


def _plain(batch):
    """A collated batch with tensors as numpy arrays (either library's), to compare."""
    if isinstance(batch, dict):
        return {k: _plain(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)) and batch and isinstance(batch[0], str):
        return list(batch)
    if isinstance(batch, (list, tuple)):
        return [_plain(v) for v in batch]
    array = batch.numpy() if isinstance(batch, torch.Tensor) else batch.data
    return (array, str(array.dtype))


def test_dataset_subclasses_and_default_collate_match_torchs():
    kw = [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None), dict(batch_size=2, sampler=[6, 0, 3, 3, 1]), dict(batch_size=4, num_workers=2, pin_memory=True)]
    for options in kw:
        ours = list(DataLoader(_Pairs(mg.data).dataset, **options))
        theirs = list(torch.utils.data.DataLoader(_Pairs(torch.utils.data).dataset, **options))
        assert len(ours) == len(theirs) == len(DataLoader(_Pairs(mg.data).dataset, **options)), options
        for a, b in zip(ours, theirs):
            if options["batch_size"] is None:  # the examples themselves, uncollated
                assert a["name"] == b["name"] and a["label"] == b["label"]
                continue
            pa, pb = _plain(a), _plain(b)
            assert pa["name"] == pb["name"] and pa.keys() == pb.keys()
            for key in ("image", "weight", "label"):
                np.testing.assert_array_equal(pa[key][0], pb[key][0])
                assert pa[key][1] == pb[key][1], (key, pa[key][1], pb[key][1])  # float32, float64, int64 as torch's


def test_collate_fn_subset_concat_and_random_split_match_torchs():
    def pad(batch):  # a collate_fn that pads sequences of different lengths, as NLP code writes one
        width = max(len(seq) for seq, _ in batch)
        return mg.tensor(np.stack([np.pad(seq, (0, width - len(seq))) for seq, _ in batch])), mg.tensor([label for _, label in batch])

    ragged = [(np.arange(1.0, k + 1), k % 2) for k in (3, 1, 4, 2)]
    (x, y), *_ = DataLoader(ragged, batch_size=3, collate_fn=pad)
    np.testing.assert_array_equal(x.data, [[1, 2, 3, 0], [1, 0, 0, 0], [1, 2, 3, 4]])
    assert y.data.tolist() == [1, 1, 0]
    ours, theirs = _Pairs(mg.data).dataset, _Pairs(torch.utils.data).dataset
    for mine, other in [
        (mg.data.Subset(ours, [5, 1, 1]), torch.utils.data.Subset(theirs, [5, 1, 1])),
        (mg.data.ConcatDataset([ours, mg.data.Subset(ours, [2])]), torch.utils.data.ConcatDataset([theirs, torch.utils.data.Subset(theirs, [2])])),
        (ours + ours, theirs + theirs),
    ]:
        assert len(mine) == len(other) and [mine[i]["name"] for i in range(len(mine))] == [other[i]["name"] for i in range(len(other))]
        assert mine[-1]["name"] == other[-1]["name"]
    for lengths in ([3, 4], [0.5, 0.5], [0.3, 0.3, 0.4], [0.1, 0.9]):
        parts = mg.data.random_split(ours, lengths, generator=np.random.default_rng(0))
        tparts = torch.utils.data.random_split(theirs, lengths, generator=torch.Generator().manual_seed(0))
        assert [len(p) for p in parts] == [len(p) for p in tparts], lengths
        assert sorted(i for p in parts for i in p.indices) == list(range(7)), "a partition of the examples"
    again = mg.data.random_split(ours, [3, 4], generator=np.random.default_rng(0))
    assert [p.indices for p in again] == [p.indices for p in mg.data.random_split(ours, [3, 4], generator=np.random.default_rng(0))]


def test_dataset_and_loader_options_refuse_what_they_cannot_do():
    with pytest.raises(NotImplementedError, match="Plain: a Dataset subclass must define __getitem__"):
        type("Plain", (mg.data.Dataset,), {})()[0]
    with pytest.raises(ValueError, match="sampler and shuffle=True are mutually exclusive"):
        DataLoader(TensorDataset(X), sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler is not supported in minigrad"):
        DataLoader(TensorDataset(X), batch_sampler=[[0, 1]])
    with pytest.raises(ValueError, match=r"random_split: the lengths \[3, 3\] must be non-negative ints adding up to the dataset's 11 examples"):
        mg.data.random_split(TensorDataset(X), [3, 3])
    with pytest.raises(IndexError, match="ConcatDataset: index 22 is out of range for 22 examples"):
        mg.data.ConcatDataset([TensorDataset(X), TensorDataset(X)])[22]
    with pytest.raises(mg.ShapeError, match=r"field 'a' of the examples of a batch must have one shape .*\(examples \[0, 1\]\)"):
        next(iter(DataLoader([{"a": np.zeros(1)}, {"a": np.zeros(2)}], batch_size=2)))
