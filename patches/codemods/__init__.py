"""libcst codemods keyed by rule id, driven by the audit's catalogue and findings.

``rewrite(source, path, gated)`` applies the fixes for one file, restricted to the lines the scan
reported, and verifies the result parses and ``compile()``s; a rewrite that does not is dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.metadata import MetadataWrapper

from .engine import Engine, FixSpec, Outcome
from .families import FAMILIES
from .focus import FOCUS_MIN_CHARS, focus  # noqa: F401 (re-exported for tests)

__all__ = ["FAMILIES", "FixSpec", "Rewrite", "rewrite"]


@dataclass
class Rewrite:
    path: str
    before: str
    after: str
    outcome: Outcome = field(default_factory=Outcome)
    error: str = ""          # non-empty: nothing was rewritten (parse failure or failed verify)

    @property
    def changed(self) -> bool:
        return not self.error and self.after != self.before


def rewrite(source: str, path: str, gated: list[tuple[FixSpec, frozenset[int]]]) -> Rewrite:
    """Apply ``gated`` (spec, finding lines) to ``source``; never returns code that fails to compile."""
    lines = {ln for _, ls in gated for ln in ls}
    reduced = focus(source, lines) if len(source) > FOCUS_MIN_CHARS else None
    try:
        module = cst.parse_module(reduced.text if reduced else source)
    except cst.ParserSyntaxError as e:
        return Rewrite(path, source, source, error=f"parse: {str(e).splitlines()[0]}")
    engine = Engine(CodemodContext(filename=path), gated, FAMILIES,
                    hidden_names=reduced.hidden_names if reduced else frozenset())
    try:
        new = engine.transform_module(module)
    except Exception as e:  # a codemod bug must cost this file, not the series
        return Rewrite(path, source, source, engine.outcome, error=f"codemod: {type(e).__name__}: {e}")
    after = new.code
    if reduced:
        after = reduced.splice(after)
        if after is None:  # the edit touched a hidden region: redo on the whole file
            return rewrite_whole(source, path, gated)
    if after != source:
        try:
            compile(after, path, "exec", dont_inherit=True)
            cst.parse_module(after)
        except (SyntaxError, ValueError, cst.ParserSyntaxError) as e:
            return Rewrite(path, source, source, engine.outcome,
                           error=f"verify: rewritten file does not compile: {e}")
    return Rewrite(path, source, after, engine.outcome)


def rewrite_whole(source: str, path: str, gated) -> Rewrite:
    global FOCUS_MIN_CHARS
    saved, FOCUS_MIN_CHARS = FOCUS_MIN_CHARS, 1 << 62
    try:
        return rewrite(source, path, gated)
    finally:
        FOCUS_MIN_CHARS = saved
