"""Cache validation: stat first, content hash when stat changed or the entry is racily clean."""

from __future__ import annotations

import os
import time

import pytest

import audits.workers as workers
from audits.cache import RACY_NS
from audits.engine import Options, run_scan

A = "import torch\ntorch.cuda.synchronize()\n"
B = "import torch\ntorch.cuda.empty_cache()\n"  # same length as A, other rule
assert len(A) == len(B)


@pytest.fixture
def calls(monkeypatch):
    """Which files were read to compare (``check``) and which were scanned (``scan``)."""
    seen = {"check": [], "scan": []}
    check, scan = workers.check_one, workers.scan_one
    monkeypatch.setattr(
        workers, "check_one", lambda e, old: (seen["check"].append(e.relpath), check(e, old))[1]
    )
    monkeypatch.setattr(workers, "scan_one", lambda e: (seen["scan"].append(e.relpath), scan(e))[1])
    return seen


def _scan(root, cache_dir):
    rep = run_scan(Options(root=str(root), jobs=1, cache_dir=str(cache_dir)))
    return sorted((f.path, f.rule) for f in rep.findings)


def _set_mtime(path, ns):
    os.utime(path, ns=(ns, ns))


def test_same_size_and_mtime_but_new_content_is_rescanned_while_racy(tmp_path, calls):
    root, cache = tmp_path / "t", tmp_path / "c"
    root.mkdir()
    f = root / "a.py"
    f.write_text(A)
    first = _scan(root, cache)
    mtime = f.stat().st_mtime_ns
    f.write_text(B)  # same inode and size; mtime put back, as a coarse
    _set_mtime(f, mtime)  # file system (or a fast second edit) would leave it
    calls["scan"].clear()
    second = _scan(root, cache)
    assert first != second and second == [("a.py", "HN302")]
    assert calls["scan"] == ["a.py"]


def test_old_unchanged_file_is_not_read_and_touched_file_is_hashed_not_scanned(tmp_path, calls):
    root, cache = tmp_path / "t", tmp_path / "c"
    root.mkdir()
    old, touched = root / "old.py", root / "touched.py"
    for f in (old, touched):
        f.write_text(A)
        _set_mtime(f, time.time_ns() - 10 * RACY_NS)
    first = _scan(root, cache)
    assert sorted(calls["scan"]) == ["old.py", "touched.py"]
    calls["check"].clear(), calls["scan"].clear()
    _set_mtime(touched, time.time_ns() - 5 * RACY_NS)  # stat changed, content did not
    assert _scan(root, cache) == first
    assert calls["check"] == ["touched.py"] and calls["scan"] == []
    calls["check"].clear()
    assert _scan(root, cache) == first  # both trusted by stat now
    assert calls["check"] == [] and calls["scan"] == []


def test_corrupt_cache_is_ignored_and_rewritten(tmp_path):
    root, cache = tmp_path / "t", tmp_path / "c"
    root.mkdir()
    (root / "a.py").write_text(A)
    first = _scan(root, cache)
    (path,) = cache.glob("scan-*.json")
    path.write_text('{"format": 3, "key": 1, "files": {"a.py": [1]}')
    assert _scan(root, cache) == first
    assert path.read_text().startswith('{"format":3')


@pytest.mark.parametrize("enabled", [True, False])
def test_scan_pauses_the_garbage_collector_and_leaves_it_as_it_was(tmp_path, enabled, monkeypatch):
    import gc

    (tmp_path / "a.py").write_text(A)
    during = []
    check = workers.check_one
    monkeypatch.setattr(
        workers, "check_one", lambda e, old: (during.append(gc.isenabled()), check(e, old))[1]
    )
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        assert _scan(tmp_path, tmp_path / "cache")  # a.py has findings
        assert during == [False]
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
