"""Mechanisms for the auditor's tests, loaded by the audit workers as ``tests/mechanisms.py:NAME``.

Each broken mechanism states its true epsilon (computed by hand below) next to the epsilon
it claims; the correct ones are exactly (epsilon, delta)-DP for the neighbours given.
"""

from __future__ import annotations

import functools
import math
import os
import random
import time

import numpy as np

# ---- neighbours ----------------------------------------------------------------------------


def scalar_pair():
    """A counting query: the count is 0 or 1 (sensitivity 1)."""
    return (0.0, 1.0)


def vector_pair():
    """Four counts that each change by 1: L1 sensitivity 4, L2 sensitivity 2."""
    return (np.zeros(4), np.ones(4))


def histogram_pair():
    """Replace-one neighbours of a 5-bin histogram: one record moves from bin 0 to bin 1 (L1 = 2)."""
    return (np.array([5.0, 3.0, 2.0, 4.0, 1.0]), np.array([4.0, 4.0, 2.0, 4.0, 1.0]))


def max_pair():
    """Scores for report-noisy-max; each score changes by at most 1."""
    return (np.array([1.0, 0.0, 0.0, 0.0]), np.array([0.0, 1.0, 1.0, 1.0]))


def svt_pair():
    """Queries for the sparse vector technique (sensitivity 1), threshold 0."""
    return (np.array([0.0, 0.0, 0.0, 0.0, 1.0]), np.array([1.0, 1.0, 1.0, 1.0, 0.0]))


def svt_mixed_pair():
    """Lyu, Su and Li's witness: five queries move up by 1 and five move down by 1."""
    return (np.array([0.0] * 5 + [1.0] * 5), np.array([1.0] * 5 + [0.0] * 5))


def plane_pair():
    """Two points of the plane that differ along the second axis."""
    return (np.array([0.0, 0.0]), np.array([0.0, 1.0]))


# ---- correct mechanisms --------------------------------------------------------------------


def laplace(data, rng):
    """Laplace mechanism, epsilon = 1 for sensitivity 1."""
    return data + rng.laplace(0.0, 1.0)


def gaussian(data, rng):
    """Gaussian mechanism, (0.5, 1e-5)-DP for L2 sensitivity 2 (vector_pair): sigma = 2 sqrt(2 ln(1.25/delta))/eps."""
    sigma = 2.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5
    return data + rng.normal(0.0, sigma, size=np.shape(data))


def noisy_max(data, rng):
    """Report noisy max (index only) with Laplace(2/eps) noise, epsilon = 1."""
    return float(np.argmax(data + rng.laplace(0.0, 2.0, size=len(data))))


def laplace_global(data, rng):
    """epsilon = 1, but draws from numpy's global generator instead of rng."""
    return data + np.random.laplace(0.0, 1.0)


def sometimes_global(data, rng):
    """Draws from rng, and on about a third of its calls (not the first) also from numpy's and Python's global
    generators: the worker seeds them only once it has seen a call draw from them."""
    u = rng.random()
    if u < 0.3:
        return data + u + np.random.laplace(0.0, 1.0) + random.random()
    return data + u


def numpy_global_cycle(data, rng):
    """Draws exactly 624 32-bit words (one MT19937 cycle) from numpy's global generator: its position is
    then back where it was."""
    return data + float(np.random.laplace(0.0, 1.0, size=312).mean())


def python_global_cycle(data, rng):
    """Draws exactly 624 32-bit words from Python's global generator (312 doubles of two words each)."""
    return data + sum(random.random() for _ in range(312)) / 312


def laplace_python_random(data, rng):
    """epsilon = 1, drawing from Python's random module."""
    u = random.random() - 0.5
    return data - math.copysign(1.0, u) * math.log(1 - 2 * abs(u))


def _laplace_batch(data, rng, n):
    return data + rng.laplace(0.0, 1.0, size=n)


def laplace_vectorised(data, rng):
    """epsilon = 1, with a vectorised form."""
    return data + rng.laplace(0.0, 1.0)


laplace_vectorised.batch = _laplace_batch


def _gaussian_batch(data, rng, n):
    return data + rng.normal(0.0, 1.0, size=n)


def gaussian_vectorised(data, rng):
    """Gaussian mechanism with sigma = 1 for sensitivity 1, with a vectorised form: (epsilon, delta)-DP on the
    curve delta(epsilon) = Phi(1/2 - epsilon) - e^epsilon Phi(-1/2 - epsilon) (Balle & Wang 2018, Thm 8)."""
    return data + rng.normal(0.0, 1.0)


gaussian_vectorised.batch = _gaussian_batch


def laplace_in_huge_units(data, rng):
    """The Laplace mechanism (epsilon = 1) reported as 1e17 + 1e15 (data + noise): outputs near 1e17, where
    a score that centres or squares the raw values loses every digit that carries the leak."""
    return 1e17 + 1e15 * (data + rng.laplace(0.0, 1.0))


def mapping_output(data, rng):
    """A mapping release: two named parts (flattened in sorted-key order)."""
    return {"b": data + rng.laplace(0.0, 1.0, size=2), "a": np.array([[data + rng.laplace(0.0, 1.0)]])}


# ---- broken mechanisms (claim epsilon = 1 unless said otherwise) ---------------------------


def laplace_rare_leak(data, rng):
    """A delta-type leak: the Laplace mechanism (epsilon = 1), except that on data 1 it releases, with
    probability 1e-3, a uniform draw from [8, 9]. On [8, 9] the density ratio rises to
    ((1 - 1e-3) e^-8 / 2 + 1e-3) / (e^-9 / 2) = (1 - 1e-3) e + 2e-3 e^9 = 18.9 at 9 (a loss of ln 18.9 =
    2.94, its pure epsilon; elsewhere at most e), and P_1([8, 9]) - e P_0([8, 9]) = 1.0e-3, so (1, 1e-5)
    fails by a hundred times its delta."""
    if data == 1 and rng.random() < 1e-3:
        return 8.0 + rng.random()
    return data + rng.laplace(0.0, 1.0)


def laplace_rarer_leak(data, rng):
    """As :func:`laplace_rare_leak`, ten times rarer and further out: with probability 1e-4 on data 1, a
    uniform draw from [12, 13]. There the density ratio reaches (1 - 1e-4) e + 2e-4 e^13 = 91.2 at 13 (a
    loss of 4.51); P_1([12, 13]) - e P_0([12, 13]) = 1.0e-4, ten times (1, 1e-5)'s delta."""
    if data == 1 and rng.random() < 1e-4:
        return 12.0 + rng.random()
    return data + rng.laplace(0.0, 1.0)


def laplace_half_scale(data, rng):
    """Laplace(1/2) for sensitivity 1: true epsilon 2."""
    return data + rng.laplace(0.0, 0.5)


def histogram_wrong_scale(data, rng):
    """Laplace(1/eps) per bin for replace-one neighbours (L1 sensitivity 2): true epsilon 2."""
    return data + rng.laplace(0.0, 1.0, size=len(data))


def vector_l2_sensitivity(data, rng):
    """Laplace vector scaled by the L2 sensitivity 2 instead of the L1 sensitivity 4: true epsilon 2."""
    return data + rng.laplace(0.0, 2.0, size=len(data))


def noisy_max_with_value(data, rng):
    """Report noisy max releasing the noisy maximum too, Laplace(2/eps): true epsilon 2."""
    noisy = data + rng.laplace(0.0, 2.0, size=len(data))
    k = int(np.argmax(noisy))
    return np.array([k, noisy[k]])


def noisy_max_too_little_noise(data, rng):
    """Report noisy max with Laplace(1/(2 eps)) noise: true epsilon > 1 (about 4 here)."""
    return float(np.argmax(data + rng.laplace(0.0, 0.5, size=len(data))))


def svt_no_threshold_noise(data, rng):
    """Sparse vector (Lyu, Su, Li 2017, Alg. 5 style): no noise on the threshold, answers until the
    first one above it; claims epsilon = 1, but the output pattern is not 1-DP (infinite)."""
    out = np.zeros(len(data))
    for j, q in enumerate(data):
        if q + rng.laplace(0.0, 2.0) >= 0.5:
            out[j] = 1.0
            break
    return out


def svt_never_stops(data, rng):
    """Sparse vector that keeps answering after the first query above the threshold (Lyu, Su, Li
    2017, Alg. 6 style): each extra answer costs privacy, so the claimed epsilon = 1 fails."""
    threshold = 0.5 + rng.laplace(0.0, 2.0)
    return np.array([float(q + rng.laplace(0.0, 2.0) >= threshold) for q in data])


def admm_noise_missing_once(data, rng):
    """Three broadcast iterates; iteration 2 forgets its noise: the release reveals the data (infinite)."""
    return np.array([data + rng.laplace(0.0, 3.0), 0.5 * data, 0.25 * data + rng.laplace(0.0, 3.0)])


def admm_noise_reused(data, rng):
    """The noise is drawn once and reused in both iterates: their difference reveals the data."""
    noise = rng.laplace(0.0, 3.0)
    return np.array([data + noise, 2.0 * data + noise])


def gamma_norm_shape_d_minus_1(data, rng):
    """Noise with density claimed ∝ exp(-||e||) in d = 2 dimensions, but ||e|| ~ Gamma(d - 1, 1):
    the density is ∝ exp(-r)/r, unbounded at the released point, so no epsilon holds."""
    radius = rng.gamma(1.0, 1.0)
    angle = rng.uniform(0.0, 2 * np.pi)
    return data + radius * np.array([np.cos(angle), np.sin(angle)])


def low_rank_noise(data, rng):
    """Noise along the first axis only, while the neighbours differ along the second: infinite."""
    return data + np.array([rng.laplace(0.0, 1.0), 0.0])


def gaussian_wrong_sigma(data, rng):
    """Gaussian with sigma = sensitivity/eps (forgets sqrt(2 ln(1.25/delta))): claims (0.5, 1e-5)."""
    return data + rng.normal(0.0, 2.0 / 0.5, size=np.shape(data))


# ---- faulty mechanisms ---------------------------------------------------------------------


def raises(data, rng):
    if rng.random() < 0.01:
        raise ValueError("bad luck")
    return data + rng.laplace(0.0, 1.0)


def hangs(data, rng):
    if rng.random() < 0.01:
        time.sleep(60)
    return data + rng.laplace(0.0, 1.0)


def returns_nan(data, rng):
    return float("nan") if rng.random() < 0.01 else data + rng.laplace(0.0, 1.0)


def changes_shape(data, rng):
    """Correct (epsilon = 1): a 2-vector of zeros with probability 0.01 under both datasets, else Laplace(1)."""
    return np.zeros(2) if rng.random() < 0.01 else np.zeros(1) + data + rng.laplace(0.0, 1.0)


def unseeded(data, rng):
    """Draws from the operating system: a different output for the same seed."""
    return data + int.from_bytes(os.urandom(2), "little") / 65536.0


def not_an_output(data, rng):
    """An object no observer reads as numbers, text or structure."""
    return object()


def hangs_in_c(data, rng):
    """Blocks SIGALRM, then sleeps: the per-call alarm cannot interrupt it."""
    import signal as _signal

    if rng.random() < 0.01:
        _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGALRM})
        time.sleep(600)
    return data + rng.laplace(0.0, 1.0)


def histogram_then_centred(data, rng):
    """histogram_wrong_scale (true epsilon 2), which then centres its input in place, as research code often
    does: on the neighbours' own arrays every later call would see both histograms centred (L1 distance 2 ->
    still 2, but shifted by the means) and, here, zeroed mean."""
    out = data + rng.laplace(0.0, 1.0, size=len(data))
    data -= data.mean()
    return out


def histogram_copied_then_centred(data, rng):
    """histogram_then_centred on its own copy of the input: the same law, no write into the caller's data."""
    return histogram_then_centred(data.copy(), rng)


def laplace_half_scale_then_zeroed(data, rng):
    """laplace_half_scale (true epsilon 2) on a one-element array that, with probability 0.01, it then zeroes in
    place: on the neighbours' own arrays both datasets would read 0 from then on (no leak left to see)."""
    out = float(data[0]) + rng.laplace(0.0, 0.5)
    if rng.random() < 0.01:
        data[:] = 0.0
    return out


def laplace_half_scale_array(data, rng):
    """laplace_half_scale on a one-element array: laplace_half_scale_then_zeroed without the write."""
    return float(data[0]) + rng.laplace(0.0, 0.5)


def array_pair():
    """scalar_pair as one-element arrays, which a mechanism can write into."""
    return (np.array([0.0]), np.array([1.0]))


def laplace_global_data_only(data):
    """laplace_global as research code writes it: a function of the data alone."""
    return data + np.random.laplace(0.0, 1.0)


def laplace_global_keyword_only(data, *, scale=1.0):
    """laplace_global with a keyword-only setting: called with the data alone."""
    return data + np.random.laplace(0.0, scale)


def needs_three(data, epsilon, delta):
    """Cannot be called with the data alone, nor with (data, rng)."""
    return data + np.random.laplace(0.0, 1.0 / epsilon)


def raises_type_error(data, rng):
    """Raises a TypeError of its own: not a calling-convention mistake."""
    return data + len(rng.random())


_STICKY = {"left": 0, "value": 0.0}


def sticky_unseeded(data, rng):
    """Correct Laplace noise in law, but each draw from the operating system is released for 5 calls in a row, as a
    generator seeded from a coarse clock would: consecutive samples are not independent."""
    if _STICKY["left"] == 0:
        uniform = (int.from_bytes(os.urandom(6), "little") + 0.5) / 2 ** 48
        _STICKY.update(left=5, value=-math.copysign(math.log(1 - 2 * abs(uniform - 0.5)), uniform - 0.5))
    _STICKY["left"] -= 1
    return data + _STICKY["value"]


def laplace_random_state(data, random_state=None):
    """scikit-learn's convention: a RandomState (sklearn.utils.check_random_state refuses a Generator)."""
    from sklearn.utils import check_random_state

    return data + check_random_state(random_state).laplace(0.0, 1.0)


def laplace_random_state_by_hand(data, rng):
    """laplace_random_state with the RandomState built from rng's own stream by hand."""
    return data + np.random.RandomState(rng.bit_generator).laplace(0.0, 1.0)


def pairs_two_equal():
    """Three pairs, the first and the last of a dataset with itself (a mistake the audit should name)."""
    from admmcheck.audit import Pair, Pairs

    return Pairs([Pair(np.array([1.0]), np.array([1.0])), Pair(np.array([0.0]), np.array([1.0])),
                  Pair((np.zeros(2), [1, 2]), (np.zeros(2), [1, 2]))])


def laplace_array_sum(data, rng):
    """epsilon = 1 on array_pair: the sum of the first element (or of an (X, y) pair's X) plus Laplace(1)."""
    first = data[0] if isinstance(data, tuple) else data
    return float(np.sum(first)) + rng.laplace(0.0, 1.0)


class CachedDataset:
    """A dataset object that fills a cache on first use (as admmcheck's ConsensusProblem does), and whose
    ``values`` a careless mechanism may overwrite."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=float)

    @functools.cached_property
    def total(self) -> float:
        return float(self.values.sum())


def cached_pair():
    return (CachedDataset([0.0, 0.0]), CachedDataset([1.0, 0.0]))


def laplace_of_cached_total(data, rng):
    """epsilon = 1 on cached_pair: reads (and so fills) the dataset's cache, writes nothing."""
    return data.total + rng.laplace(0.0, 1.0)


def laplace_then_overwrites(data, rng):
    """laplace_half_scale on cached_pair's total, which then replaces the dataset's values: a write."""
    out = float(data.values.sum()) + rng.laplace(0.0, 0.5)
    data.values = np.zeros(2)
    return out


# ---- mechanisms of other DP notions (tests/test_audit_claims.py) ------------------------------


def gaussian_unit(data, rng):
    """Gaussian noise of std 1 on a sensitivity-1 count: exactly 1-GDP and 0.5-zCDP (scalar_pair)."""
    return data + rng.normal(0.0, 1.0)


def gaussian_quarter(data, rng):
    """Gaussian noise of std 1/4 on a sensitivity-1 count: 4-GDP and 8-zCDP, for a claim of 1-GDP or 0.5-zCDP."""
    return data + rng.normal(0.0, 0.25)


def slow_laplace(data, rng):
    """laplace at a millisecond a call: an audit of it lasts long enough to be stopped mid-way."""
    time.sleep(0.001)
    return data + rng.laplace(0.0, 1.0)
