"""Which layout a changed file keeps (``pytorch_style.Style``): PyTorch's lint configuration for
PyTorch's own files; for another project's file, the line length its own configuration sets (the
nearest ``pyproject.toml`` ``[tool.ruff]``/``[tool.black]``/``[tool.yapf]``, ``ruff.toml``, a
``[flake8]``/``[pycodestyle]``/``[yapf]`` section of ``setup.cfg``, ``tox.ini``, ``.flake8``, or
``.style.yapf``, looked up from the file's folder to the scanned root, never above it); with
none, the file's own: its longest line, at least black's and ruff's default 88, and black's
layout at 88 where the file has it though some line is longer (a string or a comment black does
not split: avalanche's examples, round 31). Another project's file counts as formatted where
ruff would change few of its lines (``Style.slack``: black keeps ``"a " "b"``, which ruff joins). A ported script's new lines then fit where its
author's did.
"""

from __future__ import annotations

import configparser
import dataclasses
import functools
import io
import tokenize
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the ini files still count
    tomllib = None  # type: ignore[assignment]

from patches.generate.pytorch_style import PYTORCH, Style, formatted

PYTORCH_PACKAGES = frozenset({"torch", "torchgen", "functorch"})
FLOOR = 88  # black's and ruff's default line length
_INI = ("setup.cfg", "tox.ini", ".flake8", ".style.yapf")
_INI_KEYS = (
    ("flake8", "max-line-length"),
    ("pycodestyle", "max-line-length"),
    ("yapf", "column_limit"),  # setup.cfg
    ("style", "column_limit"),  # .style.yapf
)


def style_for(root: Path, prefix: str, rel: str, original: str) -> Style:
    """The style of ``rel`` (relative to the scanned ``root``; ``prefix``: the scan's package
    prefix) whose text before the series is ``original``, indented as the file is (a 2-space
    file formatted at ruff's default 4 had its whole class rewritten: timesfm, round 42)."""
    if (prefix + rel).split("/", 1)[0] in PYTORCH_PACKAGES or _pytorch_checkout(str(root)):
        return PYTORCH
    return dataclasses.replace(_style_for(root, rel, original), indent=indent_of(original))


def indent_of(text: str) -> int:
    """The file's indentation step: the width of its first indented block (4 where it has none,
    or where it indents with tabs)."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.INDENT:
                width = len(tok.string)
                return width if "\t" not in tok.string and 0 < width <= 8 else 4
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return 4


def _style_for(root: Path, rel: str, original: str) -> Style:
    folder = (Path(root) / rel).parent
    configured = _configured(str(Path(root).resolve()), str(folder.resolve()))
    if configured is not None:
        return configured
    longest = max((len(line) for line in original.splitlines()), default=0)
    n = max(FLOOR, longest)
    black = Style(FLOOR, n, "preserve", "black's default layout, which the file has", True)
    if n > FLOOR and formatted(original, rel, black):
        return black  # formatted at 88 but for lines black leaves long (a string, a comment)
    return Style(n, n, "preserve", "the file's longest line", True)


@functools.lru_cache(maxsize=64)
def _pytorch_checkout(root: str) -> bool:
    return (Path(root) / "torch" / "__init__.py").is_file()


@functools.lru_cache(maxsize=256)
def _configured(root: str, folder: str) -> Style | None:
    """The first configuration with a line length from ``folder`` up to ``root``."""
    here = Path(folder)
    while here.is_relative_to(root):
        for found in (_pyproject(here), _ruff_toml(here), _ini(here)):
            if found is not None:
                return found
        if str(here) == root or here.parent == here:
            return None
        here = here.parent
    return None


def _read_toml(path: Path) -> dict:
    if tomllib is None:
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _length(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _pyproject(folder: Path) -> Style | None:
    tool = _read_toml(folder / "pyproject.toml").get("tool", {})
    ruff, black = tool.get("ruff", {}), tool.get("black", {})
    where = str(folder / "pyproject.toml")
    if (n := _length(ruff.get("line-length"))) is not None:
        quotes = ruff.get("format", {}).get("quote-style", "double")
        return Style(n, n, quotes, f"{where} [tool.ruff]", True)
    if (n := _length(black.get("line-length"))) is not None:
        quotes = "preserve" if black.get("skip-string-normalization") else "double"
        return Style(n, n, quotes, f"{where} [tool.black]", True)
    if (n := _length(tool.get("yapf", {}).get("column_limit"))) is not None:
        return Style(n, n, "preserve", f"{where} [tool.yapf]", True)  # yapf keeps quotes
    return None


def _ruff_toml(folder: Path) -> Style | None:
    for name in ("ruff.toml", ".ruff.toml"):
        data = _read_toml(folder / name)
        if (n := _length(data.get("line-length"))) is not None:
            quotes = data.get("format", {}).get("quote-style", "double")
            return Style(n, n, quotes, str(folder / name), True)
    return None


def _ini(folder: Path) -> Style | None:
    for name in _INI:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(folder / name, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        for section, key in _INI_KEYS:
            value = parser.get(section, key, fallback="").strip()
            if value.isdigit() and int(value) > 0:
                n = int(value)
                return Style(n, n, "preserve", f"{folder / name} [{section}]", True)
    return None
