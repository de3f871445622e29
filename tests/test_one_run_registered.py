"""One-run canary audits of registered mechanisms (issue 54, item 2): ``admmcheck audit NAME --canaries M``. The
spec's family knows where records live (:mod:`admmcheck.mechanisms.canaries`): a node's records (consensus), one
party's rows (sharing). DP sharing as published is caught from one run; PP at its theorem's noise is not, against the
claim recomputed here from (26) on the node sizes with the slots; DPSDA, whose records are its rounds, refuses."""

from __future__ import annotations

import json

import numpy as np
import pytest

from admmcheck.audit.one_run.bounds import epsilon_lower_bound
from admmcheck.cli import main
from admmcheck.mechanisms.canaries import ConsensusCanaries, Placement, SharingCanaries
from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.mechanisms.settings import ConsensusSetting, SharingSetting

AUDIT = ConsensusSetting.DEFAULTS["audit"]  # 3 nodes on a ring (V_i = 2), 10 records each, T = 5, eta = 1, alpha = 5


def _audit(capsys, *words: str) -> tuple[int, dict]:
    status = main(["audit", *words, "--workers", "2", "--json"])
    return status, json.loads(capsys.readouterr().out)


def test_dp_sharing_as_published_is_caught_from_one_run_with_every_guess_right(capsys):
    """The default slot is e_1 and the canary another unit row: the server's entry D_m x̃ of the slot is one of the
    two exactly (the noise lives in x̃), so every guess is right, and the bound is the binomial tail of all right."""
    status, out = _audit(capsys, "dp-sharing", "--canaries", "300", "--canary-placement", "spread")
    assert status == 1 and out["verdict"] == "violation" and out["mechanism"] == "dp-sharing"
    assert out["placement"] == "spread" and out["canaries_total"] == 300 and out["runs"] == 1
    assert min(out["scores"]["included"]) > 0 > max(out["scores"]["excluded"])
    included = len(out["scores"]["included"])
    for guess in out["guesses"]:  # the k highest are right up to the included count, the k lowest likewise
        k = guess["guesses"] // 2
        assert guess["correct"] == min(k, included) + min(k, 300 - included)
    assert out["epsilon_lower_bound"] == pytest.approx(max(
        epsilon_lower_bound(guess["guesses"], guess["correct"], 1 - 0.05 / 6, out["claimed_delta"], canaries=300)
        for guess in out["guesses"]), rel=1e-12)
    assert out["claimed_epsilon"] == pytest.approx(min(out["theorem"]["epsilon_total"],
                                                       out["theorem"]["basic_composition"]["epsilon"]))


def test_pp_at_its_theorems_noise_is_not_flagged_against_the_claim_on_the_sizes_with_the_slots(capsys):
    status, out = _audit(capsys, "pp", "--canaries", "300", "--canary-placement", "spread", "--seed", "1")
    assert status == 0 and out["verdict"] == "no-violation-found"
    # (26): beta = max_i sum_t C (1.4 c1 + alpha) / (eta V_i B_i), B_i = 10 records + 100 slots
    assert out["claimed_epsilon"] == pytest.approx(5 * (1.4 * 0.25 + 5) / (1 * 2 * 110), rel=1e-12)
    assert out["epsilon_lower_bound"] <= out["claimed_epsilon"]
    assert out["score"].startswith("exact privacy loss")  # PP has a white box: each canary's likelihood ratio
    status, alone = _audit(capsys, "pp", "--canaries", "300", "--seed", "1")
    assert alone["claimed_epsilon"] == pytest.approx(5 * 5.35 / (2 * 10))  # node:0's slots: nodes 1, 2 keep B_i = 10


def test_the_slots_are_where_the_placement_says_and_hold_the_canary_or_the_default():
    pp, sharing = REGISTRY.mechanism("pp"), REGISTRY.mechanism("dp-sharing")
    consensus = ConsensusCanaries()
    base = consensus.base(pp, AUDIT)
    game = consensus.draw(base, 7, 1, Placement.parse("spread"), seed=3)
    keep = np.array([True, False, True, True, False, False, True])
    filled = consensus.fill(base, game, keep)
    assert filled.sizes == (13, 12, 12) and list(game.owners) == [0, 1, 2, 0, 1, 2, 0]
    assert np.array_equal(filled.features[0][10:], game.points[[0, 3, 6]])  # its slots in canary order, all kept
    assert np.array_equal(filled.features[2][10:], np.stack([game.points[2], np.zeros(base.dim)]))  # 5 is empty
    assert np.array_equal(filled.labels[2][10:], game.labels[[2, 5]])  # a slot keeps its label either way
    assert np.allclose(np.linalg.norm(game.points, axis=1), 1.0) and set(game.labels) <= {-1.0, 1.0}
    assert consensus.draw(base, 7, 1, Placement.parse("spread"), seed=3).points.tolist() == game.points.tolist()
    rows = SharingCanaries()
    problem = rows.base(sharing, SharingSetting.DEFAULTS["audit"])
    game = rows.draw(problem, 4, 1, Placement.parse("node:1"), seed=0)
    filled = rows.fill(problem, game, np.array([True, False, True, False]))
    extra = [part[problem.samples:] for part in filled.parts]
    assert np.array_equal(extra[0], np.tile(np.eye(problem.widths[0])[0], (4, 1)))  # party 0 keeps e_1
    assert np.array_equal(extra[1][[1, 3]], np.tile(np.eye(problem.widths[1])[0], (2, 1)))
    assert np.array_equal(extra[1][[0, 2]], game.points[[0, 2], :problem.widths[1]])
    assert np.allclose(np.linalg.norm(filled.parts[1], axis=1), 1.0)  # Assumption 2.3 holds in every run


def test_runs_pool_and_the_same_seed_gives_the_same_audit(capsys):
    words = ("pp", "--canaries", "20", "--runs", "3", "--canary-placement", "spread", "--seed", "2")
    _, first = _audit(capsys, *words)
    _, again = _audit(capsys, *words)
    first.pop("wall_time_s"), again.pop("wall_time_s")
    assert first == again and first["canaries_total"] == 60 and first["runs"] == 3


@pytest.mark.parametrize("words, message", [
    (["dpsda-c", "--canaries", "10"], "dpsda-c has no canaries: it was registered without canaries="),
    (["pp", "--runs", "2"], "--runs applies to a one-run audit: add --canaries M"),
    (["pp", "--canaries", "10", "--white-box", "--record", "0:0", "--samples", "10"],
     "--samples, --white-box, --record: not for a one-run audit (--canaries)"),
    (["pp", "--canaries", "10", "--canary-placement", "node:3"], "--canary-placement node:3: there are 3 nodes, 0..2"),
    (["dp-sharing", "--canaries", "10", "--canary-placement", "party:0"],
     "--canary-placement 'party:0': write node:I (every canary in the records of node or party I) or spread"),
    (["pp", "--canaries", "0"], "canaries"),
])
def test_what_a_one_run_audit_cannot_do_is_refused_with_what_to_write(capsys, words, message):
    assert main(["audit", *words]) == 2
    assert message in capsys.readouterr().err


def test_report_writes_the_one_run_page_with_the_scores_the_guesses_and_the_command(capsys, tmp_path):
    folder = tmp_path / "page"
    words = ["audit", "dp-sharing", "--canaries", "100", "--workers", "2", "--report", str(folder), "--json"]
    assert main(words) == 1
    printed = json.loads(capsys.readouterr().out)
    stored = json.loads((folder / "audit.json").read_text())
    assert stored == printed and stored["command"] == "admmcheck " + " ".join(words)
    html = (folder / "audit.html").read_text()
    for section in ("verdict", "scores", "guesses", "game"):
        assert f'<section id="{section}">' in html
    guesses = html.split('<section id="guesses">')[1].split("</section>")[0]
    assert guesses.count("<tr") == len(stored["guesses"]) + 1 and guesses.count('class="deciding"') == 1
    assert "<th>claim from</th><td>ADMM-sharing Lemma 1, Theorem 1, Corollary 1 (11)</td>" in html
    assert 'class="verdict violation"' in html and "not a proof of privacy" not in html  # that caveat: no violation
    game = html.split('<section id="game">')[1]
    assert "<th>canaries drawn from</th><td>records (x, y): x a uniform direction on the unit sphere" not in game
    assert "<th>canaries drawn from</th><td>unit rows of one party&#39;s block D_m, with a label" in game
    assert "epsilon &gt;=" not in html and "&gt;=" not in html.split('<section id="verdict">')[1].split("</section>")[0]
    included, excluded = len(stored["scores"]["included"]), len(stored["scores"]["excluded"])
    assert f"{included} canaries included, {excluded} excluded" in html
    assert (folder / "scores.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and html.count("data:image/png;base64,") == 1


def test_pp_with_a_hundredth_of_its_noise_is_caught_from_one_run_where_each_node_holds_few_canaries():
    """PP run with 100 times its alpha (noise 100 times too small), claiming PP's beta: one run of 1,000 canaries
    spread over 100 nodes of 10 records in d = 10 (10 canaries a node) refutes the claim recomputed here from (26) on
    B_i = 20, where the audit setting's 3 nodes could not (benchmarks/results/one_run_registered.md)."""
    from dataclasses import replace

    from admmcheck.commands.canary_audit import CanarySlots, MechanismCanaryAudit, run_mechanism_canary_audit
    from admmcheck.mechanisms.registry import register

    pp = REGISTRY.mechanism("pp")
    register(replace(pp, name="pp-quiet", arguments=lambda s: pp.arguments(s) | {"alpha": 100 * pp.arguments(s)["alpha"]}))
    try:
        wide = replace(AUDIT, nodes=100, samples=1000, dim=10)
        result = run_mechanism_canary_audit(MechanismCanaryAudit("pp-quiet", wide, CanarySlots(1000, 1, "spread"),
                                                                 pp.audit.but(seed=0, workers=2)))
    finally:
        REGISTRY.unregister("pp-quiet")
    assert result.claim.epsilon == pytest.approx(5 * (1.4 * 0.25 + 5) / (1 * 2 * 20), rel=1e-12)
    assert result.verdict == "violation" and result.epsilon_lower_bound > result.claim.epsilon
    assert result.runs == 1 and result.as_dict()["canaries_total"] == 1000
