"""The papers' privacy-loss bounds and the preconditions under which they hold."""

from admmcheck.privacy.bounds import (
    BoundSetting,
    PrivacyBound,
    pp_alpha_for_target,
    pp_bound,
    radmm_alpha_for_target,
    radmm_bound,
)

__all__ = [
    "BoundSetting", "PrivacyBound", "pp_alpha_for_target", "pp_bound", "radmm_alpha_for_target", "radmm_bound",
]
