"""The matrix as one self-contained HTML page: op x (device, dtype) heat map with a filter box.

Everything is inline (CSS, a few lines of JS, the data as a JSON island): it opens from disk with
no server and no network. The table is rendered here, so the page shows the data even with
scripts off; the script only filters rows (op name substring and status).
"""

from __future__ import annotations

import json
from html import escape

from patches.matrix.report.grid import pivot

COLORS = {
    "pass": "#2e7d32",
    "fail": "#c62828",
    "error": "#6a1b9a",
    "xfail": "#ef6c00",
    "refused": "#0277bd",
    "skip": "#9e9e9e",
    "absent": "#e0e0e0",
}

_CSS = (
    """
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em} table{border-collapse:collapse} th,td{border:1px solid #ddd;padding:2px 6px}
th{background:#f5f5f5;position:sticky;top:0} td.c{text-align:center;color:#fff;min-width:4.5em}
td.op{font-family:monospace} .legend span{display:inline-block;padding:1px 8px;margin-right:4px;
color:#fff;border-radius:3px} #q{width:24em;padding:3px} .summary td{text-align:right}
"""
    + "".join(f"td.s-{k},.legend .s-{k}{{background:{v}}}" for k, v in COLORS.items())
    + "td.s-absent,.legend .s-absent{color:#555}"
)

_JS = """
const q=document.getElementById('q'), st=document.getElementById('st');
function apply(){const t=q.value.toLowerCase(), s=st.value; let n=0;
 for(const r of document.querySelectorAll('#m tbody tr')){
  const ok=r.dataset.op.toLowerCase().includes(t) && (!s || r.dataset.st.split(' ').includes(s));
  r.style.display=ok?'':'none'; n+=ok;}
 document.getElementById('n').textContent=n;}
q.addEventListener('input',apply); st.addEventListener('change',apply);
"""


def _td(op: str, k: tuple[str, str], c: dict) -> str:
    counts = f"{c['passed']}/{c['samples']}" if c["samples"] else ""
    tip = (
        f"{op} on {k[0]} {k[1]}: {c['status']}; {c['samples']} samples, "
        f"{c['passed']} passed, {c['failed']} failed, {c['errors']} errors, "
        f"{c['skipped']} skipped, {c.get('refused', 0)} refused; {c['duration']:.3f}s. {c['message']}"
    )
    return (
        f'<td class="c s-{escape(c["status"])}" title="{escape(tip)}">'
        f"{escape(c['status'])}<br><small>{counts}</small></td>"
    )


def _op_row(op: str, cells: dict, cols: list[tuple[str, str]]) -> str:
    tds = [_td(op, k, cells[k]) if k in cells else "<td></td>" for k in cols]
    seen = sorted({cells[k]["status"] for k in cols if k in cells})
    return (
        f'<tr data-op="{escape(op)}" data-st="{escape(" ".join(seen))}">'
        f'<td class="op">{escape(op)}</td>{"".join(tds)}</tr>'
    )


def _tests_table(data: dict) -> str:
    if not data["tests"]:
        return ""
    return (
        "<h2>Upstream test files</h2><table><tr><th>test</th><th>device</th><th>status"
        "</th></tr>"
        + "".join(
            f'<tr><td class="op">{escape(o["test"])}</td><td>{escape(o["device"])}</td>'
            f'<td class="c s-{escape(o["status"])}">{escape(o["status"])}</td></tr>'
            for o in data["tests"]
        )
        + "</table>"
    )


def render_html(data: dict) -> str:
    cols, rows = pivot(data)
    statuses = sorted({c["status"] for c in data["cells"]})
    head = "".join(f"<th>{escape(d)}<br>{escape(t)}</th>" for d, t in cols)
    body = [_op_row(op, cells, cols) for op, cells in rows.items()]
    summary = "".join(
        f"<tr><th>{escape(dev)}{'' if data['devices'][dev]['available'] else ' (absent)'}</th>"
        + "".join(f"<td>{data['summary'][dev].get(s, 0)}</td>" for s in statuses)
        + f"<td>{escape(data['devices'][dev]['detail'])}</td></tr>"
        for dev in data["devices"]
    )
    tests = _tests_table(data)
    legend = "".join(f'<span class="s-{s}">{s}</span>' for s in COLORS)
    options = "".join(f'<option value="{s}">{s}</option>' for s in statuses)
    # the raw data rides along for tools; "</" is escaped so it cannot close the script element
    island = json.dumps(data).replace("</", "<\\/")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>OpInfo conformance matrix</title><style>{_CSS}</style></head><body>
<h1>OpInfo conformance matrix</h1>
<p>Upstream <code>op_db</code> samples run on each device and compared with CPU
(<code>torch.testing.assert_close</code>). {len(rows)} ops, dtypes {escape(", ".join(data["dtypes"]))},
{data["duration_s"]} s.</p>
<table class="summary"><tr><th>device</th>{"".join(f"<th>{s}</th>" for s in statuses)}<th>detail</th></tr>
{summary}</table>
<p class="legend">{legend}</p>
<p><input id="q" type="search" placeholder="filter ops, e.g. linalg" aria-label="filter ops">
<select id="st" aria-label="status"><option value="">any status</option>{options}</select>
<span id="n">{len(rows)}</span> ops shown</p>
<table id="m"><thead><tr><th>op</th>{head}</tr></thead><tbody>
{"".join(body)}
</tbody></table>
{tests}
<script type="application/json" id="data">{island}</script>
<script>{_JS}</script>
</body></html>
"""
