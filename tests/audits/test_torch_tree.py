"""The scanner on the installed torch source tree: findings match the source text, and nothing
comes from a comment or a docstring. A deterministic sample of subsystems keeps it quick."""

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from audits.catalog import load
from audits.engine import Options, run_scan
from audits.scan import torch_source_root

ROOT = Path(torch_source_root())
SAMPLE = {"cuda", "amp", "backends", "profiler", "testing", "utils"}  # top-level subtrees
EXCLUDES = [p.name for p in ROOT.iterdir() if p.name not in SAMPLE]


@pytest.fixture(scope="module")
def report():
    rep = run_scan(
        Options(root=str(ROOT), use_cache=False, excludes=EXCLUDES, languages=["python"])
    )
    assert rep.files_scanned > 200
    return rep


def _slice(src_lines, f):
    line = src_lines[f.line - 1]
    end = f.end_col - 1 if f.end_line == f.line else len(line)
    return line[f.col - 1 : end]


def test_findings_match_the_source_text(report):
    cat = load()
    assert len(report.findings) > 500 and report.errors == []
    assert {"torch/cuda", "torch/testing", "torch/amp"} <= set(report.counts("subsystem"))
    cache: dict[str, list[str]] = {}
    for f in report.findings:
        lines = cache.setdefault(f.path, (ROOT / f.path).read_text(encoding="utf-8").splitlines())
        assert lines[f.line - 1].strip() == f.source
        text = _slice(lines, f)
        rule = cat.by_id[f.rule]
        if f.kind == "branch":
            assert (
                re.match(r"(if|elif|assert)\b", text)
                or " if " in text
                or lines[f.line - 1].lstrip().startswith("@")
            ), (f, text)
        elif rule.match["type"] == "literal":
            assert re.search(r"""["'](cuda|nccl)""", text), (f, text)
        elif rule.match["type"] in ("name", "identifier"):
            assert re.fullmatch(r"[\w.]+", text), (f, text)
        elif rule.match["type"] == "method":
            assert re.search(r"\.cuda\s*\(", text), (f, text)
        elif rule.match["type"] == "attribute":
            last = text.rsplit(".", 1)[-1]
            assert text.endswith(tuple(rule.match["attributes"])) or last.startswith(
                tuple(rule.match.get("prefixes", ()))
            ), (f, text)
        elif rule.match["type"] == "import":
            assert re.match(r"(import|from)\s", text), (f, text)
        elif rule.match["type"] == "device_list":
            span = "\n".join(lines[f.line - 1 : f.end_line])
            assert text[:1] in "([{" and re.search(r"""["']cuda["']""", span), (f, text)


def test_no_finding_starts_in_a_comment_or_docstring(report):
    by_path: dict[str, list] = {}
    for f in report.findings:
        by_path.setdefault(f.path, []).append(f)
    for path, fs in by_path.items():
        src = (ROOT / path).read_text(encoding="utf-8")
        if len(src) > 150_000:  # tokenize is slow; the big generated test tables add nothing here
            continue
        comments = {
            (t.start[0], t.start[1])
            for t in tokenize.generate_tokens(io.StringIO(src).readline)
            if t.type == tokenize.COMMENT
        }
        docs = []
        for node in ast.walk(ast.parse(src)):
            body = getattr(node, "body", None)
            if (
                isinstance(body, list)
                and body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                docs.append((body[0].lineno, body[0].end_lineno))
        comment_lines = {ln for ln, _ in comments}
        for f in fs:
            assert not any(a <= f.line <= b for a, b in docs), f
            if f.line in comment_lines:  # a code line with a trailing comment: must start before it
                col = next(c for ln, c in comments if ln == f.line)
                assert f.col - 1 < col, f


# The wrapper findings of this sample as the tree-level pass found them when it re-read every
# file (before the pass was folded into the workers' one read): the join must find the same.
WRAPPER_USES = Path(__file__).parent / "fixtures" / "torch_sample_wrapper_uses.json"


def _wrapper_rows(findings) -> list[list]:
    return sorted(
        [f.path, f.line, f.col, f.rule, f.kind, f.message.split("`")[1]]
        for f in findings
        if " via `" in f.message
    )


def test_wrapper_uses_are_those_of_the_whole_tree_pass(report):
    assert _wrapper_rows(report.findings) == json.loads(WRAPPER_USES.read_text())


def test_the_workers_words_find_what_the_files_bytes_find(report):
    """Differential: the pass over the files' bytes (every file read again, as it once did) and
    the engine's pass over the workers' words find the same wrapper uses."""
    from audits.languages import BY_NAME
    from audits.python.wrappers import follow
    from audits.walk import walk

    entries, _ = walk(str(ROOT), excludes=EXCLUDES, languages=[BY_NAME["python"]])
    files = sorted(e.relpath for e in entries)
    assert len(files) == report.files_scanned

    def read(rel: str) -> bytes:
        return (ROOT / rel).read_bytes()

    direct = [f for f in report.findings if " via `" not in f.message]
    rules = [r for r in load().rules if r.language == "python"]
    again = follow(files, read, read, direct, rules, "torch/")
    assert _wrapper_rows(again) == _wrapper_rows(report.findings)
