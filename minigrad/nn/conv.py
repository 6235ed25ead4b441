"""Convolution and pooling layers on NCHW inputs (batch, channels, height, width), as in PyTorch."""

import numpy as np

from ..creation import default_rng
from . import functional as F
from .module import Module, Parameter


def _kernel(layer, name, in_channels, out_channels, kernel_size, fan_channels, bias, rng, dtype):
    """Give a convolution its weight (in_channels, out_channels, kH, kW) and bias, uniform in
    ±1/√(fan_channels·kH·kW), PyTorch's default bound (its fan is the input channels for Conv2d,
    the output channels for ConvTranspose2d), in `dtype`."""
    rng = default_rng() if rng is None else rng
    kh, kw = F._pair(f"{name} kernel_size", kernel_size)
    bound = 1.0 / np.sqrt(fan_channels * kh * kw)
    layer.weight = Parameter(rng.uniform(-bound, bound, (in_channels, out_channels, kh, kw)))
    layer.bias = Parameter(rng.uniform(-bound, bound, out_channels)) if bias else None
    if np.dtype(dtype) != np.float64:
        layer.to(dtype)


class Conv2d(Module):
    """A 2-D convolution (cross-correlation, as every deep-learning library computes it).

    The weight has minigrad's layout (in_channels, out_channels, kH, kW), the convolutional form
    of Linear's (in, out); PyTorch's is (out, in, kH, kW). Weights and bias start uniform in
    ±1/√(in_channels·kH·kW), PyTorch's default bound.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, bias=True, rng=None, dtype=np.float64, padding_mode="zeros"):
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"Conv2d: padding_mode must be 'zeros', 'reflect', 'replicate' or 'circular', got {padding_mode!r}")
        self.padding_mode = padding_mode
        self.stride, self.padding, self.dilation = F._pair("Conv2d stride", stride), F._pair("Conv2d padding", padding), F._pair("Conv2d dilation", dilation)
        _kernel(self, "Conv2d", in_channels, out_channels, kernel_size, in_channels, bias, rng, dtype)

    def forward(self, x):
        if self.padding_mode == "zeros":
            return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation)
        (ph, pw) = self.padding  # the other modes pad first, as PyTorch's Conv2d does
        return F.conv2d(F.pad(x, (pw, pw, ph, ph), mode=self.padding_mode), self.weight, self.bias, self.stride, 0, self.dilation)

    def __repr__(self):
        c_in, c_out, kh, kw = self.weight.shape
        mode = f", padding_mode={self.padding_mode!r}" if self.padding_mode != "zeros" else ""
        return f"Conv2d({c_in}, {c_out}, kernel_size={(kh, kw)}, stride={self.stride}, padding={self.padding}{mode})"


class ConvTranspose2d(Module):
    """The transposed convolution that upsamples images (a DCGAN generator's layer): the adjoint
    of `Conv2d` with respect to its input. Its weight is (in_channels, out_channels, kH, kW), the
    layout PyTorch uses for this layer too; weights and bias start uniform in
    ±1/√(out_channels·kH·kW), PyTorch's default bound for it."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros", rng=None, dtype=np.float64):
        if groups != 1 or padding_mode != "zeros":
            raise ValueError(f"ConvTranspose2d: groups={groups} and padding_mode={padding_mode!r} are not supported in minigrad (only 1 and 'zeros')")
        self.stride, self.padding = F._pair("ConvTranspose2d stride", stride), F._pair("ConvTranspose2d padding", padding)
        self.output_padding, self.dilation = F._pair("ConvTranspose2d output_padding", output_padding), F._pair("ConvTranspose2d dilation", dilation)
        _kernel(self, "ConvTranspose2d", in_channels, out_channels, kernel_size, out_channels, bias, rng, dtype)

    def forward(self, x):
        return F.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding, self.output_padding, 1, self.dilation)

    def __repr__(self):
        c_in, c_out, kh, kw = self.weight.shape
        shown = [("padding", self.padding, (0, 0)), ("dilation", self.dilation, (1, 1)), ("output_padding", self.output_padding, (0, 0))]
        extra = "".join(f", {name}={value}" for name, value, default in shown if value != default)  # PyTorch's order and omissions
        bias = "" if self.bias is not None else ", bias=False"
        return f"ConvTranspose2d({c_in}, {c_out}, kernel_size={(kh, kw)}, stride={self.stride}{extra}{bias})"


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1):
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation)

    def __repr__(self):
        return f"MaxPool2d(kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding})"


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x):
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding)

    def __repr__(self):
        return f"AvgPool2d(kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding})"


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
