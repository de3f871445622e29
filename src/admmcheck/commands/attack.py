"""What ``admmcheck attack kkt`` runs: the Appendix E attack on PP, as plain data in and out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.formulas import parse_number
from admmcheck.foundations.parameters import parameter
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


def run_attack(config: AttackConfig) -> dict[str, object]:
    """The cosine curve of the KKT attack (see :mod:`admmcheck.mechanisms.kkt_attack`)."""
    from admmcheck.mechanisms.kkt_attack import kkt_attack

    problem, network = build_problem(config)
    result = kkt_attack(problem, network, public_eta=config.public_eta, iterations=config.iterations,
                        penalty=config.eta, theta=config.theta, alpha=config.alpha, trials=config.trials,
                        seed=config.seed)
    return result.as_dict() | {"iterations": config.iterations, "alpha": config.alpha, "eta": config.eta,
                               "theta": config.theta, "records_per_node": problem.sizes[0], "seed": config.seed}
