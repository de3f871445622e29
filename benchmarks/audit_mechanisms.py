"""Mechanisms of the audit benchmark, written as plain per-call Python functions."""

import numpy as np


def scalar_laplace(data, rng):
    """Laplace mechanism, epsilon = 1 (sensitivity 1)."""
    return data + rng.laplace(0.0, 1.0)


def scalar_pair():
    return (0.0, 1.0)


def transcript_500(data, rng):
    """A 500-number release (say 20 iterations x 5 nodes x 5 coordinates), Laplace noise of scale 20."""
    return data + rng.laplace(0.0, 20.0, size=500)


def transcript_pair():
    return (np.zeros(500), np.r_[np.ones(1), np.zeros(499)])
