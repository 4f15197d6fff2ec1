"""Which layout a changed file keeps (``patches/generate/project_style.py``): PyTorch's for
PyTorch's files, else the project's own configured line length, else the file's own."""

from __future__ import annotations

import pytest

from patches.generate import project_style
from patches.generate import pytorch_style as style


@pytest.fixture(autouse=True)
def _fresh_cache():
    project_style._configured.cache_clear()
    project_style._pytorch_checkout.cache_clear()


def _style(root, rel, text="x = 1\n", prefix=""):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return project_style.style_for(root, prefix, rel, text)


def test_pytorch_files_take_pytorchs_configuration(tmp_path):
    assert _style(tmp_path / "a", "torch/nn/x.py") is style.PYTORCH
    assert _style(tmp_path / "b", "nn/x.py", prefix="torch/") is style.PYTORCH  # installed package
    (tmp_path / "c" / "torch").mkdir(parents=True)
    (tmp_path / "c" / "torch" / "__init__.py").write_text("")
    assert _style(tmp_path / "c", "test/test_x.py") is style.PYTORCH  # a checkout's tests


@pytest.mark.parametrize(
    ("name", "text", "want"),
    [
        ("pyproject.toml", "[tool.ruff]\nline-length = 100\n", (100, "double")),
        (
            "pyproject.toml",
            "[tool.ruff]\nline-length = 100\n[tool.ruff.format]\nquote-style = 'single'\n",
            (100, "single"),
        ),
        (
            "pyproject.toml",
            "[tool.black]\nline-length = 120\nskip-string-normalization = true\n",
            (120, "preserve"),
        ),
        ("ruff.toml", "line-length = 110\n", (110, "double")),
        ("setup.cfg", "[flake8]\nmax-line-length = 99\n", (99, "preserve")),
        ("tox.ini", "[pycodestyle]\nmax-line-length = 97\n", (97, "preserve")),
        (".flake8", "[flake8]\nmax-line-length = 79\n", (79, "preserve")),
        # yapf's column limit (composer, round 27), which leaves quotes as they are
        ("pyproject.toml", "[tool.yapf]\ncolumn_limit = 120\n", (120, "preserve")),
        ("setup.cfg", "[yapf]\ncolumn_limit = 119\n", (119, "preserve")),
        (".style.yapf", "[style]\nbased_on_style = pep8\ncolumn_limit = 100\n", (100, "preserve")),
    ],
)
def test_the_projects_own_configuration(tmp_path, name, text, want):
    (tmp_path / name).write_text(text)
    got = _style(tmp_path, "app/sub/train.py")
    assert (got.line_length, got.quotes) == want and got.limit == want[0]
    assert name in got.source


def test_the_nearest_configuration_wins_and_nothing_above_the_root_counts(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 70\n")
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    (root / "pkg" / "setup.cfg").write_text("[flake8]\nmax-line-length = 90\n")
    assert _style(root, "pkg/train.py").line_length == 90
    assert _style(root, "other/train.py").line_length == 100
    assert _style(tmp_path / "project" / "pkg", "train.py").line_length == 90
    lone = tmp_path / "lone"
    assert _style(lone, "train.py").source == "the file's longest line"  # not the parent's 70


def test_without_configuration_the_files_longest_line_at_least_88(tmp_path):
    long = "x = 1\n" + "y = '" + "a" * 100 + "'\n"
    assert _style(tmp_path / "a", "train.py", long).limit == 106
    assert _style(tmp_path / "b", "train.py", "x = 1\n").limit == 88
    # a pyproject without a line length, and a broken one, say nothing
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert _style(tmp_path / "c", "train.py").source == "the file's longest line"
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "pyproject.toml").write_text("[tool.ruff\nline-length = 100\n")
    (tmp_path / "d" / "setup.cfg").write_text("[flake8]\nmax-line-length = 95\n")
    assert _style(tmp_path / "d", "train.py").limit == 95


SCRIPT = """import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
print('a line the author wrote long, and the port must leave exactly as it is:', device, device)
"""


def test_a_scripts_new_lines_fit_where_its_authors_did(tmp_path):
    own = _style(tmp_path, "train.py", SCRIPT)
    assert own.limit == 96 and style.formatted(SCRIPT, "train.py", own)
    after = SCRIPT.replace(
        '"cuda" if torch.cuda.is_available()',
        "torch.accelerator.current_accelerator().type if torch.accelerator.is_available()",
    )
    out = style.conform("train.py", SCRIPT, after, own)
    assert out.splitlines()[2:5] == [
        "device = (",
        '    torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"',
        ")",
    ]
    assert out.splitlines()[-1] == SCRIPT.splitlines()[-1]  # its quotes and length kept
    assert style.long_lines(SCRIPT, out, own.limit) == []
    # PyTorch's limit (132) would have kept the 103-column line as it was
    assert style.conform("train.py", SCRIPT, after) == after


def test_a_folder_linked_from_outside_the_root_reads_no_configuration_there(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "pyproject.toml").write_text("[tool.ruff]\nline-length = 50\n")
    (outside / "train.py").write_text("x = 1\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "linked").symlink_to(outside)
    got = project_style.style_for(root, "", "linked/train.py", "x = 1\n")
    assert got.source == "the file's longest line" and got.limit == 88


SINGLE = "import torch\n\nNAME = 'model'\nKIND = 'cuda'\n\n\ndef pick(ok):\n    return 'cuda'\n"


@pytest.mark.parametrize(
    "quotes,before,want",
    [
        # an author who writes 'cuda' gets 'cpu' on the changed line, and only there
        ("preserve", SINGLE, "'cpu'"),
        ("single", SINGLE.replace("'", '"'), "'cpu'"),
        # a file of double quotes, or a formatter that asks for them, keeps the rewrite's
        ("preserve", SINGLE.replace("'", '"'), '"cpu"'),
        ("double", SINGLE, '"cpu"'),
    ],
)
def test_the_rewrites_strings_take_the_files_quotes(quotes, before, want):
    after = before.replace(
        "    return 'cuda'\n" if "'cuda'" in before else '    return "cuda"\n',
        '    return torch.accelerator.current_accelerator().type if ok else "cpu"\n',
    )
    got = style.conform("pkg/m.py", before, after, style.Style(120, 120, quotes, "test"))
    assert got.splitlines()[-1].endswith(f"else {want}")
    assert got.splitlines()[:-1] == after.splitlines()[:-1]  # nothing else moves


BLACKENED = """import argparse

parser = argparse.ArgumentParser()
parser.add_argument(
    "--mnist",
    choices=["rotated", "permuted", "split"],
    help="Choose between MNIST variations: " "rotated, permuted or split.",
)
parser.add_argument(
    "--cuda",
    type=int,
    default=0,
    help="Select zero-indexed cuda device. -1 to use CPU, a sentence black leaves whole.",
)
"""


def test_a_file_in_blacks_layout_keeps_it_though_a_line_is_longer(tmp_path):
    """avalanche's examples: black's layout at 88, with a help string longer than that. The
    changed call is laid out as black would, not joined onto one 100-column line."""
    own = _style(tmp_path, "train.py", BLACKENED)
    assert (own.line_length, own.limit) == (88, 90) and own.source.startswith("black's")
    after = BLACKENED.replace("    type=int,\n", '    type=int,\n    dest="accel",\n')
    assert style.conform("train.py", BLACKENED, after, own) == after
    joined = BLACKENED.replace(
        '    "--cuda",\n    type=int,\n', '    "--cuda", type=int, dest="accel",\n'
    )
    assert style.conform("train.py", BLACKENED, joined, own) == after


TWO_SPACE = '''import torch


class Forecaster:
  """A class indented two spaces (timesfm's, Google's style)."""

  def __init__(self, device=None):
    if device is not None:
      self.device = torch.device(device)
    else:
      self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

  def horizon(self):
    return (
      8
      * 2
    )
'''


def test_a_two_space_file_keeps_its_indentation(tmp_path):
    """The changed line is formatted at the file's own step: at ruff's default 4 the range grew
    to the whole class and every line of it moved (round 42)."""
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 88\n")
    after = TWO_SPACE.replace(
        'torch.device("cuda" if torch.cuda.is_available() else "cpu")',
        "torch.device(torch.accelerator.current_accelerator().type"
        ' if torch.accelerator.is_available() else "cpu")',
    )
    chosen = project_style.style_for(tmp_path, "", "m.py", TWO_SPACE)
    assert chosen.indent == 2
    got = style.conform("m.py", TWO_SPACE, after, chosen)
    moved = [n for n, (a, b) in enumerate(zip(TWO_SPACE.splitlines(), got.splitlines())) if a != b]
    assert moved and min(moved) == 10, moved  # the changed statement, nothing before it
    assert got.endswith(TWO_SPACE[TWO_SPACE.index("  def horizon") :]), got
    assert all(len(line) <= 88 for line in got.splitlines())
