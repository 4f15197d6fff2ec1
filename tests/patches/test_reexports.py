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
