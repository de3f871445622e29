"""Benchmark: what the pytest plugin costs a project that has admmcheck installed but does not use it (issue 53):
``pytest --collect-only`` of a one-test project, with the plugin (loaded from its ``pytest11`` entry point, as in
any such project) and without it (``-p no:admmcheck``), the two run in turn so that the machine's drift falls on
both alike.

    python benchmarks/pytest_plugin_overhead.py [--rounds 40] [--out benchmarks/results/pytest_plugin_overhead.json]

Each run is a fresh ``python -m pytest`` process; the figure is the median of the per-round differences (with the
plugin minus without), and the medians of each side. The goal: less than 50 ms. The whole-process difference is
within the machine's noise (tens of ms), so the plugin's own cost is measured too: the cumulative import time of
``admmcheck.pytest_plugin`` (``python -X importtime``) in a process that has imported pytest, the median of
``--rounds`` fresh processes.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = {"test_nothing.py": "def test_nothing():\n    assert 1 + 1 == 2\n",
           "pyproject.toml": "[tool.pytest.ini_options]\naddopts = \"\"\n"}


def _collect(folder: Path, *options: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *options],
                   cwd=folder, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def _import_ms() -> float:
    """The cumulative import time of the plugin module after pytest (``-X importtime``: microseconds)."""
    text = subprocess.run([sys.executable, "-X", "importtime", "-c", "import pytest; import admmcheck.pytest_plugin"],
                          capture_output=True, text=True, check=True).stderr
    line = next(line for line in text.splitlines() if line.rstrip().endswith("| admmcheck.pytest_plugin"))
    return int(line.split("|")[1]) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--out", default=str(HERE / "out" / "pytest_plugin_overhead.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for file, text in PROJECT.items():
            (folder / file).write_text(text)
        _collect(folder)  # warm the file caches
        _collect(folder, "-p", "no:admmcheck")
        with_plugin, without = [], []
        for round_ in range(args.rounds):
            pair = [("with", ()), ("without", ("-p", "no:admmcheck"))]
            for side, options in pair if round_ % 2 == 0 else pair[::-1]:
                (with_plugin if side == "with" else without).append(_collect(folder, *options))
    differences = [a - b for a, b in zip(with_plugin, without)]
    imports = [_import_ms() for _ in range(args.rounds)]
    result = {
        "rounds": args.rounds, "python": platform.python_version(), "machine": platform.machine(),
        "with_plugin_median_s": statistics.median(with_plugin), "without_median_s": statistics.median(without),
        "difference_median_ms": 1000 * statistics.median(differences),
        "difference_quartiles_ms": [1000 * q for q in statistics.quantiles(differences, n=4)],
        "plugin_import_median_ms": statistics.median(imports), "plugin_import_max_ms": max(imports),
        "goal_ms": 50.0,
    }
    print(f"pytest --collect-only of a one-test project, {args.rounds} rounds: with the plugin "
          f"{result['with_plugin_median_s']:.3f} s, without {result['without_median_s']:.3f} s (medians); "
          f"difference {result['difference_median_ms']:.1f} ms (quartiles "
          + ", ".join(f"{q:.1f}" for q in result["difference_quartiles_ms"]) + "); the plugin's import: "
          f"{result['plugin_import_median_ms']:.1f} ms (median, max {result['plugin_import_max_ms']:.1f} ms)")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
