"""Issue 29, item 1: MATLAB/Octave code under audit (``FILE.m:FUNCTION`` run in GNU Octave).

The ``.m`` files are in ``tests/octave/``; each states its true epsilon. The tests that run Octave
skip without it; the codec, the data files and the "no Octave" message are tested everywhere.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from admmcheck.audit import PrivacyClaim, Source, audit
from admmcheck.audit.inputs.datafiles import read_pair, read_table
from admmcheck.audit.running.octave import INSTALL_HINT, OctaveError, OctaveMechanism
from admmcheck.audit.running.octave.codec import pack, unpack
from admmcheck.audit.running.sampling import Sampler, Task, sample_generator
from admmcheck.audit.running.settings import AuditSettings
from admmcheck.cli import main
from admmcheck.foundations.errors import InvalidConfiguration, MechanismError
from processes import marked
from system import needs

OCTAVE = Path(__file__).resolve().parent / "octave"
NEIGHBOURS = f"{OCTAVE / 'neighbours.m'}:neighbours"  # sums 0.75 and 1.75: sensitivity 1
needs_octave = needs("octave")


def _m(name: str) -> str:
    return f"{OCTAVE / name}.m:{name}"


def _audit(mechanism: str, neighbours: str = NEIGHBOURS, **settings):
    settings = {"samples": 4_000, "workers": 2, "seed": 3, "timeout": 10.0} | settings
    return audit(Source(_m(mechanism)), Source(neighbours), PrivacyClaim(1.0), **settings)


# ---- the codec and the data files (no Octave needed) ------------------------------------------

def test_the_codec_reads_what_octave_writes_for_each_kind():
    """Bytes laid out by hand as admmcheck_pack.m writes them, and the Python values they must give."""
    def dims(*shape):
        return bytes([len(shape)]) + np.array(shape, "<u8").tobytes()

    row = b"D" + dims(1, 3) + np.array([1.0, 2.0, 3.0]).tobytes()
    assert unpack(row).shape == (1, 3)
    column = b"D" + dims(3, 1) + np.array([1.0, 2.0, 3.0]).tobytes()
    assert unpack(column).shape == (3, 1)
    matrix = b"D" + dims(2, 2) + np.array([1.0, 3.0, 2.0, 4.0]).tobytes()  # column-major [1 2; 3 4]
    np.testing.assert_array_equal(unpack(matrix), [[1, 2], [3, 4]])
    assert unpack(b"D" + dims(1, 1) + np.array([2.5]).tobytes()) == 2.5
    assert unpack(b"L" + dims(1, 1) + b"\x01") is True
    assert unpack(b"i" + dims(1, 1) + np.array([7], "<i4").tobytes()) == np.int32(7)
    assert type(unpack(b"i" + dims(1, 1) + np.array([7], "<i4").tobytes())) is np.int32
    assert unpack(b"C" + dims(1, 6) + "naïve".encode()) == "naïve"
    assert unpack(b"C" + dims(2, 2) + b"acbd") == ["ab", "cd"]
    one = b"D" + dims(1, 1) + np.array([1.0]).tobytes()
    text = b"C" + dims(1, 1) + b"a"
    assert unpack(b"c" + dims(1, 2) + one + text) == [1.0, "a"]
    assert unpack(b"c" + dims(2, 1) + one + text) == [[1.0], ["a"]]  # a column is not a row
    record = b"s" + dims(1, 1) + np.array([1], "<u4").tobytes() + np.array([3], "<u4").tobytes() + b"age" + one
    assert unpack(record) == {"age": 1.0}
    assert unpack(b"Z" + dims(1, 1) + np.array([1.0, 2.0]).tobytes()) == 1 + 2j


def test_the_codec_writes_python_values_in_octaves_layout_and_refuses_what_it_cannot():
    assert pack(2.5) == b"D\x02" + np.array([1, 1], "<u8").tobytes() + np.array([2.5]).tobytes()
    assert pack(np.array([1.0, 2.0]))[2:18] == np.array([2, 1], "<u8").tobytes()  # 1-D: a column
    assert pack(True)[:1] == b"L" and pack("x")[:1] == b"C" and pack((1.0, 2.0))[:1] == b"c"
    with pytest.raises(InvalidConfiguration, match="cannot name an Octave struct field"):
        pack({"1x": 1.0})
    with pytest.raises(InvalidConfiguration, match="holds a set"):
        pack({1.0})


def test_pairs_are_read_from_csv_and_npz_files_and_anything_else_is_refused(tmp_path):
    (tmp_path / "d0.csv").write_text("age,income\n30,1.5\n40,2.5\n")
    (tmp_path / "d1.csv").write_text("age,income\n30,1.5\n90,2.5\n")
    pair = read_pair(f"{tmp_path / 'd0.csv'},{tmp_path / 'd1.csv'}")
    np.testing.assert_array_equal(pair.d1, [[30, 1.5], [90, 2.5]])
    assert read_table(tmp_path / "d0.csv")[0] == ("age", "income")
    (tmp_path / "bad.csv").write_text("age,income\n30,x\n")
    with pytest.raises(InvalidConfiguration, match="line 2, column 2: 'x' is not a number"):
        read_table(tmp_path / "bad.csv")
    np.savez(tmp_path / "xy.npz", X0=np.eye(2), y0=np.array([1.0, -1.0]), X1=np.eye(2), y1=np.array([-1.0, -1.0]))
    pair = read_pair(str(tmp_path / "xy.npz"))
    assert isinstance(pair.d0, tuple) and pair.d1[1].tolist() == [-1.0, -1.0]
    np.savez(tmp_path / "odd.npz", a=np.eye(2))
    with pytest.raises(InvalidConfiguration, match="holds the arrays a; a pair of neighbours is arrays d0 and d1"):
        read_pair(str(tmp_path / "odd.npz"))
    with pytest.raises(InvalidConfiguration, match="D0.csv,D1.csv"):
        read_pair(str(tmp_path / "d0.csv"))


def test_a_python_mechanism_is_audited_on_neighbours_from_csv_files(tmp_path):
    """Data files are neighbours for Python code too: a correct Laplace on the sums of two CSV tables."""
    (tmp_path / "d0.csv").write_text("0\n0.5\n0.25\n")
    (tmp_path / "d1.csv").write_text("1\n0.5\n0.25\n")
    result = audit(Source(f"{OCTAVE / 'laplace_python.py'}:laplace"),
                   Source(f"{tmp_path / 'd0.csv'},{tmp_path / 'd1.csv'}"), PrivacyClaim(1.0),
                   samples=4_000, workers=2, seed=1)
    assert result.verdict == "no-violation-found" and 0.3 < result.epsilon_lower_bound <= 1.0


def test_without_octave_an_m_file_is_refused_with_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setenv("ADMMCHECK_OCTAVE", "/nonexistent/octave")
    status = main(["audit", "code", "--mechanism", _m("laplace"), "--neighbors", NEIGHBOURS, "--epsilon", "1"])
    err = capsys.readouterr().err
    assert status == 2 and "GNU Octave was not found" in err and INSTALL_HINT.split(";")[0] in err


# ---- Octave ---------------------------------------------------------------------------------------

@needs_octave
def test_octave_values_arrive_in_python_as_the_conversion_table_says():
    produced = OctaveMechanism(_m("kinds"))((np.ones((2, 2)), np.array([1.0, -1.0])), np.random.default_rng(0))
    assert produced["scalar"] == 2.5 and produced["row"].shape == (1, 3) and produced["column"].shape == (2, 1)
    np.testing.assert_array_equal(produced["matrix"], [[1, 2], [3, 4]])
    assert produced["empty"].shape == (0, 0)
    assert produced["flag"] is True and produced["flags"].dtype == bool and produced["flags"].tolist() == [[True, False]]
    assert type(produced["count"]) is np.int32 and produced["count"] == 7
    assert produced["text"] == "naïve" and produced["z"] == 1 + 2j
    assert produced["cells"] == [1.0, "a", [2.0]] and produced["grid"] == [[1.0, 2.0], [3.0, 4.0]]
    assert produced["people"] == [{"age": 30.0}, {"age": 40.0}]
    features, labels = produced["data"]  # the (X, y) dataset went in as the cell {X, y}
    np.testing.assert_array_equal(features, np.ones((2, 2)))
    assert labels.shape == (2, 1)  # a 1-D array is a column


@needs_octave
@pytest.mark.parametrize("mechanism, verdict, low, high", [
    ("laplace", "no-violation-found", 0.3, 1.0),   # correct: epsilon 1
    ("laplace_half", "violation", 1.0, 2.0),        # broken: epsilon 2 claimed as 1
])
def test_a_correct_and_a_broken_octave_laplace_get_the_right_verdicts(mechanism, verdict, low, high):
    result = _audit(mechanism)
    assert result.verdict == verdict and low < result.epsilon_lower_bound <= high
    assert result.randomness.mode == "seeded" and not result.findings


@needs_octave
@pytest.mark.parametrize("mechanism", ["reseeds", "reseeds_seed", "reseeds_state"])
def test_a_function_that_seeds_itself_is_reported_and_is_a_violation_when_its_output_depends_on_the_data(mechanism):
    """rng(1), rand("seed", 1), randn("state", 0) at the top: the audit goes on, says that the outputs did not
    vary with the seed, and the data-dependent constant is a violation; on equal datasets it is no violation,
    but still reported."""
    result = _audit(mechanism, samples=600)
    assert result.verdict == "violation" and result.epsilon_lower_bound > 3
    assert len(result.findings) == 1 and "did not vary with the sample's seed" in result.findings[0]
    assert "on d0 and d1" in result.findings[0]
    same = _audit(mechanism, f"{OCTAVE / 'same_data.m'}:same_data", samples=600)
    assert same.verdict == "no-violation-found" and "did not vary" in same.findings[0]
    assert same.findings[1].startswith("the two datasets of pair 0 are equal")


@needs_octave
def test_the_vectorised_form_gives_the_same_law_as_the_per_call_form():
    """laplace_vec_batch.m is used when present; both forms follow sum(d0) + Laplace(1) (0.75 + Laplace(1)),
    checked against the closed-form CDF and against each other."""
    mechanism = OctaveMechanism(_m("laplace_vec"))
    assert hasattr(mechanism, "batch")
    laplace = stats.laplace(loc=0.75, scale=1.0)
    with Sampler(Source(_m("laplace_vec")), Source(NEIGHBOURS), AuditSettings(workers=1, seed=2)) as sampler:
        sampler.probe()
        batched = np.concatenate([b.values[:, 0] for _, b in sampler.draw([Task(0, 0, 1, 3_000)])])
    calls = np.array([mechanism(np.array([0.0, 0.5, 0.25]), sample_generator(2, 0, 0, 9, j)) for j in range(1_500)])
    assert stats.kstest(batched, laplace.cdf).pvalue > 1e-3
    assert stats.kstest(calls, laplace.cdf).pvalue > 1e-3
    assert stats.ks_2samp(batched, calls).pvalue > 1e-3
    assert len(np.unique(calls)) == len(calls)  # seeded per call: every call a fresh draw


@needs_octave
def test_a_hanging_octave_function_is_stopped_by_the_timeout_and_its_octave_killed(monkeypatch):
    mark = uuid.uuid4().hex
    monkeypatch.setenv("ADMMCHECK_TEST_MARK", mark)
    with pytest.raises(MechanismError, match=r"hangs: one call ran longer than the timeout of 1 s \(seed=3"):
        _audit("hangs", timeout=1.0)
    assert marked(mark, b"octave") == []


@needs_octave
def test_an_octave_error_is_one_line_naming_the_sample_that_reproduces_it():
    with pytest.raises(MechanismError) as raised:
        _audit("fails_sometimes", samples=1_000)
    message = str(raised.value)
    assert "\n" not in message
    assert "raises OctaveError: step size is not positive (in fails_sometimes at line 4)" in message
    sample = re.search(r"\(seed=(\d+), pair=(\d+), side=(\d+), block=(\d+), index=(\d+)\)", message)
    rng = sample_generator(*(int(number) for number in sample.groups()))
    with pytest.raises(OctaveError, match="step size is not positive"):  # the sample named fails again
        OctaveMechanism(_m("fails_sometimes"))(np.array([0.0, 0.5, 0.25]), rng)


@needs_octave
def test_the_cli_audits_an_octave_function_on_an_npz_pair_and_prints_the_finding(tmp_path, capsys):
    np.savez(tmp_path / "pair.npz", d0=np.array([0.0, 0.5, 0.25]), d1=np.array([1.0, 0.5, 0.25]))
    command = ["audit", "code", "--mechanism", _m("reseeds"), "--neighbors", str(tmp_path / "pair.npz"),
               "--epsilon", "1", "--samples", "600", "--workers", "2", "--quiet"]
    status = main(command + ["--json"])
    result = json.loads(capsys.readouterr().out)
    assert status == 1 and result["verdict"] == "violation" and result["epsilon_lower_bound"] > 3
    assert result["mechanism"].endswith("reseeds.m:reseeds") and "did not vary" in result["findings"][0]
    assert main(command + ["--report", str(tmp_path / "page")]) == 1
    assert "  finding: the output did not vary with the sample's seed" in capsys.readouterr().out
    page = (tmp_path / "page" / "audit.html").read_text()
    assert "<b>Finding:</b> the output did not vary" in page
    assert page.index("Finding:") < page.index('id="event"') and 'class="caveat"' not in page  # a violation: no caveat


@needs_octave
def test_run_from_a_folder_that_holds_a_decoy_of_the_same_name_the_named_file_is_audited(tmp_path, monkeypatch):
    """Octave looks in its working folder before its path: a decoy laplace.m where admmcheck is started (one that
    releases the data itself, infinitely unprivate) must not be what is audited. The JSON must equal that of the
    same audit started from a folder without a decoy."""
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "laplace.m").write_text("function out = laplace (data)\n  out = sum (data);\nend\n")
    plain = tmp_path / "plain"
    plain.mkdir()
    command = ["audit", "code", "--mechanism", _m("laplace"), "--neighbors", NEIGHBOURS, "--epsilon", "1",
               "--samples", "2000", "--workers", "2", "--seed", "3", "--quiet", "--json"]
    results = []
    for folder in (decoy, plain):
        monkeypatch.chdir(folder)
        process = subprocess.run([sys.executable, "-m", "admmcheck.cli", *command], capture_output=True, text=True,
                                 timeout=300)
        assert process.returncode == 0, process.stderr
        result = json.loads(process.stdout)
        results.append({key: value for key, value in result.items() if key != "wall_time_s"})
    assert results[0]["verdict"] == "no-violation-found"
    assert results[0] == results[1]


@needs_octave
def test_a_function_that_resolves_to_another_file_than_the_one_named_is_refused(tmp_path):
    """A script file that does not define the function named: Octave would call its own mean.m."""
    script = tmp_path / "helpers.m"
    script.write_text("1;\nfunction out = noisy (data)\n  u = rand () - 0.5;\n"
                      "  out = sum (data) - sign (u) * log (1 - 2 * abs (u));\nend\n")  # laplace.m's Laplace(1)
    with pytest.raises(MechanismError, match=r"Octave would call mean from .*mean\.m, not from .*helpers\.m"):
        audit(Source(f"{script}:mean"), Source(NEIGHBOURS), PrivacyClaim(1.0), samples=1_000, workers=1)
    result = audit(Source(f"{script}:noisy"), Source(NEIGHBOURS), PrivacyClaim(1.0), samples=1_000, workers=1)
    assert result.verdict == "no-violation-found"
