"""Issue 52: what differs between algorithms is a capability of their spec, never a test of their name.

The check reads the AST of ``src/admmcheck`` (the registry, where the names are given, aside) for the three ways
code dispatches on a name: a comparison with a registered name (``name == "pp"``, ``name in ("pp", "dvp")``), a
table keyed by one (``{"pp": ...}``) and a lookup by one (``table["pp"]``). A name given as a value (a default, a
verdict's label, the argument of a call) is not dispatch and is not flagged.

:data:`STILL_TO_GO` lists the places left, each with the reason it is still there: the test fails on any place not
in it and on any place in it that is gone, so the list can only shrink.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from admmcheck.mechanisms.registry import REGISTRY

SOURCE = Path(__file__).resolve().parents[1] / "src" / "admmcheck"
REGISTRY_FILE = SOURCE / "mechanisms" / "registry.py"

#: (file, how many places) still to go: none. The list stays so that a place added later has to be named here.
STILL_TO_GO: dict[str, int] = {}


def _names(node: ast.AST, names: frozenset[str]) -> list[str]:
    """The registered names ``node`` is, or holds as a literal tuple, list or set."""
    if isinstance(node, ast.Constant) and node.value in names:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [element.value for element in node.elts if isinstance(element, ast.Constant) and element.value in names]
    return []


def name_dispatch(tree: ast.AST, names: frozenset[str]) -> list[tuple[int, str, list[str]]]:
    """(line, kind, names) of every comparison with, table keyed by, and lookup by a registered name."""
    found = []
    for node in ast.walk(tree):
        hits, kind = [], ""
        if isinstance(node, ast.Compare):
            hits, kind = [n for operand in [node.left, *node.comparators] for n in _names(operand, names)], "compare"
        elif isinstance(node, ast.Dict):
            hits, kind = [n for key in node.keys if key is not None for n in _names(key, names)], "table"
        elif isinstance(node, ast.Subscript):
            hits, kind = _names(node.slice, names), "lookup"
        if hits:
            found.append((node.lineno, kind, hits))
    return found


def _places() -> Counter:
    names = frozenset(REGISTRY.registered())
    places = Counter()
    for path in sorted(SOURCE.rglob("*.py")):
        if path != REGISTRY_FILE:
            places[str(path.relative_to(SOURCE))] += len(name_dispatch(ast.parse(path.read_text()), names))
    return +places


def test_no_code_dispatches_on_a_registered_name_but_the_places_still_to_go():
    assert dict(_places()) == STILL_TO_GO


def test_the_check_finds_each_kind_of_name_dispatch():
    names = frozenset({"pp", "dvp"})
    code = ('a = name == "pp"\nb = name in ("dvp", "x")\nc = {"pp": 1}\nd = table["dvp"]\n'
            'e = f("pp")\ng = Verdict("pp")\nh = name == "other"\n')
    assert [(line, kind) for line, kind, _ in name_dispatch(ast.parse(code), names)] == [
        (1, "compare"), (2, "compare"), (3, "table"), (4, "lookup")]
