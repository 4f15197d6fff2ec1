"""The helper rename's body translations: a CUDA-named helper's runtime queries -> their
device-neutral spellings (``TRANSLATIONS``), its messages' ``CUDA`` -> accelerator."""

from __future__ import annotations

import re

import libcst as cst

from patches.generate.codemods.engine import dotted_name
from patches.generate.codemods.families.idioms_common import and_terms, join_and

WORD = "accelerator"
_PART = re.compile(r"(?<![A-Za-z0-9])(cuda|CUDA|Cuda)(?![A-Za-z0-9])")
_MESSAGE_WORD = re.compile(r"\bCUDA\b")

AVAILABLE = "torch.cuda.is_available"
BUILT = "torch.backends.cuda.is_built"
# torch.cuda query -> (its neutral spelling, whether it needs the availability guard around it,
# the capability the guard must also test: None, or the device module's attribute)
TRANSLATIONS: dict[str, tuple[str, bool, str | None]] = {
    AVAILABLE: ("torch.accelerator.is_available()", False, None),
    "torch.cuda.device_count": ("torch.accelerator.device_count()", False, None),
    "torch.cuda.synchronize": ("torch.accelerator.synchronize()", True, None),
    "torch.cuda.current_device": ("torch.accelerator.current_device_index()", True, None),
    # only CUDA and XPU have a stream-capture query (torch.Stream.is_capturing raises "Backend
    # doesn't support stream capture query" elsewhere, MPS among them): the guard asks the
    # accelerator's module for it, as upstream limits its check to the backends that capture
    "torch.cuda.is_current_stream_capturing": (
        "torch.get_device_module().is_current_stream_capturing()",
        True,
        "is_current_stream_capturing",
    ),
}


def candidate(name: str) -> bool:
    return (
        name.startswith("_")
        and not (name.startswith("__") and name.endswith("__"))
        and any(p.lower() == "cuda" for p in name.split("_"))
    )


def new_name(name: str) -> str:
    return _PART.sub(
        lambda m: {"cuda": "accelerator", "CUDA": "ACCELERATOR"}.get(m[1], "Accelerator"), name
    )


def _call_of(node) -> str | None:
    """``torch.cuda.x`` for a call ``torch.cuda.x()`` without arguments."""
    if isinstance(node, cst.Call) and not node.args:
        return dotted_name(node.func)
    return None


def _guard_test(test) -> bool:
    """An availability check (already neutral where another step rewrote it)."""
    return any(
        _call_of(c) in (AVAILABLE, "torch.accelerator.is_available") for c in and_terms(test)
    )


class _Untranslatable(Exception):
    pass


class _Body(cst.CSTTransformer):
    """The body's CUDA queries -> their neutral spellings (``TRANSLATIONS``), an availability
    check's ``torch.backends.cuda.is_built()`` dropped (``is_available`` implies it), a guard
    extended by the capability a translated query needs, and ``CUDA`` in messages -> accelerator."""

    def __init__(self) -> None:
        self.hits = 0  # CUDA queries translated
        self.guards: list[cst.If] = []
        self.needs: dict[int, list[str]] = {}  # id(guard If) -> capabilities
        self.docstrings: set[int] = set()

    def visit_If(self, node: cst.If) -> None:
        self.guards.append(node)

    def leave_If(self, original: cst.If, updated: cst.If):
        self.guards.pop()
        caps = self.needs.pop(id(original), [])
        if not caps:
            return updated
        out, done = [], False
        for c in and_terms(updated.test):
            out.append(c)
            if not done and _call_of(c) == "torch.accelerator.is_available":
                done = True
                for cap in dict.fromkeys(caps):
                    out.append(cst.parse_expression(f'hasattr(torch.get_device_module(), "{cap}")'))
        return updated.with_changes(test=join_and(out, updated.test))

    def leave_BooleanOperation(self, original, updated):
        if not isinstance(original.operator, cst.And):
            return updated
        parts = and_terms(updated)
        names = [_call_of(c) for c in parts]
        # the queries are translated already (children first): is_available is the neutral one
        if BUILT not in names or "torch.accelerator.is_available" not in names:
            return updated
        kept = [c for c, n in zip(parts, names) if n != BUILT]
        return join_and(kept, updated)

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = _call_of(original)
        if name is None or not name.startswith("torch.cuda."):
            return updated
        if name not in TRANSLATIONS:
            raise _Untranslatable(name)
        new, guarded, cap = TRANSLATIONS[name]
        self.hits += 1
        if guarded:
            guard = next(
                (
                    g
                    for g in reversed(self.guards)
                    if _guard_test(g.test) and _contains(g.body, original)
                ),
                None,
            )
            if guard is None:
                raise _Untranslatable(f"{name} outside an availability check")
            if cap:
                self.needs.setdefault(id(guard), []).append(cap)
        return cst.parse_expression(new)

    def leave_SimpleString(self, original, updated):
        if id(original) in self.docstrings or " " not in updated.value:
            return updated  # a docstring, or a word that may be compared or looked up
        return updated.with_changes(value=_MESSAGE_WORD.sub(WORD, updated.value))

    def leave_FormattedStringText(self, original, updated):
        if " " not in updated.value:
            return updated
        return updated.with_changes(value=_MESSAGE_WORD.sub(WORD, updated.value))


def _contains(tree, node) -> bool:
    """``node`` lies in ``tree`` (the guarded block: not its test, not its ``else``)."""
    found = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, n):
            if n is node:
                found.append(n)
            return not found

    tree.visit(_Find())
    return bool(found)


def _docstrings(func: cst.FunctionDef) -> set[int]:
    body = func.body.body if isinstance(func.body, cst.IndentedBlock) else []
    if body and isinstance(body[0], cst.SimpleStatementLine):
        first = body[0].body[0] if body[0].body else None
        if isinstance(first, cst.Expr) and isinstance(first.value, cst.SimpleString):
            return {id(first.value)}
    return set()


def translate(func: cst.FunctionDef, new: str) -> tuple[cst.FunctionDef, int]:
    """(``func`` renamed ``new`` with its body made neutral, how many CUDA queries that took);
    ``_Untranslatable`` where one has no neutral spelling."""
    t = _Body()
    t.docstrings = _docstrings(func)
    body = func.body.visit(t)
    return func.with_changes(name=cst.Name(new), body=body), t.hits
