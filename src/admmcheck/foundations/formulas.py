"""Safe reading of user-written numbers and formulas: schedules eta_i(t), alpha_i(t), rationals.

Text handed to admmcheck (command lines, configuration files written by others) is parsed
by the small grammar below and never by ``eval``, ``exec`` or ``sympy.sympify``, which
would run Python::

    expression := term (("+" | "-") term)*
    term       := factor (("*" | "/") factor)*
    factor     := ("+" | "-") factor | power
    power      := atom (("^" | "**") factor)?        right-associative: 2^3^2 = 2^9, -2^2 = -4
    atom       := NUMBER | NAME | FUNCTION "(" expression ("," expression)* ")" | "(" expression ")"

NAME is ``t`` (iteration, from 1), ``i`` (node, from 1) or ``k`` (the same as ``t``; R-ADMM
counts its odd iterations k = 1..K). FUNCTION is one of :data:`FUNCTIONS`. Limits on the
text's length (:data:`MAX_LENGTH`), its nesting (:data:`MAX_DEPTH`) and, in exact
arithmetic, on the size of powers keep every evaluation short: a formula such as
``9^9^9^9`` evaluates in floats to an overflow, which is reported, and exactly to an error.

Two evaluations exist: :meth:`Formula.values` in float64 on a (T, N) grid (schedules) and
:meth:`Formula.exact` in rationals (``Fraction``; the exact conditions). Every failure is
an :class:`~admmcheck.foundations.errors.InvalidFormula` that names the text and, for a grid, the
first (t, i) where the value is not a finite positive number.
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Union

import numpy as np

from admmcheck.foundations.errors import InvalidFormula

MAX_LENGTH = 1000
"""Longest formula text accepted, in characters."""
MAX_DEPTH = 32
"""Deepest nesting of parentheses, function calls, signs and powers accepted."""
MAX_EXACT_BITS = 4096
"""Largest numerator or denominator (in bits) an exact power may produce."""
MAX_LITERAL_EXPONENT = 400
"""Largest |e| in a literal like 1e-3 (beyond it float64 over- or underflows anyway)."""

VARIABLES = {"t": "t", "k": "t", "i": "i"}
FUNCTIONS: dict[str, tuple[int, int]] = {  # name -> (fewest, most) arguments
    "exp": (1, 1), "log": (1, 1), "sqrt": (1, 1), "abs": (1, 1), "min": (2, 8), "max": (2, 8),
}
_FLOAT_FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "abs": np.abs,
    "min": lambda *a: np.minimum.reduce(np.broadcast_arrays(*a)),
    "max": lambda *a: np.maximum.reduce(np.broadcast_arrays(*a)),
}
_ARITHMETIC: dict[str, Callable[..., object]] = {  # shared by the float and the exact evaluation
    "neg": operator.neg, "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "^": operator.pow,
}
_TOKEN = re.compile(
    r"\s*(?:(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_]\w*)|(?P<op>\*\*|[-+*/^(),]))"
)
_HINT = "write a number like 0.5 or 1/5, or a formula in t and i such as 0.5*1.1^(t-1)"

Node = Union[Fraction, str, tuple]  # a number, a variable, or (operator, operands...)


@dataclass(frozen=True)
class Formula:
    """A parsed formula; build it with :func:`parse_formula`."""

    text: str
    tree: Node

    @property
    def variables(self) -> frozenset[str]:
        """The variables it uses ("t", "i"), after mapping k to t."""
        return frozenset(_variables(self.tree))

    def values(self, iterations: int, nodes: int, name: str = "schedule") -> np.ndarray:
        """The (T, N) table of values at t = 1..T, i = 1..N, every one finite and positive."""
        t = np.arange(1, iterations + 1, dtype=np.float64)[:, None]
        i = np.arange(1, nodes + 1, dtype=np.float64)[None, :]
        with np.errstate(all="ignore"):
            try:
                raw = _evaluate_float(self.tree, {"t": t, "i": i, "shape": (iterations, nodes)})
            except InvalidFormula as exc:
                raise InvalidFormula(f"{name} {self.text!r} {exc}") from None
        table = np.broadcast_to(np.asarray(raw, dtype=np.float64), (iterations, nodes)).copy()
        bad = ~(np.isfinite(table) & (table > 0))
        if np.any(bad):
            row, col = (int(v) for v in np.argwhere(bad)[0])
            value = float(table[row, col])
            what = "has no real value" if np.isnan(value) else "is infinite" if np.isinf(value) else "is not positive"
            raise InvalidFormula(
                f"{name} {self.text!r} {what} at t={row + 1}, i={col + 1} (value {value}); "
                "every value must be finite and positive"
            )
        return table

    def exact(self) -> Fraction:
        """The exact rational value of a formula without variables or functions."""
        if self.variables:
            raise InvalidFormula(f"{self.text!r} uses {', '.join(sorted(self.variables))}; a number is expected here")
        return _evaluate_exact(self.tree, self.text)


def parse_formula(text: str, variables: bool = True) -> Formula:
    """Parse ``text`` by the grammar of this module; ``variables=False`` refuses t, i, k."""
    if not isinstance(text, str):
        raise InvalidFormula(f"expected a formula as text, got {type(text).__name__} {text!r}")
    if len(text) > MAX_LENGTH:
        raise InvalidFormula(f"the formula is {len(text)} characters long; at most {MAX_LENGTH} are accepted")
    if not text.strip():
        raise InvalidFormula(f"the formula is empty; {_HINT}")
    parser = _Parser(text, variables)
    tree = parser.expression(0)
    if parser.peek() is not None:
        raise InvalidFormula(f"cannot read {text!r}: unexpected {parser.peek()!r}; {_HINT}")
    return Formula(text, tree)


def parse_number(text: str) -> float:
    """A finite float from a number or a constant formula such as ``1/3`` or ``2^-10``."""
    formula = parse_formula(text, variables=False)
    with np.errstate(all="ignore"):
        try:
            value = float(_evaluate_float(formula.tree, {"shape": ()}))
        except InvalidFormula as exc:
            raise InvalidFormula(f"{text!r} {exc}") from None
    if not math.isfinite(value):
        raise InvalidFormula(f"{text!r} has no finite real value (it evaluates to {value})")
    return value


def parse_rational(text: str) -> Fraction:
    """An exact rational from ``1/5``, ``0.2``, ``3``, ``2^-3`` or ``(1+2)/7`` (no functions)."""
    return parse_formula(text, variables=False).exact()


def split_top_level(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses ("1,2" -> two parts, "max(t,2)" -> one)."""
    parts, depth, start = [], 0, 0
    for position, char in enumerate(text):
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            parts.append(text[start:position])
            start = position + 1
    parts.append(text[start:])
    return [part.strip() for part in parts]


class _Parser:
    """Recursive descent over the tokens; depth is bounded by MAX_DEPTH, so no RecursionError."""

    def __init__(self, text: str, variables: bool) -> None:
        self.text, self.allow_variables = text, variables
        self.tokens: list[tuple[str, str]] = []
        position = 0
        while position < len(text):
            if text[position:].strip() == "":
                break
            match = _TOKEN.match(text, position)
            if match is None:
                bad = text[position:].lstrip()[:1]
                raise InvalidFormula(f"cannot read {text!r}: the character {bad!r} is not allowed; {_HINT}")
            kind = match.lastgroup
            self.tokens.append((kind, match.group(kind)))
            position = match.end()
        self.position = 0

    def peek(self) -> str | None:
        return self.tokens[self.position][1] if self.position < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        if self.position >= len(self.tokens):
            raise InvalidFormula(f"cannot read {self.text!r}: it ends too early; {_HINT}")
        token = self.tokens[self.position]
        self.position += 1
        return token

    def expect(self, symbol: str) -> None:
        kind, value = self.take()
        if value != symbol:
            raise InvalidFormula(f"cannot read {self.text!r}: expected {symbol!r}, found {value!r}")

    def _deeper(self, depth: int) -> int:
        if depth >= MAX_DEPTH:
            raise InvalidFormula(f"{self.text[:60]!r}... nests deeper than {MAX_DEPTH} levels; simplify it")
        return depth + 1

    def expression(self, depth: int) -> Node:
        node = self.term(depth)
        while self.peek() in ("+", "-"):
            node = (self.take()[1], node, self.term(depth))
        return node

    def term(self, depth: int) -> Node:
        node = self.factor(depth)
        while self.peek() in ("*", "/"):
            node = (self.take()[1], node, self.factor(depth))
        return node

    def factor(self, depth: int) -> Node:
        if self.peek() in ("+", "-"):
            sign = self.take()[1]
            operand = self.factor(self._deeper(depth))
            return operand if sign == "+" else ("neg", operand)
        return self.power(depth)

    def power(self, depth: int) -> Node:
        base = self.atom(depth)
        if self.peek() in ("^", "**"):
            self.take()
            return ("^", base, self.factor(self._deeper(depth)))
        return base

    def atom(self, depth: int) -> Node:
        kind, value = self.take()
        if kind == "number":
            return _literal(value, self.text)
        if value == "(":
            node = self.expression(self._deeper(depth))
            self.expect(")")
            return node
        if kind == "name":
            if value in FUNCTIONS:
                self.expect("(")
                inner = self._deeper(depth)
                args = [self.expression(inner)]
                while self.peek() == ",":
                    self.take()
                    args.append(self.expression(inner))
                self.expect(")")
                fewest, most = FUNCTIONS[value]
                if not fewest <= len(args) <= most:
                    raise InvalidFormula(f"{value}() takes {fewest} to {most} arguments, got {len(args)} in {self.text!r}")
                return ("call", value, *args)
            if value in VARIABLES:
                if not self.allow_variables:
                    raise InvalidFormula(f"{self.text!r} uses {value}; a number is expected here")
                return VARIABLES[value]
            allowed = ", ".join(sorted(VARIABLES)) + "; functions " + ", ".join(sorted(FUNCTIONS))
            raise InvalidFormula(f"cannot read {self.text!r}: unknown name {value!r} (allowed: variables {allowed})")
        raise InvalidFormula(f"cannot read {self.text!r}: unexpected {value!r}; {_HINT}")


def _literal(text: str, formula: str) -> Fraction:
    mantissa, _, exponent = text.lower().partition("e")
    if exponent and abs(int(exponent)) > MAX_LITERAL_EXPONENT:
        raise InvalidFormula(f"the number {text} in {formula!r} is out of range (|exponent| <= {MAX_LITERAL_EXPONENT})")
    if len(mantissa) > 40:
        raise InvalidFormula(f"the number {text[:20]}... in {formula!r} has more than 40 digits")
    return Fraction(text)


def _variables(node: Node) -> set[str]:
    if isinstance(node, str):
        return {node}
    if isinstance(node, tuple):
        start = 2 if node[0] == "call" else 1
        return set().union(*(_variables(child) for child in node[start:]))
    return set()


def _evaluate_float(node: Node, env: dict[str, np.ndarray]) -> np.ndarray | float:
    if isinstance(node, Fraction):
        return float(node) if abs(node) < 1e308 else math.copysign(math.inf, node)
    if isinstance(node, str):
        return env[node]
    op = node[0]
    if op == "call":
        return _FLOAT_FUNCTIONS[node[1]](*(np.asarray(_evaluate_float(a, env), dtype=np.float64) for a in node[2:]))
    args = [np.asarray(_evaluate_float(a, env), dtype=np.float64) for a in node[1:]]
    if op == "/" and np.any(args[1] == 0):  # x/0 is an error, never a silent inf (alpha = inf: no noise)
        raise InvalidFormula(f"divides by zero{_where(np.broadcast_to(args[1] == 0, env['shape']))}")
    return _ARITHMETIC[op](*args)


def _where(mask: np.ndarray) -> str:
    """' at t=.., i=..' for the first True entry of a (T, N) mask; '' for a scalar."""
    if mask.ndim != 2:
        return ""
    row, col = (int(v) for v in np.argwhere(mask)[0])
    return f" at t={row + 1}, i={col + 1}"


def _evaluate_exact(node: Node, text: str) -> Fraction:
    if isinstance(node, Fraction):
        return node
    op = node[0]
    if op == "call":
        raise InvalidFormula(f"{text!r} uses {node[1]}(), whose value is not rational in general; "
                             "exact conditions take rationals such as 1/5 or 2^-3")
    args = [_evaluate_exact(a, text) for a in node[1:]]
    if op == "/" and args[1] == 0:
        raise InvalidFormula(f"{text!r} divides by zero")
    if op == "^":
        a, b = args
        if b.denominator != 1:
            raise InvalidFormula(f"{text!r} raises to the power {b}, which is not an integer; the value may be irrational")
        bits = max(a.numerator.bit_length(), a.denominator.bit_length(), 1)
        if bits * abs(b.numerator) > MAX_EXACT_BITS and abs(a) not in (0, 1):
            raise InvalidFormula(f"{text!r}: the power {a}^{b} has more than {MAX_EXACT_BITS} bits")
        if a == 0 and b < 0:
            raise InvalidFormula(f"{text!r} divides by zero (0 to a negative power)")
        return a ** int(b)
    return _ARITHMETIC[op](*args)
