"""Shared test helpers: run the catalogue-driven codemod on one source text, as generate does."""

from __future__ import annotations

import difflib
import functools
from pathlib import Path

from audits import catalog, python_scan
from patches.generate.codemods import rewrite
from patches.generate.targets import fix_specs

FIXTURES = Path(__file__).with_name("fixtures")


@functools.lru_cache(maxsize=None)
def rules():
    return tuple(catalog.load().rules)


@functools.lru_cache(maxsize=None)
def specs(target: str = "torch", unsafe: bool = True):
    return fix_specs(rules(), target, unsafe)[0]


def fix(source: str, path: str = "x.py", target: str = "torch", unsafe: bool = True):
    """(Rewrite, findings before) for ``source`` with every fixable rule the scan reports."""
    found, errs = python_scan.scan_source(source.encode(), path, rules())
    gated: dict[str, set[int]] = {}
    for f in found:
        if f.rule in specs(target, unsafe):
            gated.setdefault(f.rule, set()).add(f.line)
    sp = specs(target, unsafe)
    return rewrite(
        source, path, [(sp[r], frozenset(ls)) for r, ls in sorted(gated.items())], findings=found
    ), found


def diff(before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=0)
    return "".join(ln for ln in lines if not ln.startswith(("--- ", "+++ ")))


def snapshot(path, target: str = "torch") -> str:
    """The fixture at ``path`` as generate rewrites it: the sites left (``# left RULE:LINE: why``)
    then the diff; the result must compile and a second run must change nothing."""
    src, name = path.read_text(), path.name
    result, _ = fix(src, name, target)
    assert not result.error, result.error
    compile(result.after, name, "exec")
    again, _ = fix(result.after, name, target)
    assert again.after == result.after, diff(result.after, again.after)  # idempotent
    failed = "".join(f"# left {r}:{ln}: {why}\n" for r, ln, why in result.outcome.failed)
    return failed + diff(src, result.after)
