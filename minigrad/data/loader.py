"""Minibatches: `TensorDataset` and `DataLoader`, as `torch.utils.data` has them, so that a PyTorch
training loop (`for x, y in loader:`) ports as it is.

A dataset is anything with `len()` and `dataset[i]`, an item being one example: a tuple of fields
(an input and its label) or a single array. The loader draws the examples' order (shuffled anew each
epoch, from minigrad's random state: `manual_seed`, or `rng=`), cuts it into batches and stacks each
field of a batch into one tensor. A `TensorDataset` is indexed with a whole batch's indices at once
instead of example by example: the same batches, without a Python loop per example.
"""

import math

import numpy as np

from ..creation import default_rng
from ..errors import ShapeError
from ..tensor import Tensor


def _array(field):
    return field.data if isinstance(field, Tensor) else np.asarray(field)


class TensorDataset:
    """Examples that are the rows of arrays or tensors with the same first axis (inputs, labels, ...)."""

    def __init__(self, *tensors):
        if not tensors:
            raise ShapeError("TensorDataset: needs at least one tensor")
        self.tensors = tuple(t if isinstance(t, Tensor) else Tensor(np.asarray(t)) for t in tensors)
        lengths = [len(t.data) if t.data.ndim else None for t in self.tensors]
        if None in lengths or len(set(lengths)) > 1:
            shapes = [t.shape for t in self.tensors]
            raise ShapeError(f"TensorDataset: the tensors must have the same first axis (one row per example), got shapes {shapes}")

    def __len__(self):
        return len(self.tensors[0].data)

    def __getitem__(self, index):
        """Example `index` (or, for an array of indices, those examples), one tensor per field."""
        return tuple(Tensor._result(t.data[index], None) for t in self.tensors)


class DataLoader:
    """Batches of `batch_size` examples of `dataset`, in order or shuffled each epoch.

    Each batch is a tuple with one tensor per field (or one tensor, for a dataset whose examples are
    single arrays); the last batch is smaller unless `drop_last=True`. Batches are constants, as
    torch's are: they require no grad.
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, rng=None):
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be a positive int, got {batch_size!r}")
        self.dataset, self.batch_size = dataset, int(batch_size)
        self.shuffle, self.drop_last, self.rng = shuffle, drop_last, rng

    def __len__(self):
        """The number of batches in an epoch."""
        batches = len(self.dataset) / self.batch_size
        return math.floor(batches) if self.drop_last else math.ceil(batches)

    def __iter__(self):
        n = len(self.dataset)
        order = (self.rng if self.rng is not None else default_rng()).permutation(n) if self.shuffle else np.arange(n)
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            yield self._batch(order[start : start + self.batch_size])

    def _batch(self, indices):
        if isinstance(self.dataset, TensorDataset):
            return self.dataset[indices]
        examples = [self.dataset[int(i)] for i in indices]
        if not isinstance(examples[0], tuple):
            return _stack(examples, indices, "")
        return tuple(_stack([example[field] for example in examples], indices, f" (field {field})") for field in range(len(examples[0])))


def _stack(values, indices, which):
    try:
        return Tensor(np.stack([_array(value) for value in values]))
    except ValueError as error:
        shapes = sorted({_array(value).shape for value in values})
        raise ShapeError(f"DataLoader: the examples{which} of a batch must have one shape to be stacked, got {shapes} among examples {indices.tolist()}: {error}") from None
