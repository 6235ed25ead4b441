"""How many bytes a graph keeps for its backward pass: `saved_bytes` (a snapshot), `track_saved_bytes` (over time).

Reverse mode needs, in the backward pass, the inputs that every operation saw in the forward
pass, so a graph keeps them alive until backward has used them: O(N) bytes for a chain of N
operations. `saved_bytes` counts them in a graph, `track_saved_bytes` follows them over time
(the peak of a whole forward and backward pass).

What counts as saved: the arrays of the tensors that recorded operations took as inputs, except
leaves (data and parameters live whether or not there is a graph). Views share their base array,
so a buffer counts once however many tensors or nodes hold it. Arrays kept as operation
parameters (masks, indices, the random state a checkpoint saves) are small and not counted.
"""

import weakref

import numpy as np

from .grad_mode import add_record_hook, remove_record_hook


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
        self._hook = self._on_record  # one bound method: remove_record_hook finds the hook by identity

    def __enter__(self):
        add_record_hook(self._hook)
        return self

    def __exit__(self, *exc):
        remove_record_hook(self._hook)
        self._watched = {}  # dropping the weak references also drops their callbacks
        return False

    def _on_record(self, node):
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
