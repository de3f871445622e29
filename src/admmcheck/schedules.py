"""Per-node parameter schedules such as the private penalties eta_i(t) of M-ADMM.

A schedule is turned into a table of shape (T, N) whose row ``t - 1`` holds the values
used in iteration t (t = 1..T), e.g. eta_i(t) in eq. (10) of the M-ADMM paper.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, Union

import numpy as np

from admmcheck.errors import InvalidConfiguration


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

    Example: ``"0.5*1.1^(t-1)"`` is eta(t) = 0.5 * 1.1^(t-1) for every node. Parsed by
    sympy (``^`` means power); ``k`` is accepted for ``t`` (R-ADMM counts its odd
    iterations k = 1..K); any other free symbol is an error.
    """

    text: str

    def __post_init__(self) -> None:
        self._function()  # fail at construction, with the message below

    def _function(self):
        import sympy

        t, i = sympy.symbols("t i")
        try:
            expression = sympy.sympify(self.text, locals={"t": t, "i": i, "k": t})
        except (sympy.SympifyError, SyntaxError, TypeError) as exc:
            raise InvalidConfiguration(
                f"cannot read the schedule {self.text!r}; write a number, a comma-separated "
                "list (one per node) or a formula in t and i such as 0.5*1.1^(t-1)"
            ) from exc
        unknown = {str(s) for s in getattr(expression, "free_symbols", set())} - {"t", "i"}
        if unknown:
            raise InvalidConfiguration(
                f"the schedule {self.text!r} uses {', '.join(sorted(unknown))}; only t (iteration) "
                "and i (node), both counted from 1, are allowed"
            )
        return sympy.lambdify((t, i), expression, "numpy")

    def table(self, iterations: int, nodes: int) -> np.ndarray:
        """Return the (T, N) table of values for t = 1..T and i = 1..N."""
        t = np.arange(1, iterations + 1, dtype=np.float64)[:, None]
        i = np.arange(1, nodes + 1, dtype=np.float64)[None, :]
        with np.errstate(all="ignore"):
            values = self._function()(t, i)
        return np.broadcast_to(np.asarray(values, dtype=np.float64), (iterations, nodes)).copy()


def parse_schedule(text: str) -> "ScheduleLike":
    """Read a command-line schedule: a number, comma-separated per-node values, or a formula."""
    parts = [part.strip() for part in text.split(",")]
    try:
        values = tuple(float(part) for part in parts)
    except ValueError:
        return ExpressionSchedule(text)
    return values[0] if len(values) == 1 else values


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
    if isinstance(schedule, (GeometricSchedule, ExpressionSchedule)):
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
    if not np.all(finite) or np.any(table <= 0):
        kind = "positive (inf = no noise)" if allow_infinite else "finite and positive"
        raise InvalidConfiguration(f"{name} must be {kind} in every iteration")
    table.setflags(write=False)
    return table
