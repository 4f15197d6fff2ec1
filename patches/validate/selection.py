"""Which tests prove a patch series: the test files it touches, the test files that import a
module it touches (found by ``ast`` import analysis; nothing is imported), or ``--tests``.

Also reads a series: a directory with a quilt ``series`` file (or ``*.patch`` files in name
order), or a single patch/mbox file.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Iterable

from audits.resolve import absolute_module, module_name, package_name
from audits.vocabulary import BUILD_DIRS
from audits.vocabulary import SKIP_DIRS as NEVER_SOURCE
from patches.common.shard import assign

# folders never searched for tests: not source, or built/vendored trees
SKIP_DIRS = NEVER_SOURCE | BUILD_DIRS
_DIFF_GIT = re.compile(r"^diff --git a/(\S+) b/(\S+)$")
_PLUS = re.compile(r"^\+\+\+ (?:b/)?(\S+)")
_MINUS = re.compile(r"^--- (?:a/)?(\S+)")


class SeriesError(ValueError):
    """The series cannot be read (missing, empty, not a patch)."""


def series_files(path: Path) -> list[Path]:
    """The patch files of a series, in application order."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise SeriesError(f"series not found: {path}")
    listing = path / "series"
    if listing.is_file():
        names = [
            ln.split("#", 1)[0].split()[0]
            for ln in listing.read_text().splitlines()
            if ln.split("#", 1)[0].strip()
        ]
        missing = [n for n in names if not (path / n).is_file()]
        if missing:
            raise SeriesError(f"{listing} names missing patch files: {', '.join(missing)}")
        files = [path / n for n in names]
    else:
        files = sorted(p for p in path.iterdir() if p.suffix in (".patch", ".diff"))
    if not files:
        raise SeriesError(f"no patches in {path} (expected a 'series' file or *.patch)")
    return files


def touched_paths(patch_text: str) -> list[str]:
    """Paths (relative, POSIX) a patch modifies, adds, deletes or renames, in order of mention."""
    seen: dict[str, None] = {}
    for line in patch_text.splitlines():
        m = _DIFF_GIT.match(line)
        if m:
            seen.setdefault(m.group(1))
            seen.setdefault(m.group(2))
            continue
        m = _PLUS.match(line) or _MINUS.match(line)
        if m and m.group(1) != "/dev/null" and not line.startswith(("--- a/dev", "+++ b/dev")):
            seen.setdefault(m.group(1))
    return [p for p in seen if p != "/dev/null"]


def created_paths(patch_text: str) -> list[str]:
    """Paths a patch creates (``--- /dev/null`` followed by ``+++ b/PATH``)."""
    out, prev = [], ""
    for line in patch_text.splitlines():
        if prev.startswith("--- /dev/null"):
            m = _PLUS.match(line)
            if m:
                out.append(m.group(1))
        prev = line
    return out


def is_test_file(rel: str) -> bool:
    name = PurePosixPath(rel).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def module_names(rel: str) -> set[str]:
    """Dotted names a .py path may be imported as: every suffix of its package path
    (``src/pkg/mod.py`` -> ``src.pkg.mod``, ``pkg.mod``, ``mod``)."""
    if PurePosixPath(rel).suffix != ".py":
        return set()
    parts = module_name(rel).split(".")
    return {".".join(parts[i:]) for i in range(len(parts)) if parts[i:]}


def imported_modules(source: str, rel: str) -> set[str]:
    """Every dotted module a file's imports name (``from a import b`` yields ``a`` and ``a.b``);
    relative imports are resolved against the file's own package path."""
    tree = ast.parse(source, filename=rel)
    pkg = package_name(rel)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            # audits.resolve; a relative import climbing above the tree's root may come from a
            # package the root sits in: its module part alone still names a module of the tree
            base = absolute_module(node.level, node.module, pkg)
            if base is None:
                base = node.module or ""
            if base:
                out.add(base)
            out.update(f"{base}.{a.name}" if base else a.name for a in node.names)
    return out


def iter_test_files(root: Path) -> Iterable[str]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for f in sorted(filenames):
            rel = Path(dirpath, f).relative_to(root).as_posix()
            if is_test_file(rel):
                yield rel


@dataclass
class Selection:
    tests: list[str] = field(default_factory=list)  # paths relative to the tree root
    reasons: dict[str, str] = field(default_factory=dict)  # test path -> why it was selected
    unreadable: dict[str, str] = field(default_factory=dict)  # test path -> parse error

    def add(self, rel: str, why: str) -> None:
        if rel not in self.reasons:
            self.tests.append(rel)
            self.reasons[rel] = why

    def to_dict(self) -> dict:
        return {"tests": self.tests, "reasons": self.reasons, "unreadable": self.unreadable}


def select_tests(
    roots: Iterable[Path], touched: Iterable[str], explicit: Iterable[str] = ()
) -> Selection:
    """Select test files under any of ``roots`` (before/after trees: a series may add tests)."""
    sel = Selection()
    explicit = list(explicit)
    touched = list(touched)
    for t in explicit:
        sel.add(t, "--tests")
    if explicit:
        return sel
    for rel in touched:
        if is_test_file(rel):
            sel.add(rel, "touched by the series")
    targets = {}
    for rel in touched:
        if not is_test_file(rel):
            for name in module_names(rel):
                targets.setdefault(name, rel)
    if targets:
        for root in roots:
            _select_importers(sel, Path(root), targets)
    return sel


def _select_importers(sel: Selection, root: Path, targets: dict[str, str]) -> None:
    """Add the test files under ``root`` that import a target module (directly, or through one
    level of package re-export)."""
    reexports: dict[str, dict[str, str]] = {}
    for rel in iter_test_files(root):
        if rel in sel.reasons or rel in sel.unreadable:
            continue
        try:
            mods = imported_modules(Path(root, rel).read_text(encoding="utf-8"), rel)
        except (SyntaxError, UnicodeDecodeError, ValueError) as e:
            sel.unreadable[rel] = f"{type(e).__name__}: {e}"
            continue
        hit = sorted(m for m in mods if m in targets)
        if hit:
            sel.add(rel, f"imports {hit[0]} ({targets[hit[0]]})")
            continue
        for m in sorted(mods):
            src = _reexported_from(root, m, reexports)
            if src and src in targets:
                sel.add(rel, f"imports {m}, re-exported from {src} ({targets[src]})")
                break


def _reexported_from(root: Path, dotted: str, cache: dict) -> str | None:
    """For ``pkg.name`` where ``pkg/__init__.py`` does ``from pkg.mod import name``: ``pkg.mod``.

    One level of package re-export is followed (``from devlib import scale`` reaches
    ``devlib/ops.py``); attribute use after ``import pkg`` is not analysed.
    """
    pkg, _, name = dotted.rpartition(".")
    if not pkg:
        return None
    if pkg not in cache:
        init = root.joinpath(*pkg.split("."), "__init__.py")
        names: dict[str, str] = {}
        try:
            tree = ast.parse(init.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            tree = None
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.ImportFrom):
                base = absolute_module(node.level, node.module, pkg) or ""
                for a in node.names:
                    names[a.asname or a.name] = base
        cache[pkg] = names
    return cache[pkg].get(name)


def shard_tests(tests: list[str], shard: tuple[int, int], root: Path) -> list[str]:
    """Shard ``i`` of ``n`` (1-based) of the test files: the matrix's deterministic assignment
    (``patches.common.shard.assign``: largest first to the lightest shard, ties by name) with
    each file's size as its cost, so every machine computes the same split."""
    i, n = shard
    files = sorted({t.split("::", 1)[0] for t in tests})
    sizes = {f: float((root / f).stat().st_size) if (root / f).is_file() else 1.0 for f in files}
    mine = set(assign(files, n, sizes)[i - 1])
    return [t for t in tests if t.split("::", 1)[0] in mine]
