"""How many lines a port writes past its file's own limit: each file of DIR (default: the script
corpus, tests/patches/fixtures/corpus) ported with ``patches.generate --apply --unsafe-fixes``,
then every line the port added that is longer than the original file's longest line (at least
88, project_style's limit for a file with no lint configuration).

    python tests/benchmarks/long_lines.py [--src CHECKOUT] [DIR]

``--src`` ports with another checkout's codemod (e.g. a worktree of an earlier commit).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "patches" / "fixtures" / "corpus"
FLOOR = 88


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", default=str(CORPUS))
    ap.add_argument("--src", default=str(ROOT), help="checkout whose codemod ports the files")
    args = ap.parse_args(argv)
    src, files, lines = Path(args.src).resolve(), 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "ported"
        shutil.copytree(args.dir, work)
        cmd = [sys.executable, "-m", "patches.generate", str(work), "--apply", "--unsafe-fixes"]
        subprocess.run(cmd + ["--force"], cwd=src, env={"PYTHONPATH": str(src)}, check=False,
                       capture_output=True)  # fmt: skip
        names = sorted(p.relative_to(work).as_posix() for p in work.rglob("*.py"))
        for rel in names:
            old = (Path(args.dir) / rel).read_text().splitlines()
            limit = max([FLOOR, *map(len, old)])
            kept = set(old)
            over = [ln for ln in (work / rel).read_text().splitlines()
                    if len(ln) > limit and ln not in kept]  # fmt: skip
            if over:
                files, lines = files + 1, lines + len(over)
                print(f"{rel}: {len(over)} line(s) over {limit}")
        print(f"{files} of {len(names)} files with new lines over their limit; {lines} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
