"""Which rewrites of ``kept`` sites upstream made in a later release (``replay.py --later``).

A ``kept`` label means only "not changed by the pair's new release". When a label list of the
next pair is at hand (its old release is this pair's new one, e.g. the drafted 2.13.0 -> 2.14.1
list), each rewritten kept site is followed into the new release (the kept label's
``new_lines``) and looked up there: a ``neutralized`` label of the later list whose old span
meets those lines means upstream made that change one release later. The figure is reported
beside the kept-site rewrites, never instead of them (the target counts every kept rewrite).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Later:
    """The later pair's verdict on one mode's kept-site rewrites."""

    release: str  # the later pair's new release
    rewritten: int = 0  # kept sites the mode rewrote
    made: list[tuple[str, str]] = field(default_factory=list)  # (this site, later label's text)
    unmapped: int = 0  # kept sites whose file the later list does not cover


def _neutralized_spans(later: dict) -> dict[str, list[tuple[int, int, str]]]:
    out: dict[str, list[tuple[int, int, str]]] = {}
    for lab in later["labels"]:
        if lab["status"] == "neutralized":
            lo, hi = lab.get("old_span") or (lab["old_line"], lab["old_line"])
            out.setdefault(lab["path"], []).append((lo, hi, lab.get("new_text", "")))
    return out


def check(data: dict, later: dict, records) -> Later:
    """``records``: one mode's replay_score.Records for the label list ``data``."""
    if later["pair"]["old"] != data["pair"]["new"]:
        raise ValueError(
            f"--later pairs {later['pair']['old']} -> {later['pair']['new']}, "
            f"not from {data['pair']['new']}"
        )
    res = Later(later["pair"]["new"])
    by_id = {lab["id"]: lab for lab in data["labels"]}
    spans = _neutralized_spans(later)
    covered = set(later["pair"]["file_sha256"])
    for r in records:
        if r.status == "neutralized" or not r.rewritten:
            continue
        res.rewritten += 1
        if r.path not in covered:
            res.unmapped += 1
            continue
        lines = [n for lo, hi in by_id[r.id].get("new_lines", []) for n in range(lo, hi + 1)]
        hit = next(
            (t for lo, hi, t in spans.get(r.path, ()) if any(lo <= n <= hi for n in lines)), None
        )
        if hit is not None:
            res.made.append((f"{r.path}:{r.line}", hit))
    return res


def show(mode: str, res: Later) -> None:
    print(
        f"[{mode}] kept-site rewrites upstream made by {res.release}: "
        f"{len(res.made)} of {res.rewritten}"
        + (f" ({res.unmapped} in files the later list does not cover)" if res.unmapped else "")
    )
    for site, text in res.made:
        print(f"  {site}  ->  {text.splitlines()[0][:100] if text else ''}")
