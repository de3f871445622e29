"""How a mechanism is called: mechanism(data, rng), or mechanism(data) for code that takes the data alone,
decided from its signature (admmcheck.audit.running.loading.as_mechanism)."""

from __future__ import annotations

from pathlib import Path

import pytest

from admmcheck.audit import PrivacyClaim, Source, audit
from admmcheck.audit.running.loading import as_mechanism
from admmcheck.foundations.errors import InvalidConfiguration, MechanismError
from admmcheck.foundations.output import to_json

MECHANISMS = str(Path(__file__).resolve().parent / "mechanisms.py")


def _json(name: str) -> str:
    result = audit(Source(f"{MECHANISMS}:{name}"), Source(f"{MECHANISMS}:scalar_pair"), PrivacyClaim(1.0, 0.0),
                   samples=3_000, seed=5, workers=2)
    summary = result.as_dict()
    for key in ("wall_time_s", "mechanism"):
        summary.pop(key)
    return to_json(summary)


@pytest.mark.parametrize("name", ["laplace_global_data_only", "laplace_global_keyword_only"])
def test_code_of_the_data_alone_gets_the_audit_of_the_same_code_that_ignores_rng(name):
    assert _json(name) == _json("laplace_global")  # the same global draws, seeded per sample: the same samples


def test_code_that_takes_a_random_state_gets_one_on_the_samples_own_stream():
    assert _json("laplace_random_state") == _json("laplace_random_state_by_hand")


def test_a_signature_that_takes_neither_form_is_refused_saying_what_to_write():
    with pytest.raises(MechanismError, match=r"needs_three\(data, epsilon, delta\) cannot be called as "
                                             r"mechanism\(data, rng\) or mechanism\(data\): wrap it"):
        _json("needs_three")


def test_a_type_error_raised_inside_the_code_is_reported_as_its_own_fault_not_as_a_wrong_call():
    with pytest.raises(MechanismError, match=r"raises TypeError: object of type 'float' has no len\(\)"):
        _json("raises_type_error")


def test_the_convention_is_read_from_the_signature():
    def two(data, rng):
        return (data, rng)

    def optional(data, rng=None):
        return (data, rng)

    def alone(data):
        return data

    assert as_mechanism(two, "two") is two and as_mechanism(optional, "optional") is optional
    assert as_mechanism(alone, "alone")(3, "rng") == 3
    assert as_mechanism(len, "len")([1, 2], "rng") == 2  # a builtin's signature is read too: len takes one argument
    with pytest.raises(InvalidConfiguration, match="cannot be called"):
        as_mechanism(lambda: 0, "nothing")
