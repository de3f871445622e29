"""Algorithms and mechanisms from installed packages: the entry-point group ``admmcheck.plugins``.

A researcher's package declares, in its ``pyproject.toml``::

    [project.entry-points."admmcheck.plugins"]
    my-variants = "my_package.admmcheck_plugin:register"

where ``register(registry)`` registers its specs (:class:`~admmcheck.mechanisms.registry.AlgorithmSpec`,
:class:`~admmcheck.mechanisms.registry.MechanismSpec`) with ``registry.register(...)``; an entry point may also
name a module whose import registers them. The registry reads the group on its first lookup
(:meth:`~admmcheck.mechanisms.registry.Registry.load_plugins`), so ``admmcheck run``, ``bound``, ``audit``,
``verify`` and the report see the package's names with no code in admmcheck. A plugin that fails to load (an
import error, an exception in ``register``, a name registered already) is reported in one line, naming the
package and the error, as a :class:`PluginWarning` and in :func:`load`'s failures; the built-ins and every other
plugin keep working.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Callable

GROUP = "admmcheck.plugins"


class PluginWarning(UserWarning):
    """An installed plugin could not be loaded (the message says which package and why)."""


@dataclass(frozen=True)
class Origin:
    """Where a registered name comes from: ``package`` and its ``version`` (admmcheck's own for the built-ins), and
    the entry point that registered it (None for the built-ins)."""

    package: str
    version: str
    entry_point: str | None = None


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that could not be loaded: its entry point, its package and version, the error in one line."""

    entry_point: str
    package: str
    version: str
    error: str

    def line(self) -> str:
        return (f"the plugin {self.entry_point} of {self.package} {self.version} could not be loaded: {self.error}; "
                "everything else works without it")


def _package(point: EntryPoint) -> tuple[str, str]:
    distribution = getattr(point, "dist", None)
    if distribution is None:
        return "an unknown package", "?"
    return distribution.metadata["Name"] or "an unknown package", distribution.version or "?"


def load(registry: Any, points: Callable[[], list[EntryPoint]] | None = None
         ) -> tuple[dict[str, Origin], list[PluginFailure]]:
    """Load every entry point of :data:`GROUP` into ``registry`` (a :class:`~admmcheck.mechanisms.registry.Registry`,
    which calls this): (the origin of each name a plugin registered, the
    plugins that failed). A plugin that fails registers nothing: whatever it registered before failing is removed."""
    origins: dict[str, Origin] = {}
    failures: list[PluginFailure] = []
    found = points() if points is not None else list(entry_points(group=GROUP))
    for point in sorted(found, key=lambda p: p.name):
        package, version = _package(point)
        before = set(registry.registered())
        try:
            target = point.load()
            if callable(target):
                target(registry)
        except Exception as exc:  # noqa: BLE001 - a plugin's fault is reported, never ours to raise
            for name in set(registry.registered()) - before:
                registry.unregister(name)
            message = " ".join(f"{type(exc).__name__}: {exc}".split())
            failures.append(PluginFailure(point.name, package, version, message))
            continue
        for name in set(registry.registered()) - before:
            origins[name] = Origin(package, version, point.name)
    return origins, failures

