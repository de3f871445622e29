"""Argument checks shared by the algorithms; each error names the argument and the fix."""

from __future__ import annotations

import math

import numpy as np

from admmcheck.errors import InvalidConfiguration


def positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int >= 1 or raise :class:`InvalidConfiguration`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidConfiguration(f"{name}={value!r} must be a positive integer")
    return int(value)


def real(name: str, value: object, minimum: float = 0.0, strict: bool = True) -> float:
    """Return ``value`` as a finite float above ``minimum`` (or at least it, if not strict)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise InvalidConfiguration(f"{name}={value!r} is not a number")
    value = float(value)
    ok = value > minimum if strict else value >= minimum
    if not math.isfinite(value) or not ok:
        bound = ">" if strict else ">="
        raise InvalidConfiguration(f"{name}={value!r} must be finite and {bound} {minimum:g}")
    return value
