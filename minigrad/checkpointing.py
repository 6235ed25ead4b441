"""Gradient checkpointing: keep a function's inputs, rebuild its activations in the backward pass.

`checkpoint(fn, *args)` trades compute for memory (Chen et al. 2016, after Griewank's
checkpointing of adjoint codes): the graph keeps only the inputs of `fn`, and the backward pass
runs `fn` again to rebuild the activations it needs, one segment at a time.
`checkpoint_sequential(layers, segments, x)` cuts a chain of layers into segments; with about √N
segments of √N layers, both the kept segment inputs and one rebuilt segment are O(√N).

The checkpoint node is a `minigrad.Function` (`Checkpoint`): its forward runs `fn` once, its
backward runs it again. The pieces it needs are here too: the random state to replay
(`RandomState`, `replaying`), leaf copies to cut a recomputation from the outer graph
(`leaf_copy`) and the leaves a function closes over (`captured_leaves`).
"""

import numpy as np

from .autograd import gradients
from .function import Function, as_outputs
from .functional import concatenate
from .grad_mode import enable_grad, state
from .tensor import Tensor

# --------------------------------------------------------------------------- random state


class RandomState:
    """The random state `fn` starts from, so that running it again draws the same numbers.

    Covers numpy's global generator (`np.random.rand`, `np.random.binomial`, ...) and any numpy
    `Generator`s listed in `generators`. Draws from generators it does not know (for example
    `minigrad.randn` without `rng=`, which seeds a fresh generator each call) cannot be replayed.
    """

    __slots__ = ("global_state", "generators", "generator_states")

    def __init__(self, generators=()):
        self.global_state = np.random.get_state()
        self.generators = tuple(generators)
        self.generator_states = [g.bit_generator.state for g in self.generators]

    def restore(self):
        np.random.set_state(self.global_state)
        for generator, saved in zip(self.generators, self.generator_states):
            generator.bit_generator.state = saved

    def unchanged(self):
        """Whether every generator is still where it was: nothing drew from them since.

        One more read of the state (about 30 µs of CPU for numpy's global Mersenne Twister, whose state
        numpy copies number by number), against three reads and writes that a checkpoint of an
        `fn` drawing nothing would otherwise pay in every backward pass.
        """
        return _same_state(np.random.get_state(), self.global_state) and all(
            _same_state(g.bit_generator.state, saved) for g, saved in zip(self.generators, self.generator_states)
        )


def _same_state(a, b):
    """Equality of generator states: tuples and dicts of numbers and arrays (`==` fails on arrays)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same_state(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(map(_same_state, a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


class replaying:
    """Run a block from a saved `RandomState` (None: as things are), then put the current state back.

    The recomputation inside backward draws exactly what the forward pass drew, and the random
    stream of the rest of the program is left where it was.
    """

    def __init__(self, saved):
        self.saved = saved
        self.current = None

    def __enter__(self):
        if self.saved is not None:
            self.current = RandomState(self.saved.generators)
            self.saved.restore()
        return self

    def __exit__(self, *exc):
        if self.current is not None:
            self.current.restore()
        return False


# --------------------------------------------------------------------------- what fn depends on


def leaf_copy(tensor):
    """The same array as a fresh leaf (same requires_grad): a recomputation starts here, cut from the outer graph."""
    copy = Tensor._result(tensor.data, None)
    copy.requires_grad = tensor.requires_grad
    return copy


def captured_leaves(output, own_inputs):
    """Leaves needing gradients below `output` (a tensor or a tuple of them), other than `own_inputs`.

    These are what a function closed over: for a layer called as `fn(x)`, its weights. They are
    inputs of the computation as much as `x` is, even though they were never passed in.
    """
    seen = {id(t) for t in own_inputs}
    found, stack = [], list(output) if isinstance(output, (tuple, list)) else [output]
    while stack:
        tensor = stack.pop()
        if not isinstance(tensor, Tensor) or id(tensor) in seen:
            continue
        seen.add(id(tensor))
        if tensor.node is None:
            if tensor.requires_grad:
                found.append(tensor)
        elif tensor.node.inputs is not None:
            stack.extend(tensor.node.inputs)
    return tuple(found)


# --------------------------------------------------------------------------- checkpoint


class _Call:
    """How to call `fn` again: its non-tensor arguments, and where the tensor ones go (it holds no tensor)."""

    __slots__ = ("fn", "template", "slots")

    def __init__(self, fn, args):
        self.fn = fn
        self.slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.template = [None if isinstance(a, Tensor) else a for a in args]

    def run(self, tensors):
        args = list(self.template)
        for slot, tensor in zip(self.slots, tensors):
            args[slot] = tensor
        return self.fn(*args)

    def __repr__(self):
        return getattr(self.fn, "__qualname__", repr(self.fn))


def _joined(outputs):
    """The outputs as one tensor (flattened and joined), so one inner backward serves them all."""
    return outputs[0] if len(outputs) == 1 else concatenate([o.reshape(-1) for o in outputs])


class Checkpoint(Function):
    """`fn` as one graph node: forward keeps only its inputs, backward runs `fn` again and backpropagates.

    `apply(call, generators, *tensors)`: `call` runs `fn` on the tensor arguments; `generators` are the
    numpy generators whose state to replay besides numpy's global one, or None to replay nothing.
    """

    name = "checkpoint"

    @staticmethod
    def forward(ctx, call, generators, *tensors):
        rng = None if generators is None else RandomState(generators)
        copies = [leaf_copy(t) for t in tensors]
        with enable_grad():  # recorded once, only to see what fn depends on; dropped when forward returns
            result = call.run(copies)
        as_outputs(result, lambda: f"checkpoint: the function {call!r}")
        ctx.call, ctx.n_args = call, len(tensors)
        ctx.rng = None if rng is None or rng.unchanged() else rng  # fn drew nothing: nothing to replay
        ctx.add_inputs(*captured_leaves(result, copies))
        ctx.save_for_backward(*tensors)
        return result

    @staticmethod
    def backward(ctx, *grads):
        inputs = ctx.saved_tensors + ctx.added_inputs
        if not state.grad_enabled:  # create_graph=False: one recomputation, one inner backward
            adjoints = _recompute_adjoints(ctx, [leaf_copy(a) for a in inputs[: ctx.n_args]], grads, create_graph=False)
            return (None, None) + adjoints
        # create_graph=True: the adjoints must stay differentiable with respect to the arguments, so
        # this segment's backward is itself checkpointed, as a function of the arguments and of the grads.
        n = ctx.n_args

        def segment_backward(*args_and_grads):  # its arguments are leaves already: checkpoint passes copies
            adjoints = _recompute_adjoints(ctx, args_and_grads[:n], args_and_grads[n:], create_graph=True)
            return tuple(a for a in adjoints if a is not None)

        adjoints = iter(checkpoint(segment_backward, *inputs[:n], *grads, preserve_rng_state=False))
        return (None, None) + tuple(next(adjoints) if t.requires_grad else None for t in inputs)


def _recompute_adjoints(ctx, leaves, grads, create_graph):
    """Run `fn` again from `leaves` (its saved inputs, as leaves), then backpropagate `grads` through it.

    Returns one adjoint per input of the checkpoint node (None where none is needed). The rebuilt
    graph lives only inside this call: that is the memory checkpointing saves.
    """
    with enable_grad(), replaying(ctx.rng):
        rebuilt = _joined(as_outputs(ctx.call.run(leaves), lambda: f"checkpoint: the function {ctx.call!r}"))
    sources = list(leaves) + list(ctx.added_inputs)
    wanted = [t for t in sources if t.requires_grad]
    adjoints = iter(gradients(rebuilt, wanted, grad=_joined(grads), retain_graph=True, create_graph=create_graph))
    return tuple(next(adjoints) if t.requires_grad else None for t in sources)


def checkpoint(fn, *args, preserve_rng_state=True, generators=()):
    """`fn(*args)`, keeping only its inputs for backward: the activations inside are rebuilt then.

    `fn` returns a tensor or a tuple of tensors; `args` may mix tensors and other values. The
    graph gets one node, op "checkpoint", whose inputs are the tensor arguments and the leaves
    needing gradients that `fn` closes over (the parameters of a layer), so gradients reach those
    too. Backward runs `fn` again under `enable_grad` and backpropagates through the rebuilt graph;
    with `create_graph=True` that backward is itself checkpointed, so higher derivatives work.

    Randomness inside `fn` replays identically: the state of numpy's global generator (and of
    the numpy `Generator`s in `generators`) is saved before `fn` runs and restored around the
    recomputation; `preserve_rng_state=False` skips that for an `fn` that draws nothing.

    Intermediate tensors `fn` uses should come in as arguments, not be closed over: a captured
    non-leaf tensor is differentiated through its whole history at every backward.
    """
    if not state.grad_enabled or state.forward_mode_depth:
        return fn(*args)  # no graph is recorded (or forward mode keeps no activations): nothing to save
    call = _Call(fn, args)
    tensors = [args[i] for i in call.slots]
    return Checkpoint.apply(call, tuple(generators) if preserve_rng_state else None, *tensors)


def checkpoint_sequential(layers, segments, x, preserve_rng_state=True, generators=()):
    """Run `layers` one after another on `x`, checkpointing all but the last of `segments` segments.

    `layers` is any iterable of callables (a list, an `nn.Sequential`, a generator), consumed once.
    They are cut into `segments` consecutive runs whose lengths differ by at most one (the
    longer ones first, like `numpy.array_split`). Each segment but the last becomes one
    `checkpoint` node that keeps only the segment's input. The last segment runs normally: its
    backward starts right after its forward, so rebuilding it would cost time and save nothing
    (PyTorch's `checkpoint_sequential` does the same).
    """
    layers = list(layers)
    if not 1 <= segments <= len(layers):
        raise ValueError(
            f"checkpoint_sequential: segments must be between 1 and {len(layers)} (the number of layers), got {segments}"
        )
    bounds = np.cumsum([0] + [len(part) for part in np.array_split(np.arange(len(layers)), segments)])
    for start, stop in zip(bounds[:-2], bounds[1:-1]):
        x = checkpoint(_Segment(layers[start:stop]), x, preserve_rng_state=preserve_rng_state, generators=generators)
    return _Segment(layers[bounds[-2] :])(x)


class _Segment:
    """Consecutive layers as one function (what a checkpoint node calls again in backward)."""

    __slots__ = ("layers",)

    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def __repr__(self):
        return f"segment of {len(self.layers)} layers"
