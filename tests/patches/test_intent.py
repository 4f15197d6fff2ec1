"""The intent gate on labelled snippets (issue 20): one label per finding line, one snippet per
evidence kind, and look-alike negatives where the neutral rewrite is right (seeding, memory
accounting, timing, device picks). ``python tests/patches/test_intent.py`` prints the score.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from codemod_helpers import FIXTURES, fix, specs  # noqa: E402

from patches.generate.codemods.intent import KINDS  # noqa: E402

INTENT = FIXTURES / "intent"
WANT = re.compile(r"#\s*want:\s*(fix|left)(?:\s+([a-z-]+))?")


def _kind(label: str) -> str:
    """A label names a kind without its ``cuda-`` (so the label is no comment about CUDA)."""
    return label if label in KINDS else f"cuda-{label}"


def labelled() -> list[tuple[str, int, str, str]]:
    """(path, line, want "fix"/"left", evidence kind or "") for every label."""
    out = []
    for p in sorted(INTENT.rglob("*.py")):
        rel = p.relative_to(INTENT).as_posix()
        for n, line in enumerate(p.read_text().splitlines(), 1):
            m = WANT.search(line)
            if m:
                out.append((rel, n, m.group(1), m.group(2) or ""))
    return out


def decisions() -> dict[tuple[str, int], list[tuple[str, str, str]]]:
    """(path, line) -> [(rule, "fix"/"left", reason)] for every fixable finding there."""
    out: dict = {}
    for rel in sorted({x[0] for x in labelled()}):
        result, found = fix((INTENT / rel).read_text(), rel)
        assert not result.error, result.error
        applied = set(result.outcome.applied)
        why = {(r, ln): w for r, ln, w in result.outcome.failed}
        for f in found:
            if f.rule not in specs():
                continue
            done = (f.rule, f.line) in applied
            reason = "" if done else why.get((f.rule, f.line), "no rewrite matched")
            out.setdefault((rel, f.line), []).append((f.rule, "fix" if done else "left", reason))
    return out


def score():
    """(made, correct made, correct labelled, mismatches)."""
    got = decisions()
    made = correct_made = correct = 0
    bad = []
    for rel, line, want, kind in labelled():
        sites = got.get((rel, line), [])
        if not sites:
            bad.append((rel, line, want, "no fixable finding on the line"))
            continue
        for rule, decision, reason in sites:
            if reason == "no rewrite matched":  # not the gate's decision: no family applies
                continue
            correct += want == "fix"
            made += decision == "fix"
            correct_made += decision == "fix" and want == "fix"
            if decision != want or (kind and f"{_kind(kind)}:" not in reason):
                bad.append((rel, line, want + (f" {kind}" if kind else ""), f"{rule}: {reason}"))
    return made, correct_made, correct, bad


def test_every_label_holds():
    made, correct_made, correct, bad = score()
    assert not bad, "\n".join(map(str, bad))
    assert made and correct_made / made >= 0.95 and correct_made / correct >= 0.8


def test_every_evidence_kind_has_a_labelled_case():
    kinds = {_kind(k) for *_, k in labelled() if k}
    assert kinds == set(KINDS), sorted(set(KINDS) - kinds)


@pytest.mark.parametrize("want", ["fix", "left"])
def test_both_sides_are_labelled(want):
    assert sum(w == want for _, _, w, _ in labelled()) >= 10


if __name__ == "__main__":
    made, correct_made, correct, bad = score()
    print(
        f"labelled sites: {len(labelled())} lines; rewrites made: {made}, correct: {correct_made} "
        f"(precision {correct_made / max(made, 1):.1%}); correct rewrites labelled: {correct}, "
        f"made: {correct_made} (recall {correct_made / max(correct, 1):.1%})"
    )
    for b in bad:
        print("mismatch:", *b)


def test_changes_that_only_work_together_land_in_one_patch(tmp_path):
    """``torch.accelerator.current_stream().cuda_stream`` must never exist in a prefix of the
    series: the ``.cuda_stream`` rename (HN206) lands in the current_stream patch (HN204)."""
    from patches.common import gitutil
    from patches.generate.cli import main

    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "streams.py").write_text(
        "import torch\n\n\ndef handle():\n    s = torch.cuda.current_stream()\n"
        "    return s.cuda_stream\n\n\ndef direct():\n"
        "    return torch.cuda.current_stream().cuda_stream\n"
    )
    repo = gitutil.init_copy(tmp_path / "t", tmp_path / "repo")
    assert main([str(repo), "--out", str(tmp_path / "s"), "--unsafe-fixes"]) == 0
    names = (tmp_path / "s" / "series").read_text().split()
    assert len(names) == 1, names  # one patch: both rules' changes
    text = (tmp_path / "s" / names[0]).read_text()
    assert "+    s = torch.accelerator.current_stream()" in text
    assert "+    return s.native_handle" in text
    assert "+    return torch.accelerator.current_stream().native_handle" in text
    assert "Rule: HN204" in text and "Also rule: HN206" in text
