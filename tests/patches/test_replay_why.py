"""replay_why.py: one decision per file answers every site, as --explain does site by site."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from patches.generate.explain import explain

REPO = Path(__file__).resolve().parents[2]
WHY = REPO / "tests" / "benchmarks" / "replay_why.py"

MOD = """\
import torch


def step(model, x):
    torch.cuda.synchronize()
    if torch.cuda.is_available():
        x = x.cuda()
    with torch.backends.cudnn.flags(enabled=False):
        y = model(x)
    return y


def gate():
    return torch.version.cuda is not None
"""


def _why(root: Path, sites) -> dict:
    proc = subprocess.run(
        [sys.executable, str(WHY), str(root)],
        cwd=REPO,
        input=json.dumps(sites),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def test_each_site_gets_explains_answer(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(MOD)
    (pkg / "b.py").write_text(MOD.replace("step", "other"))
    (pkg / "bad.py").write_bytes(b"x = '\xff'\n")
    sites = [["pkg/a.py", n, n, n] for n in range(1, MOD.count("\n") + 1)] + [
        ["pkg/b.py", 5, 5, 7],
        ["pkg/b.py", 2, 2, 5],
        ["pkg/bad.py", 1, 1, 1],
    ]
    why = _why(tmp_path, sites)
    sys.path.insert(0, str(WHY.parent))
    try:
        from replay_why import NONE, short
    finally:
        sys.path.remove(str(WHY.parent))
    for n in range(1, MOD.count("\n") + 1):
        assert why[f"pkg/a.py:{n}"] == short(explain(pkg / "a.py", n, tmp_path))
    assert why["pkg/a.py:5"].startswith("HN")  # the synchronize has a finding
    assert why["pkg/a.py:1"] == NONE
    assert why["pkg/b.py:5"] == short(explain(pkg / "b.py", 5, tmp_path))
    # line 2 has no finding: the first line of the span that has one answers
    assert why["pkg/b.py:2"] == short(explain(pkg / "b.py", 5, tmp_path))
    assert why["pkg/bad.py:1"].startswith("explain failed: UnicodeDecodeError")
