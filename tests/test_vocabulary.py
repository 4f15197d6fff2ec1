"""One vocabulary: the CUDA marker words, device/vendor names, device plugins and skip folders live
in ``audits/vocabulary.py`` only. This test reads the project's Python, TOML and YAML sources (ast
and the parsers, nothing imported) and fails on a second copy: a literal list, set, tuple, dict
or regex alternation naming three or more words of one of these lists, or a device-plugin table.
The catalogue refers to the home by name (``vocabulary.NAME``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any, Iterator

import tomllib
import yaml

from audits import vocabulary as v

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / "audits" / "vocabulary.py"
SCANNED = ("audits", "patches", "accelerator_api", "kernels", "tests/benchmarks")
SUFFIXES = (".py", ".toml", ".yaml", ".yml")
THRESHOLD = 3

# Copies the package boundaries force (docs/architecture.md): path -> why. Each must still hold
# a copy (a stale entry fails), so the list shrinks as the boundaries allow.
ALLOWED = {
    "accelerator_api/runtime.py": "accelerator_api may not import audits; torch.accelerator's "
    "in-tree device modules probed when torch lacks current_accelerator",
}


def _words(pattern: str) -> str | None:
    """The plain word a marker pattern matches (lookarounds dropped), or None."""
    word = re.sub(r"\(\?<?[!=][^)]*\)", "", pattern)
    return word if re.fullmatch(r"[a-z0-9_]+", word) else None


LISTS = {
    "CUDA marker words": frozenset(
        w
        for w in (*map(_words, v.marker_patterns()), *v.CUDA_HEADER_DIRS, "multigpu")
        if w and w not in v.NAMED_BACKENDS
    ),
    # cpu/cuda/meta are named together everywhere (the native device types), not a vendor list
    "device/vendor names": frozenset(
        {d.name for d in v.DEVICE_TYPES} - {"cpu", "cuda", "meta"}
        | {d.cpp.lower() for d in v.DEVICE_TYPES if d.cpp} - {"cpu", "cuda", "meta"}
        | set(v.OTHER_COLLECTIVES)
        | set(v.DEVICE_PLUGINS)
        | {"privateuse1"}
    ),
    "skip folders": frozenset(v.SKIP_DIRS | v.BUILD_DIRS),
}


def _strings_named(values: list[str]) -> list[str]:
    """The words named by literal strings: each string whole, a regex alternation (`a|b|c`) or a
    plain word list (`"a b c".split()`) word by word; prose is not a list."""
    out: list[str] = []
    for s in values:
        if "|" in s and not re.search(r"\s", s):  # `a || b` in prose is code, not a regex
            out += re.findall(r"[A-Za-z0-9_.]+", s)
        elif len(s.split()) >= THRESHOLD and all(re.fullmatch(r"[\w.-]+", t) for t in s.split()):
            out += s.split()
        else:
            out.append(s)
    return out


def copies_in(values: list[str]) -> list[str]:
    """One line per vocabulary list that ``values`` (a literal's strings) names >= 3 words of."""
    named = {w.lower() for w in _strings_named(values)}
    return [
        f"{name}: {', '.join(sorted(named & words))}"
        for name, words in LISTS.items()
        if len(named & words) >= THRESHOLD
    ]


def _constants(nodes: list[ast.expr | None]) -> list[str]:
    out = []
    for n in nodes:
        if isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)):
            out.append(n.value.decode("latin-1") if isinstance(n.value, bytes) else n.value)
    return out


def python_copies(source: str) -> Iterator[tuple[int, str]]:
    """(line, what) for each literal of ``source`` holding a vocabulary copy."""
    tree = ast.parse(source)
    inside: set[int] = set()  # strings already judged as elements of a collection
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            elts = node.keys if isinstance(node, ast.Dict) else node.elts
            inside.update(id(e) for e in elts)
            for what in copies_in(_constants(list(elts))):
                yield node.lineno, what
            if isinstance(node, ast.Dict) and any(
                isinstance(k, ast.Constant)
                and k.value in v.DEVICE_PLUGINS
                and isinstance(val, ast.Constant)
                and val.value == v.DEVICE_PLUGINS[k.value]
                for k, val in zip(node.keys, node.values)
            ):
                yield node.lineno, "device plugins"
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in inside
        ):
            for what in copies_in([node.value]):
                yield node.lineno, what


def _data_values(doc: Any, where: str) -> Iterator[tuple[str, list[str]]]:
    if isinstance(doc, dict):
        for k, val in doc.items():
            yield from _data_values(val, f"{where}/{k}")
    elif isinstance(doc, list):
        strings = [x for x in doc if isinstance(x, str)]
        if not any(copies_in([s]) for s in strings):  # else each string tells
            yield where, strings
        for i, x in enumerate(doc):
            yield from _data_values(x, f"{where}/{i}")
    elif isinstance(doc, str):
        yield where, [doc]


def data_copies(path: Path) -> Iterator[tuple[str, str]]:
    """(key path, what) for each TOML/YAML value holding a vocabulary copy."""
    text = path.read_bytes()
    doc = tomllib.loads(text.decode()) if path.suffix == ".toml" else yaml.safe_load(text)
    for where, values in _data_values(doc, ""):
        for what in copies_in(values):
            yield where or "/", what


def project_copies() -> dict[str, list[str]]:
    """relative path -> the copies it holds, over the scanned sources."""
    found: dict[str, list[str]] = {}
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in SUFFIXES or path == HOME or not path.is_file():
                continue
            if v.SKIP_DIRS & set(path.relative_to(ROOT).parts):
                continue
            rel = path.relative_to(ROOT).as_posix()
            if path.suffix == ".py":
                hits = [f"line {n}: {w}" for n, w in python_copies(path.read_text("utf-8"))]
            else:
                hits = [f"{k}: {w}" for k, w in data_copies(path)]
            if hits:
                found[rel] = hits
    return found


def test_no_second_copy_of_the_vocabulary():
    found = project_copies()
    copies = {p: h for p, h in found.items() if p not in ALLOWED}
    assert not copies, "use audits/vocabulary.py instead of these copies:\n" + "\n".join(
        f"  {p} {h}" for p, hits in sorted(copies.items()) for h in hits
    )
    stale = [p for p in ALLOWED if p not in found]
    assert not stale, f"no copy left in {stale}: drop them from ALLOWED"


def test_the_check_sees_copies_and_leaves_prose():
    assert [w for _, w in python_copies("X = ('xpu', 'mps', 'hpu')\n")] == [
        "device/vendor names: hpu, mps, xpu"
    ]
    assert list(python_copies("X = frozenset('xpu mps mtia'.split())\n"))
    assert list(python_copies("R = re.compile(r'(?i)cuda|cudnn|nccl')\n"))
    assert list(python_copies("P = {'trn': 'kernels.trn'}\n")) == [(1, "device plugins")]
    assert list(python_copies("S = {'.git', '__pycache__', 'node_modules'}\n"))
    # prose, two words only, and the native device types are not copies
    assert not list(python_copies('"""Runs on xpu, mps and hpu alike (see docs)."""\n'))
    assert not list(python_copies('"""`t == kCUDA || t == kXPU || t == kHPU || t == kMPS`"""\n'))
    assert not list(python_copies("X = ('xpu', 'mps', 'cpu')\nY = ('cpu', 'cuda', 'meta')\n"))


def test_the_catalogue_reads_its_device_names_from_the_home():
    from audits.catalog import load

    by_name = {r.name: r.match for r in load().rules}
    assert by_name["closed-device-list"]["backends"] == list(v.PY_BACKENDS)
    assert by_name["closed-device-list"]["accelerators"] == list(v.PY_ACCELERATORS)
    assert by_name["cpp-closed-device-list"]["backends"] == list(v.CPP_BACKENDS)
    assert by_name["cpp-closed-device-list"]["open"] == v.CPP_OPEN
    raw = (ROOT / "audits" / "catalog.yaml").read_text()
    assert "backends: vocabulary.PY_BACKENDS" in raw and "vocabulary.CPP_BACKENDS" in raw
