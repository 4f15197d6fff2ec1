"""Write a patch series: ``git format-patch`` style mbox files plus a quilt ``series`` file.

Pure Python so the output is byte-identical across runs and git versions; ``git am`` and
``git apply`` consume it (the tests check both with real git). Hunks use three lines of context,
so a series applies with no fuzz on the tree it was generated from.
"""

from __future__ import annotations

import email.utils
import hashlib
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from patches.generate.linediff import Matcher

DEFAULT_AUTHOR = "hwneutral <hwneutral@users.noreply.github.com>"
# Fixed default date: reruns must be byte-identical. SOURCE_DATE_EPOCH overrides it.
DEFAULT_EPOCH = 1767225600  # 2026-01-01T00:00:00Z
SIGNATURE = "hwneutral"


@dataclass(frozen=True)
class FileChange:
    """One file's content before and after a patch (text, newlines preserved)."""

    path: str  # POSIX path relative to the tree root
    before: str
    after: str
    mode: str = "100644"


@dataclass
class Patch:
    """One commit of the series: a subject, a body and the files it changes."""

    subject: str
    body: str
    changes: list[FileChange] = field(default_factory=list)


def resolve_date(date: str | None) -> datetime:
    """``date`` as ISO 8601 / RFC 2822 / epoch seconds; default SOURCE_DATE_EPOCH or a constant."""
    if date is None:
        epoch = int(os.environ.get("SOURCE_DATE_EPOCH", DEFAULT_EPOCH))
        return datetime.fromtimestamp(epoch, timezone.utc)
    if re.fullmatch(r"\d+", date):
        return datetime.fromtimestamp(int(date), timezone.utc)
    try:
        dt = datetime.fromisoformat(date)
    except ValueError:
        try:
            dt = email.utils.parsedate_to_datetime(date)
        except (TypeError, ValueError):
            raise ValueError(f"unparseable date {date!r}: use ISO 8601, RFC 2822 or epoch seconds")
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def check_author(author: str) -> str:
    name, addr = email.utils.parseaddr(author)
    if not name or "@" not in addr:
        raise ValueError(f"author must look like 'Name <email>', got {author!r}")
    return f"{name} <{addr}>"


def blob_id(text: str) -> str:
    """The git blob id of ``text`` (what ``git hash-object`` prints)."""
    data = text.encode("utf-8", "surrogateescape")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _lines(text: str) -> list[str]:
    # Only "\n" ends a line for git; keep "\r" and other separators inside the line.
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def unified_diff(change: FileChange, context: int = 3) -> str:
    """A git-style unified diff (``diff --git`` header, index line, hunks) for one file."""
    a, b = _lines(change.before), _lines(change.after)
    if a == b:
        return ""
    out = [
        f"diff --git a/{change.path} b/{change.path}\n",
        f"index {blob_id(change.before)[:7]}..{blob_id(change.after)[:7]} {change.mode}\n",
        f"--- a/{change.path}\n",
        f"+++ b/{change.path}\n",
    ]
    for group in Matcher(a, b).get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                out += [_line(" ", ln) for ln in a[x1:x2]]
                continue
            out += [_line("-", ln) for ln in a[x1:x2]]
            out += [_line("+", ln) for ln in b[y1:y2]]
    return "".join(out)


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _line(prefix: str, text: str) -> str:
    if text.endswith("\n"):
        return prefix + text
    return prefix + text + "\n\\ No newline at end of file\n"


def diffstat(changes: list[FileChange]) -> str:
    """The ``git format-patch`` stat block for ``changes``."""
    rows, ins_total, del_total = [], 0, 0
    for c in changes:
        ins = dels = 0
        for ln in unified_diff(c).splitlines()[4:]:
            if ln.startswith("+"):
                ins += 1
            elif ln.startswith("-"):
                dels += 1
        rows.append((c.path, ins, dels))
        ins_total += ins
        del_total += dels
    width = max(len(p) for p, _, _ in rows)
    nwidth = len(str(max(i + d for _, i, d in rows)))
    lines = [
        f" {p.ljust(width)} | {str(i + d).rjust(nwidth)} {'+' * i}{'-' * d}".rstrip() + "\n"
        for p, i, d in rows
    ]
    summary = f" {len(rows)} file{'s' if len(rows) != 1 else ''} changed"
    if ins_total:
        summary += f", {ins_total} insertion{'s' if ins_total != 1 else ''}(+)"
    if del_total:
        summary += f", {del_total} deletion{'s' if del_total != 1 else ''}(-)"
    return "".join(lines) + summary + "\n"


def patch_filename(number: int, subject: str) -> str:
    """``git format-patch`` naming: ``0001-`` plus the sanitised subject, at most 64 chars."""
    slug = re.sub(r"[^A-Za-z0-9._]+", "-", subject).strip("-.")
    slug = re.sub(r"\.{2,}", ".", slug)[:52].rstrip("-.")
    return f"{number:04d}-{slug}.patch"


def format_patch(patch: Patch, number: int, total: int, author: str, date: datetime) -> str:
    """One mbox message in ``git format-patch`` form."""
    changes = sorted(patch.changes, key=lambda c: c.path)
    diffs = "".join(unified_diff(c) for c in changes)
    prefix = f"[PATCH {number}/{total}]" if total > 1 else "[PATCH]"
    # The "From <id>" line only separates messages; git am ignores the id. A content hash keeps
    # it stable across reruns without inventing commits.
    msg_id = hashlib.sha1((patch.subject + patch.body + diffs).encode("utf-8", "surrogateescape"))
    return (
        f"From {msg_id.hexdigest()} Mon Sep 17 00:00:00 2001\n"
        f"From: {author}\n"
        f"Date: {email.utils.format_datetime(date)}\n"
        f"Subject: {prefix} {patch.subject}\n"
        "\n"
        f"{patch.body.rstrip()}\n"
        "---\n"
        f"{diffstat(changes)}\n"
        f"{diffs}"
        "-- \n"
        f"{SIGNATURE}\n\n"
    )


def write_series(
    patches: list[Patch], out: Path, author: str = DEFAULT_AUTHOR, date: str | None = None
) -> list[Path]:
    """Write ``out/NNNN-*.patch`` and ``out/series``; returns the patch paths in order.

    Refuses to mix with an earlier series: existing ``*.patch`` files in ``out`` are an error,
    so a stale patch can never ride along with a new series.
    """
    author = check_author(author)
    when = resolve_date(date)
    out.mkdir(parents=True, exist_ok=True)
    stale = sorted(p.name for p in out.glob("*.patch"))
    if stale:
        raise FileExistsError(f"{out} already holds a series ({stale[0]}, ...); use an empty dir")
    paths = []
    for n, patch in enumerate(patches, 1):
        path = out / patch_filename(n, patch.subject)
        path.write_bytes(
            format_patch(patch, n, len(patches), author, when).encode("utf-8", "surrogateescape")
        )
        paths.append(path)
    (out / "series").write_text("".join(p.name + "\n" for p in paths), encoding="utf-8")
    return paths
