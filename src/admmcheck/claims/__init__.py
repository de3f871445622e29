"""Privacy claims as values (:mod:`admmcheck.claims.values`): pure ε, (ε, δ), ρ-zCDP, μ-GDP and (ε, δ(ε)) curves,
each with its privacy profile, its conversions and its source."""

from admmcheck.claims.values import (ApproxDp, Claim, DpCurve, GaussianDp, PureDp, ZeroConcentratedDp,
                                     from_event)

__all__ = ["ApproxDp", "Claim", "DpCurve", "GaussianDp", "PureDp", "ZeroConcentratedDp", "from_event"]
