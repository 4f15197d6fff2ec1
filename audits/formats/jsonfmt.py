"""JSON: the canonical serialisation (Report.to_dict), plus each finding's rule docs URL."""
from __future__ import annotations

import json

from ..model import Report


def render(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=1, ensure_ascii=False) + "\n"
