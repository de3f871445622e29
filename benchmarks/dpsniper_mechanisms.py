"""The mechanisms of DP-Sniper's evaluation (Bichsel et al., IEEE S&P 2021), written from
their descriptions for the comparison benchmark (``dpsniper_compare.py``), all claiming
epsilon = 0.1. Each ``pair_NAME`` returns the input pair on which DP-Sniper (logistic
regression) reported its best bound; Lap(b) is Laplace noise of scale b, Exp(b) exponential.
"""

from __future__ import annotations

import math

import numpy as np

EPS = 0.1


def _svt(x, rng, eps1, eps2, c, threshold, query_scale, redraw=False, numeric=False, cut_off=True,
         below=0.0, aborted=-1.0):
    """Sparse-vector variants of Lyu, Su and Li (2017): threshold noise Lap(1/eps1) (Lap(c/eps1)
    when redrawn after each positive answer), query noise Lap(query_scale)."""
    rho = rng.laplace(0.0, (c if redraw else 1.0) / eps1)
    out = np.full(len(x), aborted)
    count = 0
    for i, q in enumerate(x):
        noisy = q + rng.laplace(0.0, query_scale)
        if noisy >= threshold + rho:
            out[i] = noisy if numeric else 1.0
            count += 1
            if redraw:
                rho = rng.laplace(0.0, c / eps1)
            if cut_off and count >= c:
                return out
        else:
            out[i] = below
    return out


def laplace_mechanism(x, rng):
    return x + rng.laplace(0.0, 1 / EPS)


def pair_laplace_mechanism():
    return (1.0, 2.0)


def truncated_geometric_cdf(c, n=5):
    """(integer CDF table over z = 0..n, its denominator d) of Balcer and Vadhan's sampler."""
    k = math.ceil(math.log(2 / EPS))
    d = (2 ** (k + 1) + 1) * (2**k + 1) ** (n - 1)
    cdf = []
    for z in range(n + 1):
        if z < c:
            cdf.append(2 ** (k * (c - z)) * (2**k + 1) ** (n - (c - z)))
        elif z < n:
            cdf.append(d - 2 ** (k * (z - c + 1)) * (2**k + 1) ** (n - 1 - (z - c)))
        else:
            cdf.append(d)
    return cdf, d


def truncated_geometric(c, rng, n=5):
    """Balcer and Vadhan's truncated geometric sampler with k = ceil(ln(2/eps)) = 3 (true eps ln(1 + 2^-k))."""
    cdf, d = truncated_geometric_cdf(c, n)
    u = int(rng.integers(1, d + 1))
    return float(next(z for z, value in enumerate(cdf) if value >= u))


def pair_truncated_geometric():
    return (2, 1)


def noisy_hist1(x, rng):
    return x + rng.laplace(0.0, 1 / EPS, size=len(x))


def noisy_hist2(x, rng):
    return x + rng.laplace(0.0, EPS, size=len(x))  # the bug: scale eps instead of 1/eps


def pair_noisy_hist():
    return (np.array([0.0, 1, 1, 1, 1]), np.ones(5))


def report_noisy_max1(x, rng):
    return float(np.argmax(x + rng.laplace(0.0, 2 / EPS, size=len(x))))


def report_noisy_max2(x, rng):
    return float(np.argmax(x + rng.exponential(2 / EPS, size=len(x))))


def report_noisy_max3(x, rng):
    return float(np.max(x + rng.laplace(0.0, 2 / EPS, size=len(x))))


def report_noisy_max4(x, rng):
    return float(np.max(x + rng.exponential(2 / EPS, size=len(x))))


def pair_report_noisy_max12():
    return (np.ones(5), np.array([0.0, 2, 2, 2, 2]))


def pair_report_noisy_max3():
    return (np.zeros(5), np.ones(5))


def pair_report_noisy_max4():
    return (np.ones(5), np.full(5, 2.0))


def svt1(x, rng):
    return _svt(x, rng, EPS / 2, EPS / 2, 1, 0.5, 2 * 1 / (EPS / 2))


def svt2(x, rng):
    return _svt(x, rng, EPS / 2, EPS / 2, 1, 1.0, 2 * 1 / (EPS / 2), redraw=True)


def svt3(x, rng, c=1, eps=EPS):
    return _svt(x, rng, eps / 2, eps / 2, c, 1.0, c / (eps / 2), numeric=True, below=-1000.0, aborted=-2000.0)


def svt4(x, rng, c=1, eps=EPS):
    return _svt(x, rng, eps / 4, 3 * eps / 4, c, 1.0, 1 / (3 * eps / 4))


def svt5(x, rng):
    rho = rng.laplace(0.0, 1 / (EPS / 2))
    return (x >= 1.0 + rho).astype(float)


def svt6(x, rng):
    return _svt(x, rng, EPS / 2, EPS / 2, 1, 1.0, 1 / (EPS / 2), cut_off=False)


def svt34_parallel(x, rng):
    return np.concatenate([svt3(x, rng, c=2), svt4(x, rng, c=2)])


def numerical_svt(x, rng, c=2, threshold=1.0):
    rho = rng.laplace(0.0, 3 / EPS)
    out = np.full(len(x), -1000.0)
    count = 0
    for i, q in enumerate(x):
        if q + rng.laplace(0.0, 6 * c / EPS) >= threshold + rho:
            out[i] = q + rng.laplace(0.0, 3 * c / EPS)
            count += 1
            if count >= c:
                return out
        else:
            out[i] = 0.0
    return out


def prefix_sum(x, rng):
    return np.cumsum(x + rng.laplace(0.0, 1 / EPS, size=len(x)))


def pair_svt_mixed():
    return (np.array([0.0] * 5 + [1.0] * 5), np.array([1.0] * 5 + [0.0] * 5))


def pair_svt_ones_vs_twos_zeros():
    return (np.ones(10), np.array([2.0] * 5 + [0.0] * 5))


def pair_svt5():
    return (np.array([2.0] * 5 + [0.0] * 5), np.ones(10))


def pair_svt6():
    return (np.array([1.0] * 5 + [0.0] * 5), np.array([0.0] * 5 + [1.0] * 5))


def pair_numerical_svt():
    return (np.full(10, 2.0), np.ones(10))


def pair_prefix_sum():
    return (np.ones(10), np.zeros(10))


BLOOM = {0: (0, 11, 18), 1: (3, 10, 13)}  # murmur3_32(str(v), seed i) mod 20, i = 0..3, for v = 0, 1


def _bloom(v):
    bits = np.zeros(20)
    bits[list(BLOOM[int(v)])] = 1.0
    return bits


def _permanent(bits, rng, f):
    u = rng.random(len(bits))
    return np.where(u < f / 2, 1.0, np.where(u < f, 0.0, bits))


def rappor(v, rng):
    permanent = _permanent(_bloom(v), rng, 0.75)
    return (rng.random(20) < np.where(permanent == 1.0, 0.55, 0.45)).astype(float)


def one_time_rappor(v, rng):
    return _permanent(_bloom(v), rng, 0.95)


def pair_rappor():
    return (1, 0)


def laplace_parallel(x, rng):
    return x + rng.laplace(0.0, 1 / 0.005, size=20)


def pair_laplace_parallel():
    return (1.0, 0.0)
