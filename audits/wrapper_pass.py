"""The driver's side of the wrapper pass (``audits.python.wrappers``): its inputs and its cache.

The pass depends on every Python file, so its result is cached as a whole, keyed by every Python
file's stat key: a warm run with nothing changed reads no file. Otherwise it searches the files'
words, which the workers collected from their one read of each file this run; the words of files
the run did not read (unchanged since the last one) come from the words store kept beside the scan
cache (``scan-*.words``, by content digest). A file found in neither is read once here.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import tempfile
from typing import Any

from .cache import Cache, digest
from .catalog import Catalog
from .model import Finding
from .python.words import words
from .walk import Entry

STORE_FORMAT = 1


class WordStore:
    """rel -> (content digest, words) of the last run's Python files, beside the scan cache."""

    def __init__(self, cache: Cache | None) -> None:
        self.path = cache.path[: -len(".json")] + ".words" if cache is not None else None
        self.entries: dict[str, tuple[str, bytes]] = {}
        self.dirty = False
        if self.path is not None:
            try:
                with open(self.path, "rb") as f:
                    doc = marshal.load(f)
                if isinstance(doc, dict) and doc.get("format") == STORE_FORMAT:
                    self.entries = doc["files"]
            except (OSError, EOFError, ValueError, TypeError, KeyError):
                self.entries = {}

    def get(self, rel: str, dig: str | None) -> bytes | None:
        e = self.entries.get(rel)
        return e[1] if e is not None and dig is not None and e[0] == dig else None

    def put(self, rel: str, dig: str, found: bytes) -> None:
        if self.entries.get(rel) != (dig, found):
            self.entries[rel] = (dig, found)
            self.dirty = True

    def save(self, live: set[str]) -> None:
        stale = [r for r in self.entries if r not in live]
        for r in stale:
            del self.entries[r]
        if self.path is None or not (self.dirty or stale):
            return
        try:
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.path), suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                marshal.dump({"format": STORE_FORMAT, "files": self.entries}, f)
            os.replace(tmp, self.path)
        except OSError:
            pass  # the next run reads the files instead


def follow_wrappers(
    entries: list[Entry],
    results: dict[str, tuple[list[Finding], Any]],
    fresh: dict[str, tuple[str, bytes]],
    cat: Catalog,
    prefix: str,
    cache: Cache | None,
    revision: int,
) -> dict[str, list[Finding]]:
    """path -> wrapper findings. ``fresh``: rel -> (digest, words) of the files read this run."""
    from .python.wrappers import follow

    py = [e for e in entries if e.language == "python"]
    if not py:
        return {}
    key = hashlib.sha256(
        json.dumps(
            [revision, cat.version, prefix] + [[e.relpath, e.size, e.mtime_ns, e.inode] for e in py]
        ).encode()
    ).hexdigest()
    path = cache.path[: -len(".json")] + ".wrappers" if cache is not None else None
    stored = _load_result(path, key)
    if stored is not None:
        return stored
    abspath = {e.relpath: e.abspath for e in py}
    store = WordStore(cache)

    def read(rel: str) -> bytes | None:
        try:
            with open(abspath[rel], "rb") as f:
                return f.read()
        except OSError:
            return None

    for rel, (dig, found) in fresh.items():
        store.put(rel, dig, found)

    def words_of(rel: str) -> bytes | None:
        dig = fresh[rel][0] if rel in fresh else cache.digest_of(rel) if cache else None
        found = store.get(rel, dig)
        if found is None:
            data = read(rel)
            if data is None:
                return None
            found = words(data)
            store.put(rel, digest(data), found)
        return found

    found = [f for e in py for f in results[e.relpath][0]]
    rules = [r for r in cat.rules if r.language == "python"]
    out: dict[str, list[Finding]] = {}
    for f in follow(sorted(abspath), words_of, read, found, rules, prefix):
        out.setdefault(f.path, []).append(f)
    store.save(set(abspath))
    _save_result(path, key, out)
    return out


def _load_result(path: str | None, key: str) -> dict[str, list[Finding]] | None:
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            stored = json.load(f)
        if stored.get("key") == key:
            return {
                rel: [Finding.from_dict(d) for d in fs] for rel, fs in stored["findings"].items()
            }
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def _save_result(path: str | None, key: str, out: dict[str, list[Finding]]) -> None:
    if path is None:
        return
    try:
        data = {rel: [f.__dict__ for f in fs] for rel, fs in out.items()}
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"key": key, "findings": data}, fh)
    except OSError:
        pass
