"""Reading user-given text files (datasets, edge lists) with errors that say what to fix, and JSON that untrusted
code wrote (:func:`json_nesting`) without trusting it."""

from __future__ import annotations

import re
from pathlib import Path

from admmcheck.foundations.errors import AdmmcheckError


def read_text_file(path: str | Path, what: str, error: type[AdmmcheckError], expected: str) -> str:
    """The UTF-8 text of ``path``; a missing, unreadable, binary or NUL-holding file raises ``error``.

    ``what`` names the file in messages ("edge-list file") and ``expected`` says what a
    valid one holds ("one edge 'i j' per line").
    """
    file = Path(path)
    if not file.exists():
        raise error(f"{what} {file} does not exist; check the path")
    if not file.is_file():
        raise error(f"{file} is not a file; pass a {what} with {expected}")
    try:
        text = file.read_bytes().decode("utf-8")
    except OSError as exc:
        raise error(f"cannot read the {what} {file} ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise error(f"{file} is not a text {what} (byte {exc.start} is not UTF-8); it should hold {expected}") from None
    if "\0" in text:
        raise error(f"{file} holds NUL bytes, so it is not a text {what}; it should hold {expected}")
    return text


_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))


def json_nesting(text: bytes | str) -> int:
    """How deep the brackets of a JSON text nest (outside its strings), found before parsing it: a text nested
    100,000 deep would exhaust the parser's recursion (``RecursionError``, not ``ValueError``)."""
    data = text.encode("utf-8", "replace") if isinstance(text, str) else bytes(text)
    depth = deepest = 0
    for bracket in _STRINGS.sub(b"", data).translate(None, _NOT_BRACKETS):
        depth += 1 if bracket in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest
