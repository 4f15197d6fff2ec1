"""replay_units.py: is a neutralised binding's function free of CUDA work after upstream's change?"""

from __future__ import annotations

from tests.benchmarks.replay_units import survey

OLD = """\
def test_sync(self):
    model = Net().cuda(self.rank)
    torch.cuda.synchronize()


def setup(rank):
    if torch.cuda.device_count() < 2:
        return
    torch.cuda.set_device(rank)
"""

NEW = """\
def setup(rank):
    if torch.cuda.device_count() < 2:
        return
    torch.accelerator.set_device_index(rank)


def init(rank):
    torch.cuda.manual_seed(rank)
    torch.accelerator.set_device_index(rank)
"""


def _lab(status, old_text, old_line, new_line):
    return {
        "id": f"a:b:m.py:{old_line}",
        "path": "m.py",
        "status": status,
        "old_text": old_text,
        "old_line": old_line,
        "old_span": [old_line, old_line],
        "new_lines": [[new_line, new_line]],
    }


def test_work_left_in_the_function_is_found_and_questions_are_not(tmp_path):
    for side, text in (("old", OLD), ("new", NEW)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "m.py").write_text(text)
    labels = {
        "labels": [
            _lab("kept", "torch.cuda.synchronize()", 3, 0),
            _lab("neutralized", "torch.cuda.set_device(rank)", 9, 4),  # a count beside: no work
            _lab("neutralized", "torch.cuda.set_device(rank)", 9, 9),  # a seed beside: work
            _lab("kept", "if torch.cuda.device_count() < 2:", 7, 0),  # not a binding
        ]
    }
    got = survey(labels, {"old": tmp_path / "old", "new": tmp_path / "new"})
    assert got["kept"] == [("a:b:m.py:3", [2])]
    assert got["neutralized"] == [("a:b:m.py:9", []), ("a:b:m.py:9", [8])]
