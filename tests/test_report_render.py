"""report.html layout: each figure in the section of the algorithm it is about (issue 20)."""

from __future__ import annotations

import json

from admmcheck.foundations.figures import Figure
from admmcheck.report.model import Report, Verdict
from admmcheck.report.render import render


def tagged_report() -> Report:
    report = Report("smoke", 0)
    for algorithm in ("admm", "pp", "radmm"):
        report.add(Verdict(algorithm, "a check", "pass", "1.0", f"admmcheck run {algorithm} --json", 1.0), 0.1)
    report.figures["privacy"] = Figure.from_dict({"kind": "privacy-bars", "title": "privacy bars", "algorithms": ["pp", "radmm"],
                                 "series": {"pp": {"claimed_beta": 1.3, "white_box_worst": 1.2,
                                                   "white_box_max_sampled": 0.4, "black_box_lower_bound": 0.0}}})
    report.figures["loss"] = Figure.from_dict({"kind": "histograms", "title": "loss histogram", "xlabel": "L", "algorithms": ["pp"],
                              "series": {"pp": {"edges": [0.0, 0.5, 1.0], "counts": [3, 1], "infinite": 2,
                                                "beta": 1.3}}})
    report.figures["gamma"] = Figure.from_dict({"kind": "table", "title": "gamma interval", "algorithms": ["radmm"],
                               "series": {"interval": {"lo_float": 0.25, "hi_float": 0.5}}})
    report.figures["elsewhere"] = Figure.from_dict({"kind": "curves", "title": "untagged curves", "series": {"a": [1.0, 0.5]}})
    report.findings.append({"algorithm": "radmm", "title": "a finding", "evidence": "numbers", "command": "admmcheck"})
    report.findings.append({"algorithm": "unknown", "title": "orphan finding", "evidence": "e", "command": "c"})
    return report


def _section(html: str, algorithm: str) -> str:
    start = html.index(f'id="algorithm-{algorithm}"')
    following = [html.find('<h2 id="', start + 1)]
    return html[start:min(p for p in following if p > 0)]


def test_figures_tables_and_findings_sit_in_their_algorithms_sections(tmp_path):
    paths = render(tagged_report(), tmp_path)
    html = paths["html"].read_text()
    pp, radmm, admm = (_section(html, a) for a in ("pp", "radmm", "admm"))
    assert 'id="figure-privacy"' in pp and 'id="figure-loss"' in pp and "data:image/png" in pp
    assert 'href="#figure-privacy"' in radmm and 'id="figure-privacy"' not in radmm  # linked, drawn once
    assert 'id="figure-gamma"' in radmm and "lo_float = 0.25; hi_float = 0.5" in radmm
    assert "a finding" in radmm and "a finding" not in pp
    assert "figure-" not in admm
    other = html[html.index('id="other"'):]
    assert 'id="figure-elsewhere"' in other and "orphan finding" in other
    assert html.count("data:image/png;base64,") == 3  # privacy, loss, elsewhere; the table is HTML
    saved = json.loads(paths["json"].read_text())
    assert saved["figures"]["loss"]["series"]["pp"]["infinite"] == 2
