"""Language registry: which files each scanner reads, its byte prefilter, and the scanner module.

A language is one ``Language`` entry. Adding one (as the C++ and CMake scanners were) means adding
an entry here and a module that exposes the stable scanner interface::

    def scan_source(data: bytes, relpath: str, rules: Sequence[Rule]) -> tuple[list[Finding], list[FileError]]

- ``data``: the raw file bytes (the walker already rejected binary/oversized/unreadable files;
  decoding and parse errors are the scanner's to report as ``FileError``).
- ``relpath``: POSIX path relative to the scanned root, used verbatim as ``Finding.path``.
- ``rules``: the selected catalogue rules whose ``language`` is in ``Language.rule_languages``.
- Returns findings (any order; the driver sorts) and per-file errors. It must never raise for bad
  input, never import or execute the scanned code, and runs in worker processes (looked up by module name).

A scanner module may also define ``subsystem(relpath: str) -> str``; otherwise the driver's
default applies. When a language's module cannot be imported (e.g. ``audits.cpp_scan`` before it
exists) files of that language are simply not scanned and not counted.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from .vocabulary import CPP_SCAN_TOKENS, PY_SCAN_TOKENS


@dataclass(frozen=True)
class Language:
    name: str  # the key in Report.languages, e.g. "python"
    suffixes: tuple[str, ...]  # lower-case file suffixes, with the dot
    filenames: tuple[str, ...]  # exact file names (e.g. "CMakeLists.txt")
    module: str  # scanner module exposing scan_source()
    rule_languages: tuple[str, ...]  # catalogue `language:` values this scanner consumes
    prefilter: tuple[bytes, ...]  # lower-case byte tokens; a file containing none has no findings
    match_suffixes: tuple[str, ...] = ()  # always scanned, tokens or not (.cu/.cuh are CUDA-only)

    def may_match(self, data: bytes, relpath: str = "") -> bool:
        """The byte-level prefilter: does the (case-folded) file contain any token?"""
        if self.match_suffixes and relpath.lower().endswith(self.match_suffixes):
            return True
        low = data.lower()
        return any(tok in low for tok in self.prefilter)


# The byte prefilters (audits/vocabulary.py says why these words).
CUDA_TOKENS = PY_SCAN_TOKENS
_CPP_TOKENS = CPP_SCAN_TOKENS

LANGUAGES: tuple[Language, ...] = (
    Language("python", (".py", ".pyi"), (), "audits.python_scan", ("python",), CUDA_TOKENS),
    Language(
        "cpp",
        (".cpp", ".cc", ".cxx", ".h", ".hpp", ".cu", ".cuh"),
        (),
        "audits.cpp_scan",
        ("cpp",),
        _CPP_TOKENS,
        (".cu", ".cuh"),
    ),
    Language("cmake", (".cmake",), ("CMakeLists.txt",), "audits.cpp_scan", ("cmake",), _CPP_TOKENS),
)
BY_NAME = {lang.name: lang for lang in LANGUAGES}

_SUFFIX = {s: lang for lang in LANGUAGES for s in lang.suffixes}
_FILENAME = {n: lang for lang in LANGUAGES for n in lang.filenames}


def language_for(filename: str) -> Language | None:
    """The language of a file by its base name (exact filename first, then suffix)."""
    if filename in _FILENAME:
        return _FILENAME[filename]
    dot = filename.rfind(".")
    return _SUFFIX.get(filename[dot:].lower()) if dot > 0 else None


def load_scanner(lang: Language) -> ModuleType | None:
    """The scanner module, or None when it is not installed (only that module missing, not a bug in it)."""
    try:
        return importlib.import_module(lang.module)
    except ModuleNotFoundError as e:
        if e.name == lang.module:
            return None
        raise


def available(languages: tuple[Language, ...] = LANGUAGES) -> tuple[Language, ...]:
    """The languages whose scanner module can be imported."""
    return tuple(lang for lang in languages if load_scanner(lang) is not None)
