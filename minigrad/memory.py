"""Memory: how many bytes a graph keeps for its backward pass, and gradient checkpointing.

Reverse mode needs, in the backward pass, the inputs that every operation saw in the forward
pass, so a graph keeps them alive until backward has used them: O(N) bytes for a chain of N
operations. `saved_bytes` counts them in a graph, `track_saved_bytes` follows them over time
(the peak of a whole forward and backward pass).

`checkpoint(fn, *args)` trades compute for memory (Chen et al. 2016, after Griewank's
checkpointing of adjoint codes): the graph keeps only the inputs of `fn`, and the backward pass
runs `fn` again to rebuild the activations it needs, one segment at a time.
`checkpoint_sequential(layers, segments, x)` cuts a chain of layers into segments; with about √N
segments of √N layers, both the kept segment inputs and one rebuilt segment are O(√N).

What counts as saved: the arrays of the tensors that recorded operations took as inputs, except
leaves (data and parameters live whether or not there is a graph). Views share their base array,
so a buffer counts once however many tensors or nodes hold it. Arrays kept as operation
parameters (masks, indices, the random state a checkpoint saves) are small and not counted.
"""

import weakref

import numpy as np

from .autograd import gradients
from .errors import MinigradError
from .functional import concatenate
from .grad_mode import enable_grad, no_grad, state
from .ops import Primitive
from .tensor import Node, Tensor

# --------------------------------------------------------------------------- counting saved bytes


def buffer_of(array):
    """The array that owns the memory behind `array` (itself unless it is a view)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def saved_bytes(output):
    """Bytes of the arrays the graph below `output` holds for its backward pass.

    Every recorded operation holds its input tensors; the non-leaf ones are activations that
    exist only because backward will need them. Each underlying buffer counts once, however many
    operations (or views of it) hold it. A graph freed by backward holds nothing.
    """
    buffers = {}
    seen = set()
    stack = [output]
    while stack:
        tensor = stack.pop()
        if id(tensor) in seen or tensor.node is None or tensor.node.inputs is None:
            continue
        seen.add(id(tensor))
        for parent in tensor.node.inputs:
            if parent.node is not None:
                buffer = buffer_of(parent.data)
                buffers[id(buffer)] = buffer.nbytes
            stack.append(parent)
    return sum(buffers.values())


class track_saved_bytes:
    """Follow the bytes held for backward while a block runs; `.peak` is the most at any moment.

    ::

        with track_saved_bytes() as tracker:
            loss = model(x).sum()
            loss.backward()
        tracker.peak      # bytes, counted like `saved_bytes`
        tracker.history   # the bytes held after each change, for plotting memory over time

    A non-leaf tensor counts from the moment a recorded operation takes it as input until Python
    frees it (the graph let go of it after backward, or nothing referenced it any more), so views
    of one buffer count once. Tensors the caller still references keep counting: the measurement
    is of what is alive, which is what memory is.
    """

    def __init__(self):
        self.current = 0
        self.peak = 0
        self.history = []
        self._watched = {}  # id(tensor) -> (weak reference, id(buffer))
        self._buffers = {}  # id(buffer) -> [bytes, how many watched tensors hold it]
        self._outer = None

    def __enter__(self):
        self._outer = state.record_hook
        state.record_hook = self._on_record
        return self

    def __exit__(self, *exc):
        state.record_hook = self._outer
        self._watched = {}  # dropping the weak references also drops their callbacks
        return False

    def _on_record(self, node):
        if self._outer is not None:
            self._outer(node)
        for tensor in node.inputs:
            if tensor.node is not None and id(tensor) not in self._watched:
                self._watch(tensor)

    def _watch(self, tensor):
        buffer = buffer_of(tensor.data)
        key = id(buffer)
        entry = self._buffers.setdefault(key, [buffer.nbytes, 0])
        entry[1] += 1
        if entry[1] == 1:
            self.current += entry[0]
            self.peak = max(self.peak, self.current)
            self.history.append(self.current)
        tensor_id = id(tensor)
        self._watched[tensor_id] = (weakref.ref(tensor, lambda _, t=tensor_id: self._release(t)), key)

    def _release(self, tensor_id):
        _, key = self._watched.pop(tensor_id)
        entry = self._buffers[key]
        entry[1] -= 1
        if entry[1] == 0:
            self.current -= entry[0]
            self.history.append(self.current)
            del self._buffers[key]


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


# --------------------------------------------------------------------------- checkpoint


def leaf_copy(tensor):
    """The same array as a fresh leaf (same requires_grad): a recomputation starts here, cut from the outer graph."""
    copy = Tensor._result(tensor.data, None)
    copy.requires_grad = tensor.requires_grad
    return copy


def captured_leaves(output, own_inputs):
    """Leaves needing gradients below `output`, other than `own_inputs`: what a function closed over.

    For a layer called as `fn(x)` these are its weights: they are inputs of the computation as much
    as `x` is, even though they were never passed in.
    """
    seen = {id(t) for t in own_inputs}
    found, stack = [], [output]
    while stack:
        tensor = stack.pop()
        if id(tensor) in seen:
            continue
        seen.add(id(tensor))
        if tensor.node is None:
            if tensor.requires_grad:
                found.append(tensor)
        elif tensor.node.inputs is not None:
            stack.extend(tensor.node.inputs)
    return tuple(found)


def pack(result):
    """One tensor standing for a function's result: the tensor itself, or a tuple's tensors flattened and joined."""
    if isinstance(result, Tensor):
        return result
    if not isinstance(result, (tuple, list)) or not result or not all(isinstance(o, Tensor) for o in result):
        raise MinigradError(
            f"checkpoint: the function must return a tensor or a non-empty tuple of tensors, got {type(result).__name__}"
        )
    return concatenate([o.reshape(-1) for o in result])


def unpack(packed, like):
    """`packed` cut back into the structure of `like` (what `pack` was given): pieces of it, not copies."""
    if isinstance(like, Tensor):
        return packed
    pieces, start = [], 0
    for o in like:
        piece = packed[start : start + o.size].reshape(o.shape)
        pieces.append(piece if piece.dtype == o.dtype else piece.astype(o.dtype))
        start += o.size
    return tuple(pieces)


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


def _recompute_adjoints(call, rng, leaves, captured, g, create_graph):
    """Run `fn` again from `leaves` (its saved inputs, as leaves), then backpropagate `g` through it.

    Returns one adjoint per input of the checkpoint node (None where none is needed). The rebuilt
    graph lives only inside this call: that is the memory checkpointing saves.
    """
    with enable_grad(), replaying(rng):
        packed = pack(call.run(leaves))
    sources = list(leaves) + list(captured)
    wanted = [t for t in sources if t.requires_grad]
    adjoints = iter(gradients(packed, wanted, grad=g, retain_graph=True, create_graph=create_graph))
    return tuple(next(adjoints) if t.requires_grad else None for t in sources)


def _checkpoint_vjp(g, out, *inputs, call, rng):
    args, captured = inputs[: len(call.slots)], inputs[len(call.slots) :]
    if not state.grad_enabled:  # create_graph=False: one recomputation, one inner backward
        return _recompute_adjoints(call, rng, [leaf_copy(a) for a in args], captured, g, create_graph=False)
    # create_graph=True: the adjoints must stay differentiable with respect to the arguments, so
    # this segment's backward is itself checkpointed, as a function of the arguments and of g.

    def segment_backward(*args_and_g):  # its arguments are leaves already: checkpoint passes copies
        adjoints = _recompute_adjoints(call, rng, args_and_g[:-1], captured, args_and_g[-1], create_graph=True)
        return tuple(a for a in adjoints if a is not None)

    adjoints = iter(checkpoint(segment_backward, *args, g, preserve_rng_state=False))
    return tuple(next(adjoints) if t.requires_grad else None for t in inputs)


def _checkpoint_forward(*arrays, call, rng):
    """The forward computation on plain arrays (for `minigrad.evaluate` and tracers)."""
    tensors = [Tensor._result(a, None) for a in arrays[: len(call.slots)]]
    with no_grad(), replaying(rng):
        return pack(call.run(tensors)).data


def _checkpoint_jvp(tangents, out, *inputs, call, rng):
    raise MinigradError("checkpoint: forward mode runs fn directly and never records a checkpoint node")


checkpoint_op = Primitive("checkpoint", forward=_checkpoint_forward, vjp=_checkpoint_vjp, jvp=_checkpoint_jvp)


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
    rng = RandomState(generators) if preserve_rng_state else None
    call = _Call(fn, args)
    tensor_args = tuple(args[i] for i in call.slots)
    copies = [leaf_copy(a) for a in tensor_args]
    result = call.run(copies)  # records fn's graph once, to see what it depends on; dropped on return
    packed = pack(result)
    if not packed.requires_grad:
        return result
    if rng is not None and rng.unchanged():
        rng = None  # fn drew no random numbers, so its recomputation will draw none: nothing to replay
    inputs = tensor_args + captured_leaves(packed, copies)
    return unpack(Tensor._result(packed.data, Node(checkpoint_op, inputs, {"call": call, "rng": rng})), result)


def checkpoint_sequential(layers, segments, x, preserve_rng_state=True, generators=()):
    """Run `layers` one after another on `x`, checkpointing all but the last of `segments` segments.

    The layers are cut into `segments` consecutive runs whose lengths differ by at most one (the
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
