"""How much of the CUDA-specific C++ the audit finds: token occurrences in code vs lines reported.

    .venv/bin/python tests/audits_cpp/token_recall.py [ROOT] [--missed N] [--jobs 2]

ROOT defaults to the installed torch's include/ tree. An independent lexer (not tree-sitter) blanks
comments and string/char literals (raw strings included), then counts code occurrences of four
token families and checks each against the scan's findings of the family's rules:

  conditional  a `#if/#ifdef/#ifndef/#elif` naming USE_CUDA, USE_ROCM or __CUDACC__: found when an
               HN801/HN802 finding starts on the directive's line
  devicetype   `DeviceType::CUDA`, `kCUDA`: found when an HN810/HN811 finding spans its line
  is_cuda      `.is_cuda(` / `->is_cuda(`: HN812
  namespace    `c10::cuda::`, `at::cuda::`: HN820/HN821/HN822

Code inside `#define` bodies counts (it is code once expanded); a namespace definition
(`namespace at::cuda::blas {`) is not a use and does not count. `--missed N` prints N missed
occurrences per family. The scan is the real one (audits.engine.run_scan, fresh cache).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

FAMILIES: dict[str, tuple[re.Pattern[str], frozenset[str]]] = {
    "conditional": (
        re.compile(r"\b(?:USE_CUDA|USE_ROCM|__CUDACC__)\b"),
        frozenset({"HN801", "HN802"}),
    ),
    "devicetype": (
        re.compile(r"\bDeviceType\s*::\s*CUDA\b|\bkCUDA\b"),
        frozenset({"HN810", "HN811"}),
    ),
    "is_cuda": (re.compile(r"(?:\.|->)\s*is_cuda\s*\("), frozenset({"HN812"})),
    "namespace": (
        re.compile(r"\b(?:c10|at)\s*::\s*cuda\s*::"),
        frozenset({"HN820", "HN821", "HN822"}),
    ),
}
CONDITIONAL = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef)\b")
NAMESPACE_DEF = re.compile(r"\bnamespace\s+(?:\w+\s*::\s*)*$")


NOT_CODE = re.compile(
    r"//[^\n]*(?:(?<=\\)\n[^\n]*)*"  # a line comment, continued by a trailing backslash
    r"|/\*.*?\*/"
    r'|(?<![\w])(?:u8|[uUL])?R"([^()\\ \t\n]{0,16})\(.*?\)\1"'  # a raw string
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|(?<![\w])'(?:[^'\\\n]|\\.){1,8}'",  # a char literal (not a digit separator)
    re.S,
)
NOT_NEWLINE = re.compile(r"[^\n]")


def blank(text: str) -> str:
    """``text`` with comments and string/char literals replaced by spaces (newlines kept)."""
    return NOT_CODE.sub(lambda m: NOT_NEWLINE.sub(" ", m.group()), text)


def occurrences(text: str) -> list[tuple[str, int, str]]:
    """(family, 1-based line, matched text) for every code occurrence in one file."""
    code = blank(text)
    lines = code.split("\n")
    starts = [0]
    for ln in lines[:-1]:
        starts.append(starts[-1] + len(ln) + 1)
    out: list[tuple[str, int, str]] = []
    row = 0
    while row < len(lines):
        first = row
        logical = lines[row]
        while logical.endswith("\\") and row + 1 < len(lines):  # a continued directive
            row += 1
            logical = logical[:-1] + " " + lines[row]
        if CONDITIONAL.match(logical):
            pat = FAMILIES["conditional"][0]
            out.extend(("conditional", first + 1, m.group()) for m in pat.finditer(logical))
        row += 1
    for fam in ("devicetype", "is_cuda", "namespace"):
        for m in FAMILIES[fam][0].finditer(code):
            if fam == "namespace" and NAMESPACE_DEF.search(
                code[max(0, m.start() - 200) : m.start()]
            ):
                continue  # `namespace at::cuda::blas {` defines, it does not use
            out.append((fam, code.count("\n", 0, m.start()) + 1, m.group()))
    return out


def measure(files: dict[str, bytes], findings) -> dict[str, dict]:
    """Per family: occurrences, found, and the missed ones as (path, line, text)."""
    spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for f in findings:
        spans.setdefault((f.path, f.rule), []).append((f.line, f.end_line))
    result = {fam: {"total": 0, "found": 0, "missed": []} for fam in FAMILIES}
    for rel, data in files.items():
        if b"CUDA" not in data and b"cuda" not in data and b"USE_ROCM" not in data:
            continue  # no occurrence possible
        for fam, line, tok in occurrences(data.decode("utf-8", "replace")):
            rules = FAMILIES[fam][1]
            if fam == "conditional":
                hit = any(a == line for r in rules for a, _ in spans.get((rel, r), ()))
            else:
                hit = any(a <= line <= b for r in rules for a, b in spans.get((rel, r), ()))
            res = result[fam]
            res["total"] += 1
            res["found"] += hit
            if not hit:
                res["missed"].append((rel, line, tok))
    return result


def read_tree(root: Path) -> dict[str, bytes]:
    from audits.languages import language_for

    files = {}
    for p in sorted(root.rglob("*")):
        lang = language_for(p.name)
        if lang is not None and lang.name == "cpp" and p.is_file() and not p.is_symlink():
            files[p.relative_to(root).as_posix()] = p.read_bytes()
    return files


def main() -> int:
    from audits.engine import Options, run_scan

    default = Path(importlib.util.find_spec("torch").origin).parent / "include"
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", nargs="?", default=str(default))
    ap.add_argument("--missed", type=int, default=0, help="print N missed occurrences per family")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    root = Path(a.root)
    if not root.is_dir():
        ap.error(f"not a directory: {root}")
    with tempfile.TemporaryDirectory() as d:
        rep = run_scan(Options(root=str(root), jobs=a.jobs, cache_dir=d, languages=["cpp"]))
    res = measure(read_tree(root), rep.findings)
    total = sum(r["total"] for r in res.values())
    found = sum(r["found"] for r in res.values())
    print(f"tree: {root}")
    for fam, r in res.items():
        pct = 100.0 * r["found"] / r["total"] if r["total"] else 100.0
        print(f"{fam:<12} {r['found']:6d} / {r['total']:6d}  {pct:6.2f} %")
        for rel, line, tok in r["missed"][: a.missed]:
            print(f"    missed {rel}:{line}: {tok}")
    print(f"{'all':<12} {found:6d} / {total:6d}  {100.0 * found / max(total, 1):6.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
