"""Partial parsing (top-level pieces, class/def bodies cut to their hit statements) must give the
same findings as a whole-file parse, including on layouts that defeat the line-based splitter."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from split_vs_whole import ANCHOR, large_token_files, scan_both

import audits.python_scan as ps
from audits.catalog import load
from audits.python import segments
from audits.scan import torch_source_root

FIXTURES = Path(__file__).parent / "fixtures"
PY_RULES = load().for_languages(["python"])

TRICKY = '''\
import torch
from torch.cuda import synchronize as sync


@unittest.skipIf(not torch.cuda.is_available(), "needs a GPU")
class Big(Base,
          metaclass=Meta):
    """Docstring with a fake statement at body indentation:
    def not_a_member(): torch.cuda.synchronize()
    """
    x = foo(
    device="cuda",
    other=1)

    # a comment that ends open,
    def uses(self, dev="cuda"):
        sync()
        if torch.cuda.is_available():
            y = 1
        else:
            y = 2
        return y

    y = [1,
    2]
    v = f(  # an open bracket hidden behind a comment
    g,
    device="cuda",
    b=1)

    def plain(self):
        return "PLAIN_BODY"

    @staticmethod
    def deco(
        a,
        b="cuda:0",
    ):
        class Inner:
            def m(self):
                return torch.cuda.current_device()

            def n(self):
                return 0
        return Inner

    z = "cuda" if torch.cuda.is_available() else "cpu"
    if torch.cuda.device_count() > 1: w = 2
    elif x: w = 3
    def last(self): return torch.cuda.is_available()


async def coro():
    await torch.cuda.synchronize()
    for i in range(3):
        pass
    return 0
'''


def _scan(data: bytes, name: str, **kw):
    findings, errors = ps.scan_source(data, name, PY_RULES, **kw)
    assert errors == []
    return sorted(findings, key=lambda f: f.sort_key())


@pytest.fixture
def split_everything(monkeypatch):
    monkeypatch.setattr(ps, "SEGMENT_MIN_BYTES", 0)
    monkeypatch.setattr(segments, "SPLIT_MIN_LINES", 1)


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.py")))
def test_fixtures_split_equals_whole(name, split_everything):
    data = (FIXTURES / name).read_bytes()
    assert _scan(data, name) == _scan(data, name, segments=False)


def test_tricky_layouts_split_equals_whole(split_everything, monkeypatch):
    data = TRICKY.encode()
    whole = _scan(data, "t.py", segments=False)
    parsed: list[str] = []
    real = ast.parse
    monkeypatch.setattr(
        ps.ast, "parse", lambda src, *a, **k: (parsed.append(src), real(src, *a, **k))[1]
    )
    assert _scan(data, "t.py") == whole
    assert {"branch", "call"} <= {f.kind for f in whole} and len(whole) > 10
    # the body really was cut: a statement without a CUDA token is not in the parsed text
    assert any("class Big" in s for s in parsed)
    assert not any("PLAIN_BODY" in s for s in parsed if "class Big" in s)


def test_split_keeps_true_positions_of_a_decorated_class(split_everything):
    data = TRICKY.encode()
    branch = [f for f in _scan(data, "t.py") if f.kind == "branch" and f.line == 5]
    assert (
        branch
        and branch[0].end_line
        == TRICKY.splitlines().index("    def last(self): return torch.cuda.is_available()") + 1
    )


def test_continuation_at_body_indentation_is_not_a_boundary(split_everything):
    # cut at `"cuda",` the pieces still parse (a bare tuple) and the `.to(...)` finding is lost
    src = b'class W:\n    y = x.to(  # note\n    "cuda",\n    non_blocking=True)\n    def last(self): return 0\n'
    whole = _scan(src, "w.py", segments=False)
    assert [f.rule for f in whole] == ["HN502"]
    assert _scan(src, "w.py") == whole


def test_unsplittable_layout_falls_back_to_a_whole_parse(split_everything):
    # a continuation line at the body indentation right after a hit: pieces alone would mislead
    src = b"class A:\n    x = f(\n    1,\n    device='cuda')\n    def g(self):\n        return torch.cuda.current_device()\n"
    assert _scan(src, "u.py") == _scan(src, "u.py", segments=False)


# Aliases bound to CUDA names by imports nested in module-level blocks; their uses carry no CUDA
# token, so only the alias decides that those lines are visited.
NESTED_ALIASES = """\
# leading comment: the first piece starts before the first statement
from torch.cuda import synchronize as first_sync
from typing import TYPE_CHECKING
import torch

if TYPE_CHECKING:
    from torch.cuda import _POOL_HANDLE
try:
    from torch.cuda import memory_allocated as mem
except ImportError:
    from torch.cuda import max_memory_allocated as peak
else:
    from torch.cuda import memory_reserved as reserved
finally:
    from torch.cuda import empty_cache as flush
with open(__file__):
    if True:
        for _ in ():
            from torch.cuda import ipc_collect as collect
x = 1; from torch.cuda import set_sync_debug_mode as dbg


def uses(handle: _POOL_HANDLE):
    first_sync()
    mem()
    peak()
    reserved()
    flush()
    collect()
    dbg(0)
    return "PLAIN_BODY"


def local_scope():
    from torch.cuda import list_gpu_processes as procs
    return 0


procs()
"""
NESTED_NAMES = {"_POOL_HANDLE", "first_sync", "mem", "peak", "reserved", "flush", "collect", "dbg"}


def test_aliases_imported_in_nested_blocks_split_equals_whole(split_everything, monkeypatch):
    data = NESTED_ALIASES.encode()
    whole = _scan(data, "n.py", segments=False)
    # every alias use is found (lines without a CUDA token); a def-local alias stays local
    src = NESTED_ALIASES.splitlines()
    found = {src[f.line - 1][f.col - 1 : f.end_col - 1] for f in whole}
    assert NESTED_NAMES <= found and "procs" not in found
    parsed: list[str] = []
    real = ast.parse
    monkeypatch.setattr(
        ps.ast, "parse", lambda src, *a, **k: (parsed.append(src), real(src, *a, **k))[1]
    )
    assert _scan(data, "n.py") == whole
    # the imports' parse held the nested blocks but no def; no parse was of the whole file
    assert "import ipc_collect" in parsed[0] and "def uses" not in parsed[0]
    assert NESTED_ALIASES not in parsed


def test_installed_cuda_graphs_split_equals_whole():
    # the file where the split parse once missed four `_POOL_HANDLE` uses
    root = Path(torch_source_root())
    split, whole = scan_both(root / ANCHOR, root, PY_RULES)
    assert split == whole
    assert sum(f.rule == "HN199" and "_POOL_HANDLE" in f.source for f in whole) >= 4


def test_installed_large_files_split_equals_whole():
    """A deterministic sample of the installed torch's large Python files with a CUDA token."""
    root = Path(torch_source_root())
    files = large_token_files(root, 40)
    assert len(files) >= 30
    bad = [
        p.relative_to(root).as_posix()
        for p in files
        if (lambda s, w: s != w)(*scan_both(p, root, PY_RULES))
    ]
    assert bad == []


HEADERS = [
    "def f(\n    self,\n    x: int = 1,\n) -> None:\n    return x\n",
    "def f(a,\n      b):  # a comment\n    return a\n",
    "def f(a, \\\n      b):\n    return a\n",
    "def f():\n\n    x = 1\n",
    "def f():\n    *a, b = c\n    y = 2\n    return y\n",
    "class C(\n    Base,\n):\n    '''doc'''\n    x = 1\n",
    "def f(x=(\n    1)):\n    pass\n",
    "def f(): return 1\n    x = 2\n",
]


@pytest.mark.parametrize("text", HEADERS)
@pytest.mark.parametrize("indent", ["", "    "])
def test_header_trials_skipped_only_where_they_cannot_change_the_answer(text, indent, monkeypatch):
    """Trial parses after a line that cannot end a header are skipped: same body start as when
    every trial is parsed."""
    text = "".join(indent + ln if ln else ln for ln in text.splitlines(keepends=True))
    strings = segments._triple_spans(text)
    fast = segments._body_start(text, strings, indent)
    monkeypatch.setattr(segments, "_may_end_header", lambda text, eol: True)
    assert fast == segments._body_start(text, strings, indent)
