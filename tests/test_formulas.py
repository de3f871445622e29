"""The safe formula grammar: values against numpy written out by hand, exact rationals,
precedence, and every limit that keeps hostile text from running or hanging (issue 14)."""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import pytest

from admmcheck.foundations.errors import InvalidConfiguration, InvalidFormula
from admmcheck.foundations.formulas import MAX_DEPTH, MAX_LENGTH, parse_formula, parse_number, parse_rational, split_top_level
from admmcheck.solving.schedules import ExpressionSchedule, parse_schedule, schedule_table

T = np.arange(1, 7, dtype=float)[:, None]
I = np.arange(1, 4, dtype=float)[None, :]


@pytest.mark.parametrize("text, expected", [
    ("0.5*1.1^(t-1)", 0.5 * 1.1 ** (T - 1) + 0 * I),
    ("0.5*1.1**(t-1)", 0.5 * 1.1 ** (T - 1) + 0 * I),
    ("0.4 + 0.1*i", 0.4 + 0.1 * I + 0 * T),
    ("2^t^0.5", 2.0 ** (T ** 0.5) + 0 * I),  # right-associative
    ("-2^2 + 5 + 0*t", -(2.0**2) + 5 + 0 * T + 0 * I),  # the sign applies after the power
    ("exp(-t/10) + log(i + 1)", np.exp(-T / 10) + np.log(I + 1)),
    ("sqrt(t*i)", np.sqrt(T * I)),
    ("max(t, 3) / min(i, 2)", np.maximum(T, 3) / np.minimum(I, 2)),
    ("abs(t - 4) + 1", np.abs(T - 4) + 1 + 0 * I),
    ("5*1.03^(k-1)", 5 * 1.03 ** (T - 1) + 0 * I),  # k is R-ADMM's odd-step counter
    ("1e-3*t + 2E1", 1e-3 * T + 20 + 0 * I),
    (".5/t", 0.5 / T + 0 * I),
])
def test_values_match_numpy_written_out(text, expected):
    np.testing.assert_allclose(parse_formula(text).values(6, 3), expected, rtol=1e-15)


def test_a_formula_schedule_equals_the_table_it_describes():
    table = schedule_table("eta", parse_schedule("0.5*1.1^(t-1)"), 4, 2)
    np.testing.assert_allclose(table, 0.5 * 1.1 ** np.arange(4)[:, None] * np.ones((1, 2)), rtol=1e-15)


@pytest.mark.parametrize("text, expected", [
    ("1/5", Fraction(1, 5)), ("0.2", Fraction(1, 5)), ("3", Fraction(3)), ("2^-3", Fraction(1, 8)),
    ("(1+2)/7", Fraction(3, 7)), ("-1/2", Fraction(-1, 2)), ("1e-3", Fraction(1, 1000)),
    ("101/100^2", Fraction(101, 10000)), ("(3/2)^3", Fraction(27, 8)),
])
def test_rationals_are_exact(text, expected):
    assert parse_rational(text) == expected


def test_numbers_and_lists():
    assert parse_number("1/3") == pytest.approx(1 / 3, rel=1e-16)
    assert split_top_level("1, max(t,2), (3,4)") == ["1", "max(t,2)", "(3,4)"]
    assert parse_schedule("0.5, 1/4,2") == (0.5, 0.25, 2.0)
    assert parse_schedule("2, inf", allow_infinite=True) == (2.0, np.inf)
    assert isinstance(parse_schedule("max(t, 2)"), ExpressionSchedule)


@pytest.mark.parametrize("text, message", [
    ("__import__('os').system('echo x')", "is not allowed"),
    ("(lambda: 1)()", "is not allowed"),
    ("exec('1')", "is not allowed"),
    ("t.__class__", "is not allowed"),
    ("x + t", "unknown name 'x'"),
    ("eval(t)", "unknown name 'eval'"),
    ("sin(t)", "unknown name 'sin'"),
    ("0.5*(", "ends too early"),
    ("(1))", "unexpected ')'"),
    ("max(t)", "max() takes 2 to 8 arguments"),
    ("", "empty"),
    ("1" * 50, "more than 40 digits"),
    ("1e999999", "out of range"),
])
def test_bad_text_is_refused_with_a_named_error(text, message):
    with pytest.raises(InvalidFormula, match=_escape(message)):
        parse_formula(text).values(3, 2)
    assert issubclass(InvalidFormula, InvalidConfiguration)


def _escape(text: str) -> str:
    import re
    return re.escape(text)


def test_size_and_nesting_limits():
    with pytest.raises(InvalidFormula, match=f"at most {MAX_LENGTH}"):
        parse_formula("+".join(["t"] * 20_000))  # a RecursionError before the grammar
    with pytest.raises(InvalidFormula, match="nests deeper"):
        parse_formula("(" * (MAX_DEPTH + 1) + "t" + ")" * (MAX_DEPTH + 1))
    with pytest.raises(InvalidFormula, match="nests deeper"):
        parse_formula("-" * 200 + "1")
    with pytest.raises(InvalidFormula, match="nests deeper"):
        parse_formula("^".join(["2"] * 100))
    assert parse_formula("+".join(["t"] * 400)).values(2, 1)[1, 0] == 800  # long but flat is fine


@pytest.mark.parametrize("text", ["9^9^9^9", "10^10^8", "2^(2^(2^(2^(2^5))))"])
def test_towers_of_powers_end_at_once(text):
    start = time.perf_counter()
    with pytest.raises(InvalidFormula, match="no finite real value"):
        parse_schedule(text)
    with pytest.raises(InvalidFormula, match="bits"):
        parse_rational(text)
    assert time.perf_counter() - start < 5  # sympy ran these at 100 % CPU until killed


@pytest.mark.parametrize("text, where", [
    ("1/(t-1)", "divides by zero at t=1, i=1"),
    ("1/(i-2)", "divides by zero at t=1, i=2"),
    ("sqrt(3.5 - t)", "has no real value at t=4, i=1"),
    ("sqrt(3 - t)", "is not positive at t=3, i=1"),
    ("log(3 - t) + 1", "is infinite at t=3, i=1"),
    ("2 - t*i", "is not positive at t=1, i=2"),
    ("10^(100*t)", "is infinite at t=4, i=1"),
])
def test_values_name_the_first_bad_t_and_i(text, where):
    with pytest.raises(InvalidFormula, match=where):
        schedule_table("alpha", parse_schedule(text), 5, 3, allow_infinite=True)


def test_constant_text_is_checked_when_read():
    with pytest.raises(InvalidFormula, match="no finite real value"):
        parse_schedule("sqrt(-1)")
    with pytest.raises(InvalidFormula, match="must be positive"):
        parse_schedule("1 - 1")
    with pytest.raises(InvalidFormula, match="inf is allowed only for the noise parameter"):
        parse_schedule("inf")
    with pytest.raises(InvalidFormula, match="not an integer"):
        parse_rational("2^(1/2)")
    with pytest.raises(InvalidFormula, match="not rational in general"):
        parse_rational("sqrt(4)")
    with pytest.raises(InvalidFormula, match="uses t"):
        parse_rational("t")
