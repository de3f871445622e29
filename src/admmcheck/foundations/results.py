"""What every command returns: a frozen result that serialises itself (:meth:`Result.to_json`), describes itself
for a terminal (:meth:`Result.lines`) and says how its check came out (:attr:`Result.outcome`). The command line
prints it, the report pages render it and pytest records it: none of them reads its fields by key."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar, Mapping

from admmcheck.foundations.output import to_json

#: A result's outcome: every check ran and passed, a check failed (a violation, a refuted condition, a failing
#: precondition), or the time budget ran out before a verdict.
OUTCOMES = ("passed", "failed", "incomplete")

#: A verdict row's (or a decided statement's) verdicts: the check ran and held, ran and did not hold, a privacy claim
#: refuted, does not apply, or could not be decided
VERDICTS = ("pass", "fail", "violation", "not-applicable", "inconclusive")

#: The command line's exit statuses: an outcome's, invalid input, a bug.
EXIT_OK, EXIT_CHECK_FAILED, EXIT_INVALID_INPUT, EXIT_BUG, EXIT_INCOMPLETE = 0, 1, 2, 3, 4
EXIT_OF_OUTCOME = {"passed": EXIT_OK, "failed": EXIT_CHECK_FAILED, "incomplete": EXIT_INCOMPLETE}
EXIT_STATUS = """exit status:
  0  everything ran and every check passed
  1  a check failed (verify), a bound's precondition fails (bound), a condition is refuted
     or undecided, or no gamma works (conditions), a privacy violation was found (audit)
  2  invalid input or an anticipated failure: the one-line message says what to change
  3  an unexpected error inside admmcheck: a bug, please report it (--debug shows the traceback)
  4  the time budget (--max-time) ran out before a verdict; the best result so far is printed
  130  interrupted (Ctrl-C) before a verdict"""


class Result(ABC):
    """A command's result. Subclasses are frozen dataclasses; ``as_dict`` is the command's ``--json`` contract."""

    #: what the result is of, in words (``admmcheck audit``'s result, ...)
    kind: ClassVar[str] = "result"

    @abstractmethod
    def as_dict(self) -> dict[str, object]:
        """The JSON-ready fields: what ``--json`` prints."""

    @abstractmethod
    def lines(self) -> list[str]:
        """What a terminal shows, one string per line (the verdict first)."""

    @property
    def outcome(self) -> str:
        """One of :data:`OUTCOMES` (default: passed, a result that decides nothing)."""
        return "passed"

    def to_json(self) -> str:
        """:meth:`as_dict` as strict JSON (no NaN or infinity: :func:`~admmcheck.foundations.output.to_json`)."""
        return to_json(self.as_dict())

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class Written(Result):
    """A result its command wrote out whole: ``summary`` its JSON, ``text`` its lines (a subclass says how it came
    out)."""

    summary: Mapping[str, object] = field(repr=False)
    text: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return dict(self.summary)

    def lines(self) -> list[str]:
        return list(self.text)
