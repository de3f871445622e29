"""Re-exports imported on first use (PEP 562), so a process that needs one corner of the package
(an audit worker, ``admmcheck --version``) does not load CVXPY, SciPy's statistics or the solvers."""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Callable


def lazy_exports(package: str, homes: dict[str, tuple[str, ...]]) -> tuple[list[str], Callable, Callable]:
    """(``__all__``, ``__getattr__``, ``__dir__``) for ``package`` re-exporting each name of ``homes``
    from its module, imported when the name is first read and then kept in the package."""
    home_of = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> object:
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(home_of))

    return sorted(home_of), __getattr__, __dir__
