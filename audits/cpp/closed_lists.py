"""Closed device lists in C++ (rule family `closed-device-list`): code that enumerates backends.

Three shapes, each found from a CUDA/HIP token inside it:

- a braced list of backends: `DispatchKeySet({BackendComponent::CPUBit, BackendComponent::CUDABit,
  ...})`, `std::array<DeviceType, 3>{kCPU, kCUDA, kXPU}`;
- a chain: `t == kCUDA || t == kXPU || x.is_mps()`, `t != kCUDA && t != kXPU`,
  `DispatchKeySet(DispatchKey::CUDA) | DispatchKeySet(DispatchKey::XPU)`;
- a `switch` whose `case` labels name backends.

A list is closed when it names at least two backends, one of them an accelerator, and not the
open, out-of-tree one (PrivateUse1): a new accelerator silently takes the other path. The backend
vocabulary is the rule's catalogue data (`match.backends`, `match.accelerators`, `match.open`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

CHAIN_OPS = {"||": "==", "&&": "!=", "|": None}  # chain operator -> the comparison it joins
ERROR_RE = re.compile(r"\b(?:TORCH_CHECK\w*|TORCH_INTERNAL_ASSERT\w*|AT_ERROR|throw|abort)\b")


@dataclass(frozen=True)
class Vocab:
    backends: tuple[str, ...]
    accelerators: frozenset[str]
    open: str
    name_re: re.Pattern[str]  # a backend named in code; group 1..4: the backend's spelling

    @classmethod
    def from_match(cls, match: dict) -> Vocab:
        backends = tuple(match["backends"])
        alt = "|".join(sorted(backends, key=len, reverse=True))
        prefixes = "|".join(match.get("key_prefixes", ()))
        name_re = re.compile(
            rf"\bDeviceType\s*::\s*({alt})\b"
            rf"|\bk({alt})\b"
            rf"|\bBackendComponent\s*::\s*({alt})Bit\b"
            rf"|\bDispatchKey\s*::\s*(?:{prefixes})?({alt})\b"
            rf"|\bis_({'|'.join(b.lower() for b in backends)}|privateuseone)\s*\("
        )
        return cls(backends, frozenset(match["accelerators"]), match["open"], name_re)

    def names(self, text: str) -> list[str]:
        """Backends named in ``text``, in order, each once (`is_xpu()` counts as XPU)."""
        lower = {b.lower(): b for b in self.backends}
        lower["privateuseone"] = self.open
        out: list[str] = []
        for m in self.name_re.finditer(text):
            name = next(g for g in m.groups() if g)
            name = lower.get(name, name) if m.lastindex == 5 else name
            if name not in out:
                out.append(name)
        return out


def container(node: Node) -> Node | None:
    """The list, chain or switch that ``node`` (a backend token, or an `is_cuda()` call) is an
    element of, or None."""
    e = node
    while e.parent is not None and e.parent.type in (
        "qualified_identifier",
        "parenthesized_expression",
    ):
        e = e.parent
    p = e.parent
    if p is None:
        return None
    if p.type == "initializer_list":
        return p
    if p.type == "case_statement" and p.child_by_field_name("value") == e:
        body = p.parent
        if body is not None and body.parent is not None and body.parent.type == "switch_statement":
            return body.parent
        return None
    # A comparison or a predicate call, possibly negated or inside DispatchKeySet(...).
    if p.type == "binary_expression" and _op(p) in ("==", "!="):
        e = p
    elif p.type == "argument_list" and p.parent is not None and p.parent.type == "call_expression":
        e = p.parent
    elif (
        p.type == "field_expression" and p.parent is not None and p.parent.type == "call_expression"
    ):
        e = p.parent
    elif p.type == "call_expression" and p.child_by_field_name("function") == e:
        e = p  # unqualified `is_cuda()`
    top, op = None, None
    n = e
    while n.parent is not None:
        q = n.parent
        if q.type in ("parenthesized_expression", "unary_expression"):
            n = q
            continue
        if q.type == "binary_expression" and _op(q) in CHAIN_OPS and op in (None, _op(q)):
            top, n, op = q, q, _op(q)  # one operator: `(a || b) && c` is the chain `a || b`
            continue
        break
    return top


def _op(node: Node) -> str:
    op = node.child_by_field_name("operator")
    return op.type if op is not None else ""


def _operands(chain: Node, op: str) -> list[Node]:
    out: list[Node] = []
    stack = [chain]
    while stack:
        n = stack.pop()
        while n.type == "parenthesized_expression" and n.named_child_count == 1:
            n = n.named_children[0]
        if n.type == "binary_expression" and _op(n) == op:
            stack.append(n.child_by_field_name("right"))
            stack.append(n.child_by_field_name("left"))
        else:
            out.append(n)
    return out


def _text(data: bytes, node: Node) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


@dataclass(frozen=True)
class Closed:
    shape: str  # "list", "chain", "switch"
    named: tuple[str, ...]
    left_out: tuple[str, ...]
    fallback: str  # what every other backend gets (switches), or ""


def evaluate(node: Node, data: bytes, vocab: Vocab) -> Closed | None:
    """The closed list ``node`` (from container()) is, or None when it is open or not a list."""
    if node.type == "initializer_list":
        named = vocab.names(" ".join(_text(data, c) for c in node.named_children))
        shape, fallback = "list", ""
    elif node.type == "switch_statement":
        body = node.child_by_field_name("body")
        cases = [c for c in body.named_children if c.type == "case_statement"]
        values = [c.child_by_field_name("value") for c in cases]
        named = vocab.names(" ".join(_text(data, v) for v in values if v is not None))
        shape, fallback = "switch", _default(data, cases)
    else:
        op = _op(node)
        cmp = CHAIN_OPS[op]
        texts = []
        for o in _operands(node, op):
            if o.type == "binary_expression" and (cmp is None or _op(o) == cmp):
                texts.append(_text(data, o))
            elif op == "||" and o.type == "call_expression":
                texts.append(_text(data, o))
            elif op == "&&" and o.type == "unary_expression" and _text(data, o).startswith("!"):
                texts.append(_text(data, o))
            elif op == "|" and o.type == "call_expression":
                texts.append(_text(data, o))
        named = vocab.names(" ".join(texts))
        shape, fallback = "chain", ""
    if vocab.open in named or len(named) < 2:
        return None
    accel = [n for n in named if n in vocab.accelerators]
    if not accel or set(named) <= {"CUDA", "HIP"}:  # none, or the CUDA family alone
        return None
    left_out = (vocab.open,) + tuple(
        sorted(a for a in vocab.accelerators if a not in named and a != vocab.open)
    )
    return Closed(shape, tuple(named), left_out, fallback)


def _default(data: bytes, cases: list[Node]) -> str:
    for c in cases:
        if c.child_by_field_name("value") is None:  # `default:`
            body = [k for k in c.named_children if k.type != "comment"]
            if not body:
                return "`default:` falls through to the next arm"
            first = " ".join(_text(data, body[0]).split())
            first = first if len(first) <= 60 else first[:57] + "..."
            kind = "an error" if ERROR_RE.search(first) else "a generic path"
            return f"`default:` ({kind}: `{first}`)"
    return "no `default:` (the switch does nothing for them)"
