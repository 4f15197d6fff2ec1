"""CPU behaviour oracle: a neutralisation must not change what the changed code does on CPU.

During the before and the after CPU runs, the pytest plugin ``hn_oracle_plugin`` records every
call, made in a test, of each function that contains a hunk (``targets``): what it returned
(tensors: dtype, shape, strides, device, layout, a digest of the values, and which tensor argument
shares its storage) or raised. ``compare`` joins the two recordings on (test, function, call
index) and reports, per hunk, every call whose outcome differs, naming the test and the call.

A hunk at module level, or inside a function nested in another function, is observed through the
outermost function that contains it (module-level code is not observed: the report says so).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from patches.validate import hunks as hunkcov

PLUGIN = "hn_oracle_plugin"
TENSOR_FIELDS = ("dtype", "shape", "stride", "device", "layout", "requires_grad", "values")
MAX_LISTED = 20  # differences listed per hunk (the count is always complete)


def _enclosing(tree: ast.Module, line: int) -> list[ast.AST]:
    """The def/class nodes containing ``line``, outermost first."""
    chain: list[ast.AST] = []
    node: ast.AST = tree
    while True:
        inner = None
        for child in ast.iter_child_nodes(node):
            start, end = getattr(child, "lineno", None), getattr(child, "end_lineno", None)
            if start is not None and end is not None and start <= line <= end:
                inner = child
                break
        if inner is None:
            return chain
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            chain.append(inner)
        node = inner


def qualname_at(tree: ast.Module, line: int) -> str | None:
    """The qualified name of the outermost function containing ``line`` (``f``, ``C.m``), or
    None at module or class level."""
    names = []
    for node in _enclosing(tree, line):
        names.append(node.name)
        if not isinstance(node, ast.ClassDef):
            return ".".join(names)
    return None


def targets(series_hunks: list[hunkcov.Hunk], root: Path) -> dict[str, dict]:
    """{hunk key: {"targets": [{"path", "qualname"}], "note": why not observed}} for the
    Python hunks of a series, read from the files after the series (``root``)."""
    trees: dict[str, ast.Module | None] = {}
    out: dict[str, dict] = {}
    for h in series_hunks:
        if not h.path.endswith(".py") or not h.statements:
            continue
        if h.path not in trees:
            try:
                trees[h.path] = ast.parse((root / h.path).read_text(encoding="utf-8"))
            except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
                trees[h.path] = None
        tree = trees[h.path]
        names = (
            sorted({q for q in (qualname_at(tree, ln) for ln in h.statements) if q}) if tree else []
        )
        entry: dict = {"targets": [{"path": h.path, "qualname": q} for q in names]}
        if len(names) < len({ln for ln in h.statements}) and not names:
            entry["note"] = "module-level code: not observed"
        elif any(q.count(".") > 1 for q in names):
            entry["note"] = "a method of a nested class: not observed"
        out[h.key()] = entry
    return out


def write_spec(path: Path, hunk_targets: dict[str, dict], out: Path, max_calls: int = 20) -> bool:
    """The plugin's spec file; False when no hunk has a function to observe."""
    seen = {(t["path"], t["qualname"]) for e in hunk_targets.values() for t in e["targets"]}
    if not seen:
        return False
    spec = {
        "targets": [{"path": p, "qualname": q} for p, q in sorted(seen)],
        "out": str(out),
        "devices": ["cpu"],
        "max_calls": max_calls,
    }
    path.write_text(json.dumps(spec, indent=1))
    return True


def pytest_args(spec: Path) -> list[str]:
    return ["-p", PLUGIN, f"--hn-oracle={spec}"]


def load(out: Path, phase: str) -> dict[tuple[str, str, int], dict]:
    """{(test, target, call index): record} of one phase's recordings (all processes)."""
    calls: dict[tuple[str, str, int], dict] = {}
    for f in sorted(Path(out).glob(f"oracle-{phase}-*.jsonl")):
        for line in f.read_text(errors="replace").splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue  # a line cut short by a kill
            calls[(r["test"], r["target"], r["call"])] = r
    return calls


def _shares(d: dict) -> str:
    s = d.get("shares_storage_with") or []
    return f"shares storage with {', '.join(s)}" if s else "its own storage"


def value_diff(b: dict, a: dict, where: str = "result") -> list[str]:
    """What differs between two described values, as short phrases."""
    if b.get("type") != a.get("type"):
        return [f"{where}: {b.get('type')} -> {a.get('type')}"]
    if "dtype" in b:
        out = [
            f"{where}.{k}: {b.get(k)} -> {a.get(k)}" if k != "values" else f"{where}: values differ"
            for k in TENSOR_FIELDS
            if b.get(k) != a.get(k)
        ]
        if b.get("shares_storage_with") != a.get("shares_storage_with"):
            out.append(f"{where}: {_shares(b)} -> {_shares(a)}")
        return out
    if "items" in b:
        if b.get("len") != a.get("len"):
            return [f"{where}: length {b.get('len')} -> {a.get('len')}"]
        bi, ai = b["items"], a["items"]
        keys = list(bi) if isinstance(bi, dict) else range(len(bi))
        if isinstance(bi, dict) and set(bi) != set(ai):
            return [f"{where}: keys differ"]
        return [x for k in keys for x in value_diff(bi[k], ai[k], f"{where}[{k}]")]
    if b.get("repr") != a.get("repr"):
        return [f"{where}: {b.get('repr')} -> {a.get('repr')}"]
    return []


def _outcome(r: dict) -> str:
    if "raised" in r:
        return f"raised {r['raised']}({r.get('message', '')[:80]!r})"
    v = r["returned"]
    if "dtype" in v:
        return f"returned {v['type']}({v['dtype']}, {v['shape']}, {_shares(v)})"
    return f"returned {v.get('type')}"


def call_diff(b: dict, a: dict) -> list[str]:
    if ("raised" in b) != ("raised" in a):
        return [f"{_outcome(b)} -> {_outcome(a)}"]
    if "raised" in b:
        if (b["raised"], b.get("message")) != (a["raised"], a.get("message")):
            return [f"{_outcome(b)} -> {_outcome(a)}"]
        return []
    sb, sa = b.get("self_after") or {}, a.get("self_after") or {}
    state = [
        f"self.{k}: {sb.get(k, '(unset)')} -> {sa.get(k, '(unset)')}"
        for k in sorted(set(sb) | set(sa))
        if sb.get(k) != sa.get(k)
    ]
    return value_diff(b["returned"], a["returned"]) + state


def compare(out: Path, hunk_targets: dict[str, dict], tests: set[str] | None = None) -> dict:
    """{hunk key: {"calls": N, "differences": [...], "functions": [...], "note"?}} comparing
    the before and after recordings in ``out``; ``tests``: only those (the ones run in both)."""
    before, after = load(out, "before"), load(out, "after")
    counts: dict[str, dict[tuple[str, str], list[int]]] = {"before": {}, "after": {}}
    for phase, calls in (("before", before), ("after", after)):
        for test, target, idx in calls:
            c = counts[phase].setdefault((test, target), [0])
            c[0] = max(c[0], idx)
    result = {}
    for key, entry in hunk_targets.items():
        names = {f"{t['path']}::{t['qualname']}" for t in entry["targets"]}
        diffs, n = [], 0
        for k in sorted(set(before) | set(after)):
            test, target, idx = k
            if target not in names or (tests is not None and test not in tests):
                continue
            n += 1
            if k in before and k in after:
                what = call_diff(before[k], after[k])
                if what:
                    diffs.append(_diff(test, target, idx, before[k]["args"], what))
        for pair in sorted(set(counts["before"]) | set(counts["after"])):
            if pair[1] not in names or (tests is not None and pair[0] not in tests):
                continue
            nb = counts["before"].get(pair, [0])[0]
            na = counts["after"].get(pair, [0])[0]
            if nb != na:
                diffs.append(_diff(pair[0], pair[1], 0, "", [f"called {nb} time(s) -> {na}"]))
        result[key] = {
            "functions": sorted(names),
            "calls": n,
            "differences": diffs,
            **({"note": entry["note"]} if entry.get("note") else {}),
        }
    return result


def _diff(test: str, target: str, idx: int, args: str, what: list[str]) -> dict:
    return {"test": test, "function": target, "call": idx, "args": args, "what": what}


def cell(entry: dict) -> str:
    """``clean (45 calls)`` / ``**3 differences**`` / ``not observed``, for tables."""
    o = entry.get("oracle")
    if o is None:
        return "not observed"
    if not o["functions"]:
        return o.get("note", "not observed")
    if o["differences"]:
        return f"**{len(o['differences'])} difference(s)**"
    return f"clean ({o['calls']} calls)" if o["calls"] else "not called"


def render_markdown(entries: list[dict], limit: int = MAX_LISTED) -> list[str]:
    """Markdown lines listing every hunk whose functions behave differently on CPU."""
    flagged = [e for e in entries if e.get("oracle", {}).get("differences")]
    if not flagged:
        return []
    lines = ["**CPU behaviour changed** (before -> after, the same call in the same test):", ""]
    for e in flagged:
        diffs = e["oracle"]["differences"]
        lines.append(f"- {e['patch']} #{e['hunk']} (`{e['path']}`): {len(diffs)} call(s)")
        for d in diffs[:limit]:
            call = f"call {d['call']}" if d["call"] else "calls"
            args = f" ({d['args']})" if d["args"] else ""
            func = d["function"].split("::")[-1]
            lines.append(f"  - `{d['test']}`, {func} {call}{args}: {'; '.join(d['what'])}")
        if len(diffs) > limit:
            lines.append(f"  - ... and {len(diffs) - limit} more (validation.json)")
    return lines
