"""Kept labels to reread: a ``kept`` site the labeller called ``moved`` whose rewrite is, word for
word, a statement of the new release near the site's old place (``replay.py`` prints them).

A kept label whose ``how`` is ``moved`` says the old CUDA statement lives on elsewhere in the new
release (an equal statement was found there). When the same text stood twice (``num_proc =
torch.cuda.device_count()`` in two branches of 2.4.1's ``run.py``), one copy may have been
neutralised in place while the other kept: the label then calls a neutralised site kept. The
check looks for our rewritten statement in the new file within ``WINDOW`` lines of where the
site's neighbouring labels of the same file went (the old line shifted by their offset). A hit is
reported for a reader, beside the kept-site figure; the target still counts every kept rewrite.
"""

from __future__ import annotations

import re
from pathlib import Path

WINDOW = 3


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text).replace("'", '"')


def _offset(labels: list[dict], path: str, line: int) -> int | None:
    """new minus old line of the nearest label of ``path`` that stayed in place (``equal``, or
    neutralised), a proxy for where ``line`` went."""
    best = None
    for lab in labels:
        if lab["path"] != path or lab.get("how", "equal") != "equal" or not lab.get("new_lines"):
            continue
        d = abs(lab["old_line"] - line)
        if best is None or d < best[0]:
            best = (d, lab["new_lines"][0][0] - lab["old_line"])
    return None if best is None else best[1]


def check(labels: list[dict], new_root: Path, records) -> list[tuple[str, int]]:
    """(site, line of the new release holding our rewrite) for each rewritten ``moved`` kept
    site whose rewrite stands near its old place in the new release."""
    by_id = {lab["id"]: lab for lab in labels}
    out = []
    for r in records:
        lab = by_id[r.id]
        if r.status != "kept" or not r.rewritten or not lab.get("how", "").startswith("moved"):
            continue
        shift = _offset(labels, r.path, r.line)
        ours = _norm(r.ours.split("\n")[0]) if r.ours else ""
        if shift is None or not ours:
            continue
        new = (new_root / r.path).read_text(encoding="utf-8").splitlines()
        at = r.line + shift
        for n in range(max(at - WINDOW, 1), min(at + WINDOW, len(new)) + 1):
            if _norm(new[n - 1]) == ours:
                out.append((f"{r.path}:{r.line}", n))
                break
    return out


def show(mode: str, release: str, hits: list[tuple[str, int]]) -> None:
    print(
        f"[{mode}] kept-site rewrites labelled 'moved' whose rewrite stands in {release} "
        f"at the old place (labels to reread): {len(hits)}"
    )
    for site, line in hits:
        print(f"  {site}  ->  {release}:{line} holds our rewrite word for word")
