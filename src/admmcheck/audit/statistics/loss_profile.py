"""The law of the privacy loss L(o), o ~ p(· | D), from sampled losses: its mean (the KL
divergence D(p_D ‖ p_D′)), quantiles, maximum and the privacy profile

    δ(ε) = E_{o∼D}[(1 − e^{ε − L(o)})₊],

the smallest δ for which the pair (D, D′) satisfies (ε, δ)-DP in the direction D → D′.

Intervals: quantiles get distribution-free order-statistic intervals (the binomial law of
the number of samples below a quantile); the mean and δ(ε) get Student-t intervals
(``scipy.stats``), i.e. asymptotic ones — δ(ε) averages a variable in [0, 1], whose mean the
t interval covers well at the sample sizes used here (≥ 10³).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from admmcheck.foundations.errors import InvalidConfiguration

QUANTILE_LEVELS = (0.5, 0.9, 0.99, 0.999)
HISTOGRAM_BINS = 40  # bins of the finite losses in ``as_dict()["histogram"]``


@dataclass(frozen=True)
class LossDistribution:
    """Summary of n sampled losses; every interval at ``confidence``."""

    samples: int
    confidence: float
    mean: float
    mean_interval: tuple[float, float]
    maximum: float
    argmax: int
    quantiles: dict[float, tuple[float, float, float]]  # level -> (estimate, low, high)
    epsilons: tuple[float, ...]
    delta: tuple[float, ...]
    delta_interval: tuple[tuple[float, float], ...]
    histogram_edges: tuple[float, ...] = ()
    histogram_counts: tuple[int, ...] = ()
    infinite: int = 0

    def as_dict(self) -> dict[str, object]:
        return {
            "samples": self.samples, "confidence": self.confidence,
            "mean_loss": self.mean, "mean_interval": list(self.mean_interval),
            "max_loss": self.maximum, "argmax_sample": self.argmax,
            "quantiles": {f"{level:g}": {"value": v, "interval": [lo, hi]}
                          for level, (v, lo, hi) in self.quantiles.items()},
            "privacy_profile": [{"epsilon": e, "delta": d, "interval": list(i)}
                                for e, d, i in zip(self.epsilons, self.delta, self.delta_interval)],
            "histogram": {"edges": list(self.histogram_edges), "counts": list(self.histogram_counts),
                          "infinite": self.infinite},
        }


def _mean_interval(values: np.ndarray, confidence: float) -> tuple[float, float, float]:
    mean = float(np.mean(values))
    if len(values) < 2 or not np.isfinite(mean):
        return mean, -np.inf if not np.isfinite(mean) else mean, mean
    spread = float(np.std(values, ddof=1)) / np.sqrt(len(values))
    if spread == 0.0:
        return mean, mean, mean
    from scipy import stats  # here: SciPy's statistics load in 0.4 s, and every command imports this module

    low, high = stats.t.interval(confidence, len(values) - 1, loc=mean, scale=spread)
    return mean, float(low), float(high)


def quantile_interval(sorted_values: np.ndarray, level: float, confidence: float) -> tuple[float, float, float]:
    """(estimate, low, high) of the ``level`` quantile: order statistics k_lo, k_hi with
    P(k_lo <= #{X_i < q} < k_hi) >= confidence under Binomial(n, level)."""
    from scipy import stats

    n = len(sorted_values)
    estimate = float(np.quantile(sorted_values, level))
    tail = (1 - confidence) / 2
    k_low = int(stats.binom.ppf(tail, n, level)) - 1
    k_high = int(stats.binom.ppf(1 - tail, n, level))
    low = float(sorted_values[k_low]) if k_low >= 0 else -np.inf
    high = float(sorted_values[k_high]) if k_high < n else np.inf
    return estimate, low, high


def _profile_terms(losses: np.ndarray, epsilons: np.ndarray) -> np.ndarray:
    """(1 − e^{ε − L})₊ for every ε (rows) and sample (columns); an infinite L gives 1."""
    with np.errstate(over="ignore"):
        return np.clip(1.0 - np.exp(np.asarray(epsilons, float)[:, None] - np.asarray(losses, float)[None, :]), 0.0, None)


def privacy_profile(losses: np.ndarray, epsilons: np.ndarray) -> np.ndarray:
    """δ(ε) = mean over samples of (1 − e^{ε − L})₊ for each ε."""
    return _profile_terms(losses, epsilons).mean(axis=1)


def loss_distribution(losses: np.ndarray, confidence: float = 0.95, epsilons=None) -> LossDistribution:
    """Summarise sampled losses (see the module docstring). ``epsilons`` defaults to 20 points
    from 0 to the largest finite loss."""
    losses = np.asarray(losses, dtype=float).ravel()
    if losses.size == 0 or np.isnan(losses).any():
        raise InvalidConfiguration("the losses are empty or contain NaN; sample at least one transcript")
    if not 0.5 <= confidence < 1:
        raise InvalidConfiguration(f"confidence {confidence!r} must lie in [0.5, 1)")
    if epsilons is None:
        finite = losses[np.isfinite(losses)]
        top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        epsilons = np.linspace(0.0, top, 20)
    epsilons = np.asarray(epsilons, dtype=float)
    ordered = np.sort(losses)
    mean, low, high = _mean_interval(losses, confidence)
    deltas, intervals = [], []
    for row in _profile_terms(losses, epsilons):
        value, lo, hi = _mean_interval(row, confidence)
        deltas.append(value)
        intervals.append((max(lo, 0.0), min(hi, 1.0)))
    finite = losses[np.isfinite(losses)]
    counts, edges = np.histogram(finite, bins=HISTOGRAM_BINS) if finite.size else (np.zeros(0, int), np.zeros(0))
    return LossDistribution(
        histogram_edges=tuple(float(e) for e in edges), histogram_counts=tuple(int(c) for c in counts),
        infinite=int(losses.size - finite.size),
        samples=int(losses.size), confidence=confidence, mean=mean, mean_interval=(low, high),
        maximum=float(ordered[-1]), argmax=int(np.argmax(losses)),
        quantiles={level: quantile_interval(ordered, level, confidence) for level in QUANTILE_LEVELS},
        epsilons=tuple(float(e) for e in epsilons), delta=tuple(deltas), delta_interval=tuple(intervals),
    )


def plot_loss_distribution(losses: np.ndarray, summary: LossDistribution, path: str | Path,
                           beta: float | None = None, title: str = "") -> Path:
    """Histogram of the losses and the privacy profile δ(ε) with its band; β marked if given."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from admmcheck.foundations.output import write_atomic

    finite = np.asarray(losses, float)[np.isfinite(losses)]
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    left.hist(finite, bins=80, density=True, color="#4c72b0")
    left.axvline(summary.mean, color="k", ls="--", label=f"mean (KL) {summary.mean:.3g}")
    left.axvline(summary.maximum, color="#c44e52", label=f"max {summary.maximum:.3g}")
    right_axis_beta = beta is not None and np.isfinite(beta)
    if right_axis_beta:
        left.axvline(beta, color="#55a868", ls=":", label=f"theorem's beta {beta:.3g}")
    left.set_xlabel("privacy loss L(o)")
    left.set_ylabel("density")
    left.legend(fontsize=8)
    eps = np.asarray(summary.epsilons)
    band = np.asarray(summary.delta_interval)
    right.plot(eps, summary.delta, color="#4c72b0", label="delta(epsilon)")
    right.fill_between(eps, band[:, 0], band[:, 1], alpha=0.3, color="#4c72b0",
                       label=f"{summary.confidence:.0%} interval")
    if right_axis_beta:
        right.axvline(beta, color="#55a868", ls=":", label="theorem's beta (delta = 0 claimed)")
    right.set_yscale("symlog", linthresh=1e-4)
    right.set_ylim(bottom=0.0)
    right.set_xlabel("epsilon")
    right.set_ylabel("delta")
    right.legend(fontsize=8)
    figure.suptitle(title or f"privacy loss of {summary.samples} transcripts")
    figure.tight_layout()
    target = write_atomic(path, lambda stream: figure.savefig(stream, format=Path(path).suffix[1:] or "png"))
    plt.close(figure)
    return target
