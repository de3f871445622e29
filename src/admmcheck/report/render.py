"""Render a :class:`~admmcheck.report.model.Report`: ``report.json``, the figures (PNG and SVG) and
a self-contained ``report.html`` (inline CSS, figures embedded) from a jinja2 template.

Every file is written atomically (a temporary file renamed over the old one), so an interrupted
run leaves the previous report readable.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

import jinja2

from admmcheck.foundations.output import output_folder, to_json, write_atomic, write_text_atomic
from admmcheck.report.model import Report

TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>admmcheck verification report</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1150px; color: #222; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
table { border-collapse: collapse; width: 100%; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.35em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.pass { background: #e3f4e1; } .fail { background: #fbe3c8; } .violation { background: #f8d0d0; font-weight: bold; }
.not-applicable { background: #eee; } .inconclusive { background: #fff6c8; }
code { font-size: 0.85em; word-break: break-all; }
.summary span { display: inline-block; margin-right: 1.2em; padding: 0.2em 0.6em; border-radius: 4px; }
h3 { font-size: 1em; margin-top: 1.2em; } .see-also { font-size: 0.9em; color: #555; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
.caveat { border-left: 4px solid #dd8452; background: #fdf1e6; padding: 0.3em 0.8em; margin: 0.8em 0; }
.finding { border-left: 4px solid #c44e52; padding: 0.3em 0.8em; margin: 0.8em 0; background: #fdf3f3; }
</style></head><body>
<h1>admmcheck verification report</h1>
<p>Profile <b>{{ report.profile }}</b>, seed <b>{{ report.seed }}</b>. Each verdict names the command that reproduces it.</p>
<p class="summary">{% for name, n in report.counts().items() %}<span class="{{ name }}">{{ name }}: {{ n }}</span>{% endfor %}</p>
<h2 id="verdicts">Verdicts</h2>
<table><tr><th>algorithm</th><th>check</th><th>verdict</th><th>key figure</th><th>reproduce with</th></tr>
{% for v in report.verdicts %}<tr class="{{ v.verdict }}"><td><a href="#algorithm-{{ v.algorithm }}">{{ v.algorithm }}</a></td>
<td>{{ v.check }}</td><td>{{ v.verdict }}</td><td>{{ v.figure }}</td><td><code>{{ v.command }}</code></td></tr>
{% endfor %}</table>
{% macro figure(name) %}{% set spec = report.figures[name] %}{% if name in tables %}
<h3 id="figure-{{ name }}">{{ spec.title }}</h3><table>{% for key, value in tables[name] %}
<tr><th>{{ key }}</th><td>{{ value }}</td></tr>{% endfor %}</table>
{% elif name in images %}<figure id="figure-{{ name }}"><img alt="{{ spec.title }}" src="data:image/png;base64,{{ images[name] }}">
<figcaption>{{ spec.title }}</figcaption></figure>{% endif %}{% endmacro %}
{% for algorithm in report.algorithms %}<h2 id="algorithm-{{ algorithm }}" class="algorithm">{{ algorithm }}</h2>
<table><tr><th>check</th><th>verdict</th><th>key figure</th><th>reproduce with</th></tr>
{% for v in report.verdicts if v.algorithm == algorithm %}<tr class="{{ v.verdict }}"><td>{{ v.check }}</td>
<td>{{ v.verdict }}</td><td>{{ v.figure }}</td><td><code>{{ v.command }}</code></td></tr>{% endfor %}</table>
{% for at, caveat in audited.get(algorithm, []) %}<p class="caveat">Checked {{ at }}: {{ caveat }}.</p>{% endfor %}
{% for f in report.findings if f.algorithm == algorithm %}<div class="finding"><b>Finding: {{ f.title }}</b><br>{{ f.evidence }}<br>
<code>{{ f.command }}</code></div>{% endfor %}
{% for name in placement.get(algorithm, []) %}{{ figure(name) }}{% endfor %}
{% for name, home in shared.get(algorithm, []) %}<p class="see-also">Also about {{ algorithm }}: <a href="#figure-{{ name }}">{{ report.figures[name].title }}</a> (in the {{ home }} section).</p>
{% endfor %}{% endfor %}
{% if orphan_findings or orphan_figures %}<h2 id="other">Other findings and figures</h2>
{% for f in orphan_findings %}<div class="finding"><b>{{ f.algorithm }}: {{ f.title }}</b><br>{{ f.evidence }}<br>
<code>{{ f.command }}</code></div>{% endfor %}{% for name in orphan_figures %}{{ figure(name) }}{% endfor %}{% endif %}
{% if report.data %}<h2 id="data">Experiments' data</h2>
{% for line in report.data %}<p>{{ line }}</p>{% endfor %}{% endif %}
<h2 id="reproducibility">Reproducibility</h2>
<table>{% for key, value in report.reproducibility.items() %}<tr><th>{{ key }}</th><td><code>{{ value }}</code></td></tr>
{% endfor %}<tr><th>wall time (s)</th><td>{{ "%.1f"|format(total_seconds) }}</td></tr></table>
</body></html>
"""


def _placement(report: Report) -> tuple[dict[str, list[str]], dict[str, list[tuple[str, str]]], list[str]]:
    """Each figure is drawn in the section of the first algorithm it names that has verdicts, and
    linked from the others; figures naming none of them go to the closing section."""
    known = report.algorithms
    placement: dict[str, list[str]] = {}
    shared: dict[str, list[tuple[str, str]]] = {}
    orphans = []
    for name, spec in report.figures.items():
        owners = [a for a in spec.algorithms or () if a in known]
        if not owners:
            orphans.append(name)
            continue
        placement.setdefault(owners[0], []).append(name)
        for other in owners[1:]:
            shared.setdefault(other, []).append((name, owners[0]))
    return placement, shared, orphans


def _audited(report: Report) -> dict[str, list[tuple[str, str]]]:
    """For each algorithm, the settings its verdicts were checked at (``audited_at``: a plugin's declared audit
    setting) with what a verdict there does not say (``caveat``), once each."""
    found: dict[str, list[tuple[str, str]]] = {}
    for verdict in report.verdicts:
        if "audited_at" in verdict.details:
            pair = (str(verdict.details["audited_at"]), str(verdict.details["caveat"]))
            if pair not in found.setdefault(verdict.algorithm, []):
                found[verdict.algorithm].append(pair)
    return found


def render(report: Report, out: str | Path) -> dict[str, Path]:
    """Write report.json, the figures and report.html into ``out``; returns the paths."""
    folder = output_folder(out, "out")
    paths = {"json": write_text_atomic(folder / "report.json", to_json(report.as_dict(), indent=2) + "\n")}
    images = {}
    for name, spec in report.figures.items():
        figure = spec.figure()
        if figure is None:
            continue
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=100)
        images[name] = base64.b64encode(buffer.getvalue()).decode("ascii")
        paths[f"{name}.png"] = write_atomic(folder / f"{name}.png", lambda stream, data=buffer.getvalue(): stream.write(data))
        paths[f"{name}.svg"] = write_atomic(folder / f"{name}.svg",
                                            lambda stream, figure=figure: figure.savefig(stream, format="svg"))
        import matplotlib.pyplot as plt

        plt.close(figure)
    tables = {name: spec.rows() for name, spec in report.figures.items() if spec.rows() is not None}
    placement, shared, orphan_figures = _placement(report)
    known = set(report.algorithms)
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    html = environment.from_string(TEMPLATE).render(
        report=report, images=images, tables=tables, placement=placement, shared=shared, audited=_audited(report),
        orphan_figures=orphan_figures, orphan_findings=[f for f in report.findings if f["algorithm"] not in known],
        total_seconds=sum(report.timings_s.values()))
    paths["html"] = write_text_atomic(folder / "report.html", html)
    return paths
