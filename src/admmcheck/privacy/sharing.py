"""The privacy claims of DP ADMM sharing (ADMM-sharing paper §4), and a maintained accountant.

* Lemma 1: the l2 sensitivity of D_m x_m^{t+1} is at most 𝐂_m = 3/(d_m ρ) [λ c1 + (1 + Mρ) b1]
  (c1 bounds |R_m''|, b1 the norms of x, y, z — Assumption 2.1-2.2).
* Theorem 1: with σ_m = √(2 ln(1.25/δ)) 𝐂_m / ε, each iteration is (ε, δ)-DP for ε ∈ (0, 1].
* Corollary 1, eq. (11): over T iterations, for any δ′ > 0,
  (ε′, Tδ + δ′) with ε′ = √(2T ln(1/δ′)) ε + Tε(e^ε − 1) (advanced composition).

These are the paper's claims, computed exactly as stated. Beside them, the same T-fold
composition of the Gaussian mechanism with noise multiplier σ_m / 𝐂_m is computed by
Google's ``dp-accounting`` (privacy-loss-distribution and Rényi accountants) at the same total
δ — a maintained implementation, not ours — and basic composition (Tε, Tδ). Whether the
mechanism is the Gaussian mechanism at all (the noise lives in col(D_m), which a neighbour
changes) is a question for the audit, not for this arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from admmcheck.claims.stated import TheoremClaim
from admmcheck.claims.values import ApproxDp
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.validation import positive_int, real


@dataclass(frozen=True)
class SharingPrivacy(TheoremClaim):
    """Lemma 1, Theorem 1 and Corollary 1 for one setting, with the accountants' values; ``theorem`` names what the
    figures come from (a sharing variant's own claim takes this type with its own words)."""

    widths: tuple[int, ...]
    sensitivity: tuple[float, ...]
    sigma: tuple[float, ...]
    epsilon: float
    delta: float
    iterations: int
    delta_prime: float
    epsilon_total: float
    delta_total: float
    basic: tuple[float, float]
    accountant_pld: float
    accountant_rdp: float
    preconditions: dict[str, bool]
    theorem: str = "ADMM-sharing Lemma 1, Theorem 1, Corollary 1 (11)"

    capabilities = frozenset({"sigma"})  # sigma_m per party, which DP sharing's run takes (9)

    @property
    def holds(self) -> bool:
        return all(self.preconditions.values())

    def as_claim(self, source: str = "") -> ApproxDp:
        """The (ε, δ) claim of the T iterations audited: the smaller of the total and basic composition. Audited
        whether or not its preconditions hold (the report lists them): the paper states it at settings where they
        fail."""
        return ApproxDp(min(self.epsilon_total, self.basic[0]), min(self.delta_total, self.basic[1]),
                        source=source or f"the smaller of the total of {self.theorem} and basic composition")

    def as_dict(self, iterations: int | None = None) -> dict[str, object]:
        """Every figure, at its own ``iterations`` (the argument is not read)."""
        return {
            "theorem": self.theorem,
            "features": list(self.widths), "sensitivity": list(self.sensitivity), "sigma": list(self.sigma),
            "epsilon": self.epsilon, "delta": self.delta, "iterations": self.iterations,
            "delta_prime": self.delta_prime, "epsilon_total": self.epsilon_total, "delta_total": self.delta_total,
            "basic_composition": {"epsilon": self.basic[0], "delta": self.basic[1]},
            "accountant": {"library": "dp-accounting", "delta": self.delta_total,
                           "epsilon_pld": self.accountant_pld, "epsilon_rdp": self.accountant_rdp},
            "preconditions": self.preconditions, "failed": [k for k, ok in self.preconditions.items() if not ok],
        }


def lemma1_sensitivity(width: int, parties: int, rho: float, lam: float, c1: float, b1: float) -> float:
    """𝐂 = 3/(d_m ρ) [λ c1 + (1 + Mρ) b1] of Lemma 1."""
    return 3.0 / (width * rho) * (lam * c1 + (1.0 + parties * rho) * b1)


def theorem1_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """σ = √(2 ln(1.25/δ)) 𝐂 / ε of Theorem 1."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon


def corollary1_total(epsilon: float, delta: float, iterations: int, delta_prime: float) -> tuple[float, float]:
    """(ε′, Tδ + δ′) of Corollary 1, eq. (11)."""
    total = math.sqrt(2.0 * iterations * math.log(1.0 / delta_prime)) * epsilon + iterations * epsilon * math.expm1(epsilon)
    return total, iterations * delta + delta_prime


def gaussian_composition(noise_multiplier: float, iterations: int, delta: float) -> tuple[float, float]:
    """ε at ``delta`` of ``iterations`` Gaussian mechanisms with σ/Δ = ``noise_multiplier``, from
    dp-accounting's PLD and RDP accountants."""
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.rdp import rdp_privacy_accountant

    event = dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(noise_multiplier), iterations)
    pld = pld_privacy_accountant.PLDAccountant()
    pld.compose(event)
    rdp = rdp_privacy_accountant.RdpAccountant()
    rdp.compose(event)
    return float(pld.get_epsilon(delta)), float(rdp.get_epsilon(delta))


def theorem1_noise(widths: tuple[int, ...], *, rho: float, lam: float, c1: float, b1: float, epsilon: float,
                   delta: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(𝐂_m, σ_m) for each party of ``widths``: Lemma 1's sensitivity and Theorem 1's noise, without the
    accountants that :func:`sharing_bound` adds (seconds each)."""
    widths = tuple(positive_int("widths", w) for w in widths)
    if not widths:
        raise InvalidConfiguration("widths needs one width d_m per party, e.g. (66, 57)", parameter="widths")
    rho, lam, c1, b1 = real("rho", rho), real("lam", lam), real("c1", c1), real("b1", b1)
    epsilon = real("epsilon", epsilon)
    _probability("delta", delta)
    sensitivity = tuple(lemma1_sensitivity(w, len(widths), rho, lam, c1, b1) for w in widths)
    return sensitivity, tuple(theorem1_sigma(c, epsilon, delta) for c in sensitivity)


def _probability(name: str, value: float) -> None:
    if not 0 < value < 1:
        raise InvalidConfiguration(f"{name}={value!r} must lie in (0, 1)", parameter=name)


def sharing_bound(widths: tuple[int, ...], *, rho: float, lam: float, c1: float, b1: float, epsilon: float,
                  delta: float, iterations: int, delta_prime: float) -> SharingPrivacy:
    """Every figure of the paper's privacy claim for parties of ``widths`` = (d_1, …, d_M)."""
    sensitivity, sigma = theorem1_noise(widths, rho=rho, lam=lam, c1=c1, b1=b1, epsilon=epsilon, delta=delta)
    widths, epsilon = tuple(int(w) for w in widths), float(epsilon)  # validated by theorem1_noise
    iterations = positive_int("iterations", iterations)
    _probability("delta_prime", delta_prime)
    total, delta_total = corollary1_total(epsilon, delta, iterations, delta_prime)
    pld, rdp = gaussian_composition(sigma[0] / sensitivity[0], iterations, delta_total)  # σ_m/𝐂_m is the same for all m
    preconditions = {"epsilon_at_most_1": epsilon <= 1.0, "delta_total_below_1": delta_total < 1.0}
    return SharingPrivacy(widths, sensitivity, sigma, epsilon, delta, iterations, delta_prime, total, delta_total,
                          (iterations * epsilon, iterations * delta), pld, rdp, preconditions)
