"""Convolution and pooling layers on NCHW inputs (batch, channels, height, width), as in PyTorch."""

import numpy as np

from ..creation import default_rng
from . import functional as F
from .module import Module, Parameter


class Conv2d(Module):
    """A 2-D convolution (cross-correlation, as every deep-learning library computes it).

    The weight has minigrad's layout (in_channels, out_channels, kH, kW), the convolutional form
    of Linear's (in, out); PyTorch's is (out, in, kH, kW). Weights and bias start uniform in
    ±1/√(in_channels·kH·kW), PyTorch's default bound.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, bias=True, rng=None, dtype=np.float64):
        rng = default_rng() if rng is None else rng
        kh, kw = F._pair("Conv2d kernel_size", kernel_size)
        self.stride, self.padding, self.dilation = F._pair("Conv2d stride", stride), F._pair("Conv2d padding", padding), F._pair("Conv2d dilation", dilation)
        bound = 1.0 / np.sqrt(in_channels * kh * kw)
        self.weight = Parameter(rng.uniform(-bound, bound, (in_channels, out_channels, kh, kw)))
        self.bias = Parameter(rng.uniform(-bound, bound, out_channels)) if bias else None
        if np.dtype(dtype) != np.float64:
            self.to(dtype)

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation)

    def __repr__(self):
        c_in, c_out, kh, kw = self.weight.shape
        return f"Conv2d({c_in}, {c_out}, kernel_size={(kh, kw)}, stride={self.stride}, padding={self.padding})"


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
