"""Normalisation layers: BatchNorm1d/2d/3d (running statistics as buffers), InstanceNorm1d/2d,
GroupNorm and RMSNorm."""

import warnings

import numpy as np

from ..errors import ShapeError
from ..tensor import Tensor
from . import functional as F
from .module import Module, Parameter


class _BatchNorm(Module):
    """Normalise each channel over the batch (and spatial axes) while training; after
    `model.eval()`, with the running mean and variance gathered while training (Ioffe & Szegedy
    2015). The statistics are buffers: `state_dict()` saves them, no optimizer touches them.

    `momentum=None` makes the running statistics a plain average over every batch seen
    (`num_batches_tracked` counts them); `track_running_stats=False` keeps none and always uses
    the batch's own.
    """

    input_ndims = ()  # what forward accepts; set by each subclass

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, dtype=np.float64, *, bias=True):
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(np.ones(num_features, dtype=dtype)) if affine else None
        self.bias = Parameter(np.zeros(num_features, dtype=dtype)) if affine and bias else None
        running = track_running_stats
        self.register_buffer("running_mean", Tensor(np.zeros(num_features, dtype=dtype)) if running else None)
        self.register_buffer("running_var", Tensor(np.ones(num_features, dtype=dtype)) if running else None)
        self.register_buffer("num_batches_tracked", Tensor(np.array(0, dtype=np.int64)) if running else None)

    def _check_ndim(self, x):
        if x.ndim not in self.input_ndims:
            expected = " or ".join(f"{n}-D" for n in self.input_ndims)
            raise ValueError(f"{type(self).__name__}: expected {expected} input (N, C, ...), got shape {x.shape}")

    def forward(self, x):
        self._check_ndim(x)
        counting = self.training and self.track_running_stats
        momentum = self.momentum
        if counting and momentum is None:  # the average over all batches so far, this one included
            momentum = 1.0 / (int(self.num_batches_tracked.data) + 1)
        use_batch = self.training or not self.track_running_stats
        out = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_batch, momentum or 0.0, self.eps)
        if counting:  # only once batch_norm has accepted the input
            self.num_batches_tracked.data[...] += 1
        return out

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.data[...] = 0.0
            self.running_var.data[...] = 1.0
            self.num_batches_tracked.data[...] = 0

    def __repr__(self):
        return (
            f"{type(self).__name__}({self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats})"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) features or (N, C, L) sequences."""

    input_ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) images, per channel."""

    input_ndims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) volumes, per channel."""

    input_ndims = (5,)


class _InstanceNorm(_BatchNorm):
    """Normalise each channel of each example over its spatial axes alone (Ulyanov et al. 2016),
    as PyTorch's InstanceNorm: `affine=False` and `track_running_stats=False` by default. With
    `track_running_stats=True`, training updates running statistics (the batch's average of each
    instance's; `momentum=None` leaves them as they are, as in PyTorch) that evaluation then uses.
    An input without its batch axis is normalised as a batch of one."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, dtype=np.float64, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype, bias=bias)

    def forward(self, x):
        self._check_ndim(x)
        unbatched = x.ndim == self.input_ndims[0]
        channels = x.shape[0 if unbatched else 1]
        if channels != self.num_features:
            problem = f"{type(self).__name__}: input of shape {x.shape} has {channels} channels (axis {0 if unbatched else 1}), not num_features={self.num_features}"
            if self.affine or self.track_running_stats:
                raise ShapeError(problem)
            warnings.warn(f"{problem}; num_features is unused with affine=False and track_running_stats=False", stacklevel=2)
        batch = x.unsqueeze(0) if unbatched else x
        use_input_stats = self.training or not self.track_running_stats
        out = F.instance_norm(batch, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats, self.momentum or 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) sequences, or one (C, L)."""

    input_ndims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) images, or one (C, H, W)."""

    input_ndims = (3, 4)


class GroupNorm(Module):
    """Normalise each example's channels in `num_groups` groups, each over its channels and spatial
    axes, then scale and shift per channel (Wu & He 2018): statistics that do not depend on the
    batch size. One group is LayerNorm over (C, ...) with a per-channel affine; `num_channels`
    groups is InstanceNorm."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=np.float64, *, bias=True):
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.weight = Parameter(np.ones(num_channels, dtype=dtype)) if affine else None
        self.bias = Parameter(np.zeros(num_channels, dtype=dtype)) if affine and bias else None
        if np.dtype(dtype) != np.float64:
            self.to(dtype)

    def forward(self, x):
        return F._group_norm("GroupNorm", x, self.num_groups, self.weight, self.bias, self.eps)

    def __repr__(self):
        return f"GroupNorm({self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.bias is not None})"


class RMSNorm(Module):
    """Divide by the root mean square over the last axes (`normalized_shape`), then scale per feature
    (Zhang & Sennrich 2019), as PyTorch's `nn.RMSNorm`: LayerNorm without centring or bias.
    `eps=None` is the machine epsilon of the input's dtype."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, dtype=np.float64):
        shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = Parameter(np.ones(shape, dtype=dtype)) if elementwise_affine else None
        if np.dtype(dtype) != np.float64:
            self.to(dtype)

    def forward(self, x):
        return F._rms_norm("RMSNorm", x, self.normalized_shape, self.weight, self.eps)

    def __repr__(self):
        return f"RMSNorm({self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine})"
