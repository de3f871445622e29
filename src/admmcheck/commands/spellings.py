"""Old spellings of the command line read as the new ones, each with a one-line note (``note``), so that a command
written for an earlier admmcheck still runs and says how it is spelled now."""

from __future__ import annotations

from dataclasses import fields as dataclass_fields
from typing import Callable

from admmcheck.mechanisms.registry import REGISTRY


def new_spelling(argv: list[str], note: Callable[[str], None]) -> list[str]:
    """Old spellings as the new ones, each with a one-line note: ``audit --mechanism ...`` (before ``audit code``),
    ``--samples`` for synthetic rows (now ``--rows``: ``--samples`` is an audit's samples per side), and the
    per-iteration or per-round ``--epsilon``/``--delta`` of the sharing and online families (now ``--step-epsilon``,
    ``--step-delta``: ``--epsilon`` is a claimed total)."""
    words = [i for i, word in enumerate(argv) if not word.startswith("-")]
    if not words:
        return argv
    command = argv[words[0]]
    target = argv[words[1]] if len(words) > 1 else None
    if command == "audit" and len(argv) > words[0] + 1:
        at = words[0] + 1
        targets = {"code", "canaries", *REGISTRY.names(private=True), *(n for n in REGISTRY if REGISTRY[n].stands_for)}
        third_party = any(word.split("=")[0] in ("--mechanism", "--neighbors") for word in argv[at:])
        if third_party and not targets & set(argv[at:]) and argv[at].startswith("--"):
            note("a third-party audit is now spelled 'admmcheck audit code --mechanism ...'")
            return argv[:at] + ["code"] + argv[at:]
    renames = {}
    if command in ("run", "bound", "experiment", "conditions"):
        renames["--samples"] = "--rows"
    if command in ("run", "bound", "audit") and target in REGISTRY.registered():
        names = {item.name for item in dataclass_fields(REGISTRY[target].setting_type)}
        renames |= {old: new for old, new in (("--epsilon", "--step-epsilon"), ("--delta", "--step-delta"))
                    if new[2:].replace("-", "_") in names and old[2:] not in names}
    out = []
    for word in argv:
        flag, equals, value = word.partition("=")
        if flag in renames:
            note(f"{flag} of admmcheck {command} {target or ''} is now spelled {renames[flag]}".replace("  ", " "))
            word = renames[flag] + equals + value
        out.append(word)
    return out
