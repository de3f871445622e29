"""Training routines for the one-run canary audits of tests/test_one_run_canaries.py: noisy sums of records (rows of
norm at most 1, so adding or removing one moves the sum by at most 1 in the Euclidean norm)."""

import math
import time

import numpy as np

DELTA = 1e-5


def gaussian_scale(epsilon: float, delta: float = DELTA) -> float:
    """The classic Gaussian mechanism's scale for (epsilon, delta) at sensitivity 1 (Dwork & Roth, Thm A.1)."""
    return math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def sum_for_eight(data, rng):
    """Noise for epsilon = 8: claimed (1, 1e-5) by the tests, so too little by a factor of 8."""
    return data.sum(axis=0) + rng.normal(scale=gaussian_scale(8.0), size=data.shape[1])


def sum_for_one(data, rng):
    return data.sum(axis=0) + rng.normal(scale=gaussian_scale(1.0), size=data.shape[1])


def labelled_sum_for_eight(data, rng):
    """A linear model of (X, y): the sum of y_i x_i, with the noise for epsilon = 8."""
    features, labels = data
    return (labels[:, None] * features).sum(axis=0) + rng.normal(scale=gaussian_scale(8.0), size=features.shape[1])


def mean_only(data, rng):
    """Releases one number, not a vector of the records' width: the default score cannot read it."""
    return float(data.sum()) + rng.normal()


def dot(release, canary):
    return float(np.dot(release, canary))


def broken(data, rng):
    raise ValueError("the optimiser diverged")


def broken_score(release, canary):
    raise ZeroDivisionError("no norm for a zero release")


def hangs(data, rng):
    time.sleep(600)



def exact_gaussian_sum(data, rng):
    """Noise of scale 1 at sensitivity 1: exactly (1, delta(1))-DP for the delta of the exact Gaussian curve
    (properties/test_one_run_calibration.py)."""
    return data.sum(axis=0) + rng.normal(scale=1.0, size=data.shape[1])


def node_sum_for_eight(data, rng):
    """Records whose first column is their node (0, 1 or 2): the sum of the other columns, noise for epsilon = 8."""
    if not set(np.unique(data[:, 0])) <= {0.0, 1.0, 2.0}:
        raise ValueError(f"a record's node is not 0, 1 or 2: {sorted(set(np.unique(data[:, 0])))}")
    return data[:, 1:].sum(axis=0) + rng.normal(scale=gaussian_scale(8.0), size=data.shape[1] - 1)
