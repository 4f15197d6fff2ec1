"""What the wrapper pass knows of the scanned tree: each Python file's words (from the scan's one
read of every file), and, read and parsed on demand, the few files that mention a wrapper.

A ``_Module`` is one parsed file: its module name, module-level import table and the top-level
statements that may matter (imports and those holding the lines asked for; the whole file when
the pieces do not parse alone, as the scanner does).
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from audits.python.segments import import_segments, parse_segments, stmt_start, top_level_pieces
from audits.resolve import bindings, dotted_parts, module_name, package_name, qualify

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
Reader = Callable[[str], "bytes | None"]


@dataclass(frozen=True)
class Wrapper:
    qual: str  # pkg.mod.fn
    rule: str  # the wrapped rule's id
    kind: str  # "call" (a function) or "reference" (a flag)
    via: str = ""  # the wrapper it returns or re-exports (hops 2..); "" for a direct one


class Module:
    def __init__(self, relpath: str, text: str, prefix: str, hits: Sequence[int] = ()) -> None:
        self.relpath = relpath
        self.text = text
        self._pieces = _Pieces(text, hits)
        self.tree = ast.Module(body=self._pieces.body(), type_ignores=[])
        self.name = module_name(relpath, prefix)
        package = package_name(relpath, prefix)
        self.imports: dict[str, str] = {}
        for node in self.tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for local, q in bindings(node, package):
                    if q is not None:
                        self.imports[local] = q
        self.known: dict[str, Wrapper] = {}

    def extend(self, hits: Iterable[int]) -> None:
        """Parse the top-level statements holding ``hits`` too (the module-level imports are
        there from the start)."""
        if self._pieces.extend(hits):
            self.tree.body = self._pieces.body()

    def lookup(self, head: str) -> str | None:
        q = self.imports.get(head)
        if q is None and f"{self.name}.{head}" in self.known:
            q = f"{self.name}.{head}"  # the module's own wrapper, by its bare name
        return q

    def resolve(self, node: ast.AST) -> str | None:
        parts = dotted_parts(node)
        return qualify(parts, self.lookup) if parts else None


class _Pieces:
    """A file's top-level statements, parsed as the scanner does (``audits.python.segments``):
    the module-level imports and the statements holding the lines asked for (of a large def only
    the body statements holding them). Lines asked for later parse only the statements holding
    them, each once (a def again when a new line falls in it). The whole file when pieces do not
    parse alone."""

    def __init__(self, text: str, hits: Sequence[int]) -> None:
        self.text = text
        self.data = text.encode()
        self.lines = text.split("\n")
        self.hits = set(hits)
        self.segs = top_level_pieces(self.data) if hits and len(self.data) >= 4096 else None
        self.parsed: dict[int, list[ast.stmt]] = {}
        self.whole: list[ast.stmt] | None = None
        if self.segs is None:
            self.whole = ast.parse(text).body
            return
        self.starts = [seg[0] for seg in self.segs]
        self._parse(set(import_segments(self.data, self.segs)) | self._holding(self.hits))

    def body(self) -> list[ast.stmt]:
        if self.whole is not None:
            return self.whole
        return sorted((n for ns in self.parsed.values() for n in ns), key=stmt_start)

    def extend(self, hits: Iterable[int]) -> bool:
        """Whether the body changed."""
        new = set(hits) - self.hits
        if self.whole is not None or not new:
            return False
        self.hits |= new
        redo = {
            i
            for i in self._holding(new)
            if i not in self.parsed or any(isinstance(n, _SPLIT) for n in self.parsed[i])
        }
        if redo:
            self._parse(redo)
        return bool(redo)

    def _holding(self, lines: Iterable[int]) -> set[int]:
        return {i for i, (a, b, _, _) in enumerate(self.segs) if any(a <= h <= b for h in lines)}

    def _parse(self, which: set[int]) -> None:
        segs = [self.segs[i] for i in sorted(which)]
        body = parse_segments(self.data, segs, self.lines, sorted(self.hits))
        if body is None:
            self.whole = ast.parse(self.text).body
            return
        for i in which:
            self.parsed[i] = []
        for n in body:
            i = bisect.bisect_right(self.starts, stmt_start(n)[0]) - 1
            self.parsed.setdefault(i, []).append(n)


_SPLIT = (*DEFS, ast.ClassDef)  # may have been parsed in part


class Tree:
    """The Python files of the scanned tree (relative paths, sorted), their words (``words(rel)``:
    searchable for a name, see ``audits.python.words``) and bytes (``read(rel)``), the known
    wrappers, and the files parsed so far."""

    def __init__(self, files: Sequence[str], words: Reader, read: Reader, prefix: str) -> None:
        self.files = files
        self.words = words
        self.read = read
        self.prefix = prefix
        self.known: dict[str, Wrapper] = {}
        self._mods: dict[str, tuple[set[int], Module | None]] = {}
        self._texts: dict[str, str | None] = {}
        self._raw: dict[str, bytes | None] = {}

    def data(self, rel: str) -> bytes | None:
        if rel not in self._raw:
            self._raw[rel] = self.read(rel)
        return self._raw[rel]

    def load(self, rel: str, hits: Iterable[int]) -> Module | None:
        """The file parsed for (at least) the top-level statements holding ``hits``."""
        want = set(hits)
        have = self._mods.get(rel)
        if have is not None:
            if have[1] is not None and not want <= have[0]:
                have[0].update(want)
                have[1].extend(want)
            return have[1]
        if rel not in self._texts:
            raw = self.data(rel)
            try:
                self._texts[rel] = raw.decode("utf-8") if raw is not None else None
            except UnicodeDecodeError:
                self._texts[rel] = None
        mod = None
        if self._texts[rel] is not None:
            try:
                mod = Module(rel, self._texts[rel], self.prefix, sorted(want))
            except (SyntaxError, ValueError, RecursionError):
                mod = None
        if mod is not None:
            mod.known = self.known
        self._mods[rel] = (want, mod)
        return mod

    def load_mentions(self, rel: str, names: Iterable[str]) -> Module | None:
        """The file parsed for the lines that mention one of ``names``."""
        return self.load(rel, mention_lines(self.data(rel) or b"", names))


def defined(node: ast.stmt) -> list[str]:
    if isinstance(node, DEFS):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def ref(mod: Module, node: ast.AST) -> str | None:
    """The qualified name a loaded name or attribute chain refers to, if it resolves."""
    if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
        getattr(node, "ctx", None), ast.Load
    ):
        return mod.resolve(node)
    return None


def spanning(body: Sequence[ast.stmt], lines: Sequence[int]) -> list[ast.stmt]:
    """The statements of ``body`` whose line span (decorators included) holds one of ``lines``."""
    out = []
    for node in body:
        decos = getattr(node, "decorator_list", None)
        first = decos[0].lineno if decos else node.lineno
        i = bisect.bisect_left(lines, first)
        if i < len(lines) and lines[i] <= node.end_lineno:
            out.append(node)
    return out


def mention_lines(text: str | bytes, names: Iterable[str]) -> list[int]:
    """Sorted 1-based numbers of the lines where one of ``names`` occurs."""
    nl = "\n" if isinstance(text, str) else b"\n"
    found = []
    for n in names:
        key = n if isinstance(text, str) else n.encode()
        pos = text.find(key)
        while pos >= 0:
            found.append(pos)
            pos = text.find(key, pos + len(key))
    out: list[int] = []
    line, at = 1, 0
    for pos in sorted(found):
        line += text.count(nl, at, pos)
        at = pos
        if not out or out[-1] != line:
            out.append(line)
    return out
