"""Kept sites where upstream added another backend beside CUDA (``replay.py`` prints them).

Upstream's own way to the same end is often ``alongside``: the CUDA statement stays word for word
and a branch for XPU or HPU joins it (``if torch.xpu.is_available(): xpu_rng_state = ...`` after
``cuda_rng_state``). Such a site is labelled ``kept`` (its line did not change), though upstream
meant it for more than CUDA. For each rewritten kept site, the lines around it in the new release
(``WINDOW`` each side of the label's ``new_lines``) are compared with those around it in the old
one: a backend word (``BACKENDS``: ``audits/vocabulary.py``'s other backends and PrivateUse1)
there that was not there before marks it. A reader's aid beside the list of kept-site rewrites;
the target still counts every kept rewrite.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from audits import vocabulary  # noqa: E402

WINDOW = 4
_PU1 = next(d.cpp for d in vocabulary.DEVICE_TYPES if d.name == "privateuseone")
_NAMES = (*vocabulary.NAMED_BACKENDS, _PU1.lower())
BACKENDS = re.compile(rf"(?<![a-z])({'|'.join(_NAMES)})(?![a-z])", re.IGNORECASE)


def _words(lines: list[str], lo: int, hi: int) -> set[str]:
    text = "\n".join(lines[max(lo - WINDOW, 1) - 1 : hi + WINDOW])
    return {m.lower() for m in BACKENDS.findall(text)}


def check(labels: list[dict], old_root: Path, new_root: Path, records) -> list[tuple[str, str]]:
    """(site, the backend words upstream added near it) for each rewritten kept site."""
    by_id = {lab["id"]: lab for lab in labels}
    files: dict[tuple[Path, str], list[str]] = {}

    def lines(root: Path, path: str) -> list[str]:
        if (root, path) not in files:
            files[root, path] = (root / path).read_text(encoding="utf-8").splitlines()
        return files[root, path]

    out = []
    for r in records:
        lab = by_id[r.id]
        if r.status != "kept" or not r.rewritten or not lab.get("new_lines"):
            continue
        before = _words(lines(old_root, r.path), *r.span)
        lo, hi = lab["new_lines"][0][0], lab["new_lines"][-1][1]
        added = _words(lines(new_root, r.path), lo, hi) - before
        if added:
            out.append((f"{r.path}:{r.line}", ", ".join(sorted(added))))
    return out


def show(mode: str, release: str, hits: list[tuple[str, str]], of: int) -> None:
    print(
        f"[{mode}] kept-site rewrites where {release} adds another backend beside CUDA "
        f"(upstream's 'alongside'): {len(hits)} of {of}"
    )
    for site, words in hits:
        print(f"  {site}  ->  {words}")
