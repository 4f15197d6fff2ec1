"""From coverage to checking: the verdict each hunk gets per device, and how it is shown.

Coverage says a hunk *ran*; it is **proven** on a device only when it is **checked** there (a
mutant of its added lines was killed by a test that ran it: patches.validate.mutation) and the
CPU behaviour oracle (patches.validate.oracle) saw no call of its functions behave differently
before and after the series. The other verdicts: **unchecked** (it ran, every mutant survived),
**unexercised** (no test ran it there), ``absent`` (no such device here), ``not checked``
(mutation off). patches.validate.run calls ``prepare_oracle`` before the runs, then
``attach_oracle``, ``run_mutation`` and ``finalize`` on the hunk entries.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Callable

from patches.validate import hunks as hunkcov
from patches.validate import mutation, oracle
from patches.validate.mutation import CHECKED, UNCHECKED, UNEXERCISED

NOT_CHECKED = "not checked"
VERDICTS = (CHECKED, UNCHECKED, UNEXERCISED)


def _series(patches: list[Path], after: Path) -> list[hunkcov.Hunk]:
    hs = hunkcov.series_hunks(patches)
    hunkcov.attach_statements(hs, after)
    return hs


def prepare_oracle(work: Path, patches: list[Path], after: Path) -> tuple[list[str], dict]:
    """(pytest arguments for the cpu runs, the hunks' targets); no arguments when no hunk lies
    in a function."""
    targets = oracle.targets(_series(patches, after), after)
    spec = work / "oracle.json"
    if not oracle.write_spec(spec, targets, work / "oracle"):
        return [], targets
    return oracle.pytest_args(spec), targets


def attach_oracle(entries: list[dict], work: Path, targets: dict, outcomes: list) -> None:
    """``entry["oracle"]``: the calls compared and their differences, over the tests that passed
    on cpu both before and after the series (a test that changed outcome is a regression or a
    gain already, and a new function has no behaviour before it to compare with)."""
    ran = {
        ph: {o.test for o in outcomes if o.device == "cpu" and o.phase == ph and o.status == "pass"}
        for ph in ("before", "after")
    }
    result = oracle.compare(work / "oracle", targets, ran["before"] & ran["after"])
    for e in entries:
        if e["key"] in result:
            e["oracle"] = result[e["key"]]


def run_mutation(
    after: Path,
    patches: list[Path],
    entries: list[dict],
    run: mutation.RunTests,
    opts: mutation.Options,
    files: list[str],
    log,
) -> dict:
    """The mutation check of every hunk (see patches.validate.mutation); the summary block."""
    texts = {p.name: p.read_text(errors="replace") for p in patches}
    return mutation.check_all(after, _series(patches, after), entries, texts, run, opts, files, log)


def _verdict(e: dict, dev: str, d: dict, mutated: bool) -> str:
    if d.get("state") != "measured":
        return d.get("state", "absent").split(":")[0]
    if not e.get("statements"):
        return "no executable new lines"
    if mutated:
        m = e.get("mutation", {}).get(dev)
        if m:
            return m["verdict"]
        return UNEXERCISED if not d["tests"] else UNCHECKED
    return UNEXERCISED if not d["tests"] else NOT_CHECKED


def finalize(entries: list[dict], devices: list[str], mutated: bool) -> dict:
    """Set each entry's ``verdicts`` and ``proven_on`` (checked, and no CPU behaviour change);
    return :func:`tally` of them."""
    for e in entries:
        flagged = bool(e.get("oracle", {}).get("differences"))
        e["verdicts"] = {dev: _verdict(e, dev, d, mutated) for dev, d in e["devices"].items()}
        e["proven_on"] = [dev for dev, v in e["verdicts"].items() if v == CHECKED and not flagged]
    return tally(entries, devices)


def tally(entries: list[dict], devices: list[str]) -> dict:
    """{"hunks_proven": {dev: n}, "verdicts": {dev: {verdict: n}}, "behaviour_changed": n}."""
    counts = {d: dict.fromkeys((*VERDICTS, NOT_CHECKED), 0) for d in devices}
    for e in entries:
        for dev, v in e.get("verdicts", {}).items():
            if v in counts.get(dev, {}):
                counts[dev][v] += 1
    return {
        "hunks_proven": {d: sum(1 for e in entries if d in e["proven_on"]) for d in devices},
        "verdicts": counts,
        "behaviour_changed": sum(1 for e in entries if e.get("oracle", {}).get("differences")),
    }


def verdict_cell(e: dict, dev: str) -> str:
    """``checked: 12 tests, `none-value` killed by `t`` / ``**unchecked**: ...`` / ...."""
    v = e.get("verdicts", {}).get(dev)
    if v is None:
        return hunkcov.cell(e, dev)
    d = e["devices"].get(dev, {})
    if v in (UNEXERCISED, UNCHECKED, NOT_CHECKED) and not d.get("tests"):
        return f"**{UNEXERCISED}**" if v == UNEXERCISED else v
    if v not in VERDICTS and v != NOT_CHECKED:
        return v
    n = f"{len(d['tests'])} tests ({len(d['passing_tests'])} passing)"
    m = e.get("mutation", {}).get(dev, {})
    killed = [x for x in m.get("mutants", []) if x["killed"]]
    if v == CHECKED:
        k = killed[0]
        return f"checked: {n}; `{k['operator']}` killed by `{k['killed_by']}`"
    if v == UNCHECKED:
        tried = len(m.get("mutants", []))
        why = f"{tried} mutant(s) survived" if tried else m.get("note", "no passing test")
        return f"**unchecked**: {n}; {why}"
    return f"{v}: {n}"


def _repro_node(e: dict, dev: str) -> str | None:
    m = e.get("mutation", {}).get(dev, {})
    killed = [x for x in m.get("mutants", []) if x["killed"]]
    if killed:
        return killed[0].get("node")
    return (m.get("nodes") or [None])[0]


def render_markdown(report: dict, command: Callable[[str, str], str] | None = None) -> list[str]:
    """The hunk verdict table, how to rerun each verdict, the CPU behaviour changes and the
    mutants tried. ``command(device, node id)``: the line that reruns one hunk's proof."""
    devs = list(report["devices"])
    entries = report.get("hunks") or []
    checks = report.get("checks") or {}
    proven = report["summary"].get("hunks_proven", {})
    bound = checks.get("mutation", {}).get("bound_text", "mutation check off (--mutants 0)")
    lines = [
        f"**Hunk verdicts** ({len(entries)} hunks; proven = checked, i.e. a mutant of the hunk's "
        "added lines was killed by a test that ran it, and no CPU behaviour change: "
        + ", ".join(f"{d} {proven.get(d, 0)}/{len(entries)}" for d in devs)
        + f"). Mutation bound: {bound}.",
        "",
        "| hunk | file | cpu behaviour | " + " | ".join(devs) + " |",
        "|---|---|---|" + "---|" * len(devs),
    ]
    for e in entries:
        lines.append(
            f"| {e['patch']} #{e['hunk']} `{e['header'].split('@@')[1].strip()}` | `{e['path']}` "
            f"| {oracle.cell(e)} | " + " | ".join(verdict_cell(e, d) for d in devs) + " |"
        )
    if command is not None:
        rerun = [
            f"- {e['patch']} #{e['hunk']} on {dev} ({e['verdicts'][dev]}): `{command(dev, node)}`"
            for e in entries
            for dev in devs
            if (node := _repro_node(e, dev))
        ]
        if rerun:
            lines += ["", "Rerun one hunk's proof (the test that ran it, on that device):", ""]
            lines += rerun
    diff_lines = oracle.render_markdown(entries)
    if diff_lines:
        lines += ["", *diff_lines]
    lines += _mutant_lines(entries, devs)
    return lines


def _mutant_lines(entries: list[dict], devs: list[str]) -> list[str]:
    out = []
    for e in entries:
        for dev in devs:
            m = e.get("mutation", {}).get(dev, {})
            for x in m.get("mutants", []):
                state = f"killed by `{x['killed_by']}` ({x['why']})" if x["killed"] else "survived"
                out.append(
                    f"- {e['patch']} #{e['hunk']} {dev}: `{x['operator']}` line {x['line']} "
                    f"{x['description']}: {state}"
                )
            if m.get("revert"):
                out.append(f"- {e['patch']} #{e['hunk']} {dev}: `revert` {m['revert']}")
    return ["", "Mutants tried:", "", *out] if out else []


_RANK = {CHECKED: 3, UNCHECKED: 2, NOT_CHECKED: 1, UNEXERCISED: 0}


def merge(shards: list[list[dict]], merged: list[dict]) -> None:
    """Shard reports of one series (``hunks.merge_entries`` joined the coverage): each hunk's
    verdict per device is the best any shard reached (checked > unchecked > unexercised), its
    CPU behaviour differences are the shards' together; ``proven_on`` follows."""
    by_key = {m["key"]: m for m in merged}
    for m in merged:  # built from the first shard's entry: rebuilt from all of them here
        for k in ("verdicts", "mutation", "oracle"):
            m.pop(k, None)
    for entries in shards:
        for e in entries:
            m = by_key.get(e["key"])
            if m is None or "verdicts" not in e:
                continue
            verdicts = m.setdefault("verdicts", {})
            for dev, v in e["verdicts"].items():
                if dev not in verdicts or _RANK.get(v, -1) > _RANK.get(verdicts[dev], -1):
                    verdicts[dev] = v
                    if dev in e.get("mutation", {}):
                        m.setdefault("mutation", {})[dev] = e["mutation"][dev]
            if "oracle" in e:
                o = m.setdefault("oracle", {**e["oracle"], "differences": [], "calls": 0})
                o["calls"] += e["oracle"]["calls"]
                o["differences"] = o["differences"] + e["oracle"]["differences"]
    for m in merged:
        if "verdicts" in m:
            flagged = bool(m.get("oracle", {}).get("differences"))
            m["proven_on"] = [d for d, v in m["verdicts"].items() if v == CHECKED and not flagged]


def behaviour_lines(report: dict) -> list[str]:
    """``BEHAVIOUR cpu: HUNK TEST FUNCTION call N: what`` for each CPU behaviour difference."""
    out = []
    for e in report.get("hunks") or []:
        for d in e.get("oracle", {}).get("differences", []):
            call = f"call {d['call']}" if d["call"] else "calls"
            func = d["function"].split("::")[-1]
            out.append(
                f"BEHAVIOUR cpu: {e['key']} {d['test']} {func} {call}: {'; '.join(d['what'])}"
            )
    return out


def validate_rerun(report: dict) -> Callable[[str, str], str]:
    """``command(device, node id)``: the ``patches.validate`` line that reruns one verdict of
    ``report`` (its tree and series, one test, one device, its -k)."""
    series = [Path(p) for p in report.get("series", [])]
    folder = str(series[0].parent) if len(series) > 1 else (str(series[0]) if series else "?")
    root = report.get("test_root")
    k = list(report.get("pytest_args") or [])

    def command(dev: str, node: str) -> str:
        test = str(Path(root) / node) if root else node
        args = ["python", "-m", "patches.validate", "--tree", report.get("tree", "."), "--series"]
        args += [folder, "--devices", dev, "--tests", test]
        args += ["--test-root", root] if root else []
        return shlex.join(args + [f"--pytest-arg={a}" for a in k])

    return command
