"""File discovery: which files to scan, and why others are not scanned.

Guarantees: nothing outside the root is read (a link whose target leaves the root is reported,
not followed); directory-link loops are cut and reported; excluded paths are skipped silently;
files over ``max_bytes`` are reported as too large. Reading and content checks (NUL bytes,
encoding) happen later, in the scanner workers.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from dataclasses import dataclass
from typing import Iterable

from .languages import LANGUAGES, Language, language_for
from .model import FileError
from .vocabulary import SKIP_DIRS

DEFAULT_MAX_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Entry:
    relpath: str  # POSIX, relative to the root
    abspath: str
    language: str
    size: int
    mtime_ns: int
    inode: int


def exclude_matcher(patterns: Iterable[str]):
    """A predicate on relative paths: glob match on the path, any leading directory, or the base name."""
    pats = [p.rstrip("/") for p in patterns if p.strip("/")]
    if not pats:
        return None
    rx = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in pats))
    rx_dir = re.compile("|".join(f"(?:{fnmatch.translate(p + '/*')})" for p in pats))

    def excluded(rel: str) -> bool:
        return bool(rx.match(rel) or rx_dir.match(rel) or rx.match(rel.rsplit("/", 1)[-1]))

    return excluded


def walk(
    root: str,
    *,
    excludes: Iterable[str] = (),
    max_bytes: int = DEFAULT_MAX_BYTES,
    languages: Iterable[Language] = LANGUAGES,
) -> tuple[list[Entry], list[FileError]]:
    """Scannable files under ``root`` (sorted) and the per-path problems met on the way."""
    w = _Walker(root, exclude_matcher(excludes), {lang.name for lang in languages}, max_bytes)
    while w.stack:
        dpath, drel = w.stack.pop()
        try:
            it = sorted(os.scandir(dpath), key=lambda d: d.name)
        except OSError as e:
            w.errors.append(FileError(drel or ".", "unreadable", e.strerror or str(e)))
            continue
        for d in it:
            rel = f"{drel}/{d.name}" if drel else d.name
            if w.excluded is None or not w.excluded(rel):
                w.visit(d, rel)
    w.entries.sort(key=lambda e: e.relpath)
    return w.entries, w.errors


class _Walker:
    def __init__(self, root: str, excluded, langs: set[str], max_bytes: int) -> None:
        self.excluded = excluded
        self.langs = langs
        self.max_bytes = max_bytes
        self.real_root = os.path.realpath(root)
        self.entries: list[Entry] = []
        self.errors: list[FileError] = []
        self.seen_dirs = {_dir_key(self.real_root)}
        self.stack = [(self.real_root, "")]

    def _inside(self, target: str) -> bool:
        return target == self.real_root or target.startswith(self.real_root + os.sep)

    def _stat(self, d: os.DirEntry, rel: str) -> tuple[os.stat_result, str] | None:
        """(stat, the path to descend into) of an entry worth a look, else None (recorded)."""
        try:
            # a plain file of no language asked for is skipped without a stat (d_type only)
            if d.is_file(follow_symlinks=False):
                lang = language_for(d.name)
                if lang is None or lang.name not in self.langs:
                    return None
            if not d.is_symlink():
                return d.stat(follow_symlinks=False), d.path
            target = os.path.realpath(d.path)
            if not self._inside(target):
                self.errors.append(FileError(rel, "link-outside-root", "not followed"))
                return None
            try:
                return os.stat(d.path), target
            except OSError:
                self.errors.append(FileError(rel, "broken-link", "target missing or a loop"))
                return None
        except OSError as e:
            self.errors.append(FileError(rel, "unreadable", e.strerror or str(e)))
            return None

    def visit(self, d: os.DirEntry, rel: str) -> None:
        found = self._stat(d, rel)
        if found is None:
            return
        st, path = found
        if stat.S_ISDIR(st.st_mode):
            if d.name in SKIP_DIRS:
                return
            key = (st.st_dev, st.st_ino)
            if key in self.seen_dirs:
                self.errors.append(FileError(rel, "symlink-loop", "directory already visited"))
                return
            self.seen_dirs.add(key)
            self.stack.append((path, rel))
        elif stat.S_ISREG(st.st_mode):
            lang = language_for(d.name)
            if lang is None or lang.name not in self.langs:
                return
            if st.st_size > self.max_bytes:
                msg = f"{st.st_size} bytes > {self.max_bytes}"
                self.errors.append(FileError(rel, "too-large", msg))
                return
            self.entries.append(
                Entry(rel, d.path, lang.name, st.st_size, st.st_mtime_ns, st.st_ino)
            )


def _dir_key(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def package_prefix(root: str) -> str:
    """``torch/`` when the root is itself a package (so subsystems read ``torch/cuda``)."""
    real = os.path.realpath(root)
    if os.path.isfile(os.path.join(real, "__init__.py")):
        return os.path.basename(real) + "/"
    return ""
