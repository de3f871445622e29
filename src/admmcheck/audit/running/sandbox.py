"""The sandbox the code under audit runs in: ``--sandbox auto|on|off`` (default ``auto``).

Each audit worker's supervisor (:mod:`admmcheck.audit.running.supervisor`) and, under it, the worker that runs the
code, start inside one bubblewrap sandbox (``bwrap``, Debian's ``bubblewrap``: the sandbox of Flatpak, a small
setuid-free program that makes Linux namespaces without root where the kernel allows user namespaces). Inside:

* **no network**: a network namespace of its own, with only a loopback; a socket to anywhere else fails
  (``OSError: [Errno 101] Network is unreachable``);
* **a read-only filesystem**: the machine's files are there read-only (``OSError: [Errno 30] Read-only file
  system`` on a write); the home folders (``/home``, ``/root``, ``$HOME``), ``/tmp``, ``/var/tmp`` and ``/run``
  are replaced by empty private folders in memory (:data:`HIDDEN`), of at most the worker's memory limit, so
  the user's files there cannot be read, and what the code writes into ``/tmp`` or ``$HOME`` is gone with the
  sandbox. The Python environment, the folders on ``sys.path`` and ``PYTHONPATH``, the working folder (unless it
  is one of those folders itself) and the folders of the mechanism's own files stay readable (of a file that lies
  in one of those folders itself, the file alone) (:func:`readable_paths`);
* **its own processes**: a process namespace of its own, so the code sees neither the process that drives the
  audit nor its command line, and cannot signal anything outside; when the sandbox's first process ends (the
  supervisor, however it ends) or the process that started it dies, the kernel kills every process left inside,
  daemons included, and the private folders go with them;
* **its own session**, IPC, host name and control-group namespaces.

``auto`` runs the sandbox where it works (:func:`unavailable` tries it once per process) and says otherwise,
in every verdict, which isolation ran; ``on`` refuses to audit where the sandbox does not work; ``off`` runs the
code unsandboxed (the supervisor's limits, watchdog and containment still hold).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from admmcheck.foundations.errors import InvalidConfiguration

LEVELS = ("auto", "on", "off")
#: Folders replaced by an empty private one inside the sandbox (where they exist), with ``$HOME``
HIDDEN = ("/home", "/root", "/tmp", "/var/tmp", "/run")
#: How to get the sandbox, for messages
INSTALL = ("install Debian's bubblewrap (apt-get install bubblewrap) on a kernel that allows unprivileged user "
           "namespaces")
TRIAL = ("--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true")


@dataclass(frozen=True)
class Isolation:
    """Which isolation an audit's code runs under: ``sandboxed`` or not, and why, in words."""

    sandboxed: bool
    words: str

    def __str__(self) -> str:
        return self.words


def _bwrap() -> str | None:
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=1)
def unavailable() -> str | None:
    """Why the sandbox cannot run on this machine (None: it can); bubblewrap is tried once per process."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux namespaces ({sys.platform} has none)"
    program = _bwrap()
    if program is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        trial = subprocess.run([program, *TRIAL], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start ({type(exc).__name__}: {exc})"
    if trial.returncode != 0:
        said = " ".join(trial.stderr.split())[:200] or f"exit status {trial.returncode}"
        return f"bubblewrap cannot make namespaces here ({said})"
    return None


@functools.lru_cache(maxsize=1)
def version() -> str:
    """bubblewrap's version, as it says it (``bubblewrap 0.8.0``; asked once per process)."""
    try:
        return subprocess.run([_bwrap() or "bwrap", "--version"], capture_output=True, text=True,
                              timeout=30).stdout.strip() or "bubblewrap"
    except (OSError, subprocess.TimeoutExpired):
        return "bubblewrap"


def resolve(level: str) -> Isolation:
    """The isolation ``level`` (one of :data:`LEVELS`) gives on this machine; ``on`` where the sandbox cannot
    run is refused, saying why and how to get it."""
    if level not in LEVELS:
        raise InvalidConfiguration(f"sandbox={level!r}: choose one of {', '.join(LEVELS)}", parameter="sandbox")
    if level == "off":
        return Isolation(False, "none (--sandbox off): the code ran unsandboxed")
    why = unavailable()
    if why is None:
        return Isolation(True, f"sandbox ({version()}): no network, a read-only filesystem, private /tmp and home "
                               "folders, its own processes")
    if level == "on":
        raise InvalidConfiguration(f"sandbox=on: the sandbox cannot run here: {why}; {INSTALL}, or audit without it "
                                   "(--sandbox off)", parameter="sandbox")
    return Isolation(False, f"none: the sandbox cannot run here ({why}); the code ran unsandboxed")


def _hidden() -> list[str]:
    home = os.path.expanduser("~")
    return sorted({*HIDDEN, *([home] if home not in ("", "/") else [])})


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def readable_paths(files: tuple[str, ...] = ()) -> list[str]:
    """The folders (and files) the sandbox shows again, read-only, inside the hidden ones: the Python environment
    (its prefixes, the interpreter's folder), every folder on ``sys.path`` and ``PYTHONPATH``, admmcheck's own, the
    working folder and the folders of ``files`` (the mechanism's), except a hidden folder itself (such as
    ``$HOME``: of a file there, the file alone is shown). Only those inside a hidden folder, outermost first, none
    inside another."""
    import admmcheck

    hidden = _hidden()
    wanted = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable)),
              os.path.dirname(os.path.dirname(os.path.abspath(admmcheck.__file__))),
              *sys.path, *os.environ.get("PYTHONPATH", "").split(os.pathsep), os.getcwd()]
    for file in files:
        folder = os.path.dirname(os.path.abspath(file))
        wanted.append(file if folder in hidden or os.path.realpath(folder) in hidden else folder)
    found = set()
    for path in wanted:
        if not path:
            continue
        for each in {os.path.abspath(path), os.path.realpath(path)}:
            if os.path.exists(each) and each not in hidden and any(_under(each, folder) for folder in hidden):
                found.add(each)
    chosen: list[str] = []
    for path in sorted(found, key=len):
        if not any(_under(path, outer) for outer in chosen):
            chosen.append(path)
    return sorted(chosen)


def command(argv: list[str], memory_bytes: int | None, files: tuple[str, ...] = ()) -> list[str]:
    """``argv`` run inside the sandbox (module docstring): the bubblewrap command line."""
    hidden = [folder for folder in _hidden() if os.path.isdir(folder)]
    size = ["--size", str(int(memory_bytes))] if memory_bytes else []
    args = [_bwrap() or "bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
            "--proc", "/proc", "--dev", "/dev"]
    for folder in hidden:
        args += [*size, "--tmpfs", folder]
    for path in readable_paths(files):
        args += ["--ro-bind", path, path]
    return [*args, "--chdir", os.getcwd(), "--setenv", "TMPDIR", "/tmp", "--", *argv]
