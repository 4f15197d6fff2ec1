"""The guarantee of issue 6 on real code, bounded: on a COPY of the installed torch's torch/utils
and torch/cuda, the whole series (review rules included) applies with ``git am`` in order, every
changed file compiles, and the rescan has exactly the fixed findings fewer. The whole tree is
tests/benchmarks/bench_patches.py (numbers in docs/performance.md)."""

import shutil
from collections import Counter
from pathlib import Path

import torch

from patches.common import gitutil
from patches.generate import audit_io
from patches.generate.cli import main

SUBSET = ("utils", "cuda")


def test_series_on_a_copy_of_torch_utils_and_cuda(tmp_path, capsys):
    src = Path(torch.__file__).parent
    root = tmp_path / "tree"
    for sub in SUBSET:
        shutil.copytree(
            src / sub,
            root / "torch" / sub,
            ignore=lambda d, names: [
                n
                for n in names
                if n == "__pycache__" or (not n.endswith(".py") and not (Path(d) / n).is_dir())
            ],
        )
    gitutil.init_copy(root, tmp_path / "repo")
    repo = tmp_path / "repo"
    rules = list(audit_io.load_rules().values())
    before = audit_io.scan_tree(repo, rules, use_cache=False)
    assert main([str(repo), "--out", str(tmp_path / "s"), "--unsafe-fixes"]) == 0
    err = capsys.readouterr().err
    assert " 0 file errors" in err, err
    names = (tmp_path / "s" / "series").read_text().split()
    assert len(names) >= 1
    gitutil.am(repo, [tmp_path / "s" / n for n in names])
    changed = gitutil.git(
        "diff", "--name-only", f"HEAD~{len(names)}", "HEAD", cwd=repo
    ).stdout.split()
    assert changed
    # torch/cuda implements CUDA itself: the intent gate leaves it whole (issue 20).
    assert not [c for c in changed if c.startswith("torch/cuda/")], changed
    for rel in changed:
        compile((repo / rel).read_text(encoding="utf-8"), rel, "exec", dont_inherit=True)
    after = audit_io.scan_tree(repo, rules, use_cache=False)
    b, a = before.counts("rule"), after.counts("rule")
    # generate's per-rule summary: "  HN105    before     4  fixed     4  left     0"
    fixed = Counter(
        {
            ln.split()[0]: int(ln.split()[4])
            for ln in err.splitlines()
            if ln.startswith("  HN") and " fixed " in ln
        }
    )
    assert sum(fixed.values()) >= 2, err
    for rule, n in fixed.items():
        assert a[rule] <= b[rule] - n, (rule, b[rule], n, a[rule])
    assert sum(a.values()) < sum(b.values())
    # Idempotent on real code too: the patched tree yields an empty series.
    assert main([str(repo), "--out", str(tmp_path / "again"), "--unsafe-fixes"]) == 0
    assert (tmp_path / "again" / "series").read_text() == ""
