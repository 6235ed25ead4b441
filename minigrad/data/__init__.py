"""Small data sets shipped with minigrad, for the examples and for experiments.

* `load_digits()`: the UCI optical recognition of handwritten digits (test set), 1,797 images of
  8x8 pixels with values 0..16 and their labels 0..9 (see `minigrad/data/README.md` for its source,
  licence and attribution).
* `load_text()`: a short English text written for these examples, for character-level models.

and minibatches of any data set, as `torch.utils.data` has them: `Dataset` to subclass,
`TensorDataset(x, y)`, `Subset`, `ConcatDataset`, `random_split`, `default_collate` and
`DataLoader(dataset, batch_size=64, shuffle=True)` (see `minigrad.data.loader`).
"""

import gzip
from pathlib import Path

import numpy as np

from .loader import ConcatDataset, DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split

HERE = Path(__file__).resolve().parent

DIGITS_CITATION = (
    "Alpaydin, E. & Kaynak, C. (1998). Optical Recognition of Handwritten Digits [Dataset]. "
    "UCI Machine Learning Repository. https://doi.org/10.24432/C50P49 (CC BY 4.0)"
)


def load_digits():
    """(images, labels): float64 images of shape (1797, 8, 8) with values 0..16, int64 labels (1797,).

    Scale the images yourself (`images / 16`) and flatten them for an MLP (`images.reshape(-1, 64)`).
    Data: the UCI optical digits, CC BY 4.0; cite `minigrad.data.DIGITS_CITATION`.
    """
    with gzip.open(HERE / "digits.csv.gz", "rt") as file:
        table = np.loadtxt(file, delimiter=",", dtype=np.int64)
    if table.shape != (1797, 65):
        raise RuntimeError(f"load_digits: {HERE / 'digits.csv.gz'} holds a table of shape {table.shape}, expected (1797, 65)")
    return table[:, :64].reshape(-1, 8, 8).astype(np.float64), table[:, 64]


def load_text():
    """A few paragraphs of plain English (lower case letters, spaces, punctuation) as one string."""
    return (HERE / "text.txt").read_text(encoding="utf-8")
