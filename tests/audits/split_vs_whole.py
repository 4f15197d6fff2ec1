"""Split parse vs whole-file parse of the Python scanner on the installed torch tree.

    .venv/bin/python tests/audits/split_vs_whole.py [--sample N] [--min-bytes B] [--time]

Scans every ``.py``/``.pyi`` file that has a CUDA token (or a deterministic sample of N of the
files at least ``SEGMENT_MIN_BYTES`` long, plus ``torch/cuda/graphs.py``) both ways and prints
the files where the findings differ and the per-rule finding counts of each strategy (with
``--min-bytes``, the split column counts files under B bytes parsed whole, as the scanner does).
``--time`` instead prints, per size class of the files under 16 KiB, the scanner's CPU time
with either strategy (best of 5), which is how ``SEGMENT_MIN_BYTES`` was chosen.
``test_python_split.py`` imports ``large_token_files`` and ``scan_both`` from here.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import audits.python_scan as ps  # noqa: E402
from audits.catalog import load  # noqa: E402
from audits.scan import torch_source_root  # noqa: E402

ANCHOR = "cuda/graphs.py"  # the file where the split parse once missed aliases


def token_files(root: Path, min_bytes: int = 0) -> list[Path]:
    """Sorted Python files under ``root`` of at least ``min_bytes`` holding a CUDA token."""
    out = []
    for p in sorted(root.rglob("*.py*")):
        if p.suffix in (".py", ".pyi") and p.is_file() and p.stat().st_size >= min_bytes:
            low = p.read_bytes().lower()
            if any(t in low for t in ps.TOKENS):
                out.append(p)
    return out


def large_token_files(root: Path, n: int) -> list[Path]:
    """A deterministic sample of ``n`` token files >= the split threshold (by path hash), plus
    the anchor file."""
    big = token_files(root, ps.SEGMENT_MIN_BYTES)
    rel = {p: p.relative_to(root).as_posix() for p in big}
    picked = sorted(big, key=lambda p: hashlib.sha1(rel[p].encode()).hexdigest())[:n]
    anchor = root / ANCHOR
    if anchor not in picked:
        picked.append(anchor)
    return sorted(picked)


def scan_both(path: Path, root: Path, rules) -> tuple[list, list]:
    """(split findings, whole findings) of one file, both sorted; the split one forced."""
    data = path.read_bytes()
    rel = path.relative_to(root).as_posix()
    prefix = package_prefix(root)
    kw = {"package_prefix": prefix}
    old = ps.SEGMENT_MIN_BYTES
    ps.SEGMENT_MIN_BYTES = 0
    try:
        split, e1 = ps.scan_source(data, rel, rules, **kw)
    finally:
        ps.SEGMENT_MIN_BYTES = old
    whole, e2 = ps.scan_source(data, rel, rules, segments=False, **kw)
    assert e1 == e2, (rel, e1, e2)
    key = lambda f: f.sort_key()  # noqa: E731
    return sorted(split, key=key), sorted(whole, key=key)


def package_prefix(root: Path) -> str:
    return root.name + "/" if (root / "__init__.py").is_file() else ""


def time_by_size(root: Path, rules, bounds=(0, 2048, 4096, 8192, 16384)) -> None:
    prefix = package_prefix(root)
    files = [(p.relative_to(root).as_posix(), p.read_bytes()) for p in token_files(root)]
    ps.SEGMENT_MIN_BYTES = 0
    for lo, hi in zip(bounds, bounds[1:]):
        group = [(rel, d) for rel, d in files if lo <= len(d) < hi]
        best = {True: float("inf"), False: float("inf")}
        for _ in range(5):
            for seg in best:
                c = time.process_time()
                for rel, d in group:
                    ps.scan_source(d, rel, rules, package_prefix=prefix, segments=seg)
                best[seg] = min(best[seg], time.process_time() - c)
        print(
            f"{lo:6d}-{hi:6d} B: {len(group):4d} files  split {best[True] * 1e3:7.1f} ms  "
            f"whole {best[False] * 1e3:7.1f} ms  (x{best[True] / best[False]:.2f})"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--sample", type=int, default=0, help="only N large files (0: every token file)"
    )
    ap.add_argument(
        "--min-bytes",
        type=int,
        default=None,
        help="split files from this size up, as the scanner would (default: all)",
    )
    ap.add_argument("--time", action="store_true", help="CPU time per size class, split vs whole")
    args = ap.parse_args()
    root = Path(torch_source_root())
    rules = load().for_languages(["python"])
    if args.time:
        return time_by_size(root, rules)
    files = large_token_files(root, args.sample) if args.sample else token_files(root)
    counts = {"split": Counter(), "whole": Counter()}
    differ = 0
    for p in files:
        split, whole = scan_both(p, root, rules)
        if args.min_bytes is not None and p.stat().st_size < args.min_bytes:
            split = whole
        counts["split"].update(f.rule for f in split)
        counts["whole"].update(f.rule for f in whole)
        if split != whole:
            differ += 1
            a, b = Counter(f.rule for f in split), Counter(f.rule for f in whole)
            print(
                f"DIFF {p.relative_to(root)}: split {len(split)} whole {len(whole)} "
                f"split-whole {dict((a - b))} whole-split {dict((b - a))}"
            )
    print(
        f"{len(files)} files, {differ} differ; findings: split {sum(counts['split'].values())}, "
        f"whole {sum(counts['whole'].values())}"
    )
    for rid in sorted(set(counts["split"]) | set(counts["whole"])):
        print(f"  {rid}: split {counts['split'][rid]:5d}  whole {counts['whole'][rid]:5d}")


if __name__ == "__main__":
    main()
