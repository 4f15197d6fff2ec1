"""YAML: the same document as JSON."""

from __future__ import annotations

import yaml

from ..model import Report

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def render(report: Report) -> str:
    return yaml.dump(
        report.to_dict(), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120
    )
