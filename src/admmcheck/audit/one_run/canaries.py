"""One-run canary audits of training code (Steinke, Nasr & Jagielski 2023): for code too expensive to run thousands
of times.

The auditor draws m canaries (records of the dataset's width from a domain: the unit sphere's directions, a box's
corners, or a given set) and, for each of R runs, each canary's inclusion from its seed, independently with
probability ½. Run r trains on the dataset with its included canaries added (``add-remove``), or with m extra slots
each holding its canary or the domain's centre (``replace-one``). The training runs in the audit's isolated worker
processes, under the same timeouts and limits as every audit (:mod:`admmcheck.audit.running`), one call per run.

Every canary is then scored on what its run released: by the user's ``score(release, canary)`` (run in the workers
too, right after the training: it is code under audit), or by default, for a release that is a vector of the
records' width, by how much more the release aligns with the canary than the release of the dataset without any
canary does (one more run): ⟨c, θ_r − θ_0⟩, times the canary's label for labelled records (the change of a linear
model's margin on it). The R·m scores are pooled: the runs are independent and each inclusion moves one run only, so
the R runs together are one mechanism that is (ε, δ)-DP in every inclusion, as the theorem needs.

The guesser calls "included" the k highest scores and "excluded" the k lowest, abstaining on the rest, for each
share of :data:`GUESS_SHARES` of the canaries: numbers fixed before any score is seen, and the error 1 − confidence
is split among them (Bonferroni), so the largest bound holds at the stated confidence.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from admmcheck.audit.inputs.contract import Pair, PairSequence
from admmcheck.audit.inputs.neighbourhoods import Dataset, RecordDomain
from admmcheck.audit.one_run.bounds import epsilon_lower_bound, gaussian_dp_lower_bound, gaussian_dp_refuted
from admmcheck.audit.running.loading import as_mechanism, load_callable
from admmcheck.audit.running.sampling import Sampler, Source, Task
from admmcheck.audit.running.settings import AuditSettings
from admmcheck.claims.values import ApproxDp, Claim, GaussianDp
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.progress import Budget
from admmcheck.foundations.results import Result
from admmcheck.foundations.validation import one_of, positive_int

#: the shares of all canaries guessed (half "included", half "excluded"), fixed before any score is seen
GUESS_SHARES = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
CANARY_KINDS = ("add-remove", "replace-one")
#: the spawn key of the canaries' and inclusions' generator under the audit's seed (apart from every sample's)
GAME_KEY = 54


PLACEMENT_FORMS = "node:I (every canary in the records of node or party I) or spread (dealt out in turn)"


@dataclass(frozen=True)
class Placement:
    """Where the slots go: all at owner ``owner``, or dealt out in turn (``owner`` None: ``spread``)."""

    owner: int | None = 0

    @classmethod
    def parse(cls, text: str) -> "Placement":
        """``node:I`` or ``spread``."""
        word, colon, number = text.strip().partition(":")
        if text.strip() == "spread":
            return cls(None)
        if word == "node" and colon and number.strip().isdigit():
            return cls(int(number))
        raise InvalidConfiguration(f"--canary-placement {text!r}: write {PLACEMENT_FORMS}",
                                   parameter="canary_placement")

    def owners(self, canaries: int, count: int, word: str) -> np.ndarray:
        """The owner of each of ``canaries`` slots among ``count`` nodes or parties (``word``)."""
        if self.owner is None:
            return np.arange(canaries) % count
        if not 0 <= self.owner < count:
            raise InvalidConfiguration(f"--canary-placement node:{self.owner}: there are {count} {word}s, "
                                       f"0..{count - 1}", parameter="canary_placement")
        return np.full(canaries, self.owner)

    def __str__(self) -> str:
        return "spread" if self.owner is None else f"node:{self.owner}"


@dataclass(frozen=True, eq=False)
class CanaryGame:
    """The canaries (``points`` (m, w), with ``labels`` for labelled records) and who is in: ``included`` (R, m);
    ``default`` is the record an empty slot holds (replace-one; None for add-remove); ``owners`` the node or party
    whose records hold each canary (None: the records have no owner); ``node_column`` the column of a dataset's records
    that holds their node's id, which a canary's record gets from ``owners`` (None: no such column)."""

    points: np.ndarray
    labels: np.ndarray | None
    included: np.ndarray
    kind: str
    default: np.ndarray | None = None
    owners: np.ndarray | None = None
    node_column: int | None = None

    def records(self, rows: np.ndarray, canaries: np.ndarray) -> np.ndarray:
        """``rows`` (the points, or defaults, of the canaries selected by the mask ``canaries``) as the dataset's
        records: with their node's id in its node column, where it has one."""
        if self.node_column is None:
            return rows
        return np.insert(rows, self.node_column, self.owners[canaries], axis=1)

    @property
    def runs(self) -> int:
        return len(self.included)


def draw_canaries(domain: RecordDomain, count: int, width: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` canaries of ``width`` numbers from ``domain``: uniform directions on the unit sphere, uniform corners
    of a box (the records farthest apart), or points of a set drawn without replacement while there are enough."""
    if domain.kind == "unit-ball":
        points = rng.normal(size=(count, width))
        return points / np.linalg.norm(points, axis=1, keepdims=True)
    if domain.kind == "box":
        return np.where(rng.random((count, width)) < 0.5, domain.low, domain.high)
    chosen = rng.choice(len(domain.points), size=count, replace=count > len(domain.points))
    return np.asarray(domain.points[chosen], dtype=np.float64)


def centre(domain: RecordDomain, width: int) -> np.ndarray:
    """The record an empty replace-one slot holds: the origin of the ball, the box's centre, the set's mean."""
    if domain.kind == "unit-ball":
        return np.zeros(width)
    if domain.kind == "box":
        return (domain.low + domain.high) / 2
    return np.asarray(domain.points, dtype=np.float64).mean(axis=0)


def draw_game(dataset: Dataset, domain: RecordDomain, canaries: int, runs: int, kind: str, seed: int,
              nodes: tuple[int, Placement] | None = None) -> CanaryGame:
    """The canaries and each run's inclusions, from ``seed`` alone (the same seed, the same game). ``nodes``: the
    column of the records holding their node's id, and where the canaries go among the ids it holds (``node:I``: the
    node of id I; ``spread``: every id in turn, in increasing order); the canaries are drawn in the other columns."""
    m, runs = positive_int("canaries", canaries), positive_int("runs", runs)
    one_of("neighbour kind", kind, CANARY_KINDS)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(GAME_KEY,)))
    width = dataset.features.shape[1] - (nodes is not None)
    points = draw_canaries(domain, m, width, rng)
    labels = None
    if dataset.labels is not None:  # a canary's label: one of the dataset's, uniformly
        labels = rng.choice(np.unique(dataset.labels), size=m)
    included = rng.random((runs, m)) < 0.5
    owners, column = None, None
    if nodes is not None:
        column, placement = nodes
        ids = np.unique(dataset.features[:, column])
        if placement.owner is None:
            owners = ids[np.arange(m) % len(ids)]
        elif placement.owner in ids:
            owners = np.full(m, float(placement.owner))
        else:
            raise InvalidConfiguration(f"--canary-placement node:{placement.owner}: no record's node is "
                                       f"{placement.owner}; the records' nodes are {', '.join(f'{i:g}' for i in ids)}",
                                       parameter="canary_placement")
    return CanaryGame(points, labels, included, kind, centre(domain, width) if kind == "replace-one" else None,
                      owners, column)


class CanaryRuns(PairSequence):
    """The datasets of the runs, built on demand in the workers: pair r < R holds run r's dataset (on both sides:
    one call on side 0 is all a run needs), pair R the dataset without any canary (the default score's reference)."""

    def __init__(self, dataset: Dataset, game: CanaryGame) -> None:
        self.dataset, self.game = dataset, game

    def __len__(self) -> int:
        return self.game.runs + 1

    def __getitem__(self, run: int) -> Pair:  # type: ignore[override]
        data = self.records(run)
        return Pair(data, data)

    def records(self, run: int) -> Any:
        """What run ``run`` trains on, as the dataset is given (features, or (features, labels))."""
        game, base = self.game, self.dataset
        m = len(game.points)
        if run == game.runs:
            keep = np.zeros(m, dtype=bool)
        else:
            keep = game.included[run]
        if game.kind == "add-remove":
            rows, labels = game.records(game.points[keep], keep), None if game.labels is None else game.labels[keep]
        else:
            rows = game.records(np.where(keep[:, None], game.points, game.default), np.ones(m, dtype=bool))
            labels = None if game.labels is None else game.labels  # a slot keeps its label either way
        features = np.vstack([base.features, rows])
        return base.data(features, None if labels is None else np.concatenate([base.labels, labels]))

    def name(self, run: int) -> str:
        """Pair ``run`` in words, for a fault's message."""
        return f"run {run}" if run < self.game.runs else "the reference run without canaries"


class CodeFailed(Exception):
    """The user's training or score function raised: which of the two, and what."""


@dataclass
class ScoredTraining:
    """The call a worker makes for one run under a user's score: train on the data, then score every canary on what
    was released (``score(release, canary)``, a canary given as a record is: a row, or (row, label)). Both are code
    under audit, loaded in the worker on first use."""

    train: str
    score: str
    canaries: list[Any]
    _loaded: tuple[Any, Any] | None = field(default=None, repr=False)

    @property
    def specs(self) -> tuple[str, str]:
        """The user's two functions, as given (a sandbox shows their files: ``Source.files``)."""
        return (self.train, self.score)

    @property
    def __name__(self) -> str:  # what a fault's message names: the user's two functions, not this class
        return f"{self.train} (scored by {self.score})"

    def __call__(self, data: Any, rng: np.random.Generator) -> np.ndarray:
        if self._loaded is None:
            self._loaded = (as_mechanism(load_callable(self.train), self.train), load_callable(self.score))
        train, score = self._loaded
        try:
            release = train(data, rng)
        except Exception as exc:
            raise CodeFailed(f"training {self.train} failed: {type(exc).__name__}: {exc}") from None
        scores = []
        for k, canary in enumerate(self.canaries):
            try:
                scores.append(float(score(release, canary)))
            except Exception as exc:
                raise CodeFailed(f"scoring with {self.score} failed on canary {k}: {type(exc).__name__}: {exc}") \
                    from None
        return np.array(scores, dtype=np.float64)

    def __getstate__(self) -> dict[str, Any]:
        return {"train": self.train, "score": self.score, "canaries": self.canaries, "_loaded": None}


@dataclass(frozen=True)
class Guess:
    """One number of guesses: ``guesses`` (half each way), ``correct``, and the bounds at its share of the error."""

    share: float
    guesses: int
    correct: int
    level: float
    epsilon_lower_bound: float
    mu_lower_bound: float


@dataclass(frozen=True, eq=False)
class CanaryAuditResult(Result):
    """What a one-run audit found: the verdict against ``claim``, the largest ε bound over the guesses (and the
    Gaussian-DP μ bound), every guess, and the pooled scores of included and excluded canaries; ``context`` says
    where the canaries were (a registered mechanism's slots and claim, or a dataset's node column)."""

    kind: ClassVar[str] = "one-run audit"

    verdict: str
    claim: ApproxDp | GaussianDp
    confidence: float
    epsilon_lower_bound: float
    mu_lower_bound: float
    guesses: list[Guess]
    scores: np.ndarray
    included: np.ndarray
    canaries: int
    runs: int
    kind_of_neighbours: str
    score: str
    seed: int
    wall_time_s: float
    notes: list[str]
    context: dict[str, object] = field(default_factory=dict)
    isolation: str = ""  # which isolation the code ran under (admmcheck.audit.running.sandbox)

    @property
    def outcome(self) -> str:
        return "failed" if self.verdict == "violation" else "passed"

    @property
    def deciding(self) -> Guess:
        """The guess that decides the claim's bound."""
        bounded = "mu_lower_bound" if isinstance(self.claim, GaussianDp) else "epsilon_lower_bound"
        return max(self.guesses, key=lambda g: getattr(g, bounded))

    def lines(self) -> list[str]:
        best, total = self.deciding, len(self.scores)
        word = "violation" if self.verdict == "violation" else "no violation found"
        runs = f"{self.runs} run{'s' if self.runs > 1 else ''}"
        if isinstance(self.claim, GaussianDp):
            head = (f"{word}: mu >= {self.mu_lower_bound:.4f} with confidence {self.confidence:g} (claimed mu = "
                    f"{self.claim.mu:.6g}, a Gaussian-DP trade-off curve), from {runs} of {self.canaries} canaries")
        else:
            head = (f"{word}: epsilon >= {self.epsilon_lower_bound:.4f} with confidence {self.confidence:g} (claimed "
                    f"epsilon = {self.claim.epsilon:.6g}, delta = {self.claim.delta:.3g}), from {runs} of "
                    f"{self.canaries} canaries")
        included, excluded = self.scores[self.included], self.scores[~self.included]
        out = [head,
               f"  deciding guess: {best.correct} right of {best.guesses} (the {best.guesses // 2} highest and "
               f"{best.guesses // 2} lowest of {total} scores), each guess share at level {best.level:.3g}",
               f"  Gaussian DP: mu >= {self.mu_lower_bound:.4f}; scores ({self.score}): included mean "
               f"{_mean(included)}, excluded mean {_mean(excluded)}"]
        placed = ""
        if "placement" in self.context:  # a registered mechanism's slots, or a dataset's node column
            placed = (f", {self.context['mechanism']}'s canaries at {self.context['placement']}"
                      if "mechanism" in self.context else f", canaries at the records' nodes: {self.context['placement']}")
        out.append(f"  {self.kind_of_neighbours}{placed}, seed {self.seed}, {self.wall_time_s:.1f} s")
        out += [f"  isolation: {self.isolation}"] if self.isolation else []
        return out + [f"  note: {note}" for note in self.notes]

    def as_dict(self) -> dict[str, object]:
        best = self.deciding
        return self.context | {
            "verdict": self.verdict, "mode": "one-run", "epsilon_lower_bound": self.epsilon_lower_bound,
            "mu_lower_bound": self.mu_lower_bound, "claimed_epsilon": getattr(self.claim, "epsilon", None),
            "claimed_delta": getattr(self.claim, "delta", None), "claimed_mu": getattr(self.claim, "mu", None),
            "confidence": self.confidence, "canaries": self.canaries,
            "runs": self.runs, "canaries_total": len(self.scores), "neighbour_kind": self.kind_of_neighbours,
            "score": self.score,
            "deciding_guess": best.__dict__, "guesses": [guess.__dict__ for guess in self.guesses],
            "scores": {"included": self.scores[self.included].tolist(),
                       "excluded": self.scores[~self.included].tolist()},
            "seed": self.seed, "wall_time_s": self.wall_time_s, "isolation": self.isolation, "notes": self.notes,
        }


def _mean(values: np.ndarray) -> str:
    return f"{float(np.mean(values)):.4g}" if len(values) else "(none)"


def guess(scores: np.ndarray, included: np.ndarray, claim: ApproxDp | GaussianDp,
          confidence: float) -> list[Guess]:
    """The guesses of every share of :data:`GUESS_SHARES` and their bounds, each at (1 − confidence)/K (the ε bound
    at the claim's δ; at δ = 0 for a Gaussian-DP claim)."""
    total = len(scores)
    order = np.argsort(scores, kind="stable")  # ties by canary index: the same scores, the same guesses
    level = (1 - confidence) / len(GUESS_SHARES)
    found = []
    for share in GUESS_SHARES:
        k = max(1, int(round(share * total / 2)))
        k = min(k, total // 2)
        high, low = order[total - k:], order[:k]
        correct = int(included[high].sum() + (~included[low]).sum())
        epsilon = epsilon_lower_bound(2 * k, correct, 1 - level, getattr(claim, "delta", 0.0), canaries=total)
        mu = gaussian_dp_lower_bound(total, 2 * k, correct, 1 - level)
        found.append(Guess(share, 2 * k, correct, level, epsilon, mu))
    return found


def require_one_run_claim(claim: Claim) -> ApproxDp | GaussianDp:
    """``claim`` where a one-run audit can test it: (ε, δ)-DP (Steinke et al.'s bound) or μ-GDP (a trade-off curve,
    Mahloujifar et al.'s Algorithm 3); any other is refused with what to claim instead."""
    if not isinstance(claim, (ApproxDp, GaussianDp)):
        raise InvalidConfiguration(f"a one-run audit tests an (epsilon, delta) or a Gaussian-DP claim, not "
                                   f"{claim.describe()}: audit it with many runs (without canaries), or claim the "
                                   "(epsilon, delta) it implies (claim.to_approx(delta))", parameter="claim")
    return claim


def audit_canaries(train: str, dataset: Dataset, canaries: int, claim: ApproxDp | GaussianDp,
                   domain: RecordDomain, *, runs: int = 1, score: str | None = None, kind: str = "add-remove",
                   settings: AuditSettings | None = None, progress: bool = False,
                   nodes: tuple[int, Placement] | None = None) -> CanaryAuditResult:
    """Audit ``train`` (FILE.py:NAME or module:NAME, called as every mechanism is: ``train(data, rng)``, or with the
    data alone, ...) against ``claim``, an (ε, δ) claim or a Gaussian-DP trade-off curve, from ``runs`` runs with
    ``canaries`` canaries each (:mod:`this module's <admmcheck.audit.one_run.canaries>` description). ``settings`` gives the seed, confidence, workers, timeout and
    limits (its ``samples`` are not used: a one-run audit makes R calls, R + 1 with the default score); ``progress``
    shows a bar over the runs (stderr); ``nodes`` puts the canaries among the records' nodes (:func:`draw_game`)."""
    require_one_run_claim(claim)
    settings = settings or AuditSettings()
    started = time.monotonic()
    game = draw_game(dataset, domain, canaries, runs, kind, settings.seed, nodes)
    points = game.records(game.points, np.ones(len(game.points), dtype=bool))  # as the training sees them
    records = list(points) if game.labels is None else list(zip(points, game.labels))
    mechanism = Source(spec=train) if score is None else Source(obj=ScoredTraining(train, score, records))
    pairs = CanaryRuns(dataset, game)
    released, isolation = play(mechanism, pairs, game.runs + (score is None), settings, progress)  # R: the reference
    context = {"train": train, "canary_domain": domain.describe()} | ({} if nodes is None else
                                                                      {"placement": str(nodes[1])})
    return conclude(_scores(released, game, score, train), game, claim, settings, score or "alignment", started,
                    context, isolation)


def play(mechanism: Source, runs: PairSequence, calls: int, settings: AuditSettings,
         progress: bool = False) -> tuple[dict[int, Any], str]:
    """Pairs 0..``calls`` − 1 of ``runs`` trained once each (side 0) in the audit's isolated workers: ({run: what it
    released, as the sampler's block}, which isolation the code ran under)."""
    tasks = [Task(run, 0, 0, 1) for run in range(calls)]
    with Sampler(mechanism, Source(obj=runs), settings.but(workers=min(settings.workers or calls, calls)),
                 most_pairs=len(runs)) as sampler:
        sampler.pair_names = runs.name
        sampler.exceptions_hint = False  # a one-run audit takes no exceptions as outputs
        done = Budget(show_progress=progress).steps(sampler.draw(tasks), "training runs", total=len(tasks))
        return {task.pair: block for task, block in done}, sampler.isolation


def conclude(scores: np.ndarray, game: CanaryGame, claim: ApproxDp | GaussianDp, settings: AuditSettings,
             score: str, started: float, context: dict[str, object] | None = None,
             isolation: str = "") -> CanaryAuditResult:
    """The verdict from the (R, m) ``scores`` of ``game``'s canaries: every guess of :func:`guess`, the largest bounds,
    and the note on the ceiling m canaries put on any bound. An (ε, δ) claim is refuted where a guess's ε bound
    exceeds ε; a Gaussian-DP claim where a guess rejects its trade-off curve at the guess's level."""
    require_one_run_claim(claim)
    found = guess(scores.ravel(), game.included.ravel(), claim, settings.confidence)
    epsilon = max(g.epsilon_lower_bound for g in found)
    mu = max(g.mu_lower_bound for g in found)
    total = scores.size
    level = 1 - found[-1].level
    if isinstance(claim, GaussianDp):
        refuted = any(gaussian_dp_refuted(claim.mu, total, g.guesses, g.correct, 1 - g.level) for g in found)
        bounded, ceiling = "mu", gaussian_dp_lower_bound(total, total, total, level)
    else:
        refuted = epsilon > claim.epsilon
        bounded, ceiling = "epsilon", epsilon_lower_bound(total, total, level, claim.delta, canaries=total)
    notes = [f"a one-run bound cannot exceed what {total} canaries allow: every guess right would give {bounded} >= "
             f"{ceiling:.3g}; a larger {bounded} is refuted only by an audit of more canaries or of many runs"]
    return CanaryAuditResult("violation" if refuted else "no-violation-found", claim,
                             settings.confidence, epsilon, mu, found, scores.ravel(), game.included.ravel(),
                             len(game.points), game.runs, game.kind, score, settings.seed, time.monotonic() - started,
                             notes, context or {}, isolation)


def _scores(released: dict[int, Any], game: CanaryGame, score: str | None, train: str) -> np.ndarray:
    """(R, m) scores: the user's, as the workers computed them, or the default alignment with each run's release
    beyond the reference run's."""
    m, width = game.points.shape
    if score is not None:
        return np.vstack([released[run].values[0, :m] for run in range(game.runs)])
    reference = released[game.runs]
    widths = {released[run].values.shape[1] for run in released}
    signature = reference.kinds[int(reference.kind_of[0])].signature
    if widths != {width} or len(reference.kinds) != 1:
        raise InvalidConfiguration(
            f"{train} released {signature} ({max(widths)} numbers); the default score needs a vector of the "
            f"records' width ({width} numbers): give a score function, --score FILE.py:NAME, score(release, canary) "
            "-> a number, higher for a canary more likely included", parameter="score")
    sign = np.ones(m) if game.labels is None else np.asarray(game.labels, dtype=np.float64)
    return np.vstack([sign * (game.points @ (released[run].values[0] - reference.values[0]))
                      for run in range(game.runs)])

