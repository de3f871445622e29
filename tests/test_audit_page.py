"""The page of one black-box audit: audit.json and a self-contained audit.html (audit_page.py)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from system import needs

from admmcheck.cli import main
from admmcheck.report.audit_page import render_audit_page

CHROMIUM = shutil.which("chromium")
MECHANISMS = str(Path(__file__).resolve().parent / "mechanisms.py")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"]
CLAIM = "(claimed epsilon = 1, delta = 0)</span>"
SECTIONS = ("verdict", "event", "histogram", "privacy-curve", "candidates", "samples", "reproducibility")


def _common(**fields) -> dict:
    summary = {
        "claimed_delta": 0.0, "confidence": 0.95, "neighbour_pair": 0, "neighbour_pairs": 2,
        "samples": 20_000, "samples_used": {"selection": [3000, 3000], "bounding": [17000, 17000]},
        "multiplicity": {"intervals": 8, "method": "weighted Bonferroni"},
        "output_layout": [{"name": f"x{k}", "shape": [2]} for k in range(30)],
        "wall_time_s": 3.25, "complete": True, "notes": [],
        "versions": {"python": "3.11.2", "numpy": "1.26.4", "admmcheck": "0.1.0"},
    }
    summary.update(fields)
    return summary


def _numeric(d0: list[int], d1: list[int]) -> dict:
    """A numeric histogram as the auditor writes it: equal bins from -3 to 4, the first and last counts of each side
    the overflow beyond them, densities count / (samples x width)."""
    edges = [float(e) for e in range(-3, 5)]
    return {"kind": "numeric", "score": "x0[1]", "edges": edges, "width": 1.0, "d0": d0[1:-1], "d1": d1[1:-1],
            "density": {"d0": [c / sum(d0) for c in d0[1:-1]], "d1": [c / sum(d1) for c in d1[1:-1]]},
            "overflow": {"below": [d0[0], d1[0]], "above": [d0[-1], d1[-1]]}, "samples": [sum(d0), sum(d1)],
            "threshold": 2.75, "above": True, "split": "bounding"}


def violation() -> dict:
    """The event never happened under d1 in the samples counted, so the point estimate is infinite."""
    return _common(
        verdict="violation", epsilon_lower_bound=1.9312, epsilon_estimate=math.inf, claimed_epsilon=1.0,
        delta_lower_bound_at_claimed_epsilon=0.0123, event="x0[1] > 2.75 <b>bold</b>", event_family="threshold",
        event_more_likely_under="d0", estimator="conditional ratio test",
        p_d0={"count": 4321, "n": 17000, "estimate": 4321 / 17000, "interval": [0.2478, 0.2607]},
        p_d1={"count": 0, "n": 17000, "estimate": 0.0, "interval": [0.0, 0.000176]},
        candidates=[{"event": "x0[1] > 2.75 <b>bold</b>", "family": "threshold", "pair": 0, "counts": [4321, 0],
                     "n": [17000, 17000], "epsilon_lower_bound": 1.9312, "level": 0.025,
                     "estimator": "conditional ratio test"},
                    {"event": "x3[0] < -1", "family": "threshold", "pair": 1, "counts": [120, 95],
                     "n": [17000, 17000], "epsilon_lower_bound": 0.0, "level": 0.0041667}],
        mechanism="dp-sharing", seed=7, reproducible=True,
        randomness={"requested": "auto", "mode": "seeded", "reason": "the mechanism takes a seed"},
        histogram=_numeric([10, 300, 2000, 5000, 4000, 1500, 4000, 180, 10], [5, 800, 4000, 6500, 4000, 1695, 0, 0, 0]),
        command="admmcheck audit dp-sharing --epsilon 1 --seed 7 --samples 20000",
        theorem={"beta": 1.34, "holds": True, "preconditions": {"rows normalised": True, "full rank": False},
                 "sizes": [3, 4]})


def no_violation() -> dict:
    return _common(
        verdict="no-violation-found", epsilon_lower_bound=0.9104, epsilon_estimate=1.02, claimed_epsilon=1.0,
        delta_lower_bound_at_claimed_epsilon=-0.004, event="score < 0.5", event_family="categorical",
        event_more_likely_under="d1",
        p_d0={"count": 1234, "n": 17000, "estimate": 1234 / 17000, "interval": [0.0687, 0.0766]},
        p_d1={"count": 3456, "n": 17000, "estimate": 3456 / 17000, "interval": [0.1973, 0.2094]},
        candidates=[{"event": "score < 0.5", "family": "categorical", "pair": 0, "counts": [1234, 3456],
                     "n": [17000, 17000], "epsilon_lower_bound": 0.9104, "level": 0.025}],
        mechanism="third-party <lib>", seed=11, reproducible=False,
        randomness={"requested": "auto", "mode": "unseeded", "reason": "the mechanism draws from its own generator"},
        histogram={"kind": "categorical", "score": "winning label", "labels": ["a", "b", "c<d"],
                   "d0": [1234, 8000, 7766], "d1": [3456, 7000, 6544], "in_event": [True, False, False],
                   "split": "bounding"},
        command="admmcheck audit third-party --epsilon 1 --seed 11")


def test_violation_page_leads_with_the_verdict_and_keeps_inf_out_of_json(tmp_path):
    paths = render_audit_page(violation(), tmp_path / "report")
    assert set(paths) == {"json", "html", "histogram.png"} and all(p.is_file() for p in paths.values())
    assert paths["histogram.png"].read_bytes().startswith(b"\x89PNG")
    document = json.loads(paths["json"].read_text())
    assert document["verdict"] == "violation" and document["epsilon_lower_bound"] == 1.9312
    assert document["epsilon_estimate"] is None and document["non_finite"] == {"epsilon_estimate": "inf"}
    html = paths["html"].read_text()
    headline = 'violation: epsilon ≥ 1.93 at 95 % confidence <span class="claim">' + CLAIM
    assert html.index(headline) < html.index('id="event"') < html.index('id="histogram"')
    assert 'class="verdict violation"' in html
    assert "point estimate: infinite — d1 produced no output in this event in the 17000 samples counted" in html
    assert "support mismatch" not in html  # a zero count is not evidence that d1 cannot give the output
    assert 'class="caveat"' not in html and "not a proof" not in html  # the caveat of "no violation found" only
    assert "x0[1] &gt; 2.75 &lt;b&gt;bold&lt;/b&gt;" in html and "<b>bold</b>" not in html
    assert ">4321<" in html and ">0<" in html and "[0.2478, 0.2607]" in html
    assert "delta ≥ 0.0123" in html
    assert "comes from the conditional ratio test estimator: the conditional ratio test on the two counts" in html
    assert "not the two intervals" in html
    assert "<td>conditional ratio test</td>" in html and "<td>two intervals</td>" in html  # one row each
    assert "<th>beta</th><td>1.34</td>" in html and "<th>holds</th><td>yes</td>" in html  # the theorem rows
    assert "<th>preconditions</th><td>rows normalised: yes; full rank: no</td>" in html  # in words, not JSON
    assert "<th>sizes</th><td>3, 4</td>" in html
    assert html.count('src="data:image/png;base64,') == 1
    assert "<code>admmcheck audit dp-sharing --epsilon 1 --seed 7 --samples 20000</code>" in html
    assert "<th>seed</th><td>7</td>" in html and "reproducible: yes" in html
    assert "will not give the same samples" not in html
    assert "the first 20 parts of 30" in html and "<td>x19</td><td>2</td>" in html and "<td>x20</td>" not in html
    assert "&#34;" not in html  # what the mechanism returns is a table in words, no raw JSON
    assert html.index('id="candidates"') < html.index('id="samples"') < html.index('id="reproducibility"')


def test_no_violation_page_says_not_a_proof_and_not_reproducible(tmp_path):
    paths = render_audit_page(no_violation(), tmp_path)
    document = json.loads(paths["json"].read_text())
    assert document["verdict"] == "no-violation-found" and document["epsilon_lower_bound"] == 0.9104
    assert "non_finite" not in document
    html = paths["html"].read_text()
    headline = 'no violation found: epsilon ≥ 0.91 at 95 % confidence <span class="claim">' + CLAIM
    assert html.index(headline) < html.index('id="event"')
    assert 'class="verdict no-violation-found"' in html and "not a proof" in html
    assert "score &lt; 0.5" in html and "score < 0.5" not in html
    assert "admmcheck audit: third-party &lt;lib&gt;" in html
    assert ">1234<" in html and ">3456<" in html and "more likely under\n<b>d1</b>" in html
    assert "no evidence of delta above 0" in html and "-0.004" not in html
    assert "comes from the two intervals estimator: two one-sided Clopper-Pearson intervals" in html  # older JSON
    assert "point estimate: epsilon ≈ 1.02" in html
    assert html.count('src="data:image/png;base64,') == 1 and "histogram.png" in paths
    assert "<th>seed</th><td>11</td>" in html and "reproducible: no" in html
    assert "requested auto, used unseeded" in html and "the mechanism draws from its own generator" in html
    assert "will not give the same samples again" in html and "still holds" in html
    assert "<code>admmcheck audit third-party --epsilon 1 --seed 11</code>" in html


def test_a_sequential_audit_page_shows_the_e_value_and_the_looks_and_no_interval(tmp_path):
    summary = violation() | {
        "mode": "sequential", "epsilon_lower_bound": 1.0, "histogram": None, "p_d0": {
            "count": 26, "n": 50, "estimate": 0.52, "interval": [math.nan, math.nan]},
        "samples_used": {"selection": [50, 50], "bounding": [75, 75], "total": [125, 125]},
        "sequential": {"e_value": 29.5, "threshold": 20.0, "refuted_epsilon": 1.0, "samples_used": [125, 125],
                       "method": "testing by betting", "looks": [
                           {"look": 1, "samples": 50, "e_value": None, "bets": []},
                           {"look": 2, "samples": 125, "e_value": 29.5, "bets": [
                               {"pair": 0, "slot": 0, "event": "x < 0.21 <i>", "stake": 0.16},
                               {"pair": 0, "slot": 1, "event": "y > 2", "stake": 0.0}]}]}}
    html = render_audit_page(summary, tmp_path)["html"].read_text()
    assert 'violation: epsilon &gt; 1 at 95 % confidence' in html  # the claim refuted: epsilon above it
    section = html[html.index('id="sequential"'):html.index('id="histogram"')]
    assert "stopped after 125 of 20000 samples per side, in\n2 looks" in section and "<b>29.5</b>" in section
    assert ">none<" in section and "0.16: x &lt; 0.21 &lt;i&gt;" in section and "0: y &gt; 2" in section
    assert "none: the sequential test bets, it bounds no\ninterval" in html and "[nan" not in html
    assert "first look (chose events only)" in html and "Events bet on at the last look" in html


def test_without_histogram_the_page_says_so_and_draws_nothing(tmp_path):
    summary = no_violation()
    del summary["histogram"]
    summary["complete"] = False
    paths = render_audit_page(summary, tmp_path)
    assert set(paths) == {"json", "html"} and not (tmp_path / "histogram.png").exists()
    html = paths["html"].read_text()
    assert "No picture is available for this event." in html and "data:image/png" not in html
    assert "This audit has no (&epsilon;, &delta;) curve." in html  # an audit.json from before the curve
    assert "cut short by the time budget" in html


@needs("chromium")
def test_audit_page_of_a_real_audit_renders_in_headless_chromium(tmp_path, capsys):
    third_party = Path(__file__).resolve().parent / "third_party.py"
    folder = tmp_path / "report"
    args = ["audit", "code", "--mechanism", f"{third_party}:class_list", "--neighbors", f"{third_party}:class_pair",
            "--epsilon", "1", "--samples", "2000", "--workers", "2", "--report", str(folder), "--json"]
    assert main(args) == 1
    printed = json.loads(capsys.readouterr().out)
    stored = json.loads((folder / "audit.json").read_text())
    assert stored["verdict"] == printed["verdict"] == "violation"
    assert stored["command"] == "admmcheck " + " ".join(args) and stored["versions"]["numpy"] == np.__version__
    assert stored["histogram"]["kind"] == "categorical" and sum(stored["histogram"]["d0"]) == stored["p_d0"]["n"]
    url = (folder / "audit.html").resolve().as_uri()
    profile = ["--user-data-dir=" + str(tmp_path / "chromium-profile")]
    dom = subprocess.run([CHROMIUM, *FLAGS, *profile, "--dump-dom", url], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    for section in SECTIONS:
        assert f'id="{section}"' in dom
    assert dom.count('src="data:image/png;base64,') == 2  # the histogram and the (epsilon, delta) curve
    assert 'class="caveat"' not in dom and "not a proof" not in dom  # a violation is no "no violation found"
    assert "output kind in" in dom and "infinite" in dom
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM, *FLAGS, *profile, "--window-size=1200,1600", f"--screenshot={shot}", url],
                   capture_output=True, timeout=60, check=True)
    from matplotlib.image import imread

    pixels = imread(shot)
    assert pixels.shape[0] == 1600 and pixels.shape[1] == 1200
    assert (pixels[..., :3] < 0.5).mean() > 0.01  # text and the figure drawn, not a blank page


@needs("chromium")
def test_a_numeric_histogram_is_densities_over_equal_bins_with_the_threshold_as_a_line(tmp_path, capsys):
    """Issue 64: the histogram of a scalar Laplace audit that finds no violation. Its figure data (audit.json): equal
    bins over the bulk of both samples, the threshold inside the drawn range and on no edge, densities that with the
    overflow beyond the range integrate to 1 for each side, the counts those of the bounding split, and the axis the
    output itself. The page, in Chromium, puts both caveats of a "no violation found" in the verdict's box."""
    folder = tmp_path / "report"
    assert main(["audit", "code", "--mechanism", f"{MECHANISMS}:laplace", "--neighbors", f"{MECHANISMS}:scalar_pair",
                 "--epsilon", "1", "--samples", "5000", "--workers", "2", "--seed", "3", "--report", str(folder),
                 "--json"]) == 0
    stored = json.loads((folder / "audit.json").read_text())
    figure = stored["histogram"]
    edges = np.asarray(figure["edges"])
    assert figure["kind"] == "numeric" and figure["score"] == "the output" and len(edges) == 41
    assert np.allclose(np.diff(edges), figure["width"], rtol=1e-9, atol=0)
    assert edges[0] < figure["threshold"] < edges[-1] and np.min(np.abs(edges - figure["threshold"])) > 1e-3
    for k, side in enumerate(("d0", "d1")):
        overflow = figure["overflow"]["below"][k] + figure["overflow"]["above"][k]
        n = figure["samples"][k]
        assert n == stored["p_" + side]["n"] == sum(figure[side]) + overflow
        assert sum(np.asarray(figure["density"][side]) * figure["width"]) + overflow / n == pytest.approx(1, abs=1e-12)
        assert overflow / n < 0.02  # the drawn range holds the bulk
    assert stored["verdict"] == "no-violation-found" and len(stored["caveats"]) == 1
    dom = subprocess.run([CHROMIUM, *FLAGS, "--user-data-dir=" + str(tmp_path / "profile"), "--dump-dom",
                          (folder / "audit.html").resolve().as_uri()], capture_output=True, text=True, timeout=60,
                         check=True).stdout
    box = dom[dom.index('class="caveat"'):dom.index('id="event"')]
    assert "not a proof" in box and "This audit: a leak confined to events of probability below" in box
    assert "Notes:" not in dom or "a leak confined" not in dom[dom.index("Notes:"):]
    assert "<td>output</td><td>a number</td>" in dom
