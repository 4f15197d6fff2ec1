"""The scan's worker side: one read of each file, the byte prefilter, the language's scanner.

Run in the pool's processes (or in the driver for small scans). Each file is read once; a Python
file's words (``audits.python.words``) come back with its results, so that the tree-level wrapper
pass never reads the tree again.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from .cache import digest
from .catalog import load
from .languages import BY_NAME, load_scanner
from .model import FileError, Finding
from .python.words import words
from .walk import Entry

SAME = "same"  # check_one: the content equals the cached digest, the cached results stand
# (findings, errors, content digest or None, the file's words for the wrapper pass or None)
Outcome = tuple[list[Finding], list[FileError], "str | None", "bytes | None"]

_W: dict = {}


def init_worker(catalog_path: str | None, prefix: str, languages: Sequence[str]) -> None:
    # Scanners get every rule of their language: precedence between rules (a specific rule over
    # a catch-all) must not change with the selection, which is applied to the results instead.
    cat = load(catalog_path)
    _W.clear()
    _W["prefix"] = prefix
    _W["rules"] = {
        name: [r for r in cat.rules if r.language in BY_NAME[name].rule_languages]
        for name in languages
    }
    _W["scanners"] = {name: load_scanner(BY_NAME[name]) for name in languages}


def check_one(e: Entry, old_digest: str | None) -> Outcome | str:
    """``SAME`` when the file still hashes to ``old_digest``, else ``scan_one(e)``."""
    if old_digest is not None:
        try:
            with open(e.abspath, "rb") as f:
                if digest(f.read()) == old_digest:
                    return SAME
        except OSError:
            pass  # scan_one reports it
    return scan_one(e)


def scan_one(e: Entry) -> Outcome:
    try:
        with open(e.abspath, "rb") as f:
            data = f.read()
    except OSError as ex:
        return [], [FileError(e.relpath, "unreadable", ex.strerror or str(ex))], None, None
    dig = digest(data)
    found = words(data) if e.language == "python" else None
    lang = BY_NAME[e.language]
    if not lang.may_match(data, e.relpath):
        return [], [], dig, found
    nul = data.find(b"\0")
    if nul >= 0:
        return [], [FileError(e.relpath, "binary", f"NUL byte at offset {nul}")], dig, found
    scanner = _W["scanners"][e.language]
    rules = _W["rules"][e.language]
    try:
        if e.language == "python":
            fs, errs = scanner.scan_source(data, e.relpath, rules, package_prefix=_W["prefix"])
        else:
            fs, errs = scanner.scan_source(data, e.relpath, rules)
    except Exception as ex:  # a scanner bug must not lose the rest of the run
        return [], [FileError(e.relpath, "internal", f"{type(ex).__name__}: {ex}")], None, found
    return fs, errs, dig, found


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the duration. ``ast.parse`` allocates millions of
    container objects, and every few hundred allocations the collector walks the young ones:
    about a tenth of a scan's CPU time, for almost nothing (an AST holds no reference cycle;
    a whole torch scan leaves a few hundred cyclic objects). Reference counting still frees
    everything else at once; the collector runs again afterwards, as it was."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def scan_batch(batch: list[tuple[Entry, str | None]]) -> list[tuple[str, Any]]:
    with gc_paused():
        return [(e.relpath, check_one(e, old)) for e, old in batch]


def batches(
    todo: list[tuple[Entry, str | None]], jobs: int
) -> list[list[tuple[Entry, str | None]]]:
    """Largest files first, dealt into many small batches so the pool stays balanced."""
    order = sorted(todo, key=lambda t: -t[0].size)
    n = max(jobs * 8, 1)
    out: list[list[tuple[Entry, str | None]]] = [[] for _ in range(min(n, len(order)))]
    for i, e in enumerate(order):
        out[i % len(out)].append(e)
    return out
