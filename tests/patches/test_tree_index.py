"""``TreeIndex.classes`` reads every class of a tree through ``ClassContext`` (no function
bodies); it must resolve each class's bases exactly as full ``FileContext``s do. Differential,
on the installed torch's ``nn`` and ``optim`` packages and on a file with the awkward cases.
And each file is parsed once for all its readers, the gate's index built once per file."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
import torch

import patches.generate.codemods as codemods
from audits import python_scan
from patches.generate.codemods.reexports import Importers
from patches.generate.codemods.tree_index import TreeIndex
from tests.patches.codemod_helpers import rules, specs

AWKWARD = textwrap.dedent(
    """\
    import collections as c
    from .base import Base as B

    try:
        from fast import Impl
    except ImportError:
        Impl = object

    def factory():
        import os as B  # a function's import never reaches a class line

        class Hidden(B):  # inside a function: not listed
            pass

    class A(B, c.OrderedDict):
        class Inner(Impl):
            pass

    class D(A, metaclass=type):
        B = 1  # the class body binds B after its bases are read
    """
)


def _both(root: Path) -> tuple[dict, dict]:
    light = TreeIndex(root, "").classes()
    full = TreeIndex(root, "")
    for rel in full.holding(b"class "):
        full.context(rel)  # every file with a whole FileContext first
    return light, full.classes()


def test_same_bases_as_full_contexts(tmp_path):
    src = Path(torch.__file__).parent
    for sub in ("nn", "optim"):
        shutil.copytree(src / sub, tmp_path / "torch" / sub, ignore=shutil.ignore_patterns("*.pyc"))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(AWKWARD)
    light, full = _both(tmp_path)
    assert light == full
    assert len(light) > 200
    assert light["pkg.mod.A"] == ("pkg.base.Base", "collections.OrderedDict")
    assert light["pkg.mod.A.Inner"] == ("fast.Impl",)
    assert "pkg.mod.Hidden" not in light


def test_one_parse_per_file_shared_by_its_readers(tmp_path):
    """``tree``, ``context``, ``parsed`` and the importers all read one parse of a file; text
    that is not the file's, or a file that does not parse, gets its own answer."""
    (tmp_path / "a.py").write_text("import torch\nx = torch.cuda.is_available()\n")
    (tmp_path / "b.py").write_text("from a import x\n")
    (tmp_path / "bad.py").write_text("def (:\n")
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9'\nx = 1\n")
    index = TreeIndex(tmp_path, "")
    tree = index.tree("a.py")
    assert index.context("a.py").tree is tree
    assert index.parsed("a.py", index.text("a.py")) is tree
    other = index.parsed("a.py", "y = 1\n")
    assert other is not tree and other.body[0].targets[0].id == "y"
    assert index.tree("bad.py") is None and index.context("bad.py") is None
    with pytest.raises(SyntaxError):
        index.parsed("bad.py", "def (:\n")
    importers = Importers(tmp_path, "", index)
    assert importers.of("a.py")("x") == "b.py"
    assert importers._tree("b.py") is index.tree("b.py")
    # a file Python reads through its coding line: the importers parse its bytes themselves
    assert index.tree("latin.py") is None and importers._tree("latin.py") is not None


def test_the_gate_index_is_built_once_per_file(monkeypatch):
    """A file with shadow groups settles twice (as the ``--unsafe-fixes`` run, then as this
    one); both gates read one ``intent.index.Index`` of the file."""
    built = []

    class Counting(codemods.Index):
        def __init__(self, ctx):
            built.append(ctx.path)
            super().__init__(ctx)

    monkeypatch.setattr(codemods, "Index", Counting)
    source = textwrap.dedent(
        """\
        import torch

        def run(model):
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            return model.cuda()
        """
    )
    found, _ = python_scan.scan_source(source.encode(), "m.py", rules())
    lines: dict[str, set[int]] = {}
    for f in found:
        if f.rule in specs():
            lines.setdefault(f.rule, set()).add(f.line)
    gated = [(specs()[r], frozenset(ls)) for r, ls in sorted(lines.items())]
    assert len(gated) >= 2
    options = codemods.FileOptions(findings=found, shadow=(gated[1:],))
    result = codemods.rewrite_steps(source, "m.py", [gated[:1]], options=options)[0]
    assert not result.error and built == ["m.py"]


def _tree(root: Path, files: dict[str, str]) -> TreeIndex:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return TreeIndex(root, "")


@pytest.mark.parametrize(
    "importer, text",
    [
        ("pkg/ops.py", "from ._tune import best\n"),
        ("pkg/ops.py", "from . import _tune\n"),
        ("other/use.py", "import pkg._tune as t\n"),
        ("other/use.py", "from pkg._tune import best\n"),
        ("other/use.py", "from pkg import _tune\n"),
        ("pkg/run.py", "import _tune\n"),  # beside it: a script's folder is on its path
        ("other/use.py", "from pkg import (\n    other,\n    _tune,\n)\n"),
        ("other/use.py", "try:\n    import pkg._tune\nexcept ImportError:\n    pass\n"),
    ],
)
def test_a_module_imported_by_another_file_is_imported(tmp_path, importer, text):
    index = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/_tune.py": "best = 1\n", importer: text})
    assert index.imported("pkg/_tune.py")
    assert not index.imported(importer)


@pytest.mark.parametrize(
    "importer, text",
    [
        ("other/use.py", "import _tune\n"),  # another folder: some other _tune
        ("other/use.py", "from other import _tune\n"),
        ("pkg/ops.py", "from .._tune import best\n"),  # above the package: not this file
        ("pkg/ops.py", "# _tune is mentioned, not imported\nx = '_tune'\n"),
        ("pkg/ops.py", '"""\nfrom pkg import _tune: a docstring, not an import\n"""\n'),
        ("pkg/ops.py", "from ._tuner import best\n"),
    ],
)
def test_a_module_no_other_file_imports_is_not_imported(tmp_path, importer, text):
    index = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/_tune.py": "best = 1\n", importer: text})
    assert not index.imported("pkg/_tune.py")


def test_a_library_module_with_an_entry_point_is_not_a_script(tmp_path, capsys):
    """``device="cuda"`` in a module with a ``__main__`` block: ported in place where nothing
    imports the file (a benchmark script), left where another module imports it (a library
    module with a tuning entry point, ``torch/sparse/_triton_ops_meta.py``'s shape)."""
    from patches.generate.cli import main

    body = """\
        import torch


        def make(n):
            return torch.ones(n, device="cuda")


        if __name__ == "__main__":
            print(make(2))
        """
    _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/_tune.py": body,
            "pkg/ops.py": "from ._tune import make\n",
            "bench.py": body,
        },
    )
    assert main([str(tmp_path), "--diff", "--unsafe-fixes"]) == 1
    out = capsys.readouterr().out
    assert "+++ b/bench.py" in out and "+++ b/pkg/_tune.py" not in out
    assert "+    return torch.ones(n, device=device)" in out  # the script's own device line


def test_a_script_named_main_is_not_imported_by_every_entry_point(tmp_path):
    """``__main__`` holds the word ``main`` only inside a longer name: no import of ``main.py``."""
    entry = 'if __name__ == "__main__":\n    print("__main__")\n'
    index = _tree(tmp_path, {"main.py": entry, "tool.py": entry})
    assert not index.imported("main.py")
    (tmp_path / "run.py").write_text("import main\n")
    assert TreeIndex(tmp_path, "").imported("main.py")
