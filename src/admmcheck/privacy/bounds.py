"""The privacy-loss bounds the papers claim, with the preconditions they rest on.

* :func:`pp_bound` — Theorem 4.1 of the M-ADMM paper, eq. (26), for PP (and DVP, its
  eta = theta case): beta >= max_i sum_{t=1}^T C (1.4 c1 + alpha_i(t)) / (eta_i(t) V_i B_i).
* :func:`radmm_bound` — Theorem IV.1 of the recycled-admm paper, eq. (30), for private
  R-ADMM: beta >= max_i sum_{k=1}^K (2C/B_i) (1.4 c1 / (rho/N + 2 eta V_i) + alpha_i(k)).

Each returns a :class:`PrivacyBound`. Its ``per_node`` sums and ``curve`` P(t) are the
formula's values (what the papers plot); ``beta`` is set only when every precondition
holds, otherwise it is ``None`` and ``failed`` names what does not hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from admmcheck.claims.stated import TheoremClaim
from admmcheck.claims.values import PureDp
from admmcheck.foundations.errors import InvalidConfiguration, PreconditionError
from admmcheck.problems.networks import Network
from admmcheck.problems import LOGISTIC, NORM_SLACK, ConsensusProblem
from admmcheck.solving.schedules import ScheduleLike, schedule_table, step_schedule
from admmcheck.foundations.validation import positive_int, real

#: -ln(1 - x) < 1.4 x holds on [0, 1/2]; both proofs use it with x = c1 / ((B_i/C)(rho/N + 2 eta V_i)).
LOG_FACTOR = 1.4


@dataclass(frozen=True)
class BoundSetting:
    """What both bounds depend on: per-node sizes B_i, degrees V_i, C, rho, the data's norms.

    ``max_feature_norm`` is max_{i,n} ||x_i^n||_2 of the data the mechanism runs on;
    ``c1`` is the curvature constant used in the bound (Assumption 4: 0 < L'' <= c1) and
    ``loss_c1`` the loss's true sup L'' (1/4 for the logistic loss). Build it with
    :meth:`from_problem` or :meth:`from_data` (the latter accepts unnormalised data).
    """

    sizes: tuple[int, ...]
    degrees: tuple[int, ...]
    C: float
    rho: float
    max_feature_norm: float
    c1: float = LOGISTIC.c1
    loss_c1: float = LOGISTIC.c1

    def __post_init__(self) -> None:
        if len(self.sizes) != len(self.degrees) or not self.sizes:
            raise InvalidConfiguration(
                f"sizes has {len(self.sizes)} entries and degrees {len(self.degrees)}; "
                "pass one B_i and one V_i per node"
            )
        for name, values in (("sizes", self.sizes), ("degrees", self.degrees)):
            for value in values:
                positive_int(name, value)
        real("C", self.C)
        real("rho", self.rho)
        real("max_feature_norm", self.max_feature_norm, strict=False)
        real("c1", self.c1)
        real("loss_c1", self.loss_c1)

    @property
    def nodes(self) -> int:
        """Number of nodes N."""
        return len(self.sizes)

    @classmethod
    def from_problem(cls, problem: ConsensusProblem, network: Network, c1: float | None = None) -> "BoundSetting":
        """Setting of a validated problem on ``network`` (c1 defaults to the loss's own)."""
        norm = max(float(np.max(np.linalg.norm(x, axis=1))) for x in problem.features)
        return cls(
            sizes=problem.sizes, degrees=tuple(int(v) for v in network.degrees), C=problem.C,
            rho=problem.rho, max_feature_norm=norm, c1=problem.loss.c1 if c1 is None else c1,
            loss_c1=problem.loss.c1,
        )

    @classmethod
    def from_data(
        cls,
        features: Sequence[np.ndarray],
        network: Network,
        C: float,
        rho: float,
        c1: float = LOGISTIC.c1,
    ) -> "BoundSetting":
        """Setting of raw per-node feature matrices (no normalisation, no validation of ||x||)."""
        if len(features) != network.nodes:
            raise InvalidConfiguration(
                f"got features for {len(features)} nodes on a {network.nodes}-node network"
            )
        arrays = [np.asarray(x, dtype=np.float64) for x in features]
        norm = max(float(np.max(np.linalg.norm(x, axis=1))) for x in arrays)
        return cls(
            sizes=tuple(len(x) for x in arrays), degrees=tuple(int(v) for v in network.degrees),
            C=C, rho=rho, max_feature_norm=norm, c1=c1,
        )


@dataclass(frozen=True, eq=False)
class PrivacyBound(TheoremClaim):
    """A claimed total privacy-loss bound and whether it applies.

    ``per_node`` (N,) are the sums inside max_i of the bound, ``curve`` (T,) is P(t) for
    t = 1..T (§5.2 of the M-ADMM paper, §V of the R-ADMM paper); both are formula values.
    ``beta`` is the bound when every entry of ``preconditions`` is true, else ``None``.
    """

    theorem: str
    per_node: np.ndarray
    curve: np.ndarray
    preconditions: Mapping[str, bool]

    @property
    def holds(self) -> bool:
        """True when every precondition of the theorem holds."""
        return all(self.preconditions.values())

    @property
    def failed(self) -> tuple[str, ...]:
        """Names of the preconditions that do not hold."""
        return tuple(name for name, ok in self.preconditions.items() if not ok)

    @property
    def beta(self) -> float | None:
        """max_i of ``per_node`` when the theorem applies; None otherwise."""
        return float(np.max(self.per_node)) if self.holds else None

    def require(self) -> float:
        """Return ``beta`` or raise :class:`PreconditionError` naming the failed preconditions."""
        if not self.holds:
            raise PreconditionError(
                f"{self.theorem} does not apply: {', '.join(self.failed)} fail(s); "
                "the formula value is not a privacy guarantee here"
            )
        return float(np.max(self.per_node))

    def as_claim(self, source: str = "") -> PureDp:
        """The pure β-DP claim the theorem makes (:meth:`require`: refused where it does not apply)."""
        return PureDp(self.require(), source=source or self.theorem)

    def as_dict(self, iterations: int | None = None) -> dict[str, object]:
        """Dict of the theorem, beta, per-node sums, formula value and preconditions (at its own horizon: ``curve``
        holds every t; ``iterations`` is not read).

        Values are floats; an infinite one (alpha = inf, no noise) stays ``inf`` here and
        :func:`admmcheck.foundations.output.to_json` writes it as null listed under "non_finite".
        """
        return {
            "theorem": self.theorem,
            "beta": self.beta,
            "per_node": [float(v) for v in self.per_node],
            "formula_value": float(np.max(self.per_node)),
            "preconditions": dict(self.preconditions),
            "failed": list(self.failed),
        }


def _shared_preconditions(setting: BoundSetting) -> dict[str, bool]:
    return {
        "feature_norm_at_most_1": setting.max_feature_norm <= 1.0 + NORM_SLACK,
        "c1_bounds_loss_curvature": setting.c1 >= setting.loss_c1,
    }


def _curvature_condition(setting: BoundSetting, step: float) -> bool:
    """2 c1 < (B_i/C)(rho/N + 2 step V_i) for every node (Alg. 1 with theta, Alg. 2 with eta)."""
    sizes, degrees = np.asarray(setting.sizes, float), np.asarray(setting.degrees, float)
    margin = sizes / setting.C * (setting.rho / setting.nodes + 2.0 * step * degrees)
    return bool(np.all(2.0 * setting.c1 < margin))


def pp_bound(setting: BoundSetting, penalty: ScheduleLike, alpha: ScheduleLike, theta: float, iterations: int) -> PrivacyBound:
    """Theorem 4.1, eq. (26): the total privacy loss of PP over T = ``iterations``.

    Per iteration and node the loss is C (1.4 c1 + alpha_i(t)) / (eta_i(t) V_i B_i).
    Preconditions: ||x|| <= 1; c1 >= sup L''; Algorithm 1's 2 c1 < (B_i/C)(rho/N + 2 theta V_i);
    eta_i(t) >= theta (used for (64) in the proof); eta_i(t) non-decreasing (Thm 3.1).
    """
    theta = real("theta", theta)
    iterations = positive_int("iterations", iterations)
    eta = schedule_table("penalty", penalty, iterations, setting.nodes)
    alphas = schedule_table("alpha", alpha, iterations, setting.nodes, allow_infinite=True)
    sizes, degrees = np.asarray(setting.sizes, float), np.asarray(setting.degrees, float)
    per_iteration = setting.C * (LOG_FACTOR * setting.c1 + alphas) / (eta * degrees * sizes)  # (T, N)
    cumulative = np.cumsum(per_iteration, axis=0)
    preconditions = _shared_preconditions(setting)
    preconditions["theta_condition"] = _curvature_condition(setting, theta)
    preconditions["penalty_at_least_theta"] = bool(np.all(eta >= theta))
    preconditions["penalty_nondecreasing"] = bool(np.all(np.diff(eta, axis=0) >= 0))
    return PrivacyBound("M-ADMM Theorem 4.1 (26)", cumulative[-1], cumulative.max(axis=1), preconditions)


def radmm_bound(setting: BoundSetting, eta: ScheduleLike, alpha: ScheduleLike, iterations: int) -> PrivacyBound:
    """Theorem IV.1, eq. (30): the total privacy loss of private R-ADMM over T = ``iterations``.

    Only the K = ceil(T/2) odd iterations cost privacy (Lemma IV.1); odd iteration k costs
    (2C/B_i)(1.4 c1 / (rho/N + 2 eta V_i) + alpha_i(k)). ``alpha`` is given per odd
    iteration, a (K, N) table or anything :func:`schedule_table` accepts. The curve P(t)
    has one entry per t = 1..T and is flat across even t. ``eta`` is Algorithm 2's constant or a
    schedule over t = 1..T (:func:`~admmcheck.solving.schedules.step_schedule`, the
    growing step sizes of Fig. 3); odd iteration k then uses eta(2k-1) — the per-iteration
    bound of the proof with that iteration's eta (the paper states (30) for a constant eta).
    Preconditions: ||x|| <= 1; c1 >= sup L''; Algorithm 2's 2 c1 < min_i (B_i/C)(rho/N + 2 eta V_i),
    for the smallest eta used.
    """
    iterations = positive_int("iterations", iterations)
    etas = step_schedule("eta", eta, iterations)[0::2]  # eta(2k - 1), k = 1..K
    odd = (iterations + 1) // 2
    alphas = schedule_table("alpha", alpha, odd, setting.nodes, allow_infinite=True)
    sizes, degrees = np.asarray(setting.sizes, float), np.asarray(setting.degrees, float)
    curvature = setting.rho / setting.nodes + 2.0 * etas[:, None] * degrees  # (K, N)
    per_odd = 2.0 * setting.C / sizes * (LOG_FACTOR * setting.c1 / curvature + alphas)  # (K, N)
    cumulative = np.cumsum(per_odd, axis=0)
    steps = np.arange(iterations) // 2  # t = 1..T -> number of odd steps so far, minus 1
    preconditions = _shared_preconditions(setting)
    preconditions["eta_condition"] = _curvature_condition(setting, float(etas.min()))
    return PrivacyBound("R-ADMM Theorem IV.1 (30)", cumulative[-1], cumulative.max(axis=1)[steps], preconditions)


def pp_alpha_for_target(
    setting: BoundSetting,
    penalty: ScheduleLike,
    theta: float,
    target: float,
    iterations: int,
    growth: float = 1.0,
) -> float:
    """alpha(1) such that PP with alpha(t) = alpha(1) growth^(t-1) has P(T) = ``target``.

    Each node's sum in (26) is c_i + alpha(1) d_i (linear in alpha(1)), so the max over nodes
    reaches ``target`` first at alpha(1) = min_i (target - c_i) / d_i. Used to tune DVP (or a
    second PP schedule) to the same final privacy bound, as §5.2 compares them. Raises
    :class:`InvalidConfiguration` when even alpha -> 0 exceeds ``target``.
    """
    target = real("target", target)
    growth = real("growth", growth)
    iterations = positive_int("iterations", iterations)
    eta = schedule_table("penalty", penalty, iterations, setting.nodes)
    weight = setting.C / (eta * np.asarray(setting.degrees, float) * np.asarray(setting.sizes, float))  # (T, N)
    fixed = (LOG_FACTOR * setting.c1 * weight).sum(axis=0)
    slope = (growth ** np.arange(iterations)[:, None] * weight).sum(axis=0)
    alpha = float(np.min((target - fixed) / slope))
    if alpha <= 0:
        raise InvalidConfiguration(
            f"P(T) = {target:g} is below what PP costs with no noise at all ({fixed.max():g}); "
            "raise the target or the penalties"
        )
    return alpha


def radmm_alpha_for_target(setting: BoundSetting, eta: float, target: float, iterations: int) -> float:
    """Constant alpha such that private R-ADMM has P(T) = ``target`` (eq. (30) is linear in alpha)."""
    target = real("target", target)
    eta = real("eta", eta)
    odd = (positive_int("iterations", iterations) + 1) // 2
    sizes, degrees = np.asarray(setting.sizes, float), np.asarray(setting.degrees, float)
    fixed = odd * 2.0 * setting.C / sizes * LOG_FACTOR * setting.c1 / (setting.rho / setting.nodes + 2.0 * eta * degrees)
    slope = odd * 2.0 * setting.C / sizes
    alpha = float(np.min((target - fixed) / slope))
    if alpha <= 0:
        raise InvalidConfiguration(f"P(T) = {target:g} is below the noiseless cost {fixed.max():g} of private R-ADMM")
    return alpha
