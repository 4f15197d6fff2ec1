"""CUDA code tokens before and after the codemod, on a tree of scripts (issue 14's measure).

    python tests/benchmarks/cuda_tokens.py [DIR] [--target torch|accelerator_api]

Copies DIR (default: tests/patches/fixtures/scripts) into a temporary git repository, runs
``python -m patches.generate --unsafe-fixes`` into a series, applies it with ``git am``, and
counts, in both trees, the Python code tokens (names, attributes, strings; no comments) that
contain cuda, cudnn or nccl. Prints one line per file and the total reduction.
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import subprocess
import sys
import tempfile
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from audits.vocabulary import CUDA_WORDS  # noqa: E402

WORD = re.compile("(?i)" + "|".join(CUDA_WORDS))


def cuda_tokens(source: str) -> int:
    n = 0
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.NAME, tokenize.STRING) and WORD.search(tok.string):
            if tok.type == tokenize.STRING and '"""' in tok.string:
                continue  # docstrings are prose
            n += 1
        elif tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1) and WORD.search(tok.string):
            n += 1
    return n


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def measure(src: Path, target: str = "torch") -> tuple[dict[str, tuple[int, int]], str]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(src, repo, ignore=shutil.ignore_patterns("__pycache__", ".git"))
        git(repo, "init", "-q")
        git(repo, "add", ".")
        git(repo, "commit", "-qm", "original")
        before = {p.relative_to(repo).as_posix(): p.read_text() for p in repo.rglob("*.py")}
        out = Path(tmp) / "series"
        r = subprocess.run(
            [sys.executable, "-m", "patches.generate", str(repo), "--out", str(out)]
            + ["--unsafe-fixes", "--target", target],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise SystemExit(f"generate failed ({r.returncode}): {r.stderr[-2000:]}")
        patches = sorted(out.glob("*.patch"))
        if patches:
            git(repo, "am", "--keep-non-patch", "-q", *map(str, patches))
        counts = {
            path: (cuda_tokens(text), cuda_tokens((repo / path).read_text()))
            for path, text in sorted(before.items())
        }
        return counts, r.stderr


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", nargs="?", default=str(ROOT / "tests/patches/fixtures/scripts"))
    ap.add_argument("--target", default="torch")
    a = ap.parse_args(argv)
    counts, _ = measure(Path(a.dir), a.target)
    tb = ta = 0
    for path, (b, af) in counts.items():
        print(f"{path:40s} {b:4d} -> {af:4d}")
        tb, ta = tb + b, ta + af
    pct = 100.0 * (tb - ta) / tb if tb else 0.0
    print(f"{'total':40s} {tb:4d} -> {ta:4d}  ({pct:.1f} % fewer CUDA code tokens)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
