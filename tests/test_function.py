"""minigrad.Function: operations with a backward of their own.

Gradients are checked by central differences (mg.gradcheck) and against torch.autograd.Function
written the same way; second derivatives through backward written in minigrad operations; and
the errors a wrong backward gets: how many gradients, which shapes, for which argument.
"""

import weakref

import numpy as np
import pytest
import torch

import minigrad as mg


class Cube(mg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3.0 * x * x


class Exp(mg.Function):
    """Saves its output: backward gets the node's own tensor, so a second derivative goes through it."""

    @staticmethod
    def forward(ctx, x):
        out = x.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out


class ScaledSinCos(mg.Function):
    """Two tensor arguments and a number; two outputs."""

    @staticmethod
    def forward(ctx, x, scale, y):
        ctx.scale = scale
        ctx.save_for_backward(x, y)
        return (x * y).sin() * scale, (x - y).cos().sum(axis=0)

    @staticmethod
    def backward(ctx, g_sin, g_cos):
        x, y = ctx.saved_tensors
        a = g_sin * ctx.scale * (x * y).cos()
        b = -g_cos * (x - y).sin()
        return a * y + b, None, (a * x - b).sum(axis=0)


def tensor(shape, rng, requires_grad=True):
    return mg.tensor(rng.standard_normal(shape), requires_grad=requires_grad)


def test_apply_records_one_node_named_after_the_class(rng):
    x = tensor((3,), rng=rng)
    y = Cube.apply(x)
    assert y.op == "Cube" and y.parents == (x,) and y.requires_grad
    np.testing.assert_allclose(y.data, x.data**3)


def test_gradients_agree_with_central_differences(rng):
    x, y = tensor((2, 3), rng=rng), tensor((3,), rng=rng)
    assert mg.gradcheck(lambda v: Cube.apply(v), x)
    assert mg.gradcheck(lambda v: Exp.apply(v), x)
    assert mg.gradcheck(lambda a, b: sum(o.sum() for o in ScaledSinCos.apply(a, 1.7, b)), x, y)


class TorchScaledSinCos(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, y):
        ctx.scale = scale
        ctx.save_for_backward(x, y)
        return (x * y).sin() * scale, (x - y).cos().sum(dim=0)

    @staticmethod
    def backward(ctx, g_sin, g_cos):
        x, y = ctx.saved_tensors
        a = g_sin * ctx.scale * (x * y).cos()
        b = -g_cos * (x - y).sin()
        return a * y + b, None, (a * x - b).sum(dim=0)


def test_several_outputs_and_a_number_argument_agree_with_pytorch(rng):
    x, y = rng.standard_normal((2, 3)), rng.standard_normal(3)
    mx, my = mg.tensor(x, requires_grad=True), mg.tensor(y, requires_grad=True)
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    first, second = ScaledSinCos.apply(mx, 0.5, my)
    ((first**2).sum() + (second * my).sum()).backward()
    t_first, t_second = TorchScaledSinCos.apply(tx, 0.5, ty)
    ((t_first**2).sum() + (t_second * ty).sum()).backward()
    np.testing.assert_allclose(first.data, t_first.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(mx.grad.data, tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(my.grad.data, ty.grad.numpy(), rtol=1e-10)


def test_an_unused_output_sends_zeros(rng):
    seen = {}

    class Pair(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0, x * 3.0

        @staticmethod
        def backward(ctx, g_first, g_second):
            seen["second"] = g_second.data.copy()
            return g_first * 2.0 + g_second * 3.0

    x = tensor((4,), rng=rng)
    first, _ = Pair.apply(x)
    first.sum().backward()
    np.testing.assert_array_equal(seen["second"], np.zeros(4))
    np.testing.assert_array_equal(x.grad.data, np.full(4, 2.0))


@pytest.mark.parametrize("function, second", [(Cube, lambda x: 6 * x), (Exp, np.exp)])
def test_double_backward_through_saved_inputs_and_outputs(function, second, rng):
    x = tensor((5,), rng=rng)
    (g,) = mg.gradients(function.apply(x).sum(), [x], create_graph=True)
    (gg,) = mg.gradients(g.sum(), [x])
    np.testing.assert_allclose(gg.data, second(x.data), rtol=1e-12)


def test_double_backward_agrees_with_pytorch(rng):
    x, y, v = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal((2, 3))
    mx, my = mg.tensor(x, requires_grad=True), mg.tensor(y, requires_grad=True)
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    m_out = ScaledSinCos.apply(mx, 1.3, my)
    (mgx,) = mg.gradients((m_out[0] ** 2).sum() + m_out[1].sum(), [mx], create_graph=True)
    m_h = mg.gradients((mgx * mg.tensor(v)).sum(), [mx, my])
    t_out = TorchScaledSinCos.apply(tx, 1.3, ty)
    (tgx,) = torch.autograd.grad((t_out[0] ** 2).sum() + t_out[1].sum(), [tx], create_graph=True)
    t_h = torch.autograd.grad((tgx * torch.tensor(v)).sum(), [tx, ty])
    for got, expected in zip(m_h, t_h):
        np.testing.assert_allclose(got.data, expected.numpy(), rtol=1e-10, atol=1e-12)


def test_needs_input_grad_and_constants_get_no_gradient(rng):
    seen = {}

    class Mul(mg.Function):
        @staticmethod
        def forward(ctx, a, b):
            seen["needs"] = ctx.needs_input_grad
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return (grad * b if ctx.needs_input_grad[0] else None, grad * a if ctx.needs_input_grad[1] else None)

    a, b = tensor((3,), rng=rng), tensor((3,), requires_grad=False, rng=rng)
    Mul.apply(a, b).sum().backward()
    assert seen["needs"] == (True, False)
    np.testing.assert_allclose(a.grad.data, b.data)
    assert b.grad is None


def test_nothing_is_recorded_without_grad_or_on_constants(rng):
    x = tensor((3,), rng=rng)
    with mg.no_grad():
        assert Cube.apply(x).node is None
    out = Cube.apply(tensor((3,), requires_grad=False, rng=rng))
    assert out.node is None and not out.requires_grad


def test_inputs_declared_in_forward_get_their_gradients(rng):
    w = tensor((3,), rng=rng)

    class TimesW(mg.Function):  # closes over w, as a layer closes over its weights
        @staticmethod
        def forward(ctx, x):
            ctx.add_inputs(w)
            ctx.save_for_backward(x)
            return x * w

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            (weight,) = ctx.added_inputs
            return grad * weight, grad * x

    x = tensor((3,), rng=rng)
    out = TimesW.apply(x)
    assert out.parents == (x, w)
    gx, gw = mg.gradients(out.sum(), [x, w])
    np.testing.assert_allclose(gx.data, w.data)
    np.testing.assert_allclose(gw.data, x.data)
    assert TimesW.apply(tensor((3,), requires_grad=False, rng=rng)).requires_grad, "w needs a gradient: record the node"


def test_evaluate_runs_forward_again_on_new_values(rng):
    x = tensor((3,), rng=rng)
    out = Cube.apply(x * 2.0)
    np.testing.assert_allclose(mg.evaluate(out, {x: np.ones(3)}), np.full(3, 8.0))


def test_saved_inputs_are_freed_with_the_graph(rng):
    x = tensor((1000,), rng=rng)
    h = x.exp()
    probe = weakref.ref(h)
    out = Cube.apply(h)
    del h
    assert probe() is not None, "the graph must keep the saved input until backward"
    out.sum().backward()
    assert probe() is None, "backward freed the graph, but the saved input is still alive"


def test_backward_with_the_wrong_number_of_gradients_names_the_function(rng):
    class TwoArgs(mg.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(mg.MinigradError, match=r"TwoArgs.backward returned 1 gradients, expected 2"):
        TwoArgs.apply(tensor((2,), rng=rng), tensor((2,), rng=rng)).sum().backward()


def test_backward_with_a_wrong_shape_names_the_function_and_both_shapes(rng):
    class Sum(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum(axis=0)

        @staticmethod
        def backward(ctx, grad):
            return grad  # forgot to broadcast back to (2, 3)

    with pytest.raises(mg.ShapeError, match=r"Sum.backward: gradient 0 has shape \(3,\), but its input has shape \(2, 3\)"):
        Sum.apply(tensor((2, 3), rng=rng)).sum().backward()


def test_a_gradient_for_a_number_argument_is_refused(rng):
    class Scale(mg.Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.factor = factor
            return x * factor

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.factor, grad.sum()

    with pytest.raises(mg.MinigradError, match="gradient for argument 1 of forward, which is not a tensor"):
        Scale.apply(tensor((2,), rng=rng), 3.0).sum().backward()


def test_forward_must_return_tensors(rng):
    class Bad(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return x.data

    with pytest.raises(mg.MinigradError, match="Bad.forward must return a tensor"):
        Bad.apply(tensor((2,), rng=rng))


def test_saved_arguments_are_only_available_in_backward(rng):
    seen = {}

    class Peek(mg.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            seen["ctx"] = ctx
            return x * 1.0

    Peek.apply(tensor((2,), rng=rng))
    with pytest.raises(mg.MinigradError, match="only inside backward"):
        seen["ctx"].saved_tensors


def test_a_numpy_gradient_is_accepted(rng):
    class Double(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, grad):
            return 2.0 * grad.data

    x = tensor((3,), rng=rng)
    Double.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.data, np.full(3, 2.0))
