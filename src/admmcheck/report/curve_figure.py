"""The (ε, δ) curve of black-box audits drawn against their claims, for the audit page
(:mod:`admmcheck.report.audit_page`) and the verification report (:mod:`admmcheck.report.render`).

Each series is one audit's ``privacy_curve`` (:meth:`admmcheck.audit.statistics.curve.PrivacyCurve.as_dict`):
the lower bound on δ(ε) (solid) and the largest δ(ε) its claim allows (dashed, the same colour);
where the lower bound lies above the claim's curve, the band between them is filled red: there
the audit refutes the claim. δ is drawn on a symmetric-log scale, linear below 10⁻⁶, so that both
δ near 1 and δ-type leaks of 10⁻⁵ show, and so does 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from admmcheck.foundations.figures import Figure

LINEAR_BELOW = 1e-6


@dataclass(frozen=True)
class PrivacyCurves(Figure):
    """The black-box (ε, δ) curves of several audits (``series``: label -> {"epsilon_grid", "delta_lower_bound",
    "claimed_delta"}) against their claims (:func:`curve_figure`)."""

    kind = "privacy-curves"
    series: dict[str, dict[str, list[float]]]
    algorithms: list[str] | None = None

    def figure(self) -> Any:
        return curve_figure(self.series, self.title)


def privacy_curve_figure(curves: dict[str, dict[str, object]]) -> PrivacyCurves:
    """The figure of the black-box (ε, δ) curves (each an audit's ``privacy_curve``, by algorithm) against
    their claims."""
    return PrivacyCurves(algorithms=list(curves),
                         title="black-box lower bound on delta(epsilon) against the theorem's claim (dashed)",
                         series={name: {key: curve[key] for key in ("epsilon_grid", "delta_lower_bound", "claimed_delta")}
                                 for name, curve in curves.items()})


def curve_figure(series: dict[str, dict[str, list[float]]], title: str):
    """A matplotlib figure of every ``series`` (label -> {"epsilon_grid", "delta_lower_bound", "claimed_delta"})."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(9, 3.8))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    marked = False
    for k, (label, curve) in enumerate(series.items()):
        colour = colours[k % len(colours)]
        epsilon = np.asarray(curve["epsilon_grid"], float)
        lower = np.asarray(curve["delta_lower_bound"], float)
        claimed = np.asarray(curve["claimed_delta"], float)
        axis.plot(epsilon, lower, color=colour, lw=2, label=f"{label}: lower bound on delta(epsilon)")
        axis.plot(epsilon, claimed, color=colour, lw=1.2, ls="--", label=f"{label}: most the claim allows")
        above = lower > claimed
        if above.any():
            axis.fill_between(epsilon, claimed, lower, where=above, color="#c44e52", alpha=0.35, interpolate=True,
                              label=None if marked else "lower bound above the claim (refuted)")
            marked = True
    axis.set_yscale("symlog", linthresh=LINEAR_BELOW)
    axis.set_ylim(0.0, 1.0)
    axis.set(xlabel="epsilon", ylabel="delta(epsilon)")
    axis.set_title(title)
    axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.tight_layout()
    return figure
