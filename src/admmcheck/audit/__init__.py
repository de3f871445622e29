"""Black-box privacy audits: does a mechanism really give the (ε, δ)-DP it claims?

``audit(mechanism, neighbours, claim, samples=...)`` draws outputs on neighbouring datasets in
worker processes, chooses distinguishing events on one split of them and bounds ε from below on
the other with exact Clopper-Pearson intervals. See :mod:`admmcheck.audit.contract` for what a
mechanism and its neighbours are. Names are imported on first use, so an audit worker process
loads only the sampling engine.
"""

from importlib import import_module

_HOMES = {
    "admmcheck.audit.auditor": ("AuditResult", "audit"),
    "admmcheck.audit.contract": ("Pair", "Pairs", "PrivacyClaim", "vectorised"),
    "admmcheck.audit.outputs": ("Layout", "encode_output"),
    "admmcheck.audit.sampling": ("Source", "sample_generator"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_HOME_OF)


def __getattr__(name: str) -> object:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'admmcheck.audit' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
