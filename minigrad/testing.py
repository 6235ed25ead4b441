"""Checks for notebook tests: on failure they say what was expected and what came back."""

import numpy as np

from .tensor import Tensor


def _plain(value):
    return value.data if isinstance(value, Tensor) else value


def _show(value):
    value = _plain(value)
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape}: {np.array2string(value, precision=6, threshold=20)}"
    return repr(value)


def assert_close(got, expected, what="the result", rtol=1e-6, atol=1e-8):
    """Fail with both values shown unless `got` matches `expected` in shape and value."""
    got_array, expected_array = np.asarray(_plain(got)), np.asarray(_plain(expected))
    if got_array.shape != expected_array.shape:
        raise AssertionError(
            f"{what}: expected shape {expected_array.shape}, got shape {got_array.shape}\n"
            f"  expected {_show(expected)}\n  got      {_show(got)}"
        )
    if not np.allclose(got_array, expected_array, rtol=rtol, atol=atol):
        worst = np.unravel_index(np.argmax(np.abs(got_array - expected_array)), got_array.shape) if got_array.ndim else ()
        raise AssertionError(
            f"{what}: values differ (largest difference at index {worst})\n"
            f"  expected {_show(expected)}\n  got      {_show(got)}"
        )


def assert_equal(got, expected, what="the result"):
    """Fail with both values shown unless `got == expected` (plain Python values)."""
    if got != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {got!r}")
