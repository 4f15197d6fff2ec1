"""A subsystem's ``validation.md``: the test plan a PR carries (what was run, why, the result,
per-hunk device coverage, every test)."""

from __future__ import annotations

import importlib.metadata

from patches.matrix import inputs
from patches.prove.config import Subsystem
from patches.prove.testplan import validate_command
from patches.validate.report.markdown import render_hunks_markdown, render_markdown


def torch_version() -> str:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "?"


def _result(s: dict) -> str:
    line = (
        f"Result: **{s['regression']} regression(s)**, {s['gain']} gain(s), "
        f"{s['unchanged']} unchanged."
    )
    if s.get("incomplete"):
        line += " **Incomplete, no verdict** (a run did not finish): " + "; ".join(s["incomplete"])
    return line


def bundle_markdown(
    sub: Subsystem, patches: list[str], report: dict, reasons: dict, nodes: dict | None = None
) -> str:
    lines = [
        f"## Test plan: {sub.title}",
        "",
        f"Series: {len(patches)} patch(es) in `series/` for "
        + ", ".join(f"`{p}`" for p in sub.paths)
        + f" (torch {torch_version()}, generated with `patches.generate --unsafe-fixes`).",
        "",
        *([sub.why, ""] if sub.why else []),
        "Validated with upstream PyTorch's own tests, unmodified, before and after the series, "
        "on each device (`python -m patches.prove --subsystems " + sub.name + "`):",
        "",
    ]
    lines += [f"- `test/{rel}`: {why}" for rel, why in reasons.items()]
    if sub.k:
        lines.append(f"- pytest `-k {sub.k}` (a subset: see the reasons above)")
    lines += ["", _result(report["summary"]), ""]
    if report.get("inputs"):
        lines += [
            "**The OpInfos' own checks** (`python -m patches.matrix inputs`: each sample against "
            "CPU, each error input against the error it names, from the file before and after "
            "the series):",
            "",
            *(inputs.render(r) for r in report["inputs"]["files"].values()),
        ]
    # what a reviewer reads first: which changed lines ran on which device, then every test
    lines += [*render_hunks_markdown(report, _rerun(sub, nodes or {})), "", ""]
    return "\n".join(lines) + render_markdown(report, hunks=False)


def _rerun(sub: Subsystem, nodes: dict):
    """``command(device, node id)``: the checkout-relative ``patches.validate`` line for one
    test (``FILE::NODE`` of an upstream file) on one device: a verdict a reviewer can rerun."""

    def command(dev: str, node: str) -> str:
        rel, _, rest = node.partition("::")
        return validate_command(f"{sub.name}/series", [dev], {rel: [rest] if rest else []}, sub.k)

    return command


def no_change_markdown(sub: Subsystem, findings: int | None, summary: str) -> str:
    """The bundle of a subsystem whose series is empty: every site left, with its reason."""
    return (
        f"## {sub.title}\n\nNo change needed: the codemod leaves all {findings} "
        f"finding(s) in {', '.join(sub.paths)} of torch {torch_version()}, each with its "
        "reason below, so there is no series to validate."
        + (f"\n\n{sub.why}" if sub.why else "")
        + f"\n\n```\n{summary}\n```\n"
    )
