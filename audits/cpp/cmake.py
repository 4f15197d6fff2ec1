"""CMake detectors: a tokenizer of command invocations plus `option`/`if` chain tracking.

CMake's grammar is small (commands with bracket, quoted and unquoted arguments, `#` and `#[[ ]]`
comments), so a careful tokenizer is exact where a regex over lines is not: it skips commented-out
and quoted `if(USE_CUDA)`, follows multi-line invocations and nested parentheses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from audits.cpp.hits import Hit
from audits.cpp.plan import Plan


class CMakeSyntaxError(ValueError):
    pass


@dataclass
class Command:
    name: str  # lower-cased
    args: list[str]  # argument texts (quotes removed), parentheses dropped
    start: tuple[int, int]  # (row, col) of the command name
    end: tuple[int, int]  # just after ")"
    row_end: int


_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
# configure_file() templates (e.g. FindCUDA's run_nvcc.cmake) hold whole-line @VAR@ placeholders.
_PLACEHOLDER = re.compile(rb"@[A-Za-z_][A-Za-z0-9_]*@")
_BRACKET_OPEN = re.compile(rb"\[(=*)\[")
_IGNORE_RE = re.compile(rb"hn:\s*ignore\[([^\]\n]*)\]")
_VAR_WORD = re.compile(r"\$\{([A-Za-z0-9_]+)\}|\b([A-Za-z_][A-Za-z0-9_]*)\b")


class _Lexer:
    def __init__(self, data: bytes):
        self.data = data
        self.i = 0
        self.row = 0
        self.row_start = 0
        self.ignores: dict[int, set[str]] = {}

    def pos(self) -> tuple[int, int]:
        return self.row, self.i - self.row_start

    def _advance_to(self, j: int) -> None:
        nl = self.data.count(b"\n", self.i, j)
        if nl:
            self.row += nl
            self.row_start = self.data.rindex(b"\n", self.i, j) + 1
        self.i = j

    def _bracket(self) -> bytes | None:
        """At `[=*[`: consume a bracket argument/comment body and return it, else None."""
        m = _BRACKET_OPEN.match(self.data, self.i)
        if not m:
            return None
        close = b"]" + m.group(1) + b"]"
        j = self.data.find(close, m.end())
        if j < 0:
            raise CMakeSyntaxError(f"unterminated bracket argument at line {self.row + 1}")
        body = self.data[m.end() : j]
        self._advance_to(j + len(close))
        return body

    def _comment(self) -> None:
        start = self.i
        self.i += 1
        if self._bracket() is None:
            j = self.data.find(b"\n", self.i)
            self.i = len(self.data) if j < 0 else j
        text = self.data[start : self.i]
        for m in _IGNORE_RE.finditer(text):
            row = self.row - text[m.start() :].count(b"\n")
            self.ignores.setdefault(row, set()).update(
                c.strip() for c in m.group(1).decode().split(",") if c.strip()
            )

    def _quoted(self) -> bytes:
        j = self.i + 1
        out = bytearray()
        while True:
            if j >= len(self.data):
                raise CMakeSyntaxError(f"unterminated quoted argument at line {self.row + 1}")
            c = self.data[j]
            if c == 0x5C and j + 1 < len(self.data):  # backslash escape
                out += self.data[j : j + 2]
                j += 2
                continue
            if c == 0x22:
                break
            out.append(c)
            j += 1
        self._advance_to(j + 1)
        return bytes(out)

    def commands(self) -> list[Command]:
        out: list[Command] = []
        data = self.data
        while self.i < len(data):
            c = data[self.i : self.i + 1]
            if c in b" \t\r":
                self.i += 1
            elif c == b"\n":
                self._advance_to(self.i + 1)
            elif c == b"#":
                self._comment()
            elif c == b"@" and (p := _PLACEHOLDER.match(data, self.i)):
                self.i = p.end()
            else:
                m = _IDENT.match(data, self.i)
                if not m:
                    raise CMakeSyntaxError(f"unexpected {c!r} at line {self.row + 1}")
                start = self.pos()
                self.i = m.end()
                while self.i < len(data) and data[self.i : self.i + 1] in b" \t":
                    self.i += 1
                if data[self.i : self.i + 1] != b"(":
                    raise CMakeSyntaxError(
                        f"expected '(' after {m.group().decode()!r} at line {start[0] + 1}"
                    )
                args = self._args()
                out.append(Command(m.group().decode().lower(), args, start, self.pos(), self.row))
        return out

    def _args(self) -> list[str]:
        data = self.data
        self.i += 1
        depth = 1
        args: list[str] = []
        while True:
            if self.i >= len(data):
                raise CMakeSyntaxError(f"unterminated command arguments at line {self.row + 1}")
            c = data[self.i : self.i + 1]
            if c in b" \t\r":
                self.i += 1
            elif c == b"\n":
                self._advance_to(self.i + 1)
            elif c == b"#":
                self._comment()
            elif c == b"(":
                depth += 1
                self.i += 1
            elif c == b")":
                depth -= 1
                self.i += 1
                if depth == 0:
                    return args
            elif c == b'"':
                args.append(self._quoted().decode("utf-8", "replace"))
            elif c == b"[" and _BRACKET_OPEN.match(data, self.i):
                args.append(self._bracket().decode("utf-8", "replace"))
            else:
                j = self.i
                while j < len(data) and data[j : j + 1] not in b' \t\r\n()#"':
                    j += 2 if data[j : j + 1] == b"\\" else 1
                args.append(data[self.i : j].decode("utf-8", "replace"))
                self.i = j


def _vars(args: list[str]) -> set[str]:
    out = set()
    for a in args:
        for m in _VAR_WORD.finditer(a):
            out.add(m.group(1) or m.group(2))
    return out


def scan_cmake(data: bytes, plan: Plan) -> tuple[list[Hit], dict[int, set[str]]]:
    """Hits and suppression comments by row for one CMake file; raises CMakeSyntaxError."""
    lex = _Lexer(data)
    cmds = lex.commands()
    hits = _option_hits(cmds, plan)
    if plan.rule("cmake-branch") is None:
        return hits, lex.ignores
    chains = _Chains(plan, data.split(b"\n"), hits)
    stack: list[list[Command]] = []
    for cmd in cmds:
        if cmd.name == "if":
            stack.append([cmd])
        elif cmd.name in ("elseif", "else"):
            if not stack:
                raise CMakeSyntaxError(f"{cmd.name}() without if() at line {cmd.start[0] + 1}")
            stack[-1].append(cmd)
        elif cmd.name == "endif":
            if not stack:
                raise CMakeSyntaxError(f"endif() without if() at line {cmd.start[0] + 1}")
            chains.close(stack.pop(), cmd)
    if stack:
        raise CMakeSyntaxError(f"if() at line {stack[-1][0].start[0] + 1} has no endif()")
    return hits, lex.ignores


def _option_hits(cmds: list[Command], plan: Plan) -> list[Hit]:
    """`option(USE_CUDA ...)` build switches, and options only available when one is on."""
    hits: list[Hit] = []
    opt_rule = plan.rule("cmake-option")
    if opt_rule is None:
        return hits
    for cmd in cmds:
        if cmd.name not in ("option", "cmake_dependent_option") or not cmd.args:
            continue
        var = cmd.args[0]
        if var in plan.cmake_options:
            msg = f"`{cmd.name}({var} ...)` build switch"
            hits.append(Hit(opt_rule.id, "build", cmd.start, cmd.end, msg))
        elif cmd.name == "cmake_dependent_option" and len(cmd.args) >= 4:
            dep = sorted(_vars([cmd.args[3]]) & plan.cmake_options)
            if dep:
                msg = f"`{var}` is only available when {' / '.join(dep)} is on"
                hits.append(Hit(opt_rule.id, "build", cmd.start, cmd.end, msg))
    return hits


class _Chains:
    """if()/elseif()/else() chains: an arm whose condition names a CUDA variable is a branch
    (cmake-branch), and so is each arm after it (cmake-else)."""

    def __init__(self, plan: Plan, lines: list[bytes], hits: list[Hit]) -> None:
        self.plan, self.lines, self.hits = plan, lines, hits
        self.br_rule = plan.rule("cmake-branch")
        self.else_rule = plan.rule("cmake-else")

    def line_end(self, row: int) -> tuple[int, int]:
        return row, len(self.lines[row]) if row < len(self.lines) else 0

    def close(self, chain: list[Command], endif: Command | None) -> None:
        first: Command | None = None
        for k, arm in enumerate(chain):
            if k + 1 < len(chain):
                end = self.line_end(max(chain[k + 1].start[0] - 1, arm.start[0]))
            else:
                end = endif.end if endif is not None else self.line_end(len(self.lines) - 1)
            cond = []
            if arm.name != "else":
                cond = sorted(_vars(arm.args) & self.plan.cmake_branch_vars)
            lines = f"lines {arm.start[0] + 1}-{end[0] + 1}"
            if cond:
                first = first or arm
                msg = f"`{arm.name}({' '.join(arm.args)})` branch on {', '.join(cond)}, {lines}"
                self.hits.append(Hit(self.br_rule.id, "branch", arm.start, end, msg))
            elif first is not None and self.else_rule is not None:
                msg = (
                    f"`{arm.name}()` arm of `if({' '.join(first.args)})` "
                    f"(line {first.start[0] + 1}), {lines}"
                )
                self.hits.append(Hit(self.else_rule.id, "branch", arm.start, end, msg))
