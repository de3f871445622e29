"""Claims of the white-box loss (issue 16), over generated settings of the reference mechanisms:

* the black-box lower bound never exceeds the largest privacy loss (the white-box worst case
  over both directions of the neighbour pair): a valid lower bound cannot beat the truth;
* with the theorem's preconditions met, no sampled transcript's loss exceeds beta.
``ci`` runs a few settings, ``thorough`` a hundred."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings

from admmcheck.audit import Source, audit
from admmcheck.commands.audit import audited_pair
from admmcheck.mechanisms.white_box import exceeds
from admmcheck.mechanisms.families import CONSENSUS
from admmcheck.mechanisms.registry import REGISTRY
from admmcheck.strategies import mechanism_audits

WITH_A_THEOREM = tuple(name for name in REGISTRY.names(CONSENSUS, private=True) if REGISTRY[name].claim is not None)


@settings(max_examples=max(settings().max_examples // 8, 1))
@given(config=mechanism_audits())
def test_black_box_lower_bound_never_exceeds_the_white_box_worst_case(config):
    audited, pair, _ = audited_pair(config)
    mechanism, d0, d1 = audited.mechanism, pair.d0, pair.d1
    result = audit(Source(obj=mechanism), Source(obj=pair), audited.claimed, config.settings)
    worst_case = config.spec.worst_case
    largest = max(worst_case(mechanism, d0, records=1, free_point=False, seed=0).value,
                  worst_case(mechanism, d1, records=1, free_point=False, seed=0).value)
    assert result.epsilon_lower_bound <= largest * (1 + 1e-6), (result.as_dict(), largest)


@settings(max_examples=max(settings().max_examples // 4, 1))
@given(config=mechanism_audits(mechanisms=WITH_A_THEOREM))
def test_no_sampled_loss_exceeds_beta_when_the_preconditions_hold(config):
    audited, pair, _ = audited_pair(config)
    claim, mechanism, d0, d1 = audited, audited.mechanism, pair.d0, pair.d1
    run = mechanism.batch_run(d0, np.random.SeedSequence(config.setting.seed).spawn(1000))
    losses = config.spec.exact_loss(mechanism, d0, d1, run.primal).total
    assert not exceeds(float(losses.max()), claim.claimed.epsilon), (float(losses.max()), claim.claimed.epsilon)
