"""Integer tensors from Python ints (labels, indices), against PyTorch.

`mg.tensor` follows `torch.tensor`'s dtype rule: Python ints give int64, bools bool, any float makes
the whole tensor float (float64, minigrad's default). Integer tensors cannot require grad; they work
as indices, cross-entropy targets and Embedding indices; an integer tensor meeting a float tensor
takes the float tensor's dtype (torch.result_type), so a float32 parameter keeps float32 gradients.
"""

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import nn
from minigrad.nn import functional as F

TORCH_FLOAT = {torch.float32: np.float32, torch.float64: np.float64}


def rng(seed=0):
    return np.random.default_rng(20261202 + seed)


@pytest.mark.parametrize("data", [[1, 2, 3], [[0, 5], [-7, 2]], 3, [True, False], True, [1, 2.5], [[1], [2.0]], 2.0])
def test_tensor_infers_the_dtype_torch_tensor_does(data):
    expected = torch.tensor(data)
    t = mg.tensor(data)
    kind = {torch.int64: np.int64, torch.bool: np.bool_}.get(expected.dtype, np.float64)  # floats: minigrad's float64
    assert t.dtype == kind, f"mg.tensor({data!r}) has dtype {t.dtype}; torch.tensor gives {expected.dtype}"
    np.testing.assert_array_equal(t.data, expected.numpy())


def test_the_tensor_class_keeps_python_numbers_float():
    # As `torch.Tensor([1, 2])` is float32, `mg.Tensor([1, 2])` stays float64: the constructor's documented rule.
    assert mg.Tensor([1, 2]).dtype == np.float64
    assert mg.tensor([1, 2], dtype=np.float64).dtype == np.float64
    assert mg.tensor(np.array([1, 2], dtype=np.int32)).dtype == np.int32  # arrays keep their dtype


@pytest.mark.parametrize("data", [[1, 2], 3, [True]])
def test_integer_tensors_cannot_require_grad(data):
    with pytest.raises(mg.DtypeError, match=r"tensor: only floating-point tensors can require gradients.*dtype (int64|bool)"):
        mg.tensor(data, requires_grad=True)
    with pytest.raises(RuntimeError):  # PyTorch refuses it too
        torch.tensor(data, requires_grad=True)
    with pytest.raises(mg.DtypeError, match="requires_grad_.*cannot require grad"):
        mg.tensor(data).requires_grad_()
    assert mg.tensor([float(v) for v in np.ravel(data)], requires_grad=True).requires_grad


def test_integer_tensor_as_an_index():
    x = rng().standard_normal((5, 3))
    index = [4, 0, 4, 2]
    t, tt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = t[mg.tensor(index)], tt[torch.tensor(index)]
    np.testing.assert_array_equal(out.data, tout.detach().numpy())
    w = rng(1).standard_normal(out.shape)
    (out * mg.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(t.grad.data, tt.grad.numpy(), rtol=1e-12)  # the repeated row 4 accumulates


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_integer_targets_in_cross_entropy(reduction):
    logits = rng(2).standard_normal((4, 5))
    labels = [3, 0, 4, 3]
    t, tt = mg.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    loss = F.cross_entropy(t, mg.tensor(labels), reduction=reduction)
    tloss = torch.nn.functional.cross_entropy(tt, torch.tensor(labels), reduction=reduction)
    np.testing.assert_allclose(loss.data, tloss.detach().numpy(), rtol=1e-12)
    loss.sum().backward()
    tloss.sum().backward()
    np.testing.assert_allclose(t.grad.data, tt.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_integer_indices_in_embedding():
    emb = nn.Embedding(6, 3, rng=rng(3))
    temb = torch.nn.Embedding(6, 3, dtype=torch.float64)
    with torch.no_grad():
        temb.weight.copy_(torch.tensor(emb.weight.data))
    indices = [[1, 5], [5, 0]]
    out, tout = emb(mg.tensor(indices)), temb(torch.tensor(indices))
    np.testing.assert_array_equal(out.data, tout.detach().numpy())
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.data, temb.weight.grad.numpy())


OPERATIONS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a / b, "**": lambda a, b: a ** b,
}


@pytest.mark.parametrize("float_dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("int_first", [True, False])
@pytest.mark.parametrize("name", OPERATIONS)
def test_integer_and_float_tensors_promote_as_in_torch(name, int_first, float_dtype):
    op = OPERATIONS[name]
    ints = [2, 3, 1]
    x = np.abs(rng(4).standard_normal(3)).astype(TORCH_FLOAT[float_dtype]) + 0.5
    t, tt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    a, ta = mg.tensor(ints), torch.tensor(ints)
    out, tout = (op(a, t), op(ta, tt)) if int_first else (op(t, a), op(tt, ta))
    assert out.dtype == TORCH_FLOAT[tout.dtype], f"int64 {name} {float_dtype}: {out.dtype}, PyTorch {tout.dtype}"
    rtol = 1e-6 if float_dtype == torch.float32 else 1e-13
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=rtol)
    out.sum().backward()
    tout.sum().backward()
    assert t.grad.dtype == t.dtype, f"the gradient of a {t.dtype} leaf through int64 {name} is {t.grad.dtype}"
    np.testing.assert_allclose(t.grad.data, tt.grad.numpy(), rtol=rtol)


def test_integer_matmul_with_a_float32_matrix():
    w = rng(5).standard_normal((3, 2)).astype(np.float32)
    t, tt = mg.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    onehot = [[0, 1, 0], [1, 0, 1]]
    out, tout = mg.tensor(onehot) @ t, torch.tensor(onehot, dtype=torch.float32) @ tt
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-6)
    out.sum().backward()
    tout.sum().backward()
    assert t.grad.dtype == np.float32
    np.testing.assert_allclose(t.grad.data, tt.grad.numpy(), rtol=1e-6)


def test_integer_tensors_with_python_numbers():
    a, ta = mg.tensor([1, 2, 3]), torch.tensor([1, 2, 3])
    for op in (lambda v: v + 1, lambda v: v * 2, lambda v: -v, lambda v: v.sum(), lambda v: v.max()):
        out, tout = op(a), op(ta)
        assert out.dtype == np.int64 and tout.dtype == torch.int64
        np.testing.assert_array_equal(out.data, tout.numpy())
    for op in (lambda v: v + 0.5, lambda v: v / 2, lambda v: v.mean()):  # torch's float32 default is our float64
        out, tout = op(a), op(ta.double())
        assert out.dtype == np.float64
        np.testing.assert_allclose(out.data, tout.numpy(), rtol=1e-15)
