"""Content-hash result cache, stored outside the scanned tree.

One JSON file per (scanned root, tool version, catalogue version, max file size): for every file
its (size, mtime_ns, inode) stat key, its BLAKE2 content digest, the time its content was last
verified, and its findings/errors.

Validation, cheapest first:

- stat key unchanged and the file's mtime is older than its verification time by more than
  ``RACY_NS``: the file is not even read (the results are reused);
- otherwise (stat changed, or "racily clean": modified within ``RACY_NS`` of the moment it was
  read, where a second edit could keep the same size and mtime on a coarse-timestamp file
  system, as in git's racy-clean rule) the file is read and hashed, and its results are reused
  only when the digest is the same; a different digest means a rescan.

Location: ``--cache-dir``, else ``$XDG_CACHE_HOME/hwneutral``, else ``~/.cache/hwneutral``. A
corrupt or foreign cache file is ignored (and rewritten), never trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Any

from .model import FileError, Finding

FORMAT = 3
RACY_NS = 2_000_000_000  # 2 s: coarser than any common file system's mtime resolution
_ROW = [f for f in Finding.__dataclass_fields__ if f != "path"]  # path is the key, not stored


def default_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hwneutral")


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


Results = tuple[list[Finding], list[FileError]]


class Cache:
    """Entries: ``rel -> [size, [mtime_ns, inode], digest, finding rows, error rows, verified_ns]``."""

    def __init__(self, directory: str, root: str, key: str) -> None:
        ident = hashlib.sha256(f"{FORMAT}\0{os.path.realpath(root)}\0{key}".encode()).hexdigest()[
            :24
        ]
        self.path = os.path.join(directory, f"scan-{ident}.json")
        self.key = key
        self.entries: dict[str, list[Any]] = {}
        self.dirty = False

    def load(self) -> None:
        try:
            with open(self.path, "rb") as f:
                doc = json.loads(f.read())
            if doc.get("format") == FORMAT and doc.get("key") == self.key:
                self.entries = {
                    k: e for k, e in doc["files"].items() if isinstance(e, list) and len(e) == 6
                }
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.entries = {}

    def lookup_stat(self, rel: str, stat_key: list[int]) -> Results | None:
        """The cached results when the stat key matches and the entry is not racily clean."""
        e = self.entries.get(rel)
        if (
            e is not None
            and e[0] == stat_key[0]
            and e[1] == stat_key[1:]
            and isinstance(e[5], int)
            and stat_key[1] + RACY_NS <= e[5]
        ):
            return self._decode(rel, e)
        return None

    def digest_of(self, rel: str) -> str | None:
        """The content digest stored for ``rel`` (for a read-and-compare when stat is not enough)."""
        e = self.entries.get(rel)
        return e[2] if e is not None and isinstance(e[2], str) else None

    def reuse(self, rel: str, stat_key: list[int], verified_ns: int) -> Results | None:
        """The results of ``rel``, whose content was just found equal to the stored digest."""
        e = self.entries.get(rel)
        found = self._decode(rel, e) if e is not None else None
        if found is not None:
            self.entries[rel] = [stat_key[0], stat_key[1:], e[2], e[3], e[4], verified_ns]
            self.dirty = True
        return found

    @staticmethod
    def _decode(rel: str, e: list[Any]) -> Results | None:
        try:
            fs = [Finding(*row[:4], rel, *row[4:]) for row in e[3]]
            errs = [FileError(rel, *row) for row in e[4]]
        except TypeError:
            return None
        return fs, errs

    def store(
        self,
        rel: str,
        stat_key: list[int],
        dig: str,
        findings: list[Finding],
        errors: list[FileError],
        verified_ns: int,
    ) -> None:
        """``verified_ns``: a time taken before the file was read (the racy-clean reference)."""
        rows = [[getattr(f, n) for n in _ROW] for f in findings]
        self.entries[rel] = [
            stat_key[0],
            stat_key[1:],
            dig,
            rows,
            [[e.reason, e.detail] for e in errors],
            verified_ns,
        ]
        self.dirty = True

    def prune(self, live: set[str]) -> None:
        for rel in [r for r in self.entries if r not in live]:
            del self.entries[rel]
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        text = json.dumps(
            {"format": FORMAT, "key": self.key, "files": self.entries}, separators=(",", ":")
        )  # dumps, unlike dump, uses the C encoder
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.path), suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
