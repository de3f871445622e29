"""The verification report as data: verdict rows, figure data, findings, reproducibility.

A :class:`Verdict` says what was checked on which algorithm, the outcome — ``pass``, ``fail``,
``violation`` (a privacy claim refuted with evidence), ``not-applicable`` or ``inconclusive`` —
the key figure, and the exact ``admmcheck`` command that reproduces it alone. Fields whose
name ends in ``_s`` are timings; everything else is a function of the seed and the
configuration, so that the same seed gives the same ``report.json`` byte for byte apart from
them.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import ClassVar

from admmcheck.foundations.figures import Figure
from admmcheck.foundations.results import VERDICTS, Result



@dataclass(frozen=True)
class Verdict:
    """One row of the verdict table."""

    algorithm: str
    check: str
    verdict: str
    figure: str
    command: str
    value: float | None = None
    details: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")


@dataclass
class Report(Result):
    """Everything ``report.json`` holds; ``figures`` maps a figure name to its data series. Its outcome is failed
    where a verdict is ``fail`` or ``violation``."""

    kind: ClassVar[str] = "verification report"

    profile: str
    seed: int
    verdicts: list[Verdict] = field(default_factory=list)
    figures: dict[str, Figure] = field(default_factory=dict)
    findings: list[dict[str, str]] = field(default_factory=list)
    reproducibility: dict[str, object] = field(default_factory=dict)
    timings_s: dict[str, float] = field(default_factory=dict)
    #: what the papers' experiments ran on, and what they could not (said once, in the experiments' data section)
    data: list[str] = field(default_factory=list)

    def add(self, verdict: Verdict, seconds: float) -> None:
        self.verdicts.append(verdict)
        self.timings_s[f"{verdict.algorithm}: {verdict.check}"] = seconds

    @property
    def algorithms(self) -> list[str]:
        return list(dict.fromkeys(v.algorithm for v in self.verdicts))

    def counts(self) -> dict[str, int]:
        return {name: sum(v.verdict == name for v in self.verdicts) for name in VERDICTS}

    @property
    def outcome(self) -> str:
        counts = self.counts()
        return "failed" if counts["fail"] or counts["violation"] else "passed"

    def lines(self) -> list[str]:
        """The verdict table, the findings and the counts."""
        out = [f"{'algorithm':<11} {'verdict':<15} {'check':<58} key figure"]
        out += [f"{v.algorithm:<11} {v.verdict:<15} {v.check[:58]:<58} {v.figure}" for v in self.verdicts]
        for finding in self.findings:
            out += ["", f"Finding ({finding['algorithm']}): {finding['title']}", f"  {finding['evidence']}"]
        out += ["", "Experiments' data:", *(f"  {line}" for line in self.data)] if self.data else []
        return out + ["", ", ".join(f"{n} {name}" for name, n in self.counts().items() if n)]

    def as_dict(self) -> dict[str, object]:
        return {"profile": self.profile, "seed": self.seed, "counts": self.counts(),
                "verdicts": [asdict(v) for v in self.verdicts],
                "figures": {name: figure.as_dict() for name, figure in self.figures.items()}, "findings": self.findings,
                "reproducibility": self.reproducibility, "timings_s": self.timings_s, "data": self.data}

    @classmethod
    def read(cls, path: str) -> "Report":
        """The report of a saved report.json (refused, saying so, where the file is not one)."""
        import json

        from admmcheck.foundations.errors import InvalidConfiguration
        from admmcheck.foundations.inputs import read_text_file

        text = read_text_file(path, "report file", InvalidConfiguration, "the JSON that admmcheck verify wrote")
        try:
            return cls.from_dict(json.loads(text))
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidConfiguration(f"{path} is not a report.json written by admmcheck verify ({exc})") from None

    @classmethod
    def from_dict(cls, data: dict) -> "Report":
        from importlib import import_module

        for module in ("admmcheck.experiments.figures", "admmcheck.report.curve_figure"):  # the kinds defined there
            import_module(module)
        figures = {name: Figure.from_dict(figure) for name, figure in data["figures"].items()}
        report = cls(data["profile"], data["seed"], [Verdict(**v) for v in data["verdicts"]], figures,
                     data["findings"], data["reproducibility"], data.get("timings_s", {}), list(data.get("data", [])))
        return report


@dataclass(frozen=True)
class Reproducible(Result):
    """A command's ``result`` with what reproduces it: the ``command`` line and the ``versions`` of the packages it
    ran with (what an audit page and its audit.json carry); it prints as the result does."""

    result: Result
    command: str
    versions: dict[str, str] = field(default_factory=lambda: package_versions())

    @property
    def kind(self) -> str:  # type: ignore[override]
        return self.result.kind

    @property
    def outcome(self) -> str:
        return self.result.outcome

    def as_dict(self) -> dict[str, object]:
        return self.result.as_dict() | {"command": self.command, "versions": self.versions}

    def lines(self) -> list[str]:
        return self.result.lines()


def package_versions() -> dict[str, str]:
    """Python, the platform and the versions of admmcheck and the packages its results depend on."""
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for package in ("admmcheck", "numpy", "scipy", "cvxpy", "clarabel", "scikit-learn", "dp-accounting", "jinja2",
                    "matplotlib"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = "not installed"
    return out
