"""The report is looked at: report.html rendered in headless Chromium (issue 20)."""

from __future__ import annotations

import shutil
import subprocess

from system import needs

from admmcheck.foundations.figures import Figure
from admmcheck.report.model import Report, Verdict
from admmcheck.report.render import render

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"]


def small_report() -> Report:
    report = Report("smoke", 0)
    report.add(Verdict("admm", "admm converges (synthetic)", "pass", "2.5e-13 (threshold 1e-06)",
                       "admmcheck run admm --json", 2.5e-13), 0.1)
    report.add(Verdict("dp-sharing", "audit against Corollary 1", "violation", "epsilon >= 5.2 vs claim 2",
                       "admmcheck audit dp-sharing --white-box --json", 5.2), 0.2)
    report.add(Verdict("pp", "black-box audit against beta", "pass", "epsilon >= 0.0 (claim 1.34)",
                       "admmcheck audit pp --json", 0.0), 0.3)
    report.figures["convergence"] = Figure.from_dict({"kind": "bars", "title": "final gap", "threshold": 1e-6,
                                     "series": {"synthetic N=5": {"admm converges": 2.5e-13}}})
    report.figures["privacy"] = Figure.from_dict({"kind": "privacy-bars", "title": "privacy", "series": {"pp": {
        "claimed_beta": 1.34, "white_box_worst": 1.24, "white_box_max_sampled": 0.39, "black_box_lower_bound": 0.0}}})
    report.findings.append({"algorithm": "dp-sharing", "title": "not DP", "evidence": "0/1000 vs 1000/1000",
                            "command": "admmcheck audit dp-sharing --json"})
    return report


@needs("chromium")
def test_report_html_renders_in_headless_chromium(tmp_path):
    paths = render(small_report(), tmp_path / "report")
    url = paths["html"].resolve().as_uri()
    profile = ["--user-data-dir=" + str(tmp_path / "chromium-profile")]
    dom = subprocess.run([CHROMIUM, *FLAGS, *profile, "--dump-dom", url], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert 'id="verdicts"' in dom and dom.count("<tr") >= 4
    for algorithm in ("admm", "dp-sharing", "pp"):
        assert f'id="algorithm-{algorithm}"' in dom
    assert dom.count('src="data:image/png;base64,') == 2 and 'class="finding"' in dom
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM, *FLAGS, *profile, "--window-size=1200,1600", f"--screenshot={shot}", url],
                   capture_output=True, timeout=120, check=True)
    from matplotlib.image import imread

    pixels = imread(shot)
    assert pixels.shape[0] == 1600 and pixels.shape[1] == 1200
    assert (pixels[..., :3] < 0.5).mean() > 0.01  # text and figures drawn, not a blank page
