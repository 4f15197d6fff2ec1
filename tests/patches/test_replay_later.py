"""replay.py --later: kept-site rewrites followed into the next pair's labels."""

from __future__ import annotations

import pytest

from tests.benchmarks.replay_later import check
from tests.benchmarks.replay_score import Record


def _labels(old, new, labels, files):
    return {
        "pair": {"old": old, "new": new, "file_sha256": dict.fromkeys(files, {})},
        "labels": labels,
    }


def _kept(path, line, new_line):
    return {
        "id": f"a:b:{path}:{line}",
        "path": path,
        "status": "kept",
        "old_line": line,
        "new_lines": [[new_line, new_line]],
    }


def _rec(path, line, status="kept", rewritten=True):
    return Record(f"a:b:{path}:{line}", path, line, (line, line), status, "", "", "", "", rewritten)


THIS = _labels(
    "a",
    "b",
    [_kept("m.py", 10, 40), _kept("m.py", 20, 50), _kept("n.py", 5, 5)],
    ["m.py", "n.py"],
)
NEXT = _labels(
    "b",
    "c",
    [
        {
            "path": "m.py",
            "status": "neutralized",
            "old_line": 40,
            "old_span": [39, 41],
            "new_text": "x",
        },
        {"path": "m.py", "status": "kept", "old_line": 50, "old_span": [50, 50]},
    ],
    ["m.py"],
)


def test_a_kept_rewrite_upstream_made_later_is_counted_by_its_new_line():
    res = check(THIS, NEXT, [_rec("m.py", 10), _rec("m.py", 20), _rec("n.py", 5)])
    assert res.release == "c"
    assert res.rewritten == 3
    assert res.made == [("m.py:10", "x")]  # line 20 -> 50 is still kept in c
    assert res.unmapped == 1  # n.py: the later list has no label there


def test_unrewritten_and_neutralized_records_are_not_kept_rewrites():
    res = check(THIS, NEXT, [_rec("m.py", 10, rewritten=False), _rec("m.py", 10, "neutralized")])
    assert (res.rewritten, res.made) == (0, [])


def test_a_later_list_from_another_release_is_refused():
    with pytest.raises(ValueError, match="not from b"):
        check(THIS, _labels("z", "c", [], []), [])
