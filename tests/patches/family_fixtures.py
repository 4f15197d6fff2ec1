"""Fixture-driven checks for the rewrite families under ``patches/generate/codemods/families``.

``tests/patches/fixtures/<family>/<case>.py`` is a snippet in torch's own shapes, its first line
``# fixture-path: torch/...`` the path it is scanned and gated as; ``<case>.expected.py`` is the
exact result. A ``negative_*.py`` case has no expected file: it must come back unchanged (a
look-alike the family leaves). Every case runs the real scan, intent gate and codemod
(``codemod_helpers.fix``), compiles, and a second run changes nothing.
"""

from __future__ import annotations

from pathlib import Path

from tests.patches.codemod_helpers import FIXTURES, diff, fix

HEADER = "# fixture-path: "


def cases(family: str) -> list[str]:
    folder = FIXTURES / family
    return sorted(p.stem for p in folder.glob("*.py") if not p.name.endswith(".expected.py"))


def check(family: str, case: str) -> None:
    folder = FIXTURES / family
    src = (folder / f"{case}.py").read_text()
    first = src.splitlines()[0]
    assert first.startswith(HEADER), f"{case}: first line must be {HEADER!r}"
    path = first[len(HEADER) :].strip()
    expected_file = folder / f"{case}.expected.py"
    if case.startswith("negative_"):
        assert not expected_file.exists(), f"{case}: a negative case has no expected file"
        expected = src
    else:
        expected = expected_file.read_text()
        assert expected != src, f"{case}: expected equals the input"
    rw, _ = fix(src, path=path)
    assert not rw.error, rw.error
    assert rw.after == expected, diff(expected, rw.after)
    compile(rw.after, path, "exec")
    again, _ = fix(rw.after, path=path)
    assert again.after == rw.after, diff(rw.after, again.after)


def fixture_dir(family: str) -> Path:
    return FIXTURES / family


def tree_cases(family: str) -> list[Path]:
    """A tree family's fixture files (every case at its header's path, read as one tree)."""
    return [FIXTURES / family / f"{c}.py" for c in cases(family)]


def write_tree(root: Path, files: list[Path], packages: tuple[str, ...]) -> dict[str, Path]:
    """Write each fixture file at its header's path under ``root`` and make ``packages``
    packages; -> {path in the tree: fixture file}."""
    out = {}
    for p in files:
        rel = p.read_text().splitlines()[0][len(HEADER) :].strip()
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(p.read_text())
        out[rel] = p
    for pkg in packages:
        (root / pkg).mkdir(parents=True, exist_ok=True)
        (root / pkg / "__init__.py").write_text("")
    return out
