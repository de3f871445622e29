"""What ``admmcheck run sharing|dp-sharing`` and ``admmcheck bound sharing`` run, as plain data."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from admmcheck.audit.running.settings import SearchSettings
from admmcheck.audit.running.settings import AuditSettings
from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.datasets import dataset_by_name
from admmcheck.errors import InvalidConfiguration
from admmcheck.oracle import sharing_optimum
from admmcheck.output import output_file, write_atomic
from admmcheck.privacy.sharing import SharingPrivacy
from admmcheck.problems.sharing import SharingProblem, split_columns
from admmcheck.runs import describe_seed
from admmcheck.validation import non_negative_int, one_of, positive_int, real



@dataclass(frozen=True)
class SharingRunConfig:
    """``run sharing|dp-sharing``: the dataset's columns split into ``parties`` consecutive blocks.

    dp-sharing normalises every block's rows (Assumption 2.3, which Lemma 1 uses) and draws its
    noise with Theorem 1's σ for (``epsilon``, ``delta``) per iteration."""

    algorithm: str = "sharing"
    dataset: str = "synthetic"
    parties: int = 3
    iterations: int = 300
    rho: float = 0.001
    lam: float = 0.01
    seed: int = 0
    samples: int = 250
    dim: int = 10
    epsilon: float = 1.0
    delta: float = 1e-5
    c1: float = 1.0
    b1: float = 1.0
    delta_prime: float = 1e-5

    FLAG_NAMES = {"algorithm": "ALGO", "delta_prime": "--delta-prime"}

    def __post_init__(self) -> None:
        if self.algorithm not in REGISTRY.names("sharing"):
            raise InvalidConfiguration(f"unknown sharing algorithm {self.algorithm!r}")
        for name in ("parties", "iterations", "samples", "dim"):
            positive_int(name, getattr(self, name))
        non_negative_int("seed", self.seed)
        for name in ("rho", "lam", "epsilon", "c1", "b1"):
            real(name, getattr(self, name))


def build_sharing_problem(config: SharingRunConfig) -> SharingProblem:
    """The dataset's design split into ``parties`` near-equal consecutive column blocks."""
    data = dataset_by_name(config.dataset, seed=config.seed, samples=config.samples, dim=config.dim,
                           drop_first=True)  # Adult one-hot blocks need reference coding for full rank
    return split_columns(data.features, data.labels, config.parties, config.lam,
                         normalise_rows=REGISTRY[config.algorithm].private)  # the private one's Assumption 2.3


def privacy_of(problem: SharingProblem, config: SharingRunConfig) -> SharingPrivacy:
    """The paper's claim (Lemma 1, Thm 1, Cor. 1) for this problem and configuration (the registered claim of
    ``config.algorithm``, which must be private)."""
    return REGISTRY.mechanism(config.algorithm).claim(problem.widths, config)


def execute_sharing(config: SharingRunConfig, export_problem: str | Path | None = None) -> dict[str, object]:
    """Run the configured algorithm once (seed ``seed``) and summarise it against CVXPY."""
    problem = build_sharing_problem(config)
    if export_problem is not None:
        target = output_file(export_problem, "export_problem")
        parts = np.array([f"{problem.offsets[m]}:{problem.offsets[m + 1]}" for m in range(problem.parties)])
        write_atomic(target, lambda stream: np.savez(stream, X=problem.design, y=problem.labels, parts=parts,
                                                     lam=problem.lam, rho=config.rho))
    optimum = sharing_optimum(problem)
    seeds = [np.random.SeedSequence(config.seed)]
    spec = REGISTRY[config.algorithm]
    privacy = privacy_of(problem, config) if spec.private else None  # the private one draws Theorem 1's sigma
    noise = {} if privacy is None else {"sigma": np.array(privacy.sigma)}
    run = spec.run(problem, rho=config.rho, iterations=config.iterations, seeds=seeds, reference=optimum, **noise)
    shared = run.extras["shared"][0, -1]
    summary: dict[str, object] = {
        "algorithm": config.algorithm, "dataset": config.dataset, "parties": problem.parties,
        "features": list(problem.widths), "samples": problem.samples, "iterations": run.iterations,
        "rho": config.rho, "lam": config.lam,
        "objective_gap": float(run.objective_gap[0, -1]),
        "distance_to_optimum": float(run.consensus_error[0, -1]),
        "residual": float(np.linalg.norm(shared.sum(axis=0) - run.extras["z"][0, -1])),
        "final_x": run.primal[0, -1, 0].tolist(), "wall_time_s": run.wall_time_s,
        "seed": describe_seed(run.seeds[0]),
        "optimum": {"objective": optimum.objective, "solver": optimum.solver, "status": optimum.status,
                    "gradient_norm": optimum.gradient_norm},
        "definitions": {"objective_gap": "(F(x^T) - F*) / |F*|, F the objective (1), F* from CVXPY",
                        "residual": "||sum_m D_m x~_m^T - z^T||_2"},
    }
    if privacy is not None:
        summary["privacy"] = privacy.as_dict()
        summary["sigma"] = list(privacy.sigma)
    if export_problem is not None:
        summary["exported"] = str(export_problem)
    return summary


@dataclass(frozen=True)
class SharingBoundConfig:
    """``bound sharing``: the paper's claim for party widths ``features`` (no data needed)."""

    mechanism: str = "sharing"
    features: tuple[int, ...] = (66, 57)
    rho: float = 1.0
    lam: float = 0.01
    c1: float = 1.0
    b1: float = 1.0
    epsilon: float = 1.0
    delta: float = 1e-5
    iterations: int = 20
    delta_prime: float = 1e-5

    FLAG_NAMES = {"mechanism": "MECHANISM", "delta_prime": "--delta-prime"}


def evaluate_sharing_bound(config: SharingBoundConfig) -> SharingPrivacy:
    """The registered claim of ``config.mechanism`` for party widths ``features`` (dp-sharing's: Lemma 1, Theorem 1,
    Corollary 1 and the accountants). ``sharing``, the non-private algorithm, stands for the paper's DP version (its
    old spelling on the command line)."""
    name = config.mechanism if REGISTRY[config.mechanism].private else "dp-sharing"
    return REGISTRY.mechanism(name).claim(tuple(int(w) for w in config.features), config)


@dataclass(frozen=True)
class SharingConditionsConfig:
    """``conditions sharing``: Assumption 1.2 and Lemma 4 for the dataset split into ``parties``."""

    theorem: str = "sharing"
    dataset: str = "synthetic"
    parties: int = 3
    rho: str = "1"
    lam: str = "1/100"
    seed: int = 0
    samples: int = 250
    dim: int = 10

    FLAG_NAMES = {"theorem": "THEOREM"}

    def __post_init__(self) -> None:
        positive_int("parties", self.parties)
        non_negative_int("seed", self.seed)


def evaluate_sharing_conditions(config: SharingConditionsConfig) -> dict[str, object]:
    """The exact checks of :mod:`admmcheck.conditions.sharing` for ``config``, as JSON-ready data."""
    from admmcheck.conditions.certificates import to_fraction
    from admmcheck.conditions.sharing import sharing_conditions

    data = dataset_by_name(config.dataset, seed=config.seed, samples=config.samples, dim=config.dim, drop_first=True)
    problem = split_columns(data.features, data.labels, config.parties, float(to_fraction(config.lam)))
    result = sharing_conditions(problem, config.rho)
    return result.as_dict() | {"dataset": config.dataset, "parties": problem.parties, "features": list(problem.widths),
                               "lam": str(config.lam), "samples": problem.samples}


@dataclass(frozen=True)
class SharingAuditConfig:
    """``audit dp-sharing``: DP sharing on a small synthetic problem, audited against the paper's
    claim for it (Corollary 1's (ε′, Tδ + δ′) from Theorem 1's σ for (``epsilon``, ``delta``) per
    iteration), on the Definition 2 neighbours of :func:`admmcheck.mechanisms.sharing.replace_one_row`:
    at ``row = (party, row)`` when given, else where the neighbour search finds them (budget
    ``neighbour_search``, default the registered one)."""

    mechanism: str = "dp-sharing"
    parties: int = 2
    samples: int = 40
    dim: int = 6
    iterations: int = 2
    rho: float = 1.0
    lam: float = 0.1
    epsilon: float = 1.0
    delta: float = 1e-5
    delta_prime: float = 1e-5
    c1: float = 1.0
    b1: float = 1.0
    neighbours: str = "row"
    row: tuple[int, int] | None = None
    seed: int = 0
    white_box: bool = False
    settings: AuditSettings | None = None
    neighbour_search: SearchSettings | None = None

    FLAG_NAMES = {"mechanism": "MECHANISM", "neighbours": "--neighbour-kind", "samples": "--rows",
                  "delta_prime": "--delta-prime"}

    def __post_init__(self) -> None:
        for name in ("parties", "samples", "dim", "iterations"):
            positive_int(name, getattr(self, name))
        one_of("mechanism", self.mechanism, REGISTRY.names("sharing", private=True))
        spec = REGISTRY.mechanism(self.mechanism)
        if self.white_box and spec.exact_loss is None:
            raise InvalidConfiguration(f"{self.mechanism} has no exact loss registered (exact_loss=None): audit it "
                                       "without the white box", parameter="white_box")
        if self.neighbours not in spec.neighbour_kinds:
            raise InvalidConfiguration(f"neighbours={self.neighbours!r}: choose {' or '.join(spec.neighbour_kinds)} "
                                       f"for {self.mechanism}", parameter="neighbours")
        if self.settings is None:
            object.__setattr__(self, "settings", spec.audit.but(seed=self.seed))
        if self.neighbour_search is None:
            object.__setattr__(self, "neighbour_search", spec.search)


def run_sharing_audit(config: SharingAuditConfig, progress: bool = False) -> dict[str, object]:
    """Black-box audit of the released values against the paper's total claim, and with
    ``white_box`` the exact loss of ``settings.samples`` transcripts (support evidence included)."""
    from admmcheck.audit import PrivacyClaim
    from admmcheck.commands.audit import audit_registered, audited_place
    from admmcheck.mechanisms.sharing import SharingMechanism

    spec = REGISTRY.mechanism(config.mechanism)
    data = dataset_by_name("synthetic", seed=config.seed, samples=config.samples, dim=config.dim)
    problem = split_columns(data.features, data.labels, config.parties, config.lam, normalise_rows=True)
    claim = spec.claim(problem.widths, config)
    mechanism = SharingMechanism(config.rho, claim.sigma, config.iterations, name=spec.name, run=spec.run)
    result = audit_registered(spec, mechanism, problem, config.neighbours, config.row,
                              PrivacyClaim(min(claim.epsilon_total, claim.basic[0]),
                                           min(claim.delta_total, claim.basic[1])),
                              config.settings.but(randomness="seeded"), config.neighbour_search, progress)  # our code
    where = audited_place(result, config.row)
    pair = spec.neighbours(problem, where, config.neighbours)
    summary = result.as_dict() | {"theorem": claim.as_dict(), "neighbours": spec.place(where, config.neighbours),
                                  "claim_used": f"the smaller of the total of {spec.theorem} and basic composition"}
    if config.white_box:
        run = mechanism.batch_run(pair[0], np.random.SeedSequence([config.seed, 0x5EED]).spawn(config.settings.samples))
        loss = spec.exact_loss(mechanism, pair[0], pair[1], run.extras["shared"])
        finite = np.isfinite(loss.total)
        off = loss.off_support[:, :, list(loss.changed_parties)]
        summary["white_box"] = {
            "samples": config.settings.samples, "infinite_fraction": float(np.mean(~finite)),
            "max_loss": float(np.max(loss.total)), "mean_loss": float(np.mean(loss.total)),
            "off_support_min": float(off.min()), "off_support_median": float(np.median(off)),
            "support_tolerance": 1e-8,
            "evidence": "every released D_0 x~_0^t lies in col(D_0); under D' it must lie in col(D'_0), and the "
                        "sampled transcripts are at the relative distances above from it",
            "verdict": "violation" if not finite.all() else "within-claim",
        }
    return summary
