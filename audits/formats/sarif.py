"""SARIF 2.1.0, as GitHub code scanning ingests it (github/codeql-action/upload-sarif).

Rules carry id, name, short/full description, help (text + markdown), helpUri and a default
level; results carry ruleId/ruleIndex, level, message, a physical location relative to
%SRCROOT% and a partial fingerprint (so alerts survive line moves). Unreadable/unparsable files
become tool execution notifications.
"""

from __future__ import annotations

import json
from typing import Sequence

from .. import __version__
from ..model import Finding, Report, Rule

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
DOCS = "https://github.com/hwneutral/hwneutral/blob/main/"
_LEVEL = {"safe": "note", "review": "warning", "manual": "warning"}


def _rule(r: Rule) -> dict:
    help_md = (
        f"**{r.title}**\n\n{r.rationale}\n\n"
        f"Replacement: `{r.replacement or 'none'}` (fix safety: {r.safety})\n\n"
        f"Before:\n```python\n{r.example_before}\n```\nAfter:\n```python\n{r.example_after}\n```"
    )
    return {
        "id": r.id,
        "name": r.name,
        "shortDescription": {"text": r.title},
        "fullDescription": {"text": r.rationale},
        "help": {
            "text": f"{r.rationale} Replacement: {r.replacement or 'none'}.",
            "markdown": help_md,
        },
        "helpUri": DOCS + r.url(),
        "defaultConfiguration": {"level": _LEVEL[r.safety]},
        "properties": {
            "category": r.category,
            "safety": r.safety,
            "tags": [r.category, r.language],
        },
    }


def render(report: Report, rules: Sequence[Rule]) -> str:
    used = {f.rule for f in report.findings}
    listed = [r for r in rules if r.id in used] + [r for r in rules if r.id not in used]
    index = {r.id: i for i, r in enumerate(listed)}
    notes = [
        {
            "level": "error" if e.reason in ("internal",) else "warning",
            "message": {"text": f"{e.reason}: {e.detail}"},
            "locations": [{"physicalLocation": {"artifactLocation": _artifact(e.path)}}],
        }
        for e in report.errors
    ]
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "hwneutral",
                        "version": __version__,
                        "informationUri": DOCS + "docs/audit.md",
                        "rules": [_rule(r) for r in listed],
                    }
                },
                "originalUriBaseIds": {
                    "%SRCROOT%": {"uri": "file://" + report.root.rstrip("/") + "/"}
                },
                "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notes}],
                "results": [_result(f, index) for f in report.findings],
                "properties": {"catalogVersion": report.catalog_version},
            }
        ],
    }
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def _artifact(path: str) -> dict:
    return {"uri": path, "uriBaseId": "%SRCROOT%"}


def _result(f: Finding, index: dict[str, int]) -> dict:
    region = {
        "startLine": f.line,
        "startColumn": f.col,
        "endLine": f.end_line,
        "endColumn": f.end_col,
        "snippet": {"text": f.source},
    }
    res = {
        "ruleId": f.rule,
        "level": _LEVEL.get(f.safety, "warning"),
        "message": {"text": f.message},
        "locations": [
            {"physicalLocation": {"artifactLocation": _artifact(f.path), "region": region}}
        ],
        "partialFingerprints": {"hwneutral/v1": f.fingerprint()},
        "properties": {
            "kind": f.kind,
            "subsystem": f.subsystem,
            "safety": f.safety,
            "replacement": f.replacement,
        },
    }
    if f.rule in index:
        res["ruleIndex"] = index[f.rule]
    return res
