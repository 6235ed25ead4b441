"""The activations, normalisations, distances and containers a PyTorch user reaches for beyond the
basic layers (Hardtanh ... Hardshrink, PReLU, GroupNorm, InstanceNorm, RMSNorm, normalize,
cosine_similarity, pairwise_distance, ModuleDict, ParameterList, ParameterDict) against PyTorch in
float64: values, gradients, second derivatives, reprs, errors and state-dict names."""

import warnings

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import nn
from minigrad.nn import functional as F
from oracles import compare_with_torch as _compare

TF = torch.nn.functional


def rng(seed=0):
    return np.random.default_rng(20261215 + seed)


def _torch_copy_of(mine, theirs):
    """`theirs` (a torch module) in float64 with `mine`'s state."""
    theirs = theirs.double()
    theirs.load_state_dict({k: torch.from_numpy(v) for k, v in nn.utils.torch_state_dict(mine).items()})
    return theirs


# --------------------------------------------------------------------------- activations
# (module name, module arguments, functional name, functional keywords)
ACTIVATIONS = [
    ("Hardtanh", (), "hardtanh", {}),
    ("Hardtanh", (-2.0, 3.0), "hardtanh", {"min_val": -2.0, "max_val": 3.0}),
    ("ReLU6", (), "relu6", {}),
    ("Mish", (), "mish", {}),
    ("Hardswish", (), "hardswish", {}),
    ("Hardsigmoid", (), "hardsigmoid", {}),
    ("Softsign", (), "softsign", {}),
    ("LogSigmoid", (), "logsigmoid", {}),
    ("SELU", (), "selu", {}),
    ("CELU", (), "celu", {}),
    ("CELU", (0.5,), "celu", {"alpha": 0.5}),
    ("GLU", (), "glu", {}),
    ("GLU", (0,), "glu", {"dim": 0}),
    ("Softmin", (1,), "softmin", {"dim": 1}),
    ("Softmin", (0,), "softmin", {"dim": 0}),
    ("Threshold", (0.1, -2.0), "threshold", {"threshold": 0.1, "value": -2.0}),
    ("Tanhshrink", (), "tanhshrink", {}),
    ("Softshrink", (), "softshrink", {}),
    ("Softshrink", (1.0,), "softshrink", {"lambd": 1.0}),
    ("Hardshrink", (), "hardshrink", {}),
    ("Hardshrink", (0.2,), "hardshrink", {"lambd": 0.2}),
]
_ids = [f"{name}{args}" for name, args, _, _ in ACTIVATIONS]


def _rtol(name):
    # PyTorch's Hardsigmoid backward multiplies by 1/6 rounded to float32 (0.1666666716), in float64 too
    return 1e-7 if name == "Hardsigmoid" else 1e-10


@pytest.mark.parametrize("name, args, function, keywords", ACTIVATIONS, ids=_ids)
def test_activation_modules_and_functions_match_torch_to_second_order(name, args, function, keywords):
    x = rng().standard_normal((4, 6)) * 3
    mine, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(mine) == repr(theirs)
    second = name != "Hardsigmoid"  # PyTorch does not differentiate hardsigmoid twice (here: 0, as for the other pieces of lines)
    _compare(mine, theirs, [x], second=second, rtol=_rtol(name))
    _compare(lambda x: getattr(F, function)(x, **keywords), lambda x: getattr(TF, function)(x, **keywords), [x], second=second, rtol=_rtol(name))


# the corners of the piecewise functions, the tails, and NaN
EDGES = np.array([-np.inf, -7, -6, -3, -2, -1, -0.5, -0.2, 0, 0.1, 0.2, 0.5, 1, 2, 3, 6, 7, np.inf, np.nan])


@pytest.mark.parametrize("name, args, function, keywords", [a for a in ACTIVATIONS if a[0] not in ("GLU", "Softmin")], ids=[i for i, a in zip(_ids, ACTIVATIONS) if a[0] not in ("GLU", "Softmin")])
def test_activations_at_their_corners_tails_and_nan_match_torch(name, args, function, keywords):
    """The derivative at a corner (x = min_val, x = ±λ, x = ±3) is a convention: PyTorch's. Values
    at ±∞ and NaN as PyTorch's, gradients at ±∞ too (a NaN's gradient is left unspecified)."""
    x = EDGES if name != "Hardswish" else EDGES[1:]  # PyTorch's hardswish(−∞) is −∞ · 0 = NaN; 0 here
    with np.errstate(all="ignore"):
        xs, ts = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, tout = getattr(F, function)(xs, **keywords), getattr(TF, function)(ts, **keywords)
        np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12, equal_nan=True)
        (grad,), (tgrad,) = mg.gradients(out.sum(), [xs]), torch.autograd.grad(tout.sum(), [ts])
    finite = ~np.isnan(x)
    np.testing.assert_allclose(grad.data[finite], tgrad.numpy()[finite], rtol=_rtol(name))


def test_activation_reprs_with_their_settings_match_torch():
    pairs = [
        (nn.Hardtanh(-2, 3, True), torch.nn.Hardtanh(-2, 3, True)),
        (nn.ReLU6(inplace=True), torch.nn.ReLU6(inplace=True)),
        (nn.Mish(True), torch.nn.Mish(True)),
        (nn.SELU(inplace=True), torch.nn.SELU(inplace=True)),
        (nn.Hardswish(True), torch.nn.Hardswish(True)),
        (nn.Hardsigmoid(True), torch.nn.Hardsigmoid(True)),
        (nn.CELU(2.0, True), torch.nn.CELU(2.0, True)),
        (nn.Threshold(0.1, 20, True), torch.nn.Threshold(0.1, 20, True)),
        (nn.PReLU(), torch.nn.PReLU()),
        (nn.PReLU(3, 0.1), torch.nn.PReLU(3, 0.1)),
        (nn.Softmin(dim=-1), torch.nn.Softmin(dim=-1)),
        (nn.Softmax(dim=1), torch.nn.Softmax(dim=1)),
        (nn.LogSoftmax(dim=0), torch.nn.LogSoftmax(dim=0)),
    ]
    for mine, theirs in pairs:
        assert repr(mine) == repr(theirs)
    assert isinstance(nn.ReLU6(), nn.Hardtanh) and (nn.ReLU6().min_val, nn.ReLU6().max_val) == (0.0, 6.0)


def test_inplace_is_accepted_and_the_result_is_a_new_tensor():
    data = rng().standard_normal(5) * 4
    x = mg.tensor(data.copy())
    for mine, theirs in [(nn.Hardtanh(inplace=True), TF.hardtanh(torch.tensor(data))), (nn.ReLU6(True), TF.relu6(torch.tensor(data))), (nn.CELU(inplace=True), TF.celu(torch.tensor(data)))]:
        np.testing.assert_allclose(mine(x).data, theirs.numpy(), rtol=1e-12)
    for function in ("hardtanh", "relu6", "mish", "hardswish", "hardsigmoid", "selu", "celu"):
        out = getattr(F, function)(x, inplace=True)
        assert out is not x
        np.testing.assert_allclose(out.data, getattr(TF, function)(torch.tensor(data)).numpy(), rtol=1e-12)
    np.testing.assert_array_equal(F.threshold(x, 0.0, 1.0, inplace=True).data, TF.threshold(torch.tensor(data), 0.0, 1.0).numpy())
    np.testing.assert_array_equal(x.data, data)


def test_activations_keep_float32():
    x = mg.tensor(rng().standard_normal((2, 4)).astype(np.float32))
    for name, args, _, _ in ACTIVATIONS + [("ELU", (), None, None)]:
        assert getattr(nn, name)(*args)(x).dtype == np.float32, name
    assert nn.PReLU(dtype=np.float32).weight.dtype == np.float32
    # where() gives a Python number the tensor's dtype where it fits, as PyTorch's scalars (elu's 0.0 made float64)
    i = mg.tensor([1, 2, 3])
    assert mg.where(x > 0, 0.0, x).dtype == np.float32 and mg.where(i > 1, i, 0).dtype == np.int64 and mg.where(i > 1, 1.5, i).dtype == np.float64


@pytest.mark.parametrize("shape, slopes", [((2, 3, 4), (3,)), ((2, 3), (3,)), ((2, 3, 2, 2), (1,)), ((5,), (1,)), ((), (1,))])
def test_prelu_matches_torch_with_its_slopes_to_second_order(shape, slopes):
    x, w = rng().standard_normal(shape), rng(1).uniform(-1, 1, slopes)
    _compare(F.prelu, TF.prelu, [x, w], second=True)
    mine = nn.PReLU(slopes[0], init=0.1)
    assert mine.weight.shape == slopes and np.all(mine.weight.data == 0.1)
    mine.load_state_dict({"weight": w})
    theirs = _torch_copy_of(mine, torch.nn.PReLU(slopes[0]))
    out, tout = mine(mg.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12)
    (out * out).sum().backward(), (tout * tout).sum().backward()
    np.testing.assert_allclose(mine.weight.grad.data, theirs.weight.grad.numpy(), rtol=1e-10)


def test_activation_errors_name_the_function_and_the_values():
    x = mg.tensor(rng().standard_normal((2, 4)))
    with pytest.raises(ValueError, match=r"Hardtanh: max_val \(0\) must be greater than min_val \(1\)"):
        nn.Hardtanh(1, 0)
    with pytest.raises(ValueError, match=r"hardtanh: min_val \(1\) cannot be greater than max_val \(0\)"):
        F.hardtanh(x, 1, 0)
    with pytest.raises(ValueError, match="softshrink: lambd must be at least 0, got -1"):
        nn.Softshrink(-1)(x)
    with pytest.raises(ValueError, match="celu: alpha cannot be 0"):
        nn.CELU(0.0)(x)
    with pytest.raises(mg.ShapeError, match=r"glu: the halved axis 0 of input of shape \(3, 4\) must have an even length, got 3"):
        nn.GLU(0)(mg.tensor(np.ones((3, 4))))
    with pytest.raises(mg.ShapeError, match="glu: does not support a 0-d input"):
        F.glu(mg.tensor(1.0))
    with pytest.raises(mg.ShapeError, match=r"PReLU: weight of shape \(3,\) .* input of shape \(2, 4\) has 4 channel"):
        nn.PReLU(3)(x)
    with pytest.raises(mg.ShapeError, match=r"prelu: weight of shape \(2, 2\)"):
        F.prelu(mg.tensor(np.ones((2, 4, 2))), mg.tensor(np.ones((2, 2))))
    with pytest.raises(TypeError):
        nn.Softmin()  # dim is required, as for Softmax (PyTorch's implicit choice is deprecated)
    assert F.hardshrink(x, -1.0).data.tolist() == x.data.tolist()  # as PyTorch: a negative λ shrinks nothing


# --------------------------------------------------------------------------- group, instance and RMS norms
@pytest.mark.parametrize("shape, groups", [((2, 6, 5), 3), ((2, 6, 3, 4), 2), ((3, 6), 6), ((2, 6, 5), 1)])
def test_group_norm_matches_torch_to_second_order(shape, groups):
    x = rng().standard_normal(shape) * 2 + 1
    w, b = rng(1).standard_normal(6), rng(2).standard_normal(6)
    _compare(lambda x, w, b: F.group_norm(x, groups, w, b), lambda x, w, b: TF.group_norm(x, groups, w, b), [x, w, b], second=True)
    _compare(lambda x: F.group_norm(x, groups, eps=0.1), lambda x: TF.group_norm(x, groups, eps=0.1), [x], second=True)
    mine = nn.GroupNorm(groups, 6)
    mine.load_state_dict({"weight": w, "bias": b})
    theirs = _torch_copy_of(mine, torch.nn.GroupNorm(groups, 6))
    out, tout = mine(mg.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    (out * out * out).sum().backward(), (tout * tout * tout).sum().backward()
    for p, tp in [(mine.weight, theirs.weight), (mine.bias, theirs.bias)]:
        np.testing.assert_allclose(p.grad.data, tp.grad.numpy(), rtol=1e-9, atol=1e-12)  # groups of one: 0 here, roundoff there


def test_group_norm_configurations_reprs_state_and_errors():
    for args, options in [((3, 6), {}), ((2, 4, 1e-3, False), {}), ((2, 4), {"bias": False})]:
        mine, theirs = nn.GroupNorm(*args, **options), torch.nn.GroupNorm(*args, **options)
        assert repr(mine) == repr(theirs)
        assert list(mine.state_dict()) == list(theirs.state_dict())
    assert nn.GroupNorm(2, 4, dtype=np.float32).weight.dtype == np.float32
    x = rng().standard_normal((2, 6, 3))
    np.testing.assert_allclose(nn.GroupNorm(2, 4, affine=False)(mg.tensor(x)).data, torch.nn.GroupNorm(2, 4, affine=False)(torch.tensor(x)).numpy(), rtol=1e-10)
    with pytest.raises(ValueError, match=r"GroupNorm: num_channels \(5\) must be divisible by num_groups \(2\)"):
        nn.GroupNorm(2, 5)
    with pytest.raises(mg.ShapeError, match=r"group_norm: the 5 channels of input of shape \(2, 5, 3\) must be divisible by num_groups=2"):
        F.group_norm(mg.tensor(np.ones((2, 5, 3))), 2)
    with pytest.raises(mg.ShapeError, match=r"GroupNorm: weight has shape \(4,\); input of shape \(2, 6, 3\) has 6 channels"):
        nn.GroupNorm(2, 4)(mg.tensor(x))
    with pytest.raises(mg.ShapeError, match=r"group_norm: expects input of shape \(N, C, \.\.\.\), got shape \(5,\)"):
        F.group_norm(mg.tensor(np.ones(5)), 1)


@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 5)])
def test_instance_norm_function_matches_torch_to_second_order(shape):
    x = rng().standard_normal(shape) * 2 + 1
    w, b = rng(1).standard_normal(3), rng(2).standard_normal(3)
    _compare(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), lambda x, w, b: TF.instance_norm(x, weight=w, bias=b), [x, w, b], second=True)
    mean, var = rng(3).standard_normal(3), rng(4).uniform(0.5, 2, 3)
    evaluate = {"use_input_stats": False, "eps": 1e-3}
    _compare(
        lambda x, w: F.instance_norm(x, mg.tensor(mean), mg.tensor(var), w, **evaluate),
        lambda x, w: TF.instance_norm(x, torch.tensor(mean), torch.tensor(var), w, **evaluate),
        [x, w],
        second=True,
    )


INSTANCE_NORMS = [(nn.InstanceNorm1d, torch.nn.InstanceNorm1d, (4, 3, 5)), (nn.InstanceNorm2d, torch.nn.InstanceNorm2d, (2, 3, 4, 5))]
INSTANCE_NORM_OPTIONS = [{}, {"affine": True}, {"affine": True, "bias": False}, {"track_running_stats": True}, {"track_running_stats": True, "momentum": None, "affine": True}]


@pytest.mark.parametrize("options", INSTANCE_NORM_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
@pytest.mark.parametrize("layers", INSTANCE_NORMS, ids=lambda c: c[0].__name__)
def test_instance_norm_trains_and_evaluates_as_torch(layers, options):
    """Two training steps (outputs, input and parameter gradients, running statistics), one on an
    example without its batch axis, the state dicts, then evaluation."""
    cls, torch_cls, shape = layers
    mine = cls(3, **options)
    if mine.weight is not None:
        mine.weight.data[...] = rng(5).standard_normal(3)
    theirs = _torch_copy_of(mine, torch_cls(3, **options))
    assert repr(mine) == repr(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for step, x in enumerate([rng(1).standard_normal(shape) * 3 + 1, rng(2).standard_normal(shape[1:]) + 2]):
        xs, ts = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, tout = mine(xs), theirs(ts)
        np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=f"step {step}")
        u = rng(10 + step).standard_normal(out.shape)
        (out * mg.tensor(u)).sum().backward(), (tout * torch.tensor(u)).sum().backward()
        np.testing.assert_allclose(xs.grad.data, ts.grad.numpy(), rtol=1e-9, atol=1e-12)
        for name, value in nn.utils.torch_state_dict(mine).items():
            np.testing.assert_allclose(value, theirs.state_dict()[name].numpy(), rtol=1e-12, err_msg=name)
        if mine.weight is not None:
            np.testing.assert_allclose(mine.weight.grad.data, theirs.weight.grad.numpy(), rtol=1e-10)
    mine.eval(), theirs.eval()
    x = rng(3).standard_normal(shape)
    np.testing.assert_allclose(mine(mg.tensor(x)).data, theirs(torch.tensor(x)).detach().numpy(), rtol=1e-10, atol=1e-12)


def test_instance_norm_errors_and_warning():
    with pytest.raises(ValueError, match=r"InstanceNorm1d: expected 2-D or 3-D input \(N, C, \.\.\.\), got shape \(5,\)"):
        nn.InstanceNorm1d(3)(mg.tensor(np.ones(5)))
    with pytest.raises(ValueError, match=r"InstanceNorm2d: expected 3-D or 4-D input"):
        nn.InstanceNorm2d(3)(mg.tensor(np.ones((4, 5))))
    x = rng().standard_normal((2, 4, 5))
    with pytest.raises(mg.ShapeError, match=r"InstanceNorm1d: input of shape \(2, 4, 5\) has 4 channels \(axis 1\), not num_features=3"):
        nn.InstanceNorm1d(3, affine=True)(mg.tensor(x))
    with pytest.raises(mg.ShapeError, match=r"InstanceNorm1d: input of shape \(4, 5\) has 4 channels \(axis 0\)"):
        nn.InstanceNorm1d(3, track_running_stats=True)(mg.tensor(x[0]))
    with pytest.warns(UserWarning, match="num_features is unused"):  # as PyTorch: without parameters or statistics, a warning
        out = nn.InstanceNorm1d(3)(mg.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(out.data, torch.nn.InstanceNorm1d(3)(torch.tensor(x)).numpy(), rtol=1e-10)
    with pytest.raises(ValueError, match=r"instance_norm: expected more than 1 spatial element when training, got input of shape \(2, 3, 1\)"):
        F.instance_norm(mg.tensor(np.ones((2, 3, 1))))
    with pytest.raises(ValueError, match="instance_norm: use_input_stats=False normalises with running_mean and running_var"):
        F.instance_norm(mg.tensor(x), use_input_stats=False)
    with pytest.raises(ValueError, match="instance_norm: give running_mean and running_var together, or neither"):
        F.instance_norm(mg.tensor(x), mg.tensor(np.zeros(4)))
    with pytest.raises(mg.ShapeError, match=r"instance_norm: running_mean has shape \(3,\); input of shape \(2, 4, 5\) has 4 channels"):
        F.instance_norm(mg.tensor(x), mg.tensor(np.zeros(3)), mg.tensor(np.ones(3)))


@pytest.mark.parametrize("shape, normalized, eps", [((3, 4, 5), 5, None), ((3, 4, 5), (4, 5), 1e-3), ((6,), [6], None)])
def test_rms_norm_matches_torch_to_second_order(shape, normalized, eps):
    x = rng().standard_normal(shape) * 2 + 1
    w = rng(1).standard_normal(np.atleast_1d(normalized))
    listed = list(np.atleast_1d(normalized))  # PyTorch's normalized_shape is a list or tuple
    _compare(lambda x, w: F.rms_norm(x, normalized, w, eps), lambda x, w: TF.rms_norm(x, listed, w, eps), [x, w], second=True)
    mine, theirs = nn.RMSNorm(normalized, eps), torch.nn.RMSNorm(normalized, eps)
    assert repr(mine) == repr(theirs) and list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({"weight": w})
    _compare(mine, _torch_copy_of(mine, theirs), [x], second=True)


@pytest.mark.parametrize("dtype, torch_dtype, rtol", [(np.float64, torch.float64, 1e-12), (np.float32, torch.float32, 1e-5)])
def test_rms_norm_default_eps_is_the_machine_epsilon_of_the_input(dtype, torch_dtype, rtol):
    x = (rng().standard_normal((3, 4)) * np.sqrt(np.finfo(dtype).eps)).astype(dtype)  # mean(x²) as small as eps
    mine, theirs = nn.RMSNorm(4, elementwise_affine=False, dtype=dtype), torch.nn.RMSNorm(4, elementwise_affine=False, dtype=torch_dtype)
    assert repr(mine) == repr(theirs) == "RMSNorm((4,), eps=None, elementwise_affine=False)" and mine.weight is None
    out = mine(mg.tensor(x))
    assert out.dtype == dtype
    np.testing.assert_allclose(out.data, theirs(torch.from_numpy(x)).numpy(), rtol=rtol)
    assert not np.allclose(out.data, F.rms_norm(mg.tensor(x), 4, eps=1e-30).data, rtol=1e-2)  # the eps matters here
    with pytest.raises(mg.ShapeError, match=r"RMSNorm: input of shape \(4, 3\) does not end in normalized_shape \(4,\)"):
        mine(mg.tensor(x.T))
    with pytest.raises(mg.ShapeError, match=r"rms_norm: weight has shape \(3,\), it must be normalized_shape \(4,\)"):
        F.rms_norm(mg.tensor(x), 4, mg.tensor(np.ones(3)))


# --------------------------------------------------------------------------- normalize and distances
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("dim", [1, 0, -1])
def test_normalize_matches_torch(p, dim):
    x = rng().standard_normal((3, 4, 5))
    _compare(lambda x: F.normalize(x, p, dim), lambda x: TF.normalize(x, p, dim), [x], second=p in (2.0, 3.0))
    x[1, :, 2] = 0.0  # a zero vector along dim 1 (a zero entry along the others) stays zero, its gradient 1/eps
    _compare(lambda x: F.normalize(x, p, dim), lambda x: TF.normalize(x, p, dim), [x])  # (PyTorch's second derivative there is NaN)
    _compare(lambda x: F.normalize(x, p, dim, eps=2.0), lambda x: TF.normalize(x, p, dim, eps=2.0), [x])  # the floor in use


@pytest.mark.parametrize("shapes, dim", [(((3, 5), (3, 5)), 1), (((2, 1, 5), (1, 4, 5)), -1), (((4,), (4,)), 0), (((3, 1), (3, 4)), 1), (((2, 3, 4), (3, 4)), 1)])
def test_cosine_similarity_matches_torch_to_second_order(shapes, dim):
    a, b = rng().standard_normal(shapes[0]), rng(1).standard_normal(shapes[1])
    _compare(lambda a, b: F.cosine_similarity(a, b, dim), lambda a, b: TF.cosine_similarity(a, b, dim), [a, b], second=True)


def test_cosine_similarity_of_vectors_shorter_than_eps_has_torchs_gradient():
    a, b = rng().standard_normal((3, 4)), rng(1).standard_normal((3, 4))
    a[0] *= 1e-9  # its norm is floored at eps in the value; PyTorch's gradient is the unfloored norm's
    a[1] = 0.0
    _compare(F.cosine_similarity, TF.cosine_similarity, [a, b], atol=1e-6)
    with pytest.raises(mg.ShapeError, match=r"cosine_similarity: inputs of shapes \(3, 4\) and \(5, 4\) do not broadcast"):
        F.cosine_similarity(mg.tensor(a), mg.tensor(np.ones((5, 4))))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("shapes, keepdim", [(((3, 5), (3, 5)), False), (((3, 5), (5,)), True), (((2, 3, 4), (2, 3, 4)), False)])
def test_pairwise_distance_matches_torch(p, shapes, keepdim):
    a, b = rng().standard_normal(shapes[0]), rng(1).standard_normal(shapes[1])
    if a.shape == b.shape:
        b[0] = a[0]  # equal rows: eps keeps the gradient finite
    _compare(lambda a, b: F.pairwise_distance(a, b, p, keepdim=keepdim), lambda a, b: TF.pairwise_distance(a, b, p, keepdim=keepdim), [a, b], second=p in (2.0, 3.0), atol=1e-9)


def test_norms_refuse_p_zero():
    x = mg.tensor(np.ones((2, 3)))
    with pytest.raises(ValueError, match="normalize: p must be positive"):
        F.normalize(x, p=0)
    with pytest.raises(ValueError, match="pairwise_distance: p must be positive"):
        F.pairwise_distance(x, x, p=0)


# --------------------------------------------------------------------------- containers
def test_module_dict_behaves_as_torchs():
    d = nn.ModuleDict({"act": nn.ReLU(), "norm": nn.GroupNorm(1, 3)})
    t = torch.nn.ModuleDict({"act": torch.nn.ReLU(), "norm": torch.nn.GroupNorm(1, 3)})
    assert len(d) == 2 and list(d) == list(t) == ["act", "norm"] and "act" in d and "other" not in d
    assert d["act"] is d.act and list(d.values()) == [d.act, d.norm] and list(d.items()) == [("act", d.act), ("norm", d.norm)]
    d.update([("act", nn.Tanh()), ("out", nn.ReLU6())])  # replacing keeps the key's place
    t.update([("act", torch.nn.Tanh()), ("out", torch.nn.ReLU6())])
    assert list(d.keys()) == list(t.keys()) == ["act", "norm", "out"] and isinstance(d["act"], nn.Tanh)
    d["glu"], t["glu"] = nn.GLU(), torch.nn.GLU()
    d.update(nn.ModuleDict({"inner": nn.ModuleDict({"a": nn.Hardtanh()})}))
    t.update(torch.nn.ModuleDict({"inner": torch.nn.ModuleDict({"a": torch.nn.Hardtanh()})}))
    assert repr(d) == repr(t)
    assert isinstance(d.pop("out"), nn.ReLU6) and "out" not in d
    del d["glu"]
    assert list(d) == ["act", "norm", "inner"]
    assert [name for name, _ in d.named_parameters()] == ["norm.weight", "norm.bias"] and len(d.modules()) == 5
    d.eval()
    assert not d.training and not d["inner"]["a"].training
    d.clear()
    assert len(d) == 0 and repr(d) == repr(torch.nn.ModuleDict()) == "ModuleDict()"
    with pytest.raises(KeyError):
        d["missing"]
    with pytest.raises(KeyError):
        del d["missing"]


def test_module_dict_refuses_what_torch_refuses():
    d = nn.ModuleDict()
    for key, error, message in [
        ("keys", KeyError, "'keys' is already an attribute"),
        ("training", KeyError, "'training' is already an attribute"),
        ("a.b", KeyError, "without '\\.'"),
        ("", KeyError, "non-empty"),
        (1, TypeError, "keys must be strings, got int 1"),
    ]:
        with pytest.raises(error, match=message):
            d[key] = nn.ReLU()
        with pytest.raises(error):
            torch.nn.ModuleDict()[key] = torch.nn.ReLU()
    with pytest.raises(TypeError, match="ModuleDict: entry 'a' must be a Module, got int"):
        nn.ModuleDict({"a": 3})
    with pytest.raises(TypeError, match=r"ModuleDict.update: element #0 must be a \(key, value\) pair"):
        nn.ModuleDict([("a", nn.ReLU(), 3)])
    with pytest.raises(TypeError, match="ModuleDict.update: expects a mapping or an iterable"):
        nn.ModuleDict(3)
    assert len(d) == 0


def _parameter_repr(theirs):
    """PyTorch's repr as minigrad writes it: the dtype by its numpy name, the entries indented once
    (PyTorch adds a second indent; its ParameterDict names the type torch.DoubleTensor)."""
    return theirs.replace("torch.float64", "float64").replace("torch.DoubleTensor", "float64").replace("\n    (", "\n  (")


def test_parameter_list_behaves_as_torchs():
    arrays = [rng(i).standard_normal(shape) for i, shape in enumerate([(3,), (2, 2), ()])]
    mine = nn.ParameterList([nn.Parameter(arrays[0]), mg.tensor(arrays[1])])  # a tensor becomes a Parameter
    theirs = torch.nn.ParameterList([torch.nn.Parameter(torch.tensor(arrays[0])), torch.tensor(arrays[1])])
    mine.append(mg.tensor(arrays[2])), theirs.append(torch.tensor(arrays[2]))
    assert len(mine) == len(theirs) == 3 and all(isinstance(p, nn.Parameter) and p.requires_grad for p in mine)
    assert _parameter_repr(repr(theirs)) == repr(mine)
    assert repr(mine).splitlines()[1] == "  (0): Parameter containing: [float64 of size 3]"
    assert mine[-1] is mine[2] and [p.shape for p in mine[::-2]] == [(), (3,)] and isinstance(mine[1:], nn.ParameterList)
    assert list(mine.state_dict()) == list(theirs.state_dict()) == ["0", "1", "2"]
    replacement = nn.Parameter(np.zeros(4))
    mine[1] = replacement
    assert mine[1] is replacement and list(mine.state_dict()) == ["0", "1", "2"] and mine.parameters()[1] is replacement
    mine += [nn.Parameter(np.ones(1))]
    assert mine.extend([]) is mine and len(mine) == 4 and mine[3].shape == (1,)
    with pytest.raises(IndexError, match="ParameterList: index 4 is out of range for 4 parameters"):
        mine[4]
    with pytest.raises(TypeError, match="ParameterList: entry '4' must be a Parameter, got list"):
        mine.append([1.0])
    with pytest.raises(TypeError, match="ParameterList.extend: expects an iterable of parameters, got Tensor"):
        nn.ParameterList(mg.tensor(np.ones(3)))  # not its rows
    assert repr(nn.ParameterList()) == repr(torch.nn.ParameterList()) == "ParameterList()"


def test_parameter_dict_behaves_as_torchs():
    a, b, c = (rng(i).standard_normal(i + 1) for i in range(3))
    mine = nn.ParameterDict({"b": mg.tensor(b), "a": nn.Parameter(a)})  # a plain dict: sorted keys, as PyTorch
    theirs = torch.nn.ParameterDict({"b": torch.tensor(b), "a": torch.nn.Parameter(torch.tensor(a))})
    assert list(mine) == list(theirs) == ["a", "b"] and list(mine.state_dict()) == list(theirs.state_dict())
    assert list(nn.ParameterDict([("b", mg.tensor(b)), ("a", mg.tensor(a))])) == list(torch.nn.ParameterDict([("b", torch.tensor(b)), ("a", torch.tensor(a))])) == ["b", "a"]
    mine["c"], theirs["c"] = mg.tensor(c), torch.tensor(c)
    assert _parameter_repr(repr(theirs)) == repr(mine)
    assert isinstance(mine["c"], nn.Parameter) and mine.c is mine["c"] and mine.get("z") is None and mine.get("a") is mine.a
    assert [k for k, _ in mine.items()] == ["a", "b", "c"] and len(mine.values()) == 3 and "c" in mine
    assert mine.pop("b").shape == (2,) and list(mine) == ["a", "c"] and [p.shape for p in mine.parameters()] == [(1,), (3,)]
    with pytest.raises(KeyError, match="'keys' is already an attribute"):
        mine["keys"] = mg.tensor(a)
    with pytest.raises(TypeError, match="ParameterDict: entry 'x' must be a Parameter, got float"):
        mine["x"] = 1.0


class _Net(nn.Module):
    """Every new container, nested in one another, beside a ModuleList and a Sequential."""

    def __init__(self):
        r = rng(3)
        self.blocks = nn.ModuleDict({"attn": nn.Linear(4, 4, rng=r), "norm": nn.GroupNorm(2, 4), "mlp": nn.Sequential(nn.Linear(4, 3, rng=r), nn.Mish())})
        self.stack = nn.ModuleList([nn.ModuleDict({"proj": nn.Linear(3, 3, rng=r), "act": nn.PReLU(3)}) for _ in range(2)])
        self.norm = nn.InstanceNorm1d(3, affine=True, track_running_stats=True)
        self.scales = nn.ParameterList([nn.Parameter(r.standard_normal(3)), nn.Parameter(r.standard_normal(()))])
        self.shifts = nn.ParameterDict({"b": nn.Parameter(r.standard_normal(3)), "a": nn.Parameter(r.standard_normal(3))})

    def forward(self, x):
        h = self.blocks["mlp"](self.blocks["norm"](self.blocks["attn"](x)))
        for block in self.stack:
            h = block["act"](block["proj"](h))
        h = self.norm(h.unsqueeze(-1).expand(-1, -1, 2))[..., 0]
        return h * self.scales[0] * self.scales[1] + self.shifts["a"] - self.shifts.b


class _TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleDict({"attn": torch.nn.Linear(4, 4), "norm": torch.nn.GroupNorm(2, 4), "mlp": torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Mish())})
        self.stack = torch.nn.ModuleList([torch.nn.ModuleDict({"proj": torch.nn.Linear(3, 3), "act": torch.nn.PReLU(3)}) for _ in range(2)])
        self.norm = torch.nn.InstanceNorm1d(3, affine=True, track_running_stats=True)
        self.scales = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(3)), torch.nn.Parameter(torch.zeros(()))])
        self.shifts = torch.nn.ParameterDict({"b": torch.nn.Parameter(torch.zeros(3)), "a": torch.nn.Parameter(torch.zeros(3))})

    forward = _Net.forward


def test_containers_state_dicts_carry_torchs_names_both_ways():
    mine, theirs = _Net(), _TorchNet().double()
    assert "blocks.attn.weight" in mine.state_dict() and "scales.0" in mine.state_dict() and "stack.layers.0.proj.bias" in mine.state_dict()
    assert list(nn.utils.torch_state_dict(mine)) == list(theirs.state_dict())  # the names, in PyTorch's order
    assert [p.shape for p in mine.parameters()] == [tuple(p.shape)[::-1] if len(p.shape) == 2 else tuple(p.shape) for p in theirs.parameters()]
    theirs.load_state_dict({k: torch.from_numpy(v) for k, v in nn.utils.torch_state_dict(mine).items()})
    x = rng(4).standard_normal((5, 4))
    out, tout = mine(mg.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-10)
    (out * out).sum().backward(), (tout * tout).sum().backward()
    grads = {name: p.grad.data for name, p in mine.named_parameters()}
    np.testing.assert_allclose(grads["shifts.a"], theirs.shifts["a"].grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(grads["stack.layers.1.act.weight"], theirs.stack[1]["act"].weight.grad.numpy(), rtol=1e-10)
    fresh = _TorchNet().double()
    assert nn.utils.load_torch_state_dict(mine, fresh.state_dict()) == ([], [])
    np.testing.assert_allclose(mine(mg.tensor(x)).data, fresh(torch.tensor(x)).detach().numpy(), rtol=1e-10)
    np.testing.assert_array_equal(mine.blocks.attn.weight.data, fresh.blocks.attn.weight.detach().numpy().T)
    mine.eval()
    assert not mine.blocks.mlp[1].training and not mine.stack[0]["act"].training


def test_new_layers_compile_with_their_masks_recomputed():
    """Each mask (`where`) is recomputed from the compiled function's new inputs, not frozen at the trace."""
    from minigrad import jit

    prelu, group, rms = nn.PReLU(3), nn.GroupNorm(3, 3), nn.RMSNorm(4)

    def f(x):
        h = F.hardswish(x) + F.hardtanh(x, -0.5, 0.5) + F.softshrink(x) + F.hardshrink(x) + F.threshold(x, 0.1, 2.0) + F.mish(x)
        return (rms(prelu(group(h))) * F.normalize(x, dim=-1)).sum() + F.cosine_similarity(x, h, dim=-1).sum()

    compiled = jit.compile(f, backward=True)
    for seed in (1, 2):
        x = mg.tensor(rng(seed).standard_normal((2, 3, 4)) * 3, requires_grad=True)
        value, (grad,) = compiled(x)
        expected = f(x)
        expected.backward()
        np.testing.assert_allclose(value.data, expected.data, rtol=1e-12)
        np.testing.assert_allclose(grad.data, x.grad.data, rtol=1e-10, atol=1e-13)
