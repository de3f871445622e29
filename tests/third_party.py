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


# ---- outputs of any shape --------------------------------------------------------------------

def class_pair():
    """Flipping record 0's label removes class +1 from the data."""
    return Pair((X[:3], np.array([1.0, -1.0, -1.0])), (X[:3], np.array([-1.0, -1.0, -1.0])))


def class_list(data, rng):
    """Broken (true epsilon infinite): a noisy count beside the list of classes present, whose length
    depends on the data, as a classifier library reports its classes_."""
    features, labels = data
    classes = ["positive" if c > 0 else "negative" for c in sorted(set(labels.tolist()))]
    return {"classes": classes, "count": float(len(labels)) + rng.laplace(0.0, 1.0)}


def _respond(truth: bool, epsilon: float, rng) -> str:
    keep = math.exp(epsilon) / (1 + math.exp(epsilon))
    return "yes" if (rng.random() < keep) == truth else "no"


def label_or_none(data, rng):
    """Correct: abstains (None) with probability 1/2, else answers whether record 0 is positive by
    randomized response at epsilon = 1 (a ratio of e at most)."""
    if rng.random() < 0.5:
        return None
    return _respond(bool(data[1][0] > 0), 1.0, rng)


def label_or_none_broken(data, rng):
    """Broken: the same, but randomized response at epsilon = 2 while claiming 1 (true epsilon 2)."""
    if rng.random() < 0.5:
        return None
    return _respond(bool(data[1][0] > 0), 2.0, rng)


def raises_on_one(data, rng):
    """Broken (true epsilon infinite): Laplace(1) on a count, but the count 1 makes it raise 30 % of the time."""
    if data == 1.0 and rng.random() < 0.3:
        raise ValueError("count too large for the cache")
    return data + rng.laplace(0.0, 1.0)
