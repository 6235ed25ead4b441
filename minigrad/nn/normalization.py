"""Batch normalisation: BatchNorm1d, BatchNorm2d and BatchNorm3d, with running statistics as buffers."""

import numpy as np

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

    def forward(self, x):
        if x.ndim not in self.input_ndims:
            expected = " or ".join(f"{n}-D" for n in self.input_ndims)
            raise ValueError(f"{type(self).__name__}: expected {expected} input (N, C, ...), got shape {x.shape}")
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
