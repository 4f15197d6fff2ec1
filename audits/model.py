"""The shared vocabulary: Rule, Finding, FileError, Report.

Every stage (scanner, codemod, patch series, docs) speaks these types; output formats are views
of a Report, and JSON (``Report.to_dict``/``Report.from_dict``) is the canonical serialisation.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any, Iterable

SAFETY_LEVELS = ("safe", "review", "manual")
REPORT_SCHEMA = 1


@dataclass(frozen=True)
class Rule:
    """One catalogue entry: what to find and how (or whether) to make it hardware-neutral."""

    id: str  # stable code, e.g. "HN101"
    name: str  # kebab-case, e.g. "cuda-synchronize"
    title: str
    category: str  # family, e.g. "runtime", "stream", "memory", "test-gate"
    language: str  # "python" | "cpp" | "cmake"
    kind: str  # "call" | "attribute" | "literal" | "branch" | "gate" | ...
    match: dict[str, Any]  # detector-specific description of what matches
    replacement: str | None  # the neutral API (None where no equivalent exists)
    safety: str  # "safe" | "review" | "manual"
    rationale: str
    example_before: str = ""
    example_after: str = ""
    verify: tuple[str, ...] = ()  # dotted names that must exist in the installed torch
    # How a codemod rewrites a match (style, argument handling, guard, notes); schema in catalog.yaml.
    fix: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def url(self) -> str:
        return f"docs/rules.md#{self.id.lower()}-{self.name}"

    def replacement_for(self, matched: str | None = None) -> str | None:
        """The replacement for the name ``matched`` (``{name}`` expanded)."""
        return expand_name(self.replacement, matched)


def expand_name(template: str | None, matched: str | None) -> str | None:
    """A catalogue replacement with ``{name}`` expanded to the last component of the matched
    name (``torch.accelerator.{name}`` for ``torch.cuda.memory_allocated``); the one place."""
    if template is None or "{name}" not in template:
        return template
    return template.replace("{name}", (matched or "").rsplit(".", 1)[-1])


@dataclass(frozen=True)
class Finding:
    """One CUDA-specific construct at one place in the scanned tree."""

    rule: str
    name: str
    category: str
    kind: str
    path: str  # POSIX path relative to the scanned root
    line: int  # 1-based
    col: int  # 1-based
    end_line: int
    end_col: int
    source: str  # the (first) source line, stripped
    subsystem: str  # first path components, e.g. "torch/_dynamo"
    message: str
    replacement: str | None
    safety: str
    language: str = "python"

    def fingerprint(self) -> str:
        """Stable across line moves: rule, path and the whitespace-normalised source line."""
        norm = " ".join(self.source.split())
        return hashlib.sha1(f"{self.rule}\0{self.path}\0{norm}".encode()).hexdigest()[:16]

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.rule)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Finding":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass(frozen=True)
class FileError:
    """A file the scan could not read or parse; the run goes on without it."""

    path: str
    reason: str  # short class: "syntax", "encoding", "binary", "too-large", ...
    detail: str = ""


@dataclass
class Report:
    """The result of one scan: findings, per-file errors and enough context to reproduce it."""

    root: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    files_scanned: int = 0
    files_with_findings: int = 0
    tool_version: str = ""
    catalog_version: str = ""
    duration_s: float = 0.0
    languages: dict[str, int] = field(default_factory=dict)  # files scanned per language

    def counts(self, key: str) -> Counter:
        """Finding counts grouped by a Finding attribute ("rule", "category", "subsystem", ...)."""
        return Counter(getattr(f, key) for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": REPORT_SCHEMA,
            "tool_version": self.tool_version,
            "catalog_version": self.catalog_version,
            "root": self.root,
            "files_scanned": self.files_scanned,
            "files_with_findings": self.files_with_findings,
            "duration_s": round(self.duration_s, 3),
            "languages": dict(self.languages),
            "summary": {
                "findings": len(self.findings),
                "errors": len(self.errors),
                "by_rule": dict(sorted(self.counts("rule").items())),
                "by_category": dict(sorted(self.counts("category").items())),
                "by_safety": dict(sorted(self.counts("safety").items())),
            },
            # vars() equals asdict() for these flat dataclasses and is ~20x faster on big reports
            "findings": [dict(vars(f)) for f in self.findings],
            "errors": [dict(vars(e)) for e in self.errors],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Report":
        return cls(
            root=d.get("root", ""),
            findings=[Finding.from_dict(f) for f in d.get("findings", [])],
            errors=[FileError(**e) for e in d.get("errors", [])],
            files_scanned=d.get("files_scanned", 0),
            files_with_findings=d.get("files_with_findings", 0),
            tool_version=d.get("tool_version", ""),
            catalog_version=d.get("catalog_version", ""),
            duration_s=d.get("duration_s", 0.0),
            languages=d.get("languages", {}),
        )

    def only(self, findings: Iterable[Finding]) -> "Report":
        """A copy of this report holding just ``findings`` (same errors and context)."""
        fs = sorted(findings, key=Finding.sort_key)
        return Report(
            self.root,
            fs,
            list(self.errors),
            self.files_scanned,
            len({f.path for f in fs}),
            self.tool_version,
            self.catalog_version,
            self.duration_s,
            dict(self.languages),
        )
