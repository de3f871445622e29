"""One AuditSettings, validated in one place, for every audit (issue 28)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from admmcheck.audit import PrivacyClaim, Source, audit
from admmcheck.audit.running.settings import FIELDS, MIN_SAMPLES, AuditSettings
from admmcheck.cli import main
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.mechanisms.registry import REGISTRY

MECHANISMS = str(Path(__file__).resolve().parent / "mechanisms.py")


@pytest.mark.parametrize("changes, parameter", [
    ({"samples": MIN_SAMPLES - 1}, "samples"), ({"samples": 2.5e3}, "samples"), ({"samples": True}, "samples"),
    ({"confidence": 1.0}, "confidence"), ({"confidence": 0.4}, "confidence"), ({"seed": -1}, "seed"),
    ({"workers": 0}, "workers"), ({"timeout": 0}, "timeout"), ({"timeout": float("nan")}, "timeout"),
    ({"max_time": -1.0}, "max_time"), ({"randomness": "sometimes"}, "randomness"),
    ({"memory_limit": 100}, "memory_limit"), ({"memory_limit": "1G"}, "memory_limit"), ({"max_output": 0}, "max_output"),
])
def test_every_bad_setting_is_refused_naming_the_parameter_not_a_flag(changes, parameter):
    with pytest.raises(InvalidConfiguration) as error:
        AuditSettings(**changes)
    assert error.value.parameter == parameter and str(error.value).startswith(parameter + "=")
    assert "--" not in str(error.value)


def test_but_changes_and_validates_again_and_refuses_what_is_not_a_setting():
    settings = AuditSettings(samples=1_000)
    assert settings.but(seed=4) == AuditSettings(samples=1_000, seed=4)
    with pytest.raises(InvalidConfiguration, match="samples=10 must be an integer >= 200"):
        settings.but(samples=10)
    with pytest.raises(InvalidConfiguration, match="nodes: not an audit setting"):
        settings.but(nodes=3)
    assert FIELDS[0] == "samples" and "exceptions_are_outputs" in FIELDS


def test_audit_keywords_are_settings_and_give_the_same_audit():
    claim = PrivacyClaim(1.0)
    by_settings = audit(Source(f"{MECHANISMS}:laplace"), Source(f"{MECHANISMS}:scalar_pair"), claim,
                        AuditSettings(samples=1_000, seed=7, workers=1))
    by_keywords = audit(Source(f"{MECHANISMS}:laplace"), Source(f"{MECHANISMS}:scalar_pair"), claim,
                        samples=1_000, seed=7, workers=1)
    assert by_settings.epsilon_lower_bound == by_keywords.epsilon_lower_bound
    assert by_settings.as_dict()["p_d0"] == by_keywords.as_dict()["p_d0"] and by_settings.seed == 7
    with pytest.raises(InvalidConfiguration, match="samples=50"):
        audit(Source(f"{MECHANISMS}:laplace"), Source(f"{MECHANISMS}:scalar_pair"), claim, samples=50)


def test_each_registered_mechanism_has_its_default_audit_settings():
    assert REGISTRY.mechanism("pp").audit == AuditSettings(samples=20_000, timeout=60.0, randomness="seeded")
    assert REGISTRY.mechanism("dp-sharing").audit.samples == 5_000


@pytest.mark.parametrize("argv, said", [
    (["audit", "code", "--mechanism", "m.py:f", "--neighbors", "m.py:g", "--epsilon", "1", "--samples", "10"],
     "--samples 10 must be an integer >= 200 per side"),
    (["audit", "pp", "--confidence", "1"], "--confidence 1.0 must lie in [0.5, 1)"),
    (["audit", "dp-sharing", "--max-time", "0"], "--max-time 0.0 must be finite and > 0"),
    (["audit", "dpsda-c", "--workers", "0"], "--workers 0 must be a positive integer"),
])
def test_the_cli_says_the_same_mistake_as_its_flag_on_every_audit(capsys, argv, said):
    assert main(argv + ["--json"]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"admmcheck: error: {said}\n"
    assert json.loads(captured.out) == {"error": said, "kind": "error", "exit_status": 2}


def test_seed_seeds_both_the_data_and_the_samples_of_a_reference_audit(capsys):
    from dataclasses import replace

    from admmcheck.commands.audit import MechanismAudit, run_mechanism_audit
    from admmcheck.mechanisms.settings import ConsensusSetting

    assert main(["audit", "pp", "--record", "0:0", "--seed", "3", "--samples", "1000", "--workers", "1", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    settings = AuditSettings(samples=1_000, workers=1, seed=3, timeout=60.0, randomness="seeded")
    audit_setting = ConsensusSetting.DEFAULTS["audit"]
    same = run_mechanism_audit(MechanismAudit("pp", replace(audit_setting, seed=3), settings=settings,
                                              where=(0, 0))).result
    other_data = run_mechanism_audit(MechanismAudit("pp", replace(audit_setting, seed=0), settings=settings,
                                                    where=(0, 0))).result
    assert cli["seed"] == 3 and cli["p_d0"] == same.as_dict()["p_d0"] and cli["p_d1"] == same.as_dict()["p_d1"]
    # other data, other samples: the candidates' counts differ (the reported event alone may be one that
    # holds nearly every sample under both seeds, 500 and 498 of 500)
    assert [c["counts"] for c in other_data.as_dict()["candidates"]] != [c["counts"] for c in cli["candidates"]]


def test_the_cli_says_how_many_samples_were_drawn_when_max_time_cut_the_audit_short(capsys):
    """An audit cut short by --max-time prints what it drew and how it was split, not the samples asked for."""
    argv = ["audit", "code", "--mechanism", f"{MECHANISMS}:laplace", "--neighbors", f"{MECHANISMS}:scalar_pair",
            "--epsilon", "1", "--samples", "4000", "--workers", "1", "--quiet"]
    assert main(argv + ["--max-time", "1e-9", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    drawn = out["samples_used"]
    assert drawn["bounding"][0] < 4000 - drawn["selection"][0]  # the time ran out before the bounding split was drawn
    assert any(note.startswith(f"the selection split ({drawn['selection'][0]} samples per side) is drawn whole")
               and "past the time budget of 1e-09 s" in note for note in out["notes"])
    assert main(argv + ["--max-time", "1e-9"]) == 0
    text = capsys.readouterr().out
    assert (f"  {drawn['total'][0]} of 4000 samples per side ({drawn['selection'][0]} chose the events, "
            f"{drawn['bounding'][0]} bounded them)") in text
    assert main(argv) == 0
    assert "  4000 samples per side, seed 0" in capsys.readouterr().out  # drawn whole: said as asked


def test_the_default_memory_limit_is_half_the_machines_memory_shared_out_among_the_workers():
    """Read independently from /proc/meminfo (no cgroup limit below it on this machine) or skipped."""
    from admmcheck.audit.running.limits import MIB, machine_memory

    meminfo = Path("/proc/meminfo")
    if not meminfo.exists():
        pytest.skip("no /proc/meminfo on this platform")
    total = int(meminfo.read_text().split("MemTotal:")[1].split()[0]) * 1024
    if machine_memory() != total:
        pytest.skip("a cgroup limits this machine's memory below MemTotal")
    assert AuditSettings().worker_limits(4).memory_mib == pytest.approx(total / 8 / MIB)
    assert AuditSettings(memory_limit=512).worker_limits(4).memory_mib == 512
    assert AuditSettings().worker_limits(None).memory_mib is None  # workers elsewhere take their machine's share


def test_the_cli_says_a_limit_as_its_flag(capsys):
    status = main(["audit", "code", "--mechanism", f"{MECHANISMS}:laplace", "--neighbors", f"{MECHANISMS}:scalar_pair",
                   "--epsilon", "1", "--memory-limit", "64"])
    assert status == 2
    assert "--memory-limit 64.0 MiB is too little for a worker to start" in capsys.readouterr().err
