"""What replay.py prints: tables of recall/agreement per kind and form, checks, and the lists a
human reads (rewrites of kept sites, disagreements, misses). rich tables when rich is
installed, plain columns otherwise."""

from __future__ import annotations

import sys
from collections import Counter

from replay_score import STOPS, Record, Tally, reason_keys, stop, summarize


def pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f} %)" if d else "-"


def first_line(text: str, width: int = 110) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    s = " ⏎ ".join(lines)
    return s if len(s) <= width else s[: width - 1] + "…"


def table(title: str, headers: list[str], rows: list[list[str]], plain: bool) -> None:
    try:
        if plain:
            raise ImportError
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
        print(f"\n{title}")
        for r in [headers, *rows]:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
        return
    t = Table(title=title, title_justify="left")
    for i, h in enumerate(headers):
        t.add_column(h, justify="left" if i == 0 else "right")
    for r in rows:
        t.add_row(*map(str, r))
    Console(width=None if sys.stdout.isatty() else 200).print(t)


def _row(key: str, tallies: list[Tally | None]) -> list[str]:
    row = [key, str(next(t.sites for t in tallies if t))]
    for t in tallies:
        t = t or Tally()
        row += [pct(t.rewritten, t.sites), pct(t.agree, t.rewritten), str(t.same)]
    return row


def group_table(group: str, summaries: list[dict], modes: list[str], plain: bool) -> None:
    headers = [group, "sites"]
    for m in modes:
        headers += [f"{m}: rewritten (recall)", f"{m}: agree", f"{m}: same text"]
    keys = list(summaries[-1][group])
    rows = [_row(k, [s[group].get(k) for s in summaries]) for k in keys]
    rows.append(_row("all", [s["all"].get("all") for s in summaries]))
    table(f"Neutralized sites by {group}", headers, rows, plain)


def checks(r) -> str:
    applies = "all apply" if not r.apply_error else r.apply_error
    prefixes = (
        "every prefix compiles"
        if not r.prefix_failures
        else (f"{len(r.prefix_failures)} prefix failures")
    )
    rerun = "rerun skipped" if r.rerun_patches is None else f"rerun adds {r.rerun_patches} patches"
    lint = getattr(r, "lint_failures", [])
    patch_lint = getattr(r, "patch_lint", [])
    style = "lint-clean" if not lint else f"{len(lint)} lint failures"
    style += f" ({len(patch_lint)} patches not lint-clean alone)" if patch_lint else ""
    secs = ", ".join(f"{k} {v} s" for k, v in r.seconds.items())
    return f"{r.mode}: {r.patches} patches, {applies}, {prefixes}, {style}, {rerun} ({secs})"


# The replay targets (recall over the labelled set, agreement over the rewrites, rewrites of
# kept sites over the kept labels), as fractions: (name, tally group, key, ratio, bound, at most).
TARGETS = (
    ("recall", "all", "all", "rewritten", 0.75, False),
    ("neutral-form recall", "form", "neutral", "rewritten", 0.85, False),
    ("agreement", "all", "all", "agree", 0.90, False),
    ("kept rewrites", "kept", "kept", "rewritten", 0.02, True),
)


def targets(summary: dict) -> list[str]:
    """``recall 34 % (>= 75 %: no)`` and the like, for one mode's tallies."""
    out = []
    for name, group, key, field, bound, at_most in TARGETS:
        t = summary[group].get(key)
        denom = (t.rewritten if field == "agree" else t.sites) if t else 0
        if not denom:
            continue
        value = getattr(t, field) / denom
        ok = value <= bound if at_most else value >= bound
        sign = "<=" if at_most else ">="
        out.append(
            f"{name} {100 * value:.1f} % ({sign} {100 * bound:.0f} %: {'yes' if ok else 'no'})"
        )
    return out


def safe_not_unsafe(results: list) -> list[str]:
    """Old lines the safe-only series rewrites and the unsafe one does not (none expected)."""
    modes = {r.mode: r for r in results}
    if set(modes) != {"safe", "unsafe"}:
        return []
    unsafe = set(modes["unsafe"].touched)
    return [t for t in modes["safe"].touched if t not in unsafe]


def listing(title: str, records: list[Record], body, by_kind: bool = False) -> None:
    print(f"\n{title}: {len(records)}")
    counts = Counter(r.kind for r in records)
    kind = None
    for r in records:
        if by_kind and r.kind != kind:
            kind = r.kind
            print(f"  == {kind} ({counts[kind]})")
        print(f"  {r.path}:{r.line}  {r.kind or 'kept'}{'/' + r.form if r.form else ''}")
        for line in body(r):
            print(f"      {line}")


def show(head: dict, results: list, plain: bool = False) -> None:
    print(f"replay {head['pair']}: {head['files']} files, {head['labels']} labels")
    modes = [r.mode for r in results]
    summaries = [summarize(r.records) for r in results]
    for r in results:
        print("  " + checks(r))
        for f in r.prefix_failures + getattr(r, "lint_failures", []):
            print(f"    {f}")
        for f in getattr(r, "patch_lint", []):
            print(f"    (alone) {f}")
    if len(results) == 2:
        extra = safe_not_unsafe(results)
        print(f"  safe ⊆ unsafe: {'yes' if not extra else 'NO, safe alone rewrites:'}")
        for site in extra:
            print(f"    {site}")
    group_table("kind", summaries, modes, plain)
    group_table("form", summaries, modes, plain)
    for r, s in zip(results, summaries):
        kept = s["kept"].get("kept", Tally())
        print(f"{r.mode}: rewrites of kept sites {pct(kept.rewritten, kept.sites)}")
    for r, s in zip(results, summaries):
        print(f"{r.mode}: targets " + ", ".join(targets(s)))
    for r in results:
        kept = [x for x in r.records if x.status != "neutralized" and x.rewritten]
        listing(
            f"[{r.mode}] rewrites of kept sites (read each)",
            kept,
            lambda x: [f"- {first_line(x.old_text)}", f"+ {first_line(x.ours)}"],
        )
    last = results[-1]
    neut = [x for x in last.records if x.status == "neutralized"]
    differ = [x for x in neut if x.rewritten and not x.agrees]
    listing(
        f"[{last.mode}] rewrites that differ from upstream",
        differ,
        lambda x: [f"ours:     {first_line(x.ours)}", f"upstream: {first_line(x.upstream)}"],
    )
    misses = sorted((x for x in neut if not x.rewritten), key=lambda x: (x.kind, x.path, x.line))
    listing(f"[{last.mode}] misses (by kind)", misses, _miss_lines, by_kind=True)
    if any(x.why for x in misses):
        stops_table(misses, last.mode, plain)
        reasons = Counter(k for x in misses for k in reason_keys(x.why))
        rows = [[k, str(n)] for k, n in reasons.most_common()]
        table(
            f"[{last.mode}] misses by reason (--explain; once per finding)",
            ["reason", "sites"],
            rows,
            plain,
        )


def _miss_lines(x: Record) -> list[str]:
    lines = [f"- {first_line(x.old_text)}", f"upstream: {first_line(x.upstream)}"]
    return lines + ([f"why: {first_line(x.why, 160)}"] if x.why else [])


def stops_table(misses: list[Record], mode: str, plain: bool) -> None:
    by_kind: dict[str, Counter] = {}
    for x in misses:
        by_kind.setdefault(x.kind, Counter())[stop(x.why)] += 1
    total = sum(by_kind.values(), Counter())
    rows = [
        [k, str(sum(c.values())), *(str(c[s]) for s in STOPS)]
        for k, c in sorted(by_kind.items(), key=lambda kc: -sum(kc[1].values()))
    ]
    rows.append(["all", str(sum(total.values())), *(str(total[s]) for s in STOPS)])
    table(f"[{mode}] misses by kind and what stops them", ["kind", "misses", *STOPS], rows, plain)
