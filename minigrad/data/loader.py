"""Minibatches: `Dataset`, `TensorDataset`, `Subset`, `ConcatDataset`, `random_split` and
`DataLoader`, as `torch.utils.data` has them, so that a PyTorch data pipeline (`class
MyData(Dataset)`, `for x, y in loader:`) ports as it is.

A dataset is anything with `len()` and `dataset[i]`, an item being one example: a tuple of fields
(an input and its label), a dict of them, or a single array or number. The loader draws the
examples' order (shuffled anew each epoch, from minigrad's random state: `manual_seed`, or
`generator=`/`rng=`; or from a `sampler`), cuts it into batches and collates each batch: every
field stacked into one tensor (`default_collate`, or your `collate_fn`). A `TensorDataset` is
indexed with a whole batch's indices at once instead of example by example: the same batches,
without a Python loop per example.
"""

import bisect
import itertools
import math

import numpy as np

from ..creation import default_rng
from ..errors import ShapeError
from ..tensor import Tensor


def _array(field):
    return field.data if isinstance(field, Tensor) else np.asarray(field)


class Dataset:
    """The base of a map-style dataset, as `torch.utils.data.Dataset`: a subclass gives
    `__getitem__(i)` (one example) and `__len__`; `a + b` concatenates two datasets."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__}: a Dataset subclass must define __getitem__ (and __len__)")

    def __add__(self, other):
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
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


class Subset(Dataset):
    """The examples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """The examples of several datasets, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: needs at least one dataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"ConcatDataset: index {index} is out of range for {len(self)} examples")
        which = bisect.bisect_right(self.cumulative_sizes, index)
        return self.datasets[which][index - (self.cumulative_sizes[which - 1] if which else 0)]


def random_split(dataset, lengths, generator=None):
    """`dataset` cut at random into `Subset`s of the given lengths, or of the given fractions of it
    (each floor(fraction · n), the remainder handed out one by one from the first, as PyTorch does)."""
    n, lengths = len(dataset), list(lengths)
    if lengths and all(0 <= f <= 1 for f in lengths) and math.isclose(sum(lengths), 1) and sum(lengths) != n:
        counts = [math.floor(n * f) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n or any(int(k) != k or k < 0 for k in lengths):
        raise ValueError(f"random_split: the lengths {lengths} must be non-negative ints adding up to the dataset's {n} examples, or fractions adding up to 1")
    order = (generator if generator is not None else default_rng()).permutation(n).tolist()
    return [Subset(dataset, order[end - k : end]) for k, end in zip(lengths, itertools.accumulate(int(k) for k in lengths))]


def default_collate(batch):
    """A list of examples as one batch, as PyTorch's `default_collate`: arrays, tensors and numbers
    stacked into one tensor (Python ints int64, floats float64), tuples and lists field by field,
    dicts key by key; strings stay a list."""
    return _collate(batch, ())


def _collate(batch, path):
    first = batch[0]
    if isinstance(first, str):
        return list(batch)
    if isinstance(first, dict):
        return {key: _collate([example[key] for example in batch], path + (key,)) for key in first}
    if isinstance(first, (tuple, list)):
        if len({len(example) for example in batch}) > 1:
            raise ShapeError(f"DataLoader: {_field(path)}the examples of a batch must have the same number of fields, got {sorted({len(e) for e in batch})}")
        fields = [_collate([example[i] for example in batch], path + (i,)) for i in range(len(first))]
        return tuple(fields) if isinstance(first, tuple) else fields
    arrays = [_array(value) for value in batch]
    try:
        return Tensor(np.stack(arrays))
    except ValueError as error:
        raise ShapeError(f"DataLoader: {_field(path)}the examples of a batch must have one shape to be stacked, got {sorted({a.shape for a in arrays})}: {error}") from None


def _field(path):
    return f"field {'/'.join(map(repr, path))} of " if path else ""


class DataLoader:
    """Batches of `batch_size` examples of `dataset`, in order, shuffled each epoch, or in the order
    of a `sampler` (an iterable of indices), as `torch.utils.data.DataLoader`.

    Each batch is `collate_fn` (by default `default_collate`) of its examples: a tuple with one
    tensor per field for tuple examples, a dict for dicts, one tensor for single arrays; the last
    batch is smaller unless `drop_last=True`; `batch_size=None` yields the examples one by one,
    uncollated. Batches are constants, as torch's are: they require no grad. `num_workers`,
    `pin_memory` and the other process options of PyTorch's loader are accepted and change nothing:
    examples are loaded here, in this process, in the same order.
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None, num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 timeout=0, worker_init_fn=None, multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False, pin_memory_device="", rng=None):
        if batch_size is not None and (int(batch_size) != batch_size or batch_size < 1):
            raise ValueError(f"DataLoader: batch_size must be a positive int or None, got {batch_size!r}")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler and shuffle=True are mutually exclusive (the sampler decides the order)")
        if batch_sampler is not None:
            raise ValueError("DataLoader: batch_sampler is not supported in minigrad; pass a sampler and batch_size")
        self.dataset, self.batch_size = dataset, None if batch_size is None else int(batch_size)
        self.shuffle, self.sampler, self.drop_last = shuffle, sampler, drop_last
        self.collate_fn, self.num_workers = collate_fn, num_workers
        self.rng = rng if rng is not None else generator

    def __len__(self):
        """The number of batches in an epoch."""
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return math.floor(n / self.batch_size) if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self):
        if self.sampler is not None:
            order = np.fromiter((int(i) for i in self.sampler), dtype=np.int64)
        else:
            n = len(self.dataset)
            order = (self.rng if self.rng is not None else default_rng()).permutation(n) if self.shuffle else np.arange(n)
        if self.batch_size is None:
            yield from (self.dataset[int(i)] for i in order)
            return
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            yield self._batch(order[start : start + self.batch_size])

    def _batch(self, indices):
        if isinstance(self.dataset, TensorDataset) and self.collate_fn is None:
            return self.dataset[indices]
        examples = [self.dataset[int(i)] for i in indices]
        if self.collate_fn is not None:
            return self.collate_fn(examples)
        try:
            return default_collate(examples)
        except ShapeError as error:
            raise ShapeError(f"{error} (examples {indices.tolist()})") from None
