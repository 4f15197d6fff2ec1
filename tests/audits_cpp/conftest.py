"""Shared helpers for the C++/CMake audit tests: the real catalogue and a compact rendering."""

from __future__ import annotations

from pathlib import Path

from audits.catalog import load

FIXTURES = Path(__file__).with_name("fixtures")
_CAT = load()
CPP_RULES = [r for r in _CAT.rules if r.language in ("cpp", "cmake")]


def scan_fixture(name: str, rules=None):
    from audits.cpp_scan import scan_source

    return scan_source((FIXTURES / name).read_bytes(), name, CPP_RULES if rules is None else rules)


def render(findings) -> str:
    """One line per finding: rule kind start-end message -> replacement [safety]."""
    out = []
    for f in sorted(findings, key=lambda f: (f.line, f.col, f.rule)):
        out.append(
            f"{f.rule} {f.kind} {f.line}:{f.col}-{f.end_line}:{f.end_col} {f.message} "
            f"-> {f.replacement or '-'} [{f.safety}]"
        )
    return "\n".join(out)
