"""Sample the lines a patch series rewrites, for reading as a maintainer (issue 20).

    .venv/bin/python tests/benchmarks/intent_sample.py SERIES_DIR TREE SEED N

Every rewritten line of the series (import lines excluded; a line two patches touch counts once
per patch) is collected; ``random.seed(SEED)`` then picks N. Each pick is printed with 7 lines
of the original file before it and 5 after, and the rewritten line. Labels and the result:
docs/patches_intent_sample.md.
"""

import random
import re
import sys
from pathlib import Path

series = Path(sys.argv[1])
tree = Path(sys.argv[2])
seed = int(sys.argv[3])
n = int(sys.argv[4])
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
print(len(sites), "rewritten lines", file=sys.stderr)
random.seed(seed)
pick = sorted(random.sample(range(len(sites)), min(n, len(sites))))
for k in pick:
    num, path, line, text, new = sites[k]
    src = (tree / path).read_text().splitlines()
    # locate the original line near `line` (earlier patches may have shifted it)
    cands = [i for i in range(max(0, line - 6), min(len(src), line + 6)) if src[i] == text]
    i = cands[0] if cands else line - 1
    print(f"### [{k}] patch {num} {path}:{i + 1}")
    for j in range(max(0, i - 7), min(len(src), i + 6)):
        mark = ">>" if j == i else "  "
        print(f"{mark}{j + 1:5} {src[j][:150]}")
    print(f"   NEW: {new.strip()[:160]}")
