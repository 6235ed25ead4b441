"""Ways to make tensors: from data, filled with a constant, or random.

Each takes PyTorch's `device=` keyword too, so that `mg.zeros(3, device=device)` runs as written:
the CPU is minigrad's only device (it changes nothing), and any other is an error.
"""

import functools

import numpy as np

from .errors import DtypeError, ShapeError
from .tensor import Tensor, TracerError, _checked_array, _is_cpu, _user_line, tracing


def _accepts_device(make):
    @functools.wraps(make)
    def with_device(*args, device=None, **kwargs):
        if device is not None and not _is_cpu(device, make.__name__):
            raise TypeError(f"{make.__name__}: device={device!r} is not a device (a dtype goes in dtype=)")
        return make(*args, **kwargs)

    return with_device


@_accepts_device
def tensor(data, requires_grad=False, dtype=None):
    """`Tensor(data, ...)` under the name PyTorch users reach for, with `torch.tensor`'s dtype rule:
    Python ints (labels, indices) give an int64 tensor and bools a bool tensor, where `Tensor(...)`
    makes every Python number float64 (as `torch.Tensor` makes it float32). Integer tensors cannot
    require grad: write `mg.tensor([1.0, 2.0], requires_grad=True)` for a float leaf.

    The data is copied, as `torch.tensor` copies it: an update in place (`w -= lr * w.grad`) must
    not write into the caller's array. `from_numpy(array)` (and `Tensor(array)`) share its memory."""
    source = data.data if isinstance(data, Tensor) else data
    if dtype is None and not isinstance(data, (Tensor, np.ndarray, np.generic)):
        data = _checked_array(data)  # Python ints become int64, bools bool: Tensor keeps integer arrays
        if requires_grad and data.dtype.kind in "iub":
            raise DtypeError(
                f"tensor: only floating-point tensors can require gradients, got Python "
                f"{'bools' if data.dtype.kind == 'b' else 'ints'} (dtype {data.dtype}, shape {data.shape}); "
                f"write the numbers as floats (1.0, not 1) or pass dtype=float"
            )
    out = Tensor(data, requires_grad=requires_grad, dtype=dtype)
    if out.data is source:  # Tensor wrapped the caller's array as it is
        out.data = out.data.copy()
    return out


def _shape(shape):
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


@_accepts_device
def zeros(*shape, requires_grad=False, dtype=np.float64):
    return Tensor(np.zeros(_shape(shape), dtype=dtype), requires_grad=requires_grad)


@_accepts_device
def ones(*shape, requires_grad=False, dtype=np.float64):
    return Tensor(np.ones(_shape(shape), dtype=dtype), requires_grad=requires_grad)


@_accepts_device
def empty(*shape, requires_grad=False, dtype=np.float64):
    """`torch.empty`, a tensor to be filled (`mg.empty(n, 1, dtype=mg.long).fill_(start)`): zeros
    here, since numpy's uninitialised memory, read by mistake, would be arbitrary numbers."""
    return zeros(*shape, requires_grad=requires_grad, dtype=dtype)


@_accepts_device
def zeros_like(t, requires_grad=False, dtype=None):
    return Tensor(np.zeros_like(t.data, dtype=dtype), requires_grad=requires_grad)


@_accepts_device
def ones_like(t, requires_grad=False, dtype=None):
    return Tensor(np.ones_like(t.data, dtype=dtype), requires_grad=requires_grad)


class Generator(np.random.Generator):
    """`torch.Generator`: a seeded source of random numbers to pass as `generator=` (PyTorch's
    name) or `rng=` (minigrad's): `g = mg.Generator().manual_seed(2147483647)`. It is a numpy
    Generator (PCG64), so it serves wherever minigrad takes `rng=`, layers included. A seed gives
    the same numbers as `numpy.random.default_rng(seed)`, not PyTorch's."""

    def __init__(self, device="cpu"):
        if not _is_cpu(device, "Generator"):
            raise TypeError(f"Generator: device={device!r} is not a device")
        super().__init__(np.random.PCG64())
        self._initial_seed = None

    def manual_seed(self, seed):
        """Restart the stream from `seed`; returns the generator, as PyTorch's does."""
        self.bit_generator.state = np.random.PCG64(seed).state
        self._initial_seed = int(seed)
        return self

    def initial_seed(self):
        """The seed of the last `manual_seed` (None before one)."""
        return self._initial_seed


def generator_for(name, rng=None, generator=None):
    """The numpy Generator the draw `name` uses: `rng=`, or `generator=` (a `mg.Generator`), or else
    `default_rng()`. While `jit.compile` traces, a draw is refused: the trace would keep the
    numbers drawn once as constants, and every call would reuse them (a VAE's "noise" the same at
    every step), where Dropout, which draws too, is refused already."""
    if tracing.depth:
        raise TracerError(
            f"jit.compile: {name} draws random numbers, at {_user_line()}. A trace records operations, "
            "not draws: the numbers drawn once, while tracing, would be reused by every call. Draw them "
            "outside the compiled function and pass them in as an input, or run the function without jit.compile."
        )
    if rng is not None and generator is not None:
        raise TypeError(f"{name}: pass rng= or generator= (the same thing under PyTorch's name), not both")
    chosen = rng if rng is not None else generator
    return default_rng() if chosen is None else chosen


class _Seed:
    generator = None  # set by manual_seed: the Generator randn and nn's layers draw from by default


_seed = _Seed()


def manual_seed(seed):
    """Make later random draws reproducible (like `torch.manual_seed`): `randn` and the layers of
    `minigrad.nn` created without an `rng=` draw from one numpy Generator seeded with `seed`.
    Returns that Generator (a `mg.Generator`)."""
    _seed.generator = Generator().manual_seed(seed)
    return _seed.generator


def default_rng():
    """The Generator of the last `manual_seed`, or else a fresh, unseeded one."""
    return _seed.generator if _seed.generator is not None else np.random.default_rng()


def _float_dtype(name, dtype):
    """`dtype` as a numpy float dtype: random samples cast to an integer dtype would be silently
    truncated (normal draws to mostly 0 and ±1), so that is an error."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise DtypeError(f"{name}: samples are floating-point numbers; dtype must be a float dtype, got {dtype} (use randint for integers)")
    return dtype


@_accepts_device
def randn(*shape, requires_grad=False, dtype=np.float64, rng=None, generator=None):
    """Standard normal samples; pass `rng` (a numpy Generator) or `generator` (a `mg.Generator`),
    or call `manual_seed` first, for reproducible draws."""
    dtype = _float_dtype("randn", dtype)
    rng = generator_for("randn", rng, generator)
    return Tensor(rng.standard_normal(_shape(shape)).astype(dtype), requires_grad=requires_grad)


@_accepts_device
def rand(*shape, requires_grad=False, dtype=np.float64, rng=None, generator=None):
    """Samples uniform on [0, 1), drawn as `randn`'s are (`rng`, or `manual_seed`)."""
    dtype = _float_dtype("rand", dtype)
    rng = generator_for("rand", rng, generator)
    return Tensor(rng.random(_shape(shape)).astype(dtype), requires_grad=requires_grad)


@_accepts_device
def randn_like(t, requires_grad=False, dtype=None, rng=None):
    """`randn` with the shape of `t`, and its (float) dtype unless `dtype` is given."""
    return randn(*t.shape, requires_grad=requires_grad, dtype=_float_dtype("randn_like", t.dtype if dtype is None else dtype), rng=rng)


@_accepts_device
def rand_like(t, requires_grad=False, dtype=None, rng=None):
    """`rand` with the shape of `t`, and its (float) dtype unless `dtype` is given (`rand_like(labels,
    dtype=mg.float32)` for an integer `labels`)."""
    return rand(*t.shape, requires_grad=requires_grad, dtype=_float_dtype("rand_like", t.dtype if dtype is None else dtype), rng=rng)


@_accepts_device
def randperm(n, dtype=np.int64, rng=None, generator=None):
    """A random permutation of 0 … n − 1 (an int64 tensor, drawn as `randn`'s are): shuffled
    minibatches, `x[mg.randperm(len(x))]`."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"randperm: n must be a non-negative int, got {n!r}")
    rng = generator_for("randperm", rng, generator)
    return Tensor(rng.permutation(int(n)).astype(dtype))


@_accepts_device
def randint(*args, size=None, dtype=np.int64, rng=None, generator=None):
    """Integers uniform on [low, high): `randint(high, size)` or `randint(low, high, size)`, as
    `torch.randint` (an int64 tensor, drawn as `randn`'s are)."""
    if size is None and args and isinstance(args[-1], (tuple, list)):
        *args, size = args
    if size is None or len(args) not in (1, 2):
        raise TypeError(f"randint: pass (high, size) or (low, high, size) with size a tuple, as torch.randint; got {args} and size={size}")
    low, high = (0, args[0]) if len(args) == 1 else args
    if not low < high:
        raise ValueError(f"randint: the range [low, high) = [{low}, {high}) is empty")
    rng = generator_for("randint", rng, generator)
    return Tensor(rng.integers(low, high, size=tuple(size), dtype=dtype))


def multinomial(probs, num_samples, replacement=False, rng=None, generator=None):
    """Category indices drawn from each row of weights `probs`, as `torch.multinomial`: an int64
    tensor (rows, num_samples), or (num_samples,) for one row. Weights must be finite and
    non-negative, not necessarily summing to 1; without `replacement` a row yields each index at
    most once. Drawn as `randn`'s are (`rng`, or `manual_seed`)."""
    weights = np.asarray(probs.data if isinstance(probs, Tensor) else probs, dtype=np.float64)
    if weights.ndim not in (1, 2) or weights.shape[-1] == 0:
        raise ShapeError(f"multinomial: probs must be one row of weights or a matrix of rows, got shape {weights.shape}")
    rows = weights.reshape(-1, weights.shape[-1])
    bad = ~np.isfinite(rows) | (rows < 0)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(f"multinomial: weights must be finite and non-negative; got {rows[row, col]} at row {row}, column {col} (shape {weights.shape})")
    usable = (rows > 0).sum(axis=1)
    needed = 1 if replacement else num_samples
    if (usable < needed).any():
        row = int(np.argmax(usable < needed))
        if not usable[row]:
            raise ValueError(f"multinomial: row {row} has no positive weight")
        raise ValueError(f"multinomial: row {row} has {usable[row]} positive weights, too few to draw {num_samples} samples without replacement")
    rng = generator_for("multinomial", rng, generator)
    if replacement or num_samples == 1:
        cdf = np.cumsum(rows, axis=1)
        u = rng.random((len(rows), num_samples)) * cdf[:, -1:]
        drawn = np.stack([np.searchsorted(c, row_u, side="right") for c, row_u in zip(cdf, u)])
    else:
        drawn = np.stack([rng.choice(rows.shape[1], size=num_samples, replace=False, p=r / r.sum()) for r in rows])
    drawn = np.minimum(drawn, rows.shape[1] - 1).astype(np.int64)
    return Tensor(drawn.reshape(num_samples) if weights.ndim == 1 else drawn)


@_accepts_device
def full(size, fill_value, requires_grad=False, dtype=None):
    """A tensor of shape `size` filled with `fill_value`; the dtype follows the value as in
    `torch.full` (a float gives float64, an int int64, a bool bool) unless `dtype` is given."""
    return Tensor(np.full(_shape((size,)), fill_value, dtype=dtype), requires_grad=requires_grad)


@_accepts_device
def full_like(t, fill_value, requires_grad=False, dtype=None):
    """`full` with the shape of `t`, and its dtype unless `dtype` is given."""
    return Tensor(np.full_like(t.data, fill_value, dtype=dtype), requires_grad=requires_grad)


@_accepts_device
def eye(n, m=None, requires_grad=False, dtype=np.float64):
    """The n × m identity matrix (m = n by default)."""
    return Tensor(np.eye(n, m, dtype=dtype), requires_grad=requires_grad)


@_accepts_device
def arange(*args, requires_grad=False, dtype=None):
    """Evenly spaced values in [start, end) with a step, as `torch.arange`: int64 when every
    argument is an int (positions, indices), float64 otherwise, unless `dtype` is given."""
    if dtype is None:
        dtype = np.int64 if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args) else np.float64
    return Tensor(np.arange(*args, dtype=dtype), requires_grad=requires_grad)


@_accepts_device
def linspace(start, end, steps, requires_grad=False, dtype=np.float64):
    """`steps` evenly spaced values from `start` to `end`, both included (`torch.linspace`)."""
    if int(steps) != steps or steps < 0:
        raise ValueError(f"linspace: steps must be a non-negative int, got {steps!r}")
    return Tensor(np.linspace(start, end, int(steps), dtype=dtype), requires_grad=requires_grad)



@_accepts_device
def logspace(start, end, steps, base=10.0, requires_grad=False, dtype=np.float64):
    """`steps` values from base^start to base^end, evenly spaced in the exponent, both ends included
    (`torch.logspace`; float64 by default, where torch's is float32)."""
    if int(steps) != steps or steps < 0:
        raise ValueError(f"logspace: steps must be a non-negative int, got {steps!r}")
    return Tensor(np.logspace(start, end, int(steps), base=base, dtype=dtype), requires_grad=requires_grad)


def normal(mean, std=1.0, size=None, *, generator=None, rng=None):
    """Normal samples in `torch.normal`'s forms: `normal(mean, std)` with either or both tensors,
    one sample per element of their broadcast shape; `normal(mean, std, size)` with two numbers.
    The dtype is the tensors' (float64 for numbers); drawn as `randn`'s are. The result is a
    constant: PyTorch's passes zeros back to a mean or std that requires grad, minigrad nothing
    (sample with `mean + std * randn(...)` for a reparameterized, differentiable draw)."""
    given = [v for v in (mean, std) if isinstance(v, Tensor)]
    if (size is None) == (not given):
        raise TypeError("normal: pass a tensor mean or std (one sample per element), or two numbers and size, as torch.normal")
    means, stds = (v.data if isinstance(v, Tensor) else np.asarray(v, dtype=np.float64) for v in (mean, std))
    if np.any(stds < 0):
        raise ValueError(f"normal: std must be non-negative, got a minimum of {stds.min()}")
    try:
        shape = _shape((size,)) if size is not None else np.broadcast_shapes(means.shape, stds.shape)
    except ValueError:
        raise ShapeError(f"normal: mean of shape {means.shape} and std of shape {stds.shape} do not broadcast together") from None
    dtype = _float_dtype("normal", np.result_type(*(v.dtype for v in given)) if given else np.float64)
    return Tensor(generator_for("normal", rng, generator).normal(means, stds, shape).astype(dtype))


def from_numpy(array):
    """A tensor sharing `array`'s memory, as `torch.from_numpy`: writing to one changes the other."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    if array.dtype.kind not in "fiub":
        raise DtypeError(f"from_numpy: minigrad tensors hold float, integer or bool arrays, got dtype {array.dtype}")
    return Tensor(array)
