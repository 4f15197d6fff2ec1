"""Python source that code hands to another interpreter: the argument after a ``"-c"``
(``subprocess.run([sys.executable, "-c", CHILD, ...])``, ``CHILD`` a module-level string, maybe
through ``textwrap.dedent``), or a module-level string of several lines that the code reads (a
script it writes to a file and runs). The codemod rewrites no string, so the CUDA work the audit
finds in that source stays: a gate in front of it asks for what the child needs (unsloth-zoo's
tests run Inductor's CUDA codegen in a child process, its source keeping ``.cuda()`` and
``torch.autocast("cuda")``, round 39)."""

from __future__ import annotations

import ast
import functools
import textwrap

from patches.generate.intent.nodes import Span, span_of

_DEDENT = {"dedent", "cleandoc"}


def child_sources(tree: ast.Module, nodes) -> list[tuple[Span, str]]:
    """(span, source) of each argument that follows a ``"-c"`` in a list, tuple or call, and of
    each read of a module-level string of several lines (a script the code writes to a file and
    runs: ``script.write_text(_CHILD)``, unsloth-zoo's compiler tests)."""
    values = _module_strings(tree)
    scripts = {k for k, v in values.items() if "\n" in v.strip()}
    out = []
    for n in nodes:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in scripts:
            out.append((span_of(n), values[n.id]))
        seq = n.elts if isinstance(n, (ast.List, ast.Tuple)) else getattr(n, "args", None)
        if not isinstance(n, (ast.List, ast.Tuple, ast.Call)) or not seq:
            continue
        for flag, arg in zip(seq, seq[1:]):
            if isinstance(flag, ast.Constant) and flag.value == "-c":
                text = _text(arg, values)
                read = isinstance(arg, ast.Name) and arg.id in scripts  # added as a read
                if text is not None and not read:
                    out.append((span_of(arg), text))
    return sorted(out)


def _module_strings(tree: ast.Module) -> dict[str, str]:
    out: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            t = stmt.targets[0]
            text = _text(stmt.value, {})
            if isinstance(t, ast.Name) and text is not None:
                out[t.id] = text
    return out


def _text(node, values: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return values.get(node.id)
    if isinstance(node, ast.Call) and len(node.args) == 1:
        f = node.func
        if (getattr(f, "attr", None) or getattr(f, "id", None)) in _DEDENT:
            return _text(node.args[0], values)
    return None


@functools.lru_cache(maxsize=256)
def cuda_in_source(text: str) -> str | None:
    """The first CUDA finding the audit makes in the source ``text`` ("RULE snippet"), else None
    (also where it is no Python)."""
    from audits import catalog, python_scan

    source = textwrap.dedent(text)
    try:
        parsed = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    if all(isinstance(x, ast.Expr) and isinstance(x.value, ast.Constant) for x in parsed.body):
        return None  # text that happens to parse (a word, a docstring): no program
    found, _errs = python_scan.scan_source(source.encode(), "child.py", catalog.load().rules)
    if not found:
        return None
    f = min(found, key=lambda x: (x.line, x.col))
    return f"{f.rule} {f.source.strip()[:50]}"
