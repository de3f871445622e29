"""A mechanism that writes into its input dataset is audited on the datasets as given: the worker sees the
write (the dataset's pickle changed after a block), gives every later call of that side its own copy, draws
the block again, and the audit says so in a finding. Checked against the same mechanism run on its own copy."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from admmcheck.audit import PrivacyClaim, Source, audit
from admmcheck.audit.inputs.neighbourhoods import Dataset, candidate_pairs, parse_domain
from admmcheck.foundations.output import to_json

MECHANISMS = str(Path(__file__).resolve().parent / "mechanisms.py")


def _audit(mechanism: str, neighbours: str, **settings):
    return audit(Source(f"{MECHANISMS}:{mechanism}"), Source(f"{MECHANISMS}:{neighbours}"), PrivacyClaim(1.0, 0.0),
                 workers=2, **settings)


def _without_findings_and_time(result) -> str:
    """The audit's JSON but for its findings, its wall time and the mechanism's name (NaN equal to NaN)."""
    summary = result.as_dict()
    for key in ("findings", "wall_time_s", "mechanism"):
        summary.pop(key)
    return to_json(summary)


def test_a_mechanism_that_writes_into_its_input_gets_the_audit_of_the_same_mechanism_on_a_copy():
    written = _audit("histogram_then_centred", "histogram_pair", samples=5_000, seed=4)
    copied = _audit("histogram_copied_then_centred", "histogram_pair", samples=5_000, seed=4)
    assert _without_findings_and_time(written) == _without_findings_and_time(copied)  # every sample the same
    assert written.verdict == "violation" and written.as_dict()["reproducible"]
    assert copied.findings == ()
    [finding] = written.findings
    assert finding.startswith("the mechanism writes into its input dataset (seed=4, pair=0, side=0, block=0, ")


def test_a_rare_write_is_seen_in_the_block_it_happens_and_the_sequential_audit_is_the_copys_too():
    """Zeroing the input with probability 0.01 leaves both datasets at 0, which hid the leak before: 20,000
    samples a side gave no violation. Now the audit equals the one of the mechanism that never writes."""
    written = _audit("laplace_half_scale_then_zeroed", "array_pair", samples=20_000, seed=1)
    plain = _audit("laplace_half_scale_array", "array_pair", samples=20_000, seed=1)
    assert _without_findings_and_time(written) == _without_findings_and_time(plain)
    assert written.verdict == "violation" and len(written.findings) == 1 and plain.findings == ()
    sequential = [_audit(name, "array_pair", samples=20_000, seed=2, sequential=True)
                  for name in ("laplace_half_scale_then_zeroed", "laplace_half_scale_array")]
    assert _without_findings_and_time(sequential[0]) == _without_findings_and_time(sequential[1])
    assert sequential[0].verdict == "violation"


def test_search_candidates_share_no_arrays_so_one_pairs_writes_cannot_reach_another():
    dataset = Dataset(np.arange(6.0).reshape(3, 2), np.array([0.0, 1.0, 0.0]))
    pairs = candidate_pairs(dataset, "replace-one", parse_domain("box:-1:1", 2))
    arrays = [a for pair in (pairs[0], pairs[1]) for side in (0, 1) for a in pair.dataset(side)]
    assert all(not np.shares_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:])
    assert all(not np.shares_memory(a, b) for a in arrays for b in (dataset.features, dataset.labels))


def test_pairs_of_a_dataset_with_itself_are_named_in_a_finding():
    result = _audit("laplace_array_sum", "pairs_two_equal", samples=2_000, seed=0)
    assert result.findings == ("the two datasets of pairs 0, 2 are equal: the audit compares a dataset with itself "
                               "there, where no mechanism can leak; neighbours differ in one record (replaced, added "
                               "or removed)",)
    assert _audit("laplace_array_sum", "array_pair", samples=2_000, seed=0).findings == ()


def test_a_cache_an_object_fills_on_first_use_is_not_a_write_but_a_replaced_attribute_is():
    cached = _audit("laplace_of_cached_total", "cached_pair", samples=2_000, seed=0)
    assert cached.findings == () and cached.verdict == "no-violation-found"
    overwritten = _audit("laplace_then_overwrites", "cached_pair", samples=5_000, seed=0)
    assert len(overwritten.findings) == 1 and overwritten.findings[0].startswith("the mechanism writes into its input")
    assert overwritten.verdict == "violation"  # every call saw its dataset as given: true epsilon 2
