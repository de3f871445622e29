"""Convergence checks of the non-private reference algorithms (what ``admmcheck verify`` runs).

Each check runs an algorithm and compares a measured number with a threshold:

* ``converges``: the relative objective gap max_i (O_ERM(f_i(T)) - O*)/|O*| against the
  CVXPY optimum is at most ``1e-6`` (ADMM (8)-(9), M-ADMM (10)-(11), R-ADMM (10)-(13));
* ``matches``: two transcriptions that the papers prove identical give the same
  iterates — edge-based ADMM (4)-(7) vs the simplified form (8)-(9) (supplement App. A),
  and M-ADMM with eta_i(t) = theta vs conventional ADMM.

A check's verdict is PASS or FAIL only after it actually ran; errors propagate.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from admmcheck.algorithms import run_admm, run_admm_edge, run_madmm, run_radmm
from admmcheck.problems.datasets import breast_cancer, make_problem, synthetic
from admmcheck.problems.networks import Network, ring
from admmcheck.solving.oracle import Optimum, centralized_optimum
from admmcheck.problems import ConsensusProblem
from admmcheck.solving.runs import Run
from admmcheck.solving.schedules import GeometricSchedule

GAP_TOLERANCE = 1e-6
MATCH_TOLERANCE = 1e-9

# §5.1 of the M-ADMM paper: eta_i(1) and q_i of the five-node experiment.
PAPER_ETA1 = (0.55, 0.65, 0.6, 0.55, 0.6)
PAPER_GROWTH = (1.01, 1.03, 1.1, 1.2, 1.02)
# The same shape with each q_i - 1 divided by 100 (still q_i >= 1, eta non-decreasing).
SLOW_GROWTH = tuple(1.0 + (q - 1.0) / 100.0 for q in PAPER_GROWTH)


@dataclass(frozen=True)
class CheckResult:
    """One verified claim: ``measured`` compared with ``threshold`` (passed iff <=)."""

    problem: str
    check: str
    claim: str
    measured: float
    threshold: float
    iterations: int

    @property
    def passed(self) -> bool:
        """True iff the measured value is within the threshold."""
        return bool(self.measured <= self.threshold)

    @property
    def verdict(self) -> str:
        """PASS or FAIL."""
        return "PASS" if self.passed else "FAIL"

    def as_dict(self) -> dict[str, object]:
        """JSON-able form."""
        return {
            "problem": self.problem,
            "check": self.check,
            "claim": self.claim,
            "measured": self.measured,
            "threshold": self.threshold,
            "iterations": self.iterations,
            "verdict": self.verdict,
        }


@dataclass(frozen=True, eq=False)
class VerificationProblem:
    """A named problem with its network and CVXPY optimum."""

    name: str
    problem: ConsensusProblem
    network: Network
    optimum: Optimum


def default_problems() -> list[VerificationProblem]:
    """Synthetic (N=5, d=10, 250 rows) and breast-cancer (N=5) on a 5-ring, C = rho = 1."""
    cases = []
    for name, dataset in (("synthetic N=5 d=10", synthetic(250, 10, seed=0)), ("breast-cancer N=5", breast_cancer())):
        problem = make_problem(dataset, 5, C=1.0, rho=1.0, seed=0)
        cases.append(VerificationProblem(name, problem, ring(5), centralized_optimum(problem)))
    return cases


def _gap_check(case: VerificationProblem, check: str, claim: str, iterations: int, runner: Callable) -> CheckResult:
    run = runner(case.problem, case.network, iterations=iterations, seeds=0, reference=case.optimum)
    return CheckResult(case.name, check, claim, float(abs(run.objective_gap[0, -1])), GAP_TOLERANCE, iterations)


def _match_check(
    case: VerificationProblem, check: str, claim: str, iterations: int, first: Callable, second: Callable
) -> CheckResult:
    a = first(case.problem, case.network, iterations=iterations, seeds=0)
    b = second(case.problem, case.network, iterations=iterations, seeds=0)
    difference = max(np.max(np.abs(a.primal - b.primal)), np.max(np.abs(a.dual - b.dual)))
    return CheckResult(case.name, check, claim, float(difference), MATCH_TOLERANCE, iterations)


def verify_case(case: VerificationProblem, iterations: int = 200) -> list[CheckResult]:
    """Run every convergence and equivalence check on one problem."""
    madmm_schedule = GeometricSchedule(PAPER_ETA1[: case.problem.nodes], SLOW_GROWTH[: case.problem.nodes])
    return [
        _gap_check(
            case, "admm converges", "ADMM (8)-(9), eta=0.5: |gap| <= 1e-6", iterations,
            partial(run_admm, eta=0.5),
        ),
        _gap_check(
            case, "madmm converges",
            "M-ADMM (10)-(11), theta=0.5, eta_i(t)=eta_i(1) q_i^(t-1) (§5.1 eta_i(1), q_i=1+(q_i^paper-1)/100): |gap| <= 1e-6",
            iterations, partial(run_madmm, theta=0.5, penalty=madmm_schedule),
        ),
        _gap_check(
            case, "radmm converges", "R-ADMM (10)-(13), eta=0.5, gamma=0.5: |gap| <= 1e-6", iterations,
            partial(run_radmm, eta=0.5, gamma=0.5),
        ),
        _match_check(
            case, "edge = simplified", "edge ADMM (4)-(7) and simplified (8)-(9): max |iterate diff| <= 1e-9",
            50, partial(run_admm_edge, eta=0.5), partial(run_admm, eta=0.5),
        ),
        _match_check(
            case, "madmm(eta=theta) = admm", "M-ADMM with eta_i(t)=theta=0.5 vs ADMM eta=0.5: max |iterate diff| <= 1e-9",
            50, partial(run_madmm, theta=0.5, penalty=0.5), partial(run_admm, eta=0.5),
        ),
    ]


@dataclass(frozen=True)
class StallFinding:
    """Gap of M-ADMM with the paper's own §5.1 schedule at two horizons."""

    problem: str
    gap_short: float
    gap_long: float
    short: int
    long: int
    max_penalty_long: float

    @property
    def stalls(self) -> bool:
        """True when the gap is above 1e-6 at both horizons and barely moved between them."""
        return self.gap_long > GAP_TOLERANCE and abs(self.gap_long - self.gap_short) <= 1e-3 * self.gap_short


def paper_schedule_finding(case: VerificationProblem, short: int = 200, long: int = 1000) -> StallFinding:
    """Run M-ADMM with the exact §5.1 eta_i(1), q_i (q up to 1.2) for ``short`` and ``long`` steps.

    Theorem 3.1 asks only eta_i(t+1) >= eta_i(t) >= theta and eta_i(t) < inf; with
    geometric growth sum_t 1/eta_i(t) < inf and the iterates can freeze before consensus.
    """
    schedule = GeometricSchedule(PAPER_ETA1[: case.problem.nodes], PAPER_GROWTH[: case.problem.nodes])
    run = run_madmm(case.problem, case.network, theta=0.5, penalty=schedule, iterations=long, seeds=0, reference=case.optimum)
    gaps = run.objective_gap[0]
    max_penalty = float(np.max(schedule.table(long, case.problem.nodes)))
    return StallFinding(case.name, float(gaps[short]), float(gaps[long]), short, long, max_penalty)


def madmm_descent_terms(run: Run, network: Network, optimum: Optimum, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """The left side of M-ADMM Theorem 3.1's (19), ⟨Z(t+1) − Z*, J(t+1)(Z(t+1) − Z(t))⟩_F, for
    t = 0..T−1 of the first trial, and a scale ‖Z(t+1) − Z*‖_F ‖J(t+1)(Z(t+1) − Z(t))‖_F for each.

    Z = [Y; f̂] with 2Λ = √(D−A) Y, so Y(t) = θ√(D−A) Σ_{s≤t} f̂(s) by (16); Y* = −√(D−A)⁺ ∇Ô(f̂*)
    from (17) with f̂* = 1 f_c*ᵀ (CVXPY's optimum, polished by Newton steps on O_ERM so that the
    reference point is exact to rounding); J(t) = diag(I/θ, W(t)(D+A)), W(t) = diag(η_i(t)).
    """
    values, vectors = np.linalg.eigh(network.laplacian)
    root = (vectors * np.sqrt(np.clip(values, 0.0, None))) @ vectors.T  # the PSD square root of D − A
    f = run.primal[0]
    problem = run.problem
    f_c = np.array(optimum.solution, dtype=float)
    for _ in range(5):  # polish CVXPY's point by Newton on O_ERM (strongly convex): near-exact Z*
        stacked = np.broadcast_to(f_c, (problem.nodes, problem.dim))[None]
        hessian = problem.local_hessians(stacked)[0].sum(axis=0)
        f_c = f_c - np.linalg.solve(hessian, problem.gradient(f_c))
    f_star = np.broadcast_to(f_c, f.shape[1:])
    y_star = -np.linalg.pinv(root) @ problem.local_gradients(f_star[None])[0]
    y = np.concatenate([np.zeros_like(f[:1]), theta * np.cumsum(root @ f[1:], axis=0)])
    eta = np.asarray(run.parameters["penalty"], dtype=float)
    terms, scales = [], []
    for t in range(run.iterations):
        step_y = (y[t + 1] - y[t]) / theta
        step_f = (eta[t][:, None] * network.signless_laplacian) @ (f[t + 1] - f[t])
        terms.append(np.sum((y[t + 1] - y_star) * step_y) + np.sum((f[t + 1] - f_star) * step_f))
        distance = np.sqrt(np.sum((y[t + 1] - y_star) ** 2) + np.sum((f[t + 1] - f_star) ** 2))
        scales.append(distance * np.sqrt(np.sum(step_y**2) + np.sum(step_f**2)))
    return np.array(terms), np.array(scales)
