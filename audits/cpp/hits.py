"""The detectors' raw result: a rule hit at tree-sitter points, before it becomes a Finding."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hit:
    rule: str
    kind: str
    start: tuple[int, int]  # (row, byte column), 0-based, as tree-sitter reports
    end: tuple[int, int]  # exclusive end, same convention
    message: str
    replacement: str | None = None  # None: the rule's own replacement
    safety: str | None = None  # None: the rule's own safety
