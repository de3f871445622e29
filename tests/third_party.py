"""Mechanisms written the way third-party code is (issue 27), loaded by the audit workers as
``tests/third_party.py:NAME``: supervised ``(X, y)`` datasets, randomness nobody can seed, outputs of
data-dependent shape and type, exceptions under one dataset only.

Each states its true epsilon next to the claim the tests audit it against.
"""

from __future__ import annotations

import math
import os
import secrets

import numpy as np

from admmcheck.audit import Pair, Pairs

# ---- (X, y) datasets: the neighbours change the label of record 0 --------------------------

X = np.array([[0.2, 0.1], [0.5, -0.3], [-0.4, 0.8], [0.9, 0.0]])
Y0 = np.array([1.0, 1.0, -1.0, 1.0])
Y1 = np.array([-1.0, 1.0, -1.0, 1.0])


def xy_pair():
    """One pair of supervised datasets, written unambiguously."""
    return Pair((X, Y0), (X, Y1))


def xy_plain():
    """The same pair as a plain tuple of (X, y) tuples: one pair or two? Refused, never guessed."""
    return ((X, Y0), (X, Y1))


def xy_pairs():
    """Two pairs of supervised datasets: record 0's label flipped, and record 3's."""
    y3 = Y0.copy()
    y3[3] = -1.0
    return Pairs([Pair((X, Y0), (X, Y1)), Pair((X, Y0), (X, y3))])


def label_sum_laplace(data, rng):
    """Sum of the labels (sensitivity 2 under a label flip) + Laplace(2): epsilon = 1."""
    features, labels = data  # raises when handed X alone, as a misread pair would
    return float(labels.sum()) + rng.laplace(0.0, 2.0)


def scalar_tuple_pair():
    """Datasets that are 2-tuples of numbers (a count and a sum), written as a Pair."""
    return Pair((3.0, 1.5), (4.0, 1.5))


def scalar_tuple_plain():
    """The same as a plain tuple: ((3.0, 1.5), (4.0, 1.5)) reads as two pairs too; refused."""
    return ((3.0, 1.5), (4.0, 1.5))


def count_laplace(data, rng):
    """The count of a (count, sum) dataset + Laplace(1): epsilon = 1 for a count changed by 1."""
    count, _ = data
    return count + rng.laplace(0.0, 1.0)


# ---- randomness nobody can seed --------------------------------------------------------------

def _secure_laplace(scale: float) -> float:
    """Laplace(scale) from the operating system's generator (secrets), as production DP code draws."""
    u = (secrets.randbits(53) + 0.5) / 2**53 - 0.5
    return -scale * math.copysign(1.0, u) * math.log(1 - 2 * abs(u))


def secrets_laplace(data, rng):
    """Correct: Laplace(1) for sensitivity 1 from secrets; epsilon = 1."""
    return data + _secure_laplace(1.0)


def secrets_laplace_half(data, rng):
    """Broken: Laplace(1/2) from secrets, claims epsilon = 1; true epsilon 2."""
    return data + _secure_laplace(0.5)


def urandom_laplace_half(data, rng):
    """Broken: Laplace(1/2) from os.urandom, claims epsilon = 1; true epsilon 2."""
    u = (int.from_bytes(os.urandom(7), "little") >> 3) / 2**53
    u = min(max(u, 1e-16), 1 - 1e-16) - 0.5
    return data - 0.5 * math.copysign(1.0, u) * math.log(1 - 2 * abs(u))


_STREAM = np.random.default_rng(1234)  # seeded with a constant when the module loads


def fixed_stream_laplace(data, rng):
    """Correct Laplace(1) in one process, but every process repeats the same stream."""
    return data + _STREAM.laplace(0.0, 1.0)
