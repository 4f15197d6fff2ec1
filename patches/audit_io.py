"""The codemod's only door into the audit: catalogue, tree scan, single-file rescan, JSON reports.

Kept in one place so ``patches`` depends on a handful of audit entry points, not its internals.
"""
from __future__ import annotations

import json
import os
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
    """The audit of ``root``'s Python files, with the audit's own scanner, file by file.

    Symlinks are not followed out of the tree and hidden or virtualenv directories are skipped;
    unreadable and unparseable files become FileErrors (reported, never rewritten).
    """
    report = Report(root=str(root))
    py_rules = [r for r in rules if r.language == "python"]
    for path in sorted(_python_files(root)):
        rel = path.relative_to(root).as_posix()
        try:
            data = path.read_bytes()
        except OSError as e:
            report.errors.append(FileError(rel, "read", str(e)))
            continue
        report.files_scanned += 1
        found, errs = scan_source(data, rel, py_rules)
        report.findings += found
        report.errors += errs
    report.findings.sort(key=Finding.sort_key)
    report.files_with_findings = len({f.path for f in report.findings})
    report.languages = {"python": report.files_scanned}
    return report


_SKIP_DIRS = {".git", ".hg", ".venv", "venv", "__pycache__", "node_modules", ".tox", ".eggs"}


def _python_files(root: Path):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith(".")
                             and not os.path.islink(os.path.join(dirpath, d)))
        for name in filenames:
            p = Path(dirpath, name)
            if name.endswith(".py") and not p.is_symlink():
                yield p
