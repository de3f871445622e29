"""Writing results: output paths checked before the work starts, atomic writes, strict JSON.

* :func:`output_file` / :func:`output_folder` check that a result can be written *before*
  a long computation runs, and say what to change when it cannot.
* :func:`write_atomic` writes to a temporary file beside the target and renames it, so a
  crash never leaves a half-written result in place of the previous one.
* :func:`to_json` writes strict JSON: JSON has no infinity or NaN, so every non-finite
  number is written as ``null`` and its place is listed under ``"non_finite"`` with
  ``"inf"``, ``"-inf"`` or ``"nan"`` (e.g. ``{"beta": null, ..., "non_finite": {"beta": "inf"}}``).
"""

from __future__ import annotations

import json
import unicodedata
import math
import os
import tempfile
from pathlib import Path
from typing import Callable, IO

import numpy as np

from admmcheck.foundations.errors import OutputError


def _refuse(message: str, name: str) -> OutputError:
    """The error for the path given as ``name``; ``message`` starts with ``name``."""
    return OutputError(message, parameter=None if name.startswith("-") else name)


def _probe(folder: Path, path: Path, name: str) -> None:
    """Create and remove a file in ``folder`` (permission checks alone are wrong for root)."""
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".admmcheck-probe-"):
            pass
    except OSError as exc:
        where = "there" if path == folder else f"in {folder}"
        raise _refuse(f"{name} {path}: cannot write {where} ({exc.strerror or exc}); choose a writable place",
                      name) from None


def output_file(path: str | Path, name: str) -> Path:
    """``path`` as a Path after checking its folder exists and a file can be written there.

    ``name`` is the parameter that gave ``path`` (``export_problem``); the errors start with it and
    carry it as their ``parameter``, so the command line can say it as its flag."""
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        raise _refuse(f"{name} {target} is a folder; give a file name, e.g. {target / 'problem.npz'}", name)
    if not folder.exists():
        raise _refuse(f"{name} {target}: the folder {folder} does not exist; create it first or choose another path",
                      name)
    if not folder.is_dir():
        raise _refuse(f"{name} {target}: {folder} is a file, not a folder; choose another path", name)
    _probe(folder, target, name)
    return target


def output_folder(path: str | Path, name: str) -> Path:
    """``path`` as a Path after creating it (with parents) and checking files can be written in it;
    ``name`` as for :func:`output_file` (``out``)."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise _refuse(f"{name} {folder} is a file, not a folder; choose another path", name)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _refuse(f"{name} {folder}: cannot create the folder ({exc.strerror or exc}); choose another path",
                      name) from None
    _probe(folder, folder, name)
    return folder


def write_atomic(path: str | Path, write: Callable[[IO[bytes]], None]) -> Path:
    """Call ``write(handle)`` on a temporary file beside ``path``, then rename it to ``path``; the file
    gets the permissions of any new file under the user's umask (0644 under the usual 022)."""
    target = Path(path)
    try:
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            os.fchmod(handle, 0o666 & ~_umask())  # mkstemp's private 0600 would outlive the rename
            with os.fdopen(handle, "wb") as stream:
                write(stream)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise OutputError(f"cannot write {target} ({exc.strerror or exc}); choose a writable place") from None
    return target


def _umask() -> int:
    """The process's file-creation mask (read by setting it, then restoring it at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return write_atomic(path, lambda stream: stream.write(text.encode("utf-8")))


def to_json(document: object, indent: int | None = None) -> str:
    """Strict JSON text of ``document``; non-finite numbers become null, listed under "non_finite"."""
    non_finite: dict[str, str] = {}
    clean = _clean(document, "", non_finite)
    if non_finite and isinstance(clean, dict):
        clean["non_finite"] = non_finite
    return json.dumps(clean, indent=indent, allow_nan=False)


def _clean(value: object, where: str, non_finite: dict[str, str]) -> object:
    if isinstance(value, dict):
        return {key: _clean(item, f"{where}.{key}" if where else str(key), non_finite) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(item, f"{where}[{k}]", non_finite) for k, item in enumerate(value)]
    if isinstance(value, np.ndarray):
        return _clean(value.tolist(), where, non_finite)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isfinite(number):
            return number
        non_finite[where] = "nan" if math.isnan(number) else ("inf" if number > 0 else "-inf")
        return None
    return value


def stdout_reader_gone() -> bool:
    """Whether stdout is a pipe whose reader has gone (poll reports an error on its write end): ``admmcheck run ...
    | head`` closing early is not an error of ours."""
    import select
    import sys

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def printable(text: str, keep_newlines: bool = False) -> str:
    """``text`` with every control character shown as its escape (``\\x1b``, ``\\r``, ``\\n`` unless
    ``keep_newlines``) instead of acting on a terminal: text that comes from code under audit (its exception
    messages, what it printed) can neither erase a line nor fake a verdict."""
    def shown(character: str) -> str:
        if character == "\n" and keep_newlines:
            return character
        if character in "\n\r\t":
            return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[character]
        return f"\\x{ord(character):02x}" if ord(character) < 0x100 else f"\\u{ord(character):04x}"

    return "".join(shown(c) if unicodedata.category(c) in ("Cc", "Cf") and c != " " else c for c in text)
