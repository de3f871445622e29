"""Progress and time budgets for long exact computations (minimal-γ search, long horizons).

A :class:`Budget` is checked *between* exact steps (one LDLᵀ decision, one bisection
step), never inside one, so whatever was certified before it ran out stays certified and
is reported as the best result so far. Progress bars go to stderr through tqdm and are off
unless asked for (the library is quiet; the command line turns them on).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Iterable, Iterator, TypeVar

from tqdm import tqdm

from admmcheck.foundations.errors import InvalidConfiguration

Item = TypeVar("Item")


@dataclass
class Budget:
    """At most ``seconds`` of wall-clock time from creation (``None``: no limit) and a progress switch."""

    seconds: float | None = None
    show_progress: bool = False
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if self.seconds is not None and not (math.isfinite(self.seconds) and self.seconds > 0):
            raise InvalidConfiguration(f"seconds={self.seconds!r} must be a positive number of seconds",
                                       parameter="seconds")

    def expired(self) -> bool:
        """True once the time is spent."""
        return self.seconds is not None and time.monotonic() - self.started > self.seconds

    @property
    def elapsed(self) -> float:
        """Seconds since the budget started."""
        return time.monotonic() - self.started

    def steps(self, items: Iterable[Item], description: str, total: int | None = None) -> Iterator[Item]:
        """Iterate ``items`` with a progress bar when progress is on (stderr, tqdm)."""
        return iter(tqdm(items, desc=description, total=total, disable=not self.show_progress,
                         mininterval=0.5, leave=False, unit="step"))


UNLIMITED = Budget()
