"""Privacy audits from one run: canaries, each included with probability ½, guessed on what one run releases.

:mod:`.bounds` turns the guesses into lower bounds: ε of Steinke, Nasr & Jagielski (2023) and the Gaussian-DP μ (or
any hypothesised trade-off curve) of Mahloujifar, Melis & Chaudhuri (2025). Names are imported on first use.
"""

from admmcheck.foundations.lazy import lazy_exports

_HOMES = {
    "admmcheck.audit.one_run.bounds": ("epsilon_lower_bound", "gaussian_dp_lower_bound", "one_run_p_value",
                                       "trade_off_rejected"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _HOMES)
