"""The layers a PyTorch user reaches for (Embedding, Dropout, LayerNorm, BatchNorm, GELU, Flatten, Conv2d, padding, pooling, attention,
LSTMCell, loss modules with reduction=, PyTorch state dicts, save/load) against PyTorch in float64:
values, gradients and, for convolution and GELU, second derivatives."""

import io

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import nn
from minigrad.nn import functional as F
from oracles import compare_with_torch as _compare


def rng(seed=0):
    return np.random.default_rng(20261201 + seed)


# --------------------------------------------------------------------------- activations, shapes
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_torch_to_second_order(approximate):
    x = rng().standard_normal((4, 5)) * 3
    _compare(lambda x: nn.GELU(approximate)(x), lambda x: torch.nn.GELU(approximate)(x), [x], second=True)


def test_gelu_rejects_an_unknown_approximation():
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("sigmoid")


def test_flatten_matches_torch():
    x = rng().standard_normal((2, 3, 4, 5))
    for args in [(), (0,), (1, 2), (2, -1)]:
        _compare(lambda x: nn.Flatten(*args)(x), lambda x: torch.nn.Flatten(*args)(x), [x])


def test_layer_norm_matches_torch_with_its_parameters():
    x = rng().standard_normal((3, 4, 6)) * 2 + 1
    for shape in [6, (4, 6)]:
        ln, tln = nn.LayerNorm(shape), torch.nn.LayerNorm(shape).double()
        with torch.no_grad():
            w, b = rng(1).standard_normal(tln.weight.shape), rng(2).standard_normal(tln.weight.shape)
            tln.weight.copy_(torch.tensor(w)), tln.bias.copy_(torch.tensor(b))
        ln.load_state_dict({"weight": w, "bias": b})
        _compare(ln, tln, [x], second=True)
        loss, tloss = (ln(mg.tensor(x)) ** 2).sum(), (tln(torch.tensor(x)) ** 2).sum()
        loss.backward(), tloss.backward()
        np.testing.assert_allclose(ln.weight.grad.data, tln.weight.grad.numpy(), rtol=1e-10)
        np.testing.assert_allclose(ln.bias.grad.data, tln.bias.grad.numpy(), rtol=1e-10)
    with pytest.raises(mg.ShapeError, match=r"LayerNorm.*\(3, 4, 6\).*\(5,\)"):
        nn.LayerNorm(5)(mg.tensor(x))
    for kw in ({"bias": False}, {"elementwise_affine": False}):
        ln, tln = nn.LayerNorm(6, **kw), torch.nn.LayerNorm(6, **kw).double()
        assert repr(ln) == repr(tln) and sorted(ln.state_dict()) == sorted(tln.state_dict())
        if ln.weight is not None:
            ln.load_state_dict({"weight": rng(3).standard_normal(6)}), tln.load_state_dict({"weight": torch.tensor(ln.weight.data)})
        _compare(ln, tln, [x], second=True)


def test_norm_with_p_zero_counts_the_nonzero_entries_as_torch():
    x = np.array([[1.0, 0.0, -2.0], [0.0, 0.0, 3.0]])
    for kw in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}):
        np.testing.assert_array_equal(mg.tensor(x).norm(0, **kw).data, torch.tensor(x).norm(0, **kw).numpy())


def test_embedding_reads_rows_and_accumulates_repeated_ones():
    emb = nn.Embedding(7, 3, rng=rng())
    temb = torch.nn.Embedding(7, 3).double()
    with torch.no_grad():
        temb.weight.copy_(torch.tensor(emb.weight.data))
    idx = np.array([[1, 2, 1], [6, 1, 0]])
    out, tout = emb(idx), temb(torch.tensor(idx))
    np.testing.assert_array_equal(out.data, tout.detach().numpy())
    u = rng(1).standard_normal(out.shape)
    (out * mg.tensor(u)).sum().backward()
    (tout * torch.tensor(u)).sum().backward()
    np.testing.assert_allclose(emb.weight.grad.data, temb.weight.grad.numpy(), rtol=1e-12)
    assert emb(mg.tensor([3, 4])).shape == (2, 3)
    with pytest.raises(mg.ShapeError, match=r"Embedding.*\[0, 7\).*7"):
        emb(np.array([7]))
    with pytest.raises(mg.DtypeError, match="integers"):
        emb(np.array([1.5]))


def test_dropout_honours_train_and_eval():
    mg.manual_seed(0)
    x = mg.tensor(np.ones((200, 50)), requires_grad=True)
    layer = nn.Dropout(0.3)
    y = layer(x)
    kept = y.data != 0
    assert 0.65 < kept.mean() < 0.75
    np.testing.assert_allclose(y.data[kept], 1 / 0.7)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, kept / 0.7)  # the gradient goes through the kept entries, scaled
    model = nn.Sequential(nn.Linear(50, 50), nn.Dropout(0.5))
    model.eval()
    assert not model[1].training
    z = mg.tensor(rng().standard_normal((4, 50)))
    np.testing.assert_array_equal(model(z).data, model[0](z).data)
    model.train()
    assert model[1].training and not np.array_equal(model(z).data, model[0](z).data)
    assert np.all(nn.Dropout(1.0)(x).data == 0) and nn.Dropout(0.0)(x) is x
    with pytest.raises(ValueError, match="probability"):
        nn.Dropout(1.5)


# --------------------------------------------------------------------------- convolution, pooling
CONV_CASES = [
    dict(c_in=1, c_out=2, k=3, stride=1, padding=0, dilation=1, hw=(6, 6)),
    dict(c_in=2, c_out=3, k=3, stride=2, padding=1, dilation=1, hw=(7, 5)),
    dict(c_in=3, c_out=2, k=(2, 3), stride=(1, 2), padding=(1, 0), dilation=1, hw=(5, 6)),
    dict(c_in=2, c_out=2, k=3, stride=1, padding=2, dilation=2, hw=(6, 6)),
]


@pytest.mark.parametrize("case", CONV_CASES, ids=range(len(CONV_CASES)))
def test_conv2d_matches_torch_to_second_order(case):
    kw = dict(stride=case["stride"], padding=case["padding"], dilation=case["dilation"])
    conv = nn.Conv2d(case["c_in"], case["c_out"], case["k"], rng=rng(), **kw)
    x = rng(1).standard_normal((2, case["c_in"]) + case["hw"])
    _compare(
        lambda x, w, b: F.conv2d(x, w, b, **kw),
        lambda x, w, b: torch.nn.functional.conv2d(x, w.transpose(0, 1), b, **kw),
        [x, conv.weight.data, conv.bias.data],
        second=True,
    )
    tconv = torch.nn.Conv2d(case["c_in"], case["c_out"], case["k"], **kw).double()
    nn.utils.load_torch_state_dict(conv, tconv.state_dict())
    np.testing.assert_allclose(conv(mg.tensor(x)).data, tconv(torch.tensor(x)).detach().numpy(), atol=1e-12)


GROUPED_CONVS = [  # (layer, in, out, kernel, options, input shape): the 1-d layers, groups, 'same' and 'valid', unbatched input
    ("Conv1d", 2, 3, 3, {}, (2, 2, 7)),
    ("Conv1d", 4, 6, 3, {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}, (2, 4, 9)),
    ("Conv1d", 3, 3, 4, {"padding": "same"}, (2, 3, 6)),  # an even kernel: the extra zero goes after
    ("Conv1d", 2, 4, 3, {"padding": "valid", "bias": False}, (2, 5)),  # unbatched (C, L)
    ("Conv2d", 4, 6, 3, {"padding": 1, "groups": 2}, (2, 4, 5, 5)),
    ("Conv2d", 3, 6, (2, 3), {"stride": (2, 1), "groups": 3}, (2, 3, 6, 5)),  # depthwise, two filters a channel
    ("Conv2d", 2, 2, (2, 4), {"padding": "same", "dilation": (1, 2)}, (1, 2, 5, 6)),
    ("Conv2d", 4, 2, 3, {"groups": 2, "padding": 1, "padding_mode": "reflect"}, (4, 5, 4)),  # unbatched (C, H, W)
    ("ConvTranspose1d", 2, 3, 4, {"stride": 2, "padding": 1}, (2, 2, 5)),
    ("ConvTranspose1d", 4, 6, 3, {"stride": 3, "padding": 2, "output_padding": 1, "groups": 2}, (4, 4)),  # unbatched
    ("ConvTranspose2d", 4, 6, 3, {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}, (2, 4, 3, 4)),
    ("ConvTranspose2d", 3, 3, (2, 3), {"dilation": 2, "groups": 3, "bias": False}, (3, 4, 4)),  # unbatched
]


@pytest.mark.parametrize("case", GROUPED_CONVS, ids=[f"{c[0]}-{c[4]}" for c in GROUPED_CONVS])
def test_convolution_layers_match_torch_to_second_order(case):
    """Each layer from PyTorch's weights (the state-dict converter swaps a convolution's first two
    axes, groups or not): its repr, output and the gradients of input and parameters; and the
    function beneath it (a padding mode's pad, then the convolution) to second order in input,
    weight and bias together."""
    name, c_in, c_out, k, options, shape = case
    theirs = getattr(torch.nn, name)(c_in, c_out, k, **options).double()
    mine = getattr(nn, name)(c_in, c_out, k, rng=rng(), **options)
    assert repr(mine) == repr(theirs)
    assert sorted(nn.utils.torch_state_dict(mine)) == sorted(theirs.state_dict())
    nn.utils.load_torch_state_dict(mine, theirs.state_dict())
    transposed = name.startswith("ConvTranspose")
    tweight = theirs.weight.detach().numpy()
    np.testing.assert_array_equal(mine.weight.data, tweight if transposed else tweight.swapaxes(0, 1))
    x = rng(1).standard_normal(shape)
    xs, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = mine(xs), theirs(xt)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), atol=1e-12)
    u = rng(2).standard_normal(out.shape)
    (out * mg.tensor(u)).sum().backward()
    (tout * torch.tensor(u)).sum().backward()
    np.testing.assert_allclose(xs.grad.data, xt.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(mine.weight.grad.data, theirs.weight.grad.numpy() if transposed else theirs.weight.grad.numpy().swapaxes(0, 1), atol=1e-12)
    if mine.bias is not None:
        np.testing.assert_allclose(mine.bias.grad.data, theirs.bias.grad.numpy(), atol=1e-12)
    kw = {key: value for key, value in options.items() if key not in ("bias", "padding_mode")}
    mode = options.get("padding_mode")
    if mode:  # the layer pads first, then convolves without padding
        widths, kw = [kw["padding"]] * (2 * len(shape[1:]) - 2), {**kw, "padding": 0}
    fn, tfn = getattr(F, name.lower().replace("convtranspose", "conv_transpose")), getattr(torch.nn.functional, name.lower().replace("convtranspose", "conv_transpose"))
    _compare(
        lambda x, w, *b: fn(F.pad(x, widths, mode=mode) if mode else x, w, *b, **kw),
        lambda x, w, *b: tfn(torch.nn.functional.pad(x, widths, mode=mode) if mode else x, w if transposed else w.transpose(0, 1), *b, **kw),
        [x, mine.weight.data] + ([mine.bias.data] if mine.bias is not None else []),
        second=True,
    )


def test_conv2d_initial_bound_and_errors():
    conv = nn.Conv2d(3, 4, 5, rng=rng())
    assert conv.weight.shape == (3, 4, 5, 5) and np.abs(conv.weight.data).max() <= 1 / np.sqrt(75)
    grouped = nn.Conv2d(6, 4, 3, groups=2, rng=rng())  # PyTorch's fan: in_channels / groups · kH · kW
    assert grouped.weight.shape == (3, 4, 3, 3) and np.abs(grouped.weight.data).max() <= 1 / np.sqrt(27) and np.abs(grouped.weight.data).max() > 1 / np.sqrt(54)
    for layer, match in [
        (lambda: nn.Conv2d(6, 4, 3, groups=4), r"Conv2d: groups=4 must be a positive int that divides the in_channels \(6\)"),
        (lambda: nn.Conv1d(4, 6, 3, groups=4), r"Conv1d: groups=4 must be a positive int that divides the out_channels \(6\)"),
        (lambda: nn.Conv1d(4, 6, 3, padding="full"), r"padding must be an int, a tuple of ints, 'valid' or 'same', got 'full'"),
        (lambda: nn.Conv2d(4, 6, 3, stride=2, padding="same"), r"padding='same' is not supported for strided convolutions \(stride \(2, 2\)\)"),
        (lambda: nn.Conv1d(4, 6, (3, 3)), r"Conv1d kernel_size: expected an int or a tuple of one int, got \(3, 3\)"),
    ]:
        with pytest.raises(ValueError, match=match):
            layer()
    with pytest.raises(mg.ShapeError, match=r"conv2d: input of shape \(2, 4, 8, 8\) must be \(batch, 6, height, width\) for weight of shape \(3, 4, 3, 3\) with groups=2"):
        grouped(mg.zeros(2, 4, 8, 8))
    with pytest.raises(mg.ShapeError, match=r"conv1d: expects input \(batch, channels, length\) and weight .* got shapes \(2, 3, 4, 5\) and \(3, 2, 3\)"):
        nn.Conv1d(3, 2, 3)(mg.zeros(2, 3, 4, 5))
    with pytest.raises(mg.ShapeError, match=r"max_pool1d: input must be \(batch, channels, length\) or \(channels, length\), got shape \(5,\)"):
        F.max_pool1d(mg.zeros(5), 2)
    with pytest.raises(mg.ShapeError, match=r"conv2d.*\(2, 2, 8, 8\).*\(batch, 3.*\(3, 4, 5, 5\)"):
        conv(mg.tensor(np.zeros((2, 2, 8, 8))))
    with pytest.raises(mg.ShapeError, match="larger than"):
        conv(mg.tensor(np.zeros((1, 3, 3, 3))))


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("kernel, stride, padding", [(2, None, 0), (3, 2, 1), ((2, 3), (1, 2), 0)])
def test_pooling_matches_torch(kind, kernel, stride, padding):
    x = rng().standard_normal((2, 3, 7, 6))
    mine = (nn.MaxPool2d if kind == "max" else nn.AvgPool2d)(kernel, stride, padding)
    theirs = (torch.nn.MaxPool2d if kind == "max" else torch.nn.AvgPool2d)(kernel, stride, padding)
    _compare(mine, theirs, [x], second=True)
    _compare(mine, theirs, [x[0]])  # one unbatched image (C, H, W)
    assert repr(mine) == repr(theirs)


@pytest.mark.parametrize("kind", ["Max", "Avg"])
@pytest.mark.parametrize("kernel, stride, padding, shape", [(2, None, 0, (2, 3, 7)), (3, 2, 1, (2, 3, 8)), (4, 1, 2, (3, 6))], ids=["plain", "strided", "unbatched"])
def test_1d_pooling_matches_torch(kind, kernel, stride, padding, shape):
    mine, theirs = getattr(nn, f"{kind}Pool1d")(kernel, stride, padding), getattr(torch.nn, f"{kind}Pool1d")(kernel, stride, padding)
    _compare(mine, theirs, [rng().standard_normal(shape)], second=True)
    assert repr(mine) == repr(theirs)
    if kind == "Max":
        _compare(lambda x: F.max_pool1d(x, 2, dilation=2), lambda x: torch.nn.functional.max_pool1d(x, 2, dilation=2), [rng(1).standard_normal(shape)])


@pytest.mark.parametrize("shape, output_size", [
    ((2, 3, 7, 6), 1),  # the global average pool of a classifier's head
    ((2, 3, 7, 6), (3, 4)),  # neither divides: neighbouring windows share a row or a column
    ((2, 3, 8, 6), (4, 3)),  # both divide: plain average pooling
    ((2, 3, 5, 9), (None, 2)),  # None keeps the height
    ((3, 5, 5), 7),  # a 3-D input; more outputs than inputs: windows of one, repeated
])
def test_adaptive_avg_pooling_matches_torch(shape, output_size):
    x = rng().standard_normal(shape)
    mine, theirs = nn.AdaptiveAvgPool2d(output_size), torch.nn.AdaptiveAvgPool2d(output_size)
    _compare(mine, theirs, [x], second=True)
    assert repr(mine) == repr(theirs)


def test_adaptive_avg_pooling_refuses_bad_sizes():
    x = mg.tensor(np.zeros((1, 2, 4, 4)))
    for size in (0, (2, 2, 2), 1.5, (2, -1)):
        with pytest.raises(ValueError, match=r"adaptive_avg_pool2d: output_size must be a positive int or a pair"):
            F.adaptive_avg_pool2d(x, size)
    with pytest.raises(mg.ShapeError, match=r"adaptive_avg_pool2d: input must be .* got shape \(4, 4\)"):
        F.adaptive_avg_pool2d(mg.tensor(np.zeros((4, 4))), 2)


# --------------------------------------------------------------------------- LSTM
def test_lstm_cell_matches_torch_over_several_steps():
    cell = nn.LSTMCell(3, 4, rng=rng())
    tcell = torch.nn.LSTMCell(3, 4).double()
    tcell.load_state_dict({k: torch.from_numpy(v) for k, v in nn.utils.torch_state_dict(cell).items()})
    xs = rng(1).standard_normal((5, 2, 3))
    state, tstate = None, None
    for x in xs:
        state = cell(mg.tensor(x), state)
        tstate = tcell(torch.tensor(x), tstate)
    np.testing.assert_allclose(state[0].data, tstate[0].detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(state[1].data, tstate[1].detach().numpy(), rtol=1e-12)
    (state[0].sum() + state[1].sum()).backward()
    (tstate[0].sum() + tstate[1].sum()).backward()
    for name, p in cell.named_parameters():
        expected = getattr(tcell, name).grad.numpy()
        np.testing.assert_allclose(p.grad.data, expected.T if p.ndim == 2 else expected, rtol=1e-10, atol=1e-14)
    with pytest.raises(mg.ShapeError, match=r"LSTMCell.*\(2, 5\)"):
        cell(mg.tensor(np.zeros((2, 5))))


# --------------------------------------------------------------------------- losses
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_loss_modules_match_torch(reduction):
    pred, target = rng().standard_normal((5, 3)), rng(1).standard_normal((5, 3))
    labels = np.array([0, 2, 1, 1, 0])
    probs = rng(2).uniform(size=(5, 3))
    cases = [
        (nn.MSELoss, torch.nn.MSELoss, target),
        (nn.L1Loss, torch.nn.L1Loss, target),
        (nn.BCEWithLogitsLoss, torch.nn.BCEWithLogitsLoss, probs),
        (nn.CrossEntropyLoss, torch.nn.CrossEntropyLoss, labels),
        (nn.NLLLoss, torch.nn.NLLLoss, labels),
    ]
    for mine, theirs, y in cases:
        ty = torch.tensor(y)
        _compare(lambda p: mine(reduction=reduction)(p, y), lambda p: theirs(reduction=reduction)(p, ty), [pred])
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss(reduction="average")
    with pytest.raises(ValueError, match="reduction"):
        nn.mse_loss(mg.tensor(pred), target, reduction="average")


# --------------------------------------------------------------------------- state dicts, files
def _torch_twin():
    mine = nn.Sequential(nn.Linear(4, 4, rng=rng()), nn.Tanh(), nn.Linear(4, 3, rng=rng(1)), nn.LayerNorm(3))
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh(), torch.nn.Linear(4, 3), torch.nn.LayerNorm(3)).double()
    return mine, theirs


def test_torch_state_dict_both_ways():
    mine, theirs = _torch_twin()
    x = rng(2).standard_normal((6, 4))
    assert theirs.load_state_dict({k: torch.from_numpy(v) for k, v in nn.utils.torch_state_dict(mine).items()})
    np.testing.assert_allclose(mine(mg.tensor(x)).data, theirs(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    fresh = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh(), torch.nn.Linear(4, 3), torch.nn.LayerNorm(3)).double()
    result = nn.utils.load_torch_state_dict(mine, fresh.state_dict())  # a square 4x4 weight is transposed too
    assert result == ([], [])
    np.testing.assert_array_equal(mine[0].weight.data, fresh[0].weight.detach().numpy().T)
    np.testing.assert_allclose(mine(mg.tensor(x)).data, fresh(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    rnn, trnn = nn.RNNCell(3, 4, rng=rng()), torch.nn.RNNCell(3, 4).double()
    nn.utils.load_torch_state_dict(rnn, trnn.state_dict())
    h, x = rng(3).standard_normal((2, 4)), rng(4).standard_normal((2, 3))
    np.testing.assert_allclose(rnn(mg.tensor(x), mg.tensor(h)).data, trnn(torch.tensor(x), torch.tensor(h)).detach().numpy(), rtol=1e-12)


def test_load_torch_state_dict_names_what_does_not_match():
    mine, theirs = _torch_twin()
    state = theirs.state_dict()
    state["5.weight"] = torch.zeros(3)
    with pytest.raises(nn.StateDictError, match=r"'5\.weight'.*'0\.weight'"):
        nn.utils.load_torch_state_dict(mine, state)
    del state["0.bias"]
    with pytest.raises(nn.StateDictError, match=r"missing key\(s\) '0\.bias'; unexpected key\(s\) '5\.weight'"):
        nn.utils.load_torch_state_dict(mine, state)
    missing, unexpected = nn.utils.load_torch_state_dict(mine, state, strict=False)
    assert missing == ["layers.0.bias"] and unexpected == ["5.weight"]


def test_save_and_load_round_trip(tmp_path):
    mine, _ = _torch_twin()
    path = tmp_path / "model.mg"
    mg.save({"model": mine.state_dict(), "epoch": 3, "w": mg.tensor([1.0, 2.0])}, path)
    back = mg.load(path)
    assert int(back["epoch"]) == 3 and back["w"].tolist() == [1.0, 2.0]
    other, _ = _torch_twin()
    for p in other.parameters():
        p.data = p.data * 0
    other.load_state_dict(back["model"])
    for (n1, a), (n2, b) in zip(mine.state_dict().items(), other.state_dict().items()):
        assert n1 == n2 and np.array_equal(a, b)
    buffer = io.BytesIO()
    mg.save(mine.state_dict(), buffer)
    buffer.seek(0)
    assert set(mg.load(buffer)) == set(mine.state_dict())
    buffer.seek(0)
    assert set(mg.load(buffer, weights_only=True)) == set(mine.state_dict())  # torch.load's keyword, as the tutorials write it
    with pytest.raises(ValueError, match="weights_only=False asks for pickled objects, which minigrad never reads"):
        mg.load(buffer, weights_only=False)
    with pytest.raises(TypeError, match=r"'f'.*function"):
        mg.save({"f": print}, buffer)
    with pytest.raises(TypeError, match="state_dict"):
        mg.save([1, 2], buffer)


# --------------------------------------------------------------------------- jit
def test_new_layers_compile_or_refuse_clearly():
    from minigrad import jit

    conv, ln = nn.Conv2d(1, 2, 3, padding=1, rng=rng()), nn.LayerNorm(4)

    def f(x):
        return ln(F.max_pool2d(F.gelu(conv(x)), 2).reshape(2, -1)[:, :4]).sum()

    compiled = jit.compile(f, backward=True)
    for seed in (1, 2):  # the second call runs the program traced on the first, on new data
        x = mg.tensor(rng(seed).standard_normal((2, 1, 6, 6)), requires_grad=True)
        value, (grad,) = compiled(x)
        expected = f(x)
        expected.backward()
        np.testing.assert_allclose(value.data, expected.data, rtol=1e-12)
        np.testing.assert_allclose(grad.data, x.grad.data, rtol=1e-10, atol=1e-14)
    drop = nn.Dropout(0.5)
    with pytest.raises(mg.TracerError, match="Dropout.*model.eval"):
        jit.compile(lambda x: drop(x).sum())(mg.tensor(np.ones(3)))
    drop.eval()
    assert jit.compile(lambda x: drop(x).sum())(mg.tensor(np.ones(3))).item() == 3.0
    emb = nn.Embedding(5, 2, rng=rng())
    with pytest.raises(mg.TracerError, match="Embedding"):
        jit.compile(lambda i: emb(i).sum())(mg.tensor(np.array([1.0, 2.0])))  # integer inputs are refused by trace itself


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_ignore_index_and_label_smoothing_match_torch(reduction, smoothing):
    logits = rng().standard_normal((6, 4)) * 3
    labels = np.array([0, 3, -100, 1, 2, -100])
    for ignore in (-100, 2):
        kw = dict(reduction=reduction, ignore_index=ignore, label_smoothing=smoothing)
        _compare(
            lambda z: nn.CrossEntropyLoss(**kw)(z, np.where(labels == -100, ignore, labels)),
            lambda z: torch.nn.CrossEntropyLoss(**kw)(z, torch.tensor(np.where(labels == -100, ignore, labels))),
            [logits],
        )
    if not smoothing:
        _compare(
            lambda z: nn.NLLLoss(reduction=reduction)(mg.log_softmax(z, axis=1), labels),
            lambda z: torch.nn.NLLLoss(reduction=reduction)(torch.log_softmax(z, dim=1), torch.tensor(labels)),
            [logits],
        )


CLASSIFICATION_CASES = {  # (logits shape, target kind, options)
    "class weights": ((6, 4), "indices", {"weight": [0.2, 1.0, 3.0, 0.5]}),
    "weights, ignore_index, smoothing": ((6, 4), "indices", {"weight": [0.2, 1.0, 3.0, 0.5], "ignore_index": 2, "label_smoothing": 0.1}),
    "probabilities": ((6, 4), "probabilities", {}),
    "probabilities, weights, smoothing": ((6, 4), "probabilities", {"weight": [0.2, 1.0, 3.0, 0.5], "label_smoothing": 0.2}),
    "K-dimensional": ((2, 4, 3, 5), "indices", {"weight": [0.2, 1.0, 3.0, 0.5], "ignore_index": 1}),
    "K-dimensional probabilities": ((2, 4, 3), "probabilities", {}),
    "unbatched": ((4,), "indices", {}),
    "unbatched probabilities": ((4,), "probabilities", {"label_smoothing": 0.3}),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape, kind, options", CLASSIFICATION_CASES.values(), ids=CLASSIFICATION_CASES.keys())
def test_cross_entropy_and_nll_weights_probabilities_and_k_dimensions_match_torch(shape, kind, options, reduction):
    """PyTorch's other forms of the classification losses: per-class weights (a weighted mean),
    class-probability targets, (N, C, d1, ...) inputs with (N, d1, ...) targets, one unbatched
    row; values and gradients (second order for the cross-entropy), module forms too."""
    logits = rng().standard_normal(shape) * 2
    target_shape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    target = rng(1).integers(0, 4, target_shape) if kind == "indices" else np.moveaxis(rng(1).dirichlet(np.ones(4), target_shape), -1, 1 if len(shape) > 1 else 0)
    kw = {k: np.array(v) if k == "weight" else v for k, v in options.items()}
    tkw = {k: torch.tensor(v) if k == "weight" else v for k, v in kw.items()}
    _compare(
        lambda z: F.cross_entropy(z, target, reduction=reduction, **kw),
        lambda z: torch.nn.functional.cross_entropy(z, torch.tensor(target), reduction=reduction, **tkw),
        [logits],
        second=True,
    )
    mine, theirs = nn.CrossEntropyLoss(reduction=reduction, **kw), torch.nn.CrossEntropyLoss(reduction=reduction, **tkw).double()
    np.testing.assert_allclose(mine(mg.tensor(logits), target).data, theirs(torch.tensor(logits), torch.tensor(target)).numpy(), atol=1e-12)
    assert sorted(mine.state_dict()) == sorted(theirs.state_dict()), "the class weights are a buffer, as there"
    if kind == "indices" and "label_smoothing" not in kw:
        _compare(
            lambda z: nn.NLLLoss(reduction=reduction, **kw)(F.log_softmax(z, dim=1 if len(shape) > 1 else 0), target),
            lambda z: torch.nn.NLLLoss(reduction=reduction, **tkw)(torch.log_softmax(z, dim=1 if len(shape) > 1 else 0), torch.tensor(target)),
            [logits],
        )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_weight_and_pos_weight_match_torch(reduction):
    logits, targets = rng().standard_normal((5, 3)) * 2, rng(1).random((5, 3))
    weight, pos_weight = rng(2).random((5, 3)) + 0.5, np.array([0.5, 2.0, 4.0])
    for kw in ({"weight": weight}, {"pos_weight": pos_weight}, {"weight": weight[0], "pos_weight": pos_weight}):
        tkw = {k: torch.tensor(v) for k, v in kw.items()}
        _compare(
            lambda z, t: F.binary_cross_entropy_with_logits(z, t, reduction=reduction, **kw),
            lambda z, t: torch.nn.functional.binary_cross_entropy_with_logits(z, t, reduction=reduction, **tkw),
            [logits, targets],
            second=True,
        )
        mine, theirs = nn.BCEWithLogitsLoss(reduction=reduction, **kw), torch.nn.BCEWithLogitsLoss(reduction=reduction, **tkw)
        np.testing.assert_allclose(mine(mg.tensor(logits), targets).data, theirs(torch.tensor(logits), torch.tensor(targets)).numpy(), atol=1e-12)
        assert sorted(mine.state_dict()) == sorted(theirs.state_dict())
    probabilities = 1 / (1 + np.exp(-logits))
    _compare(
        lambda p, t: F.binary_cross_entropy(p, t, weight=mg.tensor(weight), reduction=reduction),
        lambda p, t: torch.nn.functional.binary_cross_entropy(p, t, weight=torch.tensor(weight), reduction=reduction),
        [probabilities, targets],
    )


def test_loss_modules_take_torchs_argument_order_and_refuse_the_deprecated_ones():
    logits, labels = rng().standard_normal((4, 3)), np.array([0, 2, 1, 2])
    weight = [1.0, 2.0, 0.5]
    np.testing.assert_allclose(  # positional: the class weights come first, as in PyTorch
        nn.CrossEntropyLoss(weight)(mg.tensor(logits), labels).data, torch.nn.CrossEntropyLoss(torch.tensor(weight, dtype=torch.float64))(torch.tensor(logits), torch.tensor(labels)).numpy(), atol=1e-12
    )
    for make in (lambda: nn.CrossEntropyLoss(size_average=False), lambda: nn.MSELoss(reduce=False), lambda: F.nll_loss(mg.zeros(2, 3), [0, 1], reduce=True)):
        with pytest.raises(ValueError, match="size_average= and reduce= are deprecated in PyTorch and not in minigrad; write reduction="):
            make()
    with pytest.raises(mg.ShapeError, match=r"cross_entropy: weight must have one entry per class, shape \(3,\), got \(2,\)"):
        F.cross_entropy(mg.tensor(logits), labels, weight=[1.0, 2.0])
    with pytest.raises(mg.ShapeError, match=r"input of shape \(2, 3, 4\) \(N, C, d1, ...\) needs class indices of shape \(2, 4\) \(N, d1, ...\), got \(2, 3\)"):
        F.cross_entropy(mg.zeros(2, 3, 4), np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(mg.ShapeError, match=r"binary_cross_entropy_with_logits: weight of shape \(4,\) does not broadcast"):
        F.binary_cross_entropy_with_logits(mg.zeros(2, 3), mg.zeros(2, 3), weight=np.ones(4))
    assert np.isnan(F.cross_entropy(mg.tensor(logits), np.full(4, -100)).item()), "every row ignored: NaN, as in PyTorch"


@pytest.mark.parametrize("freeze, padding_idx", [(True, None), (False, None), (False, 2)])
def test_embedding_from_pretrained_matches_torch(freeze, padding_idx):
    vectors = rng().standard_normal((5, 3))
    mine = nn.Embedding.from_pretrained(mg.tensor(vectors), freeze=freeze, padding_idx=padding_idx)
    theirs = torch.nn.Embedding.from_pretrained(torch.tensor(vectors), freeze=freeze, padding_idx=padding_idx)
    assert repr(mine) == repr(theirs) and mine.weight.requires_grad == theirs.weight.requires_grad and mine.padding_idx == theirs.padding_idx
    idx = np.array([[0, 2], [4, 2]])
    out, tout = mine(idx), theirs(torch.tensor(idx))
    np.testing.assert_array_equal(out.data, tout.detach().numpy())
    if not freeze:
        (out * out).sum().backward(), (tout * tout).sum().backward()
        np.testing.assert_allclose(mine.weight.grad.data, theirs.weight.grad.numpy(), rtol=1e-12)
    assert nn.Embedding.from_pretrained(vectors).weight.data is not vectors, "a copy: training never writes into the caller's array"
    with pytest.raises(mg.ShapeError, match=r"from_pretrained: embeddings must be \(num_embeddings, embedding_dim\), got shape \(5,\)"):
        nn.Embedding.from_pretrained(vectors[:, 0])


def test_embedding_padding_row_gets_no_gradient():
    emb = nn.Embedding(5, 3, padding_idx=-1, rng=rng())
    temb = torch.nn.Embedding(5, 3, padding_idx=4).double()
    assert emb.padding_idx == 4 and not emb.weight.data[4].any()
    with torch.no_grad():
        emb.weight.data[4] = 1.5  # a value set later is read, but still not trained
        temb.weight.copy_(torch.tensor(emb.weight.data))
    idx = np.array([[4, 1, 4], [2, 4, 0]])
    out, tout = emb(idx), temb(torch.tensor(idx))
    np.testing.assert_array_equal(out.data, tout.detach().numpy())
    u = rng(1).standard_normal(out.shape)
    (out * mg.tensor(u)).sum().backward()
    (tout * torch.tensor(u)).sum().backward()
    np.testing.assert_allclose(emb.weight.grad.data, temb.weight.grad.numpy(), rtol=1e-12)
    assert not emb.weight.grad.data[4].any()
    with pytest.raises(ValueError, match="padding_idx 5"):
        nn.Embedding(5, 3, padding_idx=5)


def test_functional_forms_match_torch():
    x = rng().standard_normal((3, 5))
    w, b = rng(1).standard_normal(5), rng(2).standard_normal(5)
    _compare(lambda x, w, b: F.layer_norm(x, 5, w, b), lambda x, w, b: torch.nn.functional.layer_norm(x, (5,), w, b), [x, w, b], second=True)
    table = rng(3).standard_normal((6, 2))
    _compare(lambda t: F.embedding(np.array([[0, 5], [5, 2]]), t), lambda t: torch.nn.functional.embedding(torch.tensor([[0, 5], [5, 2]]), t), [table])
    images = rng(4).standard_normal((2, 3, 5, 5))
    weight = rng(5).standard_normal((3, 4, 3, 3))
    _compare(lambda x, w: F.conv2d(x, w), lambda x, w: torch.nn.functional.conv2d(x, w.transpose(0, 1)), [images, weight], second=True)
    assert nn.Conv2d(3, 4, 3, bias=False).bias is None
    t = mg.tensor(x)
    assert F.dropout(t, 0.5, training=False) is t
    assert (F.dropout(t, 0.5, rng=np.random.default_rng(0)).data == 0).any()


def test_reprs_name_the_configuration():
    assert repr(nn.Conv2d(1, 2, 3, padding=1)) == "Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
    assert repr(nn.LSTMCell(3, 4)) == "LSTMCell(3, 4)"
    assert repr(nn.Embedding(5, 2, padding_idx=0)) == "Embedding(5, 2, padding_idx=0)"
    assert repr(nn.CrossEntropyLoss(reduction="sum")) == "CrossEntropyLoss(reduction='sum')"
    assert "Dropout(p=0.1)" in repr(nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.1), nn.GELU()))
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)" and repr(nn.LogSoftmax(0)) == "LogSoftmax(dim=0)"


def test_a_models_repr_lists_its_modules_as_torch_prints_them():
    class Net(nn.Module):
        def __init__(self):
            self.flatten = nn.Flatten()
            self.stack = nn.Sequential(nn.Linear(4, 3), nn.Sequential(nn.ReLU(), nn.Tanh()))
            self.heads = [nn.Linear(3, 1), nn.Linear(3, 2)]
            self.scale = 2.0  # not a module: not listed

    assert repr(Net()) == "\n".join([
        "Net(",
        "  (flatten): Flatten(start_dim=1, end_dim=-1)",
        "  (stack): Sequential(",
        "    (0): Linear(4, 3, bias=True)",
        "    (1): Sequential(",
        "      (0): ReLU()",
        "      (1): Tanh()",
        "    )",
        "  )",
        "  (heads.0): Linear(3, 1, bias=True)",
        "  (heads.1): Linear(3, 2, bias=True)",
        ")",
    ])
    assert repr(nn.MLP([2, 2])) == "MLP(\n  (0): Linear(2, 2, bias=True)\n)"
    assert repr(nn.ReLU()) == "ReLU()"


def test_softmax_modules_match_torch():
    x = np.random.default_rng(3).standard_normal((3, 5))
    for ours, theirs in [(nn.Softmax(dim=1), torch.nn.Softmax(dim=1)), (nn.LogSoftmax(dim=0), torch.nn.LogSoftmax(dim=0))]:
        np.testing.assert_allclose(ours(mg.tensor(x)).data, theirs(torch.from_numpy(x)).numpy(), rtol=1e-12, err_msg=repr(ours))


BATCH_NORMS = [(nn.BatchNorm1d, torch.nn.BatchNorm1d, (8, 3)), (nn.BatchNorm1d, torch.nn.BatchNorm1d, (4, 3, 5)), (nn.BatchNorm2d, torch.nn.BatchNorm2d, (4, 3, 2, 5)), (nn.BatchNorm3d, torch.nn.BatchNorm3d, (2, 3, 2, 2, 3))]
BATCH_NORM_OPTIONS = [{}, {"momentum": None}, {"affine": False}, {"bias": False}, {"track_running_stats": False}]


@pytest.mark.parametrize("options", BATCH_NORM_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
@pytest.mark.parametrize("layers", BATCH_NORMS, ids=lambda c: f"{c[0].__name__}{c[2]}")
def test_batch_norm_trains_and_evaluates_as_torch(layers, options):
    """Three training steps (outputs, input and weight gradients, running statistics), the state
    dicts, then evaluation with the running statistics."""
    cls, torch_cls, shape = layers
    mine, theirs = cls(3, **options), torch_cls(3, **options).double()
    assert repr(mine) == repr(theirs)
    if mine.weight is not None:
        mine.weight.data[...] = rng(1).standard_normal(3)
        if mine.bias is not None:
            mine.bias.data[...] = rng(2).standard_normal(3)
        theirs.load_state_dict({k: torch.from_numpy(v) for k, v in nn.utils.torch_state_dict(mine).items()})
    for step in range(3):
        x = rng(10 + step).standard_normal(shape) * 3 + 1
        u = rng(20 + step).standard_normal(shape)
        xs, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, tout = mine(xs), theirs(xt)
        np.testing.assert_allclose(out.data, tout.detach().numpy(), atol=1e-10, err_msg=f"step {step}")
        (out * mg.tensor(u)).sum().backward()
        (tout * torch.tensor(u)).sum().backward()
        np.testing.assert_allclose(xs.grad.data, xt.grad.numpy(), atol=1e-10, err_msg=f"input gradient, step {step}")
        for p, tp in zip(mine.parameters(), theirs.parameters()):
            np.testing.assert_allclose(p.grad.data, tp.grad.numpy(), atol=1e-10, err_msg=f"weight gradient, step {step}")
            p.grad, tp.grad = None, None
    state, tstate = mine.state_dict(), {k: v.numpy() for k, v in theirs.state_dict().items()}
    assert state.keys() == tstate.keys()
    for name in state:
        np.testing.assert_allclose(state[name], tstate[name], rtol=1e-12, err_msg=name)
        assert state[name].dtype == tstate[name].dtype, name
    mine.eval(), theirs.eval()
    x = rng(30).standard_normal(shape)
    np.testing.assert_allclose(mine(mg.tensor(x)).data, theirs(torch.tensor(x)).detach().numpy(), atol=1e-10)
    if mine.track_running_stats:
        np.testing.assert_allclose(mine(mg.tensor(x[:2])).data[:1], mine(mg.tensor(x[:1])).data, err_msg="in eval each example is normalised alone")


def test_batch_norm_second_derivatives_and_compiled_evaluation():
    from minigrad import jit

    x = rng(3).standard_normal((5, 2, 3))
    w, b = rng(4).standard_normal(2), rng(5).standard_normal(2)
    _compare(
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        lambda x, w, b: torch.nn.functional.batch_norm(x, None, None, w, b, training=True),
        [x, w, b],
        second=True,
    )
    bn = nn.BatchNorm1d(2)
    bn(mg.tensor(x))
    with pytest.raises(mg.TracerError, match="BatchNorm in training mode.*model.eval"):
        jit.compile(lambda x: bn(x).sum())(mg.tensor(x, requires_grad=True))
    assert int(bn.num_batches_tracked.data) == 1, "the refused call changed nothing"
    bn.eval()
    compiled = jit.compile(lambda x: bn(x).sum())
    np.testing.assert_allclose(compiled(mg.tensor(x)).item(), bn(mg.tensor(x)).sum().item(), rtol=1e-12)


def test_batch_norm_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match=r"BatchNorm2d: expected 4-D input \(N, C, \.\.\.\), got shape \(2, 3\)"):
        nn.BatchNorm2d(3)(mg.zeros(2, 3))
    with pytest.raises(ValueError, match=r"BatchNorm1d: expected 2-D or 3-D input"):
        nn.BatchNorm1d(3)(mg.zeros(2, 3, 4, 4))
    with pytest.raises(mg.ShapeError, match=r"batch_norm: running_mean has shape \(3,\); input of shape \(2, 4\) has 4 channels"):
        nn.BatchNorm1d(3)(mg.zeros(2, 4))
    bn = nn.BatchNorm1d(3)
    with pytest.raises(ValueError, match=r"more than 1 value per channel when training, got input of shape \(1, 3\)"):
        bn(mg.zeros(1, 3))
    assert int(bn.num_batches_tracked.data) == 0 and (bn.running_var.data == 1).all(), "a refused batch leaves the statistics alone"
    bn.eval()
    assert bn(mg.ones(1, 3)).shape == (1, 3), "one example is fine in evaluation"
    with pytest.raises(ValueError, match="batch_norm: evaluation .* running_mean and running_var"):
        F.batch_norm(mg.zeros(2, 3), None, None)


def test_batch_norm_state_saves_converts_and_resets():
    bn = nn.BatchNorm2d(2)
    for seed in range(2):
        bn(mg.tensor(rng(seed).standard_normal((3, 2, 2, 2)) + 5))
    buffer = io.BytesIO()
    mg.save(bn.state_dict(), buffer)
    fresh = nn.BatchNorm2d(2)
    fresh.load_state_dict(mg.load(io.BytesIO(buffer.getvalue())))
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_array_equal(getattr(fresh, name).data, getattr(bn, name).data, err_msg=name)
    assert fresh.num_batches_tracked.dtype == np.int64 and int(fresh.num_batches_tracked.data) == 2
    assert [name for name, _ in bn.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    assert len(bn.parameters()) == 2, "the statistics are no parameters: no optimizer updates them"
    bn.float()
    assert bn.running_mean.dtype == np.float32 and bn.num_batches_tracked.dtype == np.int64
    assert bn(mg.tensor(np.ones((2, 2, 1, 1), dtype=np.float32))).dtype == np.float32
    bn.reset_running_stats()
    assert (bn.running_mean.data == 0).all() and (bn.running_var.data == 1).all() and int(bn.num_batches_tracked.data) == 0


def test_cnn_with_batch_norm_trains_beside_torch_and_loads_its_state():
    """A conv → BatchNorm2d → ReLU classifier: SGD steps beside PyTorch, then the trained PyTorch
    state (running statistics included) loaded back evaluates as PyTorch does."""

    def build(lib):
        return lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU(), lib.nn.Flatten(), lib.nn.Linear(4 * 4 * 4, 3))

    model, module = build(mg), build(torch).double()
    module.load_state_dict({k: torch.from_numpy(v) for k, v in nn.utils.torch_state_dict(model).items()})
    opt, topt = mg.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(module.parameters(), lr=0.1)
    for step in range(4):
        x, y = rng(40 + step).standard_normal((6, 1, 6, 6)), rng(50 + step).integers(0, 3, 6)
        loss = F.cross_entropy(model(mg.tensor(x)), mg.tensor(y))
        tloss = torch.nn.functional.cross_entropy(module(torch.tensor(x)), torch.tensor(y))
        np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-10, err_msg=f"step {step}")
        opt.zero_grad(), topt.zero_grad()
        loss.backward(), tloss.backward()
        opt.step(), topt.step()
    fresh = build(mg)
    nn.utils.load_torch_state_dict(fresh, module.state_dict())
    fresh.eval(), module.eval()
    x = rng(60).standard_normal((5, 1, 6, 6))
    np.testing.assert_allclose(fresh(mg.tensor(x)).data, module(torch.tensor(x)).detach().numpy(), atol=1e-10)
    assert int(fresh.layers[1].num_batches_tracked.data) == 4


PAD_CASES = [((2, 3, 5), (1, 2)), ((2, 3, 4, 5), (2, 1, 3, 0)), ((2, 3, 4, 5), (0, 0, 1, 1)), ((1, 2, 3, 4, 5), (1, 1, 2, 0, 1, 2)), ((2, 3, 4), (3, 3))]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape, widths", PAD_CASES, ids=[str(c[1]) for c in PAD_CASES])
def test_pad_modes_match_torch_with_gradients(mode, shape, widths):
    """The copied entries' gradients add up (an edge replicated three times gets three adjoints)."""
    _compare(lambda x: F.pad(x, widths, mode=mode), lambda x: torch.nn.functional.pad(x, widths, mode=mode), [rng().standard_normal(shape)])


def test_pad_mode_errors_and_conv2d_padding_mode():
    with pytest.raises(ValueError, match=r"mode='reflect' needs widths of at most 3 on axis 2 of a tensor of shape \(1, 2, 4\); got \(4, 0\)"):
        F.pad(mg.zeros(1, 2, 4), (4, 0), mode="reflect")
    with pytest.raises(ValueError, match="mode must be 'constant', 'reflect', 'replicate' or 'circular', got 'mirror'"):
        F.pad(mg.zeros(1, 2, 4), (1, 1), mode="mirror")
    with pytest.raises(ValueError, match="value=2.0 is for mode='constant'"):
        F.pad(mg.zeros(1, 2, 4), (1, 1), mode="replicate", value=2.0)
    np.testing.assert_array_equal(F.pad(mg.ones(2, 2), (1, 1), value=3.0).data[0], [3.0, 1.0, 1.0, 3.0])
    for mode in ("reflect", "replicate", "circular"):
        conv = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode, rng=rng())
        tconv = torch.nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode).double()
        nn.utils.load_torch_state_dict(conv, tconv.state_dict())
        _compare(conv, tconv, [rng(1).standard_normal((2, 2, 5, 6))])
        assert repr(conv) == repr(tconv)
    with pytest.raises(ValueError, match="padding_mode must be"):
        nn.Conv2d(2, 3, 3, padding_mode="same")


ATTENTION_MASKS = {
    "none": {},
    "key padding": {"key_padding_mask": np.array([[False, True, False, False, True]] * 3)},
    "bool mask": {"attn_mask": np.triu(np.ones((4, 5), dtype=bool), k=2)},
    "float mask per head": {"attn_mask": rng(7).standard_normal((3 * 2, 4, 5))},
    "per-head weights": {"average_attn_weights": False},
    "both masks": {"attn_mask": np.triu(np.ones((4, 5), dtype=bool), k=2), "key_padding_mask": np.array([[False, False, True, False, False]] * 3)},
}


@pytest.mark.parametrize("masks", ATTENTION_MASKS.values(), ids=ATTENTION_MASKS.keys())
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_multihead_attention_matches_torch(masks, batch_first, bias):
    """Cross-attention (4 queries, 5 keys, batch 3, 8 channels, 2 heads) from PyTorch's weights:
    outputs, attention weights and the gradients of query, key, value and every weight."""
    theirs = torch.nn.MultiheadAttention(8, 2, bias=bias, batch_first=batch_first).double()
    mine = nn.MultiheadAttention(8, 2, bias=bias, batch_first=batch_first, rng=rng())
    assert sorted(nn.utils.torch_state_dict(mine)) == sorted(theirs.state_dict())
    nn.utils.load_torch_state_dict(mine, theirs.state_dict())
    layout = (lambda t: (3, t, 8)) if batch_first else (lambda t: (t, 3, 8))
    arrays = [rng(1).standard_normal(layout(4)), rng(2).standard_normal(layout(5)), rng(3).standard_normal(layout(5))]
    xs, ts = [mg.tensor(a, requires_grad=True) for a in arrays], [torch.tensor(a, requires_grad=True) for a in arrays]
    out, weights = mine(*xs, **masks)
    tout, tweights = theirs(*ts, **{k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in masks.items()})
    np.testing.assert_allclose(out.data, tout.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(weights.data, tweights.detach().numpy(), atol=1e-12)
    u = rng(4).standard_normal(out.shape)
    ((out * mg.tensor(u)).sum() + (weights * weights).sum()).backward()
    ((tout * torch.tensor(u)).sum() + (tweights * tweights).sum()).backward()
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.data, t.grad.numpy(), atol=1e-12)
    grads = {name: p.grad.data for name, p in mine.named_parameters()}
    np.testing.assert_allclose(grads["in_proj_weight"], theirs.in_proj_weight.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(grads["out_proj.weight"], theirs.out_proj.weight.grad.numpy().T, atol=1e-12)


def test_multihead_self_attention_unbatched_causal_and_errors():
    theirs = torch.nn.MultiheadAttention(6, 3).double()
    mine = nn.MultiheadAttention(6, 3)
    nn.utils.load_torch_state_dict(mine, theirs.state_dict())
    x = rng(5).standard_normal((4, 6))
    causal = ~np.tril(np.ones((4, 4), dtype=bool))
    out, weights = mine(mg.tensor(x), mg.tensor(x), mg.tensor(x), attn_mask=causal, is_causal=True)
    tout, tweights = theirs(*(torch.tensor(x),) * 3, attn_mask=torch.tensor(causal), is_causal=True)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(weights.data, tweights.detach().numpy(), atol=1e-12)
    assert out.shape == (4, 6) and weights.shape == (4, 4) and np.allclose(np.triu(weights.data, 1), 0.0)
    assert mine(mg.tensor(x), mg.tensor(x), mg.tensor(x), need_weights=False)[1] is None
    fresh = nn.MultiheadAttention(6, 3, rng=rng())
    bound = np.sqrt(6.0 / (18 + 6))
    assert np.abs(fresh.in_proj_weight.data).max() <= bound and (fresh.in_proj_bias.data == 0).all() and (fresh.out_proj.bias.data == 0).all()
    with pytest.raises(ValueError, match="embed_dim 6 must be divisible by num_heads 4"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(mg.ShapeError, match=r"value of shape \(4, 6\) does not fit: expected \(L, N, E\).*last axis is vdim = 2"):
        nn.MultiheadAttention(6, 3, vdim=2)(mg.tensor(x), mg.tensor(x), mg.tensor(x))
    with pytest.raises(mg.ShapeError, match=r"key of shape \(4, 5\) does not fit: expected \(L, N, E\).*last axis is kdim = 6"):
        mine(mg.tensor(x), mg.zeros(4, 5), mg.tensor(x))
    with pytest.raises(ValueError, match="is_causal=True is a hint"):
        mine(mg.tensor(x), mg.tensor(x), mg.tensor(x), is_causal=True)
    with pytest.raises(mg.ShapeError, match=r"MultiheadAttention attn_mask: the mask of shape \(3, 3\) does not broadcast"):
        mine(mg.tensor(x), mg.tensor(x), mg.tensor(x), attn_mask=np.zeros((3, 3), dtype=bool))


MULTIHEAD_OPTIONS = {
    "kdim and vdim": {"kdim": 5, "vdim": 3},
    "bias_kv": {"add_bias_kv": True},
    "zero_attn": {"add_zero_attn": True},
    "all three": {"kdim": 5, "vdim": 3, "add_bias_kv": True, "add_zero_attn": True},
}


@pytest.mark.parametrize("masks", ["bool", "float per head"])
@pytest.mark.parametrize("options", MULTIHEAD_OPTIONS.values(), ids=MULTIHEAD_OPTIONS.keys())
def test_multihead_attention_options_match_torch(options, masks):
    """Keys and values of their own sizes (separate q/k/v projection weights), the learnt bias key
    and value, the zero key and value, with each kind of mask (widened for the appended keys):
    outputs, per-head weights and the gradients of the inputs and of every parameter."""
    theirs = torch.nn.MultiheadAttention(8, 2, **options).double()
    mine = nn.MultiheadAttention(8, 2, rng=rng(), **options)
    assert sorted(nn.utils.torch_state_dict(mine)) == sorted(theirs.state_dict())
    assert (mine.in_proj_weight is None) == (theirs.in_proj_weight is None) and (mine.bias_k is None) == (theirs.bias_k is None)
    nn.utils.load_torch_state_dict(mine, theirs.state_dict())
    arrays = [rng(1).standard_normal((4, 3, 8)), rng(2).standard_normal((5, 3, options.get("kdim", 8))), rng(3).standard_normal((5, 3, options.get("vdim", 8)))]
    padding = np.zeros((3, 5), dtype=bool)
    padding[1, [0, 3]] = True
    kw = {"key_padding_mask": padding, "attn_mask": np.triu(np.ones((4, 5), dtype=bool), k=2)} if masks == "bool" else {"attn_mask": rng(4).standard_normal((3 * 2, 4, 5))}
    xs, ts = [mg.tensor(a, requires_grad=True) for a in arrays], [torch.tensor(a, requires_grad=True) for a in arrays]
    out, weights = mine(*xs, average_attn_weights=False, **kw)
    tout, tweights = theirs(*ts, average_attn_weights=False, **{k: torch.tensor(v) for k, v in kw.items()})
    np.testing.assert_allclose(out.data, tout.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(weights.data, tweights.detach().numpy(), atol=1e-12)
    u = rng(5).standard_normal(out.shape)
    ((out * mg.tensor(u)).sum() + (weights * weights).sum()).backward()
    ((tout * torch.tensor(u)).sum() + (tweights * tweights).sum()).backward()
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.data, t.grad.numpy(), atol=1e-12)
    tgrads = {name: p.grad.numpy() for name, p in theirs.named_parameters()}
    for name, p in mine.named_parameters():
        np.testing.assert_allclose(p.grad.data, tgrads[name].T if name == "out_proj.weight" else tgrads[name], atol=1e-12, err_msg=name)


@pytest.mark.parametrize("options", [{}, {"is_causal": True}, {"attn_mask": "bool"}, {"attn_mask": "float"}, {"scale": 0.3}], ids=["plain", "causal", "bool mask", "float mask", "scale"])
def test_scaled_dot_product_attention_matches_torch_to_second_order(options):
    shapes = [(2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 2)]
    masks = {"bool": rng(8).random((4, 6)) < 0.7, "float": rng(8).standard_normal((4, 6))}
    masks["bool"][:, 0] = True  # every query attends to something
    kw = {k: masks[v] if k == "attn_mask" else v for k, v in options.items()}
    tkw = {k: torch.tensor(v) if k == "attn_mask" else v for k, v in kw.items()}
    _compare(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kw),
        lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, **tkw),
        [rng(i).standard_normal(s) for i, s in enumerate(shapes)],
        second=True,
    )


@pytest.mark.parametrize("causal", [False, True])
def test_grouped_query_attention_matches_torch_to_second_order(causal):
    """enable_gqa: 6 query heads over 2 key and value heads (each serving 3), as Llama's attention."""
    shapes = [(2, 6, 4, 5), (2, 2, 7, 5), (2, 2, 7, 3)] if not causal else [(2, 6, 4, 5), (2, 2, 4, 5), (2, 2, 4, 3)]
    _compare(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True),
        lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True),
        [rng(i).standard_normal(s) for i, s in enumerate(shapes)],
        second=True,
    )
    q = mg.zeros(2, 4, 3, 5)
    with pytest.raises(mg.ShapeError, match=r"enable_gqa needs .* query heads are a multiple of the key and value heads; got shapes \(2, 4, 3, 5\), \(2, 3, 3, 5\)"):
        F.scaled_dot_product_attention(q, mg.zeros(2, 3, 3, 5), mg.zeros(2, 3, 3, 5), enable_gqa=True)


@pytest.mark.parametrize("repeats, dim", [(2, None), (3, 1), ([1, 0, 2], 1), ([2, 1], 0), (2, -1)], ids=str)
def test_repeat_interleave_matches_torch(repeats, dim):
    x = rng().standard_normal((2, 3))
    counts = torch.tensor(repeats) if isinstance(repeats, list) else repeats
    _compare(lambda x: x.repeat_interleave(repeats, dim=dim), lambda x: x.repeat_interleave(counts, dim=dim), [x])
    np.testing.assert_array_equal(mg.repeat_interleave(mg.tensor(x), repeats, dim).data, torch.repeat_interleave(torch.tensor(x), counts, dim).numpy())
    with pytest.raises(mg.ShapeError, match=r"repeat_interleave: repeats must be a non-negative int or one per slice \(3 along dim 1"):
        mg.tensor(x).repeat_interleave([1, 2], dim=1)


def test_scaled_dot_product_attention_dropout_and_errors():
    q = mg.tensor(rng().standard_normal((2, 4, 3)))
    plain = F.scaled_dot_product_attention(q, q, q)
    dropped = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5, rng=np.random.default_rng(0))
    assert dropped.shape == plain.shape and not np.allclose(dropped.data, plain.data)
    with pytest.raises(mg.ShapeError, match=r"expects query \(\.\.\., L, E\), key \(\.\.\., S, E\).*\(2, 4, 3\), \(2, 4, 2\)"):
        F.scaled_dot_product_attention(q, q[..., :2], q)
    with pytest.raises(ValueError, match="attn_mask or is_causal=True, not both"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=np.ones((4, 4), dtype=bool), is_causal=True)


INTERPOLATIONS = [
    ((2, 3, 5), dict(size=8, mode="nearest")),
    ((2, 3, 7), dict(size=3, mode="nearest")),
    ((2, 3, 5), dict(size=8, mode="nearest-exact")),
    ((2, 3, 5), dict(size=8, mode="linear")),
    ((2, 3, 5), dict(size=8, mode="linear", align_corners=True)),
    ((2, 3, 8), dict(scale_factor=0.5, mode="linear")),
    ((2, 3, 4, 5), dict(size=(7, 3), mode="bilinear")),
    ((2, 3, 4, 5), dict(scale_factor=2, mode="bilinear")),
    ((2, 3, 4, 5), dict(scale_factor=1.7, mode="bilinear")),
    ((2, 3, 4, 5), dict(scale_factor=(1.5, 2.5), mode="bilinear", align_corners=True)),
    ((2, 3, 4, 5), dict(size=(1, 1), mode="bilinear", align_corners=True)),
    ((2, 3, 4, 5), dict(scale_factor=2, mode="nearest")),
    ((2, 3, 4, 5), dict(size=(2, 3), mode="area")),
    ((1, 2, 3, 4, 5), dict(size=(4, 5, 6), mode="trilinear")),
    ((2, 3, 4, 5), dict(scale_factor=2, mode="bicubic")),
    ((2, 3, 4, 5), dict(size=(9, 3), mode="bicubic")),  # up one axis, down the other: neighbours past both edges
    ((2, 3, 4, 5), dict(scale_factor=(1.5, 2.5), mode="bicubic", align_corners=True)),
    ((2, 3, 1, 5), dict(size=(3, 7), mode="bicubic")),  # a height of one: every neighbour is the one row
]


@pytest.mark.parametrize("shape, options", INTERPOLATIONS, ids=[f"{o['mode']}-{o.get('size', o.get('scale_factor'))}-{o.get('align_corners')}" for _, o in INTERPOLATIONS])
def test_interpolate_matches_torch(shape, options):
    _compare(lambda x: F.interpolate(x, **options), lambda x: torch.nn.functional.interpolate(x, **options), [rng().standard_normal(shape)])


def test_upsample_and_interpolate_errors():
    x = rng().standard_normal((1, 2, 3, 3))
    up, tup = nn.Upsample(scale_factor=2, mode="bilinear"), torch.nn.Upsample(scale_factor=2, mode="bilinear")
    assert repr(up) == repr(tup)
    np.testing.assert_allclose(up(mg.tensor(x)).data, tup(torch.tensor(x)).numpy(), atol=1e-12)
    with pytest.raises(mg.ShapeError, match=r"mode='bilinear' needs 4-D input \(N, C, spatial...\), got shape \(2, 3\)"):
        F.interpolate(mg.zeros(2, 3), size=4, mode="bilinear")
    with pytest.raises(ValueError, match="give exactly one of size and scale_factor"):
        F.interpolate(mg.tensor(x), size=4, scale_factor=2)
    with pytest.raises(ValueError, match="align_corners is for the linear and cubic modes"):
        F.interpolate(mg.tensor(x), size=4, align_corners=True)
    with pytest.raises(ValueError, match="interpolate: mode must be one of 'nearest', .*'bicubic'.*got 'cubic'"):
        F.interpolate(mg.tensor(x), size=4, mode="cubic")
    with pytest.raises(mg.ShapeError, match=r"mode='bicubic' needs 4-D input"):
        F.interpolate(mg.zeros(1, 2, 3), size=4, mode="bicubic")
    with pytest.raises(ValueError, match=r"output size \(0, 0\) must give a positive length"):
        F.interpolate(mg.tensor(x), scale_factor=0.2)


CONV_TRANSPOSE_CASES = [  # (in, out, kernel, stride, padding, output_padding, dilation, input height and width)
    (2, 3, 3, 1, 0, 0, 1, (4, 5)),
    (2, 3, 4, 2, 1, 0, 1, (4, 4)),  # DCGAN's doubling layer
    (2, 3, 3, 2, 1, 1, 1, (3, 5)),
    (3, 2, 4, 1, 0, 0, 1, (1, 1)),  # DCGAN's first layer: noise (N, nz, 1, 1) to 4 x 4
    (2, 2, 3, 3, 4, 2, 1, (3, 3)),  # padding beyond dilation·(k − 1): the output is cropped
    (2, 3, 3, 2, 0, 1, 2, (3, 4)),
    (2, 3, (2, 3), (1, 2), (0, 1), 0, 1, (4, 4)),
]


@pytest.mark.parametrize("case", CONV_TRANSPOSE_CASES, ids=range(len(CONV_TRANSPOSE_CASES)))
def test_conv_transpose2d_matches_torch_to_second_order(case):
    c_in, c_out, k, stride, padding, output_padding, dilation, hw = case
    kw = dict(stride=stride, padding=padding, output_padding=output_padding, dilation=dilation)
    layer = nn.ConvTranspose2d(c_in, c_out, k, rng=rng(), **kw)
    x = rng(1).standard_normal((2, c_in) + hw)
    _compare(
        lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
        lambda x, w, b: torch.nn.functional.conv_transpose2d(x, w, b, **kw),
        [x, layer.weight.data, layer.bias.data],
        second=True,
    )
    theirs = torch.nn.ConvTranspose2d(c_in, c_out, k, **kw).double()
    assert repr(layer) == repr(theirs)
    nn.utils.load_torch_state_dict(layer, theirs.state_dict())  # the same layout: nothing transposed
    np.testing.assert_array_equal(layer.weight.data, theirs.weight.detach().numpy())
    np.testing.assert_allclose(layer(mg.tensor(x)).data, theirs(torch.tensor(x)).detach().numpy(), atol=1e-12)


def test_conv_transpose2d_initial_bound_and_errors():
    layer = nn.ConvTranspose2d(3, 4, 5, rng=rng())
    assert layer.weight.shape == (3, 4, 5, 5) and np.abs(layer.weight.data).max() <= 1 / np.sqrt(4 * 25)
    with pytest.raises(mg.ShapeError, match=r"conv_transpose2d: input of shape \(2, 2, 8, 8\) must be \(batch, 3, height, width\)"):
        layer(mg.zeros(2, 2, 8, 8))
    with pytest.raises(ValueError, match=r"output_padding \(2, 2\) must be smaller than the stride \(2, 2\)"):
        F.conv_transpose2d(mg.zeros(1, 3, 2, 2), layer.weight, stride=2, output_padding=2)
    with pytest.raises(ValueError, match="ConvTranspose2d: padding_mode must be 'zeros', got 'reflect'"):
        nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="ConvTranspose2d: padding must be an int or a tuple of ints .*got 'same'"):
        nn.ConvTranspose2d(4, 4, 3, padding="same")
    weight = nn.init.normal_(layer.weight.data, 0.0, 0.02, rng=rng(2))  # PyTorch's `nn.init.normal_(m.weight.data, ...)`
    assert weight is layer.weight.data and abs(weight.std() - 0.02) < 0.005


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_encoder_matches_torch(norm_first, activation, batch_first):
    """Two layers and a final LayerNorm from PyTorch's weights, with a causal float mask and a key
    padding mask: outputs and the input's and every weight's gradients, then in evaluation mode."""
    kw = dict(dim_feedforward=16, dropout=0.0, activation=activation, norm_first=norm_first, batch_first=batch_first)
    theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, **kw), 2, norm=torch.nn.LayerNorm(8), enable_nested_tensor=False).double()
    mine = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, rng=rng(), **kw), 2, norm=nn.LayerNorm(8))
    assert sorted(nn.utils.torch_state_dict(mine)) == sorted(theirs.state_dict())
    nn.utils.load_torch_state_dict(mine, theirs.state_dict())
    x = rng(1).standard_normal((3, 5, 8))  # (N, L, E) with batch_first, else (L, N, E)
    length, batch = (5, 3) if batch_first else (3, 5)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(length, dtype=torch.float64).numpy()
    padding = np.zeros((batch, length), dtype=bool)
    padding[0, -1] = True
    xs, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = mine(xs, mask=mask, src_key_padding_mask=padding)
    tout = theirs(xt, mask=torch.tensor(mask), src_key_padding_mask=torch.tensor(padding))
    np.testing.assert_allclose(out.data, tout.detach().numpy(), atol=1e-10)
    u = rng(2).standard_normal(out.shape)
    (out * mg.tensor(u)).sum().backward()
    (tout * torch.tensor(u)).sum().backward()
    np.testing.assert_allclose(xs.grad.data, xt.grad.numpy(), atol=1e-10)
    theirs_grads = {name: p.grad.numpy() for name, p in theirs.named_parameters()}
    for name, p in mine.named_parameters():
        tgrad = theirs_grads[name.replace("layers.layers.", "layers.")]  # ModuleList's own level
        linear = name.endswith(("linear1.weight", "linear2.weight", "out_proj.weight"))  # (in, out) here, (out, in) there
        np.testing.assert_allclose(p.grad.data, tgrad.T if linear else tgrad, atol=1e-10, err_msg=name)
    mine.eval(), theirs.eval()
    with torch.no_grad():
        np.testing.assert_allclose(mine(mg.tensor(x), mask=mask).data, theirs(torch.tensor(x), mask=torch.tensor(mask)).numpy(), atol=1e-10)


def test_transformer_encoder_layers_are_copies_sharing_dropouts_generator():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5, rng=rng())
    encoder = nn.TransformerEncoder(layer, 3)
    weights = [block.linear1.weight for block in encoder.layers]
    assert len({id(w) for w in weights}) == 3 and all(np.array_equal(w.data, layer.linear1.weight.data) for w in weights)
    assert len({id(block.dropout.rng) for block in encoder.layers}) == 1, "one stream of masks, not three identical ones"
    assert len(encoder.parameters()) == 3 * len(layer.parameters())
    with pytest.raises(ValueError, match="activation must be 'relu', 'gelu' or a function, got 'tanh'"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    x = mg.tensor(rng(3).standard_normal((4, 2, 8)))
    assert encoder(x).shape == (4, 2, 8) and not np.allclose(encoder(x).data, encoder(x).data), "dropout draws anew each call"


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_matches_torch(norm_first, batch_first):
    """nn.Transformer (two encoder and two decoder layers, each stack's final LayerNorm) from
    PyTorch's weights, with the target's causal mask, a float memory mask and padding in source,
    target and memory: outputs and the gradients of source, target and every weight."""
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16, dropout=0.0, norm_first=norm_first, batch_first=batch_first)
    theirs = torch.nn.Transformer(**kw).double()
    mine = nn.Transformer(rng=rng(), **kw)
    assert sorted(nn.utils.torch_state_dict(mine)) == sorted(theirs.state_dict())
    nn.utils.load_torch_state_dict(mine, theirs.state_dict())
    (S, T, N) = (5, 4, 3)
    layout = (lambda t: (N, t, 8)) if batch_first else (lambda t: (t, N, 8))
    src, tgt = rng(1).standard_normal(layout(S)), rng(2).standard_normal(layout(T))
    src_padding, tgt_padding = np.zeros((N, S), dtype=bool), np.zeros((N, T), dtype=bool)
    src_padding[0, -2:], tgt_padding[2, -1] = True, True
    masks = {
        "tgt_mask": nn.Transformer.generate_square_subsequent_mask(T).data,
        "memory_mask": rng(3).standard_normal((T, S)),
        "src_key_padding_mask": src_padding,
        "tgt_key_padding_mask": tgt_padding,
        "memory_key_padding_mask": src_padding,
    }
    xs, ts = [mg.tensor(a, requires_grad=True) for a in (src, tgt)], [torch.tensor(a, requires_grad=True) for a in (src, tgt)]
    out = mine(*xs, **masks)
    tout = theirs(*ts, **{k: torch.tensor(v) for k, v in masks.items()})
    np.testing.assert_allclose(out.data, tout.detach().numpy(), atol=1e-10)
    u = rng(4).standard_normal(out.shape)
    (out * mg.tensor(u)).sum().backward()
    (tout * torch.tensor(u)).sum().backward()
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.data, t.grad.numpy(), atol=1e-10)
    tgrads = {name: p.grad.numpy() for name, p in theirs.named_parameters()}
    for name, p in mine.named_parameters():
        tgrad = tgrads[name.replace("layers.layers.", "layers.")]  # ModuleList's own level
        linear = name.endswith(("linear1.weight", "linear2.weight", "out_proj.weight"))  # (in, out) here, (out, in) there
        np.testing.assert_allclose(p.grad.data, tgrad.T if linear else tgrad, atol=1e-10, err_msg=name)


def test_transformer_mask_initialisation_custom_parts_and_errors():
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(mask.data, torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64).numpy())
    assert nn.Transformer.generate_square_subsequent_mask(3, device="cpu", dtype=mg.float32).dtype == np.float32
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=3, dim_feedforward=16, rng=rng())
    assert len(model.encoder.layers) == 1 and len(model.decoder.layers) == 3
    for name, p in model.named_parameters():  # every matrix redrawn by Xavier's rule, as PyTorch's _reset_parameters
        if p.ndim > 1:
            assert np.abs(p.data).max() <= np.sqrt(6.0 / sum(p.shape)), name
    shared = model.decoder.layers[0].linear1.weight.data
    assert not np.array_equal(shared, model.decoder.layers[1].linear1.weight.data), "each layer drawn anew, not a copy"
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, rng=rng()), 1)
    custom = nn.Transformer(d_model=8, nhead=2, dim_feedforward=16, custom_encoder=encoder, rng=rng())
    assert custom.encoder is encoder and custom.encoder.norm is None and len(custom.decoder.layers) == 6
    x = mg.zeros(5, 2, 8)
    assert model(x, mg.zeros(3, 2, 8)).shape == (3, 2, 8)
    with pytest.raises(mg.ShapeError, match=r"the batch number of src and tgt must be equal: src \(5, 2, 8\), tgt \(3, 4, 8\) \(\(S, N, E\)\)"):
        model(x, mg.zeros(3, 4, 8))
    with pytest.raises(mg.ShapeError, match=r"feature number of src and tgt must be equal to d_model = 8"):
        model(x, mg.zeros(3, 2, 6))
    with pytest.raises(ValueError, match="TransformerDecoderLayer: activation must be 'relu', 'gelu' or a function"):
        nn.TransformerDecoderLayer(8, 2, activation="tanh")
    with pytest.raises(mg.MinigradError, match="device 'cuda'"):
        nn.Transformer.generate_square_subsequent_mask(3, device="cuda")


RECURRENT_OPTIONS = {
    "one layer": {},
    "two layers, bidirectional": {"num_layers": 2, "bidirectional": True},
    "three layers, batch first, no bias": {"num_layers": 3, "batch_first": True, "bias": False},
}


@pytest.mark.parametrize("initial", [False, True], ids=["zero state", "given state"])
@pytest.mark.parametrize("options", RECURRENT_OPTIONS.values(), ids=RECURRENT_OPTIONS.keys())
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_lstm_and_gru_match_torch(kind, options, initial):
    """The layers from PyTorch's weights (names such as weight_hh_l1_reverse, each weight
    transposed): repr, outputs, final states and the gradients of input, initial state and every
    weight; then one unbatched sequence."""
    theirs = getattr(torch.nn, kind)(3, 4, **options).double()
    mine = getattr(nn, kind)(3, 4, rng=rng(), **options)
    assert repr(mine) == repr(theirs)
    assert [name for name, _ in mine.named_parameters()] == [name for name, _ in theirs.named_parameters()]
    nn.utils.load_torch_state_dict(mine, theirs.state_dict())
    x = rng(1).standard_normal((2, 5, 3) if options.get("batch_first") else (5, 2, 3))
    count = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    states = [rng(2 + i).standard_normal((count, 2, 4)) for i in range(2 if kind == "LSTM" else 1)] if initial else []
    xs, ss = [mg.tensor(a, requires_grad=True) for a in [x, *states]], [torch.tensor(a, requires_grad=True) for a in [x, *states]]
    pack = (lambda s: tuple(s) if kind == "LSTM" else s[0]) if initial else (lambda s: None)
    out, final = mine(xs[0], pack(xs[1:]))
    tout, tfinal = theirs(ss[0], pack(ss[1:]))
    finals, tfinals = (final, tfinal) if kind == "LSTM" else ((final,), (tfinal,))
    np.testing.assert_allclose(out.data, tout.detach().numpy(), atol=1e-12)
    for f, tf in zip(finals, tfinals):
        assert f.shape == (count, 2, 4)
        np.testing.assert_allclose(f.data, tf.detach().numpy(), atol=1e-12)
    weights = [rng(9 + i).standard_normal(t.shape) for i, t in enumerate([out, *finals])]
    sum((t * mg.tensor(w)).sum() for t, w in zip([out, *finals], weights)).backward()
    sum((t * torch.tensor(w)).sum() for t, w in zip([tout, *tfinals], weights)).backward()
    for a, t in zip(xs, ss):
        np.testing.assert_allclose(a.grad.data, t.grad.numpy(), atol=1e-12)
    tgrads = dict((name, p.grad.numpy()) for name, p in theirs.named_parameters())
    for name, p in mine.named_parameters():
        np.testing.assert_allclose(p.grad.data, tgrads[name].T if name.startswith("weight") else tgrads[name], atol=1e-12, err_msg=name)
    one = rng(5).standard_normal((5, 3))
    out, final = mine(mg.tensor(one))
    tout, tfinal = theirs(torch.tensor(one))
    np.testing.assert_allclose(out.data, tout.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose((final[0] if kind == "LSTM" else final).data, (tfinal[0] if kind == "LSTM" else tfinal).detach().numpy(), atol=1e-12)


def test_gru_cell_matches_torch_to_second_order():
    cell, theirs = nn.GRUCell(3, 4, rng=rng()), torch.nn.GRUCell(3, 4).double()
    assert repr(cell) == repr(theirs) and repr(nn.GRUCell(3, 4, bias=False)) == repr(torch.nn.GRUCell(3, 4, bias=False))
    nn.utils.load_torch_state_dict(cell, theirs.state_dict())
    _compare(cell, theirs, [rng(1).standard_normal((2, 3)), rng(2).standard_normal((2, 4))], second=True)
    _compare(cell, theirs, [rng(3).standard_normal(3)])  # unbatched, from the zero state
    with pytest.raises(mg.ShapeError, match=r"GRUCell: input must be \(batch, 3\), got shape \(2, 4\)"):
        cell(mg.zeros(2, 4))


def test_recurrent_layers_dropout_and_errors():
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5, rng=rng())
    x = mg.tensor(rng(1).standard_normal((5, 2, 3)))
    assert not np.allclose(lstm(x)[0].data, lstm(x)[0].data), "dropout between the layers draws anew each call"
    lstm.eval()
    np.testing.assert_array_equal(lstm(x)[0].data, lstm(x)[0].data)
    single = nn.LSTM(3, 4, dropout=0.5, rng=rng())  # dropout after the last layer: none, as in PyTorch
    np.testing.assert_array_equal(single(x)[0].data, single(x)[0].data)
    assert lstm.flatten_parameters() is None
    with pytest.raises(mg.ShapeError, match=r"LSTM: input must be \(L, N, input_size\) or unbatched \(L, input_size\) with input_size = 3, got shape \(5, 2, 4\)"):
        lstm(mg.zeros(5, 2, 4))
    with pytest.raises(mg.ShapeError, match=r"GRU: expected h_0 of shape \(2, 2, 4\) \(layers · directions, batch, hidden\), got shapes \[\(1, 2, 4\)\]"):
        nn.GRU(3, 4, bidirectional=True)(x, mg.zeros(1, 2, 4))
    with pytest.raises(mg.ShapeError, match=r"LSTM: expected \(h_0, c_0\), each of shape \(2, 2, 4\)"):
        lstm(x, mg.zeros(2, 2, 4))
    with pytest.raises(ValueError, match="proj_size is not supported"):
        nn.LSTM(3, 4, proj_size=2)
    with pytest.raises(ValueError, match=r"GRU: num_layers must be a positive int and dropout a probability in \[0, 1\]; got 0 and 0.0"):
        nn.GRU(3, 4, num_layers=0)


ROBUST_LOSSES = [
    ("smooth_l1_loss", "SmoothL1Loss", {}),
    ("smooth_l1_loss", "SmoothL1Loss", {"beta": 0.4}),
    ("smooth_l1_loss", "SmoothL1Loss", {"beta": 0.0}),  # the L1 loss
    ("huber_loss", "HuberLoss", {"delta": 0.6}),
    ("kl_div", "KLDivLoss", {}),
    ("kl_div", "KLDivLoss", {"log_target": True}),
]
ROBUST_LOSS_CASES = [(*case, reduction) for case in ROBUST_LOSSES for reduction in ("mean", "sum", "none") + (("batchmean",) if case[0] == "kl_div" else ())]


@pytest.mark.parametrize("function, layer, options, reduction", ROBUST_LOSS_CASES, ids=[f"{f}-{o}-{r}" for f, _, o, r in ROBUST_LOSS_CASES])
def test_smooth_l1_huber_and_kl_losses_match_torch_to_second_order(function, layer, options, reduction):
    """Differences on both sides of the corner; for KL, a target with a zero probability (0 · log 0 = 0)
    and gradients with respect to input and target alike."""
    if function == "kl_div":
        prediction = np.log(rng().dirichlet(np.ones(4), 3))
        target = rng(1).dirichlet(np.ones(4), 3)
        if options.get("log_target"):
            target = np.log(target)
        else:
            target[:, 2] = 0.0
            target /= target.sum(1, keepdims=True)
    else:
        prediction, target = rng().standard_normal((3, 4)) * 2, rng(1).standard_normal((3, 4))
    kw = {**options, "reduction": reduction}
    second = options.get("beta") != 0.0  # the L1 loss has no curvature (PyTorch's second derivative is a ZeroTensor)
    if function == "kl_div" and not options.get("log_target"):  # the target, with its zero, as a constant
        _compare(lambda x: F.kl_div(x, mg.tensor(target), **kw), lambda x: torch.nn.functional.kl_div(x, torch.tensor(target), **kw), [prediction])
    else:
        _compare(lambda x, t: getattr(F, function)(x, t, **kw), lambda x, t: getattr(torch.nn.functional, function)(x, t, **kw), [prediction, target], second=second)
    mine, theirs = getattr(nn, layer)(**kw), getattr(torch.nn, layer)(**kw)
    np.testing.assert_allclose(mine(mg.tensor(prediction), mg.tensor(target)).data, theirs(torch.tensor(prediction), torch.tensor(target)).numpy(), atol=1e-12)


def test_robust_losses_refuse_bad_widths():
    with pytest.raises(ValueError, match="smooth_l1_loss: beta must be non-negative, got -1"):
        F.smooth_l1_loss(mg.zeros(2), mg.zeros(2), beta=-1)
    with pytest.raises(ValueError, match="huber_loss: delta must be positive, got 0"):
        nn.HuberLoss(delta=0)(mg.zeros(2), mg.zeros(2))
    with pytest.raises(ValueError, match=r"kl_div: the target has zero probabilities and requires grad, but d\(p log p\)/dp is −∞ at p = 0"):
        F.kl_div(mg.zeros(2), mg.tensor([0.0, 1.0], requires_grad=True))
    with pytest.raises(mg.ShapeError, match=r"kl_div: prediction has shape \(2, 3\) but target has shape \(3,\)"):
        F.kl_div(mg.zeros(2, 3), mg.zeros(3))
