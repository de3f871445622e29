"""The outside example packages of ``examples/`` (each a folder with a ``pyproject.toml`` that declares the entry point
``admmcheck.plugins``), installed by pip into one fresh virtual environment for the tests that use them as a user
does (``tests/test_example_plugins.py``, ``tests/test_example_families.py``; the session fixture ``examples_python``
of ``tests/conftest.py``).

pip installs them offline (``--no-index --no-build-isolation --no-deps``); admmcheck and its dependencies come from
this environment through a ``.pth`` file, so that what is tested is this checkout. Each package is copied first (its
build writes beside its sources) to ``ROOT/NAME``, the environment is ``ROOT/env``.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import venv
from pathlib import Path
from typing import Any, Callable

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def example_folders() -> list[Path]:
    """Every example package of ``examples/``."""
    return sorted(path.parent for path in EXAMPLES.glob("*/pyproject.toml"))


def environment() -> dict[str, str]:
    """This process's environment without ``PYTHONPATH`` (the installed packages must be found by their install)."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


def install_examples(root: Path) -> Path:
    """Create ``root/env``, pip-install every example package into it, and return its interpreter."""
    venv.create(root / "env", with_pip=False)
    interpreter = root / "env" / ("Scripts" if os.name == "nt" else "bin") / "python"
    purelib = Path(subprocess.run([interpreter, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    ours = [path for path in site.getsitepackages() + [site.getusersitepackages()] if Path(path).is_dir()]
    # addsitedir, not a bare path: the .pth files there (an editable admmcheck's among them) are read too
    (purelib / "this-checkout.pth").write_text("".join(f"import site; site.addsitedir({path!r})\n" for path in ours))
    sources = []
    for folder in example_folders():
        sources.append(root / folder.name)
        shutil.copytree(folder, sources[-1], ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    installed = subprocess.run([interpreter, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                                "--no-build-isolation", *map(str, sources)], capture_output=True, text=True,
                               timeout=300, env=environment())
    assert installed.returncode == 0, installed.stderr
    return interpreter


def once(tmp_path_factory: Any, name: str, compute: Callable[[], Any]) -> Any:
    """``compute()`` (a JSON value) once per test run, whichever pytest-xdist worker asks first: it computes it under
    a lock and stores it where the run's workers share their temporary folders, and the others read it (a session
    fixture runs once per worker otherwise, and a module's tests may be given to both workers)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None or os.name == "nt":  # one process: nothing to share (and no fcntl on Windows)
        return compute()
    import fcntl

    stored = tmp_path_factory.getbasetemp().parent / f"{run}-{name}.json"
    with open(f"{stored}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stored.is_file():
            return json.loads(stored.read_text())
        value = compute()
        stored.write_text(json.dumps(value))
        return value


def admmcheck(python: Path, *arguments: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m admmcheck.cli ARGUMENTS``, as a user runs it, in a process of its own."""
    return subprocess.run([python, "-m", "admmcheck.cli", *arguments], capture_output=True, text=True, timeout=timeout,
                          env=environment())


def as_json(process: subprocess.CompletedProcess, status: int = 0) -> dict:
    """The JSON a command printed, after checking its exit status."""
    assert process.returncode == status, (process.returncode, process.stdout[-2000:], process.stderr[-2000:])
    return json.loads(process.stdout)
