"""The command line's flags, generated from the parameter fields of a setting (:mod:`admmcheck.foundations.parameters`):
one flag per field, its help, unit and default from the field, and a value that reaches a configuration only when the
user types it (:class:`Typed`: stored in the group it belongs to, never read back from a naming convention). The
argument readers turn a bad value into argparse's one-line message. Nothing here knows a command or an algorithm."""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Callable, Sequence

from admmcheck.foundations.errors import AdmmcheckError, InvalidConfiguration
from admmcheck.foundations.formulas import parse_number
from admmcheck.foundations.parameters import flag_fields, flag_of
from admmcheck.foundations.validation import positive_int


class Typed(argparse.Action):
    """Stores what the user typed for a field under its ``group`` (``setting``, ``audit``, ...) in
    ``namespace.typed``; ``switch`` makes it a flag without a value (True when given)."""

    def __init__(self, option_strings: Sequence[str], dest: str, group: str = "setting", switch: bool = False,
                 **kwargs: object) -> None:
        self.group = group
        if switch:
            kwargs.update(nargs=0, const=True)
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        typed = vars(namespace).setdefault("typed", {})
        typed.setdefault(self.group, {})[self.dest] = self.const if self.nargs == 0 else values


def typed_values(args: argparse.Namespace) -> defaultdict[str, dict[str, object]]:
    """The values the user typed, by group (an empty dict for a group with none)."""
    return defaultdict(dict, {group: dict(values) for group, values in vars(args).get("typed", {}).items()})


def argument_type(read: Callable[[str], object], expected: str) -> Callable[[str], object]:
    """An argparse type that turns an admmcheck error into argparse's one-line message."""
    def convert(text: str) -> object:
        try:
            return read(text)
        except AdmmcheckError as exc:
            raise argparse.ArgumentTypeError(f"{exc} ({expected})") from None
    convert.__name__ = expected
    return convert


def expected(read: Callable[[str], object]) -> str:
    """What a flag read by ``read`` takes, in words (argparse's message for a bad value)."""
    if read is parse_number:
        return "a number such as 0.5 or 1/4"
    return (read.__doc__ or "a value").strip().splitlines()[0].rstrip(".")


POSITIVE_INT = argument_type(lambda text: positive_int("--iterations", int(text) if text.strip().lstrip("-").isdigit()
                                                       else text), "a whole number >= 1")


def place(text: str) -> tuple[int, int]:
    """Two whole numbers as A:B (a record of a node, a row of a party)."""
    parts = text.split(":")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: write two whole numbers as A:B, e.g. 0:3")
    return int(parts[0]), int(parts[1])


def whole(text: str) -> int:
    """A whole number."""
    if not text.strip().isdigit():
        raise InvalidConfiguration(f"{text!r} is not a whole number")
    return int(text)


def names(text: str) -> tuple[str, ...]:
    """``--only pp,dvp``: the comma-separated names, each non-empty."""
    found = tuple(name.strip() for name in text.split(","))
    if not all(found):
        raise argparse.ArgumentTypeError(f"{text!r}: give registered names separated by commas, e.g. pp,dvp")
    return found


def assignment(text: str) -> tuple[str, str, str]:
    """``NAME.FIELD=VALUE`` (of ``verify --set``) as (NAME, FIELD, VALUE) (FIELD as its field or its flag's name)."""
    target, equals, value = text.partition("=")
    name, dot, field_name = target.rpartition(".")
    if not (equals and dot and name and field_name):
        raise argparse.ArgumentTypeError(f"{text!r}: write NAME.FIELD=VALUE, e.g. my-variant.samples=4")
    return name, field_name.replace("-", "_"), value


def grouped(assignments: Sequence[tuple[str, str, str]]) -> dict[str, dict[str, str]]:
    """Repeated :func:`assignment` values as {NAME: {FIELD: VALUE}}."""
    found: dict[str, dict[str, str]] = {}
    for name, field_name, value in assignments:
        found.setdefault(name, {})[field_name] = value
    return found


def option(parser: argparse.ArgumentParser, flag: str, default: object, help: str, **kwargs: object) -> None:
    """A flag whose value reaches the configuration only when typed (default shown in --help)."""
    shown = ",".join(str(v) for v in default) if isinstance(default, tuple) else default
    suffix = "" if default is None else f" (default: {shown})"
    if kwargs.get("action") is Typed and not kwargs.get("switch") and "choices" not in kwargs:
        kwargs.setdefault("metavar", flag.lstrip("-").upper().replace("-", "_"))  # --theta THETA
    parser.add_argument(flag, default=argparse.SUPPRESS, help=help + suffix, **kwargs)


def setting_flags(parser: argparse.ArgumentParser, setting_type: type, command: str, spec: object = None,
                  skip: tuple[str, ...] = (), defaults: object = None, group: str = "setting") -> None:
    """One flag per field of ``setting_type`` that ``command`` offers (an algorithm parameter only where ``spec``
    reads it), its help, unit and default from the field (default: ``setting_type.DEFAULTS[command]`` where the type
    names its commands' defaults, else the field's own); the value reaches ``group`` only when typed
    (:func:`typed_values`)."""
    if defaults is None and hasattr(setting_type, "DEFAULTS"):
        defaults = setting_type.defaults(command)
    for item in flag_fields(setting_type, command):
        meta = item.metadata
        if item.name in skip:
            continue
        flag = flag_of(item)
        text = meta["help"] + (f" [{meta['unit']}]" if meta["unit"] else "")
        read = meta["read"]
        kind = {"action": Typed, "group": group, "dest": item.name}
        if read is not None:
            kind["type"] = read if read is int else argument_type(read, expected(read))
        if meta["algorithm_parameter"] and (spec is None or item.name not in spec.parameters):
            # not read by this algorithm: accepted only to be refused by the setting with the flags it reads
            parser.add_argument(flag, default=argparse.SUPPRESS, help=argparse.SUPPRESS, **kind)
            continue
        if item.type == "bool":
            option(parser, flag, None, text, action=Typed, group=group, dest=item.name, switch=True)
            continue
        if meta["choices"]:
            kind["choices"] = meta["choices"]
        option(parser, flag, item.default if defaults is None else getattr(defaults, item.name), text, **kind)
