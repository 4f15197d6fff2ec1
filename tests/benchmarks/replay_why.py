"""Why generate leaves a site: ``--explain``'s answer for many sites of one tree, as JSON.

    cd PROJECT && python tests/benchmarks/replay_why.py ROOT < sites.json > why.json

Run by replay.py with ``--why``, in the checkout whose codemod is measured (its working
directory goes first on ``sys.path``). Reads ``[[path, line, first, last], ...]`` (paths relative to
ROOT, the unpatched tree; first..last the statement's span) and writes ``{"path:line":
explanation}`` with ``patches.generate.explain``'s text (which implies ``--unsafe-fixes``) for
``line``, or for the first other line of the span that has a finding. Each file is decided once
(``explain.decisions``) and answers all its sites, as generate plans it once.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, os.getcwd())

NONE = "no finding on this line"
_FINDING = re.compile(r"^  (HN\d+) \(([^,]+), (\w+)\) col \d+: (.*)$")


def short(text: str) -> str:
    """One line per finding: ``HN201 LEFT: unguarded (...)``; "no finding" when the audit has
    nothing on the line."""
    lines = text.splitlines()[1:]
    out = []
    for i, ln in enumerate(lines):
        m = _FINDING.match(ln)
        if not m:
            continue
        rule, verdict = m.group(1), m.group(4).strip()
        if verdict.endswith(":") and i + 1 < len(lines) and not _FINDING.match(lines[i + 1]):
            verdict += " " + lines[i + 1].strip()
        out.append(f"{rule} {verdict}")
    return "; ".join(out) or NONE


def main() -> int:
    from patches.generate import pipeline
    from patches.generate.explain import at_line, decisions
    from patches.generate.state import Settings

    root = Path(sys.argv[1]).resolve()
    sites = json.load(sys.stdin)
    run = pipeline.read(Settings(root, unsafe_fixes=True))  # explain's own defaults
    files: dict[str, object] = {}  # rel -> its decisions, or the error that stopped them
    out = {}
    for rel, line, first, last in sites:
        key = f"{rel}:{line}"
        if rel not in files:
            try:
                files[rel] = decisions(root / rel, root, run=run)
            except Exception as e:  # one file's failure must not hide the others'
                files[rel] = e
        d = files[rel]
        if isinstance(d, Exception):
            out[key] = f"explain failed: {type(d).__name__}: {d}"
            continue
        for n in [line, *(n for n in range(first, last + 1) if n != line)]:
            out[key] = short(at_line(d, n))
            if out[key] != NONE:
                break
    json.dump(out, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
