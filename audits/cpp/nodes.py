"""Node helpers and patterns shared by the C++ detectors (audits/cpp/cxx.py, cuda_api.py)."""

from __future__ import annotations

import re

from tree_sitter import Node

IGNORE_RE = re.compile(rb"hn:\s*ignore\[([^\]\n]*)\]")  # `hn: ignore[HN812]`
MACRO_DEFS = ("preproc_def", "preproc_function_def")

COND_ARMS = {"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef"}
ARMS = COND_ARMS | {"preproc_else"}
CONTAINERS = {  # an error inside one of these says nothing about a token elsewhere in it
    "translation_unit",
    "compound_statement",
    "declaration_list",
    "field_declaration_list",
    "namespace_definition",
    "function_definition",
    "class_specifier",
    "struct_specifier",
    "template_declaration",
    "linkage_specification",
    "lambda_expression",
    "nested_namespace_specifier",
} | ARMS


def _in(node: Node, types: set[str], limit: int = 64) -> Node | None:
    """The nearest ancestor-or-self of ``node`` whose type is in ``types``."""
    n: Node | None = node
    while n is not None and limit:
        if n.type in types:
            return n
        n = n.parent
        limit -= 1
    return None


def _broken(node: Node, limit: int = 6) -> bool:
    """Whether tree-sitter failed to structure the code around ``node``: an ERROR ancestor, or an
    error inside the expression or statement that holds it (not merely somewhere in the enclosing
    block, namespace or function)."""
    n: Node | None = node
    while n is not None and limit:
        if n.type == "ERROR":
            return True
        if n.type in CONTAINERS:
            return False
        if n.has_error:
            return True
        n = n.parent
        limit -= 1
    return False


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace")
