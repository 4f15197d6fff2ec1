"""A bug in the intent gate costs the file it meets, not the series: the file is reported as a
codemod error with its findings left, and every other file is still rewritten."""

from patches.generate import codemods
from patches.generate.cli import main

SRC = "import torch\n\n\ndef f():\n    torch.cuda.synchronize()\n"


def test_a_gate_failure_costs_its_file_only(tmp_path, capsys, monkeypatch):
    (tmp_path / "good.py").write_text(SRC)
    (tmp_path / "bad.py").write_text(SRC)
    settle = codemods._File.settle

    def failing(self, findings):
        if self.path.endswith("bad.py"):
            raise TypeError("a bug")
        return settle(self, findings)

    monkeypatch.setattr(codemods._File, "settle", failing)
    assert main([str(tmp_path), "--diff", "--unsafe-fixes"]) == 1
    out = capsys.readouterr()
    assert "+++ b/good.py" in out.out and "bad.py" not in out.out
    assert "1 file errors" in out.err, out.err
    assert "HN105    before     2  fixed     1  left     1" in out.err, out.err
    assert "intent gate: TypeError: a bug" in out.err, out.err


def test_a_codemod_fault_costs_its_file_only(tmp_path, capsys, monkeypatch):
    """A fault anywhere in a file's rewrite (here a family's preparation): that file is reported
    and left, with every finding accounted for; the other files are still rewritten."""
    (tmp_path / "good.py").write_text(SRC)
    (tmp_path / "bad.py").write_text(SRC)
    prepare = codemods._File._prepare

    def failing(self, spec, lines):
        if self.path.endswith("bad.py"):
            raise StopIteration
        return prepare(self, spec, lines)

    monkeypatch.setattr(codemods._File, "_prepare", failing)
    assert main([str(tmp_path), "--diff", "--unsafe-fixes"]) == 1
    out = capsys.readouterr()
    assert "+++ b/good.py" in out.out and "bad.py" not in out.out
    assert "1 file errors" in out.err, out.err
    assert "HN105    before     2  fixed     1  left     1" in out.err, out.err
    assert "error bad.py: codemod-fault StopIteration" in out.err, out.err
