"""Issue 27, item 2: outputs of any shape and type, kept apart as an observer would keep them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from admmcheck.audit import PrivacyClaim, Source, audit
from admmcheck.audit.inputs.outputs import Block, Encoding, Kind, Layout, NotAnOutput, encode_output, raised_kind
from admmcheck.foundations.errors import MechanismError

HERE = Path(__file__).resolve().parent
THIRD_PARTY, MECHANISMS = HERE / "third_party.py", HERE / "mechanisms.py"


@pytest.mark.parametrize("a, b", [
    (["x", "y"], ["x"]),                      # a list whose length depends on the data
    ([1.0, 2.0], (1.0, 2.0)),                  # list or tuple
    (True, 1),                                 # a boolean is not the number 1
    (1, 1.0),                                  # nor is an int a float
    (None, 0.0),
    ("cat", "dog"),
    ({"a": 1.0}, {"b": 1.0}),                  # different keys
    (np.zeros(2), np.zeros((2, 1))),           # same numbers, other shape
    (np.zeros(2, dtype=np.float32), np.zeros(2)),
    ([1, 2.5], [2.5, 1]),
])
def test_every_distinction_an_observer_can_make_is_a_different_kind(a, b):
    assert encode_output(a)[0].signature != encode_output(b)[0].signature


def test_numbers_keep_their_values_and_names():
    kind, numbers = encode_output({"label": "cat", "scores": [0.1, 0.9], "n": 3, "x": np.array([[1.0, 2.0]])})
    assert kind.signature == "{'label': 'cat', 'n': int, 'scores': list[float×2], 'x': array(float64, (1, 2))}"
    assert numbers.tolist() == [3.0, 0.1, 0.9, 1.0, 2.0]
    assert kind.layout.parts == (("n", ()), ("scores", (2,)), ("x", (1, 2)))
    assert kind.layout.describe(4) == "x[0, 1]"
    assert encode_output(None)[0].signature == "None" and encode_output(None)[1].size == 0
    assert raised_kind(ValueError("x")).signature == "raised ValueError"
    with pytest.raises(NotAnOutput, match="returns a builtins.object"):
        encode_output(object())


def test_a_set_is_its_elements_in_one_order_whatever_order_it_was_built_in():
    """A set of selected indices or labels: an observer sees the elements, not an order, so {3, 1, 2} built any
    way is one output; a set is not the tuple or list of the same elements."""
    forward, backward = set(), set()
    for item in (3, 1, 2):
        forward.add(item)
    for item in (2, 1, 3):
        backward.add(item)
    kind, numbers = encode_output({"chosen": forward, "names": frozenset({"b", "a"})})
    assert kind.signature == "{'chosen': set(int×3), 'names': frozenset('a', 'b')}" and numbers.tolist() == [1, 2, 3]
    assert encode_output(backward)[0].signature == encode_output(forward)[0].signature == "set(int×3)"
    assert encode_output({1, 2})[0].signature not in {encode_output(x)[0].signature for x in ((1, 2), [1, 2])}
    assert encode_output(set())[0].signature == "set()" and encode_output({"x", 2})[0].signature == "set(int, 'x')"
    with pytest.raises(NotAnOutput, match="cannot be put in one order"):
        encode_output({(1, "a"), (1, 2)})


def test_a_block_travels_as_npz_bytes_and_refuses_garbage():
    block = Block(np.array([[1.0, 0.0], [2.0, 3.0]]), np.array([0, 1]),
                  (Kind("float", Layout((("output", ()),))), Kind("list[float×2]", Layout((("output", (2,)),)))))
    again = Block.from_bytes(block.to_bytes())
    assert again.values.tolist() == block.values.tolist() and again.kind_of.tolist() == [0, 1]
    assert again.kinds == block.kinds
    with pytest.raises(ValueError):
        Block.from_bytes(Block(block.values, np.array([0, 5]), block.kinds).to_bytes())


def test_the_encoding_of_one_kind_is_the_numbers_and_of_several_indicators_then_slices():
    scalar = Kind("float", Layout((("output", ()),)))
    pair = Kind("list[float×2]", Layout((("output", (2,)),)))
    one = Encoding([scalar], {"float": 3})
    block = Block(np.array([[1.0], [2.0]]), np.array([0, 0]), (scalar,))
    assert one.features(block).tolist() == [[1.0], [2.0]]
    mixed = Block(np.array([[1.0, 0.0], [2.0, 3.0]]), np.array([0, 1]), (scalar, pair))
    assert np.isnan(one.features(mixed)[1]).all() and one.unseen(mixed) == 1  # never in any event
    several = Encoding([scalar, pair], {"float": 5, "list[float×2]": 2})
    assert [name for name, _ in several.layout.parts] == [
        "kind = float", "kind = list[float×2]", "kind = another kind", "[float] output", "[list[float×2]] output"]
    other = Kind("None", Layout(()))
    block = Block(np.array([[1.0, 0.0], [2.0, 3.0], [0.0, 0.0]]), np.array([0, 1, 2]), (scalar, pair, other))
    assert several.features(block).tolist() == [[1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 2, 3], [0, 0, 1, 0, 0, 0]]


def _audit(mechanism: str, neighbours: str, epsilon: float = 1.0, **kwargs):
    kwargs = {"samples": 6_000, "workers": 2, "seed": 2} | kwargs
    return audit(Source(f"{THIRD_PARTY}:{mechanism}"), Source(neighbours), PrivacyClaim(epsilon), **kwargs)


def test_a_class_list_of_data_dependent_length_is_an_infinite_violation():
    result = _audit("class_list", f"{THIRD_PARTY}:class_pair", samples=2_000)
    assert result.verdict == "violation" and result.epsilon_estimate == math.inf
    assert result.family == "structure" and "'classes': list['negative', 'positive']" in result.event
    assert result.counts[result.numerator] == result.bounding_samples[result.numerator]  # every d0 output
    assert result.counts[1 - result.numerator] == 0  # and no d1 output is of that kind
    n = result.bounding_samples[0]
    # the strongest bound n samples per side give, closed form: the event ranked first spends half of
    # 1 - confidence, a quarter on each one-sided Clopper-Pearson interval (q = 0.0125); n of n gives
    # p_a >= q^(1/n), 0 of n gives p_b <= 1 - q^(1/n)
    q = 0.0125 ** (1 / n)
    assert result.epsilon_lower_bound == pytest.approx(math.log(q / (1 - q)), rel=1e-9)
    summary = result.as_dict()
    assert [k["kind"] for k in summary["output_kinds"]] == [
        "{'classes': list['negative', 'positive'], 'count': float}", "{'classes': list['negative'], 'count': float}"]


@pytest.mark.parametrize("mechanism, verdict", [("label_or_none", "no-violation-found"),
                                                ("label_or_none_broken", "violation")])
def test_labels_strings_and_none(mechanism, verdict):
    result = _audit(mechanism, f"{THIRD_PARTY}:xy_pair", samples=20_000)
    assert result.verdict == verdict
    if verdict == "violation":
        assert 1.0 < result.epsilon_lower_bound <= 2.0  # true epsilon 2
        assert result.epsilon_estimate == pytest.approx(2.0, abs=0.2)
    else:
        assert result.epsilon_lower_bound <= 1.0
    assert {k["kind"] for k in result.as_dict()["output_kinds"]} == {"None", "'yes'", "'no'"}


def test_an_exception_under_one_dataset_only_is_an_output_with_the_flag_and_an_error_without():
    result = _audit("raises_on_one", f"{MECHANISMS}:scalar_pair", samples=2_000, exceptions_are_outputs=True)
    assert result.verdict == "violation" and result.epsilon_estimate == math.inf
    assert result.family == "structure" and "raised ValueError" in result.event and result.numerator == 1
    with pytest.raises(MechanismError, match=r"raises ValueError: count too large.*\(exceptions_are_outputs=True\)"):
        _audit("raises_on_one", f"{MECHANISMS}:scalar_pair", samples=2_000)


def test_a_shape_that_changes_at_random_under_both_datasets_is_no_violation():
    result = audit(Source(f"{MECHANISMS}:changes_shape"), Source(f"{MECHANISMS}:scalar_pair"), PrivacyClaim(1.0),
                   samples=10_000, workers=2, seed=4)
    assert result.verdict == "no-violation-found" and result.epsilon_lower_bound <= 1.0
    assert len(result.as_dict()["output_kinds"]) == 2
