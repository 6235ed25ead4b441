"""`Module` and `Parameter`: the bookkeeping that lets a model list, freeze and reset its weights."""

import collections

import numpy as np

from ..errors import MinigradError, ShapeError
from ..tensor import Tensor, _is_cpu


class Parameter(Tensor):
    """A leaf tensor that a `Module` owns and an optimiser updates (requires grad by default)."""

    __slots__ = ()

    def __init__(self, data, requires_grad=True):
        super().__init__(np.array(data, dtype=np.result_type(np.asarray(data).dtype, np.float64)), requires_grad)


class Module:
    """Base class of layers and models: subclasses set attributes and define `forward`.

    Parameters are found by walking attributes (and lists, tuples and dicts of them), so a model
    never registers anything by hand. `requires_grad=False` on a parameter freezes it: backward
    then neither visits nor updates it.
    """

    training = True

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def __repr__(self):
        """The class name and, one per line as PyTorch prints a model, the modules it holds."""
        return _tree(type(self).__name__, self._children())

    def _children(self):
        """(name, module) for each module held directly: in an attribute, or in a list, tuple or dict
        attribute (`layers.0`)."""
        for name, value in vars(self).items():
            if isinstance(value, Module):
                yield name, value
            elif isinstance(value, (list, tuple, dict)):
                items = value.items() if isinstance(value, dict) else enumerate(value)
                yield from ((f"{name}.{key}", item) for key, item in items if isinstance(item, Module))

    def register_buffer(self, name, tensor, persistent=True):
        """Keep `tensor` as attribute `name`: state the module uses but does not train (running
        statistics, an attention mask), as PyTorch's. No optimizer updates it; `state_dict()` holds
        it beside the parameters unless `persistent=False`, and `.to(dtype)` converts it when it is
        floating-point. Assigning another tensor to the attribute later replaces the buffer."""
        if not isinstance(tensor, Tensor) and tensor is not None:
            raise TypeError(f"{type(self).__name__}.register_buffer: {name!r} must be a Tensor or None, got {type(tensor).__name__}")
        if isinstance(tensor, Parameter):
            raise TypeError(f"{type(self).__name__}.register_buffer: {name!r} is a Parameter; a buffer is state that is not trained")
        vars(self).setdefault("_buffer_names", {})[name] = persistent
        setattr(self, name, tensor)

    def _members(self, prefix=""):
        """(name, kind, tensor) for every parameter ("parameter") and every buffer ("buffer" or, not
        in state dicts, "transient") inside this module, depth first in attribute order, each once.
        Parameters are found wherever they sit (attributes, lists, tuples, dicts); a buffer is an
        attribute named by `register_buffer`."""
        seen = set()
        stack = [(prefix, self, None)]
        while stack:
            name, value, kind = stack.pop()
            if isinstance(value, Parameter) or (kind is not None and isinstance(value, Tensor)):
                if id(value) not in seen:
                    seen.add(id(value))
                    yield name, kind or "parameter", value
            elif isinstance(value, Module):
                buffers = vars(value).get("_buffer_names", {})
                children = [(k, v) for k, v in vars(value).items() if k != "_buffer_names"]
                stack.extend(
                    reversed([(f"{name}.{k}" if name else k, v, ("buffer" if buffers[k] else "transient") if k in buffers else None) for k, v in children])
                )
            elif isinstance(value, (list, tuple)):
                stack.extend(reversed([(f"{name}.{i}", v, None) for i, v in enumerate(value)]))
            elif isinstance(value, dict):
                stack.extend(reversed([(f"{name}.{k}", v, None) for k, v in value.items()]))

    def named_parameters(self, prefix=""):
        """(name, parameter) pairs, each parameter once, in attribute order."""
        return ((name, p) for name, kind, p in self._members(prefix) if kind == "parameter")

    def named_buffers(self, prefix=""):
        """(name, buffer) pairs, each buffer once, in attribute order (None buffers left out)."""
        return ((name, b) for name, kind, b in self._members(prefix) if kind != "parameter")

    def buffers(self):
        return [b for _, b in self.named_buffers()]

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def modules(self):
        """This module and every module inside it."""
        found, stack = [], [self]
        while stack:
            value = stack.pop()
            if isinstance(value, Module):
                found.append(value)
                stack.extend(reversed(list(vars(value).values())))
            elif isinstance(value, (list, tuple)):
                stack.extend(reversed(value))
            elif isinstance(value, dict):
                stack.extend(reversed(list(value.values())))
        return found

    def zero_grad(self, set_to_none=True):
        """Forget every parameter's gradient (see `clear_grads`)."""
        clear_grads(self.parameters(), set_to_none)

    def apply(self, fn):
        """Call `fn(module)` on every module inside this one (children first, as PyTorch) and on
        this one; returns self. The way to initialise a whole model: `model.apply(init_weights)`."""
        for module in reversed(self.modules()):
            fn(module)
        return self

    def to(self, dtype):
        """Convert every parameter to the floating-point `dtype` (e.g. np.float32), in place; returns self.

        The parameters stay the same objects (an optimizer made before still updates them); their
        gradients are dropped. `.to("cpu")` (a PyTorch script's `model.to(device)`) changes nothing:
        minigrad computes on the CPU.
        """
        if _is_cpu(dtype, f"{type(self).__name__}.to"):
            return self
        dtype = np.dtype(dtype)
        if dtype.kind != "f":
            raise TypeError(f"{type(self).__name__}.to: parameters must have a floating-point dtype, got {dtype}")
        for p in self.parameters():
            p.data = p.data.astype(dtype)
            p.grad = None
        for b in self.buffers():
            if b.dtype.kind == "f":  # a step counter stays an integer, as in PyTorch
                b.data = b.data.astype(dtype)
        return self

    def float(self):
        """Parameters in float32 (PyTorch's `.float()`)."""
        return self.to(np.float32)

    def double(self):
        """Parameters in float64, minigrad's default."""
        return self.to(np.float64)

    def requires_grad_(self, flag=True):
        """Freeze (False) or unfreeze (True) every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad = flag
        return self

    def train(self, mode=True):
        for m in self.modules():
            m.training = mode
        return self

    def eval(self):
        return self.train(False)

    def num_parameters(self):
        return sum(p.size for p in self.parameters())

    def _state(self):
        """name -> tensor for what `state_dict()` holds: the parameters and the persistent buffers."""
        return {name: t for name, kind, t in self._members() if kind != "transient"}

    def state_dict(self):
        """name -> a copy of the array, for every parameter and persistent buffer (a BatchNorm's
        running statistics: a saved model evaluates as it was trained)."""
        return {name: t.data.copy() for name, t in self._state().items()}

    def load_state_dict(self, state, strict=True):
        """Copy the arrays of `state` (name -> array, as `state_dict()` makes) into the parameters
        and persistent buffers.

        With `strict=True` (the default, as in PyTorch) the names must match exactly: a missing or
        an unexpected name raises `StateDictError` naming them all, and nothing is loaded. With
        `strict=False` the entries present in `state` are loaded and the others left alone.
        Returns `(missing_keys, unexpected_keys)`. Shapes must match either way.
        """
        if not hasattr(state, "keys") or not hasattr(state, "__getitem__"):
            raise TypeError(f"load_state_dict: expected a dict of name -> array (from state_dict()), got {type(state).__name__}")
        params = self._state()
        missing = [name for name in params if name not in state]
        unexpected = [name for name in state if name not in params]
        if strict and (missing or unexpected):
            problems = []
            if missing:
                problems.append(f"missing key(s) {', '.join(map(repr, missing))}")
            if unexpected:
                problems.append(f"unexpected key(s) {', '.join(map(repr, unexpected))}")
            raise StateDictError(
                f"load_state_dict: the state does not match {type(self).__name__}: {'; '.join(problems)}. "
                f"The model's state holds {', '.join(map(repr, params)) or 'nothing'}; pass strict=False to "
                f"load only the names both have"
            )
        arrays = {}
        for name, p in params.items():
            if name in state:
                value = state[name]
                value = value.data if isinstance(value, Tensor) else np.asarray(value)
                if value.shape != p.shape:
                    raise ShapeError(f"load_state_dict: {name} has shape {p.shape}, the state has {value.shape}")
                arrays[name] = value
        for name, value in arrays.items():  # only once every entry has been checked
            params[name].data = np.array(value, dtype=params[name].dtype)
        return LoadResult(missing, unexpected)


def clear_grads(params, set_to_none=True):
    """`.grad = None` for each parameter, PyTorch's default; `set_to_none=False` zeroes each
    gradient in place instead (PyTorch's older behaviour, for code that keeps a reference to it)."""
    for p in params:
        if set_to_none or p.grad is None:
            p.grad = None
        elif p.grad.requires_grad:  # recorded by backward(create_graph=True): cut from that graph, as PyTorch does
            p.grad = Tensor(np.zeros_like(p.grad.data))
        else:
            p.grad.zero_()


def _tree(title, children):
    """`title(...)` listing the children's reprs as `(name): repr`, nested reprs indented."""
    lines = [f"  ({name}): " + repr(child).replace("\n", "\n  ") for name, child in children]
    return f"{title}(\n" + "\n".join(lines) + "\n)" if lines else f"{title}()"


class LoadResult(collections.namedtuple("LoadResult", ["missing_keys", "unexpected_keys"])):
    """What `load_state_dict` found: parameter names the state lacked, and names it had in excess."""


class StateDictError(MinigradError, KeyError):
    """A state dict whose names do not match the model's parameters."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""
