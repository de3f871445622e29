"""Black-box privacy audits: does a mechanism really give the (ε, δ)-DP it claims?

``audit(mechanism, neighbours, claim, samples=...)`` draws outputs on neighbouring
datasets in worker processes, chooses distinguishing events on one split of them and
bounds ε from below on the other with exact Clopper-Pearson intervals. See
:mod:`admmcheck.audit.contract` for what a mechanism is.
"""

from admmcheck.audit.auditor import AuditResult, audit
from admmcheck.audit.contract import Layout, Pair, Pairs, PrivacyClaim, flatten_output, vectorised
from admmcheck.audit.sampling import Source, sample_generator

__all__ = ["AuditResult", "Layout", "Pair", "Pairs", "PrivacyClaim", "Source", "audit", "flatten_output", "sample_generator",
           "vectorised"]
