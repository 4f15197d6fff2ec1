"""The codemod's only door into the audit: catalogue, tree scan, single-file rescan, JSON reports.

Kept in one place so ``patches`` depends on a handful of audit entry points, not its internals.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from audits import catalog
from audits.model import FileError, Finding, Report, Rule


def load_rules() -> dict[str, Rule]:
    return {r.id: r for r in catalog.load().rules}


def select(rules: dict[str, Rule], sel: Sequence[str], ignore: Sequence[str]) -> dict[str, Rule]:
    cat = catalog.Catalog(list(rules.values()), "")
    return {r.id: r for r in cat.select(sel, ignore)}


def read_report(path: Path) -> Report:
    return Report.from_dict(json.loads(path.read_text(encoding="utf-8")))


def scan_source(data: bytes, relpath: str, rules: Sequence[Rule]) -> tuple[list[Finding], list[FileError]]:
    """Rescan one file's (in-memory) text with the audit's own Python scanner."""
    from audits import python_scan
    return python_scan.scan_source(data, relpath, [r for r in rules if r.language == "python"])


def scan_tree(root: Path, rules: Sequence[Rule]) -> Report:
    """The audit of ``root`` restricted to Python (the only language the codemods rewrite)."""
    from audits import scan as audit_scan
    return audit_scan.scan(root, rules=[r for r in rules if r.language == "python"],
                           languages=("python",))
