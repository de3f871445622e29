"""Issue 60, item 2: one protocol for every family. The smallest plugin of each family is a run function, a claim
and a registration; its family gives everything else (its setting, neighbours, places, what an audit runs), and
what it leaves out is refused with what to register, never a crash. Each is run, bounded and audited as a user
would, through ``admmcheck.cli.main``.

The verdicts follow from facts independent of the audit: an audit of n samples per side cannot refute ε above
ln(n) (no event's probability ratio can be seen above n), nor ρ above ln(n) (a Bernoulli pair's Rényi divergence
of any order is at most ln(1/q), q >= 1/n); and a mechanism whose output is a deterministic function of its data
(DPSDA-C's run with its default σ = 0) violates every finite claim on neighbours whose output it changes.
"""

from __future__ import annotations

import json
import math

import pytest

from admmcheck.algorithms import run_pvp
from admmcheck.algorithms.dpsda import run_dpsda_c
from admmcheck.algorithms.sharing import run_dp_sharing
from admmcheck.claims import ApproxDp, PureDp, ZeroConcentratedDp
from admmcheck.cli import main
from admmcheck.mechanisms.families import CONSENSUS, ONLINE, SHARING
from admmcheck.mechanisms.registry import REGISTRY, MechanismSpec, OnlineSpec

SAMPLES = 500

SMALLEST = {
    "tiny-consensus": MechanismSpec("tiny-consensus", "consensus", "PVP at its run's defaults", run_pvp,
                                    claim=lambda setting: ApproxDp(50.0, 1e-5)),
    "tiny-sharing": MechanismSpec("tiny-sharing", "sharing", "DP sharing at its run's defaults", run_dp_sharing,
                                  claim=lambda setting: ZeroConcentratedDp(100.0)),
    "tiny-online": OnlineSpec("tiny-online", "online", "DPSDA-C at its run's defaults (no noise)", run_dpsda_c,
                              claim=lambda setting: PureDp(1.0)),
}


@pytest.fixture(scope="module", autouse=True)
def registered():
    for spec in SMALLEST.values():
        REGISTRY.register(spec)
    yield
    for name in SMALLEST:
        REGISTRY.unregister(name)


def _json(capsys, *arguments: str, status: int = 0) -> dict:
    assert main([*arguments, "--json"]) == status
    return json.loads(capsys.readouterr().out)


def test_each_family_gives_the_smallest_plugin_its_setting_neighbours_and_places():
    for name, family, place in (("tiny-consensus", CONSENSUS, "--record 0:0"), ("tiny-sharing", SHARING, "--row 0:0"),
                                ("tiny-online", ONLINE, "--changed-round 1")):
        spec = REGISTRY.mechanism(name)
        assert spec.family is family and spec.setting_type is family.setting and spec.first_place[1] == place
        assert spec.neighbours is family.neighbours()["neighbours"] and spec.auditable == family.auditable
    assert not REGISTRY.mechanism("tiny-online").supports("canaries")
    assert REGISTRY.mechanism("tiny-sharing").supports("canaries")


def test_the_smallest_plugins_run_and_state_their_claims(capsys):
    consensus = _json(capsys, "run", "tiny-consensus", "--iterations", "20")
    assert consensus["algorithm"] == "tiny-consensus" and math.isfinite(consensus["objective_gap"])
    sharing = _json(capsys, "run", "tiny-sharing", "--iterations", "5")
    assert sharing["claim"]["notion"] == "zcdp" and sharing["claim"]["rho"] == 100.0 and sharing["sigma"] is None
    online = _json(capsys, "run", "tiny-online", "--iterations", "20", "--trials", "2")
    assert online["regret_bound"] is None and online["claims"] is None and online["claim"]["epsilon"] == 1.0
    bound = _json(capsys, "bound", "tiny-consensus")
    assert bound["claim"]["delta"] == 1e-5 and bound["claim"]["source"] == "stated by registered in this process"


@pytest.mark.parametrize("name, place, status", [("tiny-consensus", ["--record", "0:0"], 0),
                                                 ("tiny-sharing", ["--row", "0:0"], 0),
                                                 ("tiny-online", ["--changed-round", "1"], 1)])
def test_the_smallest_plugins_are_audited_against_the_notion_they_claim(capsys, name, place, status):
    # at the family's first place (its flag is the family's too), not after a neighbour search: 20 s less
    out = _json(capsys, "audit", name, *place, "--samples", str(SAMPLES), "--workers", "2", "--quiet",
                status=status)
    claim = SMALLEST[name].claim(None)
    assert out["claim"]["notion"] == claim.as_dict()["notion"]
    assert out["verdict"] == ("violation" if status else "no-violation-found")
    if name == "tiny-consensus":  # δ is kept, and ε = 50 lies beyond what 500 samples can refute
        assert out["claimed_delta"] == 1e-5 and out["lower_bound"]["value"] <= math.log(SAMPLES)
    if name == "tiny-sharing":  # ρ = 100 likewise
        assert out["claimed_epsilon"] is None and out["lower_bound"]["value"] <= math.log(SAMPLES)
    if name == "tiny-online":  # deterministic messages that the changed round moves: beyond any finite claim
        assert out["lower_bound"]["value"] > 1.0
    assert not any(word in json.dumps(out) for word in ("DPSDA", "Theorem", "Corollary"))


def test_what_a_smallest_plugin_leaves_out_is_refused_with_what_to_register(capsys):
    assert main(["audit", "tiny-online", "--canaries", "8"]) == 2
    assert "tiny-online has no canaries: it was registered without canaries=" in capsys.readouterr().err
    assert main(["audit", "tiny-consensus", "--white-box"]) == 2  # no white box was registered: no such flag
    assert "--white-box does not apply to admmcheck audit tiny-consensus" in capsys.readouterr().err
