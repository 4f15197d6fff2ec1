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
from codemod_helpers import FIXTURES, fix, rules, specs  # noqa: E402

from patches.generate.intent import KINDS  # noqa: E402

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
            if decision == "left" and not any(f"{k}:" in reason for k in KINDS):
                continue  # not the gate's decision: no family applies, or a family declines
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


# kinds whose evidence spans files: their labelled cases are trees, in the tests named here
TREE_KINDS = {"cuda-reached": "test_reached.py", "cuda-patched": "test_patched.py"}


def test_every_evidence_kind_has_a_labelled_case():
    kinds = {_kind(k) for *_, k in labelled() if k} | set(TREE_KINDS)
    assert kinds == set(KINDS), sorted(set(KINDS) - kinds)
    assert all((Path(__file__).parent / t).is_file() for t in TREE_KINDS.values())


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


def _series(tmp_path, source: str, *flags: str) -> list[str]:
    """The patches ``generate`` writes for one file ``t/units.py``, as texts in series order."""
    from patches.common import gitutil
    from patches.generate.cli import main

    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "units.py").write_text(source)
    repo = gitutil.init_copy(tmp_path / "t", tmp_path / "repo")
    assert main([str(repo), "--out", str(tmp_path / "s"), *flags]) == 0
    names = (tmp_path / "s" / "series").read_text().split()
    return [(tmp_path / "s" / n).read_text() for n in names]


UNITS = """import torch


def nodes(group_size):
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 8
    return group_size // gpus


def enough(world_size):
    if torch.cuda.is_available() and torch.cuda.device_count() < world_size:
        return False
    return True


def here():
    return torch.device("cuda", torch.cuda.current_device())


def separate():
    ok = torch.cuda.is_available()
    n = torch.cuda.device_count()
    return ok, n
"""


def test_a_unit_lands_in_one_patch(tmp_path):
    """A guard and the query it guards, or two rewrites of one statement, never land in two
    patches (a prefix would hold ``torch.cuda.device_count() if torch.accelerator.
    is_available() else 8``); rewrites of separate statements keep their own rule's patch."""
    patches = _series(tmp_path, UNITS, "--unsafe-fixes")
    plus = [{ln[1:].strip() for ln in p.splitlines() if ln.startswith("+ ")} for p in patches]
    # a patch's added code with no whitespace: PyTorch's style may wrap a long line
    flat = [
        "".join("".join(ln[1:].split()) for ln in p.splitlines() if ln.startswith("+ "))
        for p in patches
    ]
    whole = {
        "gpus = torch.accelerator.device_count() if torch.accelerator.is_available() else 8",
        "torch.accelerator.is_available() and torch.accelerator.device_count() < world_size",
        "return torch.device(torch.accelerator.current_accelerator().type, "
        "torch.accelerator.current_device_index()",
    }
    # whole in a patch (the last patch may rewrap it in PyTorch's style); no added line keeps
    # torch.cuda (below), so no patch holds half of it
    for line in whole:
        assert any("".join(line.split()) in f for f in flat), (line, plus)
    for p in patches:
        assert "torch.cuda" not in "\n".join(ln for ln in p.splitlines() if ln.startswith("+ ")), p
    # the look-alike: two statements, two rules, two patches
    ok = [i for i, p in enumerate(plus) if "ok = torch.accelerator.is_available()" in p]
    n = [i for i, p in enumerate(plus) if "n = torch.accelerator.device_count()" in p]
    assert ok and n and ok != n, plus
    assert any("Also rule: HN102" in p for p in patches)


BENCHMARK = """import argparse
import time

import torch


def parse_args():
    parser = argparse.ArgumentParser(description="benchmark a model")
    parser.add_argument("--repeat", type=int, default=3)
    return parser.parse_args()


def main(model, data):
    if torch.cuda.is_available():
        model = model.cuda()
    for batch in data:
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        start = time.perf_counter()
        model(batch)
        print(time.perf_counter() - start)


if __name__ == "__main__":
    main(None, [])
"""


def test_a_unit_takes_the_lines_its_sites_need(tmp_path):
    """A tool script's guard and the ``.cuda()`` it guards land in the guard's patch as one
    unit; the ``.to(device)`` written there needs the script's ``device`` line, which lands in
    that patch too, not in the later one of the ``.cuda()`` rule (mmseg's benchmark tool, round
    31: a prefix read ``device`` before any patch bound it)."""
    patches = _series(tmp_path, BENCHMARK, "--unsafe-fixes")
    uses = [i for i, p in enumerate(patches) if "+        model = model.to(device)" in p]
    binds = [i for i, p in enumerate(patches) if "\n+device = " in p]
    assert uses and binds and binds[0] <= uses[0], patches


def test_a_neutral_index_never_sits_next_to_a_cuda_literal(tmp_path):
    """Safe fixes only (no HN503 for the ``"cuda"`` literal): the index stays CUDA's too."""
    patches = _series(tmp_path, UNITS)
    assert not any("current_device_index" in p for p in patches), patches


def test_explain_takes_a_path_relative_to_the_tree(tmp_path, capsys):
    from patches.generate.cli import main

    (tmp_path / "torch" / "numa").mkdir(parents=True)
    src = INTENT / "torch" / "numa" / "gpu_binding.py"
    (tmp_path / "torch" / "numa" / "gpu_binding.py").write_text(src.read_text())
    assert main(["--explain", "torch/numa/gpu_binding.py:5", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "LEFT, the code is about CUDA itself" in out and "cuda-flow" in out, out
    assert "returned by _gpu_count() to the call at line 14" in out, out
    assert main(["--explain", "torch/numa/nothing.py:5", str(tmp_path)]) == 2


EXACT = """import torch


def placed(x):
    if x.is_cuda:
        torch.cuda.synchronize()
    return x
"""


def _gate(source: str, exact: frozenset[str]):
    import ast

    from audits import python_scan
    from patches.generate.codemods.context import FileContext
    from patches.generate.intent import Gate, Options

    found, _ = python_scan.scan_source(source.encode(), "t.py", rules())
    ctx = FileContext(source, ast.parse(source), "t.py")
    candidates = {(f.rule, f.line) for f in found if f.rule in ("HN504", "HN105")}
    gate = Gate(ctx, found, candidates, options=Options(exact=exact))
    gate.settle()
    return gate, candidates


def test_an_exact_refactor_gets_no_evidence_and_stays_cuda_for_others():
    """``Options.exact``: a rule whose rewrite keeps the behaviour on every device (a ``cuda``
    flag -> ``device_type == "cuda"``) is never left by the gate; its text still names CUDA, so
    the sync it guards stays CUDA's (only CUDA reaches it), where a neutral check lets it go."""
    plain, sites = _gate(EXACT, frozenset())
    assert sites == {("HN504", 5), ("HN105", 6)}, sites
    assert all(plain.fixes(*s) for s in sites), plain.left
    exact, _ = _gate(EXACT, frozenset({"HN504"}))
    assert exact.fixes("HN504", 5)
    assert not exact.fixes("HN105", 6), exact.left
