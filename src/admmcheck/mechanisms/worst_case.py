"""The largest privacy loss of a reference mechanism: a search over transcripts and neighbours.

For PP, DVP and private R-ADMM the loss of a transcript is a sum over noisy steps of

    g_t(f) = α_t (‖ε(D′)‖ − ‖ε(D)‖) + ln det(∇²O(f; D_i) + κ_t I) − ln det(∇²O(f; D′_i) + κ_t I),

with ε(D′) = ε(D) − δ_t(f), δ_t(f) = s_t (∇O(f; D′_i) − ∇O(f; D_i)) (PP: s_t = 1/(2η_t V_i),
κ_t = 2η_t V_i, M-ADMM supplement (58); R-ADMM (28): s_t = 1, κ = 2ηV_i). The noise has full
support, so every transcript is possible: the released f and the recovered ε(D) of a step can
be any pair (the neighbours' earlier broadcasts are free to make them so), and the steps do
not constrain each other. Hence

    sup_o L(o) = Σ_t sup_f [α_t ‖δ_t(f)‖ + ln det(…D…) − ln det(…D′…)],

the first term reached with ε(D) = 0 (the transcript whose noise at node i is zero). Each
supremum is found numerically (L-BFGS-B from seeded random starts, f in a box), for every
candidate neighbour pair: each node, each of its first ``records`` records, changed by a
label flip, by moving x to −x, or to the point x′ of the unit ball (and label y′) that the
optimiser finds worst. PVP's loss at a step is α(‖f~ − m(D′)‖ − ‖f~ − m(D)‖), whose
supremum is α‖m(D) − m(D′)‖ over the minimiser's inputs, searched the same way.
:func:`worst_transcript` builds the one-step transcript that attains a step's value, so
that :func:`~admmcheck.mechanisms.privacy_loss.privacy_loss` can confirm it independently.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.mechanisms.consensus import ReferenceMechanism, replace_record
from admmcheck.mechanisms.privacy_loss import released_by
from admmcheck.solving.local_solver import solve_local
from admmcheck.problems import ConsensusProblem

F_BOX = 50.0  # |f_k| <= F_BOX: the search box (the logistic loss saturates long before)


@dataclass(frozen=True)
class Change:
    """Record ``index`` of node ``node`` replaced by (x, y): how D′ differs from D."""

    node: int
    index: int
    kind: str
    x: np.ndarray
    y: float

    def apply(self, problem: ConsensusProblem) -> ConsensusProblem:
        """D′: ``problem`` with this record replaced."""
        return replace_record(problem, self.node, self.index, self.x, self.y)

    def describe(self) -> str:
        return f"node {self.node}, record {self.index}: {self.kind} (x' = {np.round(self.x, 4).tolist()}, y' = {self.y:+g})"


@dataclass(frozen=True)
class WorstCase:
    """The largest loss found: ``value`` = Σ_t of the per-step suprema for ``change``."""

    value: float
    change: Change
    per_step: np.ndarray  # (T,) the supremum of each step (0 at R-ADMM's even steps)
    argmax_f: np.ndarray  # (T, d) the released f_i(t) attaining each step's value
    candidates: int

    def as_dict(self) -> dict[str, object]:
        return {"value": self.value, "where": self.change.describe(), "node": self.change.node,
                "record": self.change.index, "change": self.change.kind,
                "x_prime": self.change.x.tolist(), "y_prime": self.change.y,
                "per_step": self.per_step.tolist(), "candidates_searched": self.candidates}


class ChangedNode:
    """Gradient and Hessian of O(f; D_i) and of O(f; D′_i) for one record replaced."""

    def __init__(self, problem: ConsensusProblem, node: int, index: int):
        self.part = problem.local_part([node])
        self.loss = problem.loss
        self.weight = problem.C / problem.sizes[node]
        self.index = index
        self.x, self.y = problem.features[node][index], float(problem.labels[node][index])

    def terms(self, f: np.ndarray, x_new: np.ndarray, y_new: float, curvature: float):
        """(∇O′ − ∇O, ln det(∇²O + κI) − ln det(∇²O′ + κI)) at one f."""
        g = f[None, None, :]
        hessian = self.part.local_hessians(g)[0, 0] + curvature * np.eye(len(f))
        z, z_new = self.y * self.x @ f, y_new * x_new @ f
        difference = self.weight * (self.loss.derivative(z_new) * y_new * x_new - self.loss.derivative(z) * self.y * self.x)
        changed = hessian + self.weight * (self.loss.second_derivative(z_new) * np.outer(x_new, x_new)
                                           - self.loss.second_derivative(z) * np.outer(self.x, self.x))
        return difference, np.linalg.slogdet(hessian)[1] - np.linalg.slogdet(changed)[1]


def _ball(u: np.ndarray) -> np.ndarray:
    """A smooth map of R^d onto the open unit ball."""
    norm = np.linalg.norm(u)
    return u if norm == 0 else u * np.tanh(norm) / norm


def objective_step_value(node: ChangedNode, f: np.ndarray, x_new: np.ndarray, y_new: float, alpha: float, s: float,
                         curvature: float) -> float:
    """g_t(f) of the module docstring: noise in the primal step's objective (PP, DVP, private R-ADMM)."""
    difference, log_det = node.terms(f, x_new, y_new, curvature)
    noise = alpha * s * np.linalg.norm(difference) if np.isfinite(alpha) else (np.inf if np.any(difference) else 0.0)
    return float(noise + log_det)


def minimiser_step_value(node: ChangedNode, f: np.ndarray, x_new: np.ndarray, y_new: float, alpha: float,
                         curvature: float) -> float:
    """α‖m(D) − m(D′)‖ at f = m(D): noise added to the primal step's minimiser (PVP)."""
    # m(D') solves ∇O'(g) + κ g = ∇O(f) + κ f (the same linear term b)
    linear = -(node.part.local_gradients(f[None, None, :])[0, 0] + curvature * f)
    other = _changed_minimiser(node, x_new, y_new, linear, curvature, f)
    return float(alpha * np.linalg.norm(f - other))


def _changed_minimiser(node: ChangedNode, x_new, y_new, linear, curvature, start) -> np.ndarray:
    changed = replace_record(node.part, 0, node.index, x_new, y_new)
    return solve_local(changed, linear[None, None, :], np.array([curvature]), start[None, None, :]).f[0, 0]


def _maximise(objective, dim: int, rng: np.random.Generator, starts: int, extra: int = 0) -> tuple[float, np.ndarray]:
    """max of objective(v) over v in R^(dim+extra) with |f| <= F_BOX, from seeded random starts."""
    from scipy import optimize  # here, not at the top: an audit worker imports this module and never searches

    bounds = [(-F_BOX, F_BOX)] * dim + [(None, None)] * extra
    best = (-np.inf, np.zeros(dim + extra))
    for k in range(starts):
        v0 = rng.normal(scale=[0.5, 3.0, 10.0][k % 3], size=dim + extra)
        result = optimize.minimize(lambda v: -objective(v), v0, method="L-BFGS-B", bounds=bounds)
        value = -float(result.fun)
        if value > best[0]:
            best = (value, result.x)
    return best


def worst_case(mechanism: ReferenceMechanism, problem: ConsensusProblem, *, records: int = 2,
               free_point: bool = True, starts: int = 4, seed: int = 0) -> WorstCase:
    """Search every node, its first ``records`` records and the changes described in the
    module docstring for the largest total loss; ``starts`` random starts per maximisation."""
    if problem.nodes != mechanism.network.nodes:
        raise InvalidConfiguration(f"the problem has {problem.nodes} nodes; the mechanism runs on "
                                   f"{mechanism.network.nodes}")
    release = released_by(mechanism)
    rng = np.random.default_rng(seed)
    d, best, count = problem.dim, None, 0
    for i in range(problem.nodes):
        steps = release.steps(mechanism, i)
        for n in range(min(records, problem.sizes[i])):
            node = ChangedNode(problem, i, n)
            changes = [("label-flip", node.x, -node.y), ("feature-move", -node.x, node.y)]
            if free_point:
                changes += [("free point, label kept", None, node.y), ("free point, label flipped", None, -node.y)]
            for kind, x_new, y_new in changes:
                count += 1
                total, per_step, argmax = 0.0, np.zeros(mechanism.iterations), np.zeros((mechanism.iterations, d))
                point = x_new
                if x_new is None:  # optimise x' jointly with f, at the first noisy step's constants
                    _, v = _maximise(lambda v: release.step_value(node, v[:d], _ball(v[d:]), y_new, steps[0]),
                                     d, rng, starts, extra=d)
                    point = _ball(v[d:])
                cache: dict[tuple[float, float, float], tuple[float, np.ndarray]] = {}
                for step in steps:
                    key = (step.alpha, step.s, step.curvature)
                    if key not in cache:
                        cache[key] = _maximise(lambda f: release.step_value(node, f, point, y_new, step), d, rng,
                                               starts)
                    per_step[step.t], argmax[step.t] = cache[key]
                    total += cache[key][0]
                if best is None or total > best.value:
                    best = WorstCase(total, Change(i, n, kind, np.asarray(point, float), float(y_new)), per_step,
                                     argmax, 0)
    return WorstCase(best.value, best.change, best.per_step, best.argmax_f, count)


def worst_transcript(mechanism: ReferenceMechanism, problem: ConsensusProblem, worst: WorstCase) -> np.ndarray:
    """A one-step (T = 1) transcript attaining ``worst.per_step[0]``, from the mechanism's release (refused where
    the release has none: PVP's is m(D) + ε)."""
    i = worst.change.node
    return released_by(mechanism).attaining_transcript(mechanism, problem, i, worst.argmax_f[0])


def objective_step_transcript(mechanism: ReferenceMechanism, problem: ConsensusProblem, i: int, f_star: np.ndarray,
                              step) -> np.ndarray:
    """Node i releases the maximiser f* with zero recovered noise, made so by the neighbours' f(0) (PP/DVP/R-ADMM).

    With λ(0) = 0, f_i(0) = 0 and every other f_j(0) = 0 but one neighbour k, the KKT
    condition gives ε(D) = 0 when η f_k(0) = ∇O(f*; D_i) + 2ηV_i f* (PP: η = η_i(1))."""
    curvature = step.curvature
    eta = curvature / (2 * mechanism.network.degrees[i])
    k = int(np.flatnonzero(mechanism.network.adjacency[i])[0])
    transcript = np.zeros((2, problem.nodes, problem.dim))
    gradient = problem.local_part([i]).local_gradients(f_star[None, None, :])[0, 0]
    transcript[0, k] = (gradient + curvature * f_star) / eta
    transcript[1, i] = f_star
    return transcript
