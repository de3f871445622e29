"""The process table, read by the tests that must leave no process behind.

A test sets ``ADMMCHECK_TEST_MARK`` to a mark of its own in the environment of what it starts; every process
started from there (supervisors, workers, what a mechanism starts, daemons that leave the process tree) inherits
it, so the processes holding the mark are what that test left running.
"""

from __future__ import annotations

from pathlib import Path


def marked(mark: str, command: bytes = b"") -> list[int]:
    """Live processes whose environment holds ``ADMMCHECK_TEST_MARK=mark`` (and whose command line holds
    ``command``); zombies hold nothing and are left out."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if f"ADMMCHECK_TEST_MARK={mark}".encode() in (entry / "environ").read_bytes() \
                    and command in (entry / "cmdline").read_bytes():
                state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
                if state != b"Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found
