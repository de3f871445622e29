"""The problem families, one module each, all following one protocol (:class:`~admmcheck.mechanisms.families.base.Family`):
:data:`CONSENSUS` (:mod:`~admmcheck.mechanisms.families.consensus`), :data:`SHARING`
(:mod:`~admmcheck.mechanisms.families.sharing`) and :data:`ONLINE` (:mod:`~admmcheck.mechanisms.families.online`).
What differs between families lives here and nowhere else: the registry, the commands and the report ask a spec's
family."""

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.mechanisms.families.base import Family, Statement
from admmcheck.mechanisms.families.consensus import CONSENSUS
from admmcheck.mechanisms.families.online import ONLINE
from admmcheck.mechanisms.families.sharing import SHARING

#: every family by name (a spec may give its family's name; it is read once, at registration)
FAMILIES: dict[str, Family] = {family.name: family for family in (CONSENSUS, SHARING, ONLINE)}


def family_named(name: str) -> Family:
    """The family called ``name``, refused with the names there are."""
    if name not in FAMILIES:
        raise InvalidConfiguration(f"family={name!r}: choose one of {', '.join(FAMILIES)}", parameter="family")
    return FAMILIES[name]


__all__ = ["CONSENSUS", "FAMILIES", "ONLINE", "SHARING", "Family", "Statement", "family_named"]
