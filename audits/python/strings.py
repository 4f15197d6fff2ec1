"""What an expression may evaluate to as a string, and its text for the catalogue's regexes."""

from __future__ import annotations

import ast
import re
from typing import Iterator

# A remote device (torch.distributed.remote_device's format): "<worker>/<device>" or
# "rank:<n>/<device>"; the worker name holds no "/", no blank and (but in "rank:<n>") no ":".
# Placeholders of an f-string or .format stand as "{}" (f"rank:{r}/cuda:{r}").
# Text and path operations: a "c10/cuda" handed to them is a path or a text, not a remote
# device (the remote-device form of the ``anywhere`` rules skips their arguments).
TEXT_CALLS = frozenset(
    "startswith endswith find rfind index rindex replace split rsplit partition rpartition "
    "join joinpath Path PurePath glob fnmatch match search sub fullmatch compile".split()
)
_REMOTE = re.compile(r"(?:rank:(?:\d+|\{\})|[^\s/:]+)/([a-z]+)(?::(?:\d+|\{\}))?")


def text_of(node: ast.AST, depth: int = 0) -> str:
    """A cheap textual rendering of an operand, for the compare/targets regexes."""
    if depth > 8:
        return ""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{text_of(node.value, depth + 1)}.{node.attr}"
    if isinstance(node, ast.Call):
        return (
            f"{text_of(node.func, depth + 1)}({','.join(text_of(a, depth + 1) for a in node.args)})"
        )
    if isinstance(node, ast.Subscript):
        return f"{text_of(node.value, depth + 1)}[]"
    return ""


def literal_text(node: ast.AST) -> tuple[str, bool] | None:
    """(text, built) of a string the expression evaluates to or begins with: a constant
    (built False); an f-string's leading text, ``'cuda:{}'.format(i)``, ``"cuda:%d" % i`` or
    ``"cuda:" + str(i)`` (built True: the rest is computed)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, False
    if isinstance(node, ast.JoinedStr):
        head = node.values[0] if node.values else None
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            return head.value, True
        return None
    head = format_head(node)
    return (head.value, True) if head is not None else None


def format_head(node: ast.AST) -> ast.Constant | None:
    """The string constant a ``.format(...)`` call, ``%`` or ``+`` expression starts with."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        left = node.left
        while isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add):
            left = left.left
        if isinstance(left, ast.Constant) and isinstance(left.value, str):
            return left
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        return node.func.value
    return None


def value_matches(text: str, is_fstring: bool, values: tuple[str, ...]) -> bool:
    for v in values:
        if text == v or (text.startswith(v + ":") and (is_fstring or text[len(v) + 1 :].isdigit())):
            return True
    return False


def full_text(node: ast.AST) -> str | None:
    """The whole text of a string constant or f-string, each replacement field as ``{}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value.replace("{", "{{").replace("}", "}}"))
            else:
                parts.append("{}")
        return "".join(parts)
    return None


def remote_device(text: str, values: tuple[str, ...]) -> bool:
    """``text`` is a remote device on one of ``values`` (``"rank:0/cuda:0"``, ``"worker1/cuda"``,
    ``f"{name}/cuda:{i}"``): the device part is a device string of ``values``."""
    m = _REMOTE.fullmatch(text)
    return m is not None and m.group(1) in values


# Code a program writes as text (a generated wrapper, a repro script): a ``torch.device("cuda")``
# or ``torch.device("cuda:{i}")`` there places what the generated code builds on CUDA.
_CODE_DEVICE = re.compile(r"""torch\.device\(\s*(["'])([a-z]+)(?:\1|:)""")


def code_device(text: str, values: tuple[str, ...]) -> bool:
    """``text`` is code that builds a device of one of ``values``
    (``f'torch.device("cuda:{device.index}")'``)."""
    return any(m.group(2) in values for m in _CODE_DEVICE.finditer(text))


def remote_rule(node: ast.AST, rules):
    """(the first of ``rules`` whose values the string ``node`` is a remote device on, its
    text), or None."""
    text = full_text(node)
    for lr in rules if text is not None else ():
        if remote_device(text, lr.values):
            return lr, text
    return None


def code_rule(node: ast.AST, rules):
    """(the first of ``rules`` whose device the code text ``node`` builds, its text), or None."""
    text = full_text(node)
    for lr in rules if text is not None else ():
        if code_device(text, lr.values):
            return lr, text
    return None


def candidates(node: ast.AST) -> Iterator[ast.AST]:
    """String literal nodes an expression may evaluate to (ternaries, `or`, sequences)."""
    if isinstance(node, (ast.Constant, ast.JoinedStr)) or format_head(node) is not None:
        yield node
    elif isinstance(node, ast.IfExp):
        yield from candidates(node.body)
        yield from candidates(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for v in node.values:
            yield from candidates(v)
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        for v in node.elts:
            yield from candidates(v)
