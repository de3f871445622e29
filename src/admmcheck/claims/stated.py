"""What a theorem states beside its claim value: the type of the object a published mechanism's ``claim(setting)``
returns when its theorem gives more than a claim (its constants, preconditions, the noise scale its algorithm draws,
a regret bound).

A spec's ``claim(setting)`` returns either a claim value (:class:`~admmcheck.claims.values.Claim`: what a plugin
states) or a :class:`TheoremClaim` (the papers' :class:`~admmcheck.privacy.PrivacyBound`,
:class:`~admmcheck.privacy.sharing.SharingPrivacy`, :class:`~admmcheck.privacy.dpsda.DpsdaClaims`). What a theorem
gives beyond its claim is a capability, asked with :meth:`TheoremClaim.supports` and demanded with
:meth:`TheoremClaim.require`, as dp_accounting's accountants ask ``supports(event)``; :func:`gives` asks it of
whatever ``claim(setting)`` returned.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from admmcheck.claims.values import Claim
from admmcheck.foundations.errors import InvalidConfiguration

#: the capabilities a theorem's object may have, and what each is
CAPABILITIES = {
    "sigma": "the scale of the noise its algorithm draws, which a run takes",
    "regret_bound": "a regret bound at T rounds, regret_bound(T)",
}


class TheoremClaim(ABC):
    """A theorem's statement on one setting: its claim (:meth:`as_claim`, refused where its preconditions fail),
    whether its preconditions hold, its figures as JSON (:meth:`as_dict`), and the :attr:`capabilities` it has
    beyond them (:data:`CAPABILITIES`)."""

    theorem: str
    capabilities: ClassVar[frozenset[str]] = frozenset()

    @property
    @abstractmethod
    def holds(self) -> bool:
        """True when every precondition of the theorem holds on the setting."""

    @abstractmethod
    def as_claim(self, source: str = "") -> Claim:
        """The claim the theorem makes, as a value of its notion (``source``: where it comes from)."""

    @abstractmethod
    def as_dict(self, iterations: int) -> dict[str, object]:
        """The theorem's figures at ``iterations`` (its horizon T), as the commands print them in JSON."""

    def supports(self, capability: str) -> bool:
        """Whether the theorem gives ``capability`` (:data:`CAPABILITIES`)."""
        if capability not in CAPABILITIES:
            raise ValueError(f"unknown capability {capability!r}; the known ones are {', '.join(CAPABILITIES)}")
        return capability in self.capabilities

    def require(self, capability: str) -> Any:
        """The theorem's ``capability``, refused with what it is where the theorem gives none."""
        if not self.supports(capability):
            raise InvalidConfiguration(f"{self.theorem} gives no {capability.replace('_', ' ')} "
                                       f"({CAPABILITIES[capability]})", parameter=capability)
        return getattr(self, capability)


def gives(stated: object, capability: str) -> bool:
    """Whether ``stated``, what a spec's ``claim(setting)`` returned, gives ``capability``: a claim value gives none,
    a theorem's object those it :meth:`~TheoremClaim.supports`."""
    return isinstance(stated, TheoremClaim) and stated.supports(capability)
