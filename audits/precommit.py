"""``hn-precommit [--baseline FILE] FILE...``: the audit as a pre-commit hook.

Scans the repository (through ``audits.scan``: same configuration, cache and rules), keeps the
findings and file errors in the files given (what pre-commit passes: the staged files), drops
those already in the committed baseline, prints one ``path:line:col: RULE message`` line each and
exits 1 when any is left. A missing baseline is a usage error (exit 2): create one with
``hn-scan . -f json -o .hwneutral-baseline.json``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from audits import scan


def main(argv: list[str] | None = None) -> int:
    p = scan.OneLineParser(prog="hn-precommit", description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="*", help="files to check (paths as pre-commit passes them)")
    p.add_argument("--baseline", metavar="OLD.json", help="findings already accepted")
    p.add_argument("--root", default=".", help="repository root (default: .)")
    a = p.parse_args(argv)
    if a.baseline and not os.path.isfile(a.baseline):
        print(
            f"error: baseline {a.baseline} not found "
            f"(create it: hn-scan {a.root} -f json -o {a.baseline})",
            file=sys.stderr,
        )
        return 2
    wanted = {os.path.relpath(os.path.abspath(f), os.path.abspath(a.root)) for f in a.files}
    wanted = {w.replace(os.sep, "/") for w in wanted}
    if not wanted:
        return 0
    with tempfile.TemporaryDirectory(prefix="hn-precommit-") as tmp:
        out = os.path.join(tmp, "report.json")
        args = [a.root, "-f", "json", "-o", out, "--no-progress"]
        rc = scan.main(args + (["--baseline", a.baseline] if a.baseline else []))
        if rc != 0:
            return rc
        with open(out, encoding="utf-8") as fh:
            report = json.load(fh)
    found = [f for f in report["findings"] if f["path"] in wanted]
    errors = [e for e in report["errors"] if e["path"] in wanted]
    for f in found:
        print(f"{f['path']}:{f['line']}:{f['col']}: {f['rule']} {f['message']}")
    for e in errors:
        print(f"{e['path']}: error: {e['reason']} {e.get('detail', '')}".rstrip())
    if found:
        print(
            f"hwneutral: {len(found)} new CUDA-specific finding(s); fix them, suppress one with "
            "`# hn: ignore[RULE]`, or accept them by regenerating the baseline",
            file=sys.stderr,
        )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
