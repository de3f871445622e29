"""A private online variant for admmcheck, registered through the entry point ``admmcheck.plugins``.

admmcheck calls :func:`register` with its registry the first time it looks a name up.
"""

from __future__ import annotations

__all__ = ["register"]


def register(registry) -> None:
    """Register ``gaussian-dual-averaging`` (online: clipped gradients, Gaussian messages, a zCDP claim) with
    admmcheck's ``registry``, and ``gaussian-dual-averaging-quiet``, a deliberately broken copy (one hundredth of the
    noise its claim is for) that its tests show admmcheck catching."""
    from online_variant.variant import BROKEN, SPEC

    registry.register(SPEC)
    registry.register(BROKEN)
