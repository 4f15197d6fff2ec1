"""``self-implementation``: the file defines the neutral replacement itself (``torch/accelerator``
defining ``synchronize``): the rewrite would make the replacement call back into its own caller.
Not about CUDA; about the rewrite."""

from __future__ import annotations

from patches.generate.intent.nodes import tree_path
from patches.generate.intent.probe import Evidence, Probe

KIND = "self-implementation"
SUMMARY = (
    "the file defines the neutral replacement itself: the rewrite would call back into its own "
    "caller"
)
NEEDS_NODE = False


def detect(p: Probe) -> list[Evidence]:
    here = p.options.defined_in.get(p.f.rule, {}).get(tree_path(p.ctx))
    return [Evidence(KIND, p.f.line, f"this file defines {here}")] if here else []
