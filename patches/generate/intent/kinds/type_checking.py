"""``type-checking``: the site is in the body of ``if TYPE_CHECKING:`` (``typing.TYPE_CHECKING``),
which never runs: only a type checker reads it. vLLM declares its environment's defaults there
(``VLLM_TARGET_DEVICE: str = "cuda"``) beside the functions that read the real ones; a rewrite
there changes no behaviour, makes the stub disagree with the code it describes, and may add an
import the module avoided (round 41). Not about CUDA: asked when no kind before it answered."""

from __future__ import annotations

import ast

from patches.generate.intent.probe import Evidence, Probe

KIND = "type-checking"
SUMMARY = "under `if TYPE_CHECKING:`, which never runs"
ALONE = True


def detect(p: Probe) -> list[Evidence]:
    n = p.node
    while n is not None:
        parent = p.index.parents.get(n)
        if isinstance(parent, ast.If) and n in parent.body and _type_checking(parent.test):
            return [Evidence(KIND, parent.lineno, "the block only a type checker reads")]
        n = parent
    return []


def _type_checking(test: ast.AST) -> bool:
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
    return name == "TYPE_CHECKING"
