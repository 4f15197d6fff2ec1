"""All views of the matrix into one folder: matrix.json, .md, .junit.xml, .html."""

from __future__ import annotations

import json
from pathlib import Path

from patches.matrix.report.html import render_html
from patches.matrix.report.junit import to_junit
from patches.matrix.report.markdown import to_markdown


def write_outputs(data: dict, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "matrix.json": json.dumps(data, indent=1) + "\n",
        "matrix.md": to_markdown(data),
        "matrix.junit.xml": to_junit(data),
        "matrix.html": render_html(data),
    }
    paths = []
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
        paths.append(out / name)
    return paths
