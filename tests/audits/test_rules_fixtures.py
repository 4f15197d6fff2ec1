"""Per-family fixtures (positives and look-alike negatives) against expected-finding snapshots.

Regenerate after an intended change: EXPECTTEST_ACCEPT=1 pytest tests/audits/test_rules_fixtures.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

from audits.catalog import load
from audits.python_scan import scan_source

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(p.name for p in FIXTURES.glob("*.py"))
CAT = load()
PY_RULES = CAT.for_languages(["python"])


def _render(name: str, **kw) -> str:
    data = (FIXTURES / name).read_bytes()
    findings, errors = scan_source(data, name, PY_RULES, **kw)
    assert errors == []
    lines = [
        f"{f.line}:{f.col}-{f.end_line}:{f.end_col} {f.rule} {f.kind:9} {f.safety:6} | {f.source}"
        for f in sorted(findings, key=lambda f: f.sort_key())
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", CASES)
def test_fixture_snapshot(name, snapshot):
    snapshot(FIXTURES / "expected" / (name[:-3] + ".txt"), _render(name))


@pytest.mark.parametrize("name", CASES)
def test_segmented_parse_equals_whole_file_parse(name, monkeypatch):
    import audits.python_scan as ps

    monkeypatch.setattr(ps, "SEGMENT_MIN_BYTES", 0)
    assert _render(name) == _render(name, segments=False)


def _lines_after(name: str, marker: str) -> int:
    src = (FIXTURES / name).read_text().splitlines()
    return next(i for i, line in enumerate(src, 1) if marker in line)


@pytest.mark.parametrize("name", [c for c in CASES if c.startswith("hn")])
def test_look_alikes_produce_nothing(name):
    """Everything after `def look_alikes` is a negative by construction."""
    start = _lines_after(name, "def look_alikes")
    data = (FIXTURES / name).read_bytes()
    findings, _ = scan_source(data, name, PY_RULES)
    assert [f for f in findings if f.line >= start] == []


def test_every_family_has_positives():
    seen = set()
    for name in CASES:
        findings, _ = scan_source((FIXTURES / name).read_bytes(), name, PY_RULES)
        seen |= {f.rule for f in findings}
    missing = [r.id for r in PY_RULES if r.id not in seen]
    assert missing == [], f"rules without a positive fixture: {missing}"


def test_branch_extents():
    findings, _ = scan_source((FIXTURES / "hn7_gates_branches.py").read_bytes(), "x.py", PY_RULES)
    src = (FIXTURES / "hn7_gates_branches.py").read_text().splitlines()
    branches = {(f.rule, f.line): f for f in findings if f.kind == "branch"}
    if_line = next(i for i, s in enumerate(src, 1) if "if torch.cuda.is_available():" in s)
    f = branches[("HN710", if_line)]
    assert src[f.end_line - 1].strip() == "x = x * 2"  # whole if/elif/else statement
    elif_f = branches[("HN710", if_line + 2)]
    assert src[elif_f.line - 1].strip().startswith("elif x.is_cuda")
    deco = [f for f in findings if f.rule == "HN713"]
    assert len(deco) == 4  # onlyCUDA, skip+dtypes, skipIf, skipUnless
    for d in deco:
        assert src[d.line - 1].strip().startswith("@")
        assert src[d.end_line - 1].strip() == "pass"


def test_suppression_codes_and_bare_form():
    findings, _ = scan_source((FIXTURES / "suppressed.py").read_bytes(), "s.py", PY_RULES)
    assert sorted((f.line, f.rule) for f in findings) == [(6, "HN105"), (7, "HN105")]
