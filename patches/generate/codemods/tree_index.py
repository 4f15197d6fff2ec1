"""The scanned tree as a whole, for units that span files (a function and its callers).

Every family otherwise sees one file. A unit whose parts lie in several files (a parameter
renamed in ``codecache.py`` and the ``load(src, cuda=False)`` calls of ``autotune_process.py``)
is decided once for the tree, from the same index whichever file asks, so that every file
decides it alike: ``generate`` and ``--explain`` build it from the run (``plan.file_steps``).

Files are read once and parsed on demand; a byte search picks the files a query can concern.
Nothing is imported. Per-tree results a family computes are kept in ``memo``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from audits.resolve import absolute_module, dotted_parts, module_name, package_name
from patches.generate.codemods.context import ClassContext, FileContext
from patches.generate.codemods.reexports import tree_bytes


@dataclass(frozen=True)
class Def:
    """A function or method of the tree: ``cls`` is its class's qualified name ("" for a
    module-level function); ``node`` its ``ast`` definition."""

    path: str
    module: str
    cls: str
    name: str
    node: ast.FunctionDef | ast.AsyncFunctionDef = field(compare=False, hash=False)

    @property
    def qualname(self) -> str:
        return f"{self.cls or self.module}.{self.name}"

    @property
    def kind(self) -> str:
        """One of "function", "method", "classmethod", "staticmethod"."""
        if not self.cls:
            return "function"
        for d in self.node.decorator_list:
            if isinstance(d, ast.Name) and d.id in ("classmethod", "staticmethod"):
                return d.id
        return "method"


class TreeIndex:
    """``TreeIndex(root, package_prefix)``: the ``*.py`` files of ``root`` (no links, no
    ``.git``), their parses and contexts, the classes (qualified name -> bases) and the
    functions of the files a byte search selects."""

    def __init__(self, root: Path, package_prefix: str = "") -> None:
        self.root = Path(root)
        self.prefix = package_prefix
        self._bytes: dict[str, bytes] | None = None
        self._ctx: dict[str, FileContext | None] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self.memo: dict = {}

    @classmethod
    def of_file(cls, path: str, text: str, package_prefix: str = "") -> "TreeIndex":
        """A tree of one file (a rewrite given no tree: ``codemods.rewrite``): every unit
        lies in the file, and imported names lie outside it."""
        index = cls(Path("/nonexistent-tree-root"), package_prefix)
        index._bytes = {path: text.encode("utf-8")}
        return index

    # -- files --------------------------------------------------------------------------
    def files(self) -> dict[str, bytes]:
        if self._bytes is None:
            self._bytes = tree_bytes(self.root)
        return self._bytes

    def top_modules(self) -> frozenset[str]:
        """The tree's own top-level modules and packages (isort's first party)."""
        if "top-modules" not in self.memo:
            self.memo["top-modules"] = frozenset(
                module_name(r, self.prefix).split(".")[0] for r in self.files() if r.endswith(".py")
            )
        return self.memo["top-modules"]

    def cuda_extensions(self) -> frozenset[str]:
        """The modules the tree's build scripts compile as ``CUDAExtension("name", ...)``
        (``name=`` too): FlashAttention's ``flash_attn_2_cuda``. Their kernels exist for CUDA
        alone (ROCm's builds being CUDA's device type to torch)."""
        if "cuda-extensions" not in self.memo:
            names = set()
            for rel in self.holding(b"CUDAExtension"):
                for n in ast.walk(self.tree(rel) or ast.Module(body=[], type_ignores=[])):
                    if isinstance(n, ast.Call) and _last(n.func) == "CUDAExtension":
                        name = next((k.value for k in n.keywords if k.arg == "name"), None)
                        name = name or (n.args[0] if n.args else None)
                        if isinstance(name, ast.Constant) and isinstance(name.value, str):
                            names.add(name.value)
            self.memo["cuda-extensions"] = frozenset(names)
        return self.memo["cuda-extensions"]

    def lines_after_imports(self) -> int | None:
        """The blank lines most of the tree's modules leave between their import block and a
        first statement that is no definition (1 or 2: isort's setting, read from the code),
        or None where none does."""
        if "after-imports" not in self.memo:
            counts = {1: 0, 2: 0}
            for rel, data in self.files().items():
                gap = _gap_after_imports(data) if rel.endswith(".py") else None
                if gap in counts:
                    counts[gap] += 1
            best = max(counts, key=lambda k: counts[k])
            self.memo["after-imports"] = best if counts[best] else None
        return self.memo["after-imports"]

    def module_parts(self) -> frozenset[str] | None:
        """Every folder and module name of the tree's ``*.py`` paths (``a/b/c.py``: a, b, c), or
        None for a tree of one file: a name outside it is a module the tree does not hold as
        source (a compiled extension, or another project's)."""
        if not self.root.is_dir():
            return None
        if "module-parts" not in self.memo:
            self.memo["module-parts"] = frozenset(
                part.removesuffix(".py")
                for r in self.files()
                if r.endswith(".py")
                for part in r.split("/")
            )
        return self.memo["module-parts"]

    def holding(self, *needles: bytes) -> list[str]:
        """The files whose bytes hold every one of ``needles``."""
        return [r for r, b in self.files().items() if all(n in b for n in needles)]

    def tree(self, rel: str) -> ast.Module | None:
        """The file's ``ast`` (parsed once, kept, shared: read it, never change it), or None
        where it does not parse."""
        if rel not in self._trees:
            self._trees[rel] = self._parse(rel)
        return self._trees[rel]

    def parsed(self, rel: str, text: str) -> ast.Module:
        """The parse of ``text``: the file's own (``tree``) when ``text`` is the file as the tree
        holds it, else a new one. Raises as ``ast.parse`` does."""
        data = self.files().get(rel)
        tree = self.tree(rel) if data is not None and data == text.encode("utf-8") else None
        return tree if tree is not None else ast.parse(text)

    def _parse(self, rel: str) -> ast.Module | None:
        try:
            return ast.parse(self.text(rel))
        except (KeyError, SyntaxError, ValueError, UnicodeDecodeError, RecursionError):
            return None

    def context(self, rel: str) -> FileContext | None:
        """The file's ``FileContext`` (scopes, imports), or None where it does not parse."""
        if rel not in self._ctx:
            self._ctx[rel] = self._context(FileContext, rel, self.tree(rel))
        return self._ctx[rel]

    def _context(self, kind, rel: str, tree: ast.Module | None) -> FileContext | None:
        try:
            return None if tree is None else kind(self.text(rel), tree, rel, self.prefix)
        except RecursionError:
            return None

    def text(self, rel: str) -> str:
        return self.files()[rel].decode("utf-8")

    def names_in(self, folder: str) -> frozenset[str]:
        """The modules and packages directly in ``folder`` (``""``: the root): a ``*.py``
        file's stem, or a sub-folder that holds Python files."""
        if "names_in" not in self.memo:
            table: dict[str, set[str]] = {}
            for rel in self.files():
                parts = rel.split("/")
                for i, name in enumerate(parts):
                    last = i == len(parts) - 1
                    table.setdefault("/".join(parts[:i]), set()).add(
                        name[:-3] if last and name.endswith(".py") else name
                    )
            self.memo["names_in"] = {k: frozenset(v) for k, v in table.items()}
        return self.memo["names_in"].get(folder, frozenset())

    def imports(self, importer: str, rel: str) -> bool:
        """The file ``importer`` imports ``rel``'s module (anywhere in it, a function's own
        import too)."""
        return _imports(self.tree(importer), importer, rel, self.prefix)

    def imported(self, rel: str) -> bool:
        """Another file of the tree imports ``rel``'s module (``import a.b``, ``from a import
        b``, ``from .b import x``, or a bare ``import b`` / ``from b import x`` beside it, as a
        script's folder is on its path): a library module, even with an entry point."""
        key = ("imported", rel)
        if key not in self.memo:
            stem = Path(rel).stem.encode()
            mention = _import_mention(stem)
            self.memo[key] = any(
                _imports(self.tree(other), other, rel, self.prefix)
                for other in self.holding(stem)
                if other != rel and mention.search(self.files()[other])
            )
        return self.memo[key]

    def _outline(self, rel: str) -> FileContext | None:
        """The file's scopes without function bodies (``ClassContext``): what a class line
        resolves its bases through, a fraction of the cost. Neither it nor a parse made for it
        is kept."""
        tree = self._trees[rel] if rel in self._trees else self._parse(rel)
        return self._context(ClassContext, rel, tree)

    # -- definitions ----------------------------------------------------------------------
    def defs(self, rel: str) -> list[Def]:
        """Module-level functions and methods of classes (nested classes too) of one file;
        functions defined inside functions are not listed (nothing outside can call them by
        name)."""
        key = ("defs", rel)
        if key not in self.memo:
            ctx = self.context(rel)
            out: list[Def] = []
            if ctx is not None:
                self._defs(ctx.tree.body, ctx.module_name, "", rel, out)
            self.memo[key] = out
        return self.memo[key]

    def named(self, name: str) -> list[Def]:
        """Every function and method of the tree called ``name`` (files that spell
        ``def name`` only)."""
        return [
            d for r in self.holding(f"def {name}".encode()) for d in self.defs(r) if d.name == name
        ]

    def _defs(self, body, module: str, cls: str, rel: str, out: list[Def]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append(Def(rel, module, cls, node.name, node))
            elif isinstance(node, ast.ClassDef):
                self._defs(node.body, module, f"{cls or module}.{node.name}", rel, out)

    def classes(self) -> dict[str, tuple[str, ...]]:
        """Qualified class name -> its bases' qualified names (through the file's imports),
        for every class of the tree."""
        if "classes" not in self.memo:
            out: dict[str, tuple[str, ...]] = {}
            for rel in self.holding(b"class "):
                ctx = self._ctx.get(rel) or self._outline(rel)
                if ctx is None:
                    continue
                self._classes(ctx, ctx.tree.body, ctx.module_name, out)
            self.memo["classes"] = out
        return self.memo["classes"]

    def _classes(self, ctx, body, owner: str, out) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                q = f"{owner}.{node.name}"
                bases = []
                for b in node.bases:
                    d = _dotted(b)
                    r = ctx.qualify(node.lineno, d) if d else None
                    if r and "." not in r:  # a class of this module, bound by its definition
                        r = f"{ctx.module_name}.{r}"
                    bases.append(r or "?")
                out[q] = tuple(bases)
                self._classes(ctx, node.body, q, out)

    def subclasses(self, cls: str) -> set[str]:
        """``cls`` and every class of the tree deriving from it."""
        classes = self.classes()
        out, todo = {cls}, [cls]
        while todo:
            c = todo.pop()
            for k, bases in classes.items():
                if c in bases and k not in out:
                    out.add(k)
                    todo.append(k)
        return out

    def mro(self, cls: str) -> list[str]:
        """``cls`` and its bases of the tree, depth first (enough to find a method's owner)."""
        classes = self.classes()
        out: list[str] = []
        todo = [cls]
        while todo:
            c = todo.pop(0)
            if c in out or c not in classes:
                continue
            out.append(c)
            todo.extend(classes[c])
        return out


_DEFINITION = (b"def ", b"class ", b"@", b"async def ")


def _gap_after_imports(data: bytes) -> int | None:
    """The blank lines between a module's top-level import block and the statement after it,
    where that statement is no definition, comment or block; else None."""
    seen, blanks = False, 0
    for line in data.splitlines():
        if line.startswith((b"import ", b"from ")):
            seen, blanks = True, 0
        elif not seen:
            continue
        elif not line.strip():
            blanks += 1
        elif line[:1] in (b" ", b"\t", b")") and not blanks:
            continue  # a parenthesised import's continuation
        elif line.startswith(_DEFINITION + (b"#", b"if ", b"try:", b"with ", b"for ")):
            return None
        else:
            return blanks
    return None


def _last(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _dotted(node: ast.AST) -> str | None:
    parts = dotted_parts(node)
    return ".".join(parts) if parts else None


def dotted(node: ast.AST) -> str | None:
    """``"a.b.c"`` for a Name/Attribute chain, else None."""
    return _dotted(node)


def _import_mention(stem: bytes) -> re.Pattern:
    """An import statement naming ``stem`` as a word (``from ._tune import``, ``import
    pkg._tune``, ``from pkg import (a, _tune)``): the prefilter before a file is parsed. Not
    ``main`` in ``"__main__"``; a docstring line that reads like an import passes, and the parse
    then says no."""
    w = rb"\b" + re.escape(stem) + rb"\b"
    return re.compile(
        rb"(?m)^[ \t]*(?:from[ \t]+[.\w]*"
        + w
        + rb"|import[ \t][^\n]*"
        + w
        + rb"|from[ \t]+[.\w]+[ \t]+import[ \t]*(?:\([^)]*|[^\n]*)"
        + w
        + rb")"
    )


def _imports(tree: ast.Module | None, importer: str, rel: str, prefix: str) -> bool:
    """``tree`` (the file ``importer``) imports the module of ``rel``."""
    module = module_name(rel, prefix)
    beside = Path(importer).parent == Path(rel).parent
    names = {module, Path(rel).stem} if beside else {module}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Import):
            found = {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = absolute_module(node.level, node.module, package_name(importer, prefix))
            if base is None:
                continue
            found = {base, *(f"{base}.{a.name}" if base else a.name for a in node.names)}
        else:
            continue
        if any(n in names or n.startswith(f"{module}.") for n in found):
            return True
    return False
