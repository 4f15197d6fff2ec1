"""Content-hash result cache, stored outside the scanned tree.

One JSON file per (scanned root, tool version, catalogue version, rule selection): for every file
its (size, mtime_ns, inode) stat key, its BLAKE2 content digest, and its findings/errors. A file
whose stat key is unchanged is not even read; a file whose stat changed but whose content hash is
the same (touched, checked out again) reuses its results after a read. Location:
``--cache-dir``, else ``$XDG_CACHE_HOME/hwneutral``, else ``~/.cache/hwneutral``. A corrupt or
foreign cache file is ignored (and rewritten), never trusted.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import astuple, fields
from typing import Any

from .model import FileError, Finding

FORMAT = 2
_FINDING_FIELDS = [f.name for f in fields(Finding)]


def default_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hwneutral")


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class Cache:
    def __init__(self, directory: str, root: str, key: str) -> None:
        ident = hashlib.sha256(f"{FORMAT}\0{os.path.realpath(root)}\0{key}".encode()).hexdigest()[:24]
        self.path = os.path.join(directory, f"scan-{ident}.json")
        self.key = key
        self.entries: dict[str, list[Any]] = {}
        self.by_digest: dict[str, list[Any]] = {}
        self.dirty = False

    def load(self) -> None:
        try:
            with open(self.path, encoding="utf-8") as f:
                doc = json.load(f)
            if doc.get("format") == FORMAT and doc.get("key") == self.key:
                self.entries = doc["files"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.entries = {}
        self.by_digest = {e[2]: e for e in self.entries.values() if isinstance(e, list) and len(e) == 5}

    def lookup_stat(self, rel: str, stat_key: list[int]) -> tuple[list[Finding], list[FileError]] | None:
        e = self.entries.get(rel)
        if isinstance(e, list) and len(e) == 5 and e[0] == stat_key[0] and e[1] == stat_key[1:]:
            return self._decode(rel, e)
        return None

    def lookup_digest(self, rel: str, dig: str, stat_key: list[int]):
        e = self.by_digest.get(dig)
        if e is None:
            return None
        found = self._decode(rel, e)
        self.store(rel, stat_key, dig, *found)
        return found

    @staticmethod
    def _decode(rel: str, e: list[Any]):
        try:
            fs = [Finding(*row[:4], rel, *row[4:]) for row in e[3]]
            errs = [FileError(rel, *row) for row in e[4]]
        except TypeError:
            return None
        return fs, errs

    def store(self, rel: str, stat_key: list[int], dig: str, findings: list[Finding],
              errors: list[FileError]) -> None:
        rows = [[*t[:4], *t[5:]] for t in map(astuple, findings)]  # path is the key, not stored
        self.entries[rel] = [stat_key[0], stat_key[1:], dig, rows, [[e.reason, e.detail] for e in errors]]
        self.dirty = True

    def prune(self, live: set[str]) -> None:
        for rel in [r for r in self.entries if r not in live]:
            del self.entries[rel]
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.path), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"format": FORMAT, "key": self.key, "files": self.entries}, f,
                      separators=(",", ":"))
        os.replace(tmp, self.path)
