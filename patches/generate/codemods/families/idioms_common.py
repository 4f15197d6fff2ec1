"""What the idiom families (``idioms_*.py``) share: the neutral expressions they write.

Every expression names the *current* accelerator, so on a CUDA machine it evaluates to what the
CUDA literal did (``torch.accelerator.current_accelerator()`` is ``torch.device("cuda")`` there,
with no index, like ``torch.device("cuda")``). With ``--target accelerator_api`` the layer's own
``accelerator_api.device_type()`` is used: "cpu" when there is no accelerator.
"""

from __future__ import annotations

import ast
import re

import libcst as cst
from libcst.metadata import PositionProvider

from patches.generate.intent.nodes import exits, last_name

CUDA_DEVICE_STR = re.compile(r"cuda(?::(\d+))?")  # "cuda" / "cuda:N"

CURRENT = "torch.accelerator.current_accelerator()"
CURRENT_OR_CPU = (
    f'{CURRENT} or "cpu"'  # a device or a string: what get_default_backend_for_device takes
)
# A device type to run on: the accelerator's, CPU when there is none (pytorch/tutorials#3167).
TYPE_OR_CPU = f'{CURRENT}.type if torch.accelerator.is_available() else "cpu"'
API_TYPE = "accelerator_api.device_type()"


def api_target(spec) -> bool:
    """``--target accelerator_api``: the spec maps names our layer provides."""
    return "device_type" in spec.ours


def expr(eng, spec, node, torch_form: str, api_form: str | None = None) -> cst.BaseExpression:
    """``torch_form`` (or ``api_form`` for the accelerator_api target), imports scheduled."""
    if api_form is not None and api_target(spec):
        eng.add_needed_import("accelerator_api", node=node)
        return cst.parse_expression(api_form)
    eng.add_needed_import("torch", node=node)
    return cst.parse_expression(torch_form)


def accel_type(eng, spec, node) -> cst.BaseExpression:
    """The accelerator's device type (for an indexed device: there is an accelerator)."""
    return expr(eng, spec, node, f"{CURRENT}.type", API_TYPE)


def type_or_cpu(eng, spec, node) -> cst.BaseExpression:
    return expr(eng, spec, node, TYPE_OR_CPU, API_TYPE)


def string_value(node) -> str | None:
    """The value of a plain (non-bytes, non-f) string literal, else None."""
    if not isinstance(node, cst.SimpleString) or node.prefix.lower().strip("r"):
        return None
    value = node.evaluated_value
    return value if isinstance(value, str) else None


def with_value(node: cst.SimpleString, old: str, new: str) -> cst.SimpleString:
    """``node`` with its text's first ``old`` replaced by ``new`` (quotes and prefix kept)."""
    q = node.quote
    body = node.value[len(node.prefix) + len(q) : -len(q)]
    return node.with_changes(value=f"{node.prefix}{q}{body.replace(old, new, 1)}{q}")


def specs_at(eng, node, family: str, names: tuple[str, ...] = ()) -> list:
    """Specs of ``family`` at ``node``'s line (whose names include one of ``names``, if given)."""
    return [s for s in eng.specs_for(family, node) if not names or any(n in s.names for n in names)]


def specs_here(eng, node, specs: list) -> list:
    """Of ``specs``, those whose rule has a finding where ``node`` starts: a line can hold two
    findings, and one rule's site is not another's (stanza's ``default='cuda', choices=['cpu',
    'cuda']``: the choice's HN509 does not rewrite the default the gate left). All of them where
    no findings are given."""
    if eng.gate is None:
        return specs
    r = eng.get_metadata(PositionProvider, node)
    at = (eng.line(node), r.start.column + 1)
    rules = {f.rule for f in eng.gate.findings if (f.line, f.col) <= at <= (f.end_line, f.end_col)}
    return [s for s in specs if s.rule in rules]


def cuda_call_to(call: cst.Call, name: str) -> cst.Call | None:
    """``x.cuda()`` / ``x.cuda(non_blocking=b)`` -> ``x.to(<name>[, non_blocking=b])``; None where
    the call passes anything else (a device index: not the named device's to say)."""
    if any(a.keyword is None or a.keyword.value != "non_blocking" for a in call.args):
        return None
    comma = (
        cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        if call.args
        else cst.MaybeSentinel.DEFAULT
    )
    return call.with_changes(
        func=call.func.with_changes(attr=cst.Name("to")),
        args=(cst.Arg(cst.Name(name), comma=comma), *call.args),
    )


def first_line_of(eng, module: cst.Module) -> int | None:
    """The first line of a region's first statement (its first decorator's, where it has any:
    the anchors ``script_plan.first_line`` names), or None for an empty region."""
    if not module.body:
        return None
    first = module.body[0]
    return eng.line(first.decorators[0] if getattr(first, "decorators", ()) else first)


def insert_device_line(
    eng, spec, original: cst.Module, updated: cst.Module, name: str, form: str = TYPE_OR_CPU
):
    """``<name> = <the accelerator's type, or "cpu">`` (``form``, written with ``torch``) before
    the region's first statement, with the import it needs; a def/class after it keeps its two
    blank lines (PEP 8), and the comments above that statement stay with it, a blank line below
    the new one (``# Training settings`` heads the parser it precedes, not the device)."""
    api = api_target(spec)
    eng.device_lines.add(name)
    eng.add_needed_import("accelerator_api" if api else "torch", node=original.body[0])
    stmt = cst.parse_statement(f"{name} = {API_TYPE if api else form}\n")
    first = updated.body[0]
    lead = [*updated.header, *first.leading_lines]  # a region's leading comments: its header
    cut = next((i for i, ln in enumerate(lead) if ln.comment is not None), len(lead))
    blanks, comments = lead[:cut], lead[cut:]
    gap = [cst.EmptyLine()] * (2 if isinstance(first, (cst.FunctionDef, cst.ClassDef)) else 0)
    if comments and not gap:
        gap = [cst.EmptyLine()]
    return updated.with_changes(
        header=[],
        body=[
            stmt.with_changes(leading_lines=blanks),
            first.with_changes(leading_lines=[*gap, *comments]),
            *updated.body[1:],
        ],
    )


def indent_unit(ctx) -> str:
    """One level of the file's indentation (its first indented block's step; four spaces in a
    file with none)."""
    lines = ctx.source.splitlines()
    for node in ctx.nodes:
        body = getattr(node, "body", None)
        if isinstance(node, ast.stmt) and isinstance(body, list) and body:
            outer, inner = lines[node.lineno - 1], lines[body[0].lineno - 1]
            if body[0].lineno == node.lineno:
                continue  # `if x: y` on one line
            lead = len(outer) - len(outer.lstrip(" \t"))
            step = inner[lead : len(inner) - len(inner.lstrip(" \t"))]
            if step and not step.strip():
                return step
    return "    "


def statement(eng, text: str) -> cst.BaseStatement:
    """``text`` (written with four-space blocks) as a statement for the region being rewritten:
    each block indented by the file's own step. A region is parsed alone, wrapped in ``if 1:``
    when indented, so libcst's default indentation there is the region's *absolute* one: a block
    left at the default would be indented that much again."""
    unit = indent_unit(eng.ctx)

    class _Indent(cst.CSTTransformer):
        def leave_IndentedBlock(self, original, updated):
            return updated.with_changes(indent=unit)

    return cst.parse_statement(text).visit(_Indent())


def under_availability_check(
    eng, original, updated, test: str = "torch.accelerator.is_available()"
) -> cst.BaseStatement:
    """``updated`` (the rewrite of the statement ``original``, or a list of statements) inside ``if
    torch.accelerator.is_available():`` (or ``if <test>:``), keeping the first statement's leading
    lines on the ``if``: a bare call that raises without an accelerator where CUDA's was a no-op."""
    eng.add_needed_import("torch", node=original)
    if isinstance(updated, list):
        first, rest = updated[0], updated[1:]
    else:
        first, rest = updated, []
    guard = statement(eng, f"if {test}:\n    pass\n")
    body = guard.body.with_changes(body=[first.with_changes(leading_lines=[]), *rest])
    return guard.with_changes(body=body, leading_lines=first.leading_lines)


def node_span(node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    """((line, col), (end line, end col)) of ``node``: a companion span (``Family.companions``)."""
    return ((node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset))


def string_unit_lines(units: dict, lines: frozenset[int], keep=None) -> frozenset[int]:
    """``lines`` and every line of the strings (``keep``-filtered) of the units at ``lines``;
    ``units``: test line -> (subject, its strings), a family's units that serve another's."""
    return lines | frozenset(
        n
        for line, (_subject, strings) in units.items()
        if line in lines
        for s in strings
        if keep is None or keep(s)
        for n in range(s.lineno, s.end_lineno + 1)
    )


def string_unit_spans(units: dict, rule: str, lines: frozenset[int]) -> dict:
    """(rule, test line) -> the spans of that unit's strings, for the units at ``lines``."""
    return {
        (rule, line): [node_span(s) for s in strings]
        for line, (_subject, strings) in units.items()
        if line in lines
    }


def and_terms(expr) -> list:
    """The operands of a libcst ``and`` chain (parentheses kept on the operands)."""
    if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.And):
        return and_terms(expr.left) + and_terms(expr.right)
    return [expr]


def conjuncts(node: ast.AST) -> list[ast.AST]:
    """The terms of an ``ast`` ``and`` chain, through nested (parenthesised) ``and`` chains."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [t for v in node.values for t in conjuncts(v)]
    return [node]


def join_and(parts: list, like) -> cst.BaseExpression:
    """``parts`` joined by ``and`` (one part alone: itself), keeping ``like``'s parentheses."""
    expr = parts[0]
    for p in parts[1:]:
        expr = cst.BooleanOperation(left=expr, operator=cst.And(), right=p)
    if len(parts) > 1 and getattr(like, "lpar", None):
        expr = expr.with_changes(lpar=like.lpar, rpar=like.rpar)
    return expr


AVAILABLE = ("torch.cuda.is_available", "torch.accelerator.is_available")


def after_availability(eng, node) -> bool:
    """``node`` is a later operand of an ``and`` chain whose first operand is an
    ``is_available()`` check (of CUDA or the accelerator): already guarded there (also under a
    ``not``: nemo's ``torch.cuda.is_available() and not
    torch.cuda.is_current_stream_capturing()``)."""
    parent = eng.parent(node)
    while isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        node, parent = parent, eng.parent(parent)
    while isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And):
        left = parent.left
        while isinstance(left, cst.BooleanOperation) and isinstance(left.operator, cst.And):
            left = left.left
        if isinstance(left, cst.Call) and eng.qualnames(left.func) & set(AVAILABLE):
            return left is not node
        parent = eng.parent(parent)
    return False


# a test decorator that skips its definition: where the test holds / where it fails
_SKIP_IF = frozenset({"skipif", "skipIf"})
_SKIP_UNLESS = frozenset({"skipUnless"})


def _skip_decorators(node) -> list[tuple[ast.expr, bool]]:
    """(test, whether the body runs where it holds) of each ``@pytest.mark.skipif(test, ...)`` /
    ``@unittest.skipIf(test, ...)`` / ``@unittest.skipUnless(test, ...)`` of a definition."""
    out = []
    for dec in getattr(node, "decorator_list", ()):
        if isinstance(dec, ast.Call) and dec.args:
            name = last_name(dec.func)
            if name in _SKIP_IF or name in _SKIP_UNLESS:
                out.append((dec.args[0], name in _SKIP_UNLESS))
    return out


def known_blocks(tree: ast.AST, judge) -> list[tuple[int, int, int, object]]:
    """(first line, last line, line of the deciding test, what ``judge`` said) of every block
    that runs only where ``judge(test, taken)`` holds (not None): the body (``taken``) or the
    ``else`` of an ``if``, the rest of a block after an ``if`` with no ``else`` that leaves
    (``return``/``raise``/``continue``/``break``, a skip or exit call: ``taken`` False, the test
    failed), and the body of a definition under a skip decorator (``@pytest.mark.skipif(test)``:
    ``taken`` False; ``@unittest.skipUnless(test)``: True)."""
    out: list[tuple[int, int, int, object]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            for block, taken in ((node.body, True), (node.orelse, False)):
                said = judge(node.test, taken) if block else None
                if said is not None:
                    out.append((block[0].lineno, block[-1].end_lineno, node.lineno, said))
        for test, taken in _skip_decorators(node):
            said = judge(test, taken)
            if said is not None:
                out.append((node.body[0].lineno, node.body[-1].end_lineno, test.lineno, said))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block[:-1]):
                if isinstance(stmt, ast.If) and not stmt.orelse and exits(stmt.body):
                    said = judge(stmt.test, False)
                    if said is not None:
                        rest = block[i + 1 :]
                        out.append((rest[0].lineno, rest[-1].end_lineno, stmt.lineno, said))
    return out


def block_lines(blocks) -> frozenset[int]:
    """Every line of ``known_blocks``' blocks."""
    return frozenset(n for first, last, _, _ in blocks for n in range(first, last + 1))


def quoted(eng, node, text: str) -> str:
    """``text`` as a string literal that may stand inside ``node``'s f-strings (before Python
    3.12 an f-string's expression cannot hold its own quote)."""
    quotes = ""
    parent = eng.parent(node)
    while parent is not None and not isinstance(parent, cst.BaseStatement):
        if isinstance(parent, cst.FormattedString):
            quotes += parent.start
        parent = eng.parent(parent)
    return f"'{text}'" if '"' in quotes else f'"{text}"'
