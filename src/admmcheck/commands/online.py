"""What ``admmcheck run|bound|audit dpsda-c|dpsda-ps`` run, as plain data (DPSDA paper)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from admmcheck.audit.running.settings import SearchSettings
from admmcheck.audit.running.settings import AuditSettings
from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.errors import InvalidConfiguration
from admmcheck.graph_sequences import random_sequence
from admmcheck.oracle import hindsight_optimum
from admmcheck.problems.online import online_linear_regression
from admmcheck.runs import describe_seed
from admmcheck.validation import non_negative_int, positive_int



@dataclass(frozen=True)
class DpsdaRunConfig:
    """Online linear regression of §6.1 (d = ``dim``, χ = [−5, 5]^d, α(t) = 1/√t) on a seeded
    graph sequence with window ``window``; ``epsilon`` per round (inf: no Laplace noise);
    ``trials`` independent runs on the same function sequence (the pseudo-regret's expectation)."""

    algorithm: str = "dpsda-c"
    nodes: int = 7
    dim: int = 21
    iterations: int = 500
    epsilon: float = math.inf
    gradient_noise: float = math.sqrt(0.1)
    window: int = 4
    weights: str = "uniform"
    trials: int = 10
    seed: int = 0

    FLAG_NAMES = {"algorithm": "ALGO"}

    def __post_init__(self) -> None:
        if self.algorithm not in REGISTRY.names("online"):
            raise InvalidConfiguration(f"unknown algorithm {self.algorithm!r}; choose one of "
                                       f"{', '.join(REGISTRY.names('online'))}", parameter="algorithm")
        for name in ("nodes", "dim", "iterations", "window", "trials"):
            positive_int(name, getattr(self, name))
        non_negative_int("seed", self.seed)
        if not (self.epsilon > 0):
            raise InvalidConfiguration(f"epsilon={self.epsilon!r} must be positive (inf: no noise)",
                                       parameter="epsilon")
        if self.weights not in ("uniform", "metropolis"):
            raise InvalidConfiguration("weights must be uniform (the paper's 1/deg) or metropolis (symmetric)",
                                       parameter="weights")


def _setting(config):
    problem = online_linear_regression(rounds=config.iterations, dim=config.dim, nodes=config.nodes, seed=config.seed)
    graphs = random_sequence(config.nodes, config.iterations, config.window, config.seed,
                             directed=REGISTRY.mechanism(config.algorithm).push_sum, weights=config.weights)
    return problem, graphs


def dpsda_bound_summary(config: DpsdaRunConfig) -> dict[str, object]:
    """Theorem 2/4 (epsilon, sigma, preconditions) and Theorem 3/5 (regret bound) for ``config``."""
    problem, graphs = _setting(config)
    return REGISTRY.mechanism(config.algorithm).claim(problem, graphs, config).as_dict(config.iterations)


def execute_dpsda(config: DpsdaRunConfig) -> dict[str, object]:
    """Run ``trials`` runs and report the pseudo-regret (3), the running-average regret (19) and
    the bound of Theorem 3/5."""
    problem, graphs = _setting(config)
    spec = REGISTRY.mechanism(config.algorithm)
    claims = spec.claim(problem, graphs, config)
    run = spec.run(
        problem, graphs=graphs, sigma=claims.sigma, gradient_noise=config.gradient_noise, iterations=config.iterations,
        seeds=np.random.SeedSequence(config.seed).spawn(config.trials))
    T = config.iterations
    decisions = run.extras["decision"][:, :T]
    losses = np.stack([problem.value(t, decisions[:, t - 1]) for t in range(1, T + 1)], axis=1)  # (trials, T)
    running = np.cumsum(decisions, axis=1) / np.arange(1, T + 1)[None, :, None]
    running_losses = np.stack([problem.value(t, running[:, t - 1]) for t in range(1, T + 1)], axis=1)
    best = hindsight_optimum(problem, T).objective
    regret = float(losses.sum(axis=1).mean() - best)
    average_regret = float(running_losses.sum(axis=1).mean() - best)
    return {
        "algorithm": config.algorithm, "nodes": config.nodes, "dim": config.dim, "iterations": T,
        "epsilon": config.epsilon, "sigma": claims.sigma, "trials": config.trials,
        "regret": regret, "regret_over_T": regret / T, "average_regret": average_regret,
        "regret_bound": claims.regret_bound(T), "regret_within_bound": regret <= claims.regret_bound(T),
        "hindsight_optimum": best, "claims": claims.as_dict(T), "seed": describe_seed(run.seeds[0]),
        "wall_time_s": run.wall_time_s,
        "definitions": {"regret": "mean over trials of sum_t f_t(x(t)) - min_v sum_t f_t(v), eq. (3)",
                        "average_regret": "the same for the running average x~(t), eq. (19)"},
    }


@dataclass(frozen=True)
class DpsdaAuditConfig:
    """``audit dpsda-c|dpsda-ps``: the full transcript at a small setting (§6.1 regression with one
    coordinate per node), noise-free gradients, σ of Lemma 1 / Theorem 2 for ``epsilon`` per round,
    neighbours: round ``changed_round``'s target b replaced by −b (when none is given, the round the
    neighbour search finds, budget ``neighbour_search``), one of the rounds 1..T−1 whose function a
    released message depends on; claim: T·ε (Theorem 2/4)."""

    algorithm: str = "dpsda-c"
    nodes: int = 4
    iterations: int = 2
    epsilon: float = 1.0
    window: int = 1
    changed_round: int | None = None
    seed: int = 0
    white_box: bool = False
    settings: AuditSettings | None = None
    neighbour_search: SearchSettings | None = None

    gradient_noise: ClassVar[float] = 0.0  # noise-free gradients: the Laplace noise is the only randomness
    FLAG_NAMES = {"algorithm": "MECHANISM"}

    def __post_init__(self) -> None:
        for name in ("nodes", "iterations", "window"):
            positive_int(name, getattr(self, name))
        if self.changed_round is not None and positive_int("changed_round", self.changed_round) > self.iterations:
            raise InvalidConfiguration(f"changed_round={self.changed_round} must be one of the T = {self.iterations} "
                                       "rounds", parameter="changed_round")
        released = [t for t in range(1, self.iterations + 1)
                    if REGISTRY.mechanism(self.algorithm).influences(t, self.iterations)]
        if not released:
            raise InvalidConfiguration(f"iterations={self.iterations}: f_t first moves h(t+1), and a run of "
                                       f"{self.iterations} round releases only h(1), which no function moves; give "
                                       "iterations >= 2", parameter="iterations")
        if self.changed_round is not None and self.changed_round not in released:
            choices = f"round {released[0]}" if len(released) == 1 else f"a round in {released[0]}..{released[-1]}"
            raise InvalidConfiguration(
                f"changed_round={self.changed_round}: f_{self.changed_round} moves no released message: f_t's "
                f"gradient first enters z(t+1) ((12)/(20)), broadcast as h(t+1) (11), and the last message released is "
                f"h({self.iterations}); choose {choices}, or leave it out to let the neighbour search choose",
                parameter="changed_round")
        if self.settings is None:
            object.__setattr__(self, "settings", REGISTRY.mechanism(self.algorithm).audit.but(seed=self.seed))
        if self.neighbour_search is None:
            object.__setattr__(self, "neighbour_search", REGISTRY.mechanism(self.algorithm).search)


def run_dpsda_audit(config: DpsdaAuditConfig, progress: bool = False) -> dict[str, object]:
    """Black-box audit against T·ε, and with ``white_box`` the exact loss of the same number of
    transcripts and its searched worst case."""
    from admmcheck.audit import PrivacyClaim
    from admmcheck.audit.statistics.loss_profile import loss_distribution
    from admmcheck.commands.audit import audit_registered, audited_place
    from admmcheck.mechanisms.dpsda import DpsdaMechanism

    spec = REGISTRY.mechanism(config.algorithm)
    problem = online_linear_regression(rounds=config.iterations, dim=config.nodes, nodes=config.nodes,
                                       seed=config.seed)
    graphs = random_sequence(config.nodes, config.iterations, config.window, config.seed,
                             directed=spec.push_sum)
    claims = spec.claim(problem, graphs, config)  # noise-free gradients: config.gradient_noise is 0
    mechanism = DpsdaMechanism(graphs, claims.sigma, config.iterations, push_sum=spec.push_sum, name=spec.name,
                               run=spec.run)
    kind = spec.neighbour_kinds[0]
    result = audit_registered(spec, mechanism, problem, kind, config.changed_round, PrivacyClaim(claims.epsilon_total),
                              config.settings.but(randomness="seeded"), config.neighbour_search, progress)  # our code
    t0 = audited_place(result, config.changed_round)
    pair = spec.neighbours(problem, t0, kind)
    summary = result.as_dict() | {"claims": claims.as_dict(config.iterations),
                                  "neighbours": f"{spec.place(t0, kind)} (Definition 1: one f_t0 changed)"}
    if config.white_box:
        broadcast = mechanism.batch_run(pair[0], np.random.SeedSequence([config.seed, 0x5EED]).spawn(
            config.settings.samples)).extras["broadcast"]
        per_step = spec.exact_loss(mechanism, pair[0], pair[1], broadcast)
        losses = per_step.sum(axis=(1, 2))
        law = loss_distribution(losses, confidence=config.settings.confidence)
        worst = max(spec.worst_case(mechanism, pair[0], pair[1], seed=config.seed),
                    spec.worst_case(mechanism, pair[1], pair[0], seed=config.seed))
        summary["white_box"] = {
            "samples": config.settings.samples, "max_loss": law.maximum, "mean_loss": law.mean,
            "quantiles": {f"{k:g}": v[0] for k, v in law.quantiles.items()},
            "worst_case": worst, "claimed_epsilon_total": claims.epsilon_total,
            "ratio": worst / claims.epsilon_total,
            "per_round_mean_abs": np.abs(per_step).sum(axis=2).mean(axis=0).tolist(),
            "nodes_contributing": int(np.sum(np.abs(per_step).max(axis=(0, 1)) > 0)),
            "verdict": "violation" if worst > claims.epsilon_total * (1 + 1e-9) else "within-claim",
        }
    return summary
