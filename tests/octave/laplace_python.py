"""laplace.m in Python: the sum of the records plus Laplace(1) (the speed benchmark's baseline)."""

import numpy as np


def laplace(data, rng):
    return float(np.sum(data)) + rng.laplace(0.0, 1.0)
