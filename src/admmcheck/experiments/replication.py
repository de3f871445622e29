"""A paper's experiment rerun on the paper's data (issue 63): what ran, the numbers measured, and each statement of
the paper about them decided. ``admmcheck replicate NAME`` prints one; ``admmcheck verify`` makes a verdict row of
each statement."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Mapping

from admmcheck.foundations.figures import Figure
from admmcheck.foundations.results import VERDICTS, Result


@dataclass(frozen=True)
class Decided:
    """One statement of a paper tested on its data: ``verdict`` pass or fail (decided), violation (a privacy claim
    refuted exactly) or inconclusive; ``detail`` the evidence in one line; ``finding`` what a failure means, in one
    line, when it is one the report lists among its findings."""

    algorithm: str
    check: str
    verdict: str
    detail: str
    value: float | None = None
    finding: str | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")

    def as_dict(self) -> dict[str, object]:
        return {"algorithm": self.algorithm, "check": self.check, "verdict": self.verdict, "detail": self.detail,
                "value": self.value, "finding": self.finding}


@dataclass(frozen=True)
class Replication(Result):
    """The rerun experiment ``name``: its ``setting`` (every choice the paper leaves open, said), the ``checks``
    decided on it, the ``measured`` numbers and the paper's ``figure`` redrawn from them (for the report)."""

    kind: ClassVar[str] = "replication"

    name: str
    setting: Mapping[str, object]
    checks: tuple[Decided, ...]
    measured: Mapping[str, object] = field(default_factory=dict)
    figure: Figure | None = field(default=None, repr=False)

    @property
    def outcome(self) -> str:
        return "failed" if any(c.verdict in ("fail", "violation") for c in self.checks) else "passed"

    def as_dict(self) -> dict[str, object]:
        return {"experiment": self.name, "outcome": self.outcome, "setting": dict(self.setting),
                "checks": [c.as_dict() for c in self.checks], "measured": dict(self.measured)}

    def lines(self) -> list[str]:
        counts = {v: sum(c.verdict == v for c in self.checks) for v in VERDICTS}
        out = [f"{self.name}: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n)]
        out += [f"  {c.verdict:<12} {c.algorithm}: {c.check}: {c.detail}" for c in self.checks]
        out += [f"setting: {key} = {value}" for key, value in self.setting.items()]
        return out
