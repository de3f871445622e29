"""Claims of the white-box loss (issue 16), over generated settings of the reference mechanisms:

* the black-box lower bound never exceeds the largest privacy loss (the white-box worst case
  over both directions of the neighbour pair): a valid lower bound cannot beat the truth;
* with the theorem's preconditions met, no sampled transcript's loss exceeds beta.
``ci`` runs a few settings, ``thorough`` a hundred."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from admmcheck.audit import Source, audit
from admmcheck.audit.settings import AuditSettings
from admmcheck.commands.audit import ReferenceAuditConfig, reference_claim
from admmcheck.mechanisms.privacy_loss import privacy_loss
from admmcheck.commands.white_box import exceeds
from admmcheck.mechanisms.worst_case import worst_case

settings_strategy = st.fixed_dictionaries({
    "mechanism": st.sampled_from(["pp", "dvp", "pvp", "private-radmm"]),
    "nodes": st.integers(3, 4),
    "iterations": st.integers(1, 3),
    "dim": st.integers(1, 2),
    "alpha": st.sampled_from([2.0, 5.0, 20.0]),
    "neighbours": st.sampled_from(["label-flip", "feature-move"]),
    "seed": st.integers(0, 1000),
})


def _config(drawn: dict) -> ReferenceAuditConfig:
    extra = {"epsilon": 1.0} if drawn["mechanism"] == "pvp" else {}
    settings = AuditSettings(samples=4000, workers=2, seed=drawn["seed"])
    return ReferenceAuditConfig(dataset="synthetic", samples=30, settings=settings, **drawn, **extra)


@settings(max_examples=max(settings().max_examples // 8, 1))
@given(drawn=settings_strategy)
def test_black_box_lower_bound_never_exceeds_the_white_box_worst_case(drawn):
    config = _config(drawn)
    claim, _, mechanism, pair = reference_claim(config)
    d0, d1 = pair.d0, pair.d1
    result = audit(Source(obj=mechanism), Source(obj=pair), claim, config.settings)
    largest = max(worst_case(mechanism, d0, records=1, free_point=False, seed=0).value,
                  worst_case(mechanism, d1, records=1, free_point=False, seed=0).value)
    assert result.epsilon_lower_bound <= largest * (1 + 1e-6), (result.as_dict(), largest)


@settings(max_examples=max(settings().max_examples // 4, 1))
@given(drawn=settings_strategy.filter(lambda d: d["mechanism"] != "pvp"))
def test_no_sampled_loss_exceeds_beta_when_the_preconditions_hold(drawn):
    claim, _, mechanism, pair = reference_claim(_config(drawn))
    d0, d1 = pair.d0, pair.d1
    run = mechanism.batch_run(d0, np.random.SeedSequence(drawn["seed"]).spawn(1000))
    losses = privacy_loss(mechanism, d0, d1, run.primal).total
    assert not exceeds(float(losses.max()), claim.epsilon), (float(losses.max()), claim.epsilon)
