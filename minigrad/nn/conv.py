"""Convolution and pooling layers, as in PyTorch: on (N, C, L) sequences (the 1-d layers) and NCHW
images (batch, channels, height, width; the 2-d layers), or one unbatched input."""

import numpy as np

from ..creation import default_rng
from . import functional as F
from .module import Module, Parameter


class _Conv(Module):
    """What the convolution layers share, as PyTorch's `_ConvNd`: the configuration under PyTorch's
    attribute names, the weight and bias, and PyTorch's repr. The weight is (in_channels / groups,
    out_channels, *kernel) for a convolution (minigrad's layout, the convolutional form of Linear's
    (in, out); PyTorch's is (out, in / groups, *kernel)) and (in_channels, out_channels / groups,
    *kernel) for a transposed one (PyTorch's layout too). Weight and bias start uniform in
    ±1/√fan, PyTorch's default bound, its fan the weight's second axis in PyTorch's layout times
    the kernel size."""

    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, rng, dtype, output_padding=0):
        name, dims = type(self).__name__, self._dims
        for what, channels in (("in_channels", in_channels), ("out_channels", out_channels)):
            F._groups(name, groups, channels, what)
        if padding_mode not in ("zeros", "reflect", "replicate", "circular") or (self.transposed and padding_mode != "zeros"):
            modes = "'zeros'" if self.transposed else "'zeros', 'reflect', 'replicate' or 'circular'"
            raise ValueError(f"{name}: padding_mode must be {modes}, got {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups, self.padding_mode = in_channels, out_channels, groups, padding_mode
        self.kernel_size = F._ntuple(f"{name} kernel_size", kernel_size, dims)
        self.stride, self.dilation = F._ntuple(f"{name} stride", stride, dims), F._ntuple(f"{name} dilation", dilation, dims)
        self.output_padding = F._ntuple(f"{name} output_padding", output_padding, dims)
        if isinstance(padding, str) and self.transposed:
            raise ValueError(f"{name}: padding must be an int or a tuple of ints ('valid' and 'same' are for convolutions), got {padding!r}")
        if isinstance(padding, str):
            F._conv_padding(name, padding, self.kernel_size, self.stride, self.dilation)  # checked now, as PyTorch does
            self.padding = padding
        else:
            self.padding = F._ntuple(f"{name} padding", padding, dims)
        rng = default_rng() if rng is None else rng
        shape = (in_channels, out_channels // groups) if self.transposed else (in_channels // groups, out_channels)
        bound = 1.0 / np.sqrt((out_channels if self.transposed else in_channels) // groups * np.prod(self.kernel_size))
        self.weight = Parameter(rng.uniform(-bound, bound, shape + self.kernel_size))
        self.bias = Parameter(rng.uniform(-bound, bound, out_channels)) if bias else None
        if np.dtype(dtype) != np.float64:
            self.to(dtype)

    def forward(self, x):
        if self.transposed:
            return self._function(x, self.weight, self.bias, self.stride, self.padding, self.output_padding, self.groups, self.dilation)
        if self.padding_mode == "zeros":
            return self._function(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        # the other modes pad the input first, then convolve without padding, as PyTorch's layers do
        sides = F._conv_padding(type(self).__name__, self.padding, self.kernel_size, self.stride, self.dilation)
        x = F.pad(x, [width for side in reversed(sides) for width in side], mode=self.padding_mode)
        return self._function(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)

    def __repr__(self):
        shown = [("padding", self.padding, (0,) * len(self.kernel_size)), ("dilation", self.dilation, (1,) * len(self.kernel_size)),
                 ("output_padding", self.output_padding, (0,) * len(self.kernel_size)), ("groups", self.groups, 1)]
        extra = "".join(f", {name}={value}" for name, value, default in shown if value != default)  # PyTorch's order and omissions
        extra += (", bias=False" if self.bias is None else "") + (f", padding_mode={self.padding_mode}" if self.padding_mode != "zeros" else "")
        return f"{type(self).__name__}({self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}{extra})"


class Conv1d(_Conv):
    """A 1-D convolution over (N, C, L) sequences (or one (C, L)); see `_Conv` for the weight."""

    _dims, _function = 1, staticmethod(F.conv1d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode="zeros", rng=None, dtype=np.float64):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, rng, dtype)


class Conv2d(_Conv):
    """A 2-D convolution (cross-correlation, as every deep-learning library computes it) over NCHW
    images (or one CHW); see `_Conv` for the weight, `F.conv2d` for groups and padding."""

    _dims, _function = 2, staticmethod(F.conv2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode="zeros", rng=None, dtype=np.float64):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, rng, dtype)


class ConvTranspose1d(_Conv):
    """The transposed 1-D convolution, the adjoint of `Conv1d`; weight (in, out / groups, k)."""

    _dims, _function, transposed = 1, staticmethod(F.conv_transpose1d), True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros", rng=None, dtype=np.float64):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, rng, dtype, output_padding)


class ConvTranspose2d(_Conv):
    """The transposed convolution that upsamples images (a DCGAN generator's layer): the adjoint
    of `Conv2d` with respect to its input. Its weight is (in_channels, out_channels / groups, kH,
    kW), the layout PyTorch uses for this layer too."""

    _dims, _function, transposed = 2, staticmethod(F.conv_transpose2d), True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros", rng=None, dtype=np.float64):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, rng, dtype, output_padding)


class _MaxPool(Module):
    """Max pooling as a layer: PyTorch's attributes (stride defaults to the kernel size) and repr."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1):
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, kernel_size if stride is None else stride, padding, dilation

    def forward(self, x):
        return self._pool(x, self.kernel_size, self.stride, self.padding, self.dilation)

    def __repr__(self):
        return f"{type(self).__name__}(kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, dilation={self.dilation}, ceil_mode=False)"


class MaxPool1d(_MaxPool):
    _pool = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPool):
    _pool = staticmethod(F.max_pool2d)


class _AvgPool(Module):
    """Average pooling as a layer: PyTorch's attributes (stride defaults to the kernel size) and repr."""

    def __init__(self, kernel_size, stride=None, padding=0):
        self.kernel_size, self.stride, self.padding = kernel_size, kernel_size if stride is None else stride, padding

    def forward(self, x):
        return self._pool(x, self.kernel_size, self.stride, self.padding)

    def __repr__(self):
        return f"{type(self).__name__}(kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding})"


class AvgPool1d(_AvgPool):
    _pool = staticmethod(F.avg_pool1d)

    def __init__(self, kernel_size, stride=None, padding=0):
        one = lambda name, value: None if value is None else F._ntuple(f"AvgPool1d {name}", value, 1)  # noqa: E731  (PyTorch keeps 1-tuples here)
        super().__init__(one("kernel_size", kernel_size), one("stride", stride), one("padding", padding))


class AvgPool2d(_AvgPool):
    _pool = staticmethod(F.avg_pool2d)


class AdaptiveAvgPool2d(Module):
    """The mean over an `output_size` grid of windows, whatever the input's height and width."""

    def __init__(self, output_size):
        self.output_size = output_size

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, self.output_size)

    def __repr__(self):
        return f"AdaptiveAvgPool2d(output_size={self.output_size})"


class Upsample(Module):
    """Resize images (or sequences, volumes) to `size` or by `scale_factor`: `F.interpolate` as a layer."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None):
        self.size, self.scale_factor, self.mode, self.align_corners = size, scale_factor, mode, align_corners

    def forward(self, x):
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners)

    def __repr__(self):
        what = f"size={self.size}" if self.size is not None else f"scale_factor={float(self.scale_factor) if isinstance(self.scale_factor, int) else self.scale_factor}"
        return f"Upsample({what}, mode={self.mode!r})"
