"""Prove a patch series: the same tests before and after it, on every device, in scratch copies.

    python -m patches.validate --tree PATH --series DIR [--devices cpu,trn[,cuda]] [--tests ...]

The user's tree is never touched: ``before/`` and ``after/`` are scratch clones (``git clone
--shared`` of HEAD, or a copy when the tree is not a git checkout); the series goes onto
``after/`` with ``git am`` (mbox patches) or ``git apply``. ``--tree installed`` validates the
installed torch through a shadow package (see patches.validate.shadow). Each (device, phase) runs in its
own pytest subprocess (see patches.common.runner). A device that cannot boot is an ``absent`` column.

Exit codes: 0 no regression; 1 at least one regression; 2 bad input or the series does not apply.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from patches.common.cli import ArgumentParser, UsageError, fail
from patches.validate import selection
from patches.validate.args import check_args
from patches.validate import shadow
from patches.common.gitutil import GitError, dirty_paths, git
from patches.common.outcome import CHANGES, Comparison, Outcome, compare, generic_id
from patches.common.runner import RunResult, probe_all, run_tests

REPORT_SCHEMA = 1
COPY_IGNORE = shutil.ignore_patterns(
    ".git", "__pycache__", ".venv", "venv", ".pytest_cache", "*.egg-info", ".mypy_cache"
)


class ValidateError(RuntimeError):
    """Bad input or a series that does not apply: exit 2 with this message."""


# ---------------------------------------------------------------------------- workspaces


def _is_git_checkout(tree: Path) -> bool:
    return (tree / ".git").exists()


def make_workspace(
    tree: Path | None,
    dest: Path,
    rev: str,
    kind: str,
    shadow_paths: list[str],
    tests: list[Path],
    test_root: Path | None,
) -> None:
    """Create one scratch workspace (``before`` or ``after``) from the tree, unpatched."""
    if kind == "git":
        git("clone", "-q", "--shared", "--no-checkout", str(tree), str(dest), cwd=dest.parent)
        git("checkout", "-q", "--detach", rev, cwd=dest)
    elif kind == "copy":
        shutil.copytree(tree, dest, symlinks=True, ignore=COPY_IGNORE)
    else:  # installed torch: a shadow package plus copies of the test files
        dest.mkdir()
        shadow.build_shadow(shadow.installed_site(), dest, shadow_paths)
        for t in tests:
            rel = t.resolve().relative_to(test_root) if test_root else Path(t.name)
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(t, dest / rel)


def apply_series(ws: Path, patches: list[Path], kind: str) -> list[str]:
    """Apply ``patches`` in order onto ``ws``; return warnings. Raises ValidateError on failure."""
    warnings = []
    for p in patches:
        text = p.read_text(errors="replace")
        is_mbox = text.startswith("From ")
        if kind == "git" and is_mbox:
            proc = git(
                "am",
                "--keep-non-patch",
                "--whitespace=nowarn",
                str(p.resolve()),
                cwd=ws,
                check=False,
            )
            if proc.returncode:
                git("am", "--abort", cwd=ws, check=False)
                raise ValidateError(
                    f"{p.name} does not apply (git am): {(proc.stdout + proc.stderr).strip()}"
                )
            continue
        args = ["apply", "--whitespace=nowarn"]
        if kind == "installed":
            created = set(selection.created_paths(text))
            for rel in selection.touched_paths(text):
                if not (ws / rel).exists() and rel not in created:
                    args.append(f"--exclude={rel}")
                    warnings.append(
                        f"{p.name}: {rel} is neither installed nor given with "
                        f"--tests; that part of the patch is not validated"
                    )
        proc = git(*args, str(p.resolve()), cwd=ws, check=False)
        if proc.returncode:
            raise ValidateError(
                f"{p.name} does not apply (git apply): {(proc.stdout + proc.stderr).strip()}"
            )
    return warnings


# ---------------------------------------------------------------------------- the run


def validate(
    tree: str,
    series: str,
    devices: list[str],
    tests: list[str] | None = None,
    *,
    rev: str = "HEAD",
    test_root: str | None = None,
    plugins: dict[str, str] | None = None,
    scratch: str | None = None,
    keep: bool = False,
    timeout: float = 1800,
    pytest_args: list[str] = (),
    log=None,
) -> dict:
    """Run the whole validation; return the JSON-able report."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    t0 = time.monotonic()
    patches = selection.series_files(Path(series))
    texts = [p.read_text(errors="replace") for p in patches]
    touched = list(dict.fromkeys(t for text in texts for t in selection.touched_paths(text)))
    if not touched:
        raise ValidateError(f"{series}: no file changes found in the series")
    warnings: list[str] = []
    explicit = [Path(t) for t in tests or []]

    if tree == "installed":
        kind, tree_path = "installed", None
        if not explicit and not any(selection.is_test_file(t) for t in touched):
            raise ValidateError("--tree installed has no checkout to search: pass --tests FILE")
        missing = [str(t) for t in explicit if not t.is_file()]
        if missing:
            raise ValidateError(f"test files not found: {', '.join(missing)}")
        troot = Path(test_root).resolve() if test_root else None
        if troot is None and explicit:
            troot = Path(os.path.commonpath([str(t.resolve().parent) for t in explicit]))
            troot = troot.parent if troot.name in ("test", "tests") else troot
        try:
            test_rels = [t.resolve().relative_to(troot).as_posix() for t in explicit]
        except ValueError:
            raise ValidateError(f"--tests must lie under --test-root {troot}") from None
    else:
        tree_path = Path(tree).resolve()
        if not tree_path.is_dir():
            raise ValidateError(f"--tree {tree}: not a directory")
        kind = "git" if _is_git_checkout(tree_path) else "copy"
        troot, test_rels = None, [t.as_posix() for t in explicit]
        if kind == "git":
            dirty = dirty_paths(tree_path)
            if dirty:
                warnings.append(
                    f"{len(dirty)} uncommitted change(s) in the tree are not part "
                    f"of the validation (it uses {rev}), e.g. {dirty[0]}"
                )

    work = Path(scratch) if scratch else Path(tempfile.mkdtemp(prefix="hn-validate-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        ws = {ph: work / ph for ph in ("before", "after")}
        for ph, d in ws.items():
            if d.exists():
                raise ValidateError(f"scratch folder {d} already exists")
            try:
                make_workspace(tree_path, d, rev, kind, touched, explicit, troot)
            except GitError as e:
                raise ValidateError(str(e)) from e
        warnings += apply_series(ws["after"], patches, kind)
        sel = selection.select_tests([ws["before"], ws["after"]], touched, test_rels)
        if not sel.tests:
            raise ValidateError(
                "no tests selected: the series touches no test file and no test "
                "imports a touched module; pass --tests"
            )
        for rel, why in sel.unreadable.items():
            warnings.append(f"{rel}: not searched for imports ({why})")
        for w in warnings:
            log(f"warning: {w}")
        log(
            f"validate: {len(patches)} patch(es), {len(sel.tests)} test file(s), "
            f"devices {','.join(devices)}, scratch {work}"
        )

        plugins = plugins or {}
        runs: list[RunResult] = []
        outcomes: list[Outcome] = []
        infos = probe_all(devices, work=work, plugins=plugins, log=log)
        for dev in devices:
            if not infos[dev].available:
                continue
            for ph in ("before", "after"):
                present = [t for t in sel.tests if (ws[ph] / t).is_file()]
                if not present:
                    continue
                r = run_tests(
                    ws[ph],
                    present,
                    dev,
                    ph,
                    workdir=work / "runs",
                    plugin=plugins.get(dev),
                    timeout=timeout,
                    pytest_args=pytest_args,
                )
                runs.append(r)
                outcomes += r.outcomes
                log(f"  {dev} {ph}: {len(r.outcomes)} tests in {r.duration:.1f}s (rc {r.rc})")
        comps = compare(outcomes)
        summary = {c: sum(1 for x in comps if x.change == c) for c in CHANGES}
        summary["by_device"] = {
            d: {c: sum(1 for x in comps if x.device == d and x.change == c) for c in CHANGES}
            for d in devices
        }
        return {
            "schema": REPORT_SCHEMA,
            "tool": "patches.validate",
            "tree": tree if tree == "installed" else str(tree_path),
            "kind": kind,
            "rev": rev,
            "series": [str(p) for p in patches],
            "touched": touched,
            "devices": {d: infos[d].to_dict() for d in devices},
            "selection": sel.to_dict(),
            "warnings": warnings,
            "summary": summary,
            "comparisons": [c.to_dict() for c in comps],
            "outcomes": [o.to_dict() for o in outcomes],
            "runs": [r.to_dict() for r in runs],
            "scratch": str(work) if keep else None,
            "duration_s": round(time.monotonic() - t0, 2),
        }
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------------------- views


def rows(report: dict) -> list[tuple[str, str, dict[str, Comparison]]]:
    """(generic test id, worst change, {device: Comparison}) sorted regressions first."""
    table: dict[str, dict[str, Comparison]] = {}
    for d in report["comparisons"]:
        c = Comparison(**d)
        table.setdefault(generic_id(c.test, c.device), {})[c.device] = c
    order = {"regression": 0, "gain": 1, "unchanged": 2}
    out = []
    for test, cells in table.items():
        worst = min((c.change for c in cells.values()), key=order.__getitem__)
        out.append((test, worst, cells))
    out.sort(key=lambda r: (order[r[1]], r[0]))
    return out


def _cell(report: dict, dev: str, c: Comparison | None) -> str:
    if not report["devices"][dev]["available"]:
        return "absent"
    if c is None:
        return "-"
    return c.before if c.before == c.after else f"{c.before} -> {c.after}"


def render_markdown(report: dict) -> str:
    devs = list(report["devices"])
    s = report["summary"]
    lines = [
        f"**patches.validate**: {s['regression']} regression(s), {s['gain']} gain(s), "
        f"{s['unchanged']} unchanged; devices: "
        + ", ".join(
            f"{d} ({'absent: ' + i['detail'] if not i['available'] else 'ok'})"
            for d, i in report["devices"].items()
        ),
        "",
        "| test | change | " + " | ".join(devs) + " |",
        "|---|---|" + "---|" * len(devs),
    ]
    for test, worst, cells in rows(report):
        lines.append(
            f"| `{test}` | {worst} | "
            + " | ".join(_cell(report, d, cells.get(d)) for d in devs)
            + " |"
        )
    regs = [c for c in report["comparisons"] if c["change"] == "regression"]
    if regs:
        lines += ["", "Regressions:"]
        lines += [
            f"- `{c['test']}` on {c['device']}: {c['before']} -> {c['after']}"
            + (f" ({c['message']})" if c["message"] else "")
            for c in regs
        ]
    return "\n".join(lines) + "\n"


def render_table(report: dict, console) -> None:
    from rich.table import Table

    style = {"regression": "bold red", "gain": "green", "unchanged": ""}
    devs = list(report["devices"])
    t = Table(title="patches.validate: before -> after per device")
    t.add_column("test", overflow="fold")
    t.add_column("change")
    for d in devs:
        info = report["devices"][d]
        t.add_column(d if info["available"] else f"{d} (absent)")
    for test, worst, cells in rows(report):
        t.add_row(
            test,
            f"[{style[worst]}]{worst}[/]" if style[worst] else worst,
            *[
                (
                    f"[{style[cells[d].change]}]{_cell(report, d, cells[d])}[/]"
                    if d in cells and style[cells[d].change]
                    else _cell(report, d, cells.get(d))
                )
                for d in devs
            ],
        )
    console.print(t)
    for d, info in report["devices"].items():
        if not info["available"]:
            console.print(f"[dim]{d}: absent: {info['detail']}[/]")


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(
        prog="python -m patches.validate",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--tree",
        required=True,
        help="the project checkout the series applies to, or 'installed' (torch)",
    )
    ap.add_argument(
        "--series",
        required=True,
        help="series folder (quilt 'series' file or *.patch) or one patch/mbox file",
    )
    ap.add_argument("--devices", default="cpu,trn", help="comma list (default cpu,trn)")
    ap.add_argument(
        "--tests",
        action="append",
        default=[],
        help="test files to run instead of the automatic selection (repeatable, "
        "comma lists allowed); relative to --tree, or paths with --tree installed",
    )
    ap.add_argument(
        "--test-root",
        help="with --tree installed: the folder the series' test "
        "paths are relative to (default: the folder holding the tests' test/ dir)",
    )
    ap.add_argument("--rev", default="HEAD", help="git revision the series applies to")
    ap.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="DEVICE=MODULE",
        help="module that registers a PrivateUse1 DEVICE (trn=kernels.trn built in)",
    )
    ap.add_argument(
        "--format",
        choices=("auto", "table", "json", "markdown"),
        default="auto",
        help="stdout format; auto = table on a TTY, JSON otherwise",
    )
    ap.add_argument("-o", "--output", help="also write the JSON report to this file")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per pytest run")
    ap.add_argument("--pytest-arg", action="append", default=[], help="extra pytest argument")
    ap.add_argument("--scratch", help="scratch folder (default: a new temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    a = ap.parse_args(argv)
    try:  # bad values are refused here, before any clone, device run or output
        plugins, devices = check_args(a)
    except UsageError as e:
        return fail(e)
    try:
        tests = [t for item in a.tests for t in item.split(",") if t]
        report = validate(
            a.tree,
            a.series,
            devices,
            tests,
            rev=a.rev,
            test_root=a.test_root,
            plugins=plugins,
            scratch=a.scratch,
            keep=a.keep,
            timeout=a.timeout,
            pytest_args=a.pytest_arg,
        )
    except (ValidateError, selection.SeriesError, shadow.ShadowError, OSError) as e:
        return fail(e)
    if a.output:
        Path(a.output).write_text(json.dumps(report, indent=2) + "\n")
    fmt = a.format
    if fmt == "auto":
        fmt = "table" if sys.stdout.isatty() else "json"
    if fmt == "json":
        print(json.dumps(report, indent=2))
    elif fmt == "markdown":
        print(render_markdown(report), end="")
    else:
        from rich.console import Console

        render_table(report, Console())
    s = report["summary"]
    print(
        f"validate: {s['regression']} regression(s), {s['gain']} gain(s), "
        f"{s['unchanged']} unchanged in {report['duration_s']}s",
        file=sys.stderr,
    )
    for c in report["comparisons"]:
        if c["change"] == "regression":
            print(
                f"REGRESSION {c['device']}: {c['test']} {c['before']} -> {c['after']}",
                file=sys.stderr,
            )
    return 1 if s["regression"] else 0


if __name__ == "__main__":
    sys.exit(main())
