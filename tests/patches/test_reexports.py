"""An import a rewrite leaves unused stays when another file of the tree imports it from here."""

from patches.generate.cli import main

COMMON = "from torch.testing._internal.common_utils import TEST_CUDA\n\nHAS = TEST_CUDA\n"


def _run(tmp_path, capsys, importer: str | None):
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "common_x.py").write_text(COMMON)
    if importer is not None:
        (tmp_path / "test" / "use_x.py").write_text(importer)
    assert main([str(tmp_path), "--diff", "--unsafe-fixes", "--select", "HN704"]) == 1
    return capsys.readouterr()


def test_relative_reimport_keeps_the_import(tmp_path, capsys):
    out = _run(tmp_path, capsys, "from .common_x import TEST_CUDA  # noqa: HN704\n")
    assert (
        "-from torch.testing._internal.common_utils import TEST_CUDA\n"
        "+from torch.testing._internal.common_utils import TEST_CUDA, TEST_ACCELERATOR" in out.out
    )
    assert "kept import TEST_CUDA in test/common_x.py: test/use_x.py imports it" in out.err


def test_absolute_reimport_keeps_the_import(tmp_path, capsys):
    out = _run(tmp_path, capsys, "from test.common_x import HAS, TEST_CUDA  # noqa: HN704\n")
    assert "kept import TEST_CUDA in test/common_x.py: test/use_x.py imports it" in out.err


def test_without_importers_the_unused_import_goes(tmp_path, capsys):
    # The name appears (byte search hit) but not imported from this module: still removed.
    out = _run(tmp_path, capsys, "from other import TEST_CUDA  # noqa: HN704\n")
    assert "+from torch.testing._internal.common_utils import TEST_ACCELERATOR\n" in out.out
    assert "kept import" not in out.err


def test_the_tree_is_walked_as_the_scanner_walks_it(tmp_path, capsys, monkeypatch):
    # An importer under .git or a virtual environment is not the project's code, and those
    # folders are never listed: git may pack .git/objects while generate reads the tree.
    import os

    for folder in (".git/objects/f3", ".venv/lib"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "use_x.py").write_text("from test.common_x import TEST_CUDA\n")
    listed = []
    scandir = os.scandir

    def spy(path="."):
        listed.append(os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", spy)
    out = _run(tmp_path, capsys, None)
    assert "+from torch.testing._internal.common_utils import TEST_ACCELERATOR\n" in out.out
    assert listed and not [p for p in listed if "/.git" in p or "/.venv" in p]
