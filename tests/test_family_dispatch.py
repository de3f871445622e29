"""Issue 60's acceptance: what differs between families lives in the family modules
(``admmcheck/mechanisms/families/``) and nowhere else, and every capability is asked through ``supports``/``require``.

Outside the family modules the test finds none of:

* a branch on a family (``spec.family == CONSENSUS``, ``self.family != "online"``) or a table keyed by one or by a
  family's setting type (``{CONSENSUS: ...}``, ``{SharingSetting: ...}``);
* a hand-made capability probe of a spec: ``spec.white_box is None``, ``REGISTRY[name].conditions is not None``
  (a mechanism's own ``release`` is not a spec's), or
  ``hasattr(stated, "sigma")`` (the spec's capabilities are asked with ``spec.supports(name)``, a theorem object's
  with ``admmcheck.claims.stated.gives``).

The specs module (:mod:`admmcheck.mechanisms.specs`) is where ``supports`` itself reads the attributes.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from admmcheck.claims.stated import CAPABILITIES as THEOREM_CAPABILITIES
from admmcheck.mechanisms.specs import CAPABILITIES

SOURCE = Path(__file__).resolve().parents[1] / "src" / "admmcheck"
FAMILY_MODULES = ("mechanisms/families/", "mechanisms/specs.py")
FAMILY_NAMES = frozenset({"CONSENSUS", "SHARING", "ONLINE", "consensus", "sharing", "online"})
SETTING_TYPES = frozenset({"ConsensusSetting", "SharingSetting", "OnlineSetting"})
#: attributes a probe by hand would read: a spec's capabilities and a theorem object's (and those the registry once
#: probed for, as_claim and summary)
PROBED = frozenset(CAPABILITIES) | frozenset(THEOREM_CAPABILITIES) | {"as_claim", "summary"}


def _is_family(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id in FAMILY_NAMES) or (
        isinstance(node, ast.Constant) and node.value in FAMILY_NAMES)


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_spec(node: ast.AST) -> bool:
    """A spec, as the code names one: ``spec``, ``REGISTRY[name]``, ``REGISTRY.mechanism(name)``."""
    if isinstance(node, ast.Name):
        return node.id == "spec"
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Name) and node.value.id == "REGISTRY"
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "REGISTRY")


def family_dispatch(tree: ast.AST) -> Counter:
    """How many branches on a family, tables keyed by a family or a family's setting type, and capability probes by
    hand ``tree`` holds."""
    found: Counter = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(o, ast.Attribute) and o.attr == "family" for o in operands) and any(
                    _is_family(o) for o in operands):
                found["branch"] += 1
            if (len(operands) == 2 and isinstance(node.ops[0], (ast.Is, ast.IsNot)) and _is_none(operands[1])
                    and isinstance(operands[0], ast.Attribute) and operands[0].attr in CAPABILITIES
                    and _is_spec(operands[0].value)):
                found["probe"] += 1
        elif isinstance(node, ast.Dict) and any(
                key is not None and (_is_family(key) or isinstance(key, ast.Name) and key.id in SETTING_TYPES)
                for key in node.keys):
            found["table"] += 1
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr"
              and len(node.args) == 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in PROBED):
            found["probe"] += 1
    return found


def test_no_branch_table_or_capability_probe_outside_the_family_modules():
    places: Counter = Counter()
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE).as_posix()
        if relative.startswith(FAMILY_MODULES):
            continue
        for kind, count in family_dispatch(ast.parse(path.read_text())).items():
            places[(relative, kind)] += count
    assert dict(places) == {}


def test_the_count_finds_each_kind_and_not_an_events_family_or_a_settings_own_field():
    code = ('a = spec.family == CONSENSUS\nb = self.family != "online"\nc = {SHARING: 1}\nd = {SharingSetting: f}\n'
            'e = event.family == "threshold"\nf = {"x": 1}\ng = spec.white_box is None\n'
            'h = REGISTRY[n].conditions is not None\ni = hasattr(stated, "sigma")\nj = self.setting is None\n'
            'k = options.plot is None\nm = mechanism.release is None\nn = REGISTRY.mechanism(x).claim is None\n')
    assert family_dispatch(ast.parse(code)) == Counter({"branch": 2, "table": 2, "probe": 4})
