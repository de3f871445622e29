"""What ``tests/`` and ``properties/`` share: under pytest-xdist, each xdist process's share of the cores."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _audits_use_this_process_share_of_the_cores():
    """Under pytest-xdist the suite's parallelism is its xdist processes: an audit that names no ``workers`` starts
    this process's share of the cores (1 of 2 under ``-n 2``), not every core, so that the two processes' audits do
    not start twice the workers the cores can run (each one a Python with numpy: about 0.3 s of CPU)."""
    processes = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if processes <= 1:
        yield
        return
    from admmcheck.audit.running import limits, sampling

    share = max(1, limits.available_cores() // processes)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sampling, "available_cores", lambda: share)
        yield
