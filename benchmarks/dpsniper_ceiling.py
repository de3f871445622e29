"""The event-tester ceiling of each DP-Sniper mechanism: the best epsilon lower bound that a
tester bounding ONE fixed event with exact Clopper-Pearson intervals can expect from n samples
per side, even when the event is handed to it for free (no selection split, no multiplicity).

Setting. DP-Sniper (Bichsel, Steffen, Bogunovic and Vechev, "DP-Sniper: Black-Box Discovery of
Differential Privacy Violations using Classifiers", IEEE S&P 2021) and our auditor
(``dpsniper_compare.py``) both end by bounding the probabilities of one event E under the two
inputs d0, d1 of a pair and reporting ln(p_a_lower / p_b_upper). For the mechanism's exact
output laws P_0, P_1 on the pair, the best any such tester can expect with n samples per side at
confidence 1 - alpha (alpha/2 spent on each side; counts replaced by their expectations n*P) is

    ceiling(n, alpha) = max over events E and directions (a, b) in {(0, 1), (1, 0)} of
        ln( cp_lower(n * P_a(E), n, alpha/2) / cp_upper(n * P_b(E), n, alpha/2) )

with cp_lower / cp_upper the one-sided Clopper-Pearson bounds of ``admmcheck.audit.statistics.estimators``.

Neyman-Pearson. cp_lower(n p, n, .) increases with p and cp_upper(n q, n, .) increases with q,
so for a fixed P_a(E) the best event has the smallest P_b(E): by the Neyman-Pearson lemma it is
a superlevel set of the likelihood ratio p_a / p_b (up to randomisation on the boundary).
Hence it suffices to know the law of the privacy-loss variable L = ln p_0(Y) / p_1(Y) under both
inputs and to sweep the thresholds t of {L >= t} (direction (0, 1)) and {L <= t} (direction
(1, 0)); outputs with P_1 = 0 (L = +inf) or P_0 = 0 (L = -inf) are kept as atoms, so pairs that
break privacy infinitely are handled the same way. Randomised events (DP-Sniper's attacks
randomise on the boundary: a fraction of the next level set) are tried too ("randomised_value"
in the JSON); on these 20 pairs they gain nothing.

A single run's bound scatters around its expectation: "sd_realised" is the delta-method standard
deviation of ln p_a_hat - ln p_b_hat for the maximising event, and "published_margin_sd" is
(2e8 ceiling - DP-Sniper's published bound) in those units, so a published bound a little above
the ceiling (negative margin of order 1) would still be consistent with the same mechanism.

How the laws are computed (``--check`` validates each against 2e5 draws per side of the sampled
mechanism of ``dpsniper_mechanisms.py``, chi-square on the law of the binned L):

* the output space is cut into cells whose probabilities are computed exactly (closed-form
  CDFs, exact fractions, or Gauss-Legendre quadrature over the threshold noise rho of the
  sparse-vector variants, with panel breaks at every kink of the integrand); L of a cell is
  ln P_0(cell) / P_1(cell), rounded to a grid of step h (1e-5 or 1e-4). Every union of cells is
  a genuine event whose probabilities are exact, so each reported value is attained by a real
  event (a lower bound on the ceiling, short of it only by the cell / bin resolution: refining
  the cells or bins 2-10x moved no value by more than 3e-5 when this was written);
* outputs made of independent parts (RAPPOR bits, LaplaceParallel / PrefixSum coordinates,
  SVT34Parallel's two halves, NumericalSVT's released values given the pattern) have L equal to
  a sum of independent terms: their binned laws are convolved under each input separately.

Either estimator. Two Clopper-Pearson intervals at alpha/2 each add their margins; the conditional
ratio test the audit uses for claims with delta = 0 (``admmcheck.audit.statistics.estimators.
ratio_epsilon_bound``: Fisher's conditional odds-ratio bound and the closed-form step from odds to
ratio) pays less on rare events. The JSON's "either_estimator" entry (10^6, 95 % only) is the
ceiling when the tester handed the event bounds it with whichever of the two gives more
(:func:`either_estimator_ceiling`); it is the yardstick for a tester that may use both.

No row needs Monte Carlo. Usage:

    python benchmarks/dpsniper_ceiling.py [--names a,b] [--check] [--check-samples 200000] [--out DIR]

writes DIR/dpsniper_ceiling.json and DIR/dpsniper_ceiling.md (default DIR benchmarks/out).
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy import signal, stats

from admmcheck.audit.statistics.estimators import RATIO_TEST, TWO_INTERVALS, better_estimator, cp_lower, cp_upper
from admmcheck.foundations.output import output_folder, to_json, write_text_atomic

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# CASES: name -> (mechanism, pair, DP-Sniper published bound, truly private)
from dpsniper_compare import CASES

_spec = importlib.util.spec_from_file_location("dpsniper_mechanisms", HERE / "dpsniper_mechanisms.py")
M = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(M)
EPS = M.EPS

SETTINGS = ((1_000_000, 0.05), (200_000_000, 0.10))  # (samples per side, alpha): ours, DP-Sniper's
INF = 1 << 30  # bin index of L = +inf (P_1 = 0); -INF: L = -inf (P_0 = 0)
NOSUP = (1 << 31) - 1  # bin index of a cell with probability 0 under both inputs
TINY = 1e-280  # masses below this count as 0


# --------------------------------------------------------------------------- Laplace helpers

def lap_pdf(z, s):
    return np.exp(-np.abs(z) / s) / (2 * s)


def lap_cdf(z, s):
    z = np.asarray(z, float)
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0) / s), 1 - 0.5 * np.exp(-np.maximum(z, 0) / s))


def lap_sf(z, s):
    return lap_cdf(-np.asarray(z, float), s)


def lap_logcdf(z, s):
    z = np.asarray(z, float)
    return np.where(z < 0, math.log(0.5) + np.minimum(z, 0) / s, np.log1p(-0.5 * np.exp(-np.maximum(z, 0) / s)))


def lap_logsf(z, s):
    return lap_logcdf(-np.asarray(z, float), s)


def lap_mass(a, b, s):
    """P(a <= X <= b) for X ~ Lap(s) (0 where a >= b), without cancellation in either tail."""
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    with np.errstate(invalid="ignore", over="ignore"):
        left = 0.5 * np.exp(np.minimum(b, 0) / s) * -np.expm1((a - b) / s)  # b <= 0
        right = 0.5 * np.exp(-np.maximum(a, 0) / s) * -np.expm1(-(b - a) / s)  # a >= 0
        middle = 1 - 0.5 * np.exp(np.minimum(a, 0) / s) - 0.5 * np.exp(-np.maximum(b, 0) / s)
        mass = np.where(b <= 0, left, np.where(a >= 0, right, middle))
    return np.where(a < b, np.maximum(np.nan_to_num(mass), 0.0), 0.0)


def gl_rule(breaks, order):
    """Gauss-Legendre nodes and weights on the panels between the sorted unique ``breaks``."""
    breaks = np.unique(np.asarray(breaks, float))
    x, w = np.polynomial.legendre.leggauss(order)
    mid, half = (breaks[1:] + breaks[:-1]) / 2, (breaks[1:] - breaks[:-1]) / 2
    return (mid[:, None] + half[:, None] * x).ravel(), (half[:, None] * w).ravel()


def rho_rule(rho_scale, breaks, width, order, extent=None):
    """Nodes r and weights (GL weight x density of Lap(rho_scale)) for integrating over the
    threshold noise: panels at most ``width`` wide, broken at 0 and at ``breaks``, over
    +-50 scales (the mass left out is e^-50)."""
    ext = 50 * rho_scale if extent is None else extent
    count = math.ceil(2 * ext / width)
    grid = -ext + 2 * ext * np.arange(count + 1) / count
    extra = np.asarray(breaks, float)
    extra = extra[(extra > -ext) & (extra < ext)]
    r, w = gl_rule(np.concatenate([grid, extra, [0.0]]), order)
    return r, w * lap_pdf(r, rho_scale)


# --------------------------------------------------------------------------- laws of L

@dataclass
class Law:
    """Binned law of L under both inputs: bin j holds L = (k0 + j) h; inf0 is the P_0 mass where
    P_1 = 0 (L = +inf), inf1 the P_1 mass where P_0 = 0 (L = -inf); eps = sup |L| of the pair."""

    h: float
    k0: int
    w0: np.ndarray
    w1: np.ndarray
    inf0: float = 0.0
    inf1: float = 0.0
    eps: float = 0.0

    def totals(self) -> tuple[float, float]:
        return float(self.w0.sum() + self.inf0), float(self.w1.sum() + self.inf1)


def law_from_cells(p0, p1, h, max_bins=4_000_000):
    """Law of the binned L over disjoint cells with probabilities p0 / p1; also each cell's bin."""
    p0, p1 = np.asarray(p0, float).ravel(), np.asarray(p1, float).ravel()
    pos0, pos1 = p0 > TINY, p1 > TINY
    both = pos0 & pos1
    L = np.log(p0[both]) - np.log(p1[both])
    k = np.rint(L / h).astype(np.int64)
    bins = np.full(p0.shape, NOSUP, np.int64)
    bins[both] = k
    bins[pos0 & ~pos1] = INF
    bins[pos1 & ~pos0] = -INF
    if k.size:
        k0 = int(k.min())
        if k.max() - k0 > max_bins:
            raise ValueError(f"L spans {k.max() - k0} bins of {h}; use a coarser h")
        w0, w1 = np.bincount(k - k0, p0[both]), np.bincount(k - k0, p1[both])
    else:
        k0, w0, w1 = 0, np.zeros(1), np.zeros(1)
    inf0, inf1 = float(p0[pos0 & ~pos1].sum()), float(p1[pos1 & ~pos0].sum())
    eps = math.inf if inf0 > 0 or inf1 > 0 else (float(np.abs(L).max()) if L.size else 0.0)
    return Law(h, k0, w0, w1, inf0, inf1, eps), bins


def conv(a: Law, b: Law) -> Law:
    """Law of L_a + L_b for independent parts (each side convolved separately)."""
    assert a.h == b.h
    f = np.convolve if a.w0.size * b.w0.size < 5e7 else signal.fftconvolve
    w0, w1 = np.maximum(f(a.w0, b.w0), 0.0), np.maximum(f(a.w1, b.w1), 0.0)
    s0a, s0b, s1a, s1b = a.w0.sum(), b.w0.sum(), a.w1.sum(), b.w1.sum()
    inf0 = a.inf0 * (s0b + b.inf0) + b.inf0 * s0a
    inf1 = a.inf1 * (s1b + b.inf1) + b.inf1 * s1a
    return Law(a.h, a.k0 + b.k0, w0, w1, inf0, inf1, a.eps + b.eps)


def power(a: Law, m: int) -> Law:
    out = Law(a.h, 0, np.ones(1), np.ones(1))
    for _ in range(m):
        out = conv(out, a)
    return out


def add(a: Law | None, b: Law) -> Law:
    """Sum of two sub-laws (disjoint parts of the output space)."""
    if a is None:
        return b
    k0 = min(a.k0, b.k0)
    size = max(a.k0 + a.w0.size, b.k0 + b.w0.size) - k0
    w0, w1 = np.zeros(size), np.zeros(size)
    for part in (a, b):
        w0[part.k0 - k0:part.k0 - k0 + part.w0.size] += part.w0
        w1[part.k0 - k0:part.k0 - k0 + part.w1.size] += part.w1
    massive = [p.eps for p in (a, b) if sum(p.totals()) > 0]
    return Law(a.h, k0, w0, w1, a.inf0 + b.inf0, a.inf1 + b.inf1, max(massive, default=0.0))


def combine(*bins):
    """Per-sample bin of a sum of independent parts, respecting the +-inf / no-support codes."""
    bins = [np.asarray(b, np.int64) for b in bins]
    nosup = np.zeros(bins[0].shape, bool)
    pinf, ninf = nosup.copy(), nosup.copy()
    total = np.zeros(bins[0].shape, np.int64)
    for b in bins:
        nosup |= b == NOSUP
        pinf |= b == INF
        ninf |= b == -INF
        total += np.where(np.abs(b) >= INF, 0, b)
    return np.where(nosup | (pinf & ninf), NOSUP, np.where(pinf, INF, np.where(ninf, -INF, total)))


# --------------------------------------------------------------------------- the ceiling

def event_bound(count_a, count_b, n: int, alpha: float, delta: float = 0.0):
    """ln((cp_lower(count_a) - delta)/cp_upper(count_b)) among n samples a side, alpha/2 each: the bound
    one event gives (-inf where the lower end does not exceed delta)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.log(np.maximum(cp_lower(count_a, n, alpha / 2) - delta, 0.0))
                - np.log(cp_upper(count_b, n, alpha / 2)))


def _level_sets(law: Law):
    """Per direction, (direction, P_a, P_b, threshold) of every level set of L in order: {L >= t} for
    direction 0 (a = 0, b = 1), {L <= t} for direction 1, the atom {L = ±inf} alone first where it has mass."""
    nz = np.nonzero((law.w0 > 0) | (law.w1 > 0))[0]
    w0, w1, L = law.w0[nz], law.w1[nz], (law.k0 + nz) * law.h
    for direction in (0, 1):
        if direction == 0:
            pa, pb, thr, atom = law.inf0 + np.cumsum(w0[::-1]), np.cumsum(w1[::-1]), L[::-1], law.inf0
        else:
            pa, pb, thr, atom = law.inf1 + np.cumsum(w1), np.cumsum(w0), L, law.inf1
        if atom > 0:
            pa, pb = np.concatenate([[atom], pa]), np.concatenate([[0.0], pb])
            thr = np.concatenate([[math.inf if direction == 0 else -math.inf], thr])
        yield direction, np.minimum(pa, 1.0), np.minimum(pb, 1.0), thr


def ceiling(law: Law, n: int, alpha: float, delta: float = 0.0) -> dict:
    """max over thresholds and both directions of :func:`event_bound` at the expected counts n P_a, n P_b
    (DP-Sniper's claims have delta = 0; ``rare_leak.py`` passes its claim's)."""

    def bound(pa, pb):
        return event_bound(n * pa, n * pb, n, alpha, delta)

    best, randomised = {"value": -math.inf}, -math.inf
    for direction, pa, pb, thr in _level_sets(law):
        value = bound(pa, pb)
        i = int(np.argmax(value))
        for j in np.argsort(value)[-30:]:  # randomised events: part of the next bin (DP-Sniper's attacks randomise)
            for k in (j - 1, j):
                if 0 <= k < value.size - 1:
                    lam = np.linspace(0, 1, 101)
                    qa, qb = pa[k] + lam * (pa[k + 1] - pa[k]), pb[k] + lam * (pb[k + 1] - pb[k])
                    randomised = max(randomised, float(bound(qa, qb).max()))
        if value[i] > best["value"]:
            with np.errstate(divide="ignore"):
                ratio = float(np.log(pa[i]) - np.log(pb[i])) if pb[i] > 0 else math.inf
            best = {"value": float(value[i]), "event": f"L {'>=' if direction == 0 else '<='} {thr[i]:.6g}",
                    "direction": [direction, 1 - direction], "threshold": float(thr[i]),
                    "P_a": float(pa[i]), "P_b": float(pb[i]), "true_ratio": ratio,
                    # standard deviation of the bound realised from counts (delta method): how far a
                    # single run's value scatters around the ceiling
                    "sd_realised": math.sqrt((1 - pa[i]) / (n * pa[i])
                                             + ((1 - pb[i]) / (n * pb[i]) if pb[i] > 0 else 0.0))}
    best["randomised_value"] = max(randomised, best["value"])
    return best


def either_estimator_ceiling(law: Law, n: int, alpha: float, shortlist: int = 60) -> dict:
    """The ceiling when the tester handed the event may also bound it with the conditional ratio test the
    audit uses for claims with δ = 0 (``admmcheck.audit.statistics.estimators.ratio_epsilon_bound``, all of alpha on
    the one event), whichever of the two gives more at the expected counts (rounded to integers). The
    exact ratio bound costs a root search per event, so it is computed on a shortlist: the ``shortlist``
    best thresholds of each direction by :func:`event_bound` and as many by a normal approximation of
    the ratio bound, and their neighbours."""
    z = stats.norm.isf(alpha)
    best = {"value": -math.inf}
    for direction, pa, pb, thr in _level_sets(law):
        ca, cb = np.round(n * pa), np.round(n * pb)
        box = event_bound(ca, cb, n, alpha)
        with np.errstate(divide="ignore", invalid="ignore"):
            approx = (np.log((ca + 0.5) / (n - ca + 0.5)) - np.log((cb + 0.5) / (n - cb + 0.5))
                      - z * np.sqrt(1 / (ca + 0.5) + 1 / (n - ca + 0.5) + 1 / (cb + 0.5) + 1 / (n - cb + 0.5))
                      + np.log1p(-pa) - np.log1p(-pb))
        approx = np.where(np.isfinite(approx), approx, -np.inf)
        picks = set()
        for ranking in (box, approx):
            for j in np.argsort(-np.nan_to_num(ranking, nan=-np.inf))[:shortlist]:
                picks.update(k for k in (j - 1, j, j + 1) if 0 <= k < pa.size)
        for k in sorted(picks):
            if ca[k] >= n:
                continue
            estimator, value = better_estimator(int(ca[k]), n, int(cb[k]), n, alpha)
            if value > best["value"]:
                best = {"value": float(value), "estimator": estimator,
                        "event": f"L {'>=' if direction == 0 else '<='} {thr[k]:.6g}", "P_a": float(pa[k]),
                        "P_b": float(pb[k])}
    return best


# --------------------------------------------------------------------------- building blocks

@dataclass
class Built:
    law: Law
    lbin: Callable[[np.ndarray], np.ndarray]  # sampled outputs (N, ...) -> bin of L per sample
    method: str


def cells_1d(edges, p0, p1, h):
    """Law over the cells [edges[i], edges[i+1]) of a real output, and its per-sample lookup."""
    law, bins = law_from_cells(p0, p1, h)

    def lbin(y):
        idx = np.searchsorted(edges, np.asarray(y, float), side="right") - 1
        return bins[np.clip(idx, 0, bins.size - 1)]

    return law, lbin


def laplace_shift(m0, m1, s, h, cells=4000):
    """Y = m + Lap(s): L is constant outside [lo, hi] (one cell each side) and linear inside."""
    lo, hi = min(m0, m1), max(m0, m1)
    inner = lo + (hi - lo) * np.arange(cells + 1) / cells if hi > lo else np.array([lo])
    edges = np.concatenate([[-np.inf], inner, [np.inf]])
    return cells_1d(edges, lap_mass(edges[:-1] - m0, edges[1:] - m0, s),
                    lap_mass(edges[:-1] - m1, edges[1:] - m1, s), h)


def atoms(keys, p0, p1, h):
    """Law of a discrete output with outcome codes ``keys`` (integers) and its lookup."""
    law, bins = law_from_cells(p0, p1, h)
    keys = np.asarray(keys, np.int64)
    order = np.argsort(keys)

    def lookup(codes):
        codes = np.asarray(codes, np.int64)
        pos = np.clip(np.searchsorted(keys[order], codes), 0, keys.size - 1)
        found = keys[order][pos] == codes
        return np.where(found, bins[order][pos], NOSUP)

    return law, lookup


def patterns(n, c):
    """Answer patterns of a sparse-vector run: 0 below, 1 above, 2 aborted (after c positives)."""
    if c is None:
        return np.array(list(itertools.product((0, 1), repeat=n)), np.int64)
    out = []

    def rec(prefix, count):
        if count == c:
            out.append(prefix + [2] * (n - len(prefix)))
        elif len(prefix) == n:
            out.append(prefix)
        else:
            rec(prefix + [0], count)
            rec(prefix + [1], count + 1)

    rec([], 0)
    return np.array(out, np.int64)


def pattern_codes(codes):
    return np.asarray(codes, np.int64) @ (3 ** np.arange(np.shape(codes)[-1], dtype=np.int64))


def svt_pattern_probs(q0, q1, threshold, rho_scale, noise_scale, c):
    """P(pattern) under both inputs for `noisy = q + Lap(noise_scale) >= threshold + rho`, rho ~
    Lap(rho_scale) drawn once: integral over rho of prod(below) F * prod(above) (1 - F)."""
    pats = patterns(len(q0), c)
    kinks = np.concatenate([q0 - threshold, q1 - threshold])
    r, W = rho_rule(rho_scale, kinks, min(rho_scale, noise_scale) / 4, 10)
    below, above = (pats == 0).astype(float), (pats == 1).astype(float)
    probs = []
    for q in (q0, q1):
        z = threshold + r[None, :] - np.asarray(q, float)[:, None]
        probs.append(np.exp(below @ lap_logcdf(z, noise_scale) + above @ lap_logsf(z, noise_scale)) @ W)
    return pats, probs[0], probs[1]


def svt_outcome_codes(out, below, aborted):
    out = np.asarray(out, float)
    return np.where(out == below, 0, np.where(out == aborted, 2, 1))


def svt_patterns_built(d0, d1, threshold, rho_scale, noise_scale, c, h, below=0.0, aborted=-1.0):
    pats, p0, p1 = svt_pattern_probs(np.asarray(d0, float), np.asarray(d1, float), threshold, rho_scale,
                                     noise_scale, c)
    law, lookup = atoms(pattern_codes(pats), p0, p1, h)
    return Built(law, lambda out: lookup(pattern_codes(svt_outcome_codes(out, below, aborted))),
                 f"exact: {len(pats)} answer patterns, GL quadrature over rho")


def svt_numeric(d0, d1, threshold, rho_scale, s, c, h, dv, below, aborted, keep_bins, fine=0.02):
    """Sparse vector releasing the noisy answers themselves (Lyu et al.'s SVT3), c <= 2: the cell
    (pattern, v_1 in A_1, v_2 in A_2) has probability integral f_rho(r) prod_below F(T + r - q_j)
    prod_k P(q_k + N in A_k, >= T + r) dr, computed for every cell pair as U_1 diag(w g) U_2^T.
    Value cells are ``dv`` wide, and ``fine`` wide within 2 of the answers q (where the Laplace
    log-ratio of the value is linear with slope 2/s; elsewhere L varies on the scale s)."""
    q0, q1 = np.asarray(d0, float), np.asarray(d1, float)
    qs = np.concatenate([q0, q1])
    ext = 50 * rho_scale
    half = max(40 * s, ext + abs(threshold)) + np.abs(qs).max()
    lo_f, hi_f = qs.min() - 2, qs.max() + 2
    centre = lo_f + (hi_f - lo_f) * np.arange(round((hi_f - lo_f) / fine) + 1) / round((hi_f - lo_f) / fine)
    # cells dv wide within 2 s of 0, then 2 dv, 4 dv, 8 dv wide from 2 s, 5 s, 10 s (L flattens out there)
    coarse = [0.0]
    while coarse[-1] < half:
        x = coarse[-1]
        coarse.append(x + dv * (1 if x < 2 * s else 2 if x < 5 * s else 4 if x < 10 * s else 8))
    coarse = np.array(coarse)
    coarse = np.concatenate([-coarse[:0:-1], coarse])
    finite = np.unique(np.concatenate([coarse[(coarse < lo_f) | (coarse > hi_f)], centre]))
    K = finite.size - 1
    edges = np.concatenate([[-np.inf], finite, [np.inf]])
    lo, hi = edges[:-1], edges[1:]
    r, W = rho_rule(rho_scale, np.concatenate([q0 - threshold, q1 - threshold, edges[1:-1] - threshold]),
                    4 * dv, 4, extent=ext)
    U = {qv: lap_mass(np.maximum(lo[:, None], threshold + r[None, :]) - qv, hi[:, None] - qv, s)
         for qv in np.unique(np.concatenate([q0, q1]))}
    logF = [lap_logcdf(threshold + r[None, :] - q[:, None], s) for q in (q0, q1)]
    pats = patterns(len(q0), c)
    law, stored, total = None, {}, [0.0, 0.0]
    for pat in pats:
        pos, bel = np.nonzero(pat == 1)[0], np.nonzero(pat == 0)[0]
        masses = []
        for side, q in enumerate((q0, q1)):
            g = np.exp(logF[side][bel].sum(0)) * W
            if pos.size == 0:
                m = np.array([g.sum()])
            elif pos.size == 1:
                m = U[q[pos[0]]] @ g
            else:
                assert pos.size == 2
                m = (U[q[pos[0]]] * g) @ U[q[pos[1]]].T
            masses.append(m)
            total[side] += m.sum()
        sub, bins = law_from_cells(masses[0], masses[1], h)
        law = add(law, sub)
        if keep_bins:
            stored[int(pattern_codes(pat))] = bins.reshape(masses[0].shape).astype(np.int32)

    def lbin(out):
        out = np.asarray(out, float)
        codes = svt_outcome_codes(out, below, aborted)
        keys = pattern_codes(codes)
        res = np.full(len(out), NOSUP, np.int64)
        for key in np.unique(keys):
            rows = np.nonzero(keys == key)[0]
            table = stored.get(int(key))
            if table is None:
                continue
            cols = np.nonzero(codes[rows[0]] == 1)[0]
            cells = [np.searchsorted(edges, out[rows, j], side="right") - 1 for j in cols]
            res[rows] = table[tuple(cells)] if cells else table[0]
        return res

    return Built(law, lbin, f"exact: {len(pats)} patterns x {K + 2}^m value cells ({fine:g} wide near the "
                            f"answers, {dv:g} to {8 * dv:g} outside), GL quadrature over rho ({r.size} nodes)")


# --------------------------------------------------------------------------- the mechanisms

def b_laplace_mechanism(d0, d1):
    law, lbin = laplace_shift(d0, d1, 1 / EPS, 1e-5)
    return Built(law, lbin, "exact: Laplace CDF cells")


def b_noisy_hist(scale, h, cells):
    def build(d0, d1):
        diff = np.nonzero(np.asarray(d0) != np.asarray(d1))[0]
        assert diff.size == 1  # the other coordinates have the same law on both sides: L = 0 there
        j = int(diff[0])
        law, lbin = laplace_shift(float(d0[j]), float(d1[j]), scale, h, cells)
        return Built(law, lambda y: lbin(np.asarray(y)[:, j]), f"exact: Laplace CDF cells (coordinate {j})")
    return build


def b_truncated_geometric(c0, c1):
    def probs(c, n=5):  # the sampler's own CDF table, as exact fractions
        cdf, d = M.truncated_geometric_cdf(c, n)
        return [float(Fraction(cdf[z] - (cdf[z - 1] if z else 0), d)) for z in range(n + 1)]

    law, lookup = atoms(np.arange(6), probs(c0), probs(c1), 1e-5)
    return Built(law, lambda y: lookup(np.rint(np.asarray(y, float)).astype(np.int64)), "exact: fractions")


def b_argmax(kind):
    s = 2 / EPS

    def build(d0, d1):
        ps = []
        for x in (np.asarray(d0, float), np.asarray(d1, float)):
            lo = x.min() - 50 * s if kind == "laplace" else x.max()
            y, w = gl_rule(np.concatenate([lo + (x.max() + 50 * s - lo) * np.arange(801) / 800, x]), 10)
            z = y[None, :] - x[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                if kind == "laplace":
                    logF, f = lap_logcdf(z, s), lap_pdf(z, s)
                else:
                    logF = np.where(z > 0, np.log(-np.expm1(-np.maximum(z, 0) / s)), -np.inf)
                    f = np.where(z >= 0, np.exp(-np.maximum(z, 0) / s) / s, 0.0)
            ps.append(np.array([(w * f[i] * np.exp(np.delete(logF, i, 0).sum(0))).sum() for i in range(x.size)]))
        law, lookup = atoms(np.arange(len(d0)), ps[0], ps[1], 1e-5)
        return Built(law, lambda y: lookup(np.rint(np.asarray(y, float)).astype(np.int64)),
                     "exact: GL quadrature over the max")
    return build


def b_max_value(kind, h, per_unit=20):
    s = 2 / EPS

    def build(d0, d1):
        x0, x1 = np.asarray(d0, float), np.asarray(d1, float)
        lo = min(x0.min(), x1.min())
        if kind == "laplace":
            start = lo - 30 * s
        else:
            start = lo
        top = max(x0.max(), x1.max()) + 40 * s
        steps = round((top - start) * per_unit)
        edges = np.concatenate([[-np.inf], start + np.arange(steps + 1) / per_unit, [np.inf]])
        masses = []
        for x in (x0, x1):
            z = edges[None, :] - x[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                if kind == "laplace":
                    logC = lap_logcdf(z, s).sum(0)
                else:
                    logC = np.where(z > 0, np.log(-np.expm1(-np.maximum(z, 0) / s)), -np.inf).sum(0)
                C, S = np.exp(logC), -np.expm1(logC)
            masses.append(np.maximum(np.where(C[1:] <= 0.5, C[1:] - C[:-1], S[:-1] - S[1:]), 0.0))
        law, lbin = cells_1d(edges, masses[0], masses[1], h)
        return Built(law, lbin, f"exact: CDF of the max on cells of width {1 / per_unit:g}")
    return build


def b_svt5(d0, d1):
    threshold, s = 1.0, 1 / (EPS / 2)
    x0, x1 = np.asarray(d0, float), np.asarray(d1, float)
    cuts = np.unique(np.concatenate([x0 - threshold, x1 - threshold]))
    bounds = np.concatenate([[-np.inf], cuts, [np.inf]])
    table: dict[int, list[float]] = {}
    for lo, hi in itertools.pairwise(bounds):
        mass = float(lap_mass(lo, hi, s))
        rho = hi if math.isfinite(hi) else lo + 1  # a value of rho in (lo, hi]
        for side, x in enumerate((x0, x1)):
            key = int(pattern_codes((x >= threshold + rho).astype(np.int64)))
            table.setdefault(key, [0.0, 0.0])[side] += mass
    keys = np.array(list(table), np.int64)
    p = np.array(list(table.values()))
    law, lookup = atoms(keys, p[:, 0], p[:, 1], 1e-4)
    return Built(law, lambda out: lookup(pattern_codes(np.rint(np.asarray(out, float)).astype(np.int64))),
                 "exact: rho intervals")


def b_svt34_parallel(d0, d1, keep_bins):
    three = svt_numeric(d0, d1, 1.0, 1 / (EPS / 2), 2 / (EPS / 2), 2, 1e-4, 1.0, -1000.0, -2000.0, keep_bins, 0.05)
    four = svt_patterns_built(d0, d1, 1.0, 1 / (EPS / 4), 1 / (3 * EPS / 4), 2, 1e-4)
    n = len(d0)
    return Built(conv(three.law, four.law),
                 lambda out: combine(three.lbin(np.asarray(out)[:, :n]), four.lbin(np.asarray(out)[:, n:])),
                 f"exact: SVT3(c=2) [{three.method}] convolved with SVT4(c=2) [{four.method}]")


def b_numerical_svt(d0, d1):
    c, threshold, h = 2, 1.0, 1e-5
    x0, x1 = np.asarray(d0, float), np.asarray(d1, float)
    pats, p0, p1 = svt_pattern_probs(x0, x1, threshold, 3 / EPS, 6 * c / EPS, c)
    values = [laplace_shift(float(x0[i]), float(x1[i]), 3 * c / EPS, h) for i in range(len(x0))]
    law, pbins = None, {}
    for pat, a, b in zip(pats, p0, p1):
        part, bins = law_from_cells([a], [b], h)
        pbins[int(pattern_codes(pat))] = int(bins[0])
        for i in np.nonzero(pat == 1)[0]:
            part = conv(part, values[i][0])
        law = add(law, part)

    def lbin(out):
        out = np.asarray(out, float)
        codes = svt_outcome_codes(out, 0.0, -1000.0)
        keys = pattern_codes(codes)
        parts = [np.array([pbins.get(int(k), NOSUP) for k in keys], np.int64)]
        for i in range(out.shape[1]):
            parts.append(np.where(codes[:, i] == 1, values[i][1](out[:, i]), 0))
        return combine(*parts)

    return Built(law, lbin, f"exact: {len(pats)} patterns (GL over rho) convolved with the Laplace value terms")


def b_sum_of_laplace(scale, h, transform):
    def build(d0, d1):
        # LaplaceParallel adds a scalar input to 20 coordinates; PrefixSum's inputs are vectors
        x0 = np.broadcast_to(np.asarray(d0, float), (20,) if np.ndim(d0) == 0 else np.shape(d0))
        x1 = np.broadcast_to(np.asarray(d1, float), x0.shape)
        parts = [laplace_shift(float(a), float(b), scale, h) for a, b in zip(x0, x1)]
        law = parts[0][0]
        for part in parts[1:]:
            law = conv(law, part[0])

        def lbin(y):
            z = transform(np.asarray(y, float))
            return combine(*[parts[k][1](z[:, k]) for k in range(len(parts))])

        return Built(law, lbin, f"exact: convolution of {len(parts)} Laplace-CDF cell laws")
    return build


def b_rappor(kind):
    def build(v0, v1):
        def p_one(v):  # P(output bit = 1) per bit; the bits are independent given the input
            b = M._bloom(v)
            if kind == "rappor":  # permanent bit = 1 w.p. f/2 + (1 - f) b, f = 0.75; then 0.55 / 0.45
                return 0.45 + 0.1 * (0.75 / 2 + 0.25 * b)
            return 0.95 / 2 + 0.05 * b  # one-time RAPPOR: the permanent bits, f = 0.95
        a0, a1 = p_one(v0), p_one(v1)
        parts = [atoms([0, 1], [1 - a0[j], a0[j]], [1 - a1[j], a1[j]], 1e-4) for j in range(a0.size)]
        law = parts[0][0]
        for part in parts[1:]:
            law = conv(law, part[0])

        def lbin(out):
            out = np.rint(np.asarray(out, float)).astype(np.int64)
            return combine(*[parts[j][1](out[:, j]) for j in range(len(parts))])

        return Built(law, lbin, "exact: 20 independent Bernoulli bits, convolved")
    return build


def svt_pattern_settings() -> dict[str, tuple]:
    """(threshold, rho scale, noise scale, c) of the sparse-vector variants whose output is an answer pattern."""
    s1, s2, s4 = 1 / (EPS / 2), 2 / (EPS / 2), 1 / (3 * EPS / 4)
    return {"SVT1": (0.5, s1, s2, 1), "SVT2": (1.0, s1, s2, 1),  # SVT2's redraw is moot at c = 1
            "SVT4": (1.0, 1 / (EPS / 4), s4, 1), "SVT6": (1.0, s1, s1, None)}


def builders(keep_bins: bool) -> dict[str, Callable]:
    s1 = 1 / (EPS / 2)
    patterns = svt_pattern_settings()
    return {
        "LaplaceMechanism": b_laplace_mechanism,
        "TruncatedGeometric": lambda d0, d1: b_truncated_geometric(d0, d1),
        "NoisyHist1": b_noisy_hist(1 / EPS, 1e-5, 4000),
        "NoisyHist2": b_noisy_hist(EPS, 1e-4, 20000),
        "ReportNoisyMax1": b_argmax("laplace"),
        "ReportNoisyMax2": b_argmax("exponential"),
        "ReportNoisyMax3": b_max_value("laplace", 1e-5, 100),
        "ReportNoisyMax4": b_max_value("exponential", 1e-4, 500),  # L is steep just above y = 2
        "SVT1": lambda d0, d1: svt_patterns_built(d0, d1, *patterns["SVT1"], 1e-5),
        "SVT2": lambda d0, d1: svt_patterns_built(d0, d1, *patterns["SVT2"], 1e-5),
        "SVT3": lambda d0, d1: svt_numeric(d0, d1, 1.0, s1, 1 / (EPS / 2), 1, 1e-5, 1.0, -1000.0, -2000.0, keep_bins),
        "SVT4": lambda d0, d1: svt_patterns_built(d0, d1, *patterns["SVT4"], 1e-5),
        "SVT5": b_svt5,
        "SVT6": lambda d0, d1: svt_patterns_built(d0, d1, *patterns["SVT6"], 1e-5),
        "SVT34Parallel": lambda d0, d1: b_svt34_parallel(d0, d1, keep_bins),
        "NumericalSVT": b_numerical_svt,
        "PrefixSum": b_sum_of_laplace(1 / EPS, 1e-4, lambda y: np.diff(y, axis=1, prepend=0.0)),
        "RAPPOR": b_rappor("rappor"),
        "OneTimeRAPPOR": b_rappor("one_time"),
        "LaplaceParallel": b_sum_of_laplace(1 / 0.005, 1e-5, lambda y: y),
    }


# --------------------------------------------------------------------------- validation

def chi_square(law: Law, side: int, bins: np.ndarray, groups: int = 100) -> dict:
    """Chi-square of the sampled binned L against the law (groups of about equal expected mass)."""
    w, atom = (law.w0, law.inf0) if side == 0 else (law.w1, law.inf1)
    nz = np.nonzero(w > 0)[0]
    support, probs = law.k0 + nz, w[nz]
    if atom > 0:
        support = np.concatenate([[-INF], support]) if side == 1 else np.concatenate([support, [INF]])
        probs = np.concatenate([[atom], probs]) if side == 1 else np.concatenate([probs, [atom]])
    probs = probs / probs.sum()
    N = bins.size
    pos = np.clip(np.searchsorted(support, bins), 0, support.size - 1)
    impossible = int((support[pos] != bins).sum())
    start = np.cumsum(probs) - probs
    gid = np.minimum((start * groups).astype(int), groups - 1)
    exp = np.bincount(gid, probs, groups) * N
    obs = np.bincount(gid[pos[support[pos] == bins]], minlength=groups).astype(float)
    keep_e, keep_o = [], []
    for e, o in zip(exp, obs):  # merge groups with < 5 expected into the previous one
        if keep_e and (e < 5 or keep_e[-1] < 5):
            keep_e[-1] += e
            keep_o[-1] += o
        elif e > 0:
            keep_e.append(e)
            keep_o.append(o)
    if len(keep_e) > 1 and keep_e[-1] < 5:
        keep_e[-2] += keep_e.pop()
        keep_o[-2] += keep_o.pop()
    if impossible or len(keep_e) < 2:  # one group: L is a single atom on this side, nothing to test
        p = 0.0 if impossible else None
    else:
        p = float(stats.chisquare(keep_o, np.array(keep_e) * sum(keep_o) / sum(keep_e)).pvalue)
    return {"p_value": p, "groups": len(keep_e), "impossible_samples": impossible}


def event_check(best: dict, law: Law, bins: list[np.ndarray]) -> dict:
    """Sampled frequency of the maximising event under both inputs vs its exact probability."""
    t = best["threshold"]
    sides = best["direction"]
    out = {}
    for side in (0, 1):
        b = bins[side]
        L = np.where(b == INF, math.inf, np.where(b == -INF, -math.inf, b * law.h))
        hit = L >= t - law.h / 2 if sides[0] == 0 else L <= t + law.h / 2
        exact = best["P_a"] if side == sides[0] else best["P_b"]
        freq = float(hit.mean())
        sd = math.sqrt(max(exact * (1 - exact), 1e-300) / b.size)
        out[f"side{side}"] = {"frequency": freq, "exact": exact, "z": (freq - exact) / sd}
    return out


def sample(mechanism, d, rng, N):
    return np.array([mechanism(d, rng) for _ in range(N)])


# --------------------------------------------------------------------------- main

def fmt(x: float, digits: int = 4) -> str:
    return "inf" if x == math.inf else f"{x:.{digits}f}"


def pv(check: dict) -> str:
    if check["impossible_samples"]:
        return f"FAIL ({check['impossible_samples']} impossible samples)"
    return "n/a (one atom)" if check["p_value"] is None else f"{check['p_value']:.3f}"


def _either(setting: dict) -> str:
    either = setting.get("either_estimator")
    if either is None:
        return ""
    by = "ratio test" if either["estimator"] == RATIO_TEST else TWO_INTERVALS
    return f"{fmt(either['value'])}, {by}, {either['P_a']:.3g}"


def markdown(rows: list[dict], checked: bool) -> str:
    head = ("| mechanism | true eps of the pair | ceiling 1e6/side, 95 % | its event: P_a, true ln ratio | "
            "either estimator 1e6/side, 95 %: value, by, P_a | "
            "ceiling 2e8/side, 90 % | DP-Sniper published | published <= ceiling? (margin in sd of a run) | "
            "exact or MC |"
            + (" check p (d0 / d1) |" if checked else ""))
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        c1, c2 = r["ceilings"]["n=1000000,alpha=0.05"], r["ceilings"]["n=200000000,alpha=0.1"]
        line = (f"| {r['mechanism']} | {fmt(r['true_eps'])} | {fmt(c1['value'])} | {c1['P_a']:.3g}, "
                f"{fmt(c1['true_ratio'])} | {_either(c1)} | {fmt(c2['value'])} | {r['published']:.4f} | "
                f"{'yes' if r['published_within_ceiling'] else 'NO'} ({r['published_margin_sd']:+.1f}) | "
                f"{r['method'].split(':')[0]} |")
        if checked:
            ch = r.get("check", {})
            line += f" {pv(ch['side0'])} / {pv(ch['side1'])} |" if ch else " |"
        lines.append(line)
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", default=",".join(CASES))
    parser.add_argument("--check", action="store_true", help="validate each law against the sampled mechanism")
    parser.add_argument("--check-samples", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(HERE / "out"), help="folder for dpsniper_ceiling.json/.md")
    args = parser.parse_args()
    out = output_folder(args.out, "--out")
    table = builders(keep_bins=args.check)
    rows = []
    start_all = time.perf_counter()
    for name in args.names.split(","):
        mechanism, pair, published, private = CASES[name]
        d0, d1 = getattr(M, pair)()
        start = time.perf_counter()
        built = table[name](d0, d1)
        law = built.law
        t0, t1 = law.totals()
        ceilings = {f"n={n},alpha={alpha}": ceiling(law, n, alpha) for n, alpha in SETTINGS}
        ceilings["n=1000000,alpha=0.05"]["either_estimator"] = either_estimator_ceiling(law, 1_000_000, 0.05)
        row = {"mechanism": name, "pair": [np.asarray(d0).tolist(), np.asarray(d1).tolist()],
               "true_eps": law.eps, "ceilings": ceilings, "published": published, "truly_private": private,
               "published_within_ceiling": published <= ceilings["n=200000000,alpha=0.1"]["value"],
               # (ceiling - published) in standard deviations of a single run's realised bound
               "published_margin_sd": (ceilings["n=200000000,alpha=0.1"]["value"] - published)
               / ceilings["n=200000000,alpha=0.1"]["sd_realised"],
               "method": built.method, "bin_width": law.h, "mass_error": [abs(t0 - 1), abs(t1 - 1)],
               "seconds_law": time.perf_counter() - start}
        if args.check:
            cstart = time.perf_counter()
            rng = np.random.default_rng([args.seed, list(CASES).index(name)])
            mech = getattr(M, mechanism)
            bins = [built.lbin(sample(mech, d, rng, args.check_samples)) for d in (d0, d1)]
            row["check"] = {"samples_per_side": args.check_samples,
                            **{f"side{s}": chi_square(law, s, bins[s]) for s in (0, 1)},
                            "best_event_1e6": event_check(ceilings["n=1000000,alpha=0.05"], law, bins)}
            row["seconds_check"] = time.perf_counter() - cstart
        rows.append(row)
        c1, c2 = ceilings["n=1000000,alpha=0.05"], ceilings["n=200000000,alpha=0.1"]
        print(f"{name}: true eps {fmt(law.eps)}, ceiling 1e6/95% {fmt(c1['value'])} ({c1['event']}, P_a "
              f"{c1['P_a']:.3g}), 2e8/90% {fmt(c2['value'])}, published {published}, mass error "
              f"{max(row['mass_error']):.1e}" + (f", check p {pv(row['check']['side0'])} / {pv(row['check']['side1'])}"
                                                   if args.check else "")
              + f" [{time.perf_counter() - start:.1f} s]", flush=True)
        write_text_atomic(out / "dpsniper_ceiling.md", markdown(rows, args.check))
        write_text_atomic(out / "dpsniper_ceiling.json", to_json({
            "definition": "max over events E and directions of ln(cp_lower(n P_a(E), n, alpha/2) / "
                          "cp_upper(n P_b(E), n, alpha/2)), events = thresholds of the binned privacy loss",
            "settings": [{"samples_per_side": n, "alpha": a} for n, a in SETTINGS],
            "seconds": time.perf_counter() - start_all, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
