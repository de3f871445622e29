"""Issue 52, item 3 (first part): algorithms and mechanisms from installed packages, through the entry-point group
``admmcheck.plugins``.

An installed package is a folder on the path with the package and its ``*.dist-info`` (``METADATA``,
``entry_points.txt``), which is what pip writes; the tests lay two out in a temporary folder and put it on the
``PYTHONPATH`` of the installed command: one that registers a variant, one that cannot be imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.mechanisms.plugins import PluginWarning
from admmcheck.mechanisms.registry import REGISTRY, Registry

VARIANT = '''
from dataclasses import replace


def register(registry):
    """PP (M-ADMM Theorem 4.1) under a name of the package's own: the same run, claim and white box."""
    registry.register(replace(registry["pp"], name="toy-pp", title="PP, registered by a plugin"))
'''


def _install(folder: Path, package: str, version: str, module: str, code: str, entry: str) -> None:
    """``package`` as pip installs it: the module, and a dist-info naming the entry point ``entry``."""
    (folder / module).mkdir()
    (folder / module / "__init__.py").write_text(code)
    info = folder / f"{package.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[admmcheck.plugins]\n{entry} = {module}:register\n")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, str]:
    """The environment of the installed command with both packages on its path."""
    folder = tmp_path_factory.mktemp("site")
    _install(folder, "toy-variants", "0.3", "toy_variants", VARIANT, "toy")
    _install(folder, "broken-plugin", "1.0", "broken_plugin", "raise ImportError('needs torch, not installed')\n",
             "broken")
    return os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}


def _admmcheck(environment: dict[str, str], *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "admmcheck.cli", *arguments], capture_output=True, text=True,
                          timeout=300, env=environment)


def test_admmcheck_plugins_lists_every_entry_with_its_package_and_reports_a_broken_one_in_one_line(installed):
    listed = _admmcheck(installed, "plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    listing = json.loads(listed.stdout)
    by_name = {entry["name"]: entry for entry in listing["registered"]}
    assert by_name["toy-pp"] == {"name": "toy-pp", "family": "consensus", "kind": "mechanism",
                                 "package": "toy-variants", "version": "0.3", "entry_point": "toy"}
    assert by_name["pp"]["package"] == "admmcheck" and by_name["admm"]["kind"] == "algorithm"
    assert set(by_name) == set(REGISTRY) | {"toy-pp"}  # the built-ins, and nothing of the broken one
    [failure] = listing["failed"]
    assert failure == {"entry_point": "broken", "package": "broken-plugin", "version": "1.0",
                       "error": "ImportError: needs torch, not installed"}
    warning = listed.stderr.strip().splitlines()
    assert warning == ["admmcheck: warning: the plugin broken of broken-plugin 1.0 could not be loaded: ImportError: "
                       "needs torch, not installed; everything else works without it"]
    text = _admmcheck(installed, "plugins")
    assert "toy-pp             consensus  mechanism  toy-variants 0.3 (entry point toy)" in text.stdout
    assert "failed: broken of broken-plugin 1.0: ImportError: needs torch, not installed" in text.stdout


def test_the_installed_command_bounds_a_plugins_mechanism_as_the_one_it_copies(installed):
    """toy-pp is PP under another name: its Theorem 4.1 bound must be PP's, number for number."""
    plugin = _admmcheck(installed, "bound", "toy-pp", "--json")
    own = _admmcheck(installed, "bound", "pp", "--json")
    assert plugin.returncode == own.returncode == 0, plugin.stderr
    plugin_json, own_json = json.loads(plugin.stdout), json.loads(own.stdout)
    assert plugin_json.pop("mechanism") == "toy-pp" and own_json.pop("mechanism") == "pp"
    assert plugin_json == own_json and plugin_json["beta"] > 0


def test_a_plugin_that_fails_registers_nothing_and_one_that_clashes_is_refused():
    """In this process, on a registry of its own: a plugin that registered one name and then raised leaves no name
    behind; one that registers a built-in's name again fails with the registry's own refusal."""
    registry = Registry()
    registry.register(REGISTRY["pp"])
    registry.seal_builtins()

    entries = [EntryPoint(name, f"{__name__}:{function}", "admmcheck.plugins")
               for name, function in (("half", "half_done"), ("clash", "clashes"))]
    with pytest.warns(PluginWarning) as said:
        failures = registry.load_plugins(lambda: entries)
    assert {failure.entry_point: failure.error for failure in failures} == {
        "half": "RuntimeError: failed after registering one name",
        "clash": "InvalidConfiguration: 'pp' is registered already; pass replace=True to replace it"}
    assert len(said) == 2 and list(registry) == ["pp"] and registry["pp"] is REGISTRY["pp"]
    with pytest.raises(InvalidConfiguration, match="unknown algorithm or mechanism 'half'"):
        registry["half"]


def half_done(registry) -> None:
    """A plugin that registers one name and then fails."""
    registry.register(replace(REGISTRY["pp"], name="half"))
    raise RuntimeError("failed after registering one name")


def clashes(registry) -> None:
    """A plugin that registers a built-in's name again."""
    registry.register(replace(REGISTRY["dvp"], name="pp"))


def test_the_installed_command_runs_and_audits_a_plugins_mechanism(installed):
    """run and audit (black box, against Theorem 4.1) take the plugin's name, and give PP's numbers."""
    run = [*("--dataset", "synthetic", "--iterations", "20", "--json")]
    plugin, own = (_admmcheck(installed, "run", name, *run) for name in ("toy-pp", "pp"))
    assert plugin.returncode == own.returncode == 0, plugin.stderr
    strip = lambda text: {k: v for k, v in json.loads(text).items() if k not in ("algorithm", "wall_time_s")}  # noqa: E731
    assert strip(plugin.stdout) == strip(own.stdout)
    audited = _admmcheck(installed, "audit", "toy-pp", "--samples", "1000", "--workers", "2", "--json", "--quiet",
                           "--record", "0:0")  # one pair: no neighbour search
    assert audited.returncode == 0, audited.stderr
    result = json.loads(audited.stdout)
    assert result["verdict"] == "no-violation-found" and result["mechanism"] == "reference:toy-pp"
