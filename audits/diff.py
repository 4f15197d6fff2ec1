"""``python -m audits.scan diff OLD.json NEW.json``: what changed between two reports."""

from __future__ import annotations

import json
from dataclasses import asdict

from .baseline import split
from .model import Report


def diff_reports(old: Report, new: Report) -> dict:
    fresh, existing, fixed = split(old.findings, new.findings)
    return {
        "old_root": old.root,
        "new_root": new.root,
        "summary": {"new": len(fresh), "fixed": len(fixed), "existing": len(existing)},
        "new": [asdict(f) for f in fresh],
        "fixed": [asdict(f) for f in fixed],
    }


def render(d: dict, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(d, indent=2) + "\n"
    s = d["summary"]
    out = [f"{s['new']} new, {s['fixed']} fixed, {s['existing']} existing"]
    if fmt == "markdown":
        out = [f"**{out[0]}**", ""]
        for title, key in (("New", "new"), ("Fixed", "fixed")):
            if d[key]:
                out += [f"### {title}", "", "| rule | location | source |", "|---|---|---|"]
                out += [
                    f"| {f['rule']} | `{f['path']}:{f['line']}` | `{_cell(f['source'])}` |"
                    for f in d[key]
                ]
                out.append("")
        return "\n".join(out) + "\n"
    for sign, key in (("+", "new"), ("-", "fixed")):
        out += [
            f"{sign} {f['path']}:{f['line']}:{f['col']}: {f['rule']} {f['source']}" for f in d[key]
        ]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
