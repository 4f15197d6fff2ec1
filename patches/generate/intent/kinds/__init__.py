"""The evidence kinds, in the order the gate asks them: the registry is ``ORDER``.

A kind is one module here (ruff's one rule per module) with ``KIND`` (its name), ``SUMMARY`` (one
line for reports), ``detect(probe) -> [Evidence]`` and a docstring that says what it detects and
why. Optional flags: ``NEEDS_NODE = False`` (asked also when no expression sits at the finding's
span) and ``ALONE = True`` (asked only when no kind before it answered: evidence about the rewrite,
not about CUDA), ``LATE = True`` (asked once the others have settled: a reason they would name
more precisely). Adding a kind is one module and one line of ``ORDER``.

Order matters: the gate keeps one evidence per kind and per thing that stays CUDA (the first),
and the reason a site is left names its first two.
"""

from __future__ import annotations

import importlib

ORDER = (
    "generated",
    "patched",
    "type_checking",
    "owned_path",
    "legacy",
    "mocked",
    "function",
    "kernels",
    "twin",
    "comment",
    "required",
    "label",
    "check",
    "missing",
    "saved",
    "gpu_word",
    "expectation",
    "placed",
    "tuning",
    "product",
    "state",
    "restore",
    "rng_state",
    "scaler",
    "timeline",
    "stream_user",
    "index_source",
    "name",
    "chain",
    "guarded",
    "reached",
    "gating_name",
    "loop",
    "comprehension",
    "branch",
    "parallel",
    "flow",
    "picked",
    "declared",
    "placement",
    "device_unit",
    "statement",
    "library_unit",
    "self_implementation",
    "stated",
    "redundant",
    "class_constant",
    "module_lacks",
    "dtype_lacks",
    "plugin_allocator",
    "pinning",
    "unguarded",
    "optional_torch",
)

REGISTRY = tuple(importlib.import_module(f"{__name__}.{name}") for name in ORDER)

# kind -> its one-line summary, for reports and ``--explain``
KINDS: dict[str, str] = {k.KIND: k.SUMMARY for k in REGISTRY}
