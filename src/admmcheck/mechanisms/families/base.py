"""The protocol every problem family follows: what it gives each algorithm registered in it, and what the commands
ask of it.

A family (:class:`Family`) is an object, not a name: a spec holds its family, and the registry, ``run``, ``bound``,
``audit`` and ``verify`` call the family's methods instead of choosing by its name. Each family gives:

* its typed **setting** (:attr:`Family.setting`: a frozen dataclass a plugin extends with fields of its own);
* its **neighbours** and every capability that goes with them (:meth:`Family.neighbours`: the pair, its kinds, the
  places it can change and how a place is named), so that the smallest plugin of any family is a run function, a
  claim and a registration;
* what it gives a spec at registration (:meth:`Family.complete`: its white box where the spec's noise law gives an
  exact loss, the ``bound`` command that reproduces its claim, its one-run canary records where it has them), and
  what it refuses there;
* what an audit runs (:meth:`Family.auditable`), what ``run`` measures (:meth:`Family.run`, against CVXPY or the
  hindsight optimum) and what ``bound`` states (:meth:`Family.bound`).

:data:`admmcheck.mechanisms.families.FAMILIES` holds the three families by name, which a spec may give as
``family="consensus"``: the name is read once, at registration.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

from admmcheck.claims.values import Claim
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.results import Result, Written
from admmcheck.mechanisms.canaries import Canaries
from admmcheck.mechanisms.white_box import Auditable


@dataclass(frozen=True)
class Statement(Written):
    """What ``admmcheck bound`` states for a mechanism on one setting: ``summary`` its JSON, ``text`` its lines,
    ``holds`` whether the claim's preconditions hold (else the outcome is failed: exit 1)."""

    kind: ClassVar[str] = "bound"

    holds: bool

    @property
    def outcome(self) -> str:
        return "passed" if self.holds else "failed"


@dataclass(frozen=True)
class ClaimStatement(Result):
    """What ``admmcheck bound`` states for a mechanism whose claim is a value (its notion, parameters, source)."""

    kind: ClassVar[str] = "bound"

    mechanism: str
    claim: Claim

    def as_dict(self) -> dict[str, object]:
        return {"mechanism": self.mechanism, "claim": self.claim.as_dict()}

    def lines(self) -> list[str]:
        return [f"{self.mechanism}: {self.claim}"]


@dataclass(frozen=True)
class RunSummary(Result):
    """One measured run (:meth:`Family.run`): ``summary`` its JSON, ``shown`` the figures a terminal lists, in order;
    a private run's ``claim`` (or, where the setting has none, why: ``refused``); ``objective_gap`` the relative gap
    to the optimum at the last iteration where the family has one."""

    kind: ClassVar[str] = "run"

    summary: Mapping[str, object] = field(repr=False)
    shown: tuple[str, ...]
    claim: Claim | None = None
    refused: str | None = None
    objective_gap: float | None = None

    def as_dict(self) -> dict[str, object]:
        return dict(self.summary)

    def lines(self) -> list[str]:
        out = [f"{key:<16} {self.summary[key]}" for key in self.shown]
        if self.claim is None and self.refused is None:
            return out
        if "sigma" in self.summary and "sigma" not in self.shown:  # the noise a private run drew, where it has one
            out.append(f"{'sigma':<16} {self.summary['sigma']}")
        return out + [f"{'claimed':<16} " + (f"none: {self.refused}" if self.claim is None else str(self.claim))]


def precondition_lines(preconditions: Mapping[str, bool]) -> list[str]:
    """One line per precondition: ``holds`` or ``FAILS`` and its name."""
    return [f"  {'holds' if ok else 'FAILS':<6} {name}" for name, ok in preconditions.items()]


class Family(ABC):
    """One problem family's protocol (module docstring). Subclasses are the three families; a plugin registers an
    algorithm *in* a family, it does not write one."""

    #: the family's name, as ``admmcheck plugins`` lists it and a spec may give it
    name: ClassVar[str]
    #: the typed setting its algorithms read (:class:`~admmcheck.mechanisms.settings.FamilySetting`)
    setting: ClassVar[type]
    #: what ``admmcheck run`` prints of :meth:`run`'s summary, in order
    run_keys: ClassVar[tuple[str, ...]]
    #: whether its problems have an optimum that ``run`` measures an objective gap to (the online family's runs are
    #: measured by their regret instead)
    has_optimum: ClassVar[bool] = False
    #: whether ``run`` can write its problem's data to a file (``--export-problem``)
    exports_problem: ClassVar[bool] = False
    #: where a one-run audit's canary records go (None: the family has none, and a one-run audit is refused)
    canaries: ClassVar[Canaries | None] = None
    #: the module-level name of the family's one object (a family pickles as a reference to it)
    global_name: ClassVar[str]

    def __repr__(self) -> str:
        return f"<{self.name} family>"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self) -> str:  # one object per family, also after a copy or a pickle
        return self.global_name

    @abstractmethod
    def neighbours(self) -> dict[str, Any]:
        """The neighbours a spec that gives none gets, and every capability that goes with them: ``neighbours``,
        ``neighbour_kinds``, ``candidates``, ``place``, ``first_place`` (the place the smoke audit changes and its
        flag) and, where a change cannot reach every release, ``influences`` and ``released_note``."""

    def complete(self, spec: Any) -> None:
        """Give ``spec`` the family's defaults for what it left out (:meth:`give_defaults`), at registration, and
        its white box where it registers an exact loss; refuse ``release=``, which only a consensus mechanism
        has. A family with more to give or to refuse overrides this."""
        self.give_defaults(spec)
        if spec.release is not None:
            raise InvalidConfiguration(f"{spec.name}: release= describes how a consensus mechanism's noise enters "
                                       f"what it releases; a {self.name} mechanism registers exact_loss= and "
                                       "worst_case= of its own", parameter="release")
        if spec.white_box is None and spec.exact_loss is not None:
            object.__setattr__(spec, "white_box", self.white_box)

    #: the white box a spec with an exact loss gets (None: the family has none of its own)
    white_box: ClassVar[Any] = None

    def give_defaults(self, spec: Any) -> None:
        """Give ``spec`` what it left out: the family's neighbours (:meth:`neighbours`), auditable and canaries."""
        if spec.auditable is None:
            object.__setattr__(spec, "auditable", self.auditable)
        if spec.canaries is None and self.canaries is not None:
            object.__setattr__(spec, "canaries", self.canaries)
        given = self.neighbours()
        if spec.neighbours is None:
            for name, value in given.items():
                if name != "first_place" or spec.first_place is None:
                    object.__setattr__(spec, name, value)
        if spec.first_place is None:
            object.__setattr__(spec, "first_place", given["first_place"])

    @abstractmethod
    def auditable(self, spec: Any, setting: Any) -> Auditable:
        """What an audit of ``spec`` on ``setting`` runs, against the claim it audits."""

    @abstractmethod
    def run(self, spec: Any, setting: Any, export_problem: Any = None) -> RunSummary:
        """Run ``spec`` once on ``setting`` and measure it against its reference: what ``admmcheck run`` prints
        (``export_problem``: a path to write the problem to, where the family can)."""

    def state(self, spec: Any, setting: Any) -> Result:
        """What ``admmcheck bound`` states for ``spec`` on ``setting``: a claim stated as a value (its notion,
        parameters and source), or what :meth:`bound` states of the theorem's object."""
        stated = spec.claim(setting)
        if isinstance(stated, Claim):
            return ClaimStatement(spec.name, spec.claim_value(setting, stated))
        return self.bound(spec, setting, stated)

    @abstractmethod
    def bound(self, spec: Any, setting: Any, stated: Any) -> Statement:
        """What ``bound`` states of ``stated``, the object ``spec.claim(setting)`` returned (a theorem's,
        :class:`~admmcheck.claims.stated.TheoremClaim`; a claim value is stated by the command itself)."""
