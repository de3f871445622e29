"""The audit's blocks on a Dask cluster give the local executor's result (issue 19)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from admmcheck.audit import PrivacyClaim, Source, audit, auditor
from admmcheck.cli import main
from admmcheck.foundations.errors import InvalidConfiguration, MechanismError
from processes import marked

distributed = pytest.importorskip("distributed", reason='the Dask executor needs pip install "admmcheck[dask]"')

MECHANISMS = str(Path(__file__).resolve().parent / "mechanisms.py")


MARK = uuid.uuid4().hex  # in the environment of the cluster's workers, and so of every process they start


@pytest.fixture(scope="module")
def cluster():
    before = os.environ.get("ADMMCHECK_TEST_MARK")
    os.environ["ADMMCHECK_TEST_MARK"] = MARK
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                      silence_logs=40) as local:
            yield local.scheduler_address
    finally:
        if before is None:
            del os.environ["ADMMCHECK_TEST_MARK"]
        else:
            os.environ["ADMMCHECK_TEST_MARK"] = before


def _audit(mechanism: str, **kwargs):
    return audit(Source(f"{MECHANISMS}:{mechanism}"), Source(f"{MECHANISMS}:scalar_pair"), PrivacyClaim(1.0, 0.0),
                 samples=20_000, seed=4, **kwargs).as_dict()


def test_dask_blocks_equal_local_blocks(cluster):
    local = _audit("laplace_half_scale", workers=2)
    remote = _audit("laplace_half_scale", scheduler=cluster)
    assert remote["verdict"] == local["verdict"] == "violation"
    for key in ("p_d0", "p_d1", "epsilon_lower_bound", "event", "samples"):
        assert remote[key] == local[key], key
    # unseeded global randomness is seeded per sample on the cluster too
    assert _audit("laplace_global", scheduler=cluster)["p_d0"] == _audit("laplace_global", workers=1)["p_d0"]
    # the audit's supervised workers on the cluster ended with it (the cluster's own processes carry the mark too)
    assert marked(MARK, b"admmcheck.audit.running.supervisor") == [] and marked(MARK, b"-m\0admmcheck.audit.running.worker") == []


def test_dask_workers_count_their_blocks_as_this_process_does(cluster, monkeypatch):
    local = _audit("laplace_half_scale", workers=2)
    monkeypatch.setattr(auditor, "COUNT_IN_WORKERS", 0)  # every task then counts its block on the cluster
    remote = _audit("laplace_half_scale", scheduler=cluster)
    for key in ("p_d0", "p_d1", "candidates", "histogram", "privacy_curve"):
        assert remote[key] == local[key], key


def test_dask_faults_are_mechanism_errors_and_hangs_are_cut(cluster):
    with pytest.raises(MechanismError, match="raises ValueError: bad luck"):
        _audit("raises", scheduler=cluster)
    with pytest.raises(MechanismError, match="hangs"):
        audit(Source(f"{MECHANISMS}:hangs"), Source(f"{MECHANISMS}:scalar_pair"), PrivacyClaim(1.0, 0.0),
              samples=5_000, seed=0, scheduler=cluster, timeout=0.5)


def test_cli_scheduler_flag(cluster, capsys):
    assert main(["audit", "code", "--mechanism", f"{MECHANISMS}:laplace_half_scale", "--neighbors", f"{MECHANISMS}:scalar_pair",
                 "--epsilon", "1", "--samples", "5000", "--scheduler", cluster, "--json"]) == 1
    assert '"verdict": "violation"' in capsys.readouterr().out


def test_an_unreachable_scheduler_is_a_clear_error(monkeypatch):
    from admmcheck.audit.running import dask_executor

    monkeypatch.setattr(dask_executor, "CONNECT_TIMEOUT_S", 2.0)
    with pytest.raises(InvalidConfiguration, match="cannot reach the Dask scheduler"):
        _audit("laplace_half_scale", scheduler="tcp://127.0.0.1:1")
