"""Convergence conditions as a capability of an algorithm's spec (``conditions=``): the exact checks of its
theorem, decided in rational arithmetic with certificates (:mod:`admmcheck.conditions`, imported when a check runs,
not with the command line).

* :data:`MADMM`: M-ADMM Theorems 3.1 and 3.2 ((14)-(23) of the M-ADMM paper), :class:`MadmmConditions`;
* :data:`RADMM`: R-ADMM Theorem III.1 ((24)-(25) of the R-ADMM paper) and its certified minimal γ,
  :class:`RadmmConditions`;
* :data:`SHARING`: Assumption 1.2 and Lemma 4 of the ADMM-sharing paper, :class:`SharingConditions`.

Each has a typed, frozen setting whose fields carry their help (the command line's flags), ``evaluate(setting,
show_progress)`` giving a JSON-ready dict with ``status`` "pass", "fail" or "incomplete", and ``lines(result)``,
the result in words.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar

from admmcheck.foundations.errors import InvalidConfiguration, InvalidNetwork
from admmcheck.foundations.formulas import parse_number, parse_rational, split_top_level
from admmcheck.problems.networks import Network, network_by_name, network_from_edge_list
from admmcheck.foundations.progress import Budget
from admmcheck.foundations.parameters import parameter
from admmcheck.foundations.results import Written
from admmcheck.foundations.validation import non_negative_int, positive_int, real

EXACT_GRAPH_KINDS = ("ring", "path", "star", "complete")


def rational(text: str) -> str:
    """A rational such as 1/5 or 0.2, kept as its text (the exact layer reads it again)."""
    parse_rational(text)
    return text.strip()


def rationals(text: str) -> tuple[str, ...]:
    """One rational, or one per node separated by commas."""
    return tuple(rational(part) for part in split_top_level(text))


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
class ConsensusConditions:
    """What both consensus theorems read: a graph, η, the Lipschitz constants M_i (or a dataset to compute them
    from, with its C, ρ and seed), μ > 1, and ``max_time`` for the exact work."""

    graph: str = parameter("ring:5", "ring:N, path:N, star:N, complete:N or an edge-list file")
    eta: tuple[str, ...] = parameter(("1/2",), "eta (madmm: eta_i(1)), one or one per node", read=rationals)
    lipschitz: tuple[str, ...] | None = parameter(None, "M_i, one or one per node (else from --dataset)",
                                                  read=rationals)
    dataset: str | None = parameter(None, "compute m_i, M_i from synthetic, breast-cancer, adult or adult:PATH")
    C: str = parameter("1", "C of eq. (1), with --dataset", read=rational)
    rho: str = parameter("1", "rho of eq. (1), with --dataset", read=rational)
    seed: int = parameter(0, "data seed, with --dataset", read=int)
    mu: str = parameter("2", "mu > 1 in (24)-(25) / (21)-(23)", read=rational)
    max_time: float | None = parameter(None, "stop long exact work after this many seconds and report the best "
                                       "certified result so far (exit status 4)", "s", read=parse_number)

    def __post_init__(self) -> None:
        non_negative_int("seed", self.seed)
        if self.max_time is not None:
            real("max_time", self.max_time)
        if self.lipschitz is None and self.dataset is None:
            raise InvalidConfiguration("lipschitz is required: M (rational, one or one per node), unless a dataset "
                                       "is given to compute M_i from", parameter="lipschitz")

    def constants(self, network: Network) -> tuple[tuple, tuple | None, dict[str, object]]:
        """M_i and m_i as given, else from the dataset (m_i is None where neither gives it)."""
        from admmcheck.conditions.certificates import to_fraction
        from admmcheck.conditions.constants import local_constants
        from admmcheck.problems.datasets import dataset_by_name, make_problem

        data = None
        if self.dataset is not None:
            dataset = dataset_by_name(self.dataset, seed=self.seed)
            problem = make_problem(dataset, network.nodes, C=float(to_fraction(self.C)),
                                   rho=float(to_fraction(self.rho)), seed=self.seed)
            data = local_constants(problem)
        lipschitz = self.lipschitz if self.lipschitz is not None else data.lipschitz
        strong = getattr(self, "strong_convexity", None)
        strong = strong if strong is not None else data and data.strong_convexity
        info = {"from_dataset": None if data is None else {"dataset": self.dataset, **data.as_dict()}}
        return tuple(lipschitz), None if strong is None else tuple(strong), info


@dataclass(frozen=True)
class MadmmConditions(ConsensusConditions):
    """M-ADMM Theorems 3.1 and 3.2: θ, q_i, the strong convexity m_i, δ, the t of Theorem 3.2 and the horizon
    of the proof claims."""

    theta: str = parameter("1/2", "dual step theta", read=rational)
    growth: tuple[str, ...] = parameter(("1",), "q_i in eta_i(1) q_i^(t-1)", read=rationals)
    strong_convexity: tuple[str, ...] | None = parameter(None, "m_i (else rho/N from --dataset)", read=rationals)
    delta: str = parameter("1/100", "delta in (21)-(22)", read=rational)
    at: int = parameter(1, "t for Theorem 3.2", read=int)
    horizon: int = parameter(20, "check the proof claims for t = 1..T", read=int)

    def __post_init__(self) -> None:
        super().__post_init__()
        positive_int("at", self.at)
        positive_int("horizon", self.horizon)
        if self.strong_convexity is None and self.dataset is None:
            raise InvalidConfiguration("strong_convexity is required for madmm: m (rational, one or one per node), "
                                       "unless a dataset is given to compute m_i = rho/N from",
                                       parameter="strong_convexity")


@dataclass(frozen=True)
class RadmmConditions(ConsensusConditions):
    """R-ADMM Theorem III.1: one η, γ ≥ 0, L > 0 of (24)-(25); ``find_gamma`` certifies the minimal γ."""

    gamma: str = parameter("1/5", "gamma >= 0", read=rational)
    big_l: str = parameter("2", "L > 0 in (24)-(25)", read=rational, flag="--L")
    find_gamma: bool = parameter(False, "certified minimal gamma")

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.eta) != 1:
            raise InvalidConfiguration(f"eta has {len(self.eta)} values: radmm takes one (Theorem III.1 has a fixed "
                                       "eta)", parameter="eta")


@dataclass(frozen=True)
class SharingConditions:
    """Assumption 1.2 and Lemma 4 of the ADMM-sharing paper for ``dataset`` split into ``parties``."""

    dataset: str = parameter("synthetic", "synthetic, breast-cancer, adult or adult:PATH")
    parties: int = parameter(3, "parties M", read=int)
    rho: str = parameter("1", "the ADMM penalty rho", read=rational)
    lam: str = parameter("1/100", "lambda of eq. (1)", read=rational)
    seed: int = parameter(0, "data seed", read=int)
    samples: int = parameter(250, "synthetic: rows", "rows", read=int, flag="--rows")
    dim: int = parameter(10, "synthetic: feature dimension", read=int)

    def __post_init__(self) -> None:
        positive_int("parties", self.parties)
        non_negative_int("seed", self.seed)


def _status(checks: list[Any], budget: Budget) -> str:
    if all(c.holds is True for c in checks):
        return "pass"
    if any(c.holds is False for c in checks):
        return "fail"
    return "incomplete" if budget.expired() else "fail"


def evaluate_madmm(setting: MadmmConditions, show_progress: bool = False) -> dict[str, object]:
    """Every condition and proof claim of M-ADMM Theorems 3.1 and 3.2, decided exactly."""
    from admmcheck.conditions.graph import exact_graph
    from admmcheck.conditions.lemmas import graph_laplacian_checks
    from admmcheck.conditions.madmm import MadmmSetting, theorem_31_checks, theorem_32_checks

    budget = Budget(setting.max_time, show_progress)
    network = network_from_spec(setting.graph)
    lipschitz, strong, info = setting.constants(network)
    exact = MadmmSetting(exact_graph(network), setting.theta, setting.eta, setting.growth, strong, lipschitz)
    checks = theorem_31_checks(exact, setting.horizon, budget) + theorem_32_checks(exact, setting.at, setting.delta,
                                                                                   setting.mu)
    checks = graph_laplacian_checks(network)[:3] + checks  # the graph facts both proofs use
    out: dict[str, object] = {"theorem": "madmm", "graph": network.name, "constants": info, "parameters": {
        "theta": str(exact.theta), "eta1": [str(v) for v in exact.eta], "growth": [str(v) for v in exact.growth],
        "m": [str(v) for v in exact.strong_convexity], "M": [str(v) for v in exact.lipschitz],
        "delta": setting.delta, "mu": setting.mu, "t_for_thm_3_2": setting.at, "horizon": setting.horizon}}
    out["conditions"] = [c.as_dict() for c in checks]
    out["all_hold"] = all(c.holds is True for c in checks)
    out["status"] = _status(checks, budget)
    out["elapsed_s"] = budget.elapsed
    return out


def evaluate_radmm(setting: RadmmConditions, show_progress: bool = False) -> dict[str, object]:
    """Every condition of R-ADMM Theorem III.1, decided exactly; with ``find_gamma`` the certified minimal γ:
    ``status`` "pass" (a minimal γ was certified), "fail" (no γ >= 0 works) or "incomplete" (``max_time`` ran out;
    what was certified so far is reported)."""
    from admmcheck.conditions.certificates import to_fraction
    from admmcheck.conditions.gamma_search import minimal_gamma
    from admmcheck.conditions.graph import exact_graph
    from admmcheck.conditions.lemmas import graph_laplacian_checks
    from admmcheck.conditions.radmm import RadmmSetting, radmm_conditions

    budget = Budget(setting.max_time, show_progress)
    network = network_from_spec(setting.graph)
    lipschitz, _, info = setting.constants(network)
    exact = RadmmSetting(exact_graph(network), to_fraction(setting.eta[0]), lipschitz)
    checks = graph_laplacian_checks(network)[:3] + radmm_conditions(exact, setting.gamma, setting.big_l, setting.mu)
    out: dict[str, object] = {"theorem": "radmm", "graph": network.name, "constants": info, "parameters": {
        "eta": str(exact.eta), "gamma": str(to_fraction(setting.gamma)), "M": [str(m) for m in exact.lipschitz],
        "L": setting.big_l, "mu": setting.mu}}
    if setting.find_gamma:
        search = minimal_gamma(exact, setting.big_l, setting.mu, budget=budget)
        out.update(search.as_dict())
    out["conditions"] = [c.as_dict() for c in checks]
    out["all_hold"] = all(c.holds is True for c in checks)
    if setting.find_gamma:  # the question asked is the minimal γ; the checks at gamma are context
        out["status"] = "incomplete" if not search.complete else "fail" if search.interval is None else "pass"
    else:
        out["status"] = _status(checks, budget)
    out["elapsed_s"] = budget.elapsed
    return out


def evaluate_sharing(setting: SharingConditions, show_progress: bool = False) -> dict[str, object]:
    """The exact checks of :mod:`admmcheck.conditions.sharing` (Assumption 1.2, Lemma 4), as JSON-ready data."""
    from admmcheck.conditions.certificates import to_fraction
    from admmcheck.conditions.sharing import sharing_conditions
    from admmcheck.problems.datasets import dataset_by_name
    from admmcheck.problems.sharing import split_columns

    data = dataset_by_name(setting.dataset, seed=setting.seed, samples=setting.samples, dim=setting.dim,
                           drop_first=True)
    problem = split_columns(data.features, data.labels, setting.parties, float(to_fraction(setting.lam)))
    result = sharing_conditions(problem, setting.rho).as_dict()
    return result | {"dataset": setting.dataset, "parties": problem.parties, "features": list(problem.widths),
                     "lam": str(setting.lam), "samples": problem.samples,
                     "status": "pass" if result["holds"] else "fail"}  # undecided counts as not shown to hold


_VERDICT = {True: "holds", False: "FAILS", None: "undecided"}


def consensus_lines(report: dict[str, Any]) -> list[str]:
    """A consensus theorem's result in words."""
    lines = [f"{report['theorem']} on {report['graph']}: {report['parameters']}"]
    for check in report["conditions"]:
        where = f" (t={check['t']})" if "t" in check else ""
        lines.append(f"  {_VERDICT[check['holds']]:<9} {check['name']}{where}")
        if "stopped" in check:
            lines.append(f"            {check['stopped']}; every t in {check['checked_t']} holds")
    if "gamma_interval" in report:
        interval = report["gamma_interval"]
        if interval is not None:
            note = "" if report["complete"] else " -- time budget ran out: best certified bracket so far"
            lines.append(f"  minimal gamma: in [{interval['lo']}, {interval['hi']}] (width {interval['width']:.2e})"
                         f"{note}")
        elif report["complete"]:
            lines.append("  minimal gamma: none: no gamma >= 0 satisfies the conditions")
        else:
            lines.append("  minimal gamma: not found before the time budget ran out (no verdict; raise --max-time)")
    return lines


def sharing_lines(report: dict[str, Any]) -> list[str]:
    """ADMM sharing's Assumption 1.2 / Lemma 4 in words."""
    lines = [f"ADMM sharing, Assumption 1.2 / Lemma 4 at rho = {report['rho_float']:.6g} on {report['dataset']} "
             f"({report['parties']} parties, widths {report['features']})"]
    lines += [f"  {_VERDICT[check['holds']]:<9} {name}: {check['statement']}" for name, check in report["checks"].items()]
    low, high = report["minimal_rho"]["lo_float"], report["minimal_rho"]["hi_float"]
    lines.append(f"  smallest rho satisfying (b) and (c): in [{low:.10g}, {high:.10g}]")
    return lines


@dataclass(frozen=True)
class ConditionsResult(Written):
    """A theorem's conditions decided exactly: ``summary`` the JSON (each check with its certificate), ``text`` its
    lines, ``status`` pass, fail or incomplete (the time budget ran out)."""

    kind: ClassVar[str] = "conditions"

    status: str

    @property
    def outcome(self) -> str:
        return {"pass": "passed", "fail": "failed"}.get(self.status, "incomplete")


@dataclass(frozen=True)
class Conditions:
    """An algorithm's convergence theorem as a capability: ``theorem`` in words, its ``setting_type``, ``evaluate``
    (the JSON-ready report) and ``lines`` (its text); :meth:`decide` gives both as one result."""

    theorem: str
    setting_type: type
    evaluate: Callable[..., dict[str, object]]
    lines: Callable[[dict[str, Any]], list[str]]

    def decide(self, setting: Any, show_progress: bool = False) -> ConditionsResult:
        """The conditions decided on ``setting`` (a :attr:`setting_type`)."""
        report = self.evaluate(setting, show_progress=show_progress)
        return ConditionsResult(report, tuple(self.lines(report)), str(report["status"]))


MADMM = Conditions("M-ADMM Thm 3.1/3.2", MadmmConditions, evaluate_madmm, consensus_lines)
RADMM = Conditions("R-ADMM Thm III.1", RadmmConditions, evaluate_radmm, consensus_lines)
SHARING = Conditions("ADMM-sharing Assumption 1.2 and Lemma 4", SharingConditions, evaluate_sharing, sharing_lines)
