"""White-box check of the reference mechanisms (issue 16): worst-case search, the theorems'
beta, a mutant the check must catch, and the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dataclasses import replace as _replace

from admmcheck.commands.audit import MechanismAudit, audited_pair
from admmcheck.mechanisms.settings import ConsensusSetting
from admmcheck.mechanisms.privacy_loss import privacy_loss
from admmcheck.mechanisms.registry import reference_mechanism
from admmcheck.mechanisms.white_box import exceeds
from admmcheck.mechanisms.worst_case import worst_case, worst_transcript
from admmcheck.cli import main


def _audited(name: str, neighbours: str | None = None, **setting):
    """(claim, mechanism, pair) of the audit of ``name`` on the audit's default setting with ``setting``."""
    audited, pair, _ = audited_pair(MechanismAudit(name, _replace(ConsensusSetting.DEFAULTS["audit"], **setting),
                                                   neighbours=neighbours))
    return audited, audited.summary, audited.mechanism, pair


@pytest.mark.parametrize("name", ["pp", "private-radmm"])
def test_the_search_stays_below_beta_and_its_step_value_is_a_real_transcript_loss(name):
    claim, bound, mechanism, pair = _audited(name, iterations=4)
    d0 = pair.d0
    worst = worst_case(mechanism, d0, records=2, seed=1)
    assert not exceeds(worst.value, claim.claimed.epsilon)
    assert worst.value > 0.5 * claim.claimed.epsilon  # the search gets near the bound (the proof is loose by < 2x)
    one_step = reference_mechanism(name, mechanism.network, 1, mechanism.parameters)
    transcript = worst_transcript(one_step, d0, worst)
    loss = privacy_loss(one_step, d0, worst.change.apply(d0), transcript).total[0]
    assert loss == pytest.approx(worst.per_step[0], rel=1e-8, abs=1e-10)
    if name == "private-radmm":
        assert np.all(worst.per_step[1::2] == 0.0)


def test_sampled_losses_never_exceed_beta_when_the_preconditions_hold():
    claim, _, mechanism, pair = _audited("pp", iterations=6, neighbours="feature-move")
    d0, d1 = pair.d0, pair.d1
    run = mechanism.batch_run(d0, np.random.SeedSequence(3).spawn(3000))
    losses = privacy_loss(mechanism, d0, d1, run.primal).total
    assert np.isfinite(losses).all() and not exceeds(float(losses.max()), claim.claimed.epsilon)


def test_a_mechanism_missing_its_noise_in_one_iteration_is_caught():
    """The mutant skips the noise at t = 3 (alpha = inf there) while claiming the theorem's beta
    for alpha = 5 everywhere: every transcript's exact loss is infinite."""
    claim, _, mechanism, pair = _audited("pp", iterations=5)
    alpha = np.full((5, mechanism.network.nodes), 5.0)
    alpha[2] = np.inf
    mutant = reference_mechanism("pp", mechanism.network, 5, dict(mechanism.parameters) | {"alpha": alpha})
    d0, d1 = pair.d0, pair.d1
    losses = privacy_loss(mutant, d0, d1, mutant.batch_run(d0, np.random.SeedSequence(4).spawn(200)).primal)
    assert np.all(np.isposinf(losses.per_step[:, 2, 0])) and exceeds(float(losses.total.max()), claim.claimed.epsilon)
    honest = privacy_loss(mechanism, d0, d1, mechanism.batch_run(d0, np.random.SeedSequence(4).spawn(200)).primal)
    assert not exceeds(float(honest.total.max()), claim.claimed.epsilon)


def test_cli_white_box_json_fields(capsys, tmp_path):
    plot = tmp_path / "loss.png"
    code = main(["audit", "radmm", "--white-box", "--search", "--samples", "1500", "--workers", "1",
                 "--search-candidates", "5", "--search-samples", "300", "--plot", str(plot), "--json"])
    out = json.loads(capsys.readouterr().out)
    white = out["white_box"]
    assert white["neighbours"] == out["neighbour_search"]["found"]["change"]  # the white box takes the pair audited
    for key in ("max_loss", "mean_loss", "quantiles", "worst_case", "claimed_beta", "ratio", "privacy_profile"):
        assert key in white
    assert code == 0 and white["verdict"] == "within-claim" and white["claimed_beta"] == out["claimed_epsilon"]
    assert white["even_steps"]["max_abs_loss"] == 0.0
    assert white["max_loss"] <= white["worst_case"]["value"] <= white["claimed_beta"]
    assert out["black_box_within_white_box"] and plot.stat().st_size > 0


def test_cli_white_box_refuses_what_does_not_apply(capsys):
    assert main(["audit", "pp", "--search"]) == 2
    assert "--search needs the white box" in capsys.readouterr().err
    assert main(["audit", "code", "--mechanism", "m.py:f", "--neighbors", "m.py:g", "--epsilon", "1", "--white-box"]) == 2
    assert "--white-box does not apply to admmcheck audit code" in capsys.readouterr().err  # third-party code is a black box


# ------------------------------------------------------------------ KKT attack (Appendix E)
def test_kkt_residual_is_the_noise_plus_a_multiple_of_the_hidden_record():
    from admmcheck.algorithms import run_pp
    from admmcheck.mechanisms.kkt_attack import kkt_residuals
    from admmcheck.problems.datasets import make_problem, synthetic
    from admmcheck.problems.networks import ring

    problem = make_problem(synthetic(25, 4, seed=1), 5)
    run = run_pp(problem, ring(5), penalty=0.5, theta=0.5, alpha=5.0, iterations=6,
                 seeds=np.random.SeedSequence(2).spawn(20))
    residual = kkt_residuals(problem, ring(5), run.primal, np.full(6, 0.5), 0.5, node=0)
    signal = residual - run.extras["noise"][:, :, 0]  # = s_t x_1 by (E)
    x = problem.features[0][0]
    along = signal @ x / (x @ x)
    np.testing.assert_allclose(signal, along[..., None] * x, atol=1e-8)
    y = problem.labels[0][0]
    assert np.all(np.sign(along) == -y)  # L' < 0: s_t has the sign of -y_1


def test_a_variant_has_the_white_box_of_its_release_not_of_its_name():
    """Issue 52: the white box followed the mechanism's name (LOSSES[name], a chain of name tests in worst_case), so
    a PP variant under a name of its own crashed or got another mechanism's steps. Now the white box is the release
    the variant registers: PP's run under another name with PP's release gives PP's very worst case and loss."""
    from dataclasses import replace

    _, _, mechanism, pair = _audited("pp", iterations=2)
    variant = replace(mechanism, name="my-pp")
    assert worst_case(variant, pair.d0, records=1, seed=1).value == worst_case(mechanism, pair.d0, records=1,
                                                                               seed=1).value
    run = mechanism.batch_run(pair.d0, np.random.SeedSequence(5).spawn(20))
    np.testing.assert_array_equal(privacy_loss(variant, pair.d0, pair.d1, run.primal).total,
                                  privacy_loss(mechanism, pair.d0, pair.d1, run.primal).total)


def test_a_variant_whose_white_box_does_not_match_its_noise_is_refused():
    """Registering PVP's release (noise added to the minimiser, read from eta) on PP's run (noise in the objective,
    penalty and theta) is refused at registration, naming what does not match; a variant registered without a
    release has no white box and says so, and the generic exact loss cannot be registered without one."""
    from dataclasses import replace

    from admmcheck.algorithms import run_pp
    from admmcheck.foundations.errors import InvalidConfiguration
    from admmcheck.mechanisms.privacy_loss import privacy_loss as generic_loss
    from admmcheck.mechanisms.registry import MechanismSpec
    from admmcheck.mechanisms.releases import PrimalPerturbation

    with pytest.raises(InvalidConfiguration, match=r"my-pp: its release PrimalPerturbation\(\) \(noise added to the "
                                                   r"primal step's minimiser \(PVP\)\) reads the run argument\(s\) "
                                                   r"eta, which its run function does not take \(it takes penalty, "
                                                   r"theta, alpha, "):
        MechanismSpec("my-pp", "consensus", "PP under PVP's white box", run_pp, release=PrimalPerturbation())
    with pytest.raises(InvalidConfiguration, match="register release="):
        MechanismSpec("my-pp", "consensus", "PP with the generic loss", run_pp, exact_loss=generic_loss)
    _, _, mechanism, pair = _audited("pp", iterations=2)
    blind = replace(mechanism, name="my-pp", release=None)
    with pytest.raises(InvalidConfiguration, match="my-pp has no white box: it was registered without release="):
        worst_case(blind, pair.d0, records=1, seed=1)
    with pytest.raises(InvalidConfiguration, match="my-pp has no white box"):
        privacy_loss(blind, pair.d0, pair.d1, np.zeros((3, mechanism.network.nodes, pair.d0.dim)))


def test_pvp_has_no_attaining_one_step_transcript():
    _, _, mechanism, pair = _audited("pvp", iterations=1, epsilon=1.0)
    worst = worst_case(mechanism, pair.d0, records=1, free_point=False, seed=1)
    with pytest.raises(Exception, match="PrimalPerturbation has no one-step transcript"):
        worst_transcript(mechanism, pair.d0, worst)
