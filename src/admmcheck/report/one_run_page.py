"""One one-run canary audit as a page: ``audit.json``, ``scores.png`` and a self-contained ``audit.html``, written by
``admmcheck audit canaries ... --report DIR`` and ``admmcheck audit NAME --canaries M --report DIR``.

The verdict and its bound come first, then what a one-run bound can and cannot say, the scores of the included and
the excluded canaries (the picture the guesses are read from, the deciding guess's two thresholds marked), every
guess with its bounds, and the game (canaries, runs, where they were, the score, the seed). Every file is written
atomically.
"""

from __future__ import annotations

from pathlib import Path

import jinja2
import numpy as np

from admmcheck.audit.result import VERDICT_WORDS
from admmcheck.report.audit_page import PAGE_STYLE, format_number, symbols, write_png
from admmcheck.report.model import Reproducible
from admmcheck.foundations.output import output_folder, to_json, write_text_atomic

CAVEAT = ("A one-run audit tests the canaries it drew, from the runs it made: \"no violation found\" is weak evidence, "
          "not a proof of privacy, and no bound exceeds what its number of canaries allows (see the notes). Audit "
          "with many runs to measure epsilon rather than refute a claim.")

TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>admmcheck one-run audit: {{ name }}</title>
<style>
""" + PAGE_STYLE + """h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
figure img { max-width: 100%; border: 1px solid #ddd; }
</style></head><body>
<h1>admmcheck one-run audit: {{ name }}</h1>
<section id="verdict">
<p class="verdict {{ s.verdict }}">{{ headline }} <span class="claim">({{ claim }})</span></p>
<p>Gaussian DP: mu &ge; {{ s.mu_lower_bound|num }} (Mahloujifar, Melis &amp; Chaudhuri), from the same guesses.</p>
{% if s.verdict != "violation" %}<p class="caveat">{{ caveat }}</p>{% endif %}
{% for note in s.notes %}<p>Note: {{ note|symbols }}</p>{% endfor %}
</section>
<section id="scores">
<h2>Scores of the included and the excluded canaries</h2>
<figure><img src="data:image/png;base64,{{ image }}" alt="{{ image_alt }}">
<figcaption>{{ s.canaries_total }} scores ({{ s.score }}): {{ included }} canaries included, {{ excluded }} excluded.
The deciding guess called the {{ half }} highest "included" and the {{ half }} lowest "excluded" (the lines).
</figcaption></figure>
</section>
<section id="guesses">
<h2>Guesses</h2>
<p>The numbers of guesses were fixed before any score was seen; the error {{ error }} is split among them
(Bonferroni), so the largest bound holds at {{ percent }} % confidence.</p>
<table><tr><th>share of the canaries</th><th>guesses</th><th>right</th><th>level</th><th>epsilon bound</th>
<th>mu bound</th></tr>
{% for g in s.guesses %}<tr{% if g is sameas deciding %} class="deciding"{% endif %}><td class="num">{{ g.share|num }}</td>
<td class="num">{{ g.guesses }}</td><td class="num">{{ g.correct }}</td><td class="num">{{ g.level|num }}</td>
<td class="num">{{ g.epsilon_lower_bound|num }}</td><td class="num">{{ g.mu_lower_bound|num }}</td></tr>
{% endfor %}</table>
</section>
<section id="game">
<h2>The game</h2>
<table>{% for key, value in game %}<tr><th>{{ key }}</th><td>{{ value }}</td></tr>
{% endfor %}</table>
{% if s.command %}<p class="command">Reproduce with:<code>{{ s.command }}</code></p>{% endif %}
</section>
</body></html>
"""


def _figure(included: np.ndarray, excluded: np.ndarray, high: float, low: float, score: str):
    """The two laws of the scores as densities on shared bins, the deciding guess's thresholds marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    everything = np.concatenate([included, excluded])
    edges = np.histogram_bin_edges(everything, bins=min(60, max(10, everything.size // 20)))
    figure, axis = plt.subplots(figsize=(10, 3.8))
    for values, colour, style, label in ((included, "#c44e52", "-", "included"),
                                         (excluded, "#4c72b0", "--", "excluded")):
        if values.size:
            counts, _ = np.histogram(values, bins=edges)
            axis.stairs(counts / values.size, edges, color=colour, ls=style, lw=2, label=f"{label} ({values.size})")
    axis.axvline(high, color="#c44e52", lw=1, ls=":", label="guessed included at or above")
    axis.axvline(low, color="#4c72b0", lw=1, ls=":", label="guessed excluded at or below")
    axis.set(xlabel=score, ylabel="share of the canaries")
    axis.set_title("canary scores by inclusion")
    axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.tight_layout()
    return figure


def write_one_run_page(result: Reproducible, folder: str | Path) -> dict[str, Path]:
    """Write the page of ``result``, a one-run audit's result: its JSON
    (:meth:`~admmcheck.foundations.results.Result.as_dict`, with the command and the package versions that
    :class:`~admmcheck.report.model.Reproducible` adds) is what the page shows."""
    return render_one_run_page(result.as_dict(), folder)


def render_one_run_page(summary: dict, folder: str | Path) -> dict[str, Path]:
    """Write audit.json, scores.png and audit.html for one one-run audit (its ``as_dict()``, with ``command`` where
    known) into ``folder``; returns {"json", "scores.png", "html"} -> path."""
    target = output_folder(folder, "folder")
    paths = {"json": write_text_atomic(target / "audit.json", to_json(summary, indent=2) + "\n")}
    included = np.asarray(summary["scores"]["included"], dtype=float)
    excluded = np.asarray(summary["scores"]["excluded"], dtype=float)
    deciding = summary["deciding_guess"]
    ordered = np.sort(np.concatenate([included, excluded]))
    half = deciding["guesses"] // 2
    paths["scores.png"], image = write_png(_figure(included, excluded, ordered[-half], ordered[half - 1], summary["score"]),
                                      target / "scores.png")
    percent = f"{100 * summary['confidence']:g}"
    word = VERDICT_WORDS[summary["verdict"]]
    name = summary.get("mechanism") or summary.get("train") or "training"
    game = [("canaries per run", summary["canaries"]), ("runs", summary["runs"]),
            ("canaries in all", summary["canaries_total"]), ("neighbouring", summary["neighbour_kind"]),
            ("score", summary["score"]), ("seed", summary["seed"]), ("wall time (s)", format_number(summary["wall_time_s"]))]
    if "placement" in summary:
        game.insert(3, ("placement", summary["placement"]))
    if "canary_domain" in summary:
        game.insert(1, ("canaries drawn from", summary["canary_domain"]))
    theorem = summary.get("theorem")
    if isinstance(theorem, dict) and theorem.get("theorem"):
        game.append(("claim from", theorem["theorem"]))
    if summary.get("claimed_mu") is None:
        bounded = "epsilon"
        claim = f"claimed epsilon = {format_number(summary['claimed_epsilon'])}, delta = {format_number(summary['claimed_delta'])}"
    else:
        bounded, claim = "mu", f"claimed mu = {format_number(summary['claimed_mu'])}, a Gaussian-DP trade-off curve"
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    environment.filters["num"] = format_number
    environment.filters["symbols"] = symbols
    guesses = summary["guesses"]
    html = environment.from_string(TEMPLATE).render(
        s=summary | {"command": summary.get("command", "")}, name=name, caveat=CAVEAT, percent=percent,
        headline=f"{word}: {bounded} ≥ {format_number(summary[bounded + '_lower_bound'])} at {percent} % confidence",
        claim=claim,
        image=image, included=included.size, excluded=excluded.size, half=half,
        image_alt=f"histograms of the scores of {included.size} included and {excluded.size} excluded canaries",
        error=format_number(1 - summary["confidence"]), game=game, deciding=next(g for g in guesses if g == deciding))
    paths["html"] = write_text_atomic(target / "audit.html", html)
    return paths
