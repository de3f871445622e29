"""The typed, frozen setting of each problem family: what a registered algorithm of the family runs on, and what its
``claim(setting)`` reads (one signature for every family).

* :class:`ConsensusSetting`: data, partition, graph and horizon (:class:`~admmcheck.problems.setting.ProblemSetting`) and the
  parameters of the consensus algorithms (M-ADMM paper (7)-(10), (24)-(25); R-ADMM paper (10)-(13), (28)-(29)).
* :class:`SharingSetting`: the columns of a dataset split among parties, and DP sharing's privacy parameters
  (ADMM-sharing paper (1), (5)-(9), Theorem 1, Corollary 1).
* :class:`OnlineSetting`: §6.1's online linear regression on a seeded time-varying graph sequence (DPSDA paper
  (4)-(23)).

Every field carries its help text and unit as metadata (:func:`parameter`): the command line builds its flags from
them, and the setting validates its own values (errors name the field; the command line says them as its flag).
Each family names its commands' defaults (:attr:`DEFAULTS`: the setting ``run``, ``bound`` and ``audit`` start from).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from functools import cached_property
from typing import Any, ClassVar, Mapping

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.formulas import parse_number, split_top_level
from admmcheck.solving.schedules import ScheduleLike, parse_schedule
from admmcheck.foundations.parameters import flag_of, parameter
from admmcheck.problems.setting import ProblemSetting, build_problem
from admmcheck.foundations.validation import non_negative_int, positive_int, real, refuse_inapplicable, said_as_flag


def numbers(text: str) -> tuple[float, ...]:
    """One number, or one per node separated by commas."""
    return tuple(parse_number(part) for part in split_top_level(text))


def whole_numbers(text: str) -> tuple[int, ...]:
    """Positive whole numbers separated by commas (66,57)."""
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() and int(part) > 0 for part in parts):
        raise InvalidConfiguration(f"{text!r}: give positive whole numbers separated by commas, e.g. 66,57")
    return tuple(int(part) for part in parts)


def noise_schedule(text: str) -> ScheduleLike:
    """A schedule (:func:`~admmcheck.solving.schedules.parse_schedule`) that may be ``inf`` (no noise)."""
    return parse_schedule(text, allow_infinite=True)


def _flag(setting_type: type, name: str) -> str:
    """The command-line spelling of field ``name`` of ``setting_type`` (:func:`admmcheck.foundations.parameters.flag_of`)."""
    known = {item.name: item for item in fields(setting_type)}
    return flag_of(known[name]) if name in known else "--" + name.replace("_", "-")


class FamilySetting:
    """What the three family settings share: :meth:`for_algorithm` and :attr:`DEFAULTS`."""

    #: the setting each command starts from (``run``, ``bound``, ``audit``); a typed value replaces a default
    DEFAULTS: ClassVar[Mapping[str, "FamilySetting"]]

    @classmethod
    def defaults(cls, command: str) -> Any:
        """The setting ``command`` starts from (:attr:`DEFAULTS`); for a plugin's subclass that names none of its
        own, its family's with the subclass's own fields at their defaults."""
        found = cls.DEFAULTS[command]
        if type(found) is cls:
            return found
        return cls(**{item.name: getattr(found, item.name) for item in fields(found) if item.init})

    @classmethod
    def for_algorithm(cls, spec: Any, command: str, typed: Mapping[str, object]) -> Any:
        """The setting of ``command``'s defaults with the ``typed`` values, refusing a field no such setting has
        and an algorithm parameter ``spec`` does not read."""
        known = {item.name: item for item in fields(cls)}
        for name in typed:
            if name not in known:
                raise InvalidConfiguration(f"{_flag(cls, name)} does not apply here; remove it (see --help for "
                                           "the flags that do)", parameter=name)
            if known[name].metadata.get("algorithm_parameter") and name not in spec.parameters:
                raise InvalidConfiguration(f"{_flag(cls, name)} does not apply to {spec.name}: it reads "
                                           f"{', '.join(_flag(cls, p) for p in spec.parameters) or 'none of them'};"
                                           " remove it", parameter=name)
        defaults = cls.defaults(command)
        try:
            refuse_inapplicable(cls, typed, {item: getattr(defaults, item) for item in known})
            return replace(defaults, **typed)
        except InvalidConfiguration as exc:  # said with the flag of a field whose flag is not its name
            raise InvalidConfiguration(said_as_flag(exc, {name: item.metadata["flag"] for name, item in known.items()
                                                          if item.metadata.get("flag")})) from None



@dataclass(frozen=True)
class ConsensusSetting(ProblemSetting, FamilySetting):
    """A consensus problem (:class:`~admmcheck.problems.setting.ProblemSetting`) and the consensus algorithms' parameters:
    ``eta`` the penalty η_i(t) (a number, one per node or a formula in t and i; M-ADMM's η_i(1) with ``growth``
    q_i: η_i(t) = η_i(1) q_i^(t−1), §5.1), ``theta`` M-ADMM's dual step θ (9)-(10), ``gamma`` R-ADMM's even-step
    weight γ (11)-(13), ``alpha`` the noise parameter α_i(t) of the private mechanisms ((24); inf: no noise),
    ``epsilon`` the ε claimed for a mechanism without a theorem (PVP), and ``c1`` the bound on L'' the theorems
    use (logistic loss: 1/4)."""

    eta: ScheduleLike = parameter(0.5, "penalty eta_i(t): a number, one per node or a formula in t and i "
                                  "(madmm: eta_i(1); R-ADMM and PVP: one constant)", read=parse_schedule,
                                  algorithm_parameter=True)
    theta: float = parameter(0.5, "dual step size theta (M-ADMM (9)-(10))", read=parse_number,
                             algorithm_parameter=True)
    growth: tuple[float, ...] = parameter((1.0,), "madmm: q_i in eta_i(1) q_i^(t-1), one or one per node",
                                          read=numbers, algorithm_parameter=True)
    gamma: float = parameter(0.5, "R-ADMM's even-step weight gamma (11)-(13)", read=parse_number,
                             algorithm_parameter=True)
    alpha: ScheduleLike = parameter(5.0, "noise parameter alpha_i(t): a number, one per node or a formula in t "
                                    "and i (inf: no noise)", read=noise_schedule, algorithm_parameter=True)
    epsilon: float | None = parameter(None, "the total epsilon claimed (a mechanism without a privacy theorem)",
                                      read=parse_number, algorithm_parameter=True)
    c1: float = parameter(0.25, "bound on L'' used in the theorems (logistic loss: 0.25)", read=parse_number,
                          commands=("bound", "audit"))

    def __post_init__(self) -> None:
        super().__post_init__()
        real("theta", self.theta)
        real("gamma", self.gamma, strict=False)
        real("c1", self.c1)
        if self.epsilon is not None:
            real("epsilon", self.epsilon)
        if isinstance(self.growth, tuple):
            for value in self.growth:
                real("growth", value)
        for name in ("eta", "growth"):
            values = getattr(self, name)
            if isinstance(values, tuple) and len(values) not in (1, self.nodes):
                raise InvalidConfiguration(f"{name} has {len(values)} values for {self.nodes} nodes; give one or one "
                                           "per node", parameter=name)

    @cached_property
    def built(self) -> tuple[Any, Any]:
        """(:class:`~admmcheck.problems.ConsensusProblem`, :class:`~admmcheck.problems.networks.Network`), built once."""
        return build_problem(self)

    def on_problem(self, problem: Any) -> "ConsensusSetting":
        """This setting on ``problem`` (on the same network) instead of the one its fields build: a one-run audit's
        problem with its canary slots, whose node sizes B_i the theorems read."""
        moved = replace(self)
        moved.__dict__["built"] = (problem, self.built[1])  # the cached value of ``built``
        return moved

    def bound_setting(self) -> Any:
        """What the privacy theorems read of the problem (:class:`~admmcheck.privacy.BoundSetting`)."""
        from admmcheck.privacy import BoundSetting

        problem, network = self.built
        return BoundSetting.from_problem(problem, network, c1=self.c1)


ConsensusSetting.DEFAULTS = {
    "run": ConsensusSetting(dataset="synthetic", eta=(0.5,)),
    "bound": ConsensusSetting(),
    "audit": ConsensusSetting(dataset="synthetic", nodes=3, iterations=5, samples=30, dim=2, eta=1.0, theta=1.0,
                              gamma=0.2),
}


@dataclass(frozen=True)
class SharingSetting(FamilySetting):
    """ADMM sharing (ADMM-sharing paper (1), (5)-(8)): the columns of ``dataset`` split into ``parties``
    consecutive blocks (or party widths ``features`` alone, for a claim without data), penalty ``rho``, λ ``lam``;
    DP sharing's (9) noise from Theorem 1 for (``step_epsilon``, ``step_delta``) per iteration, Corollary 1's
    ``delta_prime``, and the constants ``c1`` (Assumption 2.2) and ``b1`` (Assumption 2.1)."""

    dataset: str = ProblemSetting.default("dataset", "synthetic")
    parties: int = parameter(3, "parties M (consecutive column blocks)", read=int)
    iterations: int = parameter(300, "iterations T", read=int)
    seed: int = parameter(0, "seed of the data and of the noise", read=int)
    samples: int = ProblemSetting.default("samples", 250)
    dim: int = ProblemSetting.default("dim", 10)
    rho: float = parameter(0.001, "ADMM penalty rho", read=parse_number)
    lam: float = parameter(0.01, "lambda, the weight of the regulariser R_m", read=parse_number)
    step_epsilon: float = parameter(1.0, "epsilon per iteration (what it sets, the noise and the claim, is the "
                                    "mechanism's: see admmcheck bound NAME --help)", read=parse_number)
    step_delta: float = parameter(1e-5, "delta per iteration", read=parse_number)
    delta_prime: float = parameter(1e-5, "delta' of the composition over the iterations", read=parse_number)
    c1: float = parameter(1.0, "bound on R_m'' (1 for R = ||x||^2/2)", read=parse_number)
    b1: float = parameter(1.0, "bound on ||x||, ||y||, ||z||", read=parse_number)
    features: tuple[int, ...] | None = parameter(None, "d_m per party, e.g. 66,57: the claim for these widths, "
                                                 "without data", read=whole_numbers, commands=("bound",))

    ONLY_FOR: ClassVar[dict[str, tuple[str, tuple[str, ...]]]] = {"samples": ("dataset", ("synthetic",)),
                                                                   "dim": ("dataset", ("synthetic",))}

    def __post_init__(self) -> None:
        for name in ("parties", "iterations", "samples", "dim"):
            positive_int(name, getattr(self, name))
        non_negative_int("seed", self.seed)
        for name in ("rho", "lam", "step_epsilon", "step_delta", "delta_prime", "c1", "b1"):
            real(name, getattr(self, name))
        if self.features is not None:
            for width in self.features:
                positive_int("features", width)

    def problem(self, normalise_rows: bool) -> Any:
        """The dataset's design split into ``parties`` near-equal consecutive column blocks (``normalise_rows``:
        every block's rows scaled to norm 1, Assumption 2.3, which DP sharing's Lemma 1 uses)."""
        from admmcheck.problems.datasets import dataset_by_name
        from admmcheck.problems.sharing import split_columns

        data = dataset_by_name(self.dataset, seed=self.seed, samples=self.samples, dim=self.dim,
                               drop_first=True)  # Adult one-hot blocks need reference coding for full rank
        return split_columns(data.features, data.labels, self.parties, self.lam, normalise_rows=normalise_rows)

    @cached_property
    def widths(self) -> tuple[int, ...]:
        """d_m per party: ``features`` where given, else the widths of the dataset's split."""
        if self.features is not None:
            return tuple(self.features)
        return tuple(self.problem(normalise_rows=True).widths)


SharingSetting.DEFAULTS = {
    "run": SharingSetting(),
    "bound": SharingSetting(features=(66, 57), rho=1.0, iterations=20),
    "audit": SharingSetting(parties=2, samples=40, dim=6, iterations=2, rho=1.0, lam=0.1),
}


@dataclass(frozen=True)
class OnlineSetting(FamilySetting):
    """§6.1 of the DPSDA paper: online linear regression (d = ``dim``, one coordinate per node when None;
    χ = [−5, 5]^d, α(t) = 1/√t) over a seeded time-varying graph sequence of ``nodes`` nodes whose every
    ``window`` steps have a connected union, with ``weights``; ``step_epsilon`` per round sets Lemma 1's Laplace
    scale (inf: no noise), ``gradient_noise`` the std of the gradient error ξ."""

    nodes: int = parameter(7, "nodes n", read=int)
    dim: int | None = parameter(21, "dimension d; per-node: one coordinate per node (the audit's default)", read=int,
                                none="per-node")
    iterations: int = parameter(500, "rounds T", read=int)
    step_epsilon: float = parameter(math.inf, "epsilon per round, inf: no noise (what it sets, the noise and "
                                    "the claim, is the mechanism's: see admmcheck bound NAME --help)",
                                    read=parse_number)
    gradient_noise: float = parameter(math.sqrt(0.1), "std of the gradient error xi", read=parse_number,
                                      commands=("run", "bound"))  # the audit's gradients are noise-free
    window: int = parameter(4, "connectivity window B of the graph sequence", read=int)
    weights: str = parameter("uniform", "weights of undirected graphs: uniform (1/deg) or metropolis (symmetric)",
                             choices=("uniform", "metropolis"))
    seed: int = parameter(0, "seed of the functions, the graphs and the noise", read=int)
    trials: int = parameter(10, "independent runs on the same function sequence (the pseudo-regret's expectation)",
                            read=int, commands=("run",))

    def __post_init__(self) -> None:
        for name in ("nodes", "iterations", "window", "trials"):
            positive_int(name, getattr(self, name))
        if self.dim is not None:
            positive_int("dim", self.dim)
        non_negative_int("seed", self.seed)
        if not (isinstance(self.step_epsilon, (int, float)) and self.step_epsilon > 0):
            raise InvalidConfiguration(f"step_epsilon={self.step_epsilon!r} must be positive (inf: no noise)",
                                       parameter="step_epsilon")
        real("gradient_noise", self.gradient_noise, strict=False)
        if self.weights not in ("uniform", "metropolis"):
            raise InvalidConfiguration("weights must be uniform (the paper's 1/deg) or metropolis (symmetric)",
                                       parameter="weights")

    def problem(self) -> Any:
        """§6.1's function sequence f_1..f_T."""
        from admmcheck.problems.online import online_linear_regression

        return online_linear_regression(rounds=self.iterations, dim=self.dim or self.nodes, nodes=self.nodes,
                                        seed=self.seed)

    def graphs(self, directed: bool) -> Any:
        """The seeded graph sequence (``directed``: push-sum's, DPSDA-PS)."""
        from admmcheck.problems.graph_sequences import random_sequence

        return random_sequence(self.nodes, self.iterations, self.window, self.seed, directed=directed,
                               weights=self.weights)


OnlineSetting.DEFAULTS = {
    "run": OnlineSetting(),
    "bound": OnlineSetting(),
    "audit": OnlineSetting(nodes=4, dim=None, iterations=2, step_epsilon=1.0, gradient_noise=0.0, window=1),
}
