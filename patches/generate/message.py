"""Commit messages for the series: subject, why (the catalogue rationale), rule ids, call sites,
and a ``Test Plan:`` with the exact validation command."""

from __future__ import annotations

import re
import textwrap

from audits.model import Finding, Rule

MAX_SITES = 25


def short_name(qualname: str) -> str:
    """What the subject names: ``torch.accelerator.synchronize`` stays dotted, a test symbol
    (``...common_utils.TEST_ACCELERATOR``) is named by its last component."""
    if qualname.startswith("torch.testing."):
        return qualname.rsplit(".", 1)[-1]
    return qualname


def display_new(spec) -> str:
    """The replacement as a reader sees it: ``torch.accelerator.synchronize``; a family template
    (``torch.accelerator.{name}``) reads ``torch.accelerator APIs``."""
    new = spec.new_for(spec.names[0]) if "{name}" not in spec.replacement else spec.replacement
    return new.replace(".{name}", " APIs")


def display_old(spec, sites: list[Finding] = ()) -> str:
    """The CUDA names the patch replaces: those of the rule that its sites' code holds (by
    their last component: ``torch.cuda.max_memory_allocated`` where a site calls it, once
    however many aliases the rule lists), else every name of the rule."""
    text = "\n".join(f.source for f in sites)
    found: dict[str, str] = {}  # last component -> the rule's first name for it
    for n in spec.names:
        if re.search(rf"(?<![\w.]){re.escape(n)}\b|\.{_last(n)}\b", text):
            found.setdefault(n.rsplit(".", 1)[-1], n)
    names = list(found.values()) or list(spec.names)
    shown = ", ".join(names[:3])
    return shown + (f" (and {len(names) - 3} more)" if len(names) > 3 else "")


def _last(name: str) -> str:
    return re.escape(name.rsplit(".", 1)[-1])


GUARD = "torch.cuda.is_available()"
GUARD_WHY = (
    "Where the call has no neutral form the code can use (no device in scope), it stays CUDA's "
    "and runs only where CUDA is available: on CUDA the condition is the old one, elsewhere the "
    "call is skipped instead of failing."
)


def guard_only(new: str, added: list[str]) -> bool:
    """The patch's added lines only guard the CUDA call (``if step == 2 and
    torch.cuda.is_available():``): its replacement is written nowhere, so the subject must not
    name it. A rule whose replacement is the guard itself (HN116's NVTX ranges) guards too."""
    text = "\n".join(added)
    if GUARD not in text:
        return False
    return short_name(new) not in text or GUARD.startswith(f"{short_name(new)}(")


_ACCELERATOR_CALL = re.compile(r"\btorch\.accelerator\.\w+")
_CPU_TEST = re.compile(r"\bdevice\.type\s*(==|!=)\s*[\"']cpu[\"']")
# the table ``get_default_backend_for_device`` reads, which a configured default reads itself
_BACKEND_MAP = re.compile(r"\btorch\.distributed\.Backend\.default_device_backend_map\b")


def _writes(new: str, text: str) -> bool:
    """``text`` writes ``new``: a tensor's method or attribute as ``.name``, anything else by
    its name (a test symbol by its last component)."""
    if new.startswith("torch.Tensor."):
        return re.search(rf"\.{_last(new)}\b", text) is not None
    return re.search(rf"(?<![\w.]){re.escape(short_name(new))}\b", text) is not None


def written(new: str, added: list[str]) -> str:
    """The replacement as the patch writes it, else what its lines write instead: a test symbol
    the patch never writes (``TEST_ACCELERATOR``, where ``probe-collapse`` made ``TEST_CUDA or
    TEST_XPU`` one ``torch.accelerator.is_available()``) is named by the accelerator call its
    lines make; a device-type comparison written as a test against the CPU (HN505's
    ``torch.device``, round 28) by that test; a configured backend default by the table it reads
    (``Backend.default_device_backend_map``, round 31)."""
    text = "\n".join(added)
    if _writes(new, text):
        return new
    m = _ACCELERATOR_CALL.search(text) if "." not in short_name(new) else None
    if m:
        return m.group(0)
    m = _CPU_TEST.search(text) or _BACKEND_MAP.search(text)
    if m is None:
        return new
    return m.group(0) if m.re is _BACKEND_MAP else f'device.type {m.group(1)} "cpu"'


def place(subsystem: str, paths: list[str]) -> str:
    """Where a patch changes code: its subsystem, or for files at the tree's top (subsystem
    ``.``) the file itself, or "the top-level files"."""
    if subsystem != ".":
        return subsystem
    return paths[0] if len(set(paths)) == 1 else "the top-level files"


def subject(new: str, subsystem: str, part: int, parts: int, old: str | None = None) -> str:
    """``old``: the patch only guards ``old`` (``guard_only``)."""
    if old is not None:
        s = f"[hw-neutral] Run {old} only where CUDA is available in {subsystem}"
    else:
        s = f"[hw-neutral] Use {short_name(new)} in {subsystem}"
    return s + (f" (part {part}/{parts})" if parts > 1 else "")


def body(
    rule: Rule,
    old: str,
    new: str,
    sites: list[Finding],
    tree: str,
    series: str,
    devices: str,
    also: list[Rule] = (),
) -> str:
    """``also``: rules whose changes only work together with this one, in the same patch.
    ``new`` is ``GUARD`` when the patch only guards ``old`` (``guard_only``)."""
    guarded = new == GUARD
    why = " ".join((GUARD_WHY if guarded else rule.rationale or "").split())
    why = textwrap.fill(why, 72) if why else ""
    if guarded:
        lines = [f"Guard {old} with {GUARD} ({rule.safety} fix).", ""]
    else:
        lines = [f"Replace {old} with {new} ({rule.safety} fix).", ""]
    if why:
        lines += [why, ""]
    lines += [f"Rule: {rule.id} ({rule.name}), see {rule.url()}"]
    for r in also:
        lines.append(
            f"Also rule: {r.id} ({r.name}), see {r.url()}: it only works together with this "
            "change, so it lands here (every prefix of the series keeps working)"
        )
    lines += ["", "Call sites:"]
    # one line per site: two findings on one line (two names, two rules) are one call site
    shown = list(dict.fromkeys(f"  {f.path}:{f.line}: {f.source}" for f in sites))
    lines += shown[:MAX_SITES]
    if len(shown) > MAX_SITES:
        lines.append(f"  ... and {len(shown) - MAX_SITES} more")
    lines += [
        "",
        "Test Plan:",
        f"python -m patches.validate --tree {tree} --series {series} --devices {devices}",
    ]
    return "\n".join(lines) + "\n"


def with_renames(body: str, renamed: list) -> str:
    """``body`` with the locals the patch renames with their code (``(path, Renamed)``), named
    before its test plan: the reviewer sees why lines that touch no CUDA call changed."""
    if not renamed:
        return body
    lines = ["Renames the locals that now hold the accelerator's values:"]
    lines += [f"  {path}: {r.function}: {r.old} -> {r.new}" for path, r in renamed]
    head, sep, tail = body.rpartition("\nTest Plan:")
    return f"{head}\n" + "\n".join(lines) + f"\n{sep}{tail}" if sep else body
