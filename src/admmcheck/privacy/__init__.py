"""The papers' privacy-loss bounds and the preconditions under which they hold."""

from admmcheck.privacy.bounds import BoundSetting, PrivacyBound, pp_bound, radmm_bound

__all__ = ["BoundSetting", "PrivacyBound", "pp_bound", "radmm_bound"]
