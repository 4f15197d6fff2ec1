"""``cuda-reached``: an availability or device-count check in a test module (a skip gate, a
fixture's skip, a device pick) whose tests reach project code that keeps CUDA work after this
run (``[reached] work``: a ``torch.cuda`` call that initialises CUDA, a placement on
``"cuda"``, CUDA's private members; ``[reached] refusals``: an assertion that refuses other
devices): a function or class of the tree that the code the check guards names (the whole module
for a ``pytestmark``; the function holding a device pick), or one that code names, a few steps
out (``intent/reach.py``). The gate is what keeps those tests off
machines the code cannot run on: axolotl's kernel tests skip without CUDA, while the kernels they
launch ask ``torch.cuda.current_device()`` in their autotune hooks; made neutral, an XPU runs the
tests and they raise where they skipped (round 34). The test module's own code is
``cuda-guarded``'s."""

from __future__ import annotations

from patches.generate.intent.data import reached_rules
from patches.generate.intent.nodes import span_of
from patches.generate.intent.paths import is_test_file
from patches.generate.intent.probe import Evidence, Probe
from patches.generate.intent.reach import reached_defs

KIND = "cuda-reached"
SUMMARY = "the project code its tests reach keeps CUDA work"


def detect(p: Probe) -> list[Evidence]:
    if getattr(p.f, "rule", "") not in reached_rules() or not is_test_file(p.ctx.path):
        return []
    index = getattr(p.ctx, "tree_index", None)
    kept = getattr(index, "kept_cuda", None)
    if kept is None:
        return []
    spans = [sp for kind, sps in p.guarded if kind == "cuda-guarded" for sp in sps]
    if not spans and p.functions:
        spans = [span_of(p.functions[0])]  # a pick: what its function does with the device
    for rel, name in reached_defs(index, p.ctx.path, spans):
        what = kept(rel, name, refusals=True)
        if what:
            return [Evidence(KIND, p.f.line, f"the tests reach {what}")]
    return []
