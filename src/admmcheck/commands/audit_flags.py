"""What the typed flags of ``admmcheck audit TARGET`` ask for, as configurations: a third-party audit
(:func:`code_audit`), a one-run audit of third-party training (:func:`canary_audit`) or of a registered mechanism
(:func:`mechanism_canary_audit`), and a registered mechanism's audit (:func:`mechanism_audit`). ``typed`` holds the
values the user typed, by group (``code``, ``audit``, ``search``, ``request``, ``canaries``, ``setting``); nothing is
parsed or printed here."""

from __future__ import annotations

from typing import Any, Mapping

from admmcheck.audit.running.settings import AuditSettings, SearchSettings
from admmcheck.commands.audit import CodeAuditConfig
from admmcheck.commands.canary_audit import CanaryAuditConfig
from admmcheck.foundations.validation import config_from_flags
from admmcheck.mechanisms.audit_request import MechanismAudit

Typed = Mapping[str, Mapping[str, object]]

#: The parameters whose flag is not ``--`` and their name with dashes, for error messages that name a parameter.
FLAG_OF = {"neighbours": "--neighbour-kind", "where": "the place", "samples": "--samples",
           "neighbour_search": "--search-candidates, --search-samples or --search-keep", "white_box_search": "--search",
           "widths": "--features", "step_epsilon": "--step-epsilon"}


def code_audit(typed: Typed) -> CodeAuditConfig:
    """``admmcheck audit code``: the mechanism, neighbours and claim, the audit settings and the search's budget."""
    search = SearchSettings().but(**typed["search"]) if typed["search"] else None
    return config_from_flags(CodeAuditConfig, dict(typed["code"]) | {"settings": AuditSettings().but(**typed["audit"]),
                                                                     "neighbour_search": search})


def canary_audit(typed: Typed) -> CanaryAuditConfig:
    """``admmcheck audit canaries``: the training, its records, canaries and claim, and the audit settings."""
    return config_from_flags(CanaryAuditConfig, dict(typed["code"]) | {"settings": AuditSettings().but(**typed["audit"])})


def mechanism_setting(spec: Any, typed: Typed) -> Any:
    """The setting a registered mechanism's audit runs on (``--seed`` seeds its data as well as its samples)."""
    seed = {"seed": typed["audit"]["seed"]} if "seed" in typed["audit"] else {}
    return spec.setting_type.for_algorithm(spec, "audit", dict(typed["setting"]) | seed)


def mechanism_audit(spec: Any, typed: Typed) -> MechanismAudit:
    """``admmcheck audit NAME``: the registered mechanism on its setting, its neighbours and the search's budget."""
    setting = mechanism_setting(spec, typed)
    search = spec.search.but(**typed["search"]) if typed["search"] else None
    return MechanismAudit(spec.name, setting, neighbour_search=search,
                          settings=spec.audit.but(seed=setting.seed).but(**typed["audit"]), **typed["request"])
