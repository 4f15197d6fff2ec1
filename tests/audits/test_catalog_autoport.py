"""autoport's ``torch.cuda`` stand-in table (``accelerator_api/_port/cuda_namespace.py``) and the
rule catalogue (``audits/catalog.yaml``) say the same thing about every ``torch.cuda`` API both
know: the audit finds each API autoport ports, under a rule of its own (not the ``torch.cuda.*``
catch-all) when autoport maps it to a neutral API, and where both name a neutral API it is the
same one. The few places they differ on purpose are listed with the reason, and must still differ.
"""

from __future__ import annotations

import re
import types

import pytest
import torch

from accelerator_api._port import cuda_namespace
from audits.catalog import load

CATALOG = load()
TABLE = cuda_namespace._mapping()  # name -> (stand-in, what it maps to); target: cpu
CATCH_ALL = "HN199"
# what autoport maps to, when it is a neutral API by name
NEUTRAL = re.compile(r"^(?:accelerator_api|torch\.accelerator)\.(\w+)$")

DIFFER = {
    "memory_cached": "deprecated alias of memory_reserved: autoport maps it, the audit leaves it "
    "to review under the catch-all",
    "max_memory_cached": "deprecated alias of max_memory_reserved (as memory_cached)",
    "reset_max_memory_allocated": "deprecated alias of reset_peak_memory_stats (as memory_cached)",
    "get_device_capability": "autoport raises Unsupported (a CUDA compute capability means "
    "nothing elsewhere); the audit offers torch.get_device_module(...) for review",
    "ComplexFloatTensor": "autoport's legacy tensor types (LEGACY_TYPES) have no complex dtypes",
    "ComplexDoubleTensor": "as ComplexFloatTensor",
    "_sleep": "a private spin kernel for tests: autoport stands in for public APIs only; the "
    "codemod rewrites it where the code holds a device (HN114)",
}


def _rule_for(full: str):
    """The catalogue rule the scanner reports for the dotted name ``full`` (its precedence:
    the longest exact name, then the longest ``prefix.*``)."""
    exact, wild = {}, {}
    for r in CATALOG.for_languages(["python"]):
        if r.match["type"] == "name":
            for n in r.match["names"]:
                (wild if n.endswith(".*") else exact).setdefault(n.removesuffix(".*"), r)
    parts = full.split(".")
    for k in range(len(parts), 0, -1):
        if ".".join(parts[:k]) in exact:
            return exact[".".join(parts[:k])]
        if k > 1 and ".".join(parts[: k - 1]) in wild:
            return wild[".".join(parts[: k - 1])]
    return None


def _catalog_names() -> dict[str, object]:
    """``torch.cuda.X`` -> rule, for the APIs the catalogue names one by one."""
    return {
        n.split(".")[2]: r
        for r in CATALOG.for_languages(["python"])
        if r.match["type"] == "name"
        for n in r.match["names"]
        if n.startswith("torch.cuda.") and n.count(".") == 2 and not n.endswith("*")
    }


@pytest.mark.parametrize("name", sorted(TABLE))
def test_the_audit_finds_what_autoport_ports(name):
    rule = _rule_for(f"torch.cuda.{name}")
    assert rule is not None, f"torch.cuda.{name} is ported by autoport but no rule finds it"
    action = TABLE[name][1]
    if NEUTRAL.match(action) and name not in DIFFER:
        assert rule.id != CATCH_ALL, (
            f"autoport maps torch.cuda.{name} to {action}; the catalogue only has the catch-all"
        )


@pytest.mark.parametrize("name", sorted(TABLE))
def test_both_name_the_same_neutral_api(name):
    m = NEUTRAL.match(TABLE[name][1])
    rep = _rule_for(f"torch.cuda.{name}").replacement_for(f"torch.cuda.{name}")
    theirs = NEUTRAL.match(rep or "")
    if m and theirs and name not in DIFFER:
        assert m.group(1) == theirs.group(1), (name, TABLE[name][1], rep)


def test_every_neutral_catalogue_entry_is_ported():
    """A ``torch.cuda`` function or class the catalogue gives a neutral replacement is one
    autoport stands in for (submodules such as ``amp`` are ported as modules, not here). A
    replacement in ``torch.cuda`` is no neutral API: HN116 keeps CUDA's call under its check."""
    missing = [
        f"torch.cuda.{name} ({rule.id} -> {rule.replacement})"
        for name, rule in sorted(_catalog_names().items())
        if rule.replacement
        and not rule.replacement.startswith("torch.cuda.")  # HN116: CUDA's own call, checked
        and rule.safety != "manual"
        and not isinstance(getattr(torch.cuda, name, None), types.ModuleType)
        and name not in TABLE
        and name not in DIFFER
    ]
    assert missing == []


def _differs(name: str) -> bool:
    rule = _rule_for(f"torch.cuda.{name}")
    ported = name in TABLE and NEUTRAL.match(TABLE[name][1]) is not None
    if ported and (rule is None or rule.id == CATCH_ALL):
        return True  # autoport maps it, the audit has nothing neutral to say
    return name not in TABLE and rule is not None and rule.safety != "manual"  # the reverse


def test_the_listed_differences_still_exist():
    stale = [name for name in DIFFER if not _differs(name)]
    assert stale == [], f"no longer differ, drop from DIFFER: {stale}"
