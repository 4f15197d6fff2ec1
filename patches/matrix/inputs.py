"""Check a change to upstream's op database by its OpInfos' own checks, not by running tests.

    python -m patches.matrix inputs BEFORE AFTER [--devices cpu,trn] [--dtypes float32,bool]
                                    [--module NAME] [--json FILE] [--work DIR]

BEFORE and AFTER are two copies of a module of upstream's op database (the file as it is and as a
series leaves it): ``torch/testing/_internal/common_methods_invocations.py`` or an
``opinfo/definitions`` file, named by AFTER's path below ``torch/`` (else ``--module``, by default
``common_methods_invocations``). The functions that differ are found with ``ast``; every
OpInfo whose sample, reference or error inputs one of them makes is run on each device from both
copies (``patches.matrix.inputs_worker``, one booted subprocess per device): samples against CPU
as the matrix compares them, and each ``ErrorInput`` must raise the error it names. A change that
widens a CUDA-only branch shows here: samples that fail, error inputs whose expected message the
device does not give, samples a device no longer gets (coverage lost, reported, not a failure).

Exit codes: 0 no regression, 1 a regression (listed), 2 bad input. Absent devices are columns
with their reason, never a failure.
"""

from __future__ import annotations

import ast
import json
import tempfile
from pathlib import Path

from patches.common.runner import PROJECT_ROOT, boot_command, device_env, probe, run_logged, tail

WORKER = "patches.matrix.inputs_worker"
DB_MODULE = "torch.testing._internal.common_methods_invocations"
_FAILED = ("failed", "errors")
_ERR_FAILED = ("wrong", "none")


class InputsError(ValueError):
    """Bad input: a copy that does not parse."""


def _functions(source: str, label: str) -> dict[str, str]:
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise InputsError(f"{label}: does not parse: {e}") from None
    lines = source.splitlines()  # ast.get_source_segment splits the file anew for each call
    return {
        n.name: "\n".join(lines[n.lineno - 1 : n.end_lineno])
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def changed_functions(before: str, after: str) -> list[str]:
    """Module-level functions whose source differs between the copies (new or gone included)."""
    old, new = _functions(before, "before"), _functions(after, "after")
    return sorted(n for n in old.keys() | new.keys() if old.get(n) != new.get(n))


def module_name(path: Path) -> str:
    """The dotted name of a copy at ``.../torch/testing/_internal/...py``, else the op database's."""
    parts = path.resolve().with_suffix("").parts
    for i in range(len(parts) - 2):
        if parts[i : i + 3] == ("torch", "testing", "_internal"):
            return ".".join(parts[i:])
    return DB_MODULE


def run_device(
    device: str, dbs: dict[str, Path], module: str, funcs: list[str], dtypes: str, work: Path
) -> dict:
    """``{"result": ...}`` from the worker, ``{"absent": why}`` for a device that cannot boot, or
    ``{"error": why}`` for a worker that booted and then failed (a crash is no absence)."""
    info = probe(device, cwd=work, log=work / f"probe-{device}.log")
    if not info.available:
        return {"absent": info.detail}
    out, log = work / f"inputs-{device}.json", work / f"inputs-{device}.log"
    cmd = boot_command(device) + ["-m", WORKER, "--device", device, "--out", str(out)]
    cmd += ["--module", module]
    cmd += [f"--db={label}={path}" for label, path in dbs.items()]
    cmd += ["--funcs", ",".join(funcs), "--dtypes", dtypes]
    rc, _ = run_logged(cmd, PROJECT_ROOT, device_env(device, [PROJECT_ROOT]), 1800, log)
    if rc != 0 or not out.is_file():
        return {"error": f"worker exited {rc}: {tail(log, 3)}"}
    return {"result": json.loads(out.read_text())}


def _failures(cell: dict, keys) -> int:
    return sum(cell.get(k, 0) for k in keys)


def compare_device(result: dict) -> list[dict]:
    """One row per (op, what): before/after counts and the verdict."""
    before, after = result["dbs"]["before"], result["dbs"]["after"]
    rows = []
    for op in sorted(before.keys() | after.keys()):
        b, a = before.get(op, {}), after.get(op, {})
        for dtype in sorted(b.get("samples", {}).keys() | a.get("samples", {}).keys()):
            cb, ca = b.get("samples", {}).get(dtype, {}), a.get("samples", {}).get(dtype, {})
            rows.append(_row(op, f"samples {dtype}", cb, ca, "samples", _FAILED))
        rows.append(
            _row(
                op, "error inputs", b.get("errors", {}), a.get("errors", {}), "inputs", _ERR_FAILED
            )
        )
    return rows


def _row(op: str, what: str, before: dict, after: dict, count: str, failed) -> dict:
    fb, fa = _failures(before, failed), _failures(after, failed)
    nb, na = before.get(count, 0), after.get(count, 0)
    verdict = "regression" if fa > fb else "coverage lost" if na < nb else "ok"
    return {
        "op": op,
        "what": what,
        "before": {"count": nb, "failed": fb},
        "after": {"count": na, "failed": fa},
        "verdict": verdict,
        "message": after.get("message", "") if fa > fb else "",
    }


def _worker_failed(device: str, why: str) -> dict:
    none = {"count": 0, "failed": 0}
    return {
        "device": device,
        "op": "(worker)",
        "what": "the run",
        "before": none,
        "after": {"count": 0, "failed": 1},
        "verdict": "regression",
        "message": why,
    }


def check(
    before: Path,
    after: Path,
    devices: list[str],
    dtypes: str,
    work: Path | None = None,
    module: str | None = None,
) -> dict:
    """The report: changed functions, per device its rows (or why it is absent), regressions."""
    funcs = changed_functions(before.read_text(), after.read_text())
    module = module or module_name(after)
    report = {"module": module, "functions": funcs, "devices": {}, "regressions": []}
    if not funcs:
        return report
    with tempfile.TemporaryDirectory(prefix="hn-inputs-") as tmp:
        folder = Path(work or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        dbs = {"before": before.resolve(), "after": after.resolve()}
        for dev in devices:
            ran = run_device(dev, dbs, module, funcs, dtypes, folder)
            if "result" not in ran:
                report["devices"][dev] = ran
                if "error" in ran:
                    report["regressions"].append(_worker_failed(dev, ran["error"]))
                continue
            rows = compare_device(ran["result"])
            report["devices"][dev] = {"rows": rows}
            report["regressions"] += [
                {"device": dev, **r} for r in rows if r["verdict"] == "regression"
            ]
    return report


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render(report: dict) -> str:
    """Markdown: the changed functions, a row per (device, op, what), an absent device's or a
    failed worker's reason."""
    lines = [
        f"`{report['module']}`: changed functions: {', '.join(report['functions']) or 'none'}",
        "",
    ]
    lines += ["| device | op | what | before (n / failed) | after (n / failed) | verdict |"]
    lines += ["|---|---|---|---|---|---|"]
    for dev, info in report["devices"].items():
        if "rows" not in info:
            why = f"absent: {info['absent']}" if "absent" in info else f"error: {info['error']}"
            lines.append(f"| {dev} | | | | | {_cell(why)} |")
            continue
        for r in info["rows"]:
            b, a = r["before"], r["after"]
            note = _cell(f"{r['verdict']}" + (f": {r['message']}" if r["message"] else ""))
            lines.append(
                f"| {dev} | {r['op']} | {r['what']} | {b['count']} / {b['failed']} "
                f"| {a['count']} / {a['failed']} | {note} |"
            )
    n = len(report["regressions"])
    lines += ["", f"{n} regression(s)" if n else "no regression"]
    return "\n".join(lines) + "\n"
