"""Plain data: the only values that cross the grader's process boundary.

A value is *plain* when it is built from None, bool, int, float, complex, str, bytes, and tuples,
lists and dicts of plain values, and numpy arrays or scalars of booleans and numbers. Types are
exact: a list subclass whose `__eq__` is always true, a Tensor, a generator or a range is not
plain. `encode` turns a plain value into bytes; `decode` turns such bytes back into an equal value
without running any of the sender's code (no pickle: a JSON skeleton plus raw array buffers, every
length checked against the shape it claims). Sizes are capped on both sides, so that a small
message can never make the receiver allocate without bound.

`roundtrip` is what a value looks like after the trip: the course's `drive` uses it in the
student's own kernel too, so that a driver returning something that is not plain fails there
exactly as it fails in the grader.
"""

import json
import struct

import numpy as np

MAX_BYTES = 64 << 20  # one message
MAX_DEPTH = 64  # nesting of containers
MAX_ITEMS = 1 << 20  # containers' items and dicts' entries, in all
MAX_TEXT = 1 << 22  # characters of one string, bytes of one bytes object
MAX_DIMS = 32

_DTYPES = {np.dtype(name).str: np.dtype(name) for name in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128")}
_NUMPY_SCALARS = frozenset(dtype.type for dtype in _DTYPES.values())
_SCALARS = (bool, int, float, str, type(None))
_HEADER = struct.Struct("<I")


class NotPlainData(TypeError):
    """A value that may not cross: it is not plain, or it is too large."""


def encode(value, limit=MAX_BYTES):
    """Bytes for a plain `value`. Raises NotPlainData naming where the offending part is."""
    buffers = []
    budget = [MAX_ITEMS, limit]
    skeleton = _encode(value, buffers, budget, "the value", 0)
    header = json.dumps({"v": skeleton, "b": [len(b) for b in buffers]}, allow_nan=True,
                        separators=(",", ":")).encode()
    size = _HEADER.size + len(header) + sum(len(b) for b in buffers)
    if size > limit:
        raise NotPlainData(f"the value is too large to send: {size:,} bytes (at most {limit:,})")
    return b"".join([_HEADER.pack(len(header)), header, *buffers])


def decode(data, limit=MAX_BYTES):
    """The plain value `encode` made `data` from. Raises NotPlainData on anything malformed."""
    try:
        if len(data) > limit:
            raise NotPlainData(f"a message of {len(data):,} bytes (at most {limit:,})")
        (length,) = _HEADER.unpack_from(data)
        header = json.loads(bytes(data[_HEADER.size:_HEADER.size + length]))
        sizes = header["b"]
        if type(sizes) is not list or any(type(s) is not int or s < 0 for s in sizes):
            raise NotPlainData("malformed message: buffer sizes")
        offsets, position = [], _HEADER.size + length
        for size in sizes:
            offsets.append((position, size))
            position += size
        if position != len(data):
            raise NotPlainData("malformed message: its buffers do not add up to its length")
        view = memoryview(data)
        buffers = [view[start:start + size] for start, size in offsets]
        return _decode(header["v"], buffers, [MAX_ITEMS], 0)
    except NotPlainData:
        raise
    except (ValueError, KeyError, TypeError, IndexError, RecursionError, struct.error) as error:
        raise NotPlainData(f"malformed message: {type(error).__name__}: {error}") from None


def roundtrip(value):
    """`value` as the receiving side sees it (copies; raises NotPlainData where it would)."""
    return decode(encode(value))


def _spend(budget, items, where):
    budget[0] -= items
    if budget[0] < 0:
        raise NotPlainData(f"{where}: too many items to send (at most {MAX_ITEMS:,} in all)")


def _encode(value, buffers, budget, where, depth):
    kind = type(value)
    if depth > MAX_DEPTH:
        raise NotPlainData(f"{where}: nested more than {MAX_DEPTH} levels deep")
    if kind in _SCALARS:
        if kind is str and len(value) > MAX_TEXT:
            raise NotPlainData(f"{where}: a string of {len(value):,} characters (at most {MAX_TEXT:,})")
        if kind is int and value.bit_length() > 4096:
            raise NotPlainData(f"{where}: an integer of {value.bit_length():,} bits (at most 4096)")
        return value
    if kind is complex:
        return {"c": [value.real, value.imag]}
    if kind is bytes:
        if len(value) > MAX_TEXT:
            raise NotPlainData(f"{where}: {len(value):,} bytes (at most {MAX_TEXT:,})")
        buffers.append(value)
        return {"y": len(buffers) - 1}
    if kind in (list, tuple):
        _spend(budget, len(value), where)
        items = [_encode(item, buffers, budget, f"{where}[{i}]", depth + 1) for i, item in enumerate(value)]
        return {"l" if kind is list else "t": items}
    if kind is dict:
        _spend(budget, len(value), where)
        return {"d": [[_encode(k, buffers, budget, f"{where} (a key)", depth + 1),
                       _encode(v, buffers, budget, f"{where}[{k!r:.40}]", depth + 1)] for k, v in value.items()]}
    if kind is np.ndarray or kind in _NUMPY_SCALARS:
        array = np.asarray(value)
        if array.dtype.str not in _DTYPES:
            raise NotPlainData(f"{where}: a numpy {array.dtype} array; only booleans and numbers can be sent")
        if array.nbytes > budget[1]:
            raise NotPlainData(f"{where}: an array of {array.nbytes:,} bytes (at most {budget[1]:,})")
        budget[1] -= array.nbytes
        buffers.append(np.ascontiguousarray(array).tobytes())
        shape = list(array.shape) if kind is np.ndarray else None
        return {"a": [array.dtype.str, shape, len(buffers) - 1]}
    raise NotPlainData(f"{where}: a {_type_name(value)} is not plain data; send numbers, strings, lists, tuples, "
                       f"dicts and numpy arrays (for a Tensor: its .data)")


def _decode(node, buffers, budget, depth):
    if depth > MAX_DEPTH:
        raise NotPlainData(f"malformed message: nested more than {MAX_DEPTH} levels deep")
    kind = type(node)
    if kind in (bool, int, float, str, type(None)):
        return node
    if kind is not dict or len(node) != 1:
        raise NotPlainData("malformed message: an unknown node")
    (tag, body), = node.items()
    if tag in ("l", "t") and type(body) is list:
        _spend(budget, len(body), "the message")
        items = [_decode(item, buffers, budget, depth + 1) for item in body]
        return items if tag == "l" else tuple(items)
    if tag == "d" and type(body) is list:
        _spend(budget, len(body), "the message")
        pairs = [(_decode(k, buffers, budget, depth + 1), _decode(v, buffers, budget, depth + 1)) for k, v in body]
        return dict(pairs)
    if tag == "c" and type(body) is list and len(body) == 2 and all(type(x) in (int, float) for x in body):
        return complex(*body)
    if tag == "y" and type(body) is int:
        return bytes(buffers[body])
    if tag == "a" and type(body) is list and len(body) == 3:
        return _array(*body, buffers)
    raise NotPlainData(f"malformed message: an unknown node {tag!r}")


def _array(dtype, shape, index, buffers):
    if dtype not in _DTYPES or type(index) is not int or not 0 <= index < len(buffers):
        raise NotPlainData("malformed message: an array")
    dtype = _DTYPES[dtype]
    if shape is not None and (type(shape) is not list or len(shape) > MAX_DIMS
                              or any(type(n) is not int or n < 0 for n in shape)):
        raise NotPlainData("malformed message: an array's shape")
    count = 1
    for n in shape or ():
        count *= n
    if count * dtype.itemsize != len(buffers[index]):
        raise NotPlainData("malformed message: an array's data does not match its shape")
    array = np.frombuffer(buffers[index], dtype=dtype).copy()
    return array.reshape(shape) if shape is not None else array[0]


def _type_name(value):
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    return kind.__name__ if module in ("builtins", "") else f"{module}.{kind.__qualname__}"
