"""Samples that repeat between calls are not independent draws: the audit refuses them
(admmcheck.audit.inputs.outputs.calls_repeat), and passes independent ones of any law."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from admmcheck.audit import PrivacyClaim, Source, audit
from admmcheck.audit.inputs.outputs import Block, Kind, Layout, calls_repeat
from admmcheck.foundations.errors import MechanismError, UnseededRandomness

MECHANISMS = str(Path(__file__).resolve().parent / "mechanisms.py")
KIND = Kind("float", Layout((("output", ()),)))


def _side(values: np.ndarray) -> tuple[Block, Block]:
    block = Block.plain(np.asarray(values, dtype=float)[:, None], KIND)
    return block, block


@pytest.mark.parametrize("law", ["binary 0.9", "binary 0.5", "four values", "normal", "one value in 50"])
def test_independent_samples_of_any_law_are_never_refused(law):
    rng = np.random.default_rng(11)
    draws = {"binary 0.9": lambda n: rng.random(n) < 0.9, "binary 0.5": lambda n: rng.random(n) < 0.5,
             "four values": lambda n: rng.choice(4, n, p=[0.7, 0.1, 0.1, 0.1]), "normal": lambda n: rng.normal(size=n),
             "one value in 50": lambda n: np.where(rng.random(n) < 0.02, 1.0, rng.normal(size=n))}[law]
    refused = sum(calls_repeat(_side(draws(n)), "m", "") is not None for n in (20, 100, 3000) for _ in range(100))
    assert refused == 0


def test_runs_of_repeated_draws_are_refused_with_the_counts():
    rng = np.random.default_rng(3)
    runs = np.repeat(rng.normal(size=600), 5)  # each draw released 5 times in a row
    message = calls_repeat(_side(runs), "m", " of pair 2")
    assert message.startswith("m gives consecutive calls the same output far more often than calls 1500 apart "
                              "(1200 of 1500 consecutive pairs of samples on d0 of pair 2 were equal, against 0 of "
                              "1500 pairs 1500 apart)")
    assert calls_repeat(_side(np.repeat(rng.normal(size=10), 2)), "m", "") is None  # too few to tell


@pytest.mark.parametrize("sequential", [False, True])
def test_a_mechanism_whose_draws_repeat_between_calls_gets_no_verdict(sequential):
    with pytest.warns(UnseededRandomness), pytest.raises(MechanismError, match=r"sticky_unseeded gives consecutive calls the same output far more "
                                             r"often .* not independent draws"):
        audit(Source(f"{MECHANISMS}:sticky_unseeded"), Source(f"{MECHANISMS}:scalar_pair"), PrivacyClaim(1.0, 0.0),
              samples=4_000, seed=0, workers=2, sequential=sequential)
