"""Load, validate and select rules from catalog.yaml (the single rule catalogue).

The schema is documented at the top of ``catalog.yaml``. ``load()`` checks structure only and
needs no torch; ``verify()`` imports torch and checks that every replacement exists (used by
tests and ``python -m audits.scan --verify-catalog``, never at scan time).

Usage by other packages (e.g. the codemod)::

    from audits.catalog import load
    cat = load()
    rule = cat.by_id["HN105"]      # Rule(replacement="torch.accelerator.synchronize", fix={...})
    cat.replacement_for(rule, "torch.cuda.memory_allocated")  # expands "{name}"
"""

from __future__ import annotations

import hashlib
import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import yaml

from . import vocabulary
from .model import SAFETY_LEVELS, Rule

CATALOG_PATH = Path(__file__).with_name("catalog.yaml")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader is ~10x faster
_VOCABULARY_PATH = Path(vocabulary.__file__)
_VOCABULARY_WHOLE = re.compile(r"^vocabulary\.([A-Z_]+)$")
_VOCABULARY_PART = re.compile(r"<vocabulary\.([A-Z_]+)>")
SCHEMA = 1
LANGUAGES = ("python", "cpp", "cmake")
KINDS = (
    "call",
    "reference",
    "attribute",
    "literal",
    "gate",
    "branch",
    "include",
    "import",
    "macro",
    "build",
)
_ID = re.compile(r"^HN\d{3}$")
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_{][A-Za-z0-9_{}]*)*$")
_CPP_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$")
_REQUIRED = (
    "id",
    "name",
    "title",
    "category",
    "language",
    "kind",
    "match",
    "replacement",
    "safety",
    "rationale",
)
_OPTIONAL = ("fix", "before", "after", "verify")

# Python match types and their keys (audits/python/ implements them).
PY_MATCH = {
    "name": ({"names"}, set()),
    "method": ({"methods"}, set()),
    "attribute": ({"attributes"}, {"prefixes"}),
    "identifier": (set(), {"identifiers", "prefixes"}),
    "literal": (
        {"values"},
        {"keywords", "calls", "methods", "targets", "compare", "contains", "anyargs", "anywhere"},
    ),
    "branch": ({"nodes"}, set()),
    "flag": ({"names"}, set()),
    "import": (set(), {"modules", "components"}),
    "device_list": ({"backends"}, {"accelerators", "family", "open"}),
    "device_type_compare": ({"enums", "members", "subject"}, {"beside"}),
}
BRANCH_NODES = {"if", "elif", "ifexp", "assert", "decorator"}
FIX_STYLES = {
    "rename",
    "ctor",
    "method-to",
    "literal",
    "context",
    "device-module",
    "keep",
    "manual",
    "idiom",
}
FIX_ARGS = {
    "idiom",
    "positional_only",
    "rename",
    "keyword_only",
    "keywords_always",
    "prepend",
    "drop",
    "index_only",
    "exact",  # the rewrite is an exact refactor: the intent gate asks no evidence (HN510)
    "partial",  # the neutral call exists on some accelerators only: still device-specific (HN115)
    "keeps_cuda",  # in a script, the fix may keep CUDA's own call under a CUDA check (HN109)
}


class CatalogError(ValueError):
    """The catalogue is malformed; the message lists every problem found."""


@dataclass
class Catalog:
    rules: list[Rule]
    version: str  # content hash of the catalogue file
    path: str = ""
    by_id: dict[str, Rule] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {r.id: r for r in self.rules}

    def for_languages(self, languages: Iterable[str]) -> list[Rule]:
        langs = set(languages)
        return [r for r in self.rules if r.language in langs]

    @staticmethod
    def replacement_for(rule: Rule, matched: str | None = None) -> str | None:
        """The replacement with ``{name}`` expanded to the matched name's last component."""
        return rule.replacement_for(matched)

    def select(self, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> list[Rule]:
        """Rules chosen by selectors (ids, id prefixes like HN1, names, categories, ALL).

        An empty ``select`` means ALL. Raises CatalogError for a selector matching no rule.
        """
        self.check_selectors([*select, *ignore])
        chosen = [r for r in self.rules if not select or any(_matches(r, s) for s in select)]
        return [r for r in chosen if not any(_matches(r, s) for s in ignore)]

    def check_selectors(self, selectors: Iterable[str]) -> None:
        bad = [s for s in selectors if not any(_matches(r, s) for r in self.rules)]
        if bad:
            raise CatalogError(
                f"unknown rule selector(s): {', '.join(bad)} "
                "(use ids, id prefixes like HN1, rule names, categories or ALL)"
            )


def _matches(rule: Rule, sel: str) -> bool:
    s = sel.strip()
    return (
        s.upper() == "ALL"
        or rule.id.startswith(s.upper())
        and s.upper().startswith("HN")
        or s == rule.name
        or s == rule.category
    )


def load(path: str | Path | None = None) -> Catalog:
    """Parse and validate the catalogue (structure only; no torch needed)."""
    p = Path(path) if path else CATALOG_PATH
    raw = p.read_bytes()
    key = (str(p), hashlib.sha256(raw).hexdigest())
    if key not in _LOADED:
        _LOADED[key] = _load(p, raw)
    cat = _LOADED[key]
    return Catalog(list(cat.rules), cat.version, cat.path)


_LOADED: dict[tuple[str, str], Catalog] = {}


def _load(p: Path, raw: bytes) -> Catalog:
    try:
        doc = yaml.load(raw, Loader=_Loader)
    except yaml.YAMLError as e:
        raise CatalogError(f"{p}: not valid YAML: {e}") from None
    if (
        not isinstance(doc, dict)
        or doc.get("schema") != SCHEMA
        or not isinstance(doc.get("rules"), list)
    ):
        raise CatalogError(f"{p}: expected a mapping with 'schema: {SCHEMA}' and a 'rules' list")
    problems: list[str] = []
    rules: list[Rule] = []
    seen_ids: set[str] = set()
    seen_names: set[str] = set()
    for i, entry in enumerate(doc["rules"]):
        where = f"rule #{i + 1}" + (f" ({entry.get('id')})" if isinstance(entry, dict) else "")
        if isinstance(entry, dict) and isinstance(entry.get("match"), dict):
            try:
                entry["match"] = expand_vocabulary(entry["match"])
            except CatalogError as e:
                problems.append(f"{where}: {e}")
                continue
        errs = _validate_entry(entry)
        if not errs:
            if entry["id"] in seen_ids:
                errs.append(f"duplicate id {entry['id']}")
            if entry["name"] in seen_names:
                errs.append(f"duplicate name {entry['name']}")
        if errs:
            problems += [f"{where}: {e}" for e in errs]
            continue
        seen_ids.add(entry["id"])
        seen_names.add(entry["name"])
        rules.append(_to_rule(entry))
    if problems:
        raise CatalogError(f"{p}: {len(problems)} problem(s):\n  " + "\n  ".join(problems))
    # the vocabulary is part of the rules: a change to it is a new catalogue version
    version = hashlib.sha256(raw + _VOCABULARY_PATH.read_bytes()).hexdigest()[:12]
    return Catalog(rules, version, str(p))


def _vocabulary(name: str) -> Any:
    value = getattr(vocabulary, name, None)
    if not isinstance(value, (str, tuple, frozenset)):
        raise CatalogError(f"vocabulary.{name} is not a list of audits/vocabulary.py")
    return value if isinstance(value, str) else list(value)


def expand_vocabulary(value: Any) -> Any:
    """A value (str, list, dict) with its references to audits/vocabulary.py (``vocabulary.NAME``
    whole, ``<vocabulary.NAME>`` inside a pattern) replaced by their words."""
    if isinstance(value, dict):
        return {k: expand_vocabulary(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_vocabulary(v) for v in value]
    if not isinstance(value, str) or "vocabulary." not in value:
        return value
    whole = _VOCABULARY_WHOLE.match(value)
    if whole:
        return _vocabulary(whole.group(1))
    return _VOCABULARY_PART.sub(
        lambda m: "|".join(re.escape(w) for w in _vocabulary(m.group(1))), value
    )


def _validate_entry(e: Any) -> list[str]:
    if not isinstance(e, dict):
        return ["not a mapping"]
    errs = [f"missing '{k}'" for k in _REQUIRED if k not in e]
    errs += [f"unknown key '{k}'" for k in e if k not in _REQUIRED and k not in _OPTIONAL]
    if errs:
        return errs
    if not isinstance(e["id"], str) or not _ID.match(e["id"]):
        errs.append(f"id {e['id']!r} is not HN + 3 digits")
    elif (e["id"].startswith("HN8")) != (e["language"] in ("cpp", "cmake")):
        errs.append("HN8xx ids are reserved for (and required of) cpp/cmake rules")
    if not isinstance(e["name"], str) or not _NAME.match(e["name"]):
        errs.append(f"name {e['name']!r} is not kebab-case")
    if e["safety"] not in SAFETY_LEVELS:
        errs.append(f"safety {e['safety']!r} not in {SAFETY_LEVELS}")
    if e["language"] not in LANGUAGES:
        errs.append(f"language {e['language']!r} not in {LANGUAGES}")
    if e["kind"] not in KINDS:
        errs.append(f"kind {e['kind']!r} not in {KINDS}")
    for k in ("title", "category", "rationale"):
        if not isinstance(e[k], str) or not e[k].strip():
            errs.append(f"'{k}' must be a non-empty string")
    rep = e["replacement"]
    name_re = _CPP_NAME if e["language"] in ("cpp", "cmake") else _DOTTED  # C++: at::x::y
    if rep is not None and (not isinstance(rep, str) or not name_re.match(rep)):
        errs.append(f"replacement {rep!r} is not a dotted name or null")
    if not isinstance(e["match"], dict):
        errs.append("'match' must be a mapping")
    elif e["language"] == "python":
        errs += _validate_py_match(e["match"])
    errs += _validate_fix(e.get("fix", {}))
    v = e.get("verify", [])
    if not isinstance(v, list) or not all(isinstance(x, str) and _DOTTED.match(x) for x in v):
        errs.append("'verify' must be a list of dotted names")
    return errs


def _validate_py_match(m: dict) -> list[str]:
    t = m.get("type")
    if t not in PY_MATCH:
        return [f"match type {t!r} not in {sorted(PY_MATCH)}"]
    required, optional = PY_MATCH[t]
    allowed = required | optional | {"type", "predicate"}
    errs = [f"match.{k} required for type {t}" for k in required if not m.get(k)]
    errs += [f"match.{k} not allowed for type {t}" for k in m if k not in allowed]
    if t == "identifier" and not (m.get("identifiers") or m.get("prefixes")):
        errs.append("identifier match needs identifiers or prefixes")
    if t == "literal" and not any(m.get(k) for k in optional):
        errs.append("literal match needs at least one context")
    if t == "import" and not (m.get("modules") or m.get("components")):
        errs.append("import match needs modules or components")
    if t == "branch" and not set(m.get("nodes", [])) <= BRANCH_NODES:
        errs.append(f"branch nodes must be among {sorted(BRANCH_NODES)}")
    for k in ("targets", "compare", "contains", "components", "subject"):
        if k in m:
            try:
                re.compile(m[k])
            except (re.error, TypeError) as ex:
                errs.append(f"match.{k} is not a regex: {ex}")
    for k in (
        "names",
        "methods",
        "attributes",
        "identifiers",
        "prefixes",
        "values",
        "keywords",
        "calls",
        "nodes",
        "anyargs",
        "modules",
        "backends",
        "accelerators",
        "family",
        "open",
        "enums",
        "members",
        "beside",
    ):
        if k in m and not (isinstance(m[k], list) and all(isinstance(x, str) for x in m[k])):
            errs.append(f"match.{k} must be a list of strings")
    return errs


def _validate_fix(f: Any) -> list[str]:
    if not isinstance(f, dict):
        return ["'fix' must be a mapping"]
    errs = [f"fix key {k!r} unknown" for k in f if k not in ("style", "args", "guard", "notes")]
    if "style" in f and f["style"] not in FIX_STYLES:
        errs.append(f"fix.style {f['style']!r} not in {sorted(FIX_STYLES)}")
    args = f.get("args", {})
    if not isinstance(args, dict) or any(k not in FIX_ARGS for k in args):
        errs.append(f"fix.args keys must be among {sorted(FIX_ARGS)}")
    return errs


def _to_rule(e: dict) -> Rule:
    verify = e.get("verify")
    if verify is None and e["language"] != "python":
        verify = []  # C++ names are checked against torch's headers instead
    if verify is None:
        rep = e["replacement"]
        verify = [rep] if rep and "{" not in rep else []
    return Rule(
        id=e["id"],
        name=e["name"],
        title=e["title"],
        category=e["category"],
        language=e["language"],
        kind=e["kind"],
        match=e["match"],
        replacement=e["replacement"],
        safety=e["safety"],
        rationale=e["rationale"].strip(),
        example_before=e.get("before", ""),
        example_after=e.get("after", ""),
        verify=tuple(verify),
        fix=dict(e.get("fix", {})),
    )


def resolve_dotted(name: str) -> bool:
    """Whether a dotted name exists in the installed packages (imports the longest module prefix)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def verify(cat: Catalog) -> list[str]:
    """Problems with replacements that do not exist in the installed torch (imports torch)."""
    return [
        f"{r.id} {r.name}: {n} does not exist in the installed torch"
        for r in cat.rules
        for n in r.verify
        if not resolve_dotted(n)
    ]
