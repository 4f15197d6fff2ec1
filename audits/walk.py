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
    excluded = exclude_matcher(excludes)
    langs = {lang.name for lang in languages}
    real_root = os.path.realpath(root)
    entries: list[Entry] = []
    errors: list[FileError] = []
    seen_dirs = {_dir_key(real_root)}
    stack = [(real_root, "")]

    def inside(target: str) -> bool:
        return target == real_root or target.startswith(real_root + os.sep)

    while stack:
        dpath, drel = stack.pop()
        try:
            it = sorted(os.scandir(dpath), key=lambda d: d.name)
        except OSError as e:
            errors.append(FileError(drel or ".", "unreadable", e.strerror or str(e)))
            continue
        for d in it:
            rel = f"{drel}/{d.name}" if drel else d.name
            if excluded is not None and excluded(rel):
                continue
            try:
                # a plain file of no language asked for is skipped without a stat (d_type only)
                if d.is_file(follow_symlinks=False):
                    lang = language_for(d.name)
                    if lang is None or lang.name not in langs:
                        continue
                is_link = d.is_symlink()
                if is_link:
                    target = os.path.realpath(d.path)
                    if not inside(target):
                        errors.append(FileError(rel, "link-outside-root", "not followed"))
                        continue
                    try:
                        st = os.stat(d.path)
                    except OSError:
                        errors.append(FileError(rel, "broken-link", "target missing or a loop"))
                        continue
                else:
                    st = d.stat(follow_symlinks=False)
            except OSError as e:
                errors.append(FileError(rel, "unreadable", e.strerror or str(e)))
                continue
            if stat.S_ISDIR(st.st_mode):
                if d.name in SKIP_DIRS:
                    continue
                key = (st.st_dev, st.st_ino)
                if key in seen_dirs:
                    errors.append(FileError(rel, "symlink-loop", "directory already visited"))
                    continue
                seen_dirs.add(key)
                stack.append((target if is_link else d.path, rel))
            elif stat.S_ISREG(st.st_mode):
                lang = language_for(d.name)
                if lang is None or lang.name not in langs:
                    continue
                if st.st_size > max_bytes:
                    errors.append(FileError(rel, "too-large", f"{st.st_size} bytes > {max_bytes}"))
                    continue
                entries.append(Entry(rel, d.path, lang.name, st.st_size, st.st_mtime_ns, st.st_ino))
    entries.sort(key=lambda e: e.relpath)
    return entries, errors


def _dir_key(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def package_prefix(root: str) -> str:
    """``torch/`` when the root is itself a package (so subsystems read ``torch/cuda``)."""
    real = os.path.realpath(root)
    if os.path.isfile(os.path.join(real, "__init__.py")):
        return os.path.basename(real) + "/"
    return ""
