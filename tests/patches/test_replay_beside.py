"""replay.py: kept sites where upstream added another backend beside the CUDA statement."""

from __future__ import annotations

from tests.benchmarks.replay_beside import check
from tests.benchmarks.replay_score import Record

OLD = """\
def save():
    state = torch.get_rng_state()
    if torch.cuda.is_available():
        cuda_state = torch.cuda.get_rng_state()
    return state


def count():
    if torch.xpu.is_available():
        return torch.xpu.device_count()
    return torch.cuda.device_count()
"""

NEW = """\
def save():
    state = torch.get_rng_state()
    if torch.cuda.is_available():
        cuda_state = torch.cuda.get_rng_state()
    if torch.xpu.is_available():
        xpu_state = torch.xpu.get_rng_state()
    return state


def count():
    if torch.xpu.is_available():
        return torch.xpu.device_count()
    return torch.cuda.device_count()
"""


def _lab(line, new_line):
    return {
        "id": f"a:b:m.py:{line}",
        "path": "m.py",
        "status": "kept",
        "old_line": line,
        "new_lines": [[new_line, new_line]],
    }


def _rec(line, rewritten=True):
    return Record(f"a:b:m.py:{line}", "m.py", line, (line, line), "kept", "", "", "", "", rewritten)


def test_a_backend_added_beside_a_kept_site_marks_it_and_one_already_there_does_not(tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    (tmp_path / "old" / "m.py").write_text(OLD)
    (tmp_path / "new" / "m.py").write_text(NEW)
    labels = [_lab(4, 4), _lab(11, 13)]
    got = check(labels, tmp_path / "old", tmp_path / "new", [_rec(4), _rec(11)])
    assert got == [("m.py:4", "xpu")]  # count(): xpu was beside CUDA already in the old file
    assert check(labels, tmp_path / "old", tmp_path / "new", [_rec(4, rewritten=False)]) == []
