"""What a contributor pastes: each commit's ``Test Plan:`` as commands run from the root of a
PyTorch checkout (the upstream test files, and the ``patches.validate`` line with relative
paths), and the patches' author and date from the user's git identity.

``--reproducible`` asks for fixed values instead (patches.generate's default author, and
SOURCE_DATE_EPOCH or its fixed date), so two runs write byte-identical bundles.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from patches.generate.series import DEFAULT_AUTHOR
from patches.prove.config import ProveError

_IDENT = re.compile(r"^(?P<author>.+ <[^<>]*>) (?P<epoch>\d+) (?P<tz>[+-]\d{4})$")
_PLAIN_K = re.compile(r"^[\w.\[\]-]+$")  # a -k that unittest reads as a substring, not pytest's
TEST_DIR = "test"  # where upstream's test files lie in a PyTorch checkout


@dataclass(frozen=True)
class Signature:
    """The patches' ``From:`` and ``Date:`` (``date`` None: the fixed date)."""

    author: str
    date: str | None


def signature(reproducible: bool = False, cwd=None) -> Signature:
    """The user's git identity and now (``git var GIT_AUTHOR_IDENT``: user.name, user.email,
    GIT_AUTHOR_* as git commit reads them), or the fixed values with ``reproducible``."""
    if reproducible:
        return Signature(DEFAULT_AUTHOR, None)
    proc = subprocess.run(
        ["git", "var", "GIT_AUTHOR_IDENT"], cwd=cwd, capture_output=True, text=True
    )
    m = _IDENT.match(proc.stdout.strip()) if proc.returncode == 0 else None
    if m is None:
        raise ProveError(
            "no git identity for the patches' author (git var GIT_AUTHOR_IDENT: "
            f"{proc.stderr.strip() or proc.stdout.strip() or 'nothing'}); set git config "
            "user.name and user.email, or pass --reproducible for fixed values"
        )
    tz = m["tz"]
    offset = timedelta(hours=int(tz[1:3]), minutes=int(tz[3:5])) * (-1 if tz[0] == "-" else 1)
    when = datetime.fromtimestamp(int(m["epoch"]), timezone(offset))
    return Signature(m["author"], when.isoformat())


def _unittest_k(node: str) -> str:
    return node.replace("::", ".")


def checkout_commands(nodes: dict[str, list[str]], k: str) -> list[str]:
    """One command per upstream test file (``rel`` -> pytest node ids in it, none: all):
    ``python test/FILE.py [-k NODE ...]``, or pytest where ``k`` is a pytest expression."""
    out = []
    for rel, ids in nodes.items():
        path = f"{TEST_DIR}/{rel}"
        if k and not _PLAIN_K.match(k):
            targets = [f"{path}::{n}" for n in ids] or [path]
            out.append(shlex.join(["python", "-m", "pytest", *targets, "-k", k]))
            continue
        patterns = [_unittest_k(n) for n in ids] + ([k] if k else [])
        out.append(shlex.join(["python", path, *[a for p in patterns for a in ("-k", p)]]))
    return out


def validate_command(series: str, devices: list[str], nodes: dict[str, list[str]], k: str) -> str:
    """The ``patches.validate`` line: the series before/after on each device, from the checkout."""
    tests = [f"{TEST_DIR}/{rel}::{n}" for rel, ids in nodes.items() for n in ids] + [
        f"{TEST_DIR}/{rel}" for rel, ids in nodes.items() if not ids
    ]
    args = ["python", "-m", "patches.validate", "--tree", ".", "--series", series]
    args += ["--devices", ",".join(devices), "--tests", ",".join(tests)]
    if k:
        args += ["--pytest-arg=-k", f"--pytest-arg={k}"]
    return shlex.join(args)


def plan_text(series: str, devices: list[str], nodes: dict[str, list[str]], k: str) -> str:
    """The ``Test Plan:`` section's text (without its heading)."""
    lines = ["From the root of a PyTorch checkout with this series applied:"]
    lines += [f"  {c}" for c in checkout_commands(nodes, k)]
    lines += [
        f"Before and after the series on {', '.join(devices)} (hardware-neutrality toolkit,",
        f"the bundle's series folder at {series}):",
        f"  {validate_command(series, devices, nodes, k)}",
    ]
    return "\n".join(lines)


def with_test_plan(body: str, plan: str) -> str:
    """``body`` with its ``Test Plan:`` section (the last one) replaced by ``plan``."""
    head, sep, _ = body.rpartition("\nTest Plan:\n")
    if not sep:
        return f"{body.rstrip()}\n\nTest Plan:\n{plan}\n"
    return f"{head}\nTest Plan:\n{plan}\n"
