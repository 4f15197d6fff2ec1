"""What wild_scripts.py prints: the per-project table, left findings by reason and by rule, the
split units (each with its rewritten and left lines), and any check that failed."""

from __future__ import annotations

from replay_report import table


def _short(name: str) -> str:
    return name.split("==")[0]


def _yes(ok: bool) -> str:
    return "yes" if ok else "NO"


def summary(results: list[dict], plain: bool) -> None:
    """One table for the projects the codemod was tuned on, one for the held-out ones (their
    figures are first contact only until a change is made for them)."""
    tuned = [r for r in results if not r.get("held_out")]
    held = [r for r in results if r.get("held_out")]
    if tuned:
        _summary("Scripts nobody here wrote (--unsafe-fixes)", tuned, plain)
    if held:
        _summary("Held-out projects (--unsafe-fixes)", held, plain)


def _summary(title: str, results: list[dict], plain: bool) -> None:
    headers = ["project", "files scanned", "with findings", "findings", "fixed", "left"]
    headers += ["undecided", "left after (rescan)", "no device", "split units", "patches"]
    headers += ["all apply", "prefixes compile", "rerun adds", "seconds"]
    rows = []
    for r in results:
        c = r["checks"]
        rerun = "-" if c["rerun_patches"] is None else str(c["rerun_patches"])
        row = [r["project"], r["files_scanned"], r["files_with_findings"], r["before"]]
        after = "-" if r["after_rerun_scan"] is None else r["after_rerun_scan"]
        row += [r["fixed"], r["left"], r["undecided"], after, r["no_device"]]
        row += [len(r["split_units"]), c["patches"]]
        row += [_yes(not c["apply_error"]), _yes(not c["prefix_failures"]), rerun]
        row.append(round(sum(r["seconds"].values()), 1))
        rows.append(row)
    table(title, headers, rows, plain)


def by_key(title: str, field: str, results: list[dict], plain: bool, cell=str) -> None:
    keys: dict[str, None] = {}
    for r in results:
        keys.update(dict.fromkeys(r[field]))
    headers = [title.split()[-1], *(_short(r["project"]) for r in results)]
    rows = [[k, *(cell(r[field].get(k)) for r in results)] for k in keys]
    table(title, headers, rows, plain)


def _rule_cell(row) -> str:
    return "-" if row is None else f"{row[0]}/{row[1]}/{row[2]}"


def split_list(results: list[dict]) -> None:
    for r in results:
        units = r["split_units"]
        print(f"\nSplit units, {r['project']}: {len(units)}")
        for u in units:
            print(f"  {u['rel']}  {u['unit']}")
            for s in u["rewritten"]:
                print(f"    rewritten {s['line']:>5} {s['rule']}  {s['text'][:90]}")
            for s in u["left"]:
                print(
                    f"    left      {s['line']:>5} {s['rule']}  [{s['reason']}]  {s['text'][:80]}"
                )


def problems(results: list[dict]) -> None:
    for r in results:
        c, name = r["checks"], r["project"]
        lines = [c["apply_error"]] if c["apply_error"] else []
        lines += c["prefix_failures"]
        if c["rerun_patches"]:
            lines.append(f"the rerun adds {c['rerun_patches']} patches")
        lines += [f"generate crashed on {x['file']}:\n{x['traceback']}" for x in r["crashes"]]
        lines += [f"scan error: {e}" for e in r["scan_errors"]]
        lines += [
            f"decided REWRITTEN, line not in the diff: {s}" for s in r["rewritten_not_in_diff"]
        ]
        if lines:
            print(f"\n{name}: " + "\n  ".join(["", *lines]))


def show(results: list[dict], plain: bool) -> None:
    summary(results, plain)
    by_key("Left findings by reason", "left_by_reason", results, plain, lambda n: n or "-")
    by_key("Findings before/fixed/left by rule", "by_rule", results, plain, _rule_cell)
    split_list(results)
    problems(results)
