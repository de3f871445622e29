"""What ``admmcheck attack kkt`` runs: the Appendix E attack on PP, as plain data in and out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.formulas import parse_number
from admmcheck.foundations.parameters import parameter
from admmcheck.foundations.results import Result
from admmcheck.problems.setting import ProblemSetting, build_problem
from admmcheck.foundations.validation import positive_int


@dataclass(frozen=True)
class AttackConfig(ProblemSetting):
    """``admmcheck attack kkt``: the Appendix E attack on PP, record 0 of node 0.

    The default setting (synthetic data, 5 records per node, alpha = 50, eta = theta = 0.5,
    T = 200) is one where the attack succeeds with public penalties."""

    attack: str = "kkt"
    public_eta: bool = True
    dataset: str = ProblemSetting.default("dataset", "synthetic")
    samples: int = ProblemSetting.default("samples", 25)
    dim: int = ProblemSetting.default("dim", 5)
    iterations: int = ProblemSetting.default("iterations", 200)
    eta: float = parameter(0.5, "public penalty eta_i(t)", read=parse_number)
    theta: float = parameter(0.5, "dual step theta", read=parse_number)
    alpha: float = parameter(50.0, "noise parameter alpha_i(t)", read=parse_number)
    trials: int = parameter(100, "independent runs", read=int)

    FLAG_NAMES: ClassVar[dict[str, str]] = {"attack": "ATTACK", "public_eta": "--public-eta/--private-eta"}

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.attack != "kkt":
            raise InvalidConfiguration(f"unknown attack {self.attack!r}; the toolkit has: kkt")
        positive_int("trials", self.trials)


@dataclass(frozen=True, eq=False)
class AttackOutcome(Result):
    """What ``admmcheck attack kkt`` found: the attack's |cosine| curve (``found``) on ``config``'s setting, with
    ``records_per_node`` records per node."""

    kind: ClassVar[str] = "attack"

    config: AttackConfig
    found: Any  # admmcheck.mechanisms.kkt_attack.AttackResult
    records_per_node: int

    @property
    def final_cosine(self) -> float:
        """|cos| between the recovered and the true direction at the last iteration."""
        return float(self.found.cosine[-1])

    def as_dict(self) -> dict[str, object]:
        config = self.config
        return self.found.as_dict() | {"iterations": config.iterations, "alpha": config.alpha, "eta": config.eta,
                                       "theta": config.theta, "records_per_node": self.records_per_node,
                                       "seed": config.seed}

    def lines(self) -> list[str]:
        found, T = self.found, len(self.found.cosine)
        out = [f"KKT attack on record 0 of node {found.node}, {found.setting}, {found.trials} trials (alpha = "
               f"{self.config.alpha}, eta = {self.config.eta}, {self.records_per_node} records per node)",
               f"{'t':>6} {'|cos|':>8} {'std':>8}"]
        for t in sorted({1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, T} & set(range(1, T + 1))):
            out.append(f"{t:>6} {found.cosine[t - 1]:>8.3f} {found.cosine_std[t - 1]:>8.3f}")
        return out


def run_attack(config: AttackConfig) -> AttackOutcome:
    """The cosine curve of the KKT attack (see :mod:`admmcheck.mechanisms.kkt_attack`)."""
    from admmcheck.mechanisms.kkt_attack import kkt_attack

    problem, network = build_problem(config)
    found = kkt_attack(problem, network, public_eta=config.public_eta, iterations=config.iterations,
                       penalty=config.eta, theta=config.theta, alpha=config.alpha, trials=config.trials,
                       seed=config.seed)
    return AttackOutcome(config, found, int(problem.sizes[0]))
