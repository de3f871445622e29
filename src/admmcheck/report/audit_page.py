"""One black-box audit as a page: ``audit.json`` and a self-contained ``audit.html`` (inline CSS,
the histogram of the deciding score and the (ε, δ) curve against the claim embedded as PNGs), written
by ``admmcheck audit ... --report DIR``.

The verdict and its bound come first; a caveat says that finding no violation is not a proof of
privacy. Every file is written atomically.
"""

from __future__ import annotations

import base64
import io
import math
from pathlib import Path

import jinja2
import numpy as np

from admmcheck.audit.result import VERDICT_WORDS
from admmcheck.audit.sequential import strict_bound
from admmcheck.audit.statistics.estimators import ESTIMATORS, TWO_INTERVALS
from admmcheck.report.model import Reproducible
from admmcheck.foundations.output import output_folder, to_json, write_atomic, write_text_atomic

LAYOUT_ROWS = 20  # output_layout entries shown on the page (all of them are in audit.json)

PAGE_STYLE = """body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; padding: 0 1em; color: #222; }
table { border-collapse: collapse; font-size: 0.92em; margin: 0.6em 0; }
th, td { border: 1px solid #ddd; padding: 0.35em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.verdict { font-size: 1.55em; font-weight: bold; padding: 0.5em 0.8em; border-radius: 6px; margin: 0.3em 0; }
.verdict.violation { background: #f8d0d0; border-left: 8px solid #c44e52; color: #7a1518; }
.verdict.no-violation-found { background: #e3f4e1; border-left: 8px solid #55a868; color: #1f5a2b; }
.verdict .claim { font-size: 0.62em; font-weight: normal; white-space: nowrap; }
.caveat { border-left: 4px solid #dd8452; background: #fdf1e6; padding: 0.5em 0.8em; margin: 0.8em 0; }
tr.deciding td { background: #fff6c8; }
.command code { display: block; background: #f6f6f6; padding: 0.6em; word-break: break-all; }
"""  # the rules every audit page shares

TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>admmcheck audit: {{ s.mechanism }}</title>
<style>
""" + PAGE_STYLE + """h1 { margin-bottom: 0.3em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
.estimate { font-size: 1.1em; margin: 0.4em 0; }
.finding { border-left: 4px solid #c44e52; background: #fbe9e9; padding: 0.5em 0.8em; margin: 0.6em 0; }
code, pre { font-size: 0.88em; } pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
</style></head><body>
<h1>admmcheck audit: {{ s.mechanism }}</h1>
<section id="verdict">
<p class="verdict {{ s.verdict }}">{{ headline }} <span class="claim">({{ claim }})</span></p>
<p class="estimate">{{ estimate }}</p>
{% for finding in s.get("findings", ()) %}<p class="finding"><b>Finding:</b> {{ finding|symbols }}</p>
{% endfor %}{% if s.verdict != "violation" %}<div class="caveat"><p>{{ caveat }}</p>
{% for caveat in s.get("caveats", ()) %}<p>This audit: {{ caveat|symbols }}.</p>{% endfor %}</div>{% endif %}
</section>
<section id="event">
<h2>Claim and deciding event</h2>
<p>Claim: the mechanism is {{ c.describe }} ({{ c.claimed }}{% if c.source %}; {{ c.source }}{% endif %}), tested
on neighbour pair
{{ s.neighbour_pair }} of {{ s.neighbour_pairs }} at {{ percent }} % confidence.</p>
<p>Deciding event ({{ s.event_family }} family): <b>{{ s.event }}</b> &mdash; more likely under
<b>{{ s.event_more_likely_under }}</b>.</p>
<table><tr><th>dataset</th><th>count</th><th>n{% if sequential %} (the last look){% endif %}</th><th>estimate</th><th>Clopper&ndash;Pearson interval</th></tr>
{% for name, side in sides %}<tr><td>{{ name }}</td><td class="num">{{ side.count }}</td><td class="num">{{ side.n }}</td>
<td class="num">{{ side.estimate|num(4) }}</td><td>{% if sequential %}none: the sequential test bets, it bounds no
interval{% else %}[{{ side.interval[0]|num(4) }}, {{ side.interval[1]|num(4) }}]{% endif %}</td></tr>
{% endfor %}</table>
{% if not sequential %}<p>The epsilon lower bound comes from the {{ estimator.name }} estimator{% if estimator.method
%}: {{ estimator.method }}{% endif %}.</p>{% endif %}
{% if s.claimed_epsilon is not none %}<p>Delta at the claimed epsilon: {{ delta_text }}.</p>{% endif %}
{% if theorem %}<h3>Our bound for this mechanism</h3>
<table>{% for key, value in theorem %}<tr><th>{{ key }}</th><td>{{ value }}</td></tr>{% endfor %}</table>{% endif %}
</section>
{% if sequential %}<section id="sequential">
<h2>Sequential test (testing by betting)</h2>
<p>The audit stopped after {{ sequential.samples_used[0] }} of {{ s.samples }} samples per side, in
{{ sequential.looks|length }} looks. E-value at the claim: <b>{{ sequential.e_value|num }}</b>; a violation at
&ge; {{ sequential.threshold|num }} = 1/(1 &minus; confidence). Method: {{ sequential.method }}.</p>
<table><tr><th>look</th><th>samples per side</th><th>e-value at the claim</th><th>bets (stake: event)</th></tr>
{% for look in sequential.looks %}<tr><td class="num">{{ look.look }}</td><td class="num">{{ look.samples }}</td>
<td class="num">{{ look.e_value|num }}</td><td>{% for b in look.bets %}{{ b.stake|num }}: {{ b.event }}{% if not loop.last %}<br>
{% endif %}{% endfor %}</td></tr>
{% endfor %}</table>
</section>
{% endif %}{% if s.get("neighbour_search") %}{% set search = s.neighbour_search %}<section id="neighbour-search">
<h2>Neighbours found by the search</h2>
<p>The pair audited: <b>{{ search.found.change }}</b>. It was chosen among {{ search.candidates_screened }} candidate
pairs{% if search.candidates_built != search.candidates_screened %} (a seeded subset of the {{ search.candidates_built }}
built){% endif %}, each screened on {{ search.screening_samples_per_side }} samples per side of its own; the
{{ search.kept }} best {{ "was" if search.kept == 1 else "were" }} bounded on fresh samples
({{ "%.1f"|format(search.screening_wall_time_s) }} s of screening). Multiplicity: {{ search.multiplicity }}.</p>
<table><tr><th>screened candidate (best first)</th><th>screening estimate of epsilon</th><th>bounded</th></tr>
{% for c in search.best_screened %}<tr{% if c.change == search.found.change %} class="deciding"{% endif %}>
<td>{{ c.change }}</td><td class="num">{{ c.screen_epsilon|num if c.screen_epsilon is not none else "none" }}</td>
<td>{{ "yes" if c.change in chosen else "" }}</td></tr>
{% endfor %}</table>
</section>
{% endif %}<section id="histogram">
<h2>The two output laws along the deciding score</h2>
{% if image %}<figure><img alt="{{ image_alt }}" src="data:image/png;base64,{{ image }}">
<figcaption>{{ image_alt }}</figcaption></figure>
{% else %}<p>No picture is available for this event.</p>{% endif %}
</section>
<section id="privacy-curve">
<h2>The (&epsilon;, &delta;) curve</h2>
{% if curve_image %}{% set c = s.privacy_curve %}<figure><img alt="{{ curve_alt }}" src="data:image/png;base64,{{ curve_image }}">
<figcaption>{{ curve_alt }}</figcaption></figure>
<p>{{ curve_verdict }}</p>
<table><tr><th>delta</th>{% for d in c.delta_grid %}<td class="num">{{ d|num }}</td>{% endfor %}</tr>
<tr><th>epsilon &ge;</th>{% for e in c.epsilon_lower_bound %}<td class="num">{{ e|num }}</td>{% endfor %}</tr></table>
<p>{{ c.sets }} sets of outputs bounded ({{ c.intervals }} one-sided intervals, each at level {{ c.level|num }});
every point of the curve and every epsilon bound hold together at {{ percent }} % confidence. Method: {{ c.method }}.</p>
{% else %}<p>This audit has no (&epsilon;, &delta;) curve.</p>{% endif %}
</section>
<section id="candidates">
<h2>{{ "Events bet on at the last look" if sequential else "Bounded candidate events" }}</h2>
<table><tr><th>event</th><th>family</th><th>pair</th><th>counts (d0 / d1)</th><th>n (d0 / d1)</th>
<th>epsilon lower bound</th><th>level</th>{% if not sequential %}<th>bounded by</th>{% endif %}</tr>
{% for c in s.candidates %}<tr{% if c.event == s.event and c.pair == s.neighbour_pair %} class="deciding"{% endif %}>
<td>{{ c.event }}</td><td>{{ c.family }}</td><td class="num">{{ c.pair }}</td>
<td class="num">{{ c.counts[0] }} / {{ c.counts[1] }}</td><td class="num">{{ c.n[0] }} / {{ c.n[1] }}</td>
<td class="num">{{ c.epsilon_lower_bound|num }}</td><td class="num">{{ c.level|num }}</td>{% if not sequential %}<td>{{ c.estimator|default("two intervals") }}</td>{% endif %}</tr>
{% endfor %}</table>
</section>
<section id="samples">
<h2>Samples and time</h2>
<table><tr><th></th><th>d0</th><th>d1</th></tr>
<tr><th>{{ "first look (chose events only)" if sequential else "selection split" }}</th><td class="num">{{ s.samples_used.selection[0] }}</td><td class="num">{{ s.samples_used.selection[1] }}</td></tr>
<tr><th>{{ "bet on" if sequential else "bounding split" }}</th><td class="num">{{ s.samples_used.bounding[0] }}</td><td class="num">{{ s.samples_used.bounding[1] }}</td></tr>
</table>
<p>Asked for {{ s.samples }} samples per side; wall time {{ "%.1f"|format(s.wall_time_s) }} s;
{% if s.complete %}complete.{% else %}cut short by the time budget: the bounds use the samples drawn.{% endif %}</p>
<p>Multiplicity: {{ s.multiplicity.intervals }} intervals, {{ s.multiplicity.method }}</p>
{% if s.notes %}<p>Notes:</p><ul>{% for note in s.notes %}<li>{{ note|symbols }}</li>{% endfor %}</ul>{% endif %}
<p>What the mechanism returns{% if layout_more %} (the first {{ layout_shown }} parts of {{ layout_shown + layout_more }}){% endif %}:</p>
<table><tr><th>part</th><th>shape</th><th>details</th></tr>
{% for part in layout %}<tr><td>{{ part.name }}</td><td>{{ part.shape }}</td><td>{{ part.details }}</td></tr>
{% endfor %}</table>
</section>
<section id="reproducibility">
<h2>Reproducibility</h2>
<p><b>reproducible: {{ "yes" if s.reproducible else "no" }}</b> &mdash; {{ s.randomness.reason }}</p>
{% if not s.reproducible %}<p>The same seed will not give the same samples again, but every sample is an independent
draw, so the confidence statement still holds.</p>{% endif %}
<table><tr><th>seed</th><td>{{ s.seed }}</td></tr>
<tr><th>randomness</th><td>requested {{ s.randomness.requested }}, used {{ s.randomness.mode }}</td></tr>
{% for key, value in s.versions.items() %}<tr><th>{{ key }}</th><td>{{ value }}</td></tr>{% endfor %}
</table>
<p class="command">Reproduce with:<code>{{ s.command }}</code></p>
</section>
</body></html>
"""

CAVEAT = ("\"No violation found\" is not a proof of privacy: a black-box audit can only refute a claim. It tests "
          "the events it chose on the samples it drew; a mechanism that leaks through another event, another "
          "neighbour pair or too rarely for these samples would pass it.")


def format_number(value: object, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits; ``inf``, ``nan`` and ``none`` spelled out."""
    if value is None:
        return "none"
    if isinstance(value, (float, np.floating)) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return f"{float(value):.{digits}g}"


def claim_of(s: dict) -> dict[str, str]:
    """The audited claim's words (``describe``, ``claimed``, ``source``): the summary's ``claim``, or, in an audit
    JSON written before claims of other notions, its (``claimed_epsilon``, ``claimed_delta``)."""
    if "claim" in s:
        return s["claim"]
    epsilon, delta = format_number(s["claimed_epsilon"]), format_number(s["claimed_delta"])
    return {"describe": f"({epsilon}, {delta})-DP", "claimed": f"claimed epsilon = {epsilon}, delta = {delta}",
            "source": ""}


def bound_of(s: dict) -> dict[str, object]:
    """The verdict's lower bound (``parameter``, ``value``): the summary's ``lower_bound``, or the ε bound of an audit
    JSON written before claims of other notions."""
    return s.get("lower_bound") or {"parameter": "epsilon", "value": s["epsilon_lower_bound"]}


def symbols(text: str) -> str:
    """``text`` written for the command line (">=", "<=") spelled as the pages spell it (≥, ≤)."""
    return str(text).replace(">=", "≥").replace("<=", "≤")


def _part(entry: dict) -> dict[str, str]:
    """One part of the output layout in words: its name, its shape ("a number" for a scalar, "3 × 4"), the rest."""
    entry = dict(entry)
    name, shape = str(entry.pop("name", "output")), entry.pop("shape", None)
    if shape is None:
        shaped = "not stated"
    elif not shape:
        shaped = "a number"
    else:
        shaped = " × ".join(str(size) for size in shape)
    return {"name": name, "shape": shaped, "details": "; ".join(f"{key}: {value}" for key, value in entry.items())}


def _headline(s: dict, percent: str) -> str:
    word = VERDICT_WORDS[s["verdict"]]
    bound = bound_of(s)
    return f"{word}: {bound['parameter']} {'>' if strict_bound(s) else '≥'} {format_number(bound['value'])} at {percent} % confidence"


def _estimate(s: dict) -> str:
    value = s["epsilon_estimate"]
    if value is None or math.isnan(value):
        return "point estimate: none (the deciding event never happened under either dataset)"
    if math.isinf(value) and value > 0:
        other = "d1" if s["event_more_likely_under"] == "d0" else "d0"
        n = s[f"p_{other}"]["n"]
        return (f"point estimate: infinite — {other} produced no output in this event in the {n} samples counted "
                "(the ratio of the frequencies; the bound is what the samples establish)")
    return f"point estimate: epsilon ≈ {format_number(value)} (ln of the ratio of the two event frequencies)"


def _delta_text(value: float | None) -> str:
    if value is None or not value > 0:
        return "no evidence of delta above 0"
    return f"delta ≥ {format_number(value)} at the stated confidence"


def _text(value: object) -> str:
    """A theorem value for a key = value row."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if value is None or isinstance(value, (int, float, np.integer, np.floating)):
        return format_number(value, 6)
    if isinstance(value, dict):  # in words, not JSON: "key: value; ..."
        return "; ".join(f"{key}: " + (f"({_text(item)})" if isinstance(item, dict) else _text(item))
                         for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(item) for item in value)
    return str(value)


def _figure(histogram: dict, n: list[int]):
    """The d0 and d1 laws along the score: a numeric score as densities over equal bins, the threshold a line, the
    samples beyond the drawn range as labelled overflow counts; a categorical one as relative frequencies."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(10, 3.8))
    colours = ("#4c72b0", "#dd8452")
    if histogram["kind"] == "numeric":
        edges = np.asarray(histogram["edges"], float)
        heights = [np.asarray(histogram["density"][side], float) for side in ("d0", "d1")]
        samples = histogram["samples"]
        for k, style in ((0, "-"), (1, "--")):
            axis.stairs(heights[k], edges, color=colours[k], ls=style, lw=2, label=f"d{k} ({samples[k]} samples)")
        threshold = float(histogram["threshold"])
        if math.isfinite(threshold):
            low, high = (threshold, edges[-1]) if histogram["above"] else (edges[0], threshold)
            axis.axvspan(max(low, edges[0]), min(high, edges[-1]), color="#c44e52", alpha=0.12,
                         label=f"event: {histogram['score']} {'>' if histogram['above'] else '<'} {threshold:.4g}")
            axis.axvline(threshold, color="#c44e52", lw=1.5)
        for where, key, word in ((0.01, "below", "below"), (0.99, "above", "above")):
            counts = histogram["overflow"][key]
            bound = edges[0] if key == "below" else edges[-1]
            axis.text(where, 0.97, f"{word} {bound:.4g}: " + ", ".join(
                f"d{k} {counts[k]} ({counts[k] / max(samples[k], 1):.1%})" for k in (0, 1)),
                transform=axis.transAxes, ha="left" if key == "below" else "right", va="top", fontsize=8)
        axis.set_xlim(edges[0], edges[-1])
        ylabel, positive = "density", np.concatenate([h[h > 0] for h in heights])
    else:
        counts = [np.asarray(histogram[side], float) for side in ("d0", "d1")]
        totals = [float(n[k]) if n[k] > 0 else max(counts[k].sum(), 1.0) for k in (0, 1)]
        frequencies = [c / t for c, t in zip(counts, totals)]
        labels = [str(label) for label in histogram["labels"]]
        where = np.arange(len(labels))
        for k in (0, 1):
            axis.bar(where + (k - 0.5) * 0.4, frequencies[k], width=0.4, color=colours[k],
                     label=f"d{k} ({int(n[k])} samples)")
        marked = [i for i, inside in enumerate(histogram["in_event"]) if inside]
        for i in marked:
            axis.axvspan(i - 0.5, i + 0.5, color="#c44e52", alpha=0.12,
                         label="in the event" if i == marked[0] else None)
        ticks = [f"{label} *" if inside else label for label, inside in zip(labels, histogram["in_event"])]
        crowded = len(labels) > 8
        axis.set_xticks(where, ticks, rotation=30 if crowded else 0, ha="right" if crowded else "center")
        ylabel, positive = "relative frequency", np.concatenate([f[f > 0] for f in frequencies])
    if positive.size and positive.max() / positive.min() > 1e3:
        axis.set_yscale("log")
    axis.set(xlabel=str(histogram["score"]), ylabel=ylabel)
    axis.set_title("deciding score under d0 and d1 (bounding split)")
    axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the plot, never over it
    figure.tight_layout()
    return figure


def _estimator(name: str) -> dict[str, str]:
    """The estimator the bound came from: its name and, where it is registered here, how it bounds (a saved
    audit.json may name one registered only where it was written)."""
    method = next((estimator.method for estimator in ESTIMATORS if estimator.name == name), "")
    return {"name": name, "method": method}


def write_png(figure, path: Path) -> tuple[Path, str]:
    """Write ``figure`` to ``path`` as a PNG (atomic) and close it; returns the path and the PNG in base64."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    data = buffer.getvalue()
    return write_atomic(path, lambda stream: stream.write(data)), base64.b64encode(data).decode("ascii")


def _curve_verdict(curve: dict, percent: str) -> str:
    """What the curve says about the claim, in words."""
    above = curve["exceeds_claim_at_epsilon"]
    if not above:
        return ("The lower bound stays at or below the curve of the claim at every epsilon of the grid: the curve refutes "
                "nothing (which is not a proof of privacy).")
    return (f"The lower bound lies above the curve of the claim at {len(above)} grid point(s) of epsilon between "
            f"{format_number(min(above))} and {format_number(max(above))} (marked red): there the claim is refuted at {percent} % confidence, by a statement of its own beside "
            "the verdict's.")


def write_audit_page(result: Reproducible, folder: str | Path) -> dict[str, Path]:
    """Write the page of ``result``, an audit's result (black-box, or a registered mechanism's with its white box): its JSON
    (:meth:`~admmcheck.foundations.results.Result.as_dict`, with the command and the package versions that
    :class:`~admmcheck.report.model.Reproducible` adds) is what the page shows."""
    return render_audit_page(result.as_dict(), folder)


def render_audit_page(summary: dict, folder: str | Path) -> dict[str, Path]:
    """Write audit.json and a self-contained audit.html for one audit into ``folder``; returns
    {"json": path, "html": path, "histogram.png": path (when a histogram is drawn),
    "privacy_curve.png": path (when the audit has an (ε, δ) curve)}."""
    target = output_folder(folder, "folder")
    paths = {"json": write_text_atomic(target / "audit.json", to_json(summary, indent=2) + "\n")}
    image = curve_image = None
    histogram = summary.get("histogram")
    if histogram:
        paths["histogram.png"], image = write_png(_figure(histogram, summary["samples_used"]["bounding"]),
                                             target / "histogram.png")
    curve = summary.get("privacy_curve")
    if curve:
        from admmcheck.report.curve_figure import curve_figure

        paths["privacy_curve.png"], curve_image = write_png(curve_figure({"audit": curve}, "lower bound on delta(epsilon) "
                                                                    "and the curve of the claim"), target / "privacy_curve.png")
    layout = list(summary["output_layout"])
    percent = f"{100 * summary['confidence']:g}"
    theorem = summary.get("theorem")
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    environment.filters["num"] = format_number
    environment.filters["symbols"] = symbols
    html = environment.from_string(TEMPLATE).render(
        s=summary, sequential=summary.get("sequential"), headline=_headline(summary, percent), estimate=_estimate(summary), caveat=CAVEAT,
        claim=claim_of(summary)["claimed"], c=claim_of(summary),
        percent=percent, sides=[("d0", summary["p_d0"]), ("d1", summary["p_d1"])],
        delta_text=_delta_text(summary["delta_lower_bound_at_claimed_epsilon"]),
        theorem=[(str(key), _text(value)) for key, value in theorem.items()] if isinstance(theorem, dict) else None,
        image=image, curve_image=curve_image,
        curve_alt=f"lower bound on delta(epsilon) at {percent} % confidence (solid) and the most a {claim_of(summary)['describe']} "
                  "claim allows (dashed); red where the bound lies above the claim",
        curve_verdict=_curve_verdict(curve, percent) if curve else "",
        image_alt=(f"{'densities' if histogram['kind'] == 'numeric' else 'relative frequencies'} of "
                   f"{histogram['score']} under d0 and d1, event marked") if histogram else "",
        layout=[_part(entry) for entry in layout[:LAYOUT_ROWS]],
        layout_shown=min(len(layout), LAYOUT_ROWS), layout_more=max(len(layout) - LAYOUT_ROWS, 0),
        chosen={c["change"] for c in (summary.get("neighbour_search") or {}).get("chosen", ())},
        estimator=_estimator(summary.get("estimator", TWO_INTERVALS)))
    paths["html"] = write_text_atomic(target / "audit.html", html)
    return paths
