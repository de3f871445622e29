"""Two private ADMM variants for admmcheck, registered through the entry point ``admmcheck.plugins``.

admmcheck calls :func:`register` with its registry the first time it looks a name up.
"""

from __future__ import annotations

__all__ = ["register"]


def register(registry) -> None:
    """Register ``noisy-admm`` (consensus) and ``clipped-sharing`` (sharing) with admmcheck's ``registry``, and
    ``quiet-admm``, a deliberately broken variant (one hundredth of the noise its claim is for) that its tests
    show admmcheck catching."""
    from noisy_variants.clipped_sharing import SPEC as CLIPPED_SHARING
    from noisy_variants.noisy_admm import BROKEN, SPEC as NOISY_ADMM

    registry.register(NOISY_ADMM)
    registry.register(CLIPPED_SHARING)
    registry.register(BROKEN)
