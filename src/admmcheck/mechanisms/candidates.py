"""The candidate neighbour pairs of one of our registered mechanisms, for the neighbour search.

Our reference audits used to change record 0 of node 0 (row 0 of party 0, a round given by hand).
A leak that shows only for one record is missed that way, so each registry entry
(:class:`~admmcheck.mechanisms.registry.MechanismSpec`) says where a change can be made
(``candidates(problem, kind)``: every record of every node, every row of every party, every round;
``influences(where, iterations)`` keeps those whose change can move the release: not DPSDA's last round),
and :class:`RegisteredPairs` builds the pair at each place with the entry's own ``neighbours``, only
when a worker asks for it. :func:`~admmcheck.audit.search.search_audit` screens them and bounds the
chosen ones, with the search paid for inside the confidence.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from admmcheck.audit.inputs.contract import Pair, PairSequence
from admmcheck.audit.inputs.neighbourhoods import at_most


class RegisteredPairs(PairSequence):
    """``neighbours(problem, where, kind)`` at each ``where`` of ``wheres`` (a subset of ``total`` places),
    each change named in ``places`` (e.g. "record 3 of node 1: label-flip"). ``neighbours`` must be a module-level function:
    the pairs travel to the workers by pickle."""

    def __init__(self, neighbours: Callable[..., tuple[Any, Any]], problem: Any, kind: str, wheres: Sequence[Any],
                 places: Sequence[str], total: int) -> None:
        self.neighbours, self.problem, self.kind = neighbours, problem, kind
        self.wheres, self.places, self.total = tuple(wheres), tuple(places), total

    def __len__(self) -> int:
        return len(self.wheres)

    def __getitem__(self, index: int) -> Pair:
        return Pair(*self.neighbours(self.problem, self.wheres[index], self.kind))

    def describe(self, index: int) -> dict[str, object]:
        where = self.wheres[index]
        return {"where": list(where) if isinstance(where, tuple) else where, "kind": self.kind,
                "change": self.places[index]}


def registered_pairs(neighbours: Callable[..., tuple[Any, Any]], problem: Any, kind: str, wheres: Sequence[Any],
                     place: Callable[[Any], str], most: int, seed: int) -> RegisteredPairs:
    """:class:`RegisteredPairs` at ``wheres``, or at a seeded ``most`` of them when there are more;
    ``place(where)`` names each change in words."""
    kept = at_most(list(wheres), most, seed)
    return RegisteredPairs(neighbours, problem, kind, kept, [place(w) for w in kept], len(wheres))
