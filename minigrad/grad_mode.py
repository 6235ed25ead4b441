"""Whether operations record a graph: `no_grad`, `enable_grad`, `set_grad_enabled`.

Recording is global state read on every operation, so it lives in one tiny module that the tensor
and the engine both import. The context managers also work as decorators, like PyTorch's.
"""

import functools


class _State:
    grad_enabled = True
    forward_mode_depth = 0  # > 0 while `minigrad.jvp` pushes tangents through operations
    # Each called with every new Node, in the order added: a memory tracker (`track_saved_bytes`),
    # a jit trace (`minigrad.jit.trace.recording`). A tuple, so that saving and restoring it is exact.
    record_hooks = ()


state = _State()


def add_record_hook(hook):
    """Call `hook(node)` with every Node recorded from now on, after the hooks added before it."""
    state.record_hooks += (hook,)


def remove_record_hook(hook):
    """Stop calling `hook` (added with `add_record_hook`); the other hooks keep their order."""
    state.record_hooks = tuple(h for h in state.record_hooks if h is not hook)


def is_grad_enabled():
    """True when new operations record the graph needed for backward."""
    return state.grad_enabled


class set_grad_enabled:
    """Turn graph recording on or off inside a `with` block (or a decorated function)."""

    def __init__(self, mode=True):
        self.mode = bool(mode)
        self.previous = []

    def __enter__(self):
        self.previous.append(state.grad_enabled)
        state.grad_enabled = self.mode
        return self

    def __exit__(self, *exc):
        state.grad_enabled = self.previous.pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)(self.mode) if type(self) is set_grad_enabled else type(self)():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(set_grad_enabled):
    """Operations inside record no graph: for evaluation and for optimiser updates."""

    def __init__(self):
        super().__init__(False)


class enable_grad(set_grad_enabled):
    """Record the graph again inside a `no_grad` block."""

    def __init__(self):
        super().__init__(True)
