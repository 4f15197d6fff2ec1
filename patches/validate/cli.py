"""Prove a patch series: the same tests before and after it, on every device, in scratch copies.

    python -m patches.validate --tree PATH --series DIR [--devices cpu,trn[,cuda]] [--tests ...]

The user's tree is never touched: ``before/`` and ``after/`` are scratch clones (``git clone
--shared`` of HEAD, or a copy when the tree is not a git checkout); the series goes onto
``after/`` with ``git am`` (mbox patches) or ``git apply``. ``--tree installed`` validates the
installed torch through a shadow package (see patches.validate.shadow). Each (device, phase) runs in its
own pytest subprocess (see patches.common.runner). A device that cannot boot is an ``absent`` column.

Exit codes: 0 no regression; 1 at least one regression, or a run that timed out or crashed
(``summary.incomplete``: no verdict on its device); 2 bad input or the series does not apply.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from patches.common import runpool
from patches.common.cli import ArgumentParser, UsageError, fail
from patches.common.gitutil import GitError, dirty_paths, git
from patches.common.outcome import CHANGES, Comparison, Outcome, compare, generic_id
from patches.common.runner import RunResult, probe, run_tests
from patches.validate import hunks as hunkcov
from patches.validate import selection, shadow
from patches.validate.args import check_args

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
                out = (proc.stdout + proc.stderr).strip()
                raise ValidateError(
                    f"{p.name} does not apply (git am){failed_hunk(text, out)}: {out}"
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
            out = (proc.stdout + proc.stderr).strip()
            raise ValidateError(
                f"{p.name} does not apply (git apply){failed_hunk(text, out)}: {out}"
            )
    return warnings


_FAILED_AT = re.compile(r"patch failed: (\S+):(\d+)")
_NO_FILE = re.compile(r"error: (\S+): (?:does not exist in index|No such file or directory)")


def failed_hunk(patch_text: str, git_output: str) -> str:
    """`` at FILE hunk #N (@@ ... @@)`` for git's "patch failed: FILE:LINE" (version skew)."""
    m = _FAILED_AT.search(git_output)
    if m:
        path, line = m.group(1), int(m.group(2))
        mine = [h for h in hunkcov.parse_patch(patch_text) if h.path == path]
        for i, h in enumerate(mine, 1):
            if h.old_start == line:
                return f" at {path} hunk #{i} ({h.header})"
        return f" at {path} line {line}"
    m = _NO_FILE.search(git_output)
    return f" at {m.group(1)} (file not found: version skew?)" if m else ""


def shard_tests(tests: list[str], shard: tuple[int, int], root: Path) -> list[str]:
    """Shard ``i`` of ``n`` (1-based) of the test files: the matrix's deterministic assignment
    (``patches.common.shard.assign``: largest first to the lightest shard, ties by name) with
    each file's size as its cost, so every machine computes the same split."""
    from patches.common.shard import assign

    i, n = shard
    files = sorted({t.split("::", 1)[0] for t in tests})
    sizes = {f: float((root / f).stat().st_size) if (root / f).is_file() else 1.0 for f in files}
    mine = set(assign(files, n, sizes)[i - 1])
    return [t for t in tests if t.split("::", 1)[0] in mine]


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
    workers: int = 0,
    coverage: bool = True,
    shard: tuple[int, int] | None = None,
    jobs: int = 0,
) -> dict:
    """Run the whole validation; return the JSON-able report.

    ``tests`` may carry a pytest selector after the file (``test_utils.py::TestCheckpoint``);
    ``workers`` > 1 runs each (device, phase) on that many pytest-xdist processes; ``coverage``
    records per-hunk device coverage of the after runs; ``shard`` = (i, n) runs the i-th of n
    deterministic shares of the selected test files; ``jobs`` (0: one per core, counting a
    run's xdist workers) is how many (device, phase) runs go at once (patches.common.runpool)."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    t0 = time.monotonic()
    patches = selection.series_files(Path(series))
    texts = [p.read_text(errors="replace") for p in patches]
    touched = list(dict.fromkeys(t for text in texts for t in selection.touched_paths(text)))
    if not touched:
        raise ValidateError(f"{series}: no file changes found in the series")
    warnings: list[str] = []
    selectors = {}  # test file -> the pytest node ids asked for in it (none: the whole file)
    for t in tests or []:
        f, sep, rest = t.partition("::")
        ids = selectors.setdefault(f, [])
        if sep:
            ids.append(rest)
    explicit = [Path(t) for t in selectors]

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
    node_args = {
        rel: [f"{rel}::{n}" for n in selectors[f]] or [rel] for rel, f in zip(test_rels, selectors)
    }

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
        all_tests = list(sel.tests)
        if shard:
            sel.tests = shard_tests(sel.tests, shard, ws["after"])
            log(f"shard {shard[0]}/{shard[1]}: {len(sel.tests)} of {len(all_tests)} test file(s)")
        for w in warnings:
            log(f"warning: {w}")
        log(
            f"validate: {len(patches)} patch(es), {len(sel.tests)} test file(s), "
            f"devices {','.join(devices)}, scratch {work}"
        )

        plugins = plugins or {}
        runs: list[RunResult] = []
        outcomes: list[Outcome] = []
        measured = [
            t
            for t in touched
            if t.endswith(".py") and not selection.is_test_file(t) and (ws["after"] / t).is_file()
        ]
        contexts: dict[str, dict] = {}
        cov_state: dict[str, str] = {}
        plan = []  # (device, phase, present node ids), in the report's order
        for dev in devices:
            for ph in ("before", "after"):
                present = [
                    n for t in sel.tests if (ws[ph] / t).is_file() for n in node_args.get(t, [t])
                ]
                if present:
                    plan.append((dev, ph, present))

        def job(dev: str, ph: str, present: list[str]):
            with_cov = coverage and ph == "after" and bool(measured)
            run = functools.partial(
                run_tests,
                ws[ph],
                present,
                dev,
                ph,
                workdir=work / "runs",
                plugin=plugins.get(dev),
                timeout=timeout,
                pytest_args=pytest_args,
                coverage_include=[ws[ph] / t for t in measured] if with_cov else (),
            )

            def go(boot_info: Path):
                lines = []
                r = run(workers=workers, boot_info=boot_info)
                if workers > 1 and r.rc not in (0, 1, 5, None):
                    # pytest-xdist itself failed (a worker that could not start, INTERNALERROR):
                    # that says nothing about the series; run once more in one process
                    lines.append(
                        f"  {dev} {ph}: xdist run failed (rc {r.rc}); rerunning in one process"
                    )
                    r = run(boot_info=boot_info)
                extra = f", timed out in {', '.join(r.running)}" if r.running else ""
                lines.append(
                    f"  {dev} {ph}: {len(r.outcomes)} tests in {r.duration:.1f}s (rc {r.rc}{extra})"
                )
                return r, lines

            return go

        infos, results = runpool.run_all(
            devices,
            [(dev, f"{ph}-{dev}", job(dev, ph, present)) for dev, ph, present in plan],
            slots=jobs or runpool.default_slots(workers if workers > 1 else 0),
            probe=lambda d: probe(d, cwd=work, plugin=plugins.get(d), log=work / f"probe-{d}.log"),
            log=log,
            records=work / "runs",
            # every device's before run first: the first run of a device is also its probe
            start_order=sorted(range(len(plan)), key=lambda i: (plan[i][1] != "before", i)),
        )
        for (dev, ph, _present), r in zip(plan, results):
            if r is None:  # the device is absent
                continue
            runs.append(r)
            outcomes += r.outcomes
            if coverage and ph == "after" and bool(measured):
                contexts[dev] = hunkcov.read_contexts(r.coverage_dir, ws[ph], set(measured))
                cov_state[dev] = "measured"
            elif ph == "after":
                cov_state[dev] = "not measured: --no-coverage" if not coverage else "not measured"
        cov_state = {  # in the devices' order, as the report has always listed them
            d: cov_state[d] if infos[d].available else f"absent: {infos[d].detail}"
            for d in devices
            if d in cov_state or not infos[d].available
        }
        comps = compare(outcomes)
        summary = {c: sum(1 for x in comps if x.change == c) for c in CHANGES}
        summary["by_device"] = {
            d: {c: sum(1 for x in comps if x.device == d and x.change == c) for c in CHANGES}
            for d in devices
        }
        series_hunks = hunkcov.series_hunks(patches)
        hunkcov.attach_statements(series_hunks, ws["after"])
        passing = {
            d: {
                o.test
                for o in outcomes
                if o.device == d and o.phase == "after" and o.status == "pass"
            }
            for d in devices
        }
        hunk_entries = hunkcov.hunk_coverage(
            series_hunks, contexts, passing, {d: cov_state.get(d, "not measured") for d in devices}
        )
        comp_dicts = [c.to_dict() for c in comps]
        for c in comp_dicts:  # name the hunks a regressed test ran: the patch to look at
            if c["change"] == "regression":
                c["hunks_run"] = [
                    h["key"]
                    for h in hunk_entries
                    if c["test"] in h["devices"].get(c["device"], {}).get("tests", ())
                ]
        # a run that timed out or crashed leaves tests absent: no verdict on its device
        summary["incomplete"] = [
            f"{r.device} {r.phase}: {r.incomplete}" for r in runs if r.incomplete
        ]
        summary["hunks"] = len(hunk_entries)
        summary["hunks_proven"] = {
            d: sum(1 for h in hunk_entries if d in h["proven_on"]) for d in devices
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
            "selection": {
                **sel.to_dict(),
                "node_ids": {t: node_args.get(t, [t]) for t in sel.tests},
                "shard": f"{shard[0]}/{shard[1]}" if shard else None,
                "all_tests": all_tests,
            },
            "pytest_args": list(pytest_args),
            "workers": workers,
            "coverage": {"enabled": coverage, "devices": cov_state, "measured_files": measured},
            "hunks": hunk_entries,
            "warnings": warnings,
            "summary": summary,
            "comparisons": comp_dicts,
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
        c = Comparison(**{k: d[k] for k in Comparison.__dataclass_fields__})
        table.setdefault(generic_id(c.test, c.device), {})[c.device] = c
    order = {"regression": 0, "gain": 1, "unchanged": 2}
    out = []
    for test, cells in table.items():
        worst = min((c.change for c in cells.values()), key=order.__getitem__)
        out.append((test, worst, cells))
    out.sort(key=lambda r: (order[r[1]], r[0]))
    return out


def display_id(test: str) -> str:
    """A collection failure reads as such (``test_x.py (collection error)``), not as a test."""
    if test.endswith("::<collection>"):
        return f"{test[: -len('::<collection>')]} (collection error)"
    return test


def _cell(report: dict, dev: str, c: Comparison | None) -> str:
    if not report["devices"][dev]["available"]:
        return "absent"
    if c is None:
        return "-"
    return c.before if c.before == c.after else f"{c.before} -> {c.after}"


def render_markdown(report: dict, hunks: bool = True) -> str:
    devs = list(report["devices"])
    s = report["summary"]
    lines = [
        f"**patches.validate**: {s['regression']} regression(s), {s['gain']} gain(s), "
        f"{s['unchanged']} unchanged; devices: "
        + ", ".join(
            f"{d} ({'absent: ' + i['detail'] if not i['available'] else 'ok'})"
            for d, i in report["devices"].items()
        ),
        *(
            [
                "",
                "**Incomplete** (no verdict: a regression cannot be ruled out where a run did not"
                " finish): " + "; ".join(s["incomplete"]),
            ]
            if s.get("incomplete")
            else []
        ),
        "",
        "| test | change | " + " | ".join(devs) + " |",
        "|---|---|" + "---|" * len(devs),
    ]
    for test, worst, cells in rows(report):
        lines.append(
            f"| `{display_id(test)}` | {worst} | "
            + " | ".join(_cell(report, d, cells.get(d)) for d in devs)
            + " |"
        )
    regs = [c for c in report["comparisons"] if c["change"] == "regression"]
    if regs:
        lines += ["", "Regressions:"]
        lines += [
            f"- `{display_id(c['test'])}` on {c['device']}: {c['before']} -> {c['after']}"
            + (f" ({c['message']})" if c["message"] else "")
            + (f"; it ran {', '.join(c['hunks_run'])}" if c.get("hunks_run") else "")
            for c in regs
        ]
    if hunks:
        lines += ["", *render_hunks_markdown(report)]
    return "\n".join(lines) + "\n"


def render_hunks_markdown(report: dict) -> list[str]:
    """Per-hunk device coverage: which added lines ran on which device, in how many tests."""
    devs = list(report["devices"])
    cov = report.get("coverage") or {}
    entries = report.get("hunks") or []
    if not cov.get("enabled"):
        return ["Hunk coverage: not measured (`--no-coverage`)."]
    proven = report["summary"].get("hunks_proven", {})
    lines = [
        f"**Hunk coverage** ({len(entries)} hunks; proven = an added line ran in a test that "
        "passes after the series: "
        + ", ".join(f"{d} {proven.get(d, 0)}/{len(entries)}" for d in devs)
        + ")",
        "",
        "| hunk | file | " + " | ".join(devs) + " |",
        "|---|---|" + "---|" * len(devs),
    ]
    for e in entries:
        lines.append(
            f"| {e['patch']} #{e['hunk']} `{e['header'].split('@@')[1].strip()}` "
            f"| `{e['path']}` | " + " | ".join(hunkcov.cell(e, d) for d in devs) + " |"
        )
    return lines


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
    if report.get("hunks"):
        h = Table(title="hunk coverage: tests that ran an added line, per device")
        h.add_column("hunk")
        h.add_column("file", overflow="fold")
        for d in devs:
            h.add_column(d)
        for e in report["hunks"]:
            h.add_row(
                f"{e['patch']} #{e['hunk']}",
                e["path"],
                *[hunkcov.cell(e, d).replace("**", "") for d in devs],
            )
        console.print(h)


def merge_main(argv: list[str]) -> int:
    """``python -m patches.validate merge SHARD.json ...``: one report from the shards."""
    from patches.validate import merge as merging

    ap = argparse.ArgumentParser(
        prog="python -m patches.validate merge", description=merging.__doc__.split("\n\n")[0]
    )
    ap.add_argument("reports", nargs="+", help="the JSON report (-o) of every shard")
    ap.add_argument("-o", "--output", help="write the merged JSON report here")
    ap.add_argument("--junit", help="write the merged JUnit XML here")
    ap.add_argument("--markdown", help="write the merged Markdown here")
    ap.add_argument("--format", choices=("json", "markdown"), default="markdown", help="stdout")
    a = ap.parse_args(argv)
    try:
        report = merging.merge(merging.load(a.reports))
    except merging.MergeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    write_outputs(report, a.output, a.junit, a.markdown)
    print(json.dumps(report, indent=2) if a.format == "json" else render_markdown(report), end="")
    return verdict(report)


def verdict(report: dict) -> int:
    """Exit code: 1 on a regression or a run that did not finish (no verdict), else 0."""
    s = report["summary"]
    for x in s.get("incomplete", ()):
        print(f"INCOMPLETE {x}", file=sys.stderr)
    return 1 if s["regression"] or s.get("incomplete") else 0


def write_outputs(report: dict, output=None, junit=None, markdown=None) -> None:
    from patches.validate import merge as merging

    if output:
        Path(output).write_text(json.dumps(report, indent=2) + "\n")
    if junit:
        Path(junit).write_text(merging.junit(report))
    if markdown:
        Path(markdown).write_text(render_markdown(report))


AUTO_XDIST_MIN_CORES = 4


def parse_workers(spec: str) -> int:
    """``auto`` -> every core this process may use, from 4 cores up; below that 0 (in the pytest
    process: each xdist worker imports torch and upstream's harness again, which on 2 cores
    costs more than it saves; docs/validation.md has the measurement). ``0``/``1`` -> no xdist."""
    if str(spec) == "auto":
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:
            cores = os.cpu_count() or 1
        return cores if cores >= AUTO_XDIST_MIN_CORES else 0
    try:
        n = int(spec)
    except ValueError:
        n = -1
    if n < 0:
        raise ValidateError(f"bad --workers {spec!r}: a number >= 0 or 'auto'")
    return n


def parse_jobs(spec: str) -> int:
    """``auto`` -> 0 (validate() then runs one per core, see runpool.default_slots); else N >= 1."""
    if str(spec) == "auto":
        return 0
    try:
        n = int(spec)
    except ValueError:
        n = 0
    if n < 1:
        raise ValidateError(f"bad --jobs {spec!r}: a number >= 1 or 'auto'")
    return n


def parse_shard(spec: str) -> tuple[int, int]:
    from patches.common.shard import ShardError, parse

    try:
        return parse(spec)
    except ShardError as e:
        raise ValidateError(f"--shard: {e}") from None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["merge"]:
        return merge_main(argv[1:])
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
    ap.add_argument("--junit", help="also write a JUnit XML view (one testsuite per device)")
    ap.add_argument("--markdown", help="also write the Markdown view (a PR's test plan)")
    ap.add_argument(
        "-n",
        "--workers",
        default="auto",
        help="pytest-xdist processes per run: a number or 'auto' (default: all cores "
        "from 4 cores up, else in the pytest process)",
    )
    ap.add_argument(
        "-j",
        "--jobs",
        default="auto",
        help="(device, phase) pytest runs at once: a number or 'auto' (default: one per core, "
        "a run on N xdist workers counting as N)",
    )
    ap.add_argument(
        "--no-coverage",
        action="store_true",
        help="skip per-hunk device coverage (coverage.py, one context per test)",
    )
    ap.add_argument(
        "--shard",
        help="I/N: run the I-th of N deterministic shares of the selected test files "
        "(join the shard reports with `python -m patches.validate merge`)",
    )
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
            workers=parse_workers(a.workers),
            coverage=not a.no_coverage,
            shard=parse_shard(a.shard) if a.shard else None,
            jobs=parse_jobs(a.jobs),
        )
    except (ValidateError, selection.SeriesError, shadow.ShadowError, OSError) as e:
        return fail(e)
    write_outputs(report, a.output, a.junit, a.markdown)
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
                f"REGRESSION {c['device']}: {c['test']} {c['before']} -> {c['after']}"
                + (f" (ran {', '.join(c['hunks_run'])})" if c.get("hunks_run") else ""),
                file=sys.stderr,
            )
    return verdict(report)


if __name__ == "__main__":
    sys.exit(main())
