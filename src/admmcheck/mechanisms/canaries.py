"""Where a registered mechanism's records live, for one-run canary audits (``admmcheck audit NAME --canaries M``;
:mod:`admmcheck.audit.one_run.canaries` holds the game, the guesses and the bounds).

A family's :class:`Canaries` capability adds m canary *slots* to the problem its audits run on, each owned by one
node (consensus) or party (sharing): ``node:I`` puts every slot at owner I, ``spread`` deals them out in turn. A
slot holds its canary in the runs that include it and a fixed default record otherwise, so every inclusion is a
replace-one change of one record, the neighbouring relation both consensus papers (M-ADMM §2.2, R-ADMM §IV) and the
sharing paper (Definition 2, one sample's row of one party) state their claims for, and the sizes the claims read
(B_i) are the same in every run: the claim is the theorem's on the problem with its slots.

* :class:`ConsensusCanaries`: a canary is a record (x, y), x a uniform direction on the unit sphere (Assumption
  ‖x‖ ≤ 1), y = ±1; an empty slot holds (0, y). Where the mechanism has a white box, a canary is scored by its exact
  privacy loss, ln p(o | its slot holds it) − ln p(o | every slot holds its default), from the transcript's KKT
  conditions; otherwise by how much more its node's broadcasts, summed over t = 0..T, align with y·x than those of
  a reference run without any canary (a record pulls its node's f_i toward y·x: the logistic loss's gradient is
  −L′ y x).
* :class:`SharingCanaries`: a canary is a unit row of one party's block D_m (Assumption 2.3), with a label; an
  empty slot holds e_1, and the other parties' rows of the slot hold their e_1 in every run. The server sees
  D_m x̃_m^t; the known rows give x̃_m^t (least squares, exact: the noise is inside x̃), and the score is how much
  better the canary than e_1 explains the slot's entry, summed over t.

DPSDA's records are its rounds, whose number is its horizon T, which its claim Tε reads: it has no slots.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from admmcheck.audit.inputs.contract import Pair, PairSequence
from admmcheck.audit.one_run.canaries import GAME_KEY, CanaryGame, Placement
from admmcheck.problems import ConsensusProblem
from admmcheck.problems.sharing import SharingProblem
from admmcheck.foundations.validation import positive_int

class SlotRuns(PairSequence):
    """The problems of the runs, built in the workers: pair r < R is run r's problem (on both sides: one call on side 0
    is what a run needs), pair R the problem whose slots all hold their default (the reference run)."""

    def __init__(self, capability: "Canaries", base: Any, game: CanaryGame) -> None:
        self.capability, self.base, self.game = capability, base, game

    def __len__(self) -> int:
        return self.game.runs + 1

    def __getitem__(self, run: int) -> Pair:  # type: ignore[override]
        keep = self.game.included[run] if run < self.game.runs else np.zeros(len(self.game.points), dtype=bool)
        problem = self.capability.fill(self.base, self.game, keep)
        return Pair(problem, problem)

    def name(self, run: int) -> str:
        return f"run {run}" if run < self.game.runs else "the reference run without canaries"


class Canaries:
    """A family's canary slots: :meth:`base` the problem of the audit's setting, :meth:`draw` the game, :meth:`fill`
    a run's problem, :meth:`auditable` the mechanism and claim on the problem with its slots, :meth:`score` the (R, m)
    scores (:meth:`score_name` says how); ``owner`` names what owns a slot."""

    owner = "node"
    #: what a canary is, in words (the one-run page's game says it)
    domain: str

    def reference_run(self, mechanism: Any) -> bool:
        """Whether :meth:`score` reads run R, the reference run whose slots all hold their default."""
        return False

    def score_name(self, mechanism: Any) -> str:
        """What :meth:`score` computes, in words."""
        raise NotImplementedError

    def base(self, spec: Any, setting: Any) -> Any:
        raise NotImplementedError

    def draw(self, problem: Any, canaries: int, runs: int, placement: Placement, seed: int) -> CanaryGame:
        raise NotImplementedError

    def fill(self, problem: Any, game: CanaryGame, keep: np.ndarray) -> Any:
        raise NotImplementedError

    def auditable(self, spec: Any, setting: Any, problem: Any) -> Any:
        raise NotImplementedError

    def score(self, released: dict[int, Any], game: CanaryGame, problem: Any, mechanism: Any) -> np.ndarray:
        raise NotImplementedError

    def _rng(self, seed: int) -> np.random.Generator:
        """The game's generator under the audit's seed (apart from every sample's, as for third-party training)."""
        return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(GAME_KEY,)))


def _directions(rng: np.random.Generator, count: int, width: int) -> np.ndarray:
    points = rng.normal(size=(count, width))
    return points / np.linalg.norm(points, axis=1, keepdims=True)


class ConsensusCanaries(Canaries):
    domain = "records (x, y): x a uniform direction on the unit sphere, y = +1 or -1; an empty slot holds (0, y)"
    """The consensus papers' records (see the module's description)."""

    def reference_run(self, mechanism: Any) -> bool:
        return mechanism.release is None

    def score_name(self, mechanism: Any) -> str:
        if mechanism.release is None:
            return "alignment of the node's broadcasts beyond a run without canaries"
        return "exact privacy loss of the transcript, canary against default (the white box)"

    def base(self, spec: Any, setting: Any) -> ConsensusProblem:
        return setting.built[0]

    def draw(self, problem: ConsensusProblem, canaries: int, runs: int, placement: Placement,
             seed: int) -> CanaryGame:
        m, runs = positive_int("canaries", canaries), positive_int("runs", runs)
        owners = placement.owners(m, problem.nodes, self.owner)
        rng = self._rng(seed)
        points = _directions(rng, m, problem.dim)
        labels = rng.choice(np.array([-1.0, 1.0]), size=m)
        included = rng.random((runs, m)) < 0.5
        return CanaryGame(points, labels, included, "replace-one", np.zeros(problem.dim), owners)

    def fill(self, problem: ConsensusProblem, game: CanaryGame, keep: np.ndarray) -> ConsensusProblem:
        """Node i's records, then its slots in canary order: the canary where ``keep``, else (0, y)."""
        rows = np.where(keep[:, None], game.points, game.default)
        features, labels = list(problem.features), list(problem.labels)
        for node in np.unique(game.owners):
            mine = game.owners == node
            features[node] = np.vstack([features[node], rows[mine]])
            labels[node] = np.concatenate([labels[node], game.labels[mine]])
        return ConsensusProblem(tuple(features), tuple(labels), problem.C, problem.rho, problem.loss)

    def auditable(self, spec: Any, setting: Any, problem: ConsensusProblem) -> Any:
        return spec.auditable(spec, setting.on_problem(problem))

    def score(self, released: dict[int, Any], game: CanaryGame, problem: ConsensusProblem,
              mechanism: Any) -> np.ndarray:
        """(R, m) scores: where the mechanism has a white box (``release``), each canary's exact privacy loss
        ln p(o | its slot holds it) − ln p(o | every slot holds its default) of the run's transcript o
        (:func:`~admmcheck.mechanisms.privacy_loss.privacy_loss`); otherwise y·⟨x, Σ_t (f_i(t) − f_i^ref(t))⟩ for
        canary (x, y) at node i, against the reference run."""
        shape = (-1, problem.nodes, problem.dim)  # a release is every broadcast f_i(t), t = 0..T
        transcripts = [released[run].values[0].reshape(shape) for run in range(game.runs)]
        if mechanism.release is not None:
            from admmcheck.mechanisms.privacy_loss import privacy_loss

            m = len(game.points)
            empty = self.fill(problem, game, np.zeros(m, dtype=bool))
            stacked = np.stack(transcripts)  # (R, T+1, N, d): one loss per run
            return np.stack([privacy_loss(mechanism, self.fill(problem, game, np.arange(m) == k), empty,
                                          stacked).total for k in range(m)], axis=1)
        reference = released[game.runs].values[0].reshape(shape).sum(axis=0)
        moved = [transcript.sum(axis=0) - reference for transcript in transcripts]  # (N, d) each
        return np.vstack([game.labels * np.einsum("md,md->m", game.points, change[game.owners]) for change in moved])


class SharingCanaries(Canaries):
    domain = "unit rows of one party's block D_m, with a label; an empty slot holds e_1"
    """DP sharing's rows (see the module's description)."""

    owner = "party"

    def score_name(self, mechanism: Any) -> str:
        return "fit of the slot's shared entry, canary against default, from the party's known rows"

    def base(self, spec: Any, setting: Any) -> SharingProblem:
        return spec.auditable(spec, setting).problem

    def draw(self, problem: SharingProblem, canaries: int, runs: int, placement: Placement,
             seed: int) -> CanaryGame:
        m, runs = positive_int("canaries", canaries), positive_int("runs", runs)
        owners = placement.owners(m, problem.parties, self.owner)
        rng = self._rng(seed)
        width = max(problem.widths)
        points = np.zeros((m, width))  # each canary in its party's width, the rest zero
        for party in np.unique(owners):
            mine = owners == party
            points[mine, :problem.widths[party]] = _directions(rng, int(mine.sum()), problem.widths[party])
        labels = rng.choice(np.array([-1.0, 1.0]), size=m)
        included = rng.random((runs, m)) < 0.5
        default = np.zeros(width)
        default[0] = 1.0
        return CanaryGame(points, labels, included, "replace-one", default, owners)

    def fill(self, problem: SharingProblem, game: CanaryGame, keep: np.ndarray) -> SharingProblem:
        """Every party's rows, then one row per slot: e_1, or at the slot's party the canary where ``keep``."""
        parts = []
        for party, width in enumerate(problem.widths):
            rows = np.zeros((len(game.points), width))
            rows[:, 0] = 1.0
            mine = (game.owners == party) & keep
            rows[mine] = game.points[mine, :width]
            parts.append(np.vstack([problem.parts[party], rows]))
        return SharingProblem(tuple(parts), np.concatenate([problem.labels, game.labels]), problem.lam, problem.box)

    def auditable(self, spec: Any, setting: Any, problem: SharingProblem) -> Any:
        return spec.auditable(spec, setting)  # Lemma 1, Theorem 1, Corollary 1 read no row

    def score(self, released: dict[int, Any], game: CanaryGame, problem: SharingProblem,
              mechanism: Any) -> np.ndarray:
        """Σ_t [(r − ⟨e_1, x̂⟩)² − (r − ⟨c, x̂⟩)²] for each canary c of party m, with r its slot's entry of
        D_m x̃_m^t and x̂ = x̃_m^t solved from the party's known rows: (R, m)."""
        known, m = problem.samples, len(game.points)
        scores = np.zeros((game.runs, m))
        for run in range(game.runs):
            shared = released[run].values[0].reshape(-1, problem.parties, known + m)  # (T, M, N + m)
            for party in np.unique(game.owners):
                mine = np.flatnonzero(game.owners == party)
                width = problem.widths[party]
                solved = np.linalg.lstsq(problem.parts[party], shared[:, party, :known].T, rcond=None)[0]  # (d_m, T)
                entry = shared[:, party, known + mine]  # (T, slots)
                as_canary = game.points[mine, :width] @ solved  # (slots, T)
                as_default = game.default[:width] @ solved  # (T,)
                scores[run, mine] = (((entry - as_default[:, None]) ** 2).sum(axis=0)
                                     - ((entry.T - as_canary) ** 2).sum(axis=1))
        return scores
