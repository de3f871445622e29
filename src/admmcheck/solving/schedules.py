"""Per-node parameter schedules such as the private penalties eta_i(t) of M-ADMM.

A schedule is turned into a table of shape (T, N) whose row ``t - 1`` holds the values
used in iteration t (t = 1..T), e.g. eta_i(t) in eq. (10) of the M-ADMM paper.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence, Union

import numpy as np

from admmcheck.foundations.errors import InvalidConfiguration, InvalidFormula
from admmcheck.foundations.formulas import parse_formula, parse_number, split_top_level
from admmcheck.foundations.validation import real


def _per_node(name: str, value: float | Sequence[float], nodes: int) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if array.size == 1:
        return np.full(nodes, float(array.reshape(())))
    if array.shape != (nodes,):
        raise InvalidConfiguration(
            f"{name} has {array.size} entries for {nodes} nodes; pass one value or one per node"
        )
    return array


@dataclass(frozen=True)
class GeometricSchedule:
    """eta_i(t) = initial_i * growth_i^(t-1), as in §5.1 of the M-ADMM paper.

    ``initial`` and ``growth`` are one value for every node or one per node.
    """

    initial: float | tuple[float, ...]
    growth: float | tuple[float, ...] = 1.0

    def table(self, iterations: int, nodes: int) -> np.ndarray:
        """Return the (T, N) table of values for t = 1..T."""
        initial = _per_node("initial", self.initial, nodes)
        growth = _per_node("growth", self.growth, nodes)
        powers = np.arange(iterations, dtype=np.float64)[:, None]
        return initial[None, :] * growth[None, :] ** powers


@dataclass(frozen=True)
class ExpressionSchedule:
    """A schedule written as a formula in ``t`` (iteration, 1-based) and ``i`` (node, 1-based).

    Example: ``"0.5*1.1^(t-1)"`` is eta(t) = 0.5 * 1.1^(t-1) for every node. Read by the
    safe grammar of :mod:`admmcheck.foundations.formulas` (never evaluated as Python); ``^`` means
    power and ``k`` is accepted for ``t`` (R-ADMM counts its odd iterations k = 1..K).
    """

    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "_formula", parse_formula(self.text))  # fail at construction

    def table(self, iterations: int, nodes: int, name: str = "schedule") -> np.ndarray:
        """Return the (T, N) table of values for t = 1..T and i = 1..N (finite and positive)."""
        return self._formula.values(iterations, nodes, name)


def parse_schedule(text: str, allow_infinite: bool = False) -> "ScheduleLike":
    """Read a command-line schedule: a number, comma-separated per-node values, or a formula.

    Per-node values may be constant formulas ("1/3, 0.5"). ``inf`` (alone, or as one
    per-node value) is accepted only with ``allow_infinite`` (alpha: no noise).
    """
    parts = split_top_level(text)
    if len(parts) == 1 and not _is_infinity(parts[0]):
        formula = parse_formula(parts[0])
        if formula.variables:
            return ExpressionSchedule(parts[0])
    values = []
    for part in parts:
        if _is_infinity(part):
            if not allow_infinite:
                raise InvalidFormula(f"{text!r}: inf is allowed only for the noise parameter alpha (no noise)")
            values.append(math.inf)
        else:
            values.append(parse_positive(part))
    return values[0] if len(values) == 1 else tuple(values)


def parse_positive(text: str) -> float:
    """A finite positive float from a number or constant formula (schedule entries, step sizes)."""
    value = parse_number(text)
    if value <= 0:
        raise InvalidFormula(f"{text!r} = {value!r} must be positive")
    return value


def describe_schedule(schedule: "ScheduleLike") -> object:
    """A JSON-ready description of ``schedule``: a number, a list, a formula's text or a dict."""
    if isinstance(schedule, ExpressionSchedule):
        return schedule.text
    if isinstance(schedule, GeometricSchedule):
        return {"initial": schedule.initial, "growth": schedule.growth}
    array = np.asarray(schedule, dtype=np.float64)
    return float(array) if array.ndim == 0 else array.tolist()


def _is_infinity(text: str) -> bool:
    return text.strip().lower() in ("inf", "+inf", "infinity", "∞")


ScheduleLike = Union[float, Sequence[float], np.ndarray, GeometricSchedule, ExpressionSchedule]


def schedule_table(
    name: str,
    schedule: ScheduleLike,
    iterations: int,
    nodes: int,
    allow_infinite: bool = False,
) -> np.ndarray:
    """Resolve ``schedule`` to a (T, N) table of positive values.

    Accepts a scalar (constant for all nodes and iterations), a length-N sequence
    (constant per node), a (T, N) array, a :class:`GeometricSchedule` or an
    :class:`ExpressionSchedule`. Values must be
    finite unless ``allow_infinite`` (used for noise parameters alpha, where +inf means
    "no noise").
    """
    if isinstance(schedule, ExpressionSchedule):
        table = schedule.table(iterations, nodes, name)
    elif isinstance(schedule, GeometricSchedule):
        table = schedule.table(iterations, nodes)
    else:
        array = np.asarray(schedule, dtype=np.float64)
        if array.ndim == 0 or array.shape == (nodes,):
            table = np.broadcast_to(array, (iterations, nodes)).copy()
        elif array.shape == (iterations, nodes):
            table = array.copy()
        else:
            raise InvalidConfiguration(
                f"{name} has shape {array.shape}; pass a scalar, one value per node "
                f"({nodes},), or a table ({iterations}, {nodes}) for t = 1..T"
            )
    finite = np.isfinite(table) | (allow_infinite & np.isposinf(table))
    bad = ~finite | ~(table > 0)
    if np.any(bad):
        row, col = (int(v) for v in np.argwhere(bad)[0])
        kind = "positive (inf = no noise)" if allow_infinite else "finite and positive"
        raise InvalidConfiguration(
            f"{name} must be {kind} in every iteration; it is {float(table[row, col])} at t={row + 1}, i={col + 1}"
        )
    table.setflags(write=False)
    return table


def step_schedule(name: str, value: ScheduleLike, iterations: int, minimum: float | None = None) -> np.ndarray:
    """A step-size parameter per t = 1..T, the same for every node: a number (> 0, or >= ``minimum``
    when given), a length-T sequence, a (T, 1) table or a GeometricSchedule with one initial
    value and one growth (schedule values > 0)."""
    if np.ndim(value) == 0 and not hasattr(value, "table"):
        number = real(name, value) if minimum is None else real(name, value, minimum=minimum, strict=False)
        return np.full(iterations, number)
    array = np.asarray(value, dtype=float) if not hasattr(value, "table") else None
    if array is not None and array.shape == (iterations,):
        value = array[:, None]
    table = schedule_table(name, value, iterations, 1)
    return table[:, 0]
