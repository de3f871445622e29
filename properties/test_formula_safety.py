"""Claim: reading any text as a formula either gives finite positive floats (or an exact
rational) or raises InvalidFormula, and never runs it (issue 14).

The texts mix random characters with fragments of Python that would write a canary file
if anything evaluated them; the canary must never appear.
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from admmcheck.foundations.errors import InvalidFormula
from admmcheck.foundations.formulas import parse_formula, parse_rational
from admmcheck.solving.schedules import parse_schedule, schedule_table

CANARY = Path(os.environ.get("TMPDIR", "/tmp")) / f"admmcheck-formula-canary-{os.getpid()}"
PAYLOADS = [
    f"__import__('os').system('touch {CANARY}')",
    f"open('{CANARY}', 'w')",
    f"exec(\"open('{CANARY}','w')\")",
    f"(lambda: open('{CANARY}', 'w'))()",
    f"__import__('pathlib').Path('{CANARY}').touch()",
]
TOKENS = ["t", "i", "k", "1", "0", "2.5", "1e3", "1e-400", "+", "-", "*", "/", "^", "**", "(", ")", ",",
          "exp", "log", "sqrt", "min", "max", "abs", "9^9^9", " ", "inf", "nan", "x", ".", "_", "'", '"',
          "lambda", ":", "[", "]", "{", "}", ";", "\\", "\n", "\x00", "é", "∞"] + PAYLOADS

texts = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(TOKENS), max_size=25).map("".join),
    st.sampled_from(PAYLOADS),
)


@pytest.fixture(autouse=True, scope="module")
def _no_canary_before_or_after():
    CANARY.unlink(missing_ok=True)
    yield
    assert not CANARY.exists(), "a formula was executed: the canary file was written"


@given(texts)
def test_schedules_give_finite_positive_floats_or_the_named_error(text):
    try:
        schedule = parse_schedule(text, allow_infinite=True)
        table = schedule_table("alpha", schedule, 7, 3, allow_infinite=True)
    except InvalidFormula:
        assert not CANARY.exists()
        return
    assert table.shape == (7, 3) and table.dtype == np.float64
    assert np.all((table > 0) & (np.isfinite(table) | np.isposinf(table)))
    if np.any(np.isposinf(table)):  # only an explicit inf (no noise), never a computed one
        assert "inf" in text.lower() or "∞" in text
    assert not CANARY.exists()


@given(texts)
def test_rationals_are_exact_or_the_named_error(text):
    try:
        value = parse_rational(text)
    except InvalidFormula:
        assert not CANARY.exists()
        return
    assert isinstance(value, Fraction)
    assert max(value.numerator.bit_length(), value.denominator.bit_length()) <= 5000
    assert not CANARY.exists()


@given(st.lists(st.sampled_from(TOKENS[:24]), min_size=1, max_size=15).map("".join))
def test_a_formula_that_reads_evaluates_on_the_whole_grid_or_names_a_t_and_i(text):
    try:
        formula = parse_formula(text)
    except InvalidFormula:
        return
    try:
        table = formula.values(5, 4)
    except InvalidFormula as exc:
        message = str(exc)
        assert ("at t=" in message and ", i=" in message) or "divides by zero" in message
        return
    assert np.all(np.isfinite(table)) and np.all(table > 0)
    assert all(math.isfinite(v) for v in table.ravel())
