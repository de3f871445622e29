"""Issue 52: one typed setting per family, one ``claim(setting)`` for every family, and a command line built from the
settings' fields: every flag a command offers is a field with its help, one meaning per flag name, and the old
spellings still work with a one-line pointer to the new one."""

from __future__ import annotations

import json
from dataclasses import fields, replace

import numpy as np
import pytest

from admmcheck.cli import main
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.mechanisms.settings import ConsensusSetting, OnlineSetting, SharingSetting
from admmcheck.foundations.parameters import flag_fields
from admmcheck.privacy import BoundSetting, pp_bound
from admmcheck.problems.setting import build_problem

SETTINGS = (ConsensusSetting, SharingSetting, OnlineSetting)


def _help(capsys, *argv: str) -> str:
    assert main([*argv, "--help"]) == 0
    return " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("setting_type", SETTINGS, ids=lambda t: t.__name__)
def test_every_field_carries_its_help_and_every_command_has_its_defaults(setting_type):
    for item in fields(setting_type):
        assert item.metadata["help"], item.name
    for command in ("run", "bound", "audit"):
        assert isinstance(setting_type.DEFAULTS[command], setting_type)


@pytest.mark.parametrize("name", ["madmm", "pp", "private-radmm", "dp-sharing", "dpsda-c"])
def test_run_offers_a_flag_for_each_field_the_algorithm_reads_and_shows_its_default(capsys, name):
    spec = REGISTRY[name]
    text = _help(capsys, "run", name)
    for item in flag_fields(spec.setting_type, "run"):
        if item.metadata["algorithm_parameter"] and item.name not in spec.parameters:
            continue
        flag = item.metadata["flag"] or "--" + item.name.replace("_", "-")
        assert f"{flag} " in text and item.metadata["help"].split()[0] in text, (name, flag)
    unread = [item.name for item in fields(spec.setting_type)
              if item.metadata["algorithm_parameter"] and item.name not in spec.parameters]
    for field_name in unread:  # accepted by the parser only to be refused with what the algorithm reads
        assert f"--{field_name} " not in text


def test_one_meaning_per_flag_a_claimed_total_and_a_per_step_epsilon_have_different_names(capsys):
    pvp = _help(capsys, "audit", "pvp")
    assert "--epsilon EPSILON the total epsilon claimed" in pvp and "--step-epsilon" not in pvp
    for name in ("dp-sharing", "dpsda-c"):
        text = _help(capsys, "audit", name)
        assert "--step-epsilon STEP_EPSILON epsilon per" in text and "--epsilon " not in text
    sharing = _help(capsys, "audit", "dp-sharing")
    assert "--samples SAMPLES samples per side" in sharing and "--rows ROWS synthetic: rows" in sharing


def test_old_spellings_give_the_same_result_with_a_one_line_pointer(capsys):
    common = ["--iterations", "20", "--json"]
    assert main(["bound", "dpsda-c", "--epsilon", "2", *common]) == 1  # DPSDA-C's unstated preconditions fail
    old = capsys.readouterr()
    assert old.err == "admmcheck: note: --epsilon of admmcheck bound dpsda-c is now spelled --step-epsilon\n"
    assert main(["bound", "dpsda-c", "--step-epsilon", "2", *common]) == 1
    new = capsys.readouterr()
    assert new.err == "" and json.loads(old.out) == json.loads(new.out) and json.loads(new.out)["epsilon"] == 2.0
    assert main(["run", "admm", "--samples", "60", "--iterations", "5", "--json"]) == 0
    old = capsys.readouterr()
    assert "--samples of admmcheck run admm is now spelled --rows" in old.err
    assert main(["run", "admm", "--rows", "60", "--iterations", "5", "--json"]) == 0
    new = json.loads(capsys.readouterr().out)
    assert new["samples_per_node"] == json.loads(old.out)["samples_per_node"] and sum(new["samples_per_node"]) == 60


def test_a_consensus_claim_reads_the_setting_alone():
    """``claim(setting)`` of PP equals Theorem 4.1 evaluated on the problem and graph built independently here."""
    setting = replace(ConsensusSetting.DEFAULTS["audit"], nodes=4, iterations=3, eta=1.5, alpha=3.0, c1=0.3)
    problem, network = build_problem(setting)
    direct = pp_bound(BoundSetting.from_problem(problem, network, c1=0.3), 1.5, 3.0, setting.theta, 3)
    claim = REGISTRY.mechanism("pp").claim(setting)
    assert np.array_equal(claim.per_node, direct.per_node) and claim.beta == direct.beta


def test_a_sharing_claim_reads_the_widths_of_its_data_unless_given():
    setting = SharingSetting.DEFAULTS["audit"]
    widths = setting.problem(normalise_rows=True).widths
    assert REGISTRY.mechanism("dp-sharing").claim(setting).widths == tuple(widths) == (3, 3)
    assert REGISTRY.mechanism("dp-sharing").claim(replace(setting, features=(7, 2, 1))).widths == (7, 2, 1)


def test_a_value_for_a_parameter_the_algorithm_does_not_read_is_refused_with_what_it_reads():
    spec = REGISTRY["radmm"]
    with pytest.raises(InvalidConfiguration, match="--theta does not apply to radmm: it reads --eta, --gamma") as no:
        ConsensusSetting.for_algorithm(spec, "run", {"theta": 0.3})
    assert no.value.parameter == "theta"
    with pytest.raises(InvalidConfiguration, match="dim does not apply to breast-cancer"):
        ConsensusSetting.for_algorithm(spec, "run", {"dataset": "breast-cancer", "dim": 3})
    assert ConsensusSetting.for_algorithm(spec, "run", {"gamma": 0.3}).gamma == 0.3


def test_a_capability_a_spec_lacks_is_refused_with_what_to_do():
    from admmcheck.algorithms.sharing import run_dp_sharing
    from admmcheck.mechanisms.registry import MechanismSpec

    with pytest.raises(InvalidConfiguration, match="pp has no conditions: it was registered without conditions="):
        REGISTRY["pp"].require("conditions")
    blind = MechanismSpec("my-sharing", "sharing", "DP sharing without its exact loss", run_dp_sharing)
    with pytest.raises(InvalidConfiguration, match="my-sharing has no white box: .* audit it as a black box"):
        blind.require("white_box")
    assert REGISTRY.mechanism("dp-sharing").require("white_box").__name__ == "sharing_white_box"
    assert REGISTRY["radmm"].require("conditions").setting_type.__name__ == "RadmmConditions"
