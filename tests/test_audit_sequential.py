"""Issue 30, part 3: the sequential audit (testing by betting) stops early on a broken mechanism, runs to
its budget on a correct one, and its wealth is what the construction says it is."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from admmcheck.audit import PrivacyClaim, Source, audit
from admmcheck.audit.statistics.events import Event
from admmcheck.audit.sequential import (CAUTION, KELLY_FRACTION, SLOT_WEIGHTS, Wealth, bet, cell_law, joint_bet,
                                         leg_outcomes, look_sizes, outcomes, paired_bet, payoffs, settle, tuned_bet)
from admmcheck.audit.running.settings import AuditSettings
from admmcheck.cli import main
from admmcheck.foundations.errors import InvalidConfiguration

MECHANISMS = str(Path(__file__).resolve().parent / "mechanisms.py")


def _audit(mechanism: str, samples: int, **settings: object):
    return audit(Source(f"{MECHANISMS}:{mechanism}"), Source(f"{MECHANISMS}:scalar_pair"), PrivacyClaim(1.0),
                 samples=samples, sequential=True, **settings)


def test_a_broken_mechanism_is_flagged_before_the_budget_is_spent_and_the_same_seed_gives_the_same_stop():
    result = _audit("laplace_half_scale", 20_000, seed=1, workers=2)  # true epsilon 2, claim 1
    assert result.mode == "sequential" and result.verdict == "violation"
    used = result.sequential["samples_used"]
    assert used[0] == used[1] < 20_000
    assert result.sequential["e_value"] >= result.sequential["threshold"] == pytest.approx(20.0)
    looks = result.sequential["looks"]
    sizes = look_sizes(20_000)
    assert looks[-1]["samples"] == used[0] <= sum(sizes[:len(looks)])  # it stopped within its last look
    assert [look["samples"] for look in looks[:-1]] == list(np.cumsum(sizes[:len(looks) - 1]))
    assert looks[0]["e_value"] is None and looks[0]["bets"] == []  # the first look only chooses
    document = result.as_dict()  # the deciding event's counts are of the last look, and say so
    lead = document["candidates"][0]
    assert document["p_d0"]["n"] == document["p_d1"]["n"] == lead["n"][0] == used[0] - looks[-2]["samples"]
    assert [document["p_d0"]["count"], document["p_d1"]["count"]] == lead["counts"]
    assert result.epsilon_lower_bound == 1.0  # the test refutes the claim; it does not measure beyond it
    assert document["mode"] == "sequential" and document["samples_used"]["total"] == used
    assert document["samples_used"]["selection"] == [looks[0]["samples"]] * 2
    again = _audit("laplace_half_scale", 20_000, seed=1, workers=1)
    assert again.sequential["samples_used"] == used and again.sequential["e_value"] == result.sequential["e_value"]


def test_a_correct_mechanism_is_not_flagged_and_spends_the_whole_budget():
    result = _audit("laplace_vectorised", 600, seed=3, workers=2)
    assert result.verdict == "no-violation-found"
    assert result.sequential["samples_used"] == [600, 600] and result.as_dict()["samples_used"]["total"] == [600] * 2
    assert result.sequential["e_value"] < 20.0
    assert [look["samples"] for look in result.sequential["looks"]] == list(np.cumsum(look_sizes(600)))
    assert 0.0 <= result.epsilon_lower_bound < 1.0


def test_the_wealth_is_the_product_of_the_bets_computed_sample_by_sample():
    """Known draws, a fixed event and fixed stakes: the engine's wealth against a plain product."""
    rng = np.random.default_rng(30)
    x = (rng.laplace(0.0, 0.5, size=(300, 1)), 1.0 + rng.laplace(0.0, 0.5, size=(300, 1)))
    event = Event("coordinate", "output > 0.8", 1, lambda v: v[:, 0], 0.8, True)  # more likely under d1
    epsilon, delta = 1.0, 0.01
    grid = np.array([0.0, 0.5, epsilon])
    wealth = Wealth(grid, delta, pairs=1)
    stakes = (0.2, 0.05, 0.3)
    by_hand = np.ones((len(SLOT_WEIGHTS), len(grid)))
    for look, stake in enumerate(stakes):  # three looks of 100 pairs, one stake per look
        part = slice(100 * look, 100 * (look + 1))
        features = (x[0][part], x[1][part])
        wealth.add(0, 0, stake, outcomes((event,), features))
        for i in range(100):
            in_a, in_b = float(features[1][i, 0] > 0.8), float(features[0][i, 0] > 0.8)
            for j, e in enumerate(grid):
                by_hand[0, j] *= 1 + stake * (in_a - math.exp(e) * in_b - delta)
    assert np.allclose(np.exp(wealth.log_wealth[0]), by_hand, rtol=1e-10)
    average = sum(w * by_hand[k] for k, w in enumerate(SLOT_WEIGHTS))  # the idle slots keep their wealth 1
    assert np.allclose(np.exp(wealth.total()), average, rtol=1e-10)
    assert np.all(np.diff(wealth.total()) <= 0)  # the wealth can only fall as epsilon rises
    assert by_hand[0, -1] > 1  # the event really beats e^1 here (true epsilon 2): the bet won


def test_the_best_stake_maximises_the_expected_log_growth():
    cap = CAUTION / (math.exp(1.0) + 0.0)
    stake, growth = bet(0.6, 0.1, 1.0, 0.0, cap)
    law = np.array([0.4 * 0.9, 0.4 * 0.1, 0.6 * 0.9, 0.6 * 0.1])
    grid = np.linspace(0, cap, 100_001)
    values = np.log1p(grid[:, None] * payoffs(1.0, 0.0)[None, :, 0]) @ law
    assert float(stake) == pytest.approx(grid[np.argmax(values)], abs=1e-4) and 0 < stake < cap
    assert float(growth) == pytest.approx(values.max(), rel=1e-8)
    assert bet(0.2, 0.1, 1.0, 0.0, cap) == (0.0, 0.0)  # 0.2 <= e * 0.1: nothing to win, nothing staked
    assert float(bet(1.0, 0.0, 1.0, 0.0, cap)[0]) == pytest.approx(cap)  # a sure win: the largest stake


def test_a_bet_is_tuned_to_the_set_that_grows_fastest_and_staked_at_half_the_best_stake():
    """Three output values with laws (0.6, 0.3, 0.1) under d0 and (0.1, 0.45, 0.45) under d1: at the claim
    epsilon = 1 the bet that grows fastest is on {value 0} under d0 (0.6 against e * 0.1), not on the
    event as given ({value 2} under d1: 0.45 against e * 0.1)."""
    counts = {0: (600, 300, 100), 1: (100, 450, 450)}
    features = tuple(np.repeat([0.0, 1.0, 2.0], counts[side])[:, None] for side in (0, 1))
    given = Event("values", "output in {2}", 1, lambda v: v[:, 0], 1.5, True, axis="output value, in ratio order",
                  labels=("0", "1", "2"))
    cap = CAUTION / math.e
    tuned = tuned_bet(given, features, PrivacyClaim(1.0), cap)
    assert tuned.event.description == "output value, in ratio order: one of the first 1 ({0}; more likely under d0)"
    assert tuned.event.numerator == 0 and tuned.event.indicator(np.array([[0.0], [1.0], [2.0]])).tolist() == [
        True, False, False]
    best = bet(0.6, 0.1, 1.0, 0.0, cap)
    assert tuned.stakes[0] == pytest.approx(0.5 * float(best[0]), rel=1e-9)
    assert float(bet(0.45, 0.1, 1.0, 0.0, cap)[1]) < tuned.growth < float(best[1])  # pessimistic, still ahead


def test_a_sure_win_is_staked_whole_and_a_fitted_separation_is_not():
    """Eight samples a side, every d1 sample in the event and no d0 sample: on an event of an output d0
    never gives (the support family) the stake maximises the growth under the add-1/2 law (a grid search
    here), which at epsilon = 1 is the largest stake; the same counts on a score fitted to the samples
    (a projection) are staked at half the plug-in optimum, as any other bet."""
    x = (np.zeros((8, 1)), np.ones((8, 1)))
    cap = CAUTION / math.e
    law = np.array([(0.5 / 9) * (8.5 / 9), (0.5 / 9) ** 2, (8.5 / 9) ** 2, (8.5 / 9) * (0.5 / 9)])  # (A, B)
    grid = np.linspace(0, cap, 100_001)
    best = grid[np.argmax(np.log1p(grid[:, None] * payoffs(1.0, 0.0)[None, :, 0]) @ law)]
    assert best == pytest.approx(cap)
    for family, stake, sure in (("support", best, True), ("projection", 0.5 * cap, False)):
        event = Event(family, "x > 0.5", 1, lambda v: v[:, 0], 0.5, True)
        tuned = tuned_bet(event, x, PrivacyClaim(1.0), cap)
        assert tuned.sure is sure and tuned.stakes[0] == pytest.approx(stake, abs=1e-6)
        assert tuned.event.indicator(x[1]).all() and not tuned.event.indicator(x[0]).any()
    mixed = (np.zeros((8, 1)), np.r_[np.ones(7), 0.0][:, None])  # one d1 sample outside: not sure
    assert not tuned_bet(Event("support", "x > 0.5", 1, lambda v: v[:, 0], 0.5, True), mixed, PrivacyClaim(1.0),
                         cap).sure


def _shifted_laplace(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.laplace(0.0, 0.5, size=(n, 1)), 1.0 + rng.laplace(0.0, 0.5, size=(n, 1))


TAILS = (Event("coordinate", "output < 0.3", 0, lambda v: v[:, 0], 0.3, False),  # more likely under d0
         Event("coordinate", "output > 0.7", 1, lambda v: v[:, 0], 0.7, True))  # more likely under d1


def test_a_two_leg_bet_is_one_factor_per_pair_and_its_legs_count_as_alone():
    """Two legs in one factor: the engine's wealth against the product of 1 + λ_0 Z_0 + λ_1 Z_1 by hand,
    and each leg's counts, read back from the cells, against the leg settled alone."""
    x = _shifted_laplace(200, 31)
    grid, delta, stakes = np.array([0.0, 1.0]), 0.01, (0.12, 0.08)
    counts = outcomes(TAILS, x)
    wealth = Wealth(grid, delta, pairs=1)
    wealth.add(0, 0, stakes, counts)
    by_hand = np.ones(len(grid))
    for i in range(200):
        z = [[float(leg.indicator(x[leg.numerator][i:i + 1])[0]) - math.exp(e) *
              float(leg.indicator(x[1 - leg.numerator][i:i + 1])[0]) - delta for leg in TAILS] for e in grid]
        by_hand *= 1 + np.array(z) @ np.array(stakes)
    assert np.allclose(np.exp(wealth.log_wealth[0, 0]), by_hand, rtol=1e-10) and by_hand[-1] > 1
    assert counts.sum() == 200 and len(counts) == 16
    for k, leg in enumerate(TAILS):
        assert leg_outcomes(counts, k).tolist() == outcomes((leg,), x).tolist()


def test_the_joint_stakes_maximise_the_growth_under_the_independent_plug_in_law():
    """cell_law against every one of the n x n cross pairs of the two sides (independent draws), and
    joint_bet's stakes against a grid search of the triangle λ_0 + λ_1 <= cap: both legs are staked, and
    the pair grows faster than either leg alone (bet; less than their sum, as the cap binds here)."""
    x = _shifted_laplace(300, 32)
    law = cell_law(TAILS, x)
    every_pair = (np.repeat(x[0], 300, axis=0), np.tile(x[1], (300, 1)))  # (x0_i, x1_j) for all i, j
    assert np.allclose(law, outcomes(TAILS, every_pair) / 300 ** 2, atol=1e-12)
    cap = CAUTION / math.e
    stakes, growth = joint_bet(law, 1.0, 0.0, cap)
    z = payoffs(1.0, 0.0, 2)
    axis = np.linspace(0, cap, 801)
    grid = np.array([(a, b) for a in axis for b in axis if a + b <= cap])
    values = np.log1p(z @ grid.T).T @ law
    assert growth == pytest.approx(values.max(), rel=1e-5) and growth >= values.max() - 1e-12
    assert np.abs(stakes - grid[np.argmax(values)]).max() < 2e-3 and stakes.min() > 0 and stakes.sum() <= cap + 1e-12
    alone = [float(bet(leg.indicator(x[leg.numerator]).mean(), leg.indicator(x[1 - leg.numerator]).mean(), 1.0, 0.0,
                       cap)[1]) for leg in TAILS]
    assert min(alone) > 0 and growth > max(alone)  # here 0.115 against 0.103 and 0.076


def test_a_paired_bet_stakes_both_tails_of_a_shift_and_a_sure_win_alone():
    x = _shifted_laplace(2_000, 33)
    cap = CAUTION / math.e
    event = Event("coordinate", "output > 0.5", 1, lambda v: v[:, 0], 0.5, True)
    paired = paired_bet(event, x, PrivacyClaim(1.0), cap)
    singles = [tuned_bet(event, x, PrivacyClaim(1.0), cap, (a,)) for a in (0, 1)]
    assert sorted(leg.numerator for leg in paired.legs) == [0, 1]
    assert paired.growth == pytest.approx(sum(b.growth for b in singles), rel=1e-12)
    joint = joint_bet(cell_law(paired.legs, x), 1.0, 0.0, cap)[0]
    assert paired.stakes == pytest.approx(tuple(KELLY_FRACTION * joint), rel=1e-12)
    lower = next(leg for leg in paired.legs if leg.numerator == 0)
    assert not lower.above and lower.threshold < 0.5  # d0's tail is the lower one
    sure = paired_bet(Event("support", "x > 0.5", 1, lambda v: v[:, 0], 0.5, True), (np.zeros((8, 1)), np.ones((8, 1))),
                      PrivacyClaim(1.0), cap)
    assert sure.sure and len(sure.legs) == 1 and sure.stakes[0] == pytest.approx(cap, abs=1e-6)


def test_noise_reused_is_refuted_within_20_samples_and_the_second_look_bets_only_sure_wins():
    """admm_noise_reused releases (x + e, 2x + e): its d0 outputs lie on the line y = x, its d1 outputs on
    y = x + 1. Events are chosen on 8 samples a side; from the 9th pair on each bet on the support
    multiplies the wealth by 1 + 0.9/e per pair, and (1 + 0.9/e)^12 >= 20 > (1 + 0.9/e)^9."""
    assert (1 + CAUTION / math.e) ** 12 >= 20 > (1 + CAUTION / math.e) ** 9
    assert look_sizes(1_000)[:3] == [8, 12, 25]
    result = audit(Source(f"{MECHANISMS}:admm_noise_reused"), Source(f"{MECHANISMS}:scalar_pair"),
                   PrivacyClaim(1.0), samples=1_000, sequential=True, seed=4, workers=1)
    assert result.verdict == "violation" and result.sequential["samples_used"] == [20, 20]
    looks = result.sequential["looks"]
    assert [look["samples"] for look in looks] == [8, 20] and result.sequential["e_value"] >= 20
    assert looks[1]["bets"] and all(bet["stake"] == pytest.approx(CAUTION / math.e) and "affine support" in bet["event"]
                                    for bet in looks[1]["bets"])
    correct = _audit("laplace_vectorised", 200, seed=3, workers=1)
    assert correct.sequential["looks"][1]["bets"] == []  # a scalar Laplace output has no sure win to bet on


def _simulated_rejections(runs: int, peek: bool, seed: int) -> float:
    """Share of ``runs`` simulated audits of one tight event (P_a = e P_b exactly: the claim holds with
    equality) whose wealth ever reaches 1/alpha, with stakes from the frequencies of the earlier looks
    (the engine's rule), or, ``peek``, from the look's own samples (not predictable: invalid)."""
    rng = np.random.default_rng(seed)
    p_b = 0.1
    p_a = math.e * p_b
    law = [(1 - p_a) * (1 - p_b), (1 - p_a) * p_b, p_a * (1 - p_b), p_a * p_b]
    grid, alpha = np.array([1.0]), 0.05
    cap = CAUTION / math.e
    log_wealth = np.zeros(runs)
    seen = np.zeros((runs, 4))
    crossed = np.zeros(runs, bool)
    for size in look_sizes(5_000):
        drawn = rng.multinomial(size, law, size=runs)
        known = seen + drawn if peek else seen
        n = np.maximum(known.sum(axis=1), 1)
        stakes, _ = bet((known[:, 2] + known[:, 3]) / n, (known[:, 1] + known[:, 3]) / n, 1.0, 0.0, cap)
        stakes = np.where(known.sum(axis=1) > 0, stakes, 0.0)
        log_wealth += np.array([settle(s, d, grid, 0.0)[0] for s, d in zip(stakes, drawn)])
        crossed |= log_wealth >= math.log(1 / alpha)
        seen += drawn
    return float(crossed.mean())


def test_ville_holds_on_a_simulated_tight_null_and_the_check_catches_a_bettor_who_peeks():
    assert _simulated_rejections(2_000, peek=False, seed=1) <= 0.05
    assert _simulated_rejections(2_000, peek=True, seed=1) > 0.05


def test_the_cli_gives_the_samples_used(capsys):
    argv = ["audit", "code", "--mechanism", f"{MECHANISMS}:laplace_half_scale", "--neighbors",
            f"{MECHANISMS}:scalar_pair", "--epsilon", "1", "--samples", "5000", "--workers", "2", "--sequential"]
    assert main(argv + ["--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["mode"] == "sequential" and out["verdict"] == "violation"
    assert out["samples_used"]["total"] == out["sequential"]["samples_used"] and out["samples_used"]["total"][0] < 5_000
    assert main(argv) == 1
    text = capsys.readouterr().out
    assert f"{out['samples_used']['total'][0]} of 5000 samples per side" in text and "sequential test: e-value" in text
    assert text.count("samples per side") == 1  # the samples used are said once
    assert f"after {len(out['sequential']['looks'])} looks" in text
    lead = out["candidates"][0]
    assert f"P[event | d0] = {out['p_d0']['count']}/{lead['n'][0]} (in the last look)" in text
    legs = [c for c in out["candidates"][1:] if (c["pair"], c["slot"]) == (lead["pair"], lead["slot"])]
    assert all(f"in the same bet: {leg['event']}: {leg['counts'][0]}/{leg['n'][0]} under d0" in text for leg in legs)
    assert text.count("in the same bet") == len(legs)


def test_sequential_with_a_checkpoint_is_refused_naming_the_parameter_or_the_flag(capsys, tmp_path):
    with pytest.raises(InvalidConfiguration) as error:
        AuditSettings(sequential=True, checkpoint=str(tmp_path / "c.sqlite"))
    assert error.value.parameter == "sequential" and str(error.value).startswith("sequential and checkpoint both given")
    with pytest.raises(InvalidConfiguration, match="sequential='yes' must be True or False"):
        AuditSettings(sequential="yes")
    assert main(["audit", "dpsda-c", "--sequential", "--checkpoint", str(tmp_path / "c.sqlite"), "--json"]) == 2
    said = json.loads(capsys.readouterr().out)["error"]
    assert said.startswith("--sequential and checkpoint both given: a sequential audit re-chooses")
    assert not (tmp_path / "c.sqlite").exists()


def test_an_infinite_point_estimate_is_said_to_rest_on_the_samples_counted_not_called_a_support_mismatch(capsys):
    """0 of 20 in a sequential look (or 0 of any n) is what was seen: the CLI says so with the count, and does not
    claim that the other dataset cannot give the output."""
    from admmcheck.audit.inputs.outputs import Layout
    from admmcheck.audit.result import AuditResult
    from admmcheck.audit.running.sampling import Randomness
    from admmcheck.claims import ApproxDp

    result = AuditResult(
        verdict="violation", epsilon_lower_bound=1.0, claim=ApproxDp(1.0), confidence=0.95, samples=20,
        selection_samples=(0, 0), bounding_samples=(20, 20), event="x > 1", family="threshold", numerator=1, pair=0,
        counts=(0, 6), intervals=((0.0, 0.0), (0.0, 0.0)), delta_lower_bound=0.0, candidates=(), intervals_bounded=2,
        seed=0, wall_time_s=0.1, layout=Layout((("output", ()),)), pairs=1, complete=True,
        randomness=Randomness("auto", "seeded", True, "seeded"), epsilon_estimate=math.inf, mode="sequential",
        sequential={"e_value": 21.5, "threshold": 20.0, "looks": [{}, {}], "refuted_epsilon": 1.0}, lower_bound=1.0)
    print(result)
    text = capsys.readouterr().out
    assert text.startswith("violation: epsilon > 1.0000 with confidence 0.95 (claimed epsilon = 1, delta = 0)")
    assert "point estimate: infinite: d0 gave no output in this event in the 20 samples counted" in text
    assert "support mismatch" not in text
