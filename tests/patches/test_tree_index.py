"""``TreeIndex.classes`` reads every class of a tree through ``ClassContext`` (no function
bodies); it must resolve each class's bases exactly as full ``FileContext``s do. Differential,
on the installed torch's ``nn`` and ``optim`` packages and on a file with the awkward cases."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import torch

from patches.generate.codemods.tree_index import TreeIndex

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
