"""Black-box privacy audits: does a mechanism really give the (ε, δ)-DP it claims?

``audit(mechanism, neighbours, claim, samples=...)`` draws outputs on neighbouring datasets in
worker processes, chooses distinguishing events on one split of them and bounds ε from below on
the other with exact Clopper-Pearson intervals. See :mod:`admmcheck.audit.inputs.contract` for what a
mechanism and its neighbours are. Names are imported on first use, so an audit worker process
loads only the sampling engine.
"""

from admmcheck.foundations.lazy import lazy_exports

_HOMES = {
    "admmcheck.audit.auditor": ("AuditResult", "audit"),
    "admmcheck.audit.inputs.contract": ("Pair", "Pairs", "PrivacyClaim", "vectorised"),
    "admmcheck.audit.inputs.outputs": ("Layout", "encode_output"),
    "admmcheck.audit.running.sampling": ("Source", "sample_generator"),
    "admmcheck.audit.running.settings": ("AuditSettings",),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _HOMES)
