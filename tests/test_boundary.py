"""The grader's process boundary in one process: `minigrad.plain` and `course.wire`.

Whatever the student's process sends, the judge decodes only plain data, within fixed sizes,
without running any code of the sender's: a forged message can make neither an object nor a
large allocation. And `drive` gives a notebook, locally, the same trip its values make in the
grader.
"""

import json
import struct
import threading

import numpy as np
import pytest

import minigrad as mg
from course import wire
from minigrad import plain
from minigrad.testing import drive


class AlwaysEqual(list):
    def __eq__(self, other):
        return True


class FakeFloat(float):
    pass


PLAIN = [
    None, True, 0, -7, 2 ** 200, 1.5, float("inf"), "text", b"\x00bytes", 1 + 2j,
    [1, [2, [3]]], (1, (2.0, "x")), {"a": 1, 2: [3], (4, 5): None},
    np.arange(12.0).reshape(3, 4), np.zeros((0, 3), dtype=np.float32), np.array(True), np.int64(3),
    np.float32(2.5), np.arange(6, dtype=np.uint8)[::2], np.asfortranarray(np.ones((2, 3))),
]


@pytest.mark.parametrize("value", PLAIN, ids=lambda v: type(v).__name__)
def test_plain_values_survive_the_trip(value):
    back = plain.roundtrip(value)
    assert type(back) is type(value)
    if isinstance(value, (np.ndarray, np.generic)):
        assert back.dtype == value.dtype and np.shape(back) == np.shape(value)
        assert np.array_equal(back, value)
        if isinstance(back, np.ndarray):
            assert back.flags.writeable and back.flags.c_contiguous
    else:
        assert back == value


def test_nan_survives_the_trip():
    assert np.isnan(plain.roundtrip(float("nan")))
    assert np.isnan(plain.roundtrip(np.array([np.nan]))).all()


REFUSED = {
    "a tensor": mg.tensor([1.0, 2.0]),
    "a range": range(400_000_000),
    "a generator": (i for i in range(3)),
    "a list subclass": AlwaysEqual([1]),
    "a float subclass": FakeFloat(1.0),
    "a function": len,
    "a class": int,
    "an object array": np.array([object()]),
    "a string array": np.array(["a", "b"]),
    "a set": {1, 2},
    "nested too deep": json.loads("[" * 70 + "]" * 70),
    "an 800 GB zero-stride array": np.lib.stride_tricks.as_strided(np.zeros(1), shape=(10 ** 11,), strides=(0,)),
    "too many items": [0] * (plain.MAX_ITEMS + 1),
    "a huge string": "x" * (plain.MAX_TEXT + 1),
}


@pytest.mark.parametrize("value", REFUSED.values(), ids=REFUSED.keys())
def test_what_is_not_plain_is_refused_by_the_sender(value):
    with pytest.raises(plain.NotPlainData):
        plain.encode(value)


def test_refusals_say_where():
    with pytest.raises(plain.NotPlainData, match=r"the value\[1\]\['grad'\]: a minigrad.tensor.Tensor"):
        plain.encode([1, {"grad": mg.tensor(1.0)}])


def _message(skeleton, buffers=()):
    header = json.dumps({"v": skeleton, "b": [len(b) for b in buffers]}).encode()
    return struct.pack("<I", len(header)) + header + b"".join(buffers)


FORGED = {
    "a shape larger than its data": _message({"a": ["<f8", [10 ** 11], 0]}, [b"\x00" * 8]),
    "negative dimensions": _message({"a": ["<f8", [-1], 0]}, [b""]),
    "an object dtype": _message({"a": ["|O", [1], 0]}, [b"\x00" * 8]),
    "a missing buffer": _message({"a": ["<f8", [1], 3]}, [b"\x00" * 8]),
    "an unknown tag": _message({"p": "os.system"}),
    "buffers longer than declared": _message(1, [b"abc"]) + b"more",
    "an unhashable key": _message({"d": [[{"l": [1]}, 2]]}),
    "a truncated header": struct.pack("<I", 1000) + b"{}",
    "a deep skeleton": _message(json.loads('{"l": [' * 70 + "1" + "]}" * 70)),
    "not json": struct.pack("<I", 4) + b"\x80\x04K.",
}


@pytest.mark.parametrize("data", FORGED.values(), ids=FORGED.keys())
def test_forged_messages_are_refused_by_the_receiver(data):
    with pytest.raises(plain.NotPlainData):
        plain.decode(data)


def test_the_wire_refuses_an_oversized_message_before_reading_it():
    judge_end, sandbox_end = wire.socket_pair()
    with judge_end, sandbox_end:
        sandbox_end.sendall(struct.pack("<Q", wire.MAX_MESSAGE_BYTES + 1))
        with pytest.raises(wire.WireError, match="over the limit"):
            wire.recv(judge_end, deadline=None)


def test_the_wire_carries_plain_messages_and_sees_a_peer_die():
    judge_end, sandbox_end = wire.socket_pair()
    big = np.random.default_rng(0).normal(size=(500, 500))
    sender = threading.Thread(target=wire.send, args=(sandbox_end, ("return", {"x": big})))
    sender.start()
    kind, value = wire.recv(judge_end)
    sender.join()
    assert kind == "return" and np.array_equal(value["x"], big)
    sandbox_end.close()
    with pytest.raises(wire.PeerClosed):
        wire.recv(judge_end)
    judge_end.close()


def test_a_silent_peer_times_out():
    import time

    judge_end, sandbox_end = wire.socket_pair()
    with judge_end, sandbox_end, pytest.raises(wire.PeerTimeout):
        wire.recv(judge_end, deadline=time.monotonic() + 0.2)


def test_drive_gives_copies_and_refuses_what_the_grader_would():
    data = np.zeros(3)

    def writes_its_argument(array):
        array[:] = 1.0
        return array

    result = drive(writes_its_argument, data)
    assert np.array_equal(result, np.ones(3)) and not data.any(), "the caller's array must stay the caller's"

    def returns_a_tensor():
        return mg.tensor(1.0)

    with pytest.raises(plain.NotPlainData):
        drive(returns_a_tensor)


def test_drive_bounds_a_call_in_time():
    def forever():
        while True:
            pass

    with pytest.raises(TimeoutError, match="forever took longer than 0.2 s"):
        drive(forever, seconds=0.2)
