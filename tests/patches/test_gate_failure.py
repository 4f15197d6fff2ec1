"""A bug in the intent gate costs the file it meets, not the series: the file is reported as a
codemod error with its findings left, and every other file is still rewritten. So does any
other fault of the codemod's own while one file is rewritten (``codemod-fault``)."""

from patches.generate import codemods
from patches.generate.cli import main

SRC = "import torch\n\n\ndef f():\n    torch.cuda.synchronize()\n"


def _run_with_a_fault(tmp_path, capsys, monkeypatch, method: str, fault: Exception) -> str:
    """generate over ``good.py`` and ``bad.py`` with ``_File.<method>`` raising ``fault`` for
    ``bad.py``: only ``good.py`` is rewritten, the fault costs one finding; stderr."""
    (tmp_path / "good.py").write_text(SRC)
    (tmp_path / "bad.py").write_text(SRC)
    real = getattr(codemods._File, method)

    def failing(self, *args):
        if self.path.endswith("bad.py"):
            raise fault
        return real(self, *args)

    monkeypatch.setattr(codemods._File, method, failing)
    assert main([str(tmp_path), "--diff", "--unsafe-fixes"]) == 1
    out = capsys.readouterr()
    assert "+++ b/good.py" in out.out and "bad.py" not in out.out
    assert "1 file errors" in out.err, out.err
    assert "HN105    before     2  fixed     1  left     1" in out.err, out.err
    return out.err


def test_a_gate_failure_costs_its_file_only(tmp_path, capsys, monkeypatch):
    err = _run_with_a_fault(tmp_path, capsys, monkeypatch, "settle", TypeError("a bug"))
    assert "intent gate: TypeError: a bug" in err, err


def test_a_codemod_fault_costs_its_file_only(tmp_path, capsys, monkeypatch):
    """A fault anywhere in a file's rewrite (here a family's preparation): that file is reported
    and left, with every finding accounted for; the other files are still rewritten."""
    err = _run_with_a_fault(tmp_path, capsys, monkeypatch, "_prepare", StopIteration())
    assert "error bad.py: codemod-fault StopIteration" in err, err
