"""Issue 60's acceptance counts what differs between families outside the family modules: a branch on a family
(``spec.family == CONSENSUS``, ``self.family != "online"``) or a table keyed by one or by a family's setting type
(``{CONSENSUS: ...}``, ``{SharingSetting: ...}``).

:data:`STILL_TO_GO` lists every place left, by file: the test fails on a place added and on one removed without
updating the list, so the list can only shrink, until the families are objects whose capabilities are asked with
``supports``/``require`` (issue 60, item 2).
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "admmcheck"
FAMILY_NAMES = frozenset({"CONSENSUS", "SHARING", "ONLINE", "consensus", "sharing", "online"})
SETTING_TYPES = frozenset({"ConsensusSetting", "SharingSetting", "OnlineSetting"})

#: (file, kind) -> how many places are left; each is a capability still chosen by family
STILL_TO_GO: dict[tuple[str, str], int] = {
    ("cli.py", "table"): 3,  # RUN_KEYS, RUNNERS, BOUND_PRINTERS: what run and bound print, by setting type
    # bound_arguments and release= are consensus's; the sharing and online white boxes; the consensus mechanism;
    # OnlineSpec's family check
    ("mechanisms/registry.py", "branch"): 6,
    ("mechanisms/registry.py", "table"): 4,  # SETTINGS, FAMILY_NEIGHBOURS, FAMILY_AUDITABLE, FAMILY_CANARIES
}


def _is_family(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id in FAMILY_NAMES) or (
        isinstance(node, ast.Constant) and node.value in FAMILY_NAMES)


def family_dispatch(tree: ast.AST) -> Counter:
    """How many branches on a family and tables keyed by a family or a family's setting type ``tree`` holds."""
    found: Counter = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(o, ast.Attribute) and o.attr == "family" for o in operands) and any(
                    _is_family(o) for o in operands):
                found["branch"] += 1
        elif isinstance(node, ast.Dict) and any(
                key is not None and (_is_family(key) or isinstance(key, ast.Name) and key.id in SETTING_TYPES)
                for key in node.keys):
            found["table"] += 1
    return found


def test_no_new_branch_or_table_by_family_and_the_list_of_those_left_is_exact():
    places: Counter = Counter()
    for path in sorted(SOURCE.rglob("*.py")):
        for kind, count in family_dispatch(ast.parse(path.read_text())).items():
            places[(str(path.relative_to(SOURCE)), kind)] += count
    assert dict(places) == STILL_TO_GO


def test_the_count_finds_each_kind_and_not_an_events_family():
    code = ('a = spec.family == CONSENSUS\nb = self.family != "online"\nc = {SHARING: 1}\nd = {SharingSetting: f}\n'
            'e = event.family == "threshold"\nf = {"x": 1}\n')
    assert family_dispatch(ast.parse(code)) == Counter({"branch": 2, "table": 2})
