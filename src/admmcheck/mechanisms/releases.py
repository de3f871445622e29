"""How a consensus mechanism's noise enters what it releases: the capability its white box needs.

The exact loss (:func:`~admmcheck.mechanisms.privacy_loss.privacy_loss`) inverts a release to recover the noise,
and the worst case (:func:`~admmcheck.mechanisms.worst_case.worst_case`) maximises the loss of one noisy step. Both
depend on *how* the noise enters, not on a mechanism's name: a mechanism declares it by registering
``release=`` one of the objects below (a variant with PP's release registers :class:`PenaltyPerturbation`), and a
mechanism without one is refused a white box.

* :class:`PenaltyPerturbation`: the noise enters the objective of the primal step as ⟨ε, f⟩ (M-ADMM paper
  (24)-(25); DVP is PP with η = θ, ``penalty="theta"``). Noisy step t: α_t, s_t = 1/(2η_t V_i), κ_t = 2η_t V_i
  (supplement (58)).
* :class:`RecycledOddSteps`: private R-ADMM's odd steps perturb the primal step (R-ADMM paper (28)); the even
  steps (29) use no data. Noisy step 2k−1: α_k, s = 1, κ = 2ηV_i.
* :class:`PrimalPerturbation`: PVP adds the noise to the minimiser of (8) (Zhang & Zhu 2017). Step t: α_t, κ =
  2ηV_i; the loss of a step is α(‖f~ − m(D′)‖ − ‖f~ − m(D)‖).

Each names the keyword arguments of the ``run_*`` function it reads (:attr:`Release.reads`): the registry refuses
a mechanism whose run takes none of that name (a white box that does not match the noise it would invert).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from admmcheck.algorithms.private_radmm import odd_steps
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.solving.local_solver import DEFAULT_TOL
from admmcheck.mechanisms import privacy_loss as exact
from admmcheck.mechanisms import worst_case as search
from admmcheck.solving.schedules import schedule_table


@dataclass(frozen=True)
class Step:
    """One noisy step for one node: ``t`` its 0-based index over 1..T, its noise parameter α, the scale s of the
    data's gradient in the recovered noise and the curvature κ the primal step adds."""

    t: int
    alpha: float
    s: float
    curvature: float


class Release:
    """How the noise enters the release (see the module docstring); subclasses give the three capabilities."""

    reads: tuple[str, ...] = ()
    describes: str = ""

    def loss(self, mechanism: Any, parameters: Mapping[str, object], d0: Any, d1: Any, transcript: np.ndarray,
             nodes: np.ndarray) -> exact.PrivacyLoss:
        raise NotImplementedError

    def steps(self, mechanism: Any, node: int) -> list[Step]:
        """Every noisy step of ``node`` in a run of ``mechanism``."""
        raise NotImplementedError

    def step_value(self, node: search.ChangedNode, f: np.ndarray, x_new: np.ndarray, y_new: float,
                   step: Step) -> float:
        """The loss of one noisy step at released value ``f`` with zero recovered noise under D."""
        raise NotImplementedError

    def attaining_transcript(self, mechanism: Any, problem: Any, node: int, f_star: np.ndarray) -> np.ndarray:
        """A one-step transcript in which ``node`` releases ``f_star`` with zero recovered noise."""
        raise InvalidConfiguration(f"{type(self).__name__} has no one-step transcript attaining a step's value "
                                   f"({self.describes}); worst_transcript covers releases through the primal step's "
                                   "objective")

    def check_run(self, name: str, run_parameters: tuple[str, ...]) -> None:
        """Refuses ``name`` whose ``run_*`` takes none of the arguments this release reads."""
        missing = [key for key in self.reads if key not in run_parameters]
        if missing:
            raise InvalidConfiguration(
                f"{name}: its release {self!r} ({self.describes}) reads the run argument(s) {', '.join(missing)}, "
                f"which its run function does not take (it takes {', '.join(run_parameters) or 'none'}); register "
                f"the release whose noise enters as {name}'s does, or release=None (no white box)",
                parameter="release")


def _alpha(parameters: Mapping[str, object], steps: int, nodes: int) -> np.ndarray:
    return schedule_table("alpha", parameters["alpha"], steps, nodes, allow_infinite=True)


class ObjectiveRelease(Release):
    """A release whose noise enters the objective of the primal step (PP, DVP, private R-ADMM): a step's value is
    g_t(f) of :mod:`admmcheck.mechanisms.worst_case`, and a one-step transcript attains it."""

    def step_value(self, node, f, x_new, y_new, step):
        return search.objective_step_value(node, f, x_new, y_new, step.alpha, step.s, step.curvature)

    def attaining_transcript(self, mechanism, problem, node, f_star):
        return search.objective_step_transcript(mechanism, problem, node, f_star, self.steps(mechanism, node)[0])


@dataclass(frozen=True)
class PenaltyPerturbation(ObjectiveRelease):
    """PP's release (M-ADMM paper (24)-(25)); ``penalty`` names the run argument holding η_i(t) (DVP: "theta")."""

    penalty: str = "penalty"

    describes = "noise in the objective of the primal step, M-ADMM paper (24)"

    @property
    def reads(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(dict.fromkeys((self.penalty, "theta", "alpha")))

    def _eta(self, mechanism: Any, parameters: Mapping[str, object]) -> np.ndarray:
        return schedule_table("penalty", parameters[self.penalty], mechanism.iterations, mechanism.network.nodes)

    def loss(self, mechanism, parameters, d0, d1, transcript, nodes):
        eta, alpha = self._eta(mechanism, parameters), _alpha(parameters, mechanism.iterations,
                                                             mechanism.network.nodes)
        return exact.penalty_perturbation_loss(mechanism.network, eta, alpha, float(parameters["theta"]), d0, d1,
                                               transcript, nodes)

    def steps(self, mechanism, node):
        parameters = mechanism.arguments
        eta = self._eta(mechanism, parameters)[:, node]
        alpha = _alpha(parameters, mechanism.iterations, mechanism.network.nodes)[:, node]
        degree = float(mechanism.network.degrees[node])
        return [Step(t, alpha[t], 1.0 / (2 * eta[t] * degree), 2 * eta[t] * degree) for t in range(len(eta))]


@dataclass(frozen=True)
class RecycledOddSteps(ObjectiveRelease):
    """Private R-ADMM's release (R-ADMM paper (28)-(29))."""

    reads = ("eta", "gamma", "alpha")
    describes = "noise in the primal step's objective at odd steps, data-free even steps, R-ADMM paper (28)-(29)"

    def loss(self, mechanism, parameters, d0, d1, transcript, nodes):
        alpha = _alpha(parameters, odd_steps(mechanism.iterations), mechanism.network.nodes)
        return exact.recycled_loss(mechanism.network, float(parameters["eta"]), float(parameters["gamma"]), alpha,
                                   d0, d1, transcript, nodes)

    def steps(self, mechanism, node):
        parameters, T = mechanism.arguments, mechanism.iterations
        eta, degree = float(parameters["eta"]), float(mechanism.network.degrees[node])
        alpha = _alpha(parameters, odd_steps(T), mechanism.network.nodes)[:, node]
        return [Step(2 * k, alpha[k], 1.0, 2 * eta * degree) for k in range(odd_steps(T))]


@dataclass(frozen=True)
class PrimalPerturbation(Release):
    """PVP's release: the minimiser of (8) plus noise (Zhang & Zhu 2017, M-ADMM paper §4)."""

    reads = ("eta", "alpha")
    describes = "noise added to the primal step's minimiser (PVP)"

    @staticmethod
    def _eta(parameters: Mapping[str, object]) -> float:
        return float(np.asarray(parameters["eta"], dtype=float).ravel()[0])

    def loss(self, mechanism, parameters, d0, d1, transcript, nodes):
        alpha = _alpha(parameters, mechanism.iterations, mechanism.network.nodes)
        return exact.primal_perturbation_loss(mechanism.network, self._eta(parameters), alpha,
                                              float(parameters.get("tol", DEFAULT_TOL)), d0, d1, transcript,
                                              nodes)

    def steps(self, mechanism, node):
        parameters = mechanism.arguments
        alpha = _alpha(parameters, mechanism.iterations, mechanism.network.nodes)[:, node]
        curvature = 2 * self._eta(parameters) * float(mechanism.network.degrees[node])
        return [Step(t, alpha[t], 1.0, curvature) for t in range(mechanism.iterations)]

    def step_value(self, node, f, x_new, y_new, step):
        return search.minimiser_step_value(node, f, x_new, y_new, step.alpha, step.curvature)
