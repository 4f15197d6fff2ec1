"""Compile the catalogue's Python match specs into lookup tables for the visitor.

A plan is built once per rule selection (cached by the ids): exact and wildcard dotted names,
method/attribute/identifier names, literal rules with their contexts, branch node kinds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from audits.model import Rule


@dataclass
class LiteralRule:
    rule: Rule
    values: tuple[str, ...]
    keywords: frozenset[str]
    calls: frozenset[str]
    methods: frozenset[str]
    targets: re.Pattern | None
    compare: re.Pattern | None
    contains: re.Pattern | None
    anyargs: frozenset[str] = frozenset()  # callee names (last component): every argument
    anywhere: bool = False  # any value position but messages (print, logging, errors, help=)


@dataclass
class ImportRule:
    rule: Rule
    modules: tuple[str, ...]  # dotted module prefixes
    components: re.Pattern | None  # a module path component matching it


@dataclass
class DeviceListRule:
    rule: Rule
    backends: frozenset[str]  # device type strings
    accelerators: tuple[str, ...]  # the ones a list about devices should consider
    family: frozenset[str]  # a list of only these is CUDA-only on purpose
    open: tuple[str, ...]  # naming one of these (or calling something that does) opens the list


@dataclass
class DeviceTypeRule:
    rule: Rule
    enums: tuple[str, ...]  # dotted names of the DeviceType enum (every module that exports it)
    members: frozenset[str]  # the CUDA members (CUDA, HIP)
    beside: frozenset[str]  # members a list may hold beside them (PrivateUse1)
    subject: re.Pattern  # the text of the compared expression (an event's ``device_type``)


@dataclass
class Plan:
    exact: dict[str, Rule] = field(default_factory=dict)
    wildcard: dict[str, Rule] = field(default_factory=dict)  # "torch.cuda" for "torch.cuda.*"
    methods: dict[str, Rule] = field(default_factory=dict)
    attributes: dict[str, Rule] = field(default_factory=dict)
    identifiers: dict[str, Rule] = field(default_factory=dict)
    prefixes: list[tuple[str, Rule]] = field(default_factory=list)
    attr_prefixes: list[tuple[str, Rule]] = field(default_factory=list)
    imports: list[ImportRule] = field(default_factory=list)
    device_lists: list[DeviceListRule] = field(default_factory=list)
    device_types: list[DeviceTypeRule] = field(default_factory=list)
    anywhere: list[LiteralRule] = field(default_factory=list)
    lit_anyargs: set[str] = field(default_factory=set)
    literals: list[LiteralRule] = field(default_factory=list)
    lit_keywords: set[str] = field(default_factory=set)
    lit_calls: set[str] = field(default_factory=set)
    lit_methods: set[str] = field(default_factory=set)
    has_targets: bool = False
    has_compare: bool = False
    branches: dict[str, Rule] = field(default_factory=dict)  # node kind -> rule
    flags: dict[str, Rule] = field(default_factory=dict)  # switch name -> rule
    predicates: set[str] = field(default_factory=set)  # rule ids
    matched: dict[str, Any] = field(default_factory=dict)  # memo of _Scan.match_name


_PLANS: dict[tuple[str, ...], Plan] = {}


def build_plan(rules: Sequence[Rule]) -> Plan:
    key = tuple(r.id for r in rules)
    if key in _PLANS:
        return _PLANS[key]
    p = Plan()
    for r in rules:
        if r.language != "python":
            continue
        if r.match.get("predicate"):
            p.predicates.add(r.id)
        _ADD[r.match["type"]](p, r, r.match)
    _PLANS[key] = p
    return p


def _add_name(p: Plan, r: Rule, m: dict) -> None:
    for n in m["names"]:
        if n.endswith(".*"):
            p.wildcard.setdefault(n[:-2], r)
        else:
            p.exact.setdefault(n, r)


def _add_method(p: Plan, r: Rule, m: dict) -> None:
    for n in m["methods"]:
        p.methods.setdefault(n, r)


def _add_attribute(p: Plan, r: Rule, m: dict) -> None:
    for n in m["attributes"]:
        p.attributes.setdefault(n, r)
    p.attr_prefixes += [(n, r) for n in m.get("prefixes", [])]


def _add_import(p: Plan, r: Rule, m: dict) -> None:
    comp = m.get("components")
    p.imports.append(ImportRule(r, tuple(m.get("modules", ())), re.compile(comp) if comp else None))


def _add_device_list(p: Plan, r: Rule, m: dict) -> None:
    p.device_lists.append(
        DeviceListRule(
            r,
            frozenset(m["backends"]),
            tuple(m.get("accelerators", ())),
            frozenset(m.get("family", ())),
            tuple(m.get("open", ())),
        )
    )


def _add_device_type(p: Plan, r: Rule, m: dict) -> None:
    p.device_types.append(
        DeviceTypeRule(
            r,
            tuple(m["enums"]),
            frozenset(m["members"]),
            frozenset(m.get("beside", ())),
            re.compile(m["subject"]),
        )
    )


def _add_identifier(p: Plan, r: Rule, m: dict) -> None:
    for n in m.get("identifiers", []):
        p.identifiers.setdefault(n, r)
    p.prefixes += [(n, r) for n in m.get("prefixes", [])]


def _add_literal(p: Plan, r: Rule, m: dict) -> None:
    lr = LiteralRule(
        r,
        tuple(m["values"]),
        frozenset(m.get("keywords", ())),
        frozenset(m.get("calls", ())),
        frozenset(m.get("methods", ())),
        *(re.compile(m[k]) if k in m else None for k in ("targets", "compare", "contains")),
        frozenset(m.get("anyargs", ())),
        bool(m.get("anywhere")),
    )
    if lr.anywhere:  # the fallback: after every specific context had its say
        p.anywhere.append(lr)
        return
    p.literals.append(lr)
    p.lit_keywords |= lr.keywords
    p.lit_calls |= lr.calls
    p.lit_methods |= lr.methods
    p.lit_anyargs |= lr.anyargs
    p.has_targets |= lr.targets is not None
    p.has_compare |= lr.compare is not None or lr.contains is not None


def _add_branch(p: Plan, r: Rule, m: dict) -> None:
    for n in m["nodes"]:
        p.branches.setdefault(n, r)


def _add_flag(p: Plan, r: Rule, m: dict) -> None:
    for n in m["names"]:
        p.flags.setdefault(n, r)


# match type -> what a rule of that type adds to the plan (the catalogue checks the types)
_ADD = {
    "name": _add_name,
    "method": _add_method,
    "attribute": _add_attribute,
    "import": _add_import,
    "device_list": _add_device_list,
    "device_type_compare": _add_device_type,
    "identifier": _add_identifier,
    "literal": _add_literal,
    "branch": _add_branch,
    "flag": _add_flag,
}
