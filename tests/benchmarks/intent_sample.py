"""Sample the lines a patch series rewrites, for reading as a maintainer (issue 20).

    .venv/bin/python tests/benchmarks/intent_sample.py SERIES_DIR TREE SEED N
    .venv/bin/python tests/benchmarks/intent_sample.py SERIES_DIR TREE --still OLD_SAMPLE.md

Every rewritten line of the series (import lines excluded; a line two patches touch counts once
per patch) is collected; ``random.seed(SEED)`` then picks N. Each pick is printed with 7 lines
of the original file before it and 5 after, and the rewritten line. Labels and the result:
docs/patches_intent_sample.md.

``--still``: recall against an earlier labelled sample (a docs/patches_intent_sample.md table):
for every site labelled ``correct`` there, whether this series still rewrites that line of the
original file; prints ``kept``/``dropped`` per site and the count.
"""

import random
import re
import sys
from pathlib import Path


def rewritten(series: Path) -> list[tuple[str, str, int, str, str]]:
    """(patch number, path, line in the patch's pre-image, old text, new text) per line."""
    sites = []
    for p in sorted(series.glob("*.patch")):
        path = None
        old = None
        minus = []
        for ln in p.read_text().splitlines() + ["diff"]:
            if ln.startswith("--- a/"):
                path = ln[6:]
                continue
            if ln.startswith("+++"):
                continue
            m = re.match(r"@@ -(\d+)", ln)
            if m:
                old = int(m.group(1))
                minus = []
                continue
            if old is None:
                continue
            if ln.startswith("-"):
                minus.append((old, ln[1:]))
                old += 1
            elif ln.startswith("+"):
                if minus:
                    o, t = minus.pop(0)
                    if not t.strip().startswith(("import ", "from ")):
                        sites.append((p.name[:4], path, o, t, ln[1:]))
            else:
                minus = []
                if ln.startswith(" "):
                    old += 1
                else:
                    old = None
    return sites


def original_line(src: list[str], line: int, text: str) -> int:
    """0-based index of ``text`` nearest ``line`` in the original file (earlier patches may have
    shifted it by their import lines); a line an earlier patch already changed stays as is."""
    cands = [i for i in range(max(0, line - 6), min(len(src), line + 6)) if src[i] == text]
    # the nearest: two equal lines in the window (`if torch.cuda.is_available():` twice) are
    # two sites
    return min(cands, key=lambda i: (abs(i - (line - 1)), i)) if cands else line - 1


def main(argv: list[str]) -> int:
    series, tree = Path(argv[0]), Path(argv[1])
    sites = rewritten(series)
    print(len(sites), "rewritten lines", file=sys.stderr)
    if argv[2] == "--still":
        now = set()
        for _, path, line, text, _new in sites:
            src = (tree / path).read_text().splitlines()
            now.add((path, original_line(src, line, text) + 1))
        row = re.compile(r"^\|\s*\d+\s*\|\s*`patch \d+ ([^:`]+):(\d+)`.*\|\s*correct\s*\|")
        kept = total = 0
        for ln in Path(argv[3]).read_text().splitlines():
            m = row.match(ln)
            if not m:
                continue
            site = (m.group(1), int(m.group(2)))
            if site in now:
                kept += 1
                print("kept   ", f"{site[0]}:{site[1]}")
            else:
                print("dropped", f"{site[0]}:{site[1]}")
            total += 1
        print(f"{kept} of {total} sites labelled correct there are still rewritten")
        return 0
    seed, n = int(argv[2]), int(argv[3])
    random.seed(seed)
    pick = sorted(random.sample(range(len(sites)), min(n, len(sites))))
    for k in pick:
        num, path, line, text, new = sites[k]
        src = (tree / path).read_text().splitlines()
        i = original_line(src, line, text)
        print(f"### [{k}] patch {num} {path}:{i + 1}")
        for j in range(max(0, i - 7), min(len(src), i + 6)):
            mark = ">>" if j == i else "  "
            print(f"{mark}{j + 1:5} {src[j][:150]}")
        print(f"   NEW: {new.strip()[:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
