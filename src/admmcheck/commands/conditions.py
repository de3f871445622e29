"""What ``admmcheck conditions madmm|radmm`` evaluates, as plain data in and a dict out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from admmcheck.datasets import dataset_by_name, make_problem
from admmcheck.errors import InvalidConfiguration, InvalidNetwork
from admmcheck.networks import Network, network_by_name, network_from_edge_list
from admmcheck.progress import Budget
from admmcheck.validation import non_negative_int, positive_int, real

THEOREMS = ("madmm", "radmm")
EXACT_GRAPH_KINDS = ("ring", "path", "star", "complete")


def network_from_spec(spec: str) -> Network:
    """``kind:N`` (ring, path, star, complete) or the path of an edge-list file ("i j" per line)."""
    kind, colon, size = spec.partition(":")
    if kind in EXACT_GRAPH_KINDS and colon:
        if not (size.isascii() and size.isdigit()):
            raise InvalidNetwork(f"graph {spec!r}: the node count must be a whole number, e.g. {kind}:5",
                                 parameter="graph")
        return network_by_name(kind, int(size))
    if Path(spec).exists() or not colon:
        return network_from_edge_list(spec)
    raise InvalidNetwork(
        f"graph {spec!r}: unknown graph kind {kind!r} and no such file; "
        f"use {', '.join(k + ':N' for k in EXACT_GRAPH_KINDS)} or the path of an edge-list file", parameter="graph"
    )


@dataclass(frozen=True)
class ConditionsConfig:
    """A theorem, a graph and rational parameters (strings like "1/2" or lists of them)."""

    theorem: str = "radmm"
    graph: str = "ring:5"
    eta: tuple[str, ...] = ("1/2",)
    gamma: str = "1/5"
    theta: str = "1/2"
    growth: tuple[str, ...] = ("1",)
    lipschitz: tuple[str, ...] | None = None
    strong_convexity: tuple[str, ...] | None = None
    dataset: str | None = None
    C: str = "1"
    rho: str = "1"
    seed: int = 0
    big_l: str = "2"
    mu: str = "2"
    delta: str = "1/100"
    at: int = 1
    horizon: int = 20
    find_gamma: bool = False
    max_time: float | None = None

    ONLY_FOR: ClassVar[dict[str, tuple[str, tuple[str, ...]]]] = {
        **{name: ("theorem", ("radmm",)) for name in ("gamma", "big_l", "find_gamma")},
        **{name: ("theorem", ("madmm",)) for name in ("theta", "growth", "strong_convexity", "delta", "at", "horizon")},
    }
    FLAG_NAMES: ClassVar[dict[str, str]] = {"theorem": "THEOREM", "big_l": "--L"}

    def __post_init__(self) -> None:
        if self.theorem not in THEOREMS:
            raise InvalidConfiguration(f"theorem {self.theorem!r}: choose one of {', '.join(THEOREMS)}",
                                       parameter="theorem")
        non_negative_int("seed", self.seed)
        positive_int("at", self.at)
        positive_int("horizon", self.horizon)
        if self.max_time is not None:
            real("max_time", self.max_time)
        if self.find_gamma and self.theorem != "radmm":
            raise InvalidConfiguration("find_gamma searches R-ADMM's gamma; it applies only to theorem radmm",
                                       parameter="find_gamma")
        if self.lipschitz is None and self.dataset is None:
            raise InvalidConfiguration("lipschitz is required: M (rational, one or one per node), unless a dataset "
                                       "is given to compute M_i from", parameter="lipschitz")
        if self.theorem == "madmm" and self.strong_convexity is None and self.dataset is None:
            raise InvalidConfiguration("strong_convexity is required for madmm: m (rational, one or one per node), "
                                       "unless a dataset is given to compute m_i = rho/N from",
                                       parameter="strong_convexity")


def _constants(config: ConditionsConfig, network: Network) -> tuple[tuple, tuple | None, dict[str, object]]:
    """M_i and m_i as given, else from the dataset (m_i is None for radmm without a dataset)."""
    from admmcheck.conditions.certificates import to_fraction
    from admmcheck.conditions.constants import LocalConstants, local_constants

    data: LocalConstants | None = None
    if config.dataset is not None:
        dataset = dataset_by_name(config.dataset, seed=config.seed)
        problem = make_problem(dataset, network.nodes, C=float(to_fraction(config.C)),
                               rho=float(to_fraction(config.rho)), seed=config.seed)
        data = local_constants(problem)
    lipschitz = config.lipschitz if config.lipschitz is not None else data.lipschitz
    strong = config.strong_convexity if config.strong_convexity is not None else data and data.strong_convexity
    info: dict[str, object] = {"from_dataset": None if data is None else {"dataset": config.dataset, **data.as_dict()}}
    return tuple(lipschitz), None if strong is None else tuple(strong), info


def evaluate_conditions(config: ConditionsConfig, show_progress: bool = False) -> dict[str, object]:
    """Every condition and proof claim of the theorem, decided exactly, as a JSON-ready dict.

    ``status`` is "pass" (everything holds; with ``find_gamma``: a minimal γ was certified),
    "fail" (something is refuted or undecided; with ``find_gamma``: no γ >= 0 works) or
    "incomplete" (``max_time`` ran out first; what was certified so far is reported).
    """
    # the exact arithmetic (sympy) is imported here, not with the command line, which only parses
    from admmcheck.conditions.certificates import to_fraction
    from admmcheck.conditions.gamma_search import minimal_gamma
    from admmcheck.conditions.graph import exact_graph
    from admmcheck.conditions.lemmas import graph_laplacian_checks
    from admmcheck.conditions.madmm import MadmmSetting, theorem_31_checks, theorem_32_checks
    from admmcheck.conditions.radmm import RadmmSetting, radmm_conditions

    budget = Budget(config.max_time, show_progress)
    network = network_from_spec(config.graph)
    graph = exact_graph(network)
    lipschitz, strong, info = _constants(config, network)
    out: dict[str, object] = {"theorem": config.theorem, "graph": network.name, "constants": info}
    if config.theorem == "radmm":
        if len(config.eta) != 1:
            raise InvalidConfiguration(f"eta has {len(config.eta)} values: radmm takes one (Theorem III.1 has a "
                                       "fixed eta)", parameter="eta")
        setting = RadmmSetting(graph, to_fraction(config.eta[0]), lipschitz)
        checks = radmm_conditions(setting, config.gamma, config.big_l, config.mu)
        out["parameters"] = {"eta": str(setting.eta), "gamma": str(to_fraction(config.gamma)),
                             "M": [str(m) for m in setting.lipschitz], "L": config.big_l, "mu": config.mu}
        if config.find_gamma:
            search = minimal_gamma(setting, config.big_l, config.mu, budget=budget)
            out.update(search.as_dict())
    else:
        setting = MadmmSetting(graph, config.theta, config.eta, config.growth, strong, lipschitz)
        checks = theorem_31_checks(setting, config.horizon, budget) + theorem_32_checks(setting, config.at, config.delta, config.mu)
        out["parameters"] = {
            "theta": str(setting.theta), "eta1": [str(v) for v in setting.eta], "growth": [str(v) for v in setting.growth],
            "m": [str(v) for v in setting.strong_convexity], "M": [str(v) for v in setting.lipschitz],
            "delta": config.delta, "mu": config.mu, "t_for_thm_3_2": config.at, "horizon": config.horizon,
        }
    checks = graph_laplacian_checks(network)[:3] + checks  # the graph facts both proofs use
    out["conditions"] = [c.as_dict() for c in checks]
    out["all_hold"] = all(c.holds is True for c in checks)
    if config.find_gamma:  # the question asked is the minimal γ; the checks at gamma are context
        out["status"] = ("incomplete" if not search.complete
                         else "fail" if search.interval is None else "pass")
    elif out["all_hold"]:
        out["status"] = "pass"
    elif any(c.holds is False for c in checks):
        out["status"] = "fail"
    else:
        out["status"] = "incomplete" if budget.expired() else "fail"
    out["elapsed_s"] = budget.elapsed
    return out
