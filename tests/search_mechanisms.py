"""Mechanisms for the neighbour search tests (issue 29): datasets of 20 records in [0, 1], one column."""

import numpy as np

RECORDS = np.linspace(0.05, 0.95, 20).reshape(20, 1)
LEAKY_RECORD = 13


def one_record_leaks(data, rng):
    """The sum of the records plus Laplace(1): epsilon = 1 for a record replaced within [0, 1], except that
    record 13 counts four times, so replacing it has epsilon 4."""
    weights = np.ones(len(data))
    if len(data) > LEAKY_RECORD:
        weights[LEAKY_RECORD] = 4.0
    return float(weights @ data[:, 0]) + rng.laplace(0.0, 1.0)


def correct_sum(data, rng):
    """The sum of the records plus Laplace(1): epsilon = 1 for one record replaced within [0, 1]."""
    return float(np.sum(data)) + rng.laplace(0.0, 1.0)


def noisy_answers(answers, rng):
    """Each query answer plus Laplace(1): epsilon = 1 when one answer moves by 1, but StatDP's patterns move up
    to all of them (epsilon = the number of answers that move)."""
    return answers + rng.laplace(0.0, 1.0, size=len(answers))


def expects_twenty_records(data, rng):
    """Code written for one dataset size: it fails on a neighbour with a record removed."""
    if len(data) != 20:
        raise ValueError(f"expected 20 records, got {len(data)}")
    return float(np.sum(data)) + rng.laplace(0.0, 1.0)
