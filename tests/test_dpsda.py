"""DPSDA-C and DPSDA-PS (issue 18): graph sequences, regret, push-sum, the paper's claims."""

from __future__ import annotations

import math

import numpy as np
import pytest

from admmcheck.algorithms.dpsda import run_dpsda_c, run_dpsda_ps
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.problems.graph_sequences import GraphSequence, fixed_sequence, random_sequence, validate_sequence
from admmcheck.solving.oracle import hindsight_optimum
from admmcheck.privacy.dpsda import dpsda_claims
from admmcheck.problems.online import OnlineProblem, online_linear_regression

NU = math.sqrt(0.1)


def regret(problem, run, rounds):
    decisions = run.extras["decision"]
    losses = sum(problem.value(t, decisions[:, t - 1]) for t in range(1, rounds + 1))
    return losses - hindsight_optimum(problem, rounds).objective


@pytest.fixture(scope="module")
def olr():
    return online_linear_regression(rounds=500, dim=21, nodes=7, seed=0)


@pytest.mark.parametrize("directed", [False, True])
def test_noiseless_average_regret_vanishes_and_stays_below_the_theorem(olr, directed):
    graphs = random_sequence(7, 500, 1 if not directed else 4, seed=1, directed=directed,
                             weights="metropolis", extra_edges=0.2)
    run = (run_dpsda_ps if directed else run_dpsda_c)(olr, graphs=graphs, iterations=500, seeds=[0, 1, 2],
                                                       gradient_noise=NU)
    early, late = regret(olr, run, 50).mean() / 50, regret(olr, run, 500).mean() / 500
    assert late < 0.5 * early
    claims = dpsda_claims(olr, graphs, math.inf, NU, 500)
    if not directed:
        assert all(claims.preconditions.values())  # symmetric W, connected at every step
    for rounds in (50, 200, 500):
        assert np.all(regret(olr, run, rounds) <= claims.regret_bound(rounds))


def test_push_sum_without_noise_reaches_the_exact_average():
    n, d = 5, 5
    features = np.zeros((300, 1, d))
    features[0, 0] = np.arange(1, d + 1) / 10.0  # only f_1 has a gradient: z(2) = n E_i u_i(1)
    problem = OnlineProblem(features, np.full((300, 1), 3.0), "squared", 100.0, "box", n)
    ring = np.roll(np.eye(n), 1, axis=0)  # edge j -> j+1: a directed cycle
    ring[0, 2] = 1.0  # and one chord, so the out-degrees differ and A is not doubly stochastic
    graphs = fixed_sequence(ring, 300, directed=True)
    assert not np.allclose(graphs.matrices[0].sum(axis=1), 1.0)
    run = run_dpsda_ps(problem, graphs=graphs, iterations=300, seeds=[0])
    z, w = run.dual[0], run.extras["push_sum_weights"][0]
    average = z[1].sum(axis=0) / n  # Σ_i z_i is preserved by a column-stochastic A
    np.testing.assert_allclose(z[-1] / w[-1][:, None], np.broadcast_to(average, (n, d)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(w.sum(axis=1), n, atol=1e-12)


def test_invalid_sequences_and_matrices_are_refused_by_name():
    broken = np.eye(4) * 0.5 + 0.5 / 4
    broken[2, 3] += 0.2
    with pytest.raises(InvalidConfiguration, match="step t=1 is not row-stochastic: row 2 sums to 1.2"):
        validate_sequence(GraphSequence(broken[None], False, 1))
    column = np.full((3, 3), 1 / 3)
    column[:, 1] = [0.5, 0.2, 0.2]
    with pytest.raises(InvalidConfiguration, match="step t=1 is not column-stochastic: column 1 sums to 0.9"):
        validate_sequence(GraphSequence(column[None], True, 1))
    two_islands = np.zeros((4, 4))
    two_islands[0, 1] = two_islands[1, 0] = two_islands[2, 3] = two_islands[3, 2] = 1.0
    with pytest.raises(InvalidConfiguration, match=r"steps t=1..2 \(window of B=2\) is not connected"):
        validate_sequence(GraphSequence(np.repeat(_uniform(two_islands)[None], 2, axis=0), False, 2))
    one_way = np.zeros((3, 3))
    one_way[1, 0] = one_way[2, 1] = 1.0  # 0 -> 1 -> 2, nothing back
    with pytest.raises(InvalidConfiguration, match="not strongly connected"):
        fixed_sequence(one_way, 3, directed=True)


def _uniform(adjacency):
    from admmcheck.problems.graph_sequences import undirected_weights

    return undirected_weights(adjacency)


def test_generated_sequences_hold_their_window_and_runs_are_seeded(olr):
    for directed in (False, True):
        graphs = random_sequence(7, 40, 4, seed=3, directed=directed)
        validate_sequence(graphs)
        single = [run_dpsda_c, run_dpsda_ps][directed](olr, graphs=graphs, iterations=40, seeds=[5], sigma=2.0,
                                                        gradient_noise=NU)
        batch = [run_dpsda_c, run_dpsda_ps][directed](olr, graphs=graphs, iterations=40, seeds=[4, 5], sigma=2.0,
                                                       gradient_noise=NU)
        np.testing.assert_allclose(batch.extras["broadcast"][1], single.extras["broadcast"][0], rtol=1e-12, atol=1e-12)
        assert batch.extras["broadcast"].shape == (2, 40, 7, 21)  # every message h_i(t)


def test_lemma1_sigma_and_theorem2_total_match_a_hand_computation(olr):
    graphs = random_sequence(7, 500, 4, seed=0)
    claims = dpsda_claims(olr, graphs, 0.5, NU, 500)
    L = olr.gradient_bound
    a, b = olr.features[:, 0], olr.targets[:, 0]
    assert L == pytest.approx(np.max(2 * (5 * np.abs(a).sum(axis=1) + np.abs(b)) * np.linalg.norm(a, axis=1)))
    L_hat = math.sqrt(L**2 + 3 * 0.1)  # blocks of 3 coordinates
    assert claims.sensitivity == pytest.approx(2 * 7 * L_hat * math.sqrt(3))  # Lemma 1 with Remark 5
    assert claims.sigma == pytest.approx(claims.sensitivity / 0.5) and claims.epsilon_total == pytest.approx(250.0)
    assert claims.preconditions["W_symmetric (Lemma 2(a) needs it)"] is False  # the paper's 1/deg weights


# ------------------------------------------------------------------ privacy, checked
def test_white_box_loss_matches_the_closed_form_of_a_two_round_transcript():
    """T = 2, f_1 changed: only h(2) depends on it, z(2; F) − z(2; F′) = n E_i (u_i − u′_i) at y = 0,
    with u = ∂f_1(0) = −2 b a (by hand); the loss is Σ |h − z′| − |h − z| over h(2), divided by σ."""
    from admmcheck.mechanisms.dpsda import DpsdaMechanism, change_one_round, dpsda_privacy_loss

    problem = online_linear_regression(rounds=2, dim=4, nodes=4, seed=3)
    graphs = random_sequence(4, 2, 1, seed=3)
    mechanism = DpsdaMechanism(graphs, sigma=0.7, iterations=2)
    f0, f1 = change_one_round(problem, 1, problem.features[0], -problem.targets[0])
    run = mechanism.batch_run(f0, np.random.SeedSequence(1).spawn(300))
    per_step = dpsda_privacy_loss(mechanism, f0, f1, run.extras["broadcast"])
    a, b = problem.features[0, 0], problem.targets[0, 0]
    shift = 4 * np.diag(-2 * b * a - (2 * b * a))  # n E_i (u_i(F) − u_i(F′)), node i holds coordinate i
    z = run.dual[:, 1]  # z(2) under F
    h = run.extras["broadcast"][:, 1]
    expected = (np.abs(h - (z - shift)) - np.abs(h - z)).sum(axis=(1, 2)) / 0.7
    np.testing.assert_allclose(per_step.sum(axis=(1, 2)), expected, atol=1e-10)
    assert np.all(per_step[:, 0] == 0.0)  # h(1) = η(1) does not depend on F
    wide = DpsdaMechanism(graphs, sigma=20.0, iterations=2)  # a light-tailed ratio, so its mean is measurable
    ratio = np.exp(-dpsda_privacy_loss(wide, f0, f1, wide.batch_run(
        f0, np.random.SeedSequence(2).spawn(20_000)).extras["broadcast"]).sum(axis=(1, 2)))
    assert abs(ratio.mean() - 1) <= 4 * ratio.std() / np.sqrt(len(ratio))  # E_F[p(F')/p(F)] = 1


def test_cli_run_bound_and_audit_of_dpsda(capsys):
    import json

    from admmcheck.cli import main

    assert main(["run", "dpsda-c", "--iterations", "100", "--trials", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["regret"] <= out["regret_bound"] and out["epsilon"] is None or out["epsilon"] == float("inf")
    for key in ("regret", "regret_bound", "average_regret"):
        assert key in out
    assert main(["bound", "dpsda-ps", "--epsilon", "0.5", "--iterations", "50", "--json"]) == 0
    bound = json.loads(capsys.readouterr().out)
    assert bound["epsilon"] == 0.5 and bound["epsilon_total"] == 25.0 and "preconditions" in bound
    code = main(["audit", "dpsda-c", "--white-box", "--changed-round", "1", "--samples", "4000", "--workers", "2",
                 "--json"])
    audit = json.loads(capsys.readouterr().out)
    assert code == 0 and audit["verdict"] == "no-violation-found"
    white = audit["white_box"]
    assert audit["epsilon_lower_bound"] <= white["worst_case"] <= white["claimed_epsilon_total"]
    assert white["nodes_contributing"] == 4  # every node's message moves: each node queries f_t0


# ------------------------------------------------------------------ only released rounds are searched (issue 51)
@pytest.mark.parametrize("name", ["dpsda-c", "dpsda-ps"])
@pytest.mark.parametrize("nodes, rounds, iterations, seed", [(4, 2, 2, 0), (3, 5, 5, 1), (5, 6, 4, 2), (4, 3, 3, 7)])
def test_the_search_screens_exactly_the_rounds_whose_change_moves_a_released_message(name, nodes, rounds, iterations,
                                                                                      seed):
    """A round is a candidate iff changing its function moves some message h_i(t), t <= T, of a run on
    the same noise (found by running both sides, not from the registry): the last round never is."""
    from admmcheck.mechanisms.dpsda import DpsdaMechanism
    from admmcheck.mechanisms.registry import REGISTRY

    spec = REGISTRY.mechanism(name)
    problem = online_linear_regression(rounds=rounds, dim=nodes, nodes=nodes, seed=seed)
    mechanism = DpsdaMechanism(random_sequence(nodes, iterations, 1, seed, directed=name == "dpsda-ps"), sigma=0.5,
                               iterations=iterations, push_sum=name == "dpsda-ps")
    moving = []
    for t0 in range(1, rounds + 1):
        f0, f1 = spec.neighbours(problem, t0, "negated-target")
        h0, h1 = (mechanism.batch_run(f, np.random.SeedSequence(seed).spawn(3)).extras["broadcast"] for f in (f0, f1))
        if not np.array_equal(h0, h1):
            moving.append(t0)
    pairs = spec.candidate_pairs(problem, "negated-target", iterations)
    assert [pairs.describe(i)["where"] for i in range(len(pairs))] == moving
    assert iterations not in moving and moving == list(range(1, iterations))  # f_t first moves h(t+1)
    for most, draw in ((1, 0), (2, 3), (2, 11)):  # a seeded subset is drawn among the released rounds only
        subset = spec.candidate_pairs(problem, "negated-target", iterations, most=most, seed=draw)
        assert subset.total == len(moving) and {subset.describe(i)["where"] for i in range(len(subset))} <= set(moving)


@pytest.mark.parametrize("name", ["dpsda-c", "dpsda-ps"])
def test_a_round_that_moves_no_released_message_is_refused_with_the_rounds_that_do(name):
    from dataclasses import replace

    from admmcheck.audit.running.settings import AuditSettings
    from admmcheck.commands.audit import MechanismAudit, run_mechanism_audit
    from admmcheck.mechanisms.settings import OnlineSetting

    def audit(where, **setting):  # refused before any sample is drawn
        return run_mechanism_audit(MechanismAudit(name, replace(OnlineSetting.DEFAULTS["audit"], **setting),
                                                  where=where, settings=AuditSettings(samples=200, workers=1)))

    with pytest.raises(InvalidConfiguration, match=r"where=3: this change .* moves nothing that 3 iterations "
                                                   r"release: f_t's gradient first enters z\(t\+1\).*choose one of "
                                                   r"1, 2") as refused:
        audit(3, iterations=3)
    assert refused.value.parameter == "where"
    with pytest.raises(InvalidConfiguration, match=r"where=2: .*choose one of 1$"):
        audit(2)  # the default T = 2
    with pytest.raises(InvalidConfiguration, match=r"where=4: not a place of this problem's data: choose one of "
                                                   r"1, 2, 3"):
        audit(4, iterations=3)
    with pytest.raises(InvalidConfiguration, match=r"iterations=1: no change of .* moves what 1 iterations "
                                                   r"release; run more iterations") as refused:
        audit(None, iterations=1)
    assert refused.value.parameter == "iterations"


def test_a_library_call_cannot_audit_a_round_that_moves_nothing_released():
    from admmcheck.audit import PrivacyClaim
    from admmcheck.audit.running.settings import SearchSettings
    from admmcheck.audit.running.settings import AuditSettings
    from admmcheck.commands.audit import audit_registered
    from admmcheck.mechanisms.dpsda import DpsdaMechanism
    from admmcheck.mechanisms.registry import REGISTRY

    problem = online_linear_regression(rounds=3, dim=3, nodes=3, seed=0)
    mechanism = DpsdaMechanism(random_sequence(3, 3, 1, 0), sigma=1.0, iterations=3)
    with pytest.raises(InvalidConfiguration, match="where=3: .* moves nothing that 3 iterations release"):
        audit_registered(REGISTRY.mechanism("dpsda-c"), mechanism, problem, "negated-target", 3, PrivacyClaim(3.0),
                         AuditSettings(samples=1_000), SearchSettings())


def test_the_reports_dpsda_audit_bounds_a_released_round():
    """The verification report's DPSDA-C audit (searched, T = 2): its exact worst loss is round 1's,
    by hand Σ_i n|∂_i f_1(0) − ∂_i f′_1(0)|/σ = 4n|b|‖a‖₁/σ (h(2) is the only message f_1 moves, and
    z(2; F) − z(2; F′) = n E_i (u_i − u′_i) at y = 0 whatever the history), not round 2's 0."""
    from admmcheck.commands.verify import Profile, collect

    profile = Profile("tiny", iterations=10, audit_samples=2_000, white_samples=100, attack_trials=5, dpsda_rounds=10,
                      experiment_iterations=5, experiment_runs=2, replication_runs=2, decisive_runs=2, workers=2)
    row = next(v for v in collect(profile, parts=["dpsda"]).verdicts if v.check.startswith("audit of the full"))
    problem = online_linear_regression(rounds=2, dim=4, nodes=4, seed=0)
    sigma = dpsda_claims(problem, random_sequence(4, 2, 1, 0), 1.0, 0.0, 2).sigma
    a, b = problem.features[0, 0], problem.targets[0, 0]
    assert row.details["neighbours"].startswith("round 1:")
    assert row.value == pytest.approx(4 * 4 * abs(b) * np.abs(a).sum() / sigma, rel=1e-12) and row.value > 0
