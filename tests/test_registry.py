"""The registry is the one home of every algorithm and mechanism (issue 28): the CLI, the commands
and the report read it, and what it says about a mechanism is checked against independent values."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from admmcheck.cli import main
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.mechanisms.families import CONSENSUS, FAMILIES
from admmcheck.mechanisms.registry import REGISTRY, AlgorithmSpec, MechanismSpec, Registry, constant_eta
from admmcheck.mechanisms.releases import PrimalPerturbation
from admmcheck.privacy import BoundSetting, pp_bound, radmm_bound


MECHANISMS = str(Path(__file__).resolve().parent / "mechanisms.py")


def _run(capsys, *argv: str) -> dict:
    assert main(["run", *argv, "--dataset", "synthetic", "--iterations", "15", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("private, plain", [
    (["pp", "--alpha", "inf", "--eta", "0.5", "--theta", "0.5"], ["madmm", "--eta", "0.5", "--theta", "0.5"]),
    (["pvp", "--alpha", "inf", "--eta", "0.5"], ["admm", "--eta", "0.5"]),
    (["private-radmm", "--alpha", "inf", "--eta", "0.5", "--gamma", "0.3"], ["radmm", "--eta", "0.5", "--gamma", "0.3"]),
])
def test_run_runs_every_private_variant_and_without_noise_it_is_its_algorithm(capsys, private, plain):
    # Alg. 1 with alpha = inf is M-ADMM, PVP without noise is ADMM (8)-(9), Alg. 2 without noise is Alg. 1
    noiseless, reference = _run(capsys, *private), _run(capsys, *plain)
    assert noiseless["algorithm"] == private[0]
    assert np.allclose(noiseless["final_mean"], reference["final_mean"], rtol=0, atol=1e-12)


def test_run_of_a_private_variant_with_noise_differs_and_is_reproducible(capsys):
    first, again = _run(capsys, "dvp", "--alpha", "5"), _run(capsys, "dvp", "--alpha", "5")
    plain = _run(capsys, "dvp", "--alpha", "inf")
    assert first["final_mean"] == again["final_mean"] and first["final_mean"] != plain["final_mean"]


def test_every_name_the_cli_offers_is_registered_once_with_its_family():
    assert set(REGISTRY.names(CONSENSUS)) == {"admm", "admm-edge", "madmm", "radmm", "pp", "dvp", "pvp",
                                              "private-radmm"}
    assert REGISTRY.names(private=True) == ("pp", "dvp", "pvp", "private-radmm", "dp-sharing", "dpsda-c", "dpsda-ps")
    assert REGISTRY.names(CONSENSUS, private=True, report=True) == ("pp", "dvp", "private-radmm")
    for name in REGISTRY:
        spec = REGISTRY[name]
        assert spec.name == name and spec.family in FAMILIES.values() and callable(spec.run)


def test_a_registered_claim_is_the_theorem_it_names():
    setting = BoundSetting(sizes=(40, 50, 60), degrees=(2, 2, 2), C=1.0, rho=1.0, max_feature_norm=1.0)

    class Parameters:  # a consensus setting's fields, and what it gives the theorems
        eta, theta, alpha, gamma, nodes, iterations = 0.9, 0.6, 4.0, 0.2, 3, 6

        def bound_setting(self):
            return setting

    pp = REGISTRY.mechanism("pp").claim(Parameters())
    dvp = REGISTRY.mechanism("dvp").claim(Parameters())
    radmm = REGISTRY.mechanism("private-radmm").claim(Parameters())
    assert np.array_equal(pp.per_node, pp_bound(setting, 0.9, 4.0, 0.6, 6).per_node)
    assert np.array_equal(dvp.per_node, pp_bound(setting, 0.6, 4.0, 0.6, 6).per_node)  # DVP: eta = theta
    assert np.array_equal(radmm.per_node, radmm_bound(setting, 0.9, 4.0, 6).per_node)
    # (26) by hand for node 0 of DVP: T * C (1.4 c1 + alpha) / (theta V_0 B_0)
    assert dvp.per_node[0] == pytest.approx(6 * (1.4 * 0.25 + 4.0) / (0.6 * 2 * 40))
    assert REGISTRY.mechanism("pvp").claim is None  # no theorem: an audit of PVP needs --epsilon


def test_bound_takes_every_mechanism_with_a_theorem_and_the_old_name(capsys):
    common = ["--dataset", "synthetic", "--nodes", "3", "--samples", "120", "--dim", "3", "--iterations", "4",
              "--alpha", "5", "--json"]
    assert main(["bound", "dvp", "--theta", "1", *common]) == 0
    dvp = json.loads(capsys.readouterr().out)
    assert main(["bound", "pp", "--eta", "1", "--theta", "1", *common]) == 0
    assert json.loads(capsys.readouterr().out)["beta"] == dvp["beta"]
    assert main(["bound", "radmm", "--eta", "1", *common]) == 0  # the old name of private-radmm
    old = json.loads(capsys.readouterr().out)
    assert main(["bound", "private-radmm", "--eta", "1", *common]) == 0
    assert json.loads(capsys.readouterr().out)["beta"] == old["beta"] and old["mechanism"] == "private-radmm"
    assert main(["bound", "dvp", "--eta", "1", *common]) == 2  # dvp has no eta of its own
    assert "--eta does not apply to dvp" in capsys.readouterr().err


def test_a_registry_refuses_what_it_cannot_hold():
    registry = Registry()
    spec = AlgorithmSpec("mine", "consensus", "mine", run=lambda *a, **k: None)
    registry.register(spec)
    with pytest.raises(InvalidConfiguration, match="registered already"):
        registry.register(spec)
    assert registry.register(spec, replace=True) is spec
    with pytest.raises(InvalidConfiguration, match="unknown algorithm or mechanism 'other'; choose one of mine"):
        registry["other"]
    with pytest.raises(InvalidConfiguration, match="mine is not private"):
        registry.mechanism("mine")
    with pytest.raises(InvalidConfiguration, match="family='grid'"):
        AlgorithmSpec("x", "grid", "x", run=print)
    assert "mine" in registry and "other" not in registry and registry.unregister("mine") is spec and not registry
    with pytest.raises(InvalidConfiguration, match="register an online mechanism as an OnlineSpec"):
        MechanismSpec("x", "online", "x", run=print)
    with pytest.raises(InvalidConfiguration, match="a sharing mechanism registers exact_loss= and worst_case="):
        MechanismSpec("x", "sharing", "x", run=print, release=PrimalPerturbation())


def test_a_family_given_by_name_is_the_family_object_and_gives_what_the_spec_left_out():
    from admmcheck.mechanisms.families import SHARING

    spec = MechanismSpec("x", "sharing", "x", run=print)
    assert spec.family is SHARING and spec.setting_type is SHARING.setting
    assert REGISTRY.names(SHARING) == ("sharing", "dp-sharing")
    assert spec.neighbour_kinds == ("row", "column") and spec.first_place == ((0, 0), "--row 0:0")
    assert spec.supports("canaries") and not spec.supports("white_box") and not spec.supports("claim")
    with pytest.raises(InvalidConfiguration, match="x has no white box: it was registered without release="):
        spec.require("white_box")
    with pytest.raises(ValueError, match="unknown capability 'colour'"):
        spec.supports("colour")
    assert pickle.loads(pickle.dumps(CONSENSUS)) is CONSENSUS and set(FAMILIES) == {"consensus", "sharing", "online"}


def test_constant_eta_takes_one_value_and_refuses_a_varying_schedule():
    assert constant_eta((0.7,), 4, 3, "pvp") == constant_eta(0.7, 4, 3, "pvp") == 0.7
    with pytest.raises(InvalidConfiguration, match="pvp takes one constant eta") as error:
        constant_eta((0.5, 0.6, 0.7), 4, 3, "pvp")
    assert error.value.parameter == "eta"


def test_the_old_spelling_of_a_third_party_audit_still_runs_and_says_the_new_one(capsys):
    args = ["--mechanism", f"{MECHANISMS}:laplace", "--neighbors", f"{MECHANISMS}:scalar_pair", "--epsilon", "1",
            "--samples", "1000", "--workers", "1", "--seed", "3", "--json"]
    assert main(["audit", *args]) == 0
    old = capsys.readouterr()
    assert "is now spelled 'admmcheck audit code --mechanism" in old.err
    assert main(["audit", "code", *args]) == 0
    new = capsys.readouterr()
    assert new.err == "" and json.loads(old.out)["epsilon_lower_bound"] == json.loads(new.out)["epsilon_lower_bound"]


def test_sharing_and_dpsda_entries_hold_their_claims_and_neighbours():
    from admmcheck.problems.graph_sequences import random_sequence
    from admmcheck.mechanisms.settings import OnlineSetting, SharingSetting
    from admmcheck.privacy.dpsda import dpsda_claims
    from admmcheck.privacy.sharing import sharing_bound
    from admmcheck.problems.online import online_linear_regression

    claim = REGISTRY.mechanism("dp-sharing").claim(SharingSetting(features=(6, 5), step_epsilon=0.5, iterations=7,
                                                                  rho=1.0))
    direct = sharing_bound((6, 5), rho=1.0, lam=0.01, c1=1.0, b1=1.0, epsilon=0.5, delta=1e-5, iterations=7,
                           delta_prime=1e-5)
    assert claim.sigma == direct.sigma and claim.epsilon_total == direct.epsilon_total
    online = OnlineSetting(nodes=3, dim=None, iterations=4, window=1, step_epsilon=0.7, gradient_noise=0.0)
    problem = online_linear_regression(rounds=4, dim=3, nodes=3, seed=0)
    graphs = random_sequence(3, 4, 1, 0)
    claims = REGISTRY.mechanism("dpsda-c").claim(online)
    assert claims.epsilon_total == dpsda_claims(problem, graphs, 0.7, 0.0, 4).epsilon_total == pytest.approx(4 * 0.7)
    f0, f1 = REGISTRY.mechanism("dpsda-c").neighbours(problem, 2)
    changed = [t for t in range(4) if np.any(f0.targets[t] != f1.targets[t])]
    assert changed == [1] and np.array_equal(f1.targets[1], -f0.targets[1])
    for name in ("dp-sharing", "dpsda-c", "dpsda-ps"):
        assert REGISTRY.mechanism(name).exact_loss is not None


def test_verify_checks_the_convergence_of_a_consensus_algorithm_registered_outside_the_papers(capsys):
    """Issue 52: ``verify --only NAME`` of a non-private consensus algorithm the papers do not cover (a plugin's, here
    one registered in this process) runs it as ``admmcheck run NAME`` does, on both default datasets, against CVXPY;
    the verdict's value is what its recorded command prints."""
    from admmcheck.algorithms.admm import admm_dual_step, admm_primal_step
    from admmcheck.algorithms.runner import algorithm
    from admmcheck.commands.verify import collect
    from admmcheck.mechanisms.registry import AlgorithmSpec, constant_eta

    @algorithm("my-admm")
    def run_my_admm(context, *, eta=0.5):
        context.parameters["eta"] = eta
        f, lam = context.start.f, np.zeros_like(context.start.f)
        for _ in range(context.iterations):
            solution = admm_primal_step(context.problem, context.network, f, lam, eta, context.tol)
            f = solution.f
            lam = admm_dual_step(context.network, lam, f, eta)
            yield f, lam, solution.newton_steps

    REGISTRY.register(AlgorithmSpec("my-admm", "consensus", "ADMM written by a user", run_my_admm, ("eta",),
                                    arguments=lambda s: {"eta": constant_eta(s.eta, s.iterations, s.nodes, "my-admm")}))
    try:
        report = collect("smoke", parts=["convergence"], only=["my-admm"])
        assert [(v.algorithm, v.verdict) for v in report.verdicts] == [("my-admm", "pass")] * 2
        synthetic = report.verdicts[0]
        assert synthetic.command.startswith("admmcheck run my-admm --dataset synthetic --iterations 200 --json")
        assert main(["run", "my-admm", "--dataset", "synthetic", "--iterations", "200", "--json"]) == 0
        assert abs(json.loads(capsys.readouterr().out)["objective_gap"]) == synthetic.value <= 1e-6
    finally:
        REGISTRY.unregister("my-admm")
