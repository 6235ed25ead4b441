"""`minigrad.save` and `minigrad.load`: state dicts to and from a file, as `torch.save`/`torch.load`.

The file is numpy's `.npz` (a zip of `.npy` arrays), written and read without pickle, so loading a
file cannot run code. What can be saved: a dict whose values are arrays, Tensors, Python numbers
or dicts of the same (a model's `state_dict()`, or `{"model": ..., "epoch": 3}`); nested names are
joined with "/" in the file and split again on loading. Tensors come back as numpy arrays, which is
what `load_state_dict` takes.
"""

import os

import numpy as np

from .tensor import Tensor

_SEP = "/"


def _flatten(obj, prefix, out):
    for key, value in obj.items():
        if not isinstance(key, str) or _SEP in key or not key:
            raise ValueError(f"minigrad.save: keys must be non-empty strings without {_SEP!r}, got {key!r}")
        name = f"{prefix}{_SEP}{key}" if prefix else key
        if isinstance(value, dict):
            if not value:
                raise ValueError(f"minigrad.save: {name!r} is an empty dict, which the file format cannot keep")
            _flatten(value, name, out)
            continue
        array = value.data if isinstance(value, Tensor) else value
        if isinstance(array, (bool, int, float, np.number, np.bool_)):
            array = np.asarray(array)
        if not isinstance(array, np.ndarray) or array.dtype.kind not in "biuf":
            raise TypeError(
                f"minigrad.save: {name!r} is a {type(value).__name__}; only arrays, Tensors, numbers and dicts of them "
                f"can be saved (e.g. model.state_dict())"
            )
        out[name] = array


def save(obj, f):
    """Write a dict of arrays/Tensors/numbers (nested dicts allowed) to the path or binary file `f`."""
    if not isinstance(obj, dict):
        raise TypeError(f"minigrad.save: expected a dict such as model.state_dict(), got {type(obj).__name__}")
    arrays = {}
    _flatten(obj, "", arrays)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as file:  # np.savez would append ".npz" to a path without it
            np.savez(file, **arrays)
    else:
        np.savez(f, **arrays)


def load(f, weights_only=True):
    """Read what `save` wrote: a dict of numpy arrays (0-d arrays for saved numbers), nested as saved.

    The file is never unpickled, so a load is always what `torch.load(..., weights_only=True)` is;
    `weights_only=False` (torch's way to load whole pickled objects) is refused.
    """
    if not weights_only:
        raise ValueError(
            "load: weights_only=False asks for pickled objects, which minigrad never reads (a pickle "
            "runs code when loaded); save model.state_dict() and load it into a model built in code"
        )
    result = {}
    with np.load(f, allow_pickle=False) as archive:
        for name in archive.files:
            *parents, leaf = name.split(_SEP)
            node = result
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = archive[name]
    return result
