"""patches.prove.compare: two prove outputs that prove the same thing, and one that does not."""

from __future__ import annotations

import json
from pathlib import Path

from patches.prove.compare import compare, main

SUMMARY = """| subsystem | hunks | seconds | status |
|---|---|---|---|
| x | 1 | {secs} | ok |
"""


def _out(root: Path, verdict: str, secs: float) -> Path:
    (root / "x" / "series").mkdir(parents=True)
    (root / "x" / "series" / "0001-a.patch").write_text("diff\n")
    (root / "SUMMARY.md").write_text(SUMMARY.format(secs=secs))
    hunk = {"key": "0001-a.patch#1", "verdicts": {"cpu": verdict}, "proven_on": [], "mutation": {}}
    report = {"hunks": [hunk], "summary": {"regression": 0, "hunks": 1}}
    (root / "x" / "validation.json").write_text(json.dumps(report))
    return root


def test_same_proof_at_another_speed_is_identical_and_a_changed_verdict_is_not(tmp_path):
    a = _out(tmp_path / "a", "unchecked", 10.0)
    b = _out(tmp_path / "b", "unchecked", 99.0)  # only the seconds differ
    c = _out(tmp_path / "c", "checked", 10.0)
    lines: list[str] = []
    assert compare(a, b, lines.append) and lines[-1] == "identical"
    assert not compare(a, c, lines.append)
    assert any(ln.startswith("DIFFERENT x 0001-a.patch#1") for ln in lines)
    assert main([str(a), str(b)]) == 0 and main([str(a), str(c)]) == 1
    assert main([str(a)]) == 2
