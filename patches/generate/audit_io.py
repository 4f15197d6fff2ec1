"""The codemod's only door into the audit: catalogue, tree scan, single-file rescan, JSON reports.

Kept in one place so ``patches`` depends on a handful of audit entry points, not its internals.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from audits import baseline, catalog
from audits.model import FileError, Finding, Report, Rule


def load_rules() -> dict[str, Rule]:
    return {r.id: r for r in catalog.load().rules}


def select(rules: dict[str, Rule], sel: Sequence[str], ignore: Sequence[str]) -> dict[str, Rule]:
    cat = catalog.Catalog(list(rules.values()), "")
    return {r.id: r for r in cat.select(sel, ignore)}


def read_report(path: Path) -> Report:
    """An ``audits.scan --format json`` report; ValueError (one line) when it is not one."""
    return baseline.load_report(str(path))


def package_prefix(root: Path) -> str:
    """The scan's package prefix for ``root`` (``torch/`` when the root is itself a package): the
    rescan and the codemod resolve relative imports against it, as the tree scan does."""
    from audits.walk import package_prefix as prefix

    return prefix(str(root))


def scan_source(
    data: bytes, relpath: str, rules: Sequence[Rule], package_prefix: str = ""
) -> tuple[list[Finding], list[FileError]]:
    """Rescan one file's (in-memory) text with the audit's own Python scanner."""
    from audits import python_scan

    return python_scan.scan_source(
        data,
        relpath,
        [r for r in rules if r.language == "python"],
        package_prefix=package_prefix,
    )


def wrapper_of(f: Finding) -> str | None:
    """The project wrapper (``pkg.mod.fn``) a finding of the audit's tree-level pass is a use
    of; None for a finding of the per-file scan."""
    from audits.python.wrapper_uses import wrapper_of as of

    return of(f)


def _python():
    from audits.languages import LANGUAGES, load_scanner

    return [lang for lang in LANGUAGES if lang.name == "python" and load_scanner(lang)]


def python_files(root: Path) -> list[str]:
    """The tree's Python files the scan reads (its walk and ``exclude`` config), sorted."""
    from audits.config import load_config
    from audits.walk import DEFAULT_MAX_BYTES, walk

    cfg = load_config(str(root))
    entries, _ = walk(
        str(root),
        excludes=cfg.exclude,
        max_bytes=cfg.max_file_size or DEFAULT_MAX_BYTES,
        languages=_python(),
    )
    return sorted(e.relpath for e in entries if e.language == "python")


def python_entries(root: Path):
    """Every Python file under ``root`` (``.py``, ``.pyi``) as the scanner walks the tree, with
    no ``exclude`` config (``audits.walk.Entry``: relative and absolute path, size, mtime, inode):
    nothing outside the root, never ``.git``, virtual environments or caches, links and loops
    cut. For questions about the whole tree: who imports a name, which torch its code tests."""
    from audits.walk import walk

    entries, _ = walk(str(root), languages=_python())
    return entries


def scan_tree(
    root: Path, rules: Sequence[Rule], *, use_cache: bool = True, jobs: int = 0
) -> Report:
    """The audit of ``root``'s Python files by the audit's own driver (``audits.engine``): the
    same walk and exclusions (``[tool.hwneutral]`` config: ``exclude``, ``per-file-ignores``,
    ``max-file-size``), the same result cache and process pool as ``python -m audits.scan``.
    Unreadable, oversized and unparseable files are FileErrors (reported, never rewritten).

    A config error (bad TOML) is raised as ``ValueError`` with the audit's message.
    """
    from audits.config import load_config
    from audits.engine import Options, run_scan
    from audits.walk import DEFAULT_MAX_BYTES

    if not rules:
        return Report(root=str(root))
    cfg = load_config(str(root))
    opts = Options(
        root=str(root),
        select=[r.id for r in rules],
        excludes=cfg.exclude,
        per_file_ignores=cfg.per_file_ignores,
        languages=["python"],
        jobs=jobs,
        use_cache=use_cache,
        max_bytes=cfg.max_file_size or DEFAULT_MAX_BYTES,
    )
    report = run_scan(opts)
    report.root = str(root)
    return report


@dataclass
class Audit:
    """The audit as one run of the codemod sees it: the catalogue (``rules``), the rules the run
    selected, the scan's package prefix for ``root``, and the two scans (the tree's, one file's
    text as it is now)."""

    root: Path
    rules: dict[str, Rule]
    selected: dict[str, Rule]
    prefix: str

    def scan(self) -> Report:
        """The selected rules' findings in the tree (``scan_tree``)."""
        return scan_tree(self.root, list(self.selected.values()))

    def rescan(self, text: str, path: str) -> tuple[list[Finding], list[FileError]]:
        """Every rule's findings in one file's text, resolved as the tree scan does."""
        return scan_source(
            text.encode("utf-8"), path, list(self.rules.values()), package_prefix=self.prefix
        )

    def wrappers(
        self, files: Sequence[str], read: Callable[[str], bytes | None], findings: list[Finding]
    ) -> tuple[list[Finding], dict]:
        """The audit's tree-level pass over ``files`` as ``read`` gives them (rel -> bytes):
        (the uses of the project's wrappers, qualified name -> ``Wrapper``). ``findings``:
        those files' per-file findings (the scan's, or a rescan's)."""
        from audits.python.words import words
        from audits.python.wrappers import follow

        rules = [r for r in self.rules.values() if r.language == "python"]

        def words_of(rel: str) -> bytes | None:
            data = read(rel)
            return None if data is None else words(data)

        known: dict = {}
        return follow(files, words_of, read, findings, rules, self.prefix, known), known


def open_audit(root: Path, sel: Sequence[str] = (), ignore: Sequence[str] = ()) -> Audit:
    """The catalogue, the selection (``CatalogError`` on an unknown selector) and the prefix."""
    rules = load_rules()
    return Audit(root, rules, select(rules, sel, ignore), package_prefix(root))
