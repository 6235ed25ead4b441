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
        raise AssertionError(f"{what}: expected {_short(expected)}, got {_short(got)}")


def _short(value, limit=400):
    """repr(value), cut to `limit` characters (a failure message stays readable, and small)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


# --------------------------------------------------------------------------- drivers
# Where graded calls run. None: here, in this process (a student's own kernel, Validate). The
# course's grader sets it in its judge process to a function that runs the driver in the
# student's sandbox instead (course/judge.py); student code never runs in that process.
_remote = None


def drive(driver, *args, seconds=None):
    """`driver(*args)` where the student's code lives, its result as plain data.

    A *driver* is a helper a chapter's tests use to exercise the student's functions: it builds
    its inputs from plain arguments (a case name, a seed, arrays), calls the student's code and
    returns plain facts (numbers, strings, lists, tuples, dicts, numpy arrays; see
    `minigrad.plain`). The test then checks those facts against values it computes itself. Here,
    the arguments and the result make the same trip through `minigrad.plain` that they make in
    the grader, so a notebook gets the same verdict in both. `seconds` bounds the call: an
    algorithm that is right but exponential runs out of it.
    """
    from . import plain

    args = plain.roundtrip(args)
    if _remote is not None:
        return _remote(driver.__name__, args, seconds)
    saved = _grad_mode()
    try:
        with _time_limit(seconds, driver.__name__):
            result = driver(*args)
    finally:
        _grad_mode(saved)  # a time limit can interrupt a `with no_grad()` between its two halves
    return plain.roundtrip(result)


def _grad_mode(saved=None):
    """minigrad's recording state (read, or put back): what a driver cut short could leave changed."""
    from .grad_mode import state

    names = ("grad_enabled", "forward_mode_depth", "record_hooks")
    if saved is None:
        return {name: getattr(state, name) for name in names}
    for name, value in saved.items():
        setattr(state, name, value)


class _time_limit:
    """Raise TimeoutError in the main thread after `seconds` (no limit elsewhere, or for None)."""

    def __init__(self, seconds, what):
        self.seconds, self.what = seconds, what

    def __enter__(self):
        import signal
        import threading

        self.active = bool(self.seconds) and threading.current_thread() is threading.main_thread()
        if self.active:
            self.previous = signal.signal(signal.SIGALRM, self._expire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def _expire(self, signum, frame):
        raise TimeoutError(f"{self.what} took longer than {self.seconds:g} s")

    def __exit__(self, *exc):
        if self.active:
            import signal

            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


# --------------------------------------------------------------------------- timing experiments
def best_time(fn, repeat=5, number=1):
    """Seconds of CPU time one call of `fn()` takes: the fastest of `repeat` runs of `number` calls,
    with the garbage collector paused (as timeit does) and numpy's BLAS on one thread.

    CPU time of this process, not wall time, so that other programs on a busy machine do not count;
    the fastest run, because interference only ever adds time; one BLAS thread, so that a matrix
    product's cost does not depend on how many cores happen to be free. Experiments that compare
    several contenders should call it for each in turn, inside one loop over sizes, so that all
    see the same machine (see `interleaved_times`)."""
    import gc
    import time

    from threadpoolctl import threadpool_limits

    best = float("inf")
    enabled = gc.isenabled()
    with threadpool_limits(limits=1, user_api="blas"):
        gc.disable()
        try:
            for _ in range(repeat):
                start = time.process_time()
                for _ in range(number):
                    fn()
                best = min(best, (time.process_time() - start) / number)
        finally:
            if enabled:
                gc.enable()
    return best


def interleaved_times(contenders, repeat=5, number=1):
    """{name: best_time} for {name: fn}, the contenders taking turns round after round (so that a
    slow moment of the machine is shared by all of them rather than charged to one)."""
    times = {name: float("inf") for name in contenders}
    for _ in range(repeat):
        for name, fn in contenders.items():
            times[name] = min(times[name], best_time(fn, repeat=1, number=number))
    return times
