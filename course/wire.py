"""Plain data across the grader's process boundary: the judge <-> sandbox protocol.

Students' functions run in a sandbox process; the tests that judge them run in another process
(the judge) that student code never touches. The two talk over a socket, and only data crosses:

  * plain values, by value: None, bool, int, float, complex, str, bytes, list, tuple, dict, set,
    frozenset, slice, range, Ellipsis, numpy arrays (numbers, booleans, strings) and scalars, and
    a few minigrad value classes (`VALUE_CLASSES`). *Exact* types: a list subclass whose `__eq__`
    is always True cannot cross, it is refused;
  * minigrad tensors, as a flat table (so a chain of 100,000 operations needs no recursion) that
    keeps their identity across the boundary: a tensor that goes to the sandbox and comes back
    is the judge's own object again, and changes the student's code makes to it (a `.grad`
    filled in, `.data` overwritten) are copied back, as if it had run in the judge's process;
  * handles to objects that stay where they are: the judge's functions that a student's function
    calls (callbacks), and the student's instances of graded classes (a `Dual`), which the judge
    uses through proxies (see `course.judge`).

What the sandbox sends is read by `RestrictedUnpickler`, which can build nothing but the types
above: no student class, no function, no code. Each side keeps a registry of the objects the
other side knows (key -> object); the judge, which owns the lifetime of everything, tells the
sandbox which keys to forget.
"""

import io
import pickle
import select
import socket
import struct
import sys
import time
import types

import numpy as np

from minigrad.ops import Primitive
from minigrad.tensor import Node, Tensor

PROTOCOL = 5
MAX_MESSAGE_BYTES = 512 << 20
_HEADER = struct.Struct("!Q")

JUDGE, STUDENT = 0, 1  # key parity: the judge's keys are even, the sandbox's odd

# Library classes whose instances are plain values (their methods run on whichever side holds them),
# besides minigrad's nn.Module subclasses (a model travels by value, its parameters by identity).
VALUE_CLASSES = ("minigrad.symbolic:Expr", "minigrad.jit.ir:Graph", "minigrad.jit.ir:Node",
                 "minigrad.jit.memory_plan:MemoryPlan")

_NUMPY_SCALARS = tuple(
    t for t in set(np.sctypeDict.values())
    if issubclass(t, np.generic) and not issubclass(t, (np.object_, np.void, np.datetime64, np.timedelta64))
)
PLAIN_TYPES = frozenset(
    {type(None), bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset, slice, range,
     type(Ellipsis), type(NotImplemented), np.ndarray, np.dtype, *_NUMPY_SCALARS}
)
ARRAY_KINDS = "biufcUS"  # no object arrays, no structured (void) arrays


# --------------------------------------------------------------------------- errors
class WireError(Exception):
    """The other side broke the protocol or sent something that is not plain data."""


class NotPlainData(TypeError):
    """A value cannot cross the boundary (an object of the student's own class, a generator, ...)."""


class MessageTooLarge(WireError):
    """A message over the size limit: the stream cannot be trusted past it."""


class PeerTimeout(Exception):
    """The other side did not answer before the deadline."""


class PeerClosed(Exception):
    """The other side's end of the socket closed (its process died)."""


# --------------------------------------------------------------------------- framing
def send_bytes(sock, data):
    sock.sendall(_HEADER.pack(len(data)) + data)


def recv_bytes(sock, deadline=None, limit=MAX_MESSAGE_BYTES):
    """One framed message; raises PeerTimeout past `deadline` (time.monotonic) and PeerClosed at EOF."""
    (size,) = _HEADER.unpack(_recv_exactly(sock, _HEADER.size, deadline))
    if size > limit:
        raise MessageTooLarge(f"a message of {size} bytes is over the limit of {limit}")
    return _recv_exactly(sock, size, deadline)


def _recv_exactly(sock, size, deadline):
    chunks, remaining = [], size
    while remaining:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([sock], [], [], left)[0]:
                raise PeerTimeout()
        chunk = sock.recv(min(remaining, 1 << 20))
        if not chunk:
            raise PeerClosed()
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def socket_pair():
    """(judge end, sandbox end): a connected Unix socket pair; the sandbox end is inheritable."""
    judge_end, sandbox_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    sandbox_end.set_inheritable(True)
    return judge_end, sandbox_end


# --------------------------------------------------------------------------- what crosses
def resolve(spec):
    module, _, name = spec.partition(":")
    __import__(module)
    return getattr(sys.modules[module], name)


def value_classes():
    return tuple(resolve(spec) for spec in VALUE_CLASSES)


def is_value_class(cls, static):
    """A library class whose instances cross by value: one of VALUE_CLASSES or a minigrad Module."""
    if cls in static:
        return True
    from minigrad.nn.module import Module

    return isinstance(cls, type) and issubclass(cls, Module) and cls.__module__.split(".")[0] == "minigrad"


def tensor_classes():
    from minigrad.nn.module import Parameter

    return {"T": Tensor, "P": Parameter}


def primitives():
    """{name: Primitive} of minigrad's operations, the only ops a tensor from the sandbox may carry."""
    from minigrad import ops

    return {p.name: p for p in vars(ops).values() if isinstance(p, ops.Primitive)}


def by_reference(obj):
    """True for a class or function that pickle saves as its importable name (never one of
    `__main__`'s: those are the notebook's own, and travel as handles)."""
    if not isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType, np.ufunc)):
        return False
    module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", getattr(obj, "__name__", None))
    if not module or module == "__main__" or not isinstance(name, str) or module not in sys.modules:
        return False
    target = sys.modules[module]
    for part in name.split("."):
        target = getattr(target, part, None)
    return target is obj


def is_plain(obj):
    return type(obj) in PLAIN_TYPES or isinstance(obj, np.dtype)


class RestrictedUnpickler(pickle.Unpickler):
    """Builds only plain values, tensors and handles (via persistent ids): nothing else exists for it."""

    _ALLOWED = {
        ("numpy", "ndarray"), ("numpy", "dtype"),
        ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"),
        ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "slice"), ("builtins", "complex"),
        ("builtins", "range"), ("builtins", "Ellipsis"), ("builtins", "NotImplemented"),
    }

    def __init__(self, file, endpoint):
        super().__init__(file)
        self.endpoint = endpoint
        self.value_classes = {f"{c.__module__}:{c.__qualname__}": c for c in value_classes()}

    def find_class(self, module, name):
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        if module == "numpy" and isinstance(getattr(np, name, None), type) and getattr(np, name) in _NUMPY_SCALARS:
            return getattr(np, name)
        spec = f"{module}:{name}"
        if spec in self.value_classes:
            return self.value_classes[spec]
        if module.split(".")[0] == "minigrad" and module in sys.modules:  # a model: minigrad.nn.Linear, ...
            cls = getattr(sys.modules[module], name, None)
            if is_value_class(cls, ()):
                return cls
        raise WireError(f"refused to build {module}.{name}: only plain data crosses from the student's process")

    def persistent_load(self, pid):
        return self.endpoint.load_reference(pid)


class _TrustingUnpickler(pickle.Unpickler):
    def __init__(self, file, endpoint):
        super().__init__(file)
        self.endpoint = endpoint

    def persistent_load(self, pid):
        return self.endpoint.load_reference(pid)


def check_plain_tree(value, value_types):
    """Walk a decoded value (iteratively) and refuse arrays of object or structured dtype."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in (list, tuple, set, frozenset):
            if id(item) not in seen:
                seen.add(id(item))
                stack.extend(item)
        elif kind is dict:
            if id(item) not in seen:
                seen.add(id(item))
                stack.extend(item.keys())
                stack.extend(item.values())
        elif kind is np.ndarray:
            if item.dtype.kind not in ARRAY_KINDS:
                raise WireError(f"refused a numpy array of dtype {item.dtype} (numbers, booleans and strings only)")
        elif id(item) not in seen and is_value_class(kind, value_types):
            seen.add(id(item))
            stack.extend(getattr(item, slot, None) for slot in getattr(kind, "__slots__", ()))
            stack.extend(getattr(item, "__dict__", {}).values())


# --------------------------------------------------------------------------- tensor state snapshots
def snapshot(tensor):
    """A tensor's state as the other side now knows it (what `changed` compares against)."""
    node, data = tensor.node, tensor.data
    if type(data) is not np.ndarray:
        content = None  # numpy scalars are immutable
    elif data.size <= 64:
        content = data.tobytes()
    else:
        content = data.copy()
    return (data, content, tensor.grad, tensor.requires_grad, tensor._retains_grad, tensor._tangent, node,
            None if node is None else node.inputs, None if node is None else node.params)


def changed(state, tensor):
    """Whether the tensor moved on since `state = snapshot(tensor)`: another array, gradient or
    node, or the same array written in place."""
    data, content, grad, requires_grad, retains, tangent, node, inputs, params = state
    current = tensor.node
    if (tensor.data is not data or tensor.grad is not grad or tensor.requires_grad != requires_grad
            or tensor._retains_grad != retains or tensor._tangent is not tangent or current is not node):
        return True
    if current is not None and (current.inputs is not inputs or current.params is not params):
        return True
    if content is None:
        return False
    if type(content) is bytes:
        return data.tobytes() != content
    return data.shape != content.shape or not np.array_equal(data, content, equal_nan=data.dtype.kind in "fc")


class ObservedInputs(tuple):
    """A node's inputs on the sandbox side whose iterations are counted, because the judge's
    original is a tuple subclass that counts them (a test checking how often a sort expands a
    vertex); the count is replayed on the judge's object."""

    def __iter__(self):
        self.iterations = getattr(self, "iterations", 0) + 1
        return tuple.__iter__(self)


def _inputs_tuple(inputs):
    """A node's inputs as a plain tuple, read without calling a subclass's __iter__."""
    if isinstance(inputs, tuple):
        return tuple(tuple.__iter__(inputs))
    return tuple(inputs)


# --------------------------------------------------------------------------- one side of the protocol
class Endpoint:
    """Encodes and decodes messages for one side, keeping the registry of shared objects.

    `parity` is JUDGE or STUDENT. The judge's endpoint is `restricted`: decoding refuses anything
    but plain data. `export(obj, key_for)` decides how a non-plain, non-tensor object travels: a
    handle descriptor (plain data; `key_for(other)` gives a key to mention another object in it),
    None to pickle it (a module-level function or class: by its importable name, see
    `by_reference`), or NotPlainData; `make_proxy(key, descriptor)` builds the local stand-in for
    the other side's handle.
    """

    def __init__(self, sock, parity, restricted, export, make_proxy, first_key=None):
        self.sock = sock
        self.parity = parity
        self.restricted = restricted
        self.export = export
        self.make_proxy = make_proxy
        self.objects = {}  # key -> object the other side knows (ours, or a mirror of theirs)
        self.keys = {}  # id(object) -> key
        self.snapshots = {}  # key -> snapshot(), for tensors: their state when the other side last saw it
        self.next_key = parity if first_key is None else first_key
        self.to_release = []  # keys the other side may forget (sent with the next message)
        # The judge's numpy arrays travel apart, by key (judge to sandbox; cleared by `forget_arrays`
        # after each call): the sandbox says which ones the student's code wrote into, and the judge
        # copies that back; an array the student's code hands back is the judge's own object again.
        self.sent_arrays = {}  # key -> the judge's array
        self.array_keys = {}  # id(array) -> key (both sides)
        self.received_arrays = {}  # key -> the sandbox's copy
        self.announced = set()  # keys whose arrays the sandbox has already received (judge side)
        self.decoding = False  # handles must not be used (called by the unpickler) while a message is read
        self.observed = {}  # key -> ObservedInputs (sandbox side)
        self.primitives = primitives()
        self.tensor_classes = tensor_classes()
        self.value_types = frozenset(value_classes())
        self._placeholders_now = {}

    # ------------------------------------------------------------------ registry
    def own(self, key):
        return key % 2 == self.parity

    def _new_key(self):
        key = self.next_key
        self.next_key += 2
        return key

    def _register(self, key, obj):
        self.objects[key] = obj
        self.keys[id(obj)] = key

    def key_of(self, obj):
        return self.keys.get(id(obj))

    def forget(self, keys):
        for key in keys:
            obj = self.objects.pop(key, None)
            if obj is not None:
                self.keys.pop(id(obj), None)
            self.snapshots.pop(key, None)
            self.observed.pop(key, None)

    def clear(self):
        self.forget(list(self.objects))
        self.to_release.clear()

    def collect(self):
        """Forget the objects nothing but the registry holds any more (the judge's side); the
        other side is told with the next message."""
        baseline = _registry_refcount()
        for key in list(self.objects):
            obj = self.objects[key]
            if sys.getrefcount(obj) <= baseline:
                del obj
                self.forget([key])
                self.to_release.append(key)

    # ------------------------------------------------------------------ encoding
    def encode(self, message, scan_own=False):
        """Bytes for `message`. Tensors it reaches travel in the table, and so does every shared
        tensor whose state changed since the other side last saw it. The sandbox watches all it
        shares; the judge watches the sandbox's tensors it holds, and its own only when it answers
        a callback (`scan_own`: the student's code may have called `optimizer.zero_grad()`), since
        its own reach the sandbox anyway whenever a request refers to them."""
        encoder = _Encoder(self)
        payload = encoder.dump(message)
        for key, state in list(self.snapshots.items()):
            if self.restricted and not scan_own and self.own(key):
                continue
            obj = self.objects.get(key)
            if obj is not None and key not in encoder.described and changed(state, obj):
                encoder.reference_tensor(obj)
        table = encoder.table()
        release, self.to_release = self.to_release, []
        data = pickle.dumps((release, table, encoder.arrays, payload), protocol=PROTOCOL)
        encoder.commit()
        return data

    def forget_arrays(self):
        self.sent_arrays.clear()
        self.array_keys.clear()
        self.received_arrays.clear()
        self.announced.clear()

    def send(self, message, scan_own=False):
        send_bytes(self.sock, self.encode(message, scan_own))

    # ------------------------------------------------------------------ decoding
    def recv(self, deadline=None):
        return self.decode(recv_bytes(self.sock, deadline))

    def decode(self, data):
        self.decoding = True
        try:
            return self._decode(data)
        finally:
            self.decoding = False

    def _decode(self, data):
        if self.restricted:
            value = RestrictedUnpickler(io.BytesIO(data), _NoReferences()).load()
            if not (type(value) is tuple and len(value) == 4 and type(value[0]) is list
                    and all(type(k) is int for k in value[0]) and value[2] == {} and type(value[3]) is bytes):
                raise WireError("malformed message")
            release, table, _, payload = value
            check_plain_tree(table, self.value_types)
        else:
            release, table, arrays, payload = pickle.loads(data)
            self.received_arrays.update(arrays)
            self.array_keys.update((id(array), key) for key, array in arrays.items())
        self.forget(release)
        placeholders = self._apply_table(table)
        self._placeholders_now = placeholders
        try:
            value = self._unpickle(payload)
        finally:
            self._placeholders_now = {}
        for key, obj in placeholders.items():
            self._register(key, obj)
            self.snapshots[key] = snapshot(obj)
        return value

    def _unpickle(self, blob):
        unpickler = (RestrictedUnpickler if self.restricted else _TrustingUnpickler)(io.BytesIO(blob), self)
        value = unpickler.load()
        if self.restricted:
            check_plain_tree(value, self.value_types)
        return value

    def load_reference(self, pid):
        if type(pid) is tuple and len(pid) == 2 and pid[0] == "P" and type(pid[1]) is str:
            if pid[1] not in self.primitives:
                raise WireError(f"operation {pid[1]!r} is not one of minigrad's primitives")
            return self.primitives[pid[1]]
        if type(pid) is not tuple or len(pid) not in (2, 3) or pid[0] not in ("T", "H", "A") or type(pid[1]) is not int:
            raise WireError("malformed reference")
        key = pid[1]
        if pid[0] == "A":
            arrays = self.sent_arrays if self.restricted else self.received_arrays
            if key not in arrays:
                raise WireError(f"unknown array key {key}")
            return arrays[key]
        if pid[0] == "T":
            obj = self._placeholders_now.get(key)
            obj = self.objects.get(key) if obj is None else obj
            if not isinstance(obj, Tensor):
                raise WireError(f"unknown tensor key {key}")
            return obj
        obj = self.objects.get(key)
        if obj is not None:
            return obj
        if self.own(key) or len(pid) != 3 or pid[2] is None:
            raise WireError(f"unknown handle key {key} (the object is gone)")
        proxy = self.make_proxy(key, pid[2])
        self._register(key, proxy)
        return proxy

    def _apply_table(self, table):
        """Create or update the tensors a message describes; {key: tensor}."""
        columns = _check_table(table) if self.restricted else table
        keys, classes, data, grads, flags, tangents, ops, inputs, params, odd_grads, data_keys = columns
        tensors = {}
        for key, code in zip(keys, classes):
            obj = self.objects.get(key)
            if obj is None:
                if self.own(key):
                    raise WireError(f"unknown tensor key {key}")
                cls = self.tensor_classes[code]
                obj = cls.__new__(cls)
            elif not isinstance(obj, Tensor):
                raise WireError(f"key {key} is not a tensor")
            tensors[key] = obj

        def tensor(key):
            obj = tensors.get(key)
            obj = self.objects.get(key) if obj is None else obj
            if not isinstance(obj, Tensor):
                raise WireError(f"unknown tensor key {key}")
            return obj

        for i, key in enumerate(keys):
            t = tensors[key]
            t.data = self._data(data[i], data_keys[i])
            t.grad = odd_grads[i] if i in odd_grads else (None if grads[i] is None else tensor(grads[i]))
            flag = flags[i]
            t.requires_grad, t._retains_grad = bool(flag & 1), bool(flag & 2)
            t._tangent = None if tangents[i] is None else tensor(tangents[i])
            if ops[i] is None:
                t.node = None
            else:
                refs = inputs[i]
                t.node = self._node(t, key, ops[i], None if refs is None else tuple(map(tensor, refs)), params[i],
                                    bool(flag & 4))
        return tensors

    def _data(self, data, key):
        """A tensor's data as decoded: registered by its array key (sandbox side), or written into
        the judge's own array when the sandbox says it is that array (judge side)."""
        if key is None:
            return data
        if not self.restricted:
            self.received_arrays[key] = data
            self.array_keys[id(data)] = key
            return data
        target = self.sent_arrays.get(key)
        if type(target) is np.ndarray and target.shape == data.shape and target.dtype == data.dtype \
                and target.flags.writeable:
            np.copyto(target, data)
            return target
        return data

    def _node(self, tensor, key, name, inputs, params, observe):
        op = self.primitives.get(name)
        if op is None:
            raise WireError(f"operation {name!r} is not one of minigrad's primitives")
        node = getattr(tensor, "node", None)
        if not isinstance(node, Node):
            node = Node.__new__(Node)
            node.inputs = None
        node.op, node.params = op, params
        if inputs is None or node.inputs is None or not _same_tensors(_inputs_tuple(node.inputs), inputs):
            if observe and inputs is not None and not self.restricted:
                inputs = ObservedInputs(inputs)
                self.observed[key] = inputs
            node.inputs = inputs  # (the same tensors: the original inputs object, whatever its type, stays)
        return node


_COLUMNS = 11
_LISTS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 10)  # every column but odd_grads (a dict)


def _check_table(table):
    """The sandbox's tensor table, checked column by column (types of every cell)."""
    if type(table) is not tuple or len(table) != _COLUMNS or not all(type(table[i]) is list for i in _LISTS):
        raise WireError("malformed tensor table")
    keys, classes, data, grads, flags, tangents, ops, inputs, params, odd_grads, data_keys = table
    n = len(keys)
    if any(len(table[i]) != n for i in _LISTS) or type(odd_grads) is not dict:
        raise WireError("malformed tensor table")
    key_or_none = (int, type(None))
    ok = (all(type(k) is int for k in keys) and all(c in ("T", "P") for c in classes)
          and all(type(k) in key_or_none for k in data_keys)
          and all(type(d) is np.ndarray or type(d) in _NUMPY_SCALARS for d in data)
          and all(type(g) in key_or_none for g in grads) and all(type(t) in key_or_none for t in tangents)
          and all(type(f) is int for f in flags) and all(type(o) in (str, type(None)) for o in ops)
          and all(r is None or (type(r) is tuple and all(type(k) is int for k in r)) for r in inputs)
          and all(p is None or (type(p) is dict and all(type(k) is str for k in p)) for p in params)
          and all(type(i) is int and 0 <= i < n for i in odd_grads))
    if not ok:
        raise WireError("malformed tensor table")
    return table


def _same_tensors(a, b):
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


class _NoReferences:
    def load_reference(self, pid):
        raise WireError("reference outside a payload")


_REGISTRY_BASELINE = []


def _registry_refcount():
    """What sys.getrefcount reports inside `Endpoint.collect` for an object only the registry holds."""
    if not _REGISTRY_BASELINE:
        probe = Endpoint.__new__(Endpoint)
        probe.objects, probe.keys, probe.snapshots, probe.to_release = {0: object()}, {}, {}, []
        counts = []
        for key in list(probe.objects):
            obj = probe.objects[key]
            counts.append(sys.getrefcount(obj))
            del obj
        _REGISTRY_BASELINE.append(counts[0])
    return _REGISTRY_BASELINE[0]


class _Encoder:
    """One message's encoding: the payload pickle, then the table of tensors it reaches."""

    def __init__(self, endpoint):
        self.endpoint = endpoint
        self.staged = {}  # key -> object newly registered by this message (committed after sending)
        self.staged_ids = {}  # id(object) -> key, for `staged`
        self.pending = []  # (key, tensor) to describe
        self.described = set()  # keys described
        self.arrays = {}  # key -> numpy array sent apart in this message (the judge's side)

    def _key(self, obj):
        key = self.endpoint.keys.get(id(obj))
        return self.staged_ids.get(id(obj)) if key is None else key

    def _stage(self, obj):
        key = self.endpoint._new_key()
        self.staged[key] = obj
        self.staged_ids[id(obj)] = key
        return key

    def _handle_key(self, obj):
        """The key of an object referenced from a handle's descriptor (an instance's class)."""
        key = self._key(obj)
        return self._stage(obj) if key is None else key

    def reference_tensor(self, tensor):
        """The tensor's key; describes it (later) if the other side lacks it or its state changed."""
        key = self._key(tensor)
        if key is None:
            key = self._stage(tensor)
            self._describe(key, tensor)
        elif key not in self.described and key not in self.staged:
            state = self.endpoint.snapshots.get(key)
            if state is None or changed(state, tensor):
                self._describe(key, tensor)
        return key

    def _describe(self, key, tensor):
        self.described.add(key)
        self.pending.append((key, tensor))

    def dump(self, obj):
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=PROTOCOL)
        pickler.persistent_id = self.persistent_id
        pickler.dump(obj)
        return buffer.getvalue()

    def persistent_id(self, obj):
        kind = type(obj)
        if kind is np.ndarray:
            endpoint = self.endpoint
            key = endpoint.array_keys.get(id(obj))
            if endpoint.restricted:
                if key is None:
                    key = endpoint.array_keys[id(obj)] = len(endpoint.array_keys)
                    endpoint.sent_arrays[key] = obj
                if key not in self.arrays and key not in endpoint.announced:
                    self.arrays[key] = obj
                    endpoint.announced.add(key)
                return ("A", key)
            if key is not None and endpoint.received_arrays.get(key) is obj:
                return ("A", key)  # the judge's own array, handed back: it stays the same object there
            return None
        if kind in PLAIN_TYPES or kind is pickle.PickleBuffer or isinstance(obj, np.dtype):
            return None
        if isinstance(obj, Tensor):
            if kind not in self.endpoint.tensor_classes.values():
                raise NotPlainData(f"a {kind.__name__} (a Tensor subclass) cannot cross: use minigrad.Tensor")
            return ("T", self.reference_tensor(obj))
        if is_value_class(kind, self.endpoint.value_types) or (
                isinstance(obj, type) and is_value_class(obj, self.endpoint.value_types)):
            return None  # a value class's instance, or the class itself (saved by name for its instances)
        if kind is Primitive and self.endpoint.primitives.get(obj.name) is obj:
            return ("P", obj.name)  # an operation, by name: each side has its own (the IR, a node's op)
        key = self._key(obj)
        if key is not None:
            return ("H", key, None)
        descriptor = self.endpoint.export(obj, self._handle_key)
        if descriptor is None:
            return None  # this side's policy: pickled by value (a library function: by reference)
        return ("H", self._stage(obj), descriptor)

    def table(self):
        """The described tensors as columns of plain values (tensor references are keys), following
        grads, tangents and node inputs iteratively: a deep graph never makes anything recurse."""
        keys, classes, data, grads, flags, tangents, ops, inputs, params, odd_grads, data_keys = (
            *([] for _ in range(9)), {}, [])
        stack = self.pending
        self.pending = []
        while stack:
            key, tensor = stack.pop()
            node = tensor.node
            grad, tangent = tensor.grad, tensor._tangent
            refs = None if node is None or node.inputs is None else _inputs_tuple(node.inputs)
            keys.append(key)
            classes.append("T" if type(tensor) is Tensor else "P")
            data.append(tensor.data)
            data_keys.append(self.data_key(tensor.data))
            if isinstance(grad, Tensor):
                grads.append(self.reference_tensor(grad))
            else:
                grads.append(None)
                if grad is not None:
                    odd_grads[len(keys) - 1] = grad
            tangents.append(None if tangent is None else self.reference_tensor(tangent))
            observe = node is not None and node.inputs is not None and type(node.inputs) is not tuple
            flags.append(int(tensor.requires_grad) | int(tensor._retains_grad) << 1 | int(observe) << 2)
            ops.append(None if node is None else node.op.name)
            inputs.append(None if refs is None else tuple(self.reference_tensor(t) for t in refs))
            params.append(None if node is None else node.params)
            stack.extend(self.pending)
            self.pending.clear()
        return keys, classes, data, grads, flags, tangents, ops, inputs, params, odd_grads, data_keys

    def data_key(self, data):
        """The array key of a tensor's data: the judge registers its arrays (so that one the student
        keeps, in a traced graph say, comes back as the same object); the sandbox names the judge's
        arrays it still holds (so that writing into one writes into the judge's)."""
        if type(data) is not np.ndarray:
            return None
        endpoint = self.endpoint
        key = endpoint.array_keys.get(id(data))
        if endpoint.restricted:
            if key is None:
                key = endpoint.array_keys[id(data)] = len(endpoint.array_keys)
                endpoint.sent_arrays[key] = data
            return key
        return key if key is not None and endpoint.received_arrays.get(key) is data else None

    def commit(self):
        endpoint = self.endpoint
        for key, obj in self.staged.items():
            endpoint._register(key, obj)
        for key in self.described:
            obj = endpoint.objects.get(key)
            if obj is not None:
                endpoint.snapshots[key] = snapshot(obj)

