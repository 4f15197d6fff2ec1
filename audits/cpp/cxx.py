"""C++/CUDA detectors over a tree-sitter parse.

The plan's token regex proposes byte positions (cheap); the parse tree decides what each one is:
code or comment/string, the condition of which `#if`, a comparison or a plain use, a call or a
definition. Macro bodies (`#define`) are raw text in the file's parse; the bodies that hold a token
are parsed again on their own (tree-sitter's included ranges, so positions stay the file's) and
their findings say which macro they are in. CUDA's own syntax (`k<<<grid, block>>>(...)`,
`__global__`, `__shared__`, `__launch_bounds__(n)`) is blanked to same-length C++ before parsing
(audits/cpp/cuda_syntax.py); what tree-sitter still cannot structure (an ERROR node) is reported at
the token level, and the finding says so. The runtime-API, include, launch, using and
closed-list detectors are a mixin in audits/cpp/cuda_api.py; node helpers in audits/cpp/nodes.py.
"""

from __future__ import annotations

import re

import tree_sitter_cpp
from tree_sitter import Language, Node, Parser, Range, Tree

from audits.cpp import closed_lists
from audits.cpp.cuda_api import CudaApiDetectors, include_tokens, includes_only
from audits.cpp.cuda_syntax import as_cxx
from audits.cpp.hits import Hit
from audits.cpp.nodes import COND_ARMS, IGNORE_RE, MACRO_DEFS, _broken, _in, _text
from audits.cpp.plan import Plan, macro_rule
from audits.cpp.preproc import PreprocDetectors, directive

_LANGUAGE = Language(tree_sitter_cpp.language())
_PARSER = Parser(_LANGUAGE)

STOP_MACRO = COND_ARMS | {"ERROR", "translation_unit", "preproc_def", "preproc_function_def"}
DIRECTIVES = {"#if", "#ifdef", "#ifndef", "#elif", "#elifdef", "#elifndef"}
NOT_CODE = {
    "comment",
    "string_literal",
    "raw_string_literal",
    "char_literal",
    "concatenated_string",
    "system_lib_string",
    "preproc_arg",
}
TEMPLATE_ARGS_RE = re.compile(r"<[^<>]*>")
CUDA_KEY_RE = re.compile(r"^\w*CUDA$")
COND_LINE_RE = re.compile(rb"\s*#\s*(?:if|ifdef|ifndef|elif)\b")


TOKEN_LEVEL = " (token level: tree-sitter could not parse this region)"


def parse(data: bytes) -> Tree:
    return _PARSER.parse(data)


def parse_range(data: bytes, node: Node) -> Tree:
    """A parse of ``node``'s bytes alone, positioned as in ``data`` (a macro body)."""
    p = Parser(_LANGUAGE)
    p.included_ranges = [Range(node.start_point, node.end_point, node.start_byte, node.end_byte)]
    return p.parse(data)


def _outer_qualified(node: Node) -> Node:
    while node.parent is not None and node.parent.type == "qualified_identifier":
        node = node.parent
    return node


def _first_line(node: Node) -> str:
    return _text(node).split("\n", 1)[0].strip()


class _Scan(CudaApiDetectors, PreprocDetectors):
    def __init__(self, data: bytes, tree: Tree, plan: Plan, parse_data: bytes | None = None):
        self.data, self.tree, self.plan = data, tree, plan
        self.parse_data = data if parse_data is None else parse_data  # what tree-sitter saw
        self.root = tree.root_node
        self.hits: list[Hit] = []
        self.ignores: dict[int, set[str]] = {}  # row -> suppressed codes/prefixes
        self.arms: dict[int, tuple[Node, str]] = {}  # matched #if arm id -> (node, rule)
        self._lines: list[bytes] | None = None
        self.loose: list[tuple[Node, Node, str]] = []  # (directive token, condition, rule)
        self.macros: dict[int, tuple[Node, list[re.Match[bytes]]]] = {}  # body id -> tokens
        self.usings: list[tuple[Node, str, str]] = []  # (using-declaration, namespace, text)
        self.where = ""  # appended to messages: the macro whose body is being scanned
        self.cuda_file = False  # a .cu/.cuh source
        self.closed: dict[tuple, tuple[Node, str]] = {}  # candidate closed lists, by extent

    # -- per-token dispatch -------------------------------------------------------------------
    def token(self, m: re.Match[bytes]) -> None:
        group = m.lastgroup
        node = self.root.descendant_for_byte_range(m.start(), m.end())
        if node is None:
            return
        if group == "ignore":
            if node.type == "comment":
                codes = IGNORE_RE.match(self.data, m.start())
                if codes:
                    row = self.data.count(b"\n", 0, m.start())
                    self.ignores.setdefault(row, set()).update(
                        c.strip() for c in codes.group(1).decode().split(",") if c.strip()
                    )
            return
        if node.type == "preproc_arg" and node.parent is not None:
            if node.parent.type in MACRO_DEFS:  # a macro body: parsed on its own, later
                self.macros.setdefault(node.id, (node, []))[1].append(m)
            return
        if group == "devstr":  # a string is the token itself
            self._devstr(m, node)
            return
        if _in(node, NOT_CODE, limit=4) is not None:
            return
        before = len(self.hits)
        getattr(self, "_" + group)(m, node)
        if len(self.hits) == before and _broken(node):
            self._token_level(m, node)
        if self.plan.closed is not None and group in ("devtype", "dkey", "iscuda", "backend"):
            box = closed_lists.container(node)
            if box is not None:
                self.closed.setdefault((box.start_byte, box.end_byte, box.type), (box, self.where))

    def macro_bodies(self) -> None:
        """Scan each macro body that holds a token as code of its own."""
        if not self.macros:
            return
        root = self.root
        # `#x` (stringify) and `a ## b` (paste) would read as directives: blank them, same length.
        text = bytearray(self.parse_data)
        for body, _ in self.macros.values():
            text[body.start_byte : body.end_byte] = text[body.start_byte : body.end_byte].replace(
                b"#", b" "
            )
        text = bytes(text)
        try:
            for body, matches in self.macros.values():
                name = body.parent.child_by_field_name("name")
                self.where = f"; in the body of macro `{_text(name) if name else '?'}`"
                self.root = parse_range(text, body).root_node
                for m in matches:
                    self.token(m)
        finally:
            self.root, self.where = root, ""

    def _token_level(self, m: re.Match[bytes], node: Node) -> None:
        """A token tree-sitter could not structure (inside an ERROR node): report the token alone."""
        group, tok = m.lastgroup, " ".join(m.group().decode().split())
        if group == "devtype":
            rule, kind = self._enabled("devicetype", "other"), "literal"
        elif group == "iscuda":
            prev = self.data[max(0, m.start() - 64) : m.start()].rstrip()[-1:]
            if not re.match(rb"\s*\(", self.data[m.end() : m.end() + 8]) or (
                prev.isalnum() or prev == b"_"  # `bool is_cuda()`: a declaration
            ):
                return
            rule, kind, tok = self._enabled("is-cuda"), "call", "is_cuda()"
        elif group == "ns":
            line_start = self.data.rfind(b"\n", 0, m.start()) + 1
            if re.match(rb"\s*namespace\b", self.data[line_start : m.start()]):
                return  # `namespace c10::cuda::impl {`: a definition
            ns = next(
                (n for n in self.plan.namespaces if n.split("::")[0] == tok.split("::")[0]), None
            )
            rule, kind = (self.plan.rules[self.plan.namespaces[ns]] if ns else None), "reference"
        elif group == "dkey":
            rule, kind = self._enabled("dispatch-key"), "literal"
        else:
            return
        if rule is None:
            return
        row = self.data.count(b"\n", 0, m.start())
        col = m.start() - (self.data.rfind(b"\n", 0, m.start()) + 1)
        erow = row + m.group().count(b"\n")
        ecol = len(m.group()) if erow == row else len(m.group().rsplit(b"\n", 1)[1])
        self.hits.append(
            Hit(
                rule.id,
                kind,
                (row, col),
                (erow, ecol + (col if erow == row else 0)),
                f"`{tok}`{TOKEN_LEVEL}{self.where}",
            )
        )

    def _macro(self, m: re.Match[bytes], node: Node) -> None:
        if m.group().decode() in self.plan.runtime_macros:
            line = self.data[self.data.rfind(b"\n", 0, m.start()) + 1 : m.start()]
            if not COND_LINE_RE.match(line):  # a use in code, not in an #if condition
                self._runtime(m, node)
                return
        rid = macro_rule(self.plan, m.group().decode())
        if rid is None:
            return
        n = node
        while n.parent is not None and n.parent.type not in STOP_MACRO:
            n = n.parent
        arm = n.parent
        if arm is None or arm.type in ("translation_unit", "preproc_def", "preproc_function_def"):
            return
        if arm.type == "ERROR":
            # An #if tree-sitter could not structure (e.g. inside a ctor initializer list): the
            # directive is still recognisable, its extent is not.
            prev = n.prev_sibling
            if prev is not None and prev.type in DIRECTIVES:
                self.loose.append((prev, n, rid))
            return
        cond = arm.child_by_field_name("condition") or arm.child_by_field_name("name")
        if cond is None or not (cond.start_byte <= m.start() and m.end() <= cond.end_byte):
            return  # the macro is used in the arm's body, not its condition
        prev = self.arms.get(arm.id)
        if prev is None or rid < prev[1]:
            self.arms[arm.id] = (arm, rid)

    def _devtype(self, m: re.Match[bytes], node: Node) -> None:
        e = _outer_qualified(node)
        parent = e.parent
        if parent is None or parent.type in ("using_declaration", "enumerator"):
            return
        if parent.type == "init_declarator" and parent.child_by_field_name("declarator") == e:
            return  # `constexpr DeviceType kCUDA = ...`: the alias itself
        text = " ".join(_text(e).split())
        if parent.type == "binary_expression" and _text(parent.child_by_field_name("operator")) in (
            "==",
            "!=",
        ):
            rule = self._enabled("devicetype", "comparison")
            if rule:
                self.add(rule, "gate", parent, f"device-type comparison with `{text}`")
        elif parent.type == "case_statement" and parent.child_by_field_name("value") == e:
            rule = self._enabled("devicetype", "comparison")
            if rule:
                self.add(rule, "gate", e, f"`case {text}:` device-type switch arm")
        else:
            rule = self._enabled("devicetype", "other")
            if rule:
                self.add(rule, "literal", e, f"hard-coded `{text}` device type")

    def _iscuda(self, m: re.Match[bytes], node: Node) -> None:
        rule = self._enabled("is-cuda")
        parent = node.parent
        if rule is None or parent is None:
            return
        if parent.type == "field_expression" and parent.child_by_field_name("field") == node:
            call = parent.parent
            target = parent
        elif parent.type == "call_expression" and parent.child_by_field_name("function") == node:
            call, target = parent, node
        else:
            return  # a declaration/definition of is_cuda(), not a check
        if (
            call is None
            or call.type != "call_expression"
            or call.child_by_field_name("function") != target
        ):
            return
        self.add(rule, "call", call, f"`{' '.join(_text(call).split())}` CUDA-only device check")

    def _nsrel(self, m: re.Match[bytes], node: Node) -> None:
        e = _outer_qualified(node)
        outer = None  # the outermost enclosing namespace's first component
        n = e.parent
        while n is not None:
            if n.type == "namespace_definition" and n.child_by_field_name("name") is not None:
                outer = _text(n.child_by_field_name("name")).split("::")[0].strip()
            n = n.parent
        if outer is not None and any(ns.split("::")[0] == outer for ns in self.plan.namespaces):
            self._ns(m, node, prefix=outer + "::")

    def _ns(self, m: re.Match[bytes], node: Node, prefix: str = "") -> None:
        e = _outer_qualified(node)
        if e.type != "qualified_identifier" or _in(e, {"namespace_definition"}, 3):
            return
        full = prefix + re.sub(r"\s+", "", _text(e)).lstrip(":")
        ns = next((n for n in self.plan.namespaces if full.startswith(n + "::")), None)
        if ns is None:
            return
        using = _in(e, {"using_declaration"}, 3)
        if using is not None:
            self.usings.append((using, ns, full))
            return
        rid = self.plan.namespaces[ns]
        rest = full[len(ns) + 2 :]
        plain = TEMPLATE_ARGS_RE.sub("", TEMPLATE_ARGS_RE.sub("", rest))
        table = self.plan.suggest.get(rid, {})
        repl = table.get(plain) or table.get(plain.split("::")[0])
        parent = e.parent
        if (
            parent is not None
            and parent.type == "call_expression"
            and parent.child_by_field_name("function") == e
        ):
            kind, target = "call", parent
        else:
            kind, target = "reference", e  # a type, a function pointer, a template argument
        msg = (
            f"`{ns}::{plain}` {kind}"
            + (f" (written `cuda::` inside namespace {prefix[:-2]})" if prefix else "")
            + (f": use `{repl}`" if repl else ": no device-generic equivalent")
        )
        self.add(
            self.plan.rules[rid],
            kind,
            target,
            msg,
            replacement=repl,
            safety="review" if repl else "manual",
        )

    def _dkey(self, m: re.Match[bytes], node: Node) -> None:
        rule = self._enabled("dispatch-key")
        e = _outer_qualified(node)
        if rule is None or (e.parent is not None and e.parent.type == "using_declaration"):
            return
        self.add(rule, "literal", e, f"hard-coded `{' '.join(_text(e).split())}` dispatch key")

    def _reg(self, m: re.Match[bytes], node: Node) -> None:
        rule = self._enabled("registration")
        parent = node.parent
        if rule is None or node.type != "identifier" or parent is None:
            return
        name = _text(node)
        if name in self.plan.library_macros:
            if (
                parent.type == "function_declarator"
                and parent.child_by_field_name("declarator") == node
            ):
                args = [c for c in parent.child_by_field_name("parameters").named_children]
                block = parent.parent if parent.parent is not None else parent
            elif (
                parent.type == "call_expression" and parent.child_by_field_name("function") == node
            ):
                args = list(parent.child_by_field_name("arguments").named_children)
                block = parent
            else:
                return
            if len(args) >= 2 and CUDA_KEY_RE.match(_text(args[1]).strip()):
                self.add(
                    rule,
                    "macro",
                    block,
                    f"`{name}(..., {_text(args[1]).strip()}, ...)` registers kernels for CUDA only",
                )
        elif name in self.plan.stub_macros:
            if parent.type == "call_expression" and parent.child_by_field_name("function") == node:
                self.add(rule, "macro", parent, f"`{name}` registers a CUDA/HIP-only stub kernel")
        elif name in self.plan.cuda_file_stub_macros and self.cuda_file and not self.where:
            if parent.type == "call_expression" and parent.child_by_field_name("function") == node:
                self.add(
                    rule, "macro", parent, f"`{name}` in a CUDA source registers a CUDA-only kernel"
                )

    # -- helpers --------------------------------------------------------------------------------
    def _enabled(self, detector: str, context: str | None = None):
        for r in self.plan.by_detector.get(detector, ()):
            if context is None or r.match.get("context") == context:
                return r
        return None

    def _line(self, row: int) -> bytes:
        if self._lines is None:
            self._lines = self.data.split(b"\n")
        return self._lines[row] if row < len(self._lines) else b""

    def add(
        self,
        rule,
        kind: str,
        node: Node,
        message: str,
        *,
        end=None,
        replacement: str | None = None,
        safety: str | None = None,
    ) -> None:
        self.hits.append(
            Hit(
                rule.id,
                kind,
                tuple(node.start_point),
                tuple(end or node.end_point),
                message + self.where,
                replacement,
                safety,
            )
        )


def _tokens(data: bytes, plan: Plan) -> list[re.Match[bytes]]:
    """Token matches, searched only on lines holding an anchor (memmem is ~10x a regex scan)."""
    spans: dict[int, int] = {}
    for a in plan.anchors:
        i = data.find(a)
        while i >= 0:
            start = data.rfind(b"\n", 0, i) + 1
            end = data.find(b"\n", i)
            end = len(data) if end < 0 else end
            spans[start] = end
            i = data.find(a, end)
    out: list[re.Match[bytes]] = []
    for start in sorted(spans):
        if data.startswith(b"//", start) or data[start : start + 200].lstrip().startswith(b"//"):
            continue  # a line comment (or inside a string/comment): never code
        out.extend(plan.token_re.finditer(data, start, spans[start]))
    if plan.include_re is not None:
        inc = include_tokens(data, plan)
        if inc:
            out = sorted(out + inc, key=lambda m: m.start())
    return out


def scan_cxx(data: bytes, plan: Plan, suffix: str) -> tuple[list[Hit], dict[int, set[str]], bool]:
    """Hits, suppression comments by row and whether the parse had errors, for one C++ file."""
    is_cuda_file = suffix in plan.cuda_suffixes and plan.rule("cuda-file") is not None
    if not is_cuda_file and not any(g in data for g in plan.gate):
        return [], {}, False
    tokens = _tokens(data, plan)
    if not is_cuda_file and all(m.lastgroup == "ignore" for m in tokens):
        return [], {}, False
    if not is_cuda_file and all(m.lastgroup in ("include", "ignore") for m in tokens):
        return includes_only(data, plan, tokens)
    source = as_cxx(data)
    tree = parse(source)
    scan = _Scan(data, tree, plan, source)
    scan.cuda_file = suffix in plan.cuda_suffixes
    for m in tokens:
        scan.token(m)
    scan.macro_bodies()
    scan.branches()
    guard = None if is_cuda_file else scan.whole_file_guard()
    cuda_only = is_cuda_file or guard is not None or suffix in plan.cuda_suffixes
    if not cuda_only:
        scan.using_hits()
    scan.closed_hits(cuda_only)
    file_rule = plan.rule("cuda-file")
    if file_rule is not None:
        last = tuple(tree.root_node.end_point)
        if last[1] == 0 and last[0] > 0:  # end at the last line's end, not past the final \n
            last = (last[0] - 1, len(scan._line(last[0] - 1)))
        if is_cuda_file:
            scan.hits.append(Hit(file_rule.id, "build", (0, 0), last, f"CUDA-only file ({suffix})"))
        elif guard is not None:
            scan.hits.append(
                Hit(
                    file_rule.id,
                    "build",
                    (0, 0),
                    last,
                    f"whole file is under `{directive(guard)}` (line {guard.start_point[0] + 1})",
                )
            )
    return scan.hits, scan.ignores, tree.root_node.has_error
