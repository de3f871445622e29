"""Argument checks shared by the algorithms; each error names the argument and the fix."""

from __future__ import annotations

import math
from dataclasses import MISSING, fields
from typing import Mapping, TypeVar

import numpy as np

from admmcheck.foundations.errors import InvalidConfiguration

Config = TypeVar("Config")


def positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int >= 1 or raise :class:`InvalidConfiguration` naming parameter ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidConfiguration(f"{name}={value!r} must be a positive integer", parameter=name)
    return int(value)


def real(name: str, value: object, minimum: float = 0.0, strict: bool = True) -> float:
    """Return ``value`` as a finite float above ``minimum`` (or at least it, if not strict)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise InvalidConfiguration(f"{name}={value!r} is not a number", parameter=name)
    value = float(value)
    ok = value > minimum if strict else value >= minimum
    if not math.isfinite(value) or not ok:
        bound = ">" if strict else ">="
        raise InvalidConfiguration(f"{name}={value!r} must be finite and {bound} {minimum:g}", parameter=name)
    return value


def non_negative_int(name: str, value: object) -> int:
    """Return ``value`` as an int >= 0 (seeds) or raise :class:`InvalidConfiguration`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InvalidConfiguration(f"{name}={value!r} must be a non-negative integer", parameter=name)
    return int(value)


def one_of(kind: str, value: object, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise naming the choices."""
    if value not in choices:
        raise InvalidConfiguration(f"unknown {kind} {value!r}; choose one of {', '.join(choices)}", parameter=kind)
    return value  # type: ignore[return-value]


def config_from_flags(cls: type[Config], flags: Mapping[str, object]) -> Config:
    """``cls(**flags)`` for the flags a user gave, refusing those that do not apply.

    ``cls.FLAG_NAMES`` maps fields to the flag spelling used in messages (default ``--field-name``),
    also in the errors ``cls`` raises that name a parameter (:class:`InvalidConfiguration` ``.parameter``);
    ``cls.ONLY_FOR``: see :func:`refuse_inapplicable`.
    """
    names: Mapping[str, str] = getattr(cls, "FLAG_NAMES", {})
    known = {f.name for f in fields(cls)}
    for name in flags:
        if name not in known:
            flag = names.get(name, "--" + name.replace("_", "-"))
            raise InvalidConfiguration(f"{flag} does not apply here; remove it (see --help for the flags that do)")
    refuse_inapplicable(cls, flags, {f.name: f.default for f in fields(cls) if f.default is not MISSING})
    try:
        return cls(**flags)
    except InvalidConfiguration as exc:  # the library names its parameter; say it as the flag the user typed
        message = said_as_flag(exc, names)
        if message == str(exc):
            raise
        raise InvalidConfiguration(message) from None


def refuse_inapplicable(cls: type, typed: Mapping[str, object], defaults: Mapping[str, object]) -> None:
    """Refuse a typed field that does not apply: ``cls.ONLY_FOR`` maps a field to ``(selector, values)``, and the
    field applies only when the selector field (typed, else its value in ``defaults``) is one of ``values`` (the
    synthetic data's ``dim`` with ``dataset`` synthetic). The error names the field (``parameter``)."""
    for name, (selector, allowed) in getattr(cls, "ONLY_FOR", {}).items():
        value = typed.get(selector, defaults.get(selector))
        if name in typed and value not in allowed:
            raise InvalidConfiguration(f"{name} does not apply to {value}: it is used only with {selector} "
                                       f"{' or '.join(allowed)}; remove it", parameter=name)


def said_as_flag(exc: Exception, names: Mapping[str, str]) -> str:
    """The message of ``exc`` with the parameter it starts with (``samples=10 ...``, ``epsilon is ...``) said as
    its command-line flag (``--samples 10 ...``): ``names[parameter]``, else ``--`` and the name with dashes."""
    message, parameter = str(exc), getattr(exc, "parameter", None)
    if not parameter or not message.startswith(parameter) or message[len(parameter):][:1] not in ("=", " "):
        return message
    flag = names.get(parameter, "--" + parameter.replace("_", "-"))
    rest = message[len(parameter):]
    return flag + (" " + rest[1:] if rest.startswith("=") else rest)
