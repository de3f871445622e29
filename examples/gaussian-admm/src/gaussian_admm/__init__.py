"""A private consensus ADMM for admmcheck, registered through the entry point ``admmcheck.plugins``.

admmcheck calls :func:`register` with its registry the first time it looks a name up.
"""

from __future__ import annotations

__all__ = ["register"]


def register(registry) -> None:
    """Register ``gaussian-admm`` (consensus: clipped updates, Gaussian noise, an (ε, 1e-5) claim) with admmcheck's
    ``registry``, and ``gaussian-admm-quiet``, a deliberately broken copy (one hundredth of the noise its claim is
    for) that its tests show admmcheck catching."""
    from gaussian_admm.variant import BROKEN, SPEC

    registry.register(SPEC)
    registry.register(BROKEN)
