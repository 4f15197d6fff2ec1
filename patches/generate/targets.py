"""Which catalogue rules this run fixes, with which family, for which target API.

``--target torch`` (default) emits only PyTorch's own APIs, as a PR into PyTorch must.
``--target accelerator_api`` emits our layer where it has the same-named API (read from
``accelerator_api.__all__``) and torch's neutral API elsewhere.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Iterable

from audits.model import Rule
from patches.generate.codemods import FixSpec
from patches.generate.codemods.registry import claimed_by

TARGETS = ("torch", "accelerator_api")


def family_of(rule: Rule) -> str | None:
    """The codemod family for a rule, from its catalogue ``fix.style`` and match type."""
    style = (rule.fix or {}).get("style")
    mtype = rule.match.get("type")
    if style == "idiom":  # a whole-idiom family (codemods/idioms_*.py) named by the rule
        return (rule.fix.get("args") or {}).get("idiom")
    if style in ("rename", "ctor") and mtype == "name":
        return claimed_by(rule.match.get("names")) or "call"
    if style == "device-module" and mtype == "name":  # a family that claims the names, or none
        return claimed_by(rule.match.get("names"))
    if style == "rename" and mtype == "identifier":
        return "rename"
    if style == "rename" and mtype == "attribute":
        return "attribute"
    if style == "method-to" and mtype == "method":
        return "to-device"
    if style == "literal" and mtype == "literal" and "cuda" in rule.match.get("values", ()):
        return "device-literal"
    return None


def _names(rule: Rule) -> tuple[str, ...]:
    m = rule.match
    if m.get("type") == "device_type_compare":  # the enum's members a checked list may hold
        members = (*m.get("members", ()), *m.get("beside", ()))
        return tuple(f"{e}.{x}" for e in m.get("enums", ()) for x in members)
    if m.get("type") == "literal":  # torch.device("cuda") (a call rule) or the string itself
        return tuple(m.get("calls") or ()) if rule.kind == "call" else tuple(m.get("values") or ())
    return tuple(
        m.get("names") or m.get("identifiers") or m.get("methods") or m.get("attributes") or ()
    )


def accelerator_api_names() -> frozenset[str]:
    """``accelerator_api.__all__``, read from the source: importing the package could patch torch
    (``HN_AUTOPORT=1``), so it is located with ``find_spec`` and never imported."""
    spec = importlib.util.find_spec("accelerator_api")
    if spec is None or not spec.origin:
        raise ValueError("--target accelerator_api: the accelerator_api package is not installed")
    tree = ast.parse(Path(spec.origin).read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", "") == "__all__" for t in node.targets
        ):
            return frozenset(ast.literal_eval(node.value))
    return frozenset()


def fix_specs(
    rules: Iterable[Rule], target: str, unsafe: bool
) -> tuple[dict[str, FixSpec], dict[str, str]]:
    """(rule id -> spec for the rules this run rewrites, rule id -> why the others are not)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; choose from {TARGETS}")
    ours = accelerator_api_names() if target == "accelerator_api" else frozenset()
    specs: dict[str, FixSpec] = {}
    skipped: dict[str, str] = {}
    for r in rules:
        family = family_of(r)
        if r.language != "python":
            skipped[r.id] = f"{r.language} rule: report only"
        elif r.safety == "manual":
            skipped[r.id] = "manual rule: no mechanical rewrite"
        elif family is None or not r.replacement:
            skipped[r.id] = f"fix style {(r.fix or {}).get('style')!r}: no codemod, report only"
        elif r.safety == "review" and not unsafe:
            skipped[r.id] = "review rule: rerun with --unsafe-fixes"
        else:
            specs[r.id] = FixSpec(
                r.id,
                family,
                _names(r),
                r.replacement,
                r.safety,
                # `guard: true`: the neutral API raises without an accelerator (intent.Gate)
                tuple(
                    sorted(
                        {
                            **(r.fix or {}).get("args", {}),
                            **({"guard": True} if (r.fix or {}).get("guard") else {}),
                        }.items()
                    )
                ),
                ours,
            )
    return specs, skipped


def together(specs: dict[str, FixSpec]) -> dict[str, tuple[str, ...]]:
    """rule -> the rules whose rewrite it must land with (one patch keeps every prefix of the
    series working): an attribute rename on a type (``.cuda_stream`` -> ``torch.Stream.
    native_handle``) goes with the rules whose replacement makes that type (``torch.Stream``,
    ``torch.accelerator.current_stream() -> torch.Stream``): after those alone,
    ``torch.accelerator.current_stream().cuda_stream`` would fail. From the catalogue's names
    and the real signatures, not a list."""
    from patches.generate.codemods.signatures import signature_of

    out: dict[str, tuple[str, ...]] = {}
    for rid, spec in specs.items():
        if spec.family != "attribute" or "." not in spec.replacement:
            continue
        owner = spec.replacement.rsplit(".", 1)[0]
        makers = []
        for other, o in specs.items():
            if other == rid or o.family in ("attribute", "rename"):
                continue
            for name in o.names:
                new = o.new_for(name)
                sig = signature_of(new)
                ret = getattr(sig, "return_annotation", None) if sig is not None else None
                shown = f"{ret.__module__}.{ret.__qualname__}" if isinstance(ret, type) else ""
                if new == owner or shown == owner or str(ret) == owner:
                    makers.append(other)
                    break
        if makers:
            out[rid] = tuple(sorted(makers))
    return out
