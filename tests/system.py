"""System packages some tests need (GNU Octave, Chromium, bubblewrap), and whether this run must have them.

``.ci/run`` installs them from Debian's packages and names them in ``ADMMCHECK_REQUIRE_SYSTEM``: there a test
marked ``@needs("octave")`` whose package is missing fails (tests/conftest.py) instead of skipping, so the MATLAB
support and the page in a browser are tested where it matters. Elsewhere such a test skips, saying how to install
what it needs.
"""

from __future__ import annotations

import os
import shutil

import pytest

from admmcheck.audit.running import sandbox
from admmcheck.audit.running.octave import octave_command

FIND = {"octave": octave_command, "chromium": lambda: shutil.which("chromium") or shutil.which("chromium-browser"),
        "bubblewrap": lambda: "bwrap" if sandbox.unavailable() is None else None}
HOW = {"octave": "GNU Octave is not installed (bash .ci/run installs Debian's octave; elsewhere: apt-get install "
                 "octave, dnf install octave or brew install octave)",
       "chromium": "no Chromium on this machine (bash .ci/run installs Debian's chromium; elsewhere: apt-get install "
                   "chromium)",
       "bubblewrap": f"the audit's sandbox cannot run here ({sandbox.unavailable()}; bash .ci/run installs Debian's "
                     "bubblewrap; elsewhere: apt-get install bubblewrap, on a kernel that allows unprivileged user "
                     "namespaces)"}


def required() -> set[str]:
    """The packages this run must have (named by .ci/run)."""
    return set(os.environ.get("ADMMCHECK_REQUIRE_SYSTEM", "").split())


def missing(package: str) -> bool:
    return FIND[package]() is None


def needs(package: str):
    """Mark a test as needing ``package``: skipped where it is missing, unless this run requires it."""
    def mark(test):
        test = pytest.mark.system_package(package)(test)
        return pytest.mark.skipif(missing(package) and package not in required(), reason=HOW[package])(test)
    return mark
