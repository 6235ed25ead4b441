"""`Function`: an operation with a backward of your own, in the spirit of `torch.autograd.Function`.

A subclass writes two static methods::

    class Cube(minigrad.Function):
        @staticmethod
        def forward(ctx, x):              # runs under no_grad: plain computation
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):          # one gradient per output in, one per forward argument out
            (x,) = ctx.saved_tensors
            return grad * 3.0 * x * x

    y = Cube.apply(x)                     # one graph node, op "Cube"

`forward(ctx, *args)` gets the arguments of `apply` (tensors and any other values) and returns a
tensor or a tuple of tensors; it runs with recording off, so its operations build no graph. The
result of `apply` is made by one node whose inputs are the tensor arguments. `backward(ctx,
*grads)` gets the adjoint of each output (zeros for an output the loss does not use) and returns
one gradient per argument of `forward`: a tensor (or numpy array) of that argument's shape, or
None (always None for an argument that is not a tensor, or that needs no gradient:
`ctx.needs_input_grad[i]` says which do). Written with minigrad operations on the saved tensors,
a backward is itself differentiable: `create_graph=True` records it, so double backward works.

`ctx` carries what backward needs: `ctx.save_for_backward(*tensors)` for inputs and outputs
(backward then gets the node's own tensors back from `ctx.saved_tensors`, so a second derivative
reaches the inputs, and nothing is held twice), and plain attributes (`ctx.axis = 1`) for the rest.

One addition to PyTorch's interface: `ctx.add_inputs(*tensors)` in forward declares tensors that
forward used without receiving them as arguments (the weights a closure holds, as in
`minigrad.checkpoint`). They become inputs of the node after the tensor arguments, and backward
returns their gradients after those of the arguments. PyTorch's reentrant checkpoint instead
accumulates such gradients into `.grad` behind the engine's back, which `minigrad.gradients`
could not see.
"""

import operator

import numpy as np

from .errors import MinigradError, ShapeError
from .grad_mode import no_grad, state
from .ops import Primitive
from .tensor import Node, Tensor, _result

_requires_grad = operator.attrgetter("requires_grad")

_INPUT, _OUTPUT = "input", "output"


class FunctionCtx:
    """What `forward` leaves for `backward`: saved tensors, inputs it declared, and any attribute set on it."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad  # one bool per argument of forward
        self._saved = ()
        self._added = ()
        self._inputs = None  # while backward runs: the node's inputs, and its tensor with the outputs' layout
        self._outputs = None

    def save_for_backward(self, *tensors):
        """Keep `tensors` (arguments or outputs of forward, or constants it computed) for backward."""
        for tensor in tensors:
            if tensor is not None and not isinstance(tensor, Tensor):
                raise MinigradError(
                    f"save_for_backward: expected tensors (or None), got {type(tensor).__name__}; "
                    f"keep other values as attributes of ctx (ctx.name = value)"
                )
        self._saved = tensors

    def add_inputs(self, *tensors):
        """Declare tensors forward used without receiving them: more inputs of the node, after the arguments."""
        for tensor in tensors:
            if not isinstance(tensor, Tensor):
                raise MinigradError(f"add_inputs: expected tensors, got {type(tensor).__name__}")
        self._added = tensors

    @property
    def added_inputs(self):
        """The tensors given to `add_inputs`."""
        return self._added

    @property
    def saved_tensors(self):
        """The tensors given to `save_for_backward`, as the graph has them now (available in backward)."""
        if self._inputs is None and any(isinstance(s, tuple) for s in self._saved):
            raise MinigradError("saved_tensors: the saved arguments and outputs are available only inside backward")
        return tuple(self._resolve(s) for s in self._saved)

    def _resolve(self, saved):
        if not isinstance(saved, tuple):
            return saved
        kind, index = saved
        if kind == _INPUT:
            return self._inputs[index]
        out, layout = self._outputs
        return out if len(layout) == 1 else _unpack(out, layout)[index]


class Function:
    """Base class of an operation defined by its own `forward` and `backward` (see the module's docstring).

    `name` (a class attribute, the class's name unless set) names the graph node's operation.
    """

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("a Function subclass defines forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("a Function subclass defines backward(ctx, *grads)")

    @classmethod
    def apply(cls, *args):
        """`forward(ctx, *args)`, recorded as one node whose backward is `backward` (when a gradient is needed)."""
        arg_is_tensor = tuple(isinstance(a, Tensor) for a in args)
        tensors = tuple(a for a, is_tensor in zip(args, arg_is_tensor) if is_tensor)
        if state.forward_mode_depth and any(t._tangent is not None for t in tensors):
            raise MinigradError(f"{_name(cls)}.apply: forward mode (jvp) is not supported by Functions; "
                                f"call the operations it is made of instead")
        ctx = FunctionCtx(tuple(is_tensor and a.requires_grad for a, is_tensor in zip(args, arg_is_tensor)))
        with no_grad():
            result = cls.forward(ctx, *args)
        outputs = as_outputs(result, lambda: f"{_name(cls)}.forward")
        inputs = tensors + ctx._added
        if not (state.grad_enabled and any(map(_requires_grad, inputs))):
            return _constants(result, outputs)
        if ctx._saved:
            ctx._saved = tuple(_saved_as(s, inputs, outputs) for s in ctx._saved)
        layout = tuple((o.shape, o.dtype) for o in outputs)
        template = tuple(None if is_tensor else a for a, is_tensor in zip(args, arg_is_tensor))
        params = {"function": cls, "ctx": ctx, "arg_is_tensor": arg_is_tensor, "template": template, "layout": layout}
        packed = _result(_pack(outputs), Node(_primitive(cls), inputs, params))
        return packed if isinstance(result, Tensor) else _unpack(packed, layout)


def _name(function):
    return getattr(function, "name", None) or function.__name__


def as_outputs(result, who):
    """`result` (a tensor, or a non-empty tuple or list of tensors) as a tuple of tensors.

    `who()` names the culprit in the error (a function, so that the message costs nothing when all is well).
    """
    if isinstance(result, Tensor):
        return (result,)
    if isinstance(result, (tuple, list)) and result and all(isinstance(o, Tensor) for o in result):
        return tuple(result)
    got = type(result).__name__ if not isinstance(result, (tuple, list)) else f"a {type(result).__name__} of " + (
        ", ".join(type(o).__name__ for o in result) or "nothing")
    raise MinigradError(f"{who()} must return a tensor or a non-empty tuple of tensors, got {got}")


def _constants(result, outputs):
    """Forward's result when nothing needs a gradient: the same values, attached to no graph."""
    plain = tuple(o if o.node is None else _result(o.data, None) for o in outputs)
    return plain[0] if isinstance(result, Tensor) else plain


def _saved_as(tensor, inputs, outputs):
    """A saved argument or output as its position (the node holds it already); anything else as itself."""
    for kind, group in ((_INPUT, inputs), (_OUTPUT, outputs)):
        for index, candidate in enumerate(group):
            if candidate is tensor:
                return (kind, index)
    return tensor


def _pack(outputs):
    """The node's data: the single output's array, or every output flattened and joined."""
    if len(outputs) == 1:
        return outputs[0].data
    dtype = np.result_type(*(o.dtype for o in outputs))
    return np.concatenate([np.asarray(o.data, dtype=dtype).reshape(-1) for o in outputs])


def _unpack(packed, layout):
    """The outputs as pieces of the node's tensor, so each one's gradient flows into the node."""
    pieces, start = [], 0
    for shape, dtype in layout:
        size = int(np.prod(shape, dtype=np.int64))
        piece = packed[start : start + size].reshape(shape)
        pieces.append(piece if piece.dtype == dtype else piece.astype(dtype))
        start += size
    return tuple(pieces)


def _primitive(function):
    """The graph operation standing for `function` (one per subclass, made on first use)."""
    if "_primitive" not in function.__dict__:
        function._primitive = Primitive(_name(function), forward=_replay, vjp=_vjp, jvp=_no_jvp)
    return function._primitive


def _vjp(g, out, *inputs, function, ctx, arg_is_tensor, template, layout):
    grads = (g,) if len(layout) == 1 else _unpack(g, layout)
    ctx._inputs, ctx._outputs = inputs, (out, layout)
    try:
        returned = function.backward(ctx, *grads)
    finally:
        ctx._inputs = ctx._outputs = None
    return _checked_grads(function, returned, inputs, arg_is_tensor)


def _checked_grads(function, returned, inputs, arg_is_tensor):
    """One adjoint per node input from backward's result, after checking its count and shapes."""
    returned = returned if isinstance(returned, tuple) else (returned,)
    expected = len(arg_is_tensor) + len(inputs) - sum(arg_is_tensor)
    name = _name(function)
    if len(returned) != expected:
        added = len(inputs) - sum(arg_is_tensor)
        extra = f" and {added} declared by add_inputs" if added else ""
        raise MinigradError(f"{name}.backward returned {len(returned)} gradients, expected {expected}: one per "
                            f"argument of forward ({len(arg_is_tensor)}){extra}, None where there is none")
    adjoints, next_input = [], iter(inputs)
    for i, (grad, is_tensor) in enumerate(zip(returned, tuple(arg_is_tensor) + (True,) * (expected - len(arg_is_tensor)))):
        if not is_tensor:
            if grad is not None:
                raise MinigradError(f"{name}.backward returned a gradient for argument {i} of forward, "
                                    f"which is not a tensor: return None there")
            continue
        tensor = next(next_input)
        adjoints.append(None if grad is None else _checked_grad(name, i, grad, tensor))
    return tuple(adjoints)


def _checked_grad(name, i, grad, tensor):
    if not isinstance(grad, Tensor):
        if not isinstance(grad, (np.ndarray, np.number, float, int)) or isinstance(grad, bool):
            raise MinigradError(f"{name}.backward: gradient {i} is a {type(grad).__name__}, expected a tensor or None")
        grad = _result(np.asarray(grad, dtype=tensor.dtype), None)
    if grad.shape != tensor.shape:
        raise ShapeError(f"{name}.backward: gradient {i} has shape {grad.shape}, but its input has shape {tensor.shape}")
    return grad


def _replay(*arrays, function, ctx, arg_is_tensor, template, layout):
    """The forward computation on plain arrays (for `minigrad.evaluate` and tracers): a fresh ctx, no node."""
    tensors = iter(arrays)
    args = [_result(next(tensors), None) if is_tensor else value for is_tensor, value in zip(arg_is_tensor, template)]
    with no_grad():
        return _pack(as_outputs(function.forward(FunctionCtx(ctx.needs_input_grad), *args), lambda: f"{_name(function)}.forward"))


def _no_jvp(tangents, out, *inputs, **params):
    raise MinigradError(f"{_name(params['function'])}: forward mode (jvp) is not supported by Functions")
