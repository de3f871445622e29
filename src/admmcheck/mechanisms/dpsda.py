"""Privacy of DPSDA, checked: the broadcast transcript as an auditable mechanism, Definition 1's
neighbours (one f_{t0} changed) and the exact (white-box) loss of a transcript.

**What is released.** The adversary of §2.3 sees every message h_i(t) = z_i(t) + η_i(t),
t = 1..T, of every node (``extras["broadcast"]``); the mechanism releases them flattened.

**Exact loss.** With noise-free gradients (ν = 0, so that the only randomness is the Laplace
noise) z_i(t) is a function of the earlier messages and of f_1..f_{t−1}: z_i(1) = 0,
y_i(t) = Π^ψ(z_i(t)[/w_i(t)], α(t−1)), z_i(t+1) = n E_i ∂_i f_t(y_i(t)) + Σ_j W(t)_ij h_j(t). Given
the transcript, both z(F) and z(F′) are recomputed, and

    L(o) = Σ_t Σ_i Σ_k (|h_i^k(t) − z_i^k(t; F′)| − |h_i^k(t) − z_i^k(t; F)|) / σ.

A changed f_{t0} moves every node's z(t0+1) (each node queries the same f_t) and, through the
unreleased y_i, every later round: the loss is not confined to one node or one round. A changed
f_T moves nothing released (:func:`released_round`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from admmcheck.algorithms.dpsda import run_dpsda_c, run_dpsda_ps
from admmcheck.audit.inputs.contract import BatchedRunMechanism
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.privacy.dpsda import history_gap, message_centres, transcript_loss
from admmcheck.problems.graph_sequences import GraphSequence
from admmcheck.problems.online import OnlineProblem, change_one_round

__all__ = ["DpsdaMechanism", "change_one_round", "dpsda_privacy_loss", "released_round", "worst_case_loss"]


@dataclass(frozen=True, eq=False)
class DpsdaMechanism(BatchedRunMechanism):
    """DPSDA-C (``push_sum`` False) or DPSDA-PS with Laplace scale ``sigma`` (None: the run takes none, a variant
    whose noise its own ``arguments`` set) over ``graphs`` for
    ``iterations`` rounds, noise-free gradients; releases every h_i(t) flattened. ``run`` is the registered
    algorithm ``name`` (default: the paper's of ``push_sum``); a variant's run takes the same arguments, and its own
    ``arguments``, and returns the same extras."""

    graphs: GraphSequence
    sigma: float | None
    iterations: int
    push_sum: bool = False
    name: str | None = None
    run: Callable[..., Any] | None = None
    arguments: tuple[tuple[str, Any], ...] = ()  # a variant's own keyword arguments (MechanismSpec.run_arguments)

    @property
    def __name__(self) -> str:
        return f"reference:{self.name or ('dpsda-ps' if self.push_sum else 'dpsda-c')}"

    def batch_run(self, problem: OnlineProblem, seeds):
        run = self.run or (run_dpsda_ps if self.push_sum else run_dpsda_c)
        noise = {} if self.sigma is None else {"sigma": self.sigma}
        return run(problem, graphs=self.graphs, iterations=self.iterations, seeds=seeds, **noise,
                   **dict(self.arguments))

    def released(self, run) -> np.ndarray:
        """Every message h_i(t) of every node, t = 1..T."""
        return run.extras["broadcast"]


def released_round(t0: int, iterations: int) -> bool:
    """Whether changing f_t0 can move a message of a run of T = ``iterations`` rounds: f_t0's gradient
    first enters z(t0+1) ((12), (20)), broadcast as h(t0+1) (11) only when t0 + 1 <= T, so f_T
    (and any later f_t) influences nothing released."""
    return 1 <= t0 < iterations


def dpsda_privacy_loss(mechanism: DpsdaMechanism, f0: OnlineProblem, f1: OnlineProblem,
                       broadcast: np.ndarray) -> np.ndarray:
    """Per-round, per-node loss (trials, T, n) of transcripts ``broadcast`` (trials, T, n, d)."""
    if mechanism.sigma is None:
        raise InvalidConfiguration(f"{mechanism.name} takes no Laplace scale sigma: its exact loss is not DPSDA's")
    if mechanism.sigma <= 0:
        raise InvalidConfiguration("with sigma = 0 (epsilon = inf) the messages are deterministic: no density ratio")
    broadcast = np.asarray(broadcast, dtype=np.float64)
    centres = [message_centres(f, mechanism.graphs, mechanism.push_sum, broadcast) for f in (f0, f1)]
    return transcript_loss(broadcast, *centres, mechanism.sigma)


def worst_case_loss(mechanism: DpsdaMechanism, f0: OnlineProblem, f1: OnlineProblem, trials: int = 200,
                    seed: int = 0) -> float:
    """sup over transcripts of L: each message's term is at most ‖z(F) − z(F′)‖₁/σ, attained when
    h lies on the far side of z(F); z(F) − z(F′) depends on earlier messages, so the supremum is
    taken over ``trials`` random histories and the largest Σ_t ‖z(t; F) − z(t; F′)‖₁/σ reported
    (a lower estimate of the supremum that is exact when the changed round is the last one
    whose effect the horizon sees, e.g. t0 = T − 1)."""
    run = mechanism.batch_run(f0, np.random.SeedSequence(seed).spawn(trials))
    centres = [message_centres(f, mechanism.graphs, mechanism.push_sum, run.extras["broadcast"]) for f in (f0, f1)]
    return float(np.max(history_gap(*centres)) / mechanism.sigma)
