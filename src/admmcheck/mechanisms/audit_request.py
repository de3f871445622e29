"""The request of an audit of a registered mechanism (:class:`MechanismAudit`): what ``admmcheck audit NAME``,
:func:`admmcheck.testing.assert_private`, ``admmcheck verify`` and :func:`admmcheck.strategies.mechanism_audits`
build and :func:`admmcheck.commands.audit.run_mechanism_audit` runs. It lies below the command layer so that the
public strategies can draw it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from admmcheck.audit.running.settings import AuditSettings, SearchSettings
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.output import output_file
from admmcheck.mechanisms.registry import REGISTRY, MechanismSpec


@dataclass(frozen=True)
class MechanismAudit:
    """An audit of a registered mechanism of any family on its family's ``setting`` (default: the family's audit
    setting, :attr:`~admmcheck.mechanisms.settings.FamilySetting.DEFAULTS`), against its claim
    (``spec.auditable``). The neighbours are of kind ``neighbours`` (default the spec's first) and change the
    data at ``where`` (a record ``(node, index)``, a row ``(party, row)``, a round ``t0``: one of the places the
    spec's ``candidates`` lists), or, with ``where`` None, where the neighbour search finds them (budget
    ``neighbour_search``, default the registered one; given with ``where``, it is refused: nothing is searched).
    ``settings`` default to the mechanism's registered audit
    settings seeded by the setting's seed; ``white_box`` adds the spec's white box on the audited pair
    (``white_box_search``: its worst-case search; ``plot``: its figure)."""

    mechanism: str = "pp"
    setting: Any = None
    neighbours: str | None = None
    where: Any = None
    settings: AuditSettings | None = None
    neighbour_search: SearchSettings | None = None
    white_box: bool = False
    white_box_search: bool = False
    plot: str | None = None

    def __post_init__(self) -> None:
        spec = self.spec
        if self.setting is None:
            object.__setattr__(self, "setting", spec.setting_type.defaults("audit"))
        elif not isinstance(self.setting, spec.setting_type):
            raise InvalidConfiguration(f"setting is a {type(self.setting).__name__}; {self.mechanism} reads a "
                                       f"{spec.setting_type.__name__}", parameter="setting")
        if self.neighbours is None:
            object.__setattr__(self, "neighbours", spec.neighbour_kinds[0])
        if self.neighbours not in spec.neighbour_kinds:
            raise InvalidConfiguration(f"neighbours={self.neighbours!r}: choose {' or '.join(spec.neighbour_kinds)} "
                                       f"for {self.mechanism}", parameter="neighbours")
        if (self.white_box_search or self.plot) and not self.white_box:
            raise InvalidConfiguration(f"{'white_box_search' if self.white_box_search else 'plot'} needs the white "
                                       "box (white_box)", parameter="white_box_search" if self.white_box_search
                                       else "plot")
        if self.white_box:
            spec.require("white_box")
        if self.plot is not None:
            output_file(self.plot, "plot")
        if self.settings is None:
            object.__setattr__(self, "settings", spec.audit.but(seed=self.setting.seed))
        if self.where is not None and self.neighbour_search is not None:
            raise InvalidConfiguration("neighbour_search is the neighbour search's budget, but the place of the "
                                       "neighbours is given: nothing is searched; remove one of them",
                                       parameter="neighbour_search")
        if self.neighbour_search is None and self.where is None:
            object.__setattr__(self, "neighbour_search", spec.search)

    @property
    def spec(self) -> MechanismSpec:
        return REGISTRY.mechanism(self.mechanism)
