"""The C++ detectors for CUDA APIs beyond namespaces and device types, and closed device lists.

A mixin of the scan in audits/cpp/cxx.py (it uses the scan's data, plan, root, `add` and
`_enabled`): the CUDA runtime C API and error-check macros (HN823), `t.cuda()` (HN813), device
strings (HN814), `#include` of CUDA headers (HN842, also without a parse), kernel launches
(HN841), using-declarations (HN822) and closed device lists (HN860, audits/cpp/closed_lists.py).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from audits.cpp import closed_lists
from audits.cpp.hits import Hit
from audits.cpp.nodes import COND_ARMS, IGNORE_RE, MACRO_DEFS, _in, _text
from audits.cpp.plan import Plan

DECLARATORS = {
    "function_declarator",
    "init_declarator",
    "pointer_declarator",
    "reference_declarator",
    "array_declarator",
    "declaration",
    "field_declaration",
    "parameter_declaration",
    "optional_parameter_declaration",
}
INCLUDE_PATH_RE = re.compile(rb'[<"][^>"\n]+[>"]')
INCLUDE_TOKEN_RE = re.compile(rb'(?P<include>#[ \t]*include[ \t]*[<"](?P<path>[^>"\n]+)[>"])')
CUDA_CASE_RE = re.compile(r"(?:\w+::)*(?:DeviceType::CUDA|kCUDA|BackendComponent::CUDABit)$")
CUDA_CHECK_RE = re.compile(
    rb"\bis_cuda\s*\(\s*\)(?!\s*\|\|)|==\s*(?:\w+::)*(?:DeviceType::CUDA|kCUDA)\b"
    rb"|(?:DeviceType::CUDA|kCUDA)\s*=="
)


QUALIFIER_WORDS = {
    "__global__": "a CUDA kernel (compiled by nvcc/hipcc only)",
    "__shared__": "CUDA shared memory",
    "__constant__": "CUDA constant memory",
}


class CudaApiDetectors:
    def _runtime(self, m: re.Match[bytes], node: Node) -> None:
        rule = self._enabled("cuda-runtime")
        parent = node.parent
        if rule is None or parent is None:
            return
        if parent.type in MACRO_DEFS and parent.child_by_field_name("name") == node:
            return  # `#define C10_CUDA_CHECK(EXPR) ...`: the definition, not a use
        name = m.group().decode()
        is_macro = name in self.plan.runtime_macros
        if (
            not is_macro
            and not self.where
            and parent.child_by_field_name("declarator") == node
            and parent.type in DECLARATORS
        ):
            return  # the project's own `cudaStubs()` / `bool cudaEventCacheEnabled`: a definition
        if parent.type == "call_expression" and parent.child_by_field_name("function") == node:
            what = "error-check macro" if is_macro else "runtime call"
            self.add(rule, "call", parent, f"`{name}(...)` CUDA {what}")
        elif is_macro:
            self.add(rule, "call", node, f"`{name}` CUDA error-check macro")
        else:
            self.add(rule, "reference", node, f"`{name}` CUDA runtime name")

    def _backend(self, m: re.Match[bytes], node: Node) -> None:
        """A backend that is only reported as an element of a closed list (see closed_hits)."""

    def closed_hits(self, cuda_only_file: bool) -> None:
        """Closed device lists, except in CUDA-only files and branches."""
        rule = self._enabled("closed-device-list")
        if rule is None or cuda_only_file:
            return
        for box, where in self.closed.values():
            if self._in_cuda_branch(box):
                continue
            c = closed_lists.evaluate(box, self.data, self.plan.closed)
            if c is None:
                continue
            others = ", ".join(c.left_out[1:])
            msg = (
                f"closed device list ({c.shape}): names {', '.join(c.named)}; leaves out "
                f"{c.left_out[0]}" + (f" (and {others})" if others else "")
            )
            if c.fallback:
                msg += f"; every other device type gets {c.fallback}"
            self.where = where
            self.add(rule, "gate", box, msg)
            self.where = ""

    def _in_cuda_branch(self, node: Node) -> bool:
        """Inside a positive CUDA preprocessor arm, the body of `if (<CUDA check>)` or of
        `case kCUDA:`."""
        n = node.parent
        while n is not None:
            if n.type in COND_ARMS and n.id in self.arms:
                head = _text(n.children[0]).strip()
                cond = n.child_by_field_name("condition")
                if head != "#ifndef" and not (
                    cond is not None and _text(cond).lstrip().startswith("!")
                ):
                    return True
            elif n.type == "case_statement":
                value = n.child_by_field_name("value")
                if value is not None and CUDA_CASE_RE.match(_text(value).strip()):
                    return True
            elif n.type == "if_statement":
                cond = n.child_by_field_name("condition")
                if cond is not None and not (cond.start_byte <= node.start_byte < cond.end_byte):
                    if CUDA_CHECK_RE.search(self.data[cond.start_byte : cond.end_byte]):
                        return True
            n = n.parent
        return False

    def _cudam(self, m: re.Match[bytes], node: Node) -> None:
        rule = self._enabled("cuda-method")
        i = m.start() + m.group().index(b"cuda")
        field = self.root.descendant_for_byte_range(i, i + 4)
        fe = field.parent if field is not None else None
        call = fe.parent if fe is not None else None
        if (
            rule is None
            or fe is None
            or fe.type != "field_expression"
            or fe.child_by_field_name("field") != field
            or call is None
            or call.type != "call_expression"
            or call.child_by_field_name("function") != fe
        ):
            return
        self.add(rule, "call", call, f"`{' '.join(_text(call).split())}` moves to CUDA only")

    def _devstr(self, m: re.Match[bytes], node: Node) -> None:
        rule = self._enabled("device-string")
        lit = _in(node, {"string_literal"}, 3)
        if rule is None or lit is None or lit.start_byte != m.start():
            return  # inside a longer string, a comment or a raw string
        n = lit.parent
        for _ in range(8):  # a message: an argument of a logging/check call, or `<< "cuda"`
            if n is None or n.type in ("concatenated_string",):
                return
            if n.type == "binary_expression" and _text(n.child_by_field_name("operator")) == "<<":
                return
            if n.type == "call_expression":
                fn = n.child_by_field_name("function")
                if fn is not None and re.sub(r"\s+", "", _text(fn)) in self.plan.message_calls:
                    return
            if n.type in ("expression_statement", "declaration", "compound_statement"):
                break
            n = n.parent
        self.add(rule, "literal", lit, f"`{_text(lit)}` device string")

    def _include(self, m: re.Match[bytes], node: Node) -> None:
        rule = self._enabled("cuda-include")
        inc = _in(node, {"preproc_include"}, 3)
        path = inc.child_by_field_name("path") if inc is not None else None
        if rule is None or path is None:
            return
        name = _text(path).strip()[1:-1]
        if not self.plan.include_re.search(name):
            return
        self.hits.append(
            Hit(
                rule.id,
                "include",
                tuple(inc.start_point),
                tuple(path.end_point),
                f"`#include {_text(path).strip()}`: a CUDA/ROCm header{self.where}",
            )
        )

    def _usingns(self, m: re.Match[bytes], node: Node) -> None:
        using = _in(node, {"using_declaration"}, 3)
        if using is not None:
            ns = re.sub(r"\s+", "", m.group().decode()[len("using") :])[len("namespace") :]
            self.usings.append((using, ns.lstrip(":").rstrip(";"), ""))

    def using_hits(self) -> None:
        """`using c10::cuda::X;` / `using namespace at::cuda;`: the name enters a scope where later
        unqualified uses no longer say `cuda::`. Not reported in CUDA-only files."""
        rule = self._enabled("cuda-using")
        if rule is None:
            return
        for using, ns, full in self.usings:
            what = " ".join(_text(using).split()).rstrip(";")
            parts = full.split("::")
            if not full:
                msg = f"brings the `{ns}` namespace into scope: its uses below are unqualified"
            elif len(parts) > 3 and parts[-1] == parts[-2]:
                msg = f"inherits the constructors of `{'::'.join(parts[:-1])}`"
            else:
                msg = f"brings `{full}` into scope: its uses below are unqualified"
            self.add(rule, "reference", using, f"`{what}` {msg}")

    def _qual(self, m: re.Match[bytes], node: Node) -> None:
        """`__global__` / `__shared__` / `__constant__` in code (blanked in the parse, so ``node``
        is whatever encloses the spaces; comments and strings were already left out)."""
        rule = self._enabled("cuda-qualifier")
        if rule is None:
            return
        q = m.group().decode()
        what = QUALIFIER_WORDS.get(q, "CUDA-only code")
        row = self.data.count(b"\n", 0, m.start())
        col = m.start() - (self.data.rfind(b"\n", 0, m.start()) + 1)
        self.hits.append(
            Hit(rule.id, "build", (row, col), (row, col + len(q)), f"`{q}`: {what}{self.where}")
        )

    def _launch(self, m: re.Match[bytes], node: Node) -> None:
        rule = self._enabled("kernel-launch")
        if rule is None:
            return
        # the `(  grid, block)  ` argument list of the rewritten launch, or its `(`
        config = node if node.type == "argument_list" else node.parent
        inner = config.parent if config is not None else None
        outer = inner.parent if inner is not None else None
        if (
            config is None
            or config.type != "argument_list"
            or inner is None
            or inner.type != "call_expression"
        ):
            return
        kernel = inner.child_by_field_name("function")
        name = " ".join(self.data[kernel.start_byte : kernel.end_byte].decode().split())
        cfg = " ".join(self.data[config.start_byte : config.end_byte + 2].decode().split())
        target = outer if outer is not None and outer.type == "call_expression" else inner
        self.add(rule, "call", target, f"`{name}{cfg}` CUDA kernel launch")


def include_tokens(data: bytes, plan: Plan) -> list[re.Match[bytes]]:
    """`#include` directives of CUDA/ROCm headers: the path need not say CUDA (`<thrust/sort.h>`,
    `"k.cuh"`), so these lines are found by the directive, and kept by the rule's path pattern."""
    out = []
    i = data.find(b"include")
    while i >= 0:
        start = data.rfind(b"\n", 0, i) + 1
        end = data.find(b"\n", i)
        end = len(data) if end < 0 else end
        j = start
        while j < i and data[j] in b" \t":
            j += 1
        m = INCLUDE_TOKEN_RE.match(data, j, end)
        if m and plan.include_re.search(m.group("path").decode("utf-8", "replace")):
            out.append(m)
        i = data.find(b"include", end)
    return out


def includes_only(
    data: bytes, plan: Plan, tokens: list[re.Match[bytes]]
) -> tuple[list[Hit], dict[int, set[str]], bool]:
    """A file whose only tokens are `#include` lines needs no parse: a directive at the start of
    a line is one (most CUDA includes in generic files end here; see docs/performance.md)."""
    rule = plan.rule("cuda-include")
    hits: list[Hit] = []
    ignores: dict[int, set[str]] = {}
    row, pos = 0, 0
    for m in tokens:
        start = data.rfind(b"\n", 0, m.start()) + 1
        row += data.count(b"\n", pos, m.start())
        pos = m.start()
        if m.lastgroup == "ignore":
            codes = IGNORE_RE.match(data, m.start())
            if codes:
                ignores.setdefault(row, set()).update(
                    c.strip() for c in codes.group(1).decode().split(",") if c.strip()
                )
            continue
        if rule is None or data[start : m.start()].strip():
            continue  # not at the start of its line (inside a comment or a string)
        path = INCLUDE_PATH_RE.search(m.group()).group()
        if plan.include_re.search(path.decode("utf-8", "replace")[1:-1]):
            hits.append(
                Hit(
                    rule.id,
                    "include",
                    (row, m.start() - start),
                    (row, m.end() - start),
                    f"`#include {path.decode('utf-8', 'replace')}`: a CUDA/ROCm header",
                )
            )
    return hits, ignores, False
