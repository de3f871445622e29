"""Typed fields that carry their help: :func:`parameter` is a dataclass field whose metadata (help text, unit, how
its flag's text is read, the flag's spelling, its choices) the command line builds its flags from, so that a
setting, its validation and its command-line flag are written once, in the setting. Every settings type uses it:
the families' (:mod:`admmcheck.mechanisms.settings`), the audit's (:mod:`admmcheck.audit.running.settings`), the
convergence conditions' (:mod:`admmcheck.mechanisms.conditions`)."""

from __future__ import annotations

from dataclasses import Field, field, fields
from typing import Any, Callable


def parameter(default: object, help: str, unit: str = "", *, read: Callable[[str], object] | None = None,
              flag: str | None = None, choices: tuple[str, ...] | None = None,
              algorithm_parameter: bool = False, commands: tuple[str, ...] | None = None,
              none: str | None = None) -> Any:
    """A setting field with its ``help`` text and ``unit`` (what the number counts, if anything) as metadata, which
    the command line builds its flags from: ``read`` turns the text of its flag into a value (default: the text),
    ``flag`` spells the flag where it is not ``--name-with-dashes``, ``choices`` are its only values;
    ``algorithm_parameter``: only the algorithms whose spec lists it in ``parameters`` read it (a value given for
    another is refused); ``commands``: the only commands that offer it (default: every command); ``none``: the word
    its flag reads as None, and writes None as (:func:`as_flags`), for a field whose None means something."""
    if none is not None:
        read = _or_none(read or str, none)
    return field(default=default, metadata={"help": help, "unit": unit, "read": read, "flag": flag,
                                            "choices": choices, "algorithm_parameter": algorithm_parameter,
                                            "commands": commands, "none": none})


def _or_none(read: Callable[[str], object], word: str) -> Callable[[str], object]:
    """``read``, with ``word`` read as None."""
    def reading(text: str) -> object:
        return None if text.strip() == word else read(text)

    what = "a whole number" if read is int else (read.__doc__ or "a value").strip().splitlines()[0].rstrip(".")
    reading.__doc__ = f"{what}, or {word}"  # what the flag's error says it takes
    return reading


def flag_of(item: Field) -> str:
    """The command-line spelling of a field: its ``flag``, else ``--name-with-dashes``."""
    return item.metadata.get("flag") or "--" + item.name.replace("_", "-")


def flag_fields(setting_type: type, command: str) -> list[Field]:
    """The fields of ``setting_type`` that ``command`` offers as flags (those with help, and of ``commands`` the
    field names, ``command``)."""
    return [item for item in fields(setting_type) if "help" in item.metadata
            and command in (item.metadata["commands"] or (command,))]


def as_flags(setting: Any, defaults: Any = None, skip: tuple[str, ...] = ()) -> list[str]:
    """The command-line words that give ``setting`` where it differs from ``defaults`` (an instance of the same
    type; None: each field's own default): ``--flag value`` (a tuple as ``a,b``), a true boolean as ``--flag``."""
    words = []
    for item in fields(setting):
        if "help" not in item.metadata or item.name in skip:
            continue
        value = getattr(setting, item.name)
        default = item.default if defaults is None else getattr(defaults, item.name)
        if value == default:
            continue
        flag = flag_of(item)
        if isinstance(value, bool):
            words += [flag] if value else []
        elif value is None and item.metadata.get("none"):
            words += [flag, item.metadata["none"]]
        else:
            words += [flag, ",".join(map(str, value)) if isinstance(value, tuple) else str(value)]
    return words
