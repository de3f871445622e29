"""Assumption 1.2 and Lemma 4 of the ADMM-sharing paper, decided exactly for a given problem.

With R_m = ½‖·‖² and the logistic loss averaged over N samples (problems/sharing.py):

* γ_m(ρ) = ρ σ_min(D_mᵀD_m) + λ, the strong-convexity modulus of the x_m-subproblem (6);
* γ(ρ) = ρ, the modulus guaranteed for the z-subproblem (7) (l is convex, its curvature → 0);
* L = 1/(4N), the Lipschitz constant of ∇l (Assumption 1.1).

Assumption 1.2: (b) γ_m(ρ) ≥ 2σ_max(D_mᵀD_m) for every m; (c) ργ(ρ) > 2L² and ρ ≥ L. Lemma 4's
coefficients are γ_m(ρ)/2 − σ_max(D_mᵀD_m) (x-part) and γ(ρ)/2 − L²/ρ (z-part); sufficient
decrease needs them positive. Every quantity is rational except the eigenvalues of the exact
Gram matrices D_mᵀD_m (the float data read as exact dyadic rationals), which are enclosed in
certified intervals (conditions/intervals.py); a verdict is True/False when the interval
decides it and None when it is too close to call at the width asked.

The smallest ρ satisfying (b) and (c) is max(max_m (2σ_max − λ)/σ_min, L, √2·L) (strictly
above √2·L); it is reported as an interval [lo, hi]: every ρ ≥ hi is certified, every
ρ < lo certified to fail.

Lemma 3, which the proof of Lemma 4 uses for the parallel (Jacobi) x-updates, is false for
M ≥ 3: with Δ_m = v for every m its left side is M(M−1)‖v‖² against the right side M‖v‖². The
check reports it with that exact counterexample, and the coefficient the corrected inequality
(left side ≤ (M−1) Σ‖Δ_m‖², with the ρ/2 the proof drops) gives: γ_m(ρ)/2 − ρ(M−1)σ_max/2.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from admmcheck.conditions.certificates import to_fraction
from admmcheck.conditions.constants import exact_weighted_gram
from admmcheck.conditions.intervals import DEFAULT_WIDTH, Interval, largest_eigenvalue, smallest_eigenvalue
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.problems.sharing import SharingProblem

SQRT2 = Interval(Fraction(14142135623730950, 10**16), Fraction(14142135623730951, 10**16))


def _sign(interval: Interval, strict: bool) -> bool | None:
    """True when every point of the interval is > 0 (>= 0 if not strict), False when none is."""
    if interval.lo > 0 or (not strict and interval.lo >= 0):
        return True
    if interval.hi < 0 or (strict and interval.hi <= 0):
        return False
    return None


@dataclass(frozen=True)
class SharingConditions:
    """The decided conditions (name -> {holds, statement, value interval}) and the minimal ρ."""

    rho: Fraction
    checks: dict[str, dict[str, object]]
    minimal_rho: Interval
    eigenvalues: list[dict[str, object]]

    @property
    def holds(self) -> bool | None:
        verdicts = [c["holds"] for name, c in self.checks.items() if c.get("part_of_assumption")]
        return False if False in verdicts else None if None in verdicts else True

    def as_dict(self) -> dict[str, object]:
        return {"rho": str(self.rho), "rho_float": float(self.rho), "holds": self.holds, "checks": self.checks,
                "minimal_rho": self.minimal_rho.as_dict(), "gram_eigenvalues": self.eigenvalues}


def _entry(statement: str, value: Interval, strict: bool, assumption: bool) -> dict[str, object]:
    return {"statement": statement, "holds": _sign(value, strict), "value": value.as_dict(),
            "part_of_assumption": assumption}


def sharing_conditions(problem: SharingProblem, rho: object, width: Fraction = DEFAULT_WIDTH) -> SharingConditions:
    """Decide Assumption 1.2 (b), (c) and Lemma 4's coefficients at ``rho`` (see the module docstring)."""
    rho = to_fraction(rho)
    if rho <= 0:
        raise InvalidConfiguration(f"rho must be positive; got {rho}")
    lam = to_fraction(problem.lam)
    big_l = Fraction(1, 4 * problem.samples)
    M = problem.parties
    checks: dict[str, dict[str, object]] = {}
    eigen, thresholds = [], []
    for m, block in enumerate(problem.parts):
        gram = exact_weighted_gram(np.asarray(block), np.ones(block.shape[0]))
        low, high = smallest_eigenvalue(gram, width), largest_eigenvalue(gram, width)
        eigen.append({"party": m, "sigma_min": low.as_dict(), "sigma_max": high.as_dict()})
        if low.lo <= 0:
            raise InvalidConfiguration(f"party {m}: sigma_min(D_mᵀD_m) is not certified positive (Assumption 1.1)")
        gamma_m = Interval(rho * low.lo + lam, rho * low.hi + lam)
        checks[f"1.2b_party_{m}"] = _entry(f"gamma_{m}(rho) = rho sigma_min + lambda >= 2 sigma_max(D_{m}ᵀD_{m})",
                                           Interval(gamma_m.lo - 2 * high.hi, gamma_m.hi - 2 * high.lo), False, True)
        checks[f"lemma4_x_coefficient_{m}"] = _entry(
            f"gamma_{m}(rho)/2 - sigma_max(D_{m}ᵀD_{m}) > 0 (Lemma 4, x-part)",
            Interval(gamma_m.lo / 2 - high.hi, gamma_m.hi / 2 - high.lo), True, False)
        checks[f"corrected_x_coefficient_{m}"] = _entry(
            f"gamma_{m}(rho)/2 - rho (M-1) sigma_max/2 > 0 (Lemma 4 with the corrected Lemma 3)",
            Interval(gamma_m.lo / 2 - rho * (M - 1) * high.hi / 2, gamma_m.hi / 2 - rho * (M - 1) * high.lo / 2),
            True, False)
        thresholds.append(Interval((2 * high.lo - lam) / low.hi, (2 * high.hi - lam) / low.lo))
    z_coefficient = rho / 2 - big_l * big_l / rho
    checks["1.2c_rho_gamma"] = _entry("rho gamma(rho) = rho^2 > 2 L^2, L = 1/(4N)",
                                      Interval(rho * rho - 2 * big_l**2, rho * rho - 2 * big_l**2), True, True)
    checks["1.2c_rho_at_least_L"] = _entry("rho >= L", Interval(rho - big_l, rho - big_l), False, True)
    checks["lemma4_z_coefficient"] = _entry("gamma(rho)/2 - L^2/rho > 0 (Lemma 4, z-part)",
                                            Interval(z_coefficient, z_coefficient), True, False)
    lhs, rhs = Fraction(M * M - M), Fraction(M)  # Δ_m = v = (1,) for every m
    checks["lemma3"] = {"statement": "Lemma 3: ||sum Δ||² - sum ||Δ_m||² <= sum ||Δ_m||² for any Δ_1..Δ_M",
                        "holds": M <= 2, "counterexample": None if M <= 2 else
                        {"Delta_m": "v = (1) for every m", "left": str(lhs), "right": str(rhs)},
                        "part_of_assumption": False}
    rho_low = max([t.lo for t in thresholds] + [big_l, SQRT2.lo * big_l])
    rho_high = max([t.hi for t in thresholds] + [big_l, SQRT2.hi * big_l])
    return SharingConditions(rho, checks, Interval(rho_low, rho_high), eigen)
