"""One home per algorithm and mechanism: what ``admmcheck run``, ``bound``, ``audit`` and the
verification report look up by name, instead of choosing by name strings of their own.

Each is a spec (:mod:`admmcheck.mechanisms.specs`: :class:`AlgorithmSpec`, a private :class:`MechanismSpec`, an
online :class:`OnlineSpec`) of one family (:mod:`admmcheck.mechanisms.families`), which gives it what it leaves out.
:data:`REGISTRY` holds them all: the four papers' algorithms registered below, then the plugins' (the entry-point
group ``admmcheck.plugins``); :func:`register` adds one (a researcher's own variant: see
``docs/verify-a-new-algorithm.md``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterator, Mapping

import numpy as np

from admmcheck.algorithms import (run_admm, run_admm_edge, run_dvp, run_madmm, run_pp, run_private_radmm, run_pvp,
                                  run_radmm)
from admmcheck.algorithms.dpsda import run_dpsda_c, run_dpsda_ps
from admmcheck.algorithms.sharing import run_dp_sharing, run_sharing
from admmcheck.audit.running.settings import AuditSettings, SearchSettings
from admmcheck.foundations.errors import InvalidConfiguration, TheoremConditionWarning
from admmcheck.foundations.results import Result
from admmcheck.mechanisms import conditions
from admmcheck.mechanisms.consensus import ReferenceMechanism
from admmcheck.mechanisms.dpsda import dpsda_privacy_loss, worst_case_loss
from admmcheck.mechanisms import specs
from admmcheck.mechanisms.families import CONSENSUS, ONLINE, SHARING, Family
from admmcheck.mechanisms.releases import PenaltyPerturbation, PrimalPerturbation, RecycledOddSteps
from admmcheck.mechanisms.sharing import sharing_privacy_loss
from admmcheck.mechanisms.specs import AlgorithmSpec, MechanismSpec, OnlineSpec
from admmcheck.problems.networks import Network
from admmcheck.privacy import pp_bound, radmm_bound
from admmcheck.privacy.dpsda import dpsda_claims
from admmcheck.privacy.sharing import sharing_bound
from admmcheck.solving.schedules import GeometricSchedule, schedule_table
from admmcheck.experiments.sharing import tradeoff_figure

__all__ = ["REGISTRY", "AlgorithmSpec", "MechanismSpec", "OnlineSpec", "Registry", "constant_eta", "register",
           "reference_mechanism"]


@dataclass(frozen=True)
class Listing(Result):
    """What ``admmcheck plugins`` lists: each ``registered`` name (family, kind, package, version, entry point) and
    each plugin that ``failed`` to load."""

    kind: ClassVar[str] = "plugin listing"

    registered: tuple[dict[str, object], ...]
    failed: tuple[dict[str, object], ...]

    def as_dict(self) -> dict[str, object]:
        return {"registered": list(self.registered), "failed": list(self.failed)}

    def lines(self) -> list[str]:
        width = max([18] + [len(entry["name"]) + 1 for entry in self.registered])
        out = []
        for entry in self.registered:
            source = f"{entry['package']} {entry['version']}".strip()
            point = f" (entry point {entry['entry_point']})" if entry["entry_point"] else ""
            out.append(f"{entry['name']:<{width}} {entry['family']:<10} {entry['kind']:<10} {source}{point}")
        return out + [f"failed: {f['entry_point']} of {f['package']} {f['version']}: {f['error']}"
                      for f in self.failed]


class Registry(Mapping[str, AlgorithmSpec]):
    """Algorithms and mechanisms by name, in the order they were registered: the built-ins, then what installed
    packages register through the entry-point group ``admmcheck.plugins`` (read on the first lookup,
    :meth:`load_plugins`), then what this process registers."""

    def __init__(self) -> None:
        self._specs: dict[str, AlgorithmSpec] = {}
        self._builtins: frozenset[str] = frozenset()
        self._plugins: str = "not loaded"  # "loading", "loaded"
        self.origins: dict[str, Any] = {}  # name -> plugins.Origin, for what plugins registered
        self.failures: list[Any] = []  # plugins.PluginFailure, for the plugins that could not be loaded

    def seal_builtins(self) -> None:
        """The names registered so far are admmcheck's own."""
        self._builtins = frozenset(self._specs)

    def load_plugins(self, points: Callable[[], list[Any]] | None = None) -> list[Any]:
        """Read the entry-point group ``admmcheck.plugins`` once (``points``: the entry points, for tests; reading
        them again); each plugin that fails is a :class:`~admmcheck.mechanisms.plugins.PluginWarning`. Returns
        the failures."""
        if self._plugins == "loading" or (self._plugins == "loaded" and points is None):
            return self.failures
        from admmcheck.mechanisms import plugins

        self._plugins = "loading"
        try:
            origins, failures = plugins.load(self, points)
        finally:
            self._plugins = "loaded"
        self.origins.update(origins)
        self.failures.extend(failures)
        for failure in failures:
            warnings.warn(plugins.PluginWarning(failure.line()), stacklevel=2)
        return self.failures

    def origin(self, name: str) -> tuple[str, str, str | None]:
        """(package, version, entry point) that registered ``name``: admmcheck's own, a plugin's, or this
        process's (package "registered in this process")."""
        spec = self[name]
        if spec.name in self.origins:
            found = self.origins[spec.name]
            return found.package, found.version, found.entry_point
        if spec.name in self._builtins:
            from admmcheck import __version__

            return "admmcheck", __version__, None
        return "registered in this process", "", None

    def listing(self) -> "Listing":
        """Every registered name with its family, kind and origin (package, version, entry point), and every plugin
        that failed to load: what ``admmcheck plugins`` prints."""
        registered = []
        for name in self:
            package, version, point = self.origin(name)
            registered.append({"name": name, "family": self[name].family.name,
                               "kind": "mechanism" if self[name].private else "algorithm",
                               "package": package, "version": version, "entry_point": point})
        failed = [{"entry_point": f.entry_point, "package": f.package, "version": f.version, "error": f.error}
                  for f in self.failures]
        return Listing(tuple(registered), tuple(failed))

    def registered(self) -> tuple[str, ...]:
        """The names registered so far, without reading the plugins."""
        return tuple(self._specs)

    def _ready(self) -> None:
        if self._plugins == "not loaded":
            self.load_plugins()

    def register(self, spec: AlgorithmSpec, replace: bool = False) -> AlgorithmSpec:
        """Add ``spec`` under its name (refused where the name is taken, unless ``replace``); returns it. Its family
        gave it what it left out when the spec was made (:meth:`~admmcheck.mechanisms.families.Family.complete`)."""
        if spec.name in self._specs and not replace:
            raise InvalidConfiguration(f"{spec.name!r} is registered already; pass replace=True to replace it",
                                       parameter="name")
        self._specs[spec.name] = spec
        return spec

    def unregister(self, name: str) -> AlgorithmSpec:
        """Remove ``name`` (a test's or a notebook's own variant) and return its spec."""
        return self._specs.pop(self[name].name)

    def __getitem__(self, name: str) -> AlgorithmSpec:
        self._ready()
        try:
            return self._specs[name]
        except KeyError:
            raise InvalidConfiguration(f"unknown algorithm or mechanism {name!r}; choose one of "
                                       f"{', '.join(self._specs)}") from None

    def __contains__(self, name: object) -> bool:
        self._ready()
        return name in self._specs

    def __iter__(self) -> Iterator[str]:
        self._ready()
        return iter(self._specs)

    def __len__(self) -> int:
        self._ready()
        return len(self._specs)

    def names(self, family: Family | None = None, private: bool | None = None, builtin: bool | None = None,
              **having: object) -> tuple[str, ...]:
        """The registered names of ``family`` (any if None), private or not, admmcheck's own (``builtin``) or not,
        whose attributes equal ``having`` (e.g. ``report=True``)."""
        self._ready()
        return tuple(name for name, spec in self._specs.items()
                     if (family is None or spec.family is family) and (private is None or spec.private == private)
                     and (builtin is None or (name in self._builtins) == builtin)
                     and all(getattr(spec, key, None) == value for key, value in having.items()))

    def mechanism(self, name: str) -> MechanismSpec:
        """The private mechanism ``name``; refuses a non-private algorithm with the names that are private."""
        spec = self[name]
        if not isinstance(spec, MechanismSpec):
            raise InvalidConfiguration(f"{name} is not private; the private mechanisms are "
                                       f"{', '.join(self.names(private=True))}")
        return spec


REGISTRY = Registry()
register = REGISTRY.register
specs.registered_by = lambda name: REGISTRY.origin(name)[0] if name in REGISTRY else name

#: the words of the M-ADMM and R-ADMM mechanisms' verdicts in the report
PAPER_LABELS = {"preconditions": "theorem preconditions (Thm 4.1 / IV.1)"}


def _one(values: object) -> object:
    """A per-node tuple of one value as that value (one eta for every node)."""
    return values[0] if isinstance(values, tuple) and len(values) == 1 else values


def constant_eta(eta: object, iterations: int, nodes: int, mechanism: str) -> float:
    """``eta`` (a number, one per node, a schedule) as one number, refusing one that varies (R-ADMM and
    PVP have a fixed eta)."""
    table = schedule_table("eta", _one(eta), iterations, nodes)
    if not np.all(table == table[0, 0]):
        raise InvalidConfiguration(f"eta={eta!r}: {mechanism} takes one constant eta (its algorithm has a fixed "
                                   "eta)", parameter="eta")
    return float(table[0, 0])


def reference_mechanism(name: str, network: Network, iterations: int,
                        parameters: Mapping[str, object] | None = None) -> ReferenceMechanism:
    """The registered consensus mechanism ``name`` with ``run``'s keyword arguments ``parameters``."""
    spec = REGISTRY.mechanism(name)
    return ReferenceMechanism(name, network, iterations, dict(parameters or {}), run=spec.run, release=spec.release)


# ---- the algorithms of the four papers -------------------------------------------------------

def warn_outside_theorem_31(setting: Any) -> None:
    """Warn (:class:`TheoremConditionWarning`) when eta_i(t) = eta_i q_i^(t-1) breaks Theorem 3.1's
    eta_i(t+1) >= eta_i(t) >= theta: the run goes ahead, but nothing guarantees convergence."""
    eta, growth, theta = _initial_eta(setting), setting.growth, setting.theta
    if min(eta) < theta:
        warnings.warn(TheoremConditionWarning(
            f"M-ADMM runs outside Theorem 3.1: eta_i(1) = {min(eta):g} < theta = {theta:g} "
            "(the theorem needs eta_i(t) >= theta); convergence is not guaranteed"), stacklevel=3)
    if min(growth) < 1:
        warnings.warn(TheoremConditionWarning(
            f"M-ADMM runs outside Theorem 3.1: growth q_i = {min(growth):g} < 1 makes eta_i(t) decrease "
            "(the theorem needs eta_i(t+1) >= eta_i(t)) and eventually fall below theta; "
            "convergence is not guaranteed"), stacklevel=3)


def _initial_eta(setting: Any) -> tuple[float, ...]:
    """M-ADMM's eta_i(1): one number or one per node (its schedule is eta_i(1) q_i^(t-1), §5.1)."""
    eta = setting.eta if isinstance(setting.eta, tuple) else (setting.eta,)
    if not all(isinstance(value, (int, float)) for value in eta):
        raise InvalidConfiguration(f"eta={setting.eta!r}: madmm's eta is eta_i(1), one number or one per node (its "
                                   "schedule is eta_i(1) q_i^(t-1) with --growth)", parameter="eta")
    return tuple(float(value) for value in eta)


def _fixed_eta(name: str) -> Callable[[Any], dict[str, object]]:
    """The keyword arguments of an algorithm with one constant eta (decentralized ADMM, R-ADMM)."""
    return lambda s: {"eta": constant_eta(s.eta, s.iterations, s.nodes, name)}


register(AlgorithmSpec("admm", CONSENSUS, "decentralized ADMM (M-ADMM paper (7)-(8))", run_admm, ("eta",),
                       arguments=_fixed_eta("admm")))
register(AlgorithmSpec("admm-edge", CONSENSUS, "edge-based ADMM (M-ADMM paper (3)-(6))", run_admm_edge, ("eta",),
                       arguments=_fixed_eta("admm-edge")))
register(AlgorithmSpec("madmm", CONSENSUS, "M-ADMM (M-ADMM paper Alg. 1 without noise, (9)-(10))", run_madmm,
                       ("eta", "theta", "growth"),
                       arguments=lambda s: {"penalty": GeometricSchedule(initial=_initial_eta(s), growth=s.growth),
                                            "theta": s.theta},
                       before_run=warn_outside_theorem_31, conditions=conditions.MADMM))
register(AlgorithmSpec("radmm", CONSENSUS, "R-ADMM (R-ADMM paper Alg. 1, (10)-(13))", run_radmm,
                       ("eta", "gamma"), arguments=lambda s: {"eta": constant_eta(s.eta, s.iterations, s.nodes, "radmm"),
                                                             "gamma": s.gamma},
                       conditions=conditions.RADMM, stands_for="private-radmm"))
register(MechanismSpec(
    "pp", CONSENSUS, "PP: M-ADMM with penalty perturbation (M-ADMM paper Alg. 1, (24)-(25))", run_pp,
    ("eta", "theta", "alpha"),
    arguments=lambda s: {"penalty": _one(s.eta), "theta": s.theta, "alpha": _one(s.alpha)},
    theorem="M-ADMM Theorem 4.1", claim=lambda s: pp_bound(s.bound_setting(), _one(s.eta), _one(s.alpha), s.theta, s.iterations),
    release=PenaltyPerturbation(), report=True, labels=PAPER_LABELS,
    bound_arguments=lambda s: f"pp --eta {s.eta} --theta {s.theta}"))
register(MechanismSpec(
    "dvp", CONSENSUS, "DVP: dual variable perturbation, PP with eta = theta (M-ADMM paper §4)", run_dvp,
    ("theta", "alpha"),
    arguments=lambda s: {"theta": s.theta, "alpha": _one(s.alpha)},
    theorem="M-ADMM Theorem 4.1 with eta = theta",
    claim=lambda s: pp_bound(s.bound_setting(), s.theta, _one(s.alpha), s.theta, s.iterations),
    release=PenaltyPerturbation(penalty="theta"), report=True, labels=PAPER_LABELS,
    bound_arguments=lambda s: f"pp --eta {s.theta} --theta {s.theta}"))  # Theorem 4.1 at eta = theta
register(MechanismSpec(
    "pvp", CONSENSUS, "PVP: primal variable perturbation (Zhang & Zhu 2017, M-ADMM paper §4)", run_pvp,
    ("eta", "alpha", "epsilon"),
    arguments=lambda s: {"eta": constant_eta(s.eta, s.iterations, s.nodes, "pvp"), "alpha": _one(s.alpha)},
    release=PrimalPerturbation()))
register(MechanismSpec(
    "private-radmm", CONSENSUS, "private R-ADMM (R-ADMM paper Alg. 2, (28)-(29))", run_private_radmm,
    ("eta", "alpha", "gamma"),
    arguments=lambda s: {"eta": constant_eta(s.eta, s.iterations, s.nodes, "private-radmm"), "alpha": _one(s.alpha),
                         "gamma": s.gamma},
    theorem="R-ADMM Theorem IV.1",
    claim=lambda s: radmm_bound(s.bound_setting(), constant_eta(s.eta, s.iterations, s.nodes, "private-radmm"),
                                s.alpha, s.iterations),
    release=RecycledOddSteps(), report=True, labels=PAPER_LABELS, section="radmm",
    bound_arguments=lambda s: f"radmm --eta {s.eta}"))
register(AlgorithmSpec("sharing", SHARING, "ADMM sharing (ADMM-sharing paper Alg. 1, (5)-(8))", run_sharing,
                       conditions=conditions.SHARING, stands_for="dp-sharing"))
register(MechanismSpec(
    "dp-sharing", SHARING, "DP ADMM sharing (ADMM-sharing paper Alg. 1 with (9))", run_dp_sharing,
    theorem="ADMM-sharing Theorem 1 / Corollary 1",
    claim=lambda s: sharing_bound(s.widths, rho=s.rho, lam=s.lam, c1=s.c1, b1=s.b1, epsilon=s.step_epsilon,
                                  delta=s.step_delta, iterations=s.iterations, delta_prime=s.delta_prime),
    exact_loss=sharing_privacy_loss, audit=AuditSettings(samples=5_000, timeout=60.0, randomness="seeded"),
    search=SearchSettings(candidates=20, samples=1_000),  # a candidate costs 0.6 s to screen: 20 of the 80 rows
    report=True,
    labels={"audit": "audit against Corollary 1 (black and white box)",
            "finding": "DP ADMM sharing is not differentially private (Theorem 1)"},
    figures={"sharing_tradeoff": tradeoff_figure}))
for _name, _run, _algorithm, _theorem in (("dpsda-c", run_dpsda_c, 1, "DPSDA Theorems 2-3"),
                                          ("dpsda-ps", run_dpsda_ps, 2, "DPSDA Theorems 4-5")):
    register(OnlineSpec(
        _name, ONLINE, f"{_name.upper()} (DPSDA paper Alg. {_algorithm})", _run,
        theorem=_theorem,
        claim=lambda s, push_sum=_algorithm == 2: dpsda_claims(s.problem(), s.graphs(push_sum), s.step_epsilon,
                                                               s.gradient_noise, s.iterations),
        exact_loss=dpsda_privacy_loss, worst_case=worst_case_loss, push_sum=_algorithm == 2,
        report=_algorithm == 1,  # verify audits DPSDA-C; its neighbours are its family's (Definition 1)
        labels={"regret": f"Theorem {1 + 2 * _algorithm}",
                "audit": "audit of the full transcript against T*epsilon (n=4, T=2)"}))

REGISTRY.seal_builtins()
