"""replay.py: a kept label called 'moved' whose rewrite stands word for word at its old place."""

from __future__ import annotations

from tests.benchmarks.replay_moved import check
from tests.benchmarks.replay_score import Record

NEW = """\
def nproc(kind):
    if kind == "gpu":
        n = torch.cuda.device_count()
    elif kind == "auto":
        if torch.accelerator.is_available():
            n = torch.accelerator.device_count()
    return n
"""


def _lab(line, status, how, new_line):
    return {
        "id": f"a:b:run.py:{line}",
        "path": "run.py",
        "status": status,
        "how": how,
        "old_line": line,
        "new_lines": [[new_line, new_line]],
    }


# old file: the gpu branch's count at 12, the auto branch's test at 14 and its count at 15
LABELS = [
    _lab(12, "kept", "equal", 3),
    _lab(14, "neutralized", "equal", 5),
    _lab(15, "kept", "moved", 3),  # the labeller matched the gpu branch's equal text
]


def _rec(line, ours, rewritten=True):
    return Record(
        f"a:b:run.py:{line}", "run.py", line, (line, line), "kept", "", "", "", "", rewritten, ours
    )


def test_a_moved_kept_site_neutralised_in_place_is_reported(tmp_path):
    (tmp_path / "run.py").write_text(NEW)
    recs = [_rec(15, "n = torch.accelerator.device_count()"), _rec(12, "", rewritten=False)]
    assert check(LABELS, tmp_path, recs) == [("run.py:15", 6)]


def test_a_moved_kept_site_whose_rewrite_is_not_upstream_text_is_not(tmp_path):
    (tmp_path / "run.py").write_text(NEW)
    recs = [_rec(15, "n = torch.get_device_module().device_count()")]
    assert check(LABELS, tmp_path, recs) == []


def test_an_equal_kept_site_is_never_reread(tmp_path):
    (tmp_path / "run.py").write_text(NEW.replace("torch.cuda.device_count()", "0"))
    recs = [_rec(12, "n = torch.accelerator.device_count()")]
    assert check(LABELS, tmp_path, recs) == []
