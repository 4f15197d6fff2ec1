"""A project's own private helper named for CUDA, whose body can be made device-neutral, is
renamed with its body, its callers and a deprecated alias, as one unit across the tree (upstream's
form: torch 2.4 -> 2.13 renamed ``Optimizer._cuda_graph_capture_health_check`` to
``_accelerator_graph_capture_health_check``, made its body neutral, kept the old name as
``deprecated(...)(new)`` and renamed the callers in eight other files)::

    class Base:                                     class Base:
        def _cuda_check(self):                          def _accelerator_check(self):
            if torch.cuda.is_available():      ->           if torch.accelerator.is_available():
                ...                                             ...

                                                        _cuda_check = deprecated(
                                                            "Use _accelerator_check instead"
                                                        )(_accelerator_check)
    class Adam(Base):  # another file               class Adam(Base):
        def step(self):                                 def step(self):
            self._cuda_check()                  ->          self._accelerator_check()

What is a candidate: a function defined at module level or directly in a class body, not
decorated, whose name is private (``_x``, not ``__x__``) and carries the word ``cuda`` as one of its
``_``-separated parts (``_cuda_x``, ``_x_cuda``; not ``_cudnn_x``, ``_cudagraph_x``). It is renamed
(``cuda`` -> ``accelerator``) only when all of these hold, else nothing changes and the call sites
keep their manual finding with the reason (``--explain``):

- its body asks at least one CUDA runtime query and becomes device-neutral by the equivalences
  of ``TRANSLATIONS`` (each holds on CUDA and on a machine without an accelerator; ``CUDA`` in
  its prose strings, the messages, reads ``accelerator``), and the audit then finds nothing left
  in it (no CUDA API, no ``"cuda"`` device string, no cuDNN, no CUDA graph object, no
  ``.cuda()``): a helper whose name says CUDA for a toolchain, a library or a file kind
  (``_join_cuda_home``, ``_is_cuda_file``) asks none and stays;
- it is not CUDA's own: not in a path ``cuda_intent.toml`` ``[[owned]]`` lists, not a method of
  a class named for CUDA;
- the name is defined once in the tree (a second definition, an override, would be bypassed), no
  file assigns it (monkeypatching) or names it in a string (``getattr``, ``mock.patch``,
  ``__all__``), the new name is free, and every bare use of a module function resolves to it;
- the defining file can bind the alias (``typing_extensions.deprecated`` where the project uses
  typing_extensions, else a plain alias).

The unit is one patch, first in the series (the definition, its alias and every caller: any
prefix of the series keeps working); later patches of the same files start from it. Only with
``--unsafe-fixes`` (the neutral body runs on every accelerator now: a review change).
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import libcst as cst

from audits.resolve import absolute_module, module_name, package_name
from patches.generate import project_style, pytorch_style
from patches.generate.codemods import compiles
from patches.generate.codemods.imports import fix_imports
from patches.generate.codemods.reexports import python_files, tree_bytes
from patches.generate.helper_rename_body import _Untranslatable, candidate, new_name
from patches.generate.helper_rename_body import translate as translate  # re-exported
from patches.generate.helper_rename_edit import Helper, _Rename
from patches.generate.intent.data import is_cuda_word, owned
from patches.generate.intent.paths import is_test_file

RULE = "HN520"  # the audit's finding at the call sites (cuda-private-member)
_DEF = re.compile(r"def\s+(\w*(?i:cuda)\w*)\s*\(")


# -- the tree ----------------------------------------------------------------------------------


class HelperRenames:
    """The tree's private CUDA-named helpers and what becomes of them (``helpers``); ``apply``
    and ``sites`` per file. ``audit``: the run's (its ``rescan`` says whether a body is neutral)."""

    def __init__(self, root: Path, audit, prefix: str = "") -> None:
        self.root, self.audit, self.prefix = root, audit, prefix
        self.files: dict[str, str] = {}  # the files that say "cuda" (every use of a helper)
        self.raw: dict[str, bytes] = {}  # every Python file
        self.trees: dict[str, ast.Module | None] = {}
        self.helpers: dict[str, Helper] = {}
        self._starts: dict[tuple[str, int], str] = {}
        self._touches: list[str] | None = None
        self._hits = 0
        self._analyse()

    # -- reading -----------------------------------------------------------------------------
    def _read(self) -> None:
        self.raw = tree_bytes(self.root)
        for rel, data in self.raw.items():
            if b"cuda" in data.lower():
                try:
                    self.files[rel] = data.decode("utf-8")
                except UnicodeDecodeError:
                    continue

    def tree(self, rel: str) -> ast.Module | None:
        if rel not in self.trees:
            try:
                self.trees[rel] = ast.parse(self.files[rel])
            except (SyntaxError, ValueError, RecursionError):
                self.trees[rel] = None
        return self.trees[rel]

    # -- analysis ----------------------------------------------------------------------------
    def _analyse(self) -> None:
        self._read()
        defs: dict[str, list[tuple[str, ast.AST, str]]] = {}
        for rel, text in self.files.items():
            if not any(candidate(m) for m in _DEF.findall(text)):
                continue
            tree = self.tree(rel)
            if tree is None:
                continue
            for node, owner in _defs(tree):
                if candidate(node.name):
                    defs.setdefault(node.name, []).append((rel, node, owner))
        for name, found in sorted(defs.items()):
            rel, node, owner = found[0]
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            h = Helper(name, new_name(name), rel, owner, start, node.end_lineno)
            self.helpers[name] = h
            h.reason = self._decide(h, node, found)

    def _bound(self, name: str) -> str:
        """A file of the tree that binds ``name`` (defines, assigns or sets it), or ""."""
        key = name.encode()
        for rel, data in self.raw.items():
            if key not in data:
                continue
            try:
                tree = ast.parse(data)
            except (SyntaxError, ValueError, RecursionError):
                return rel
            for n in ast.walk(tree):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    hit = n.name == name
                elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                    hit = n.id == name
                elif isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load):
                    hit = n.attr == name
                else:
                    hit = False
                if hit:
                    return rel
        return ""

    def _decide(self, h: Helper, node, found) -> str:
        if len(found) > 1:
            others = ", ".join(f"{r}:{n.lineno}" for r, n, _ in found[1:4])
            return f"defined {len(found)} times in the tree ({others}): renaming one bypasses the others"
        if node.decorator_list:
            return "decorated: an alias of the decorated object may bind differently"
        if isinstance(node, ast.AsyncFunctionDef):
            return "a coroutine function"
        bound = self._bound(h.new)
        if bound:
            return f"`{h.new}` is already bound in the tree ({bound})"
        if h.owner and is_cuda_word(h.owner):
            return f"its class {h.owner} is about CUDA"
        if owned(h.path):
            return f"{h.path} implements CUDA support itself"
        why = self._references(h)
        if why:
            return why
        return self._body(h)

    def _references(self, h: Helper) -> str:
        """Fill ``h.refs``; why the uses forbid the rename ("" = they do not)."""
        module = module_name(h.path, self.prefix)
        for rel, text in self.files.items():
            if h.name not in text:
                continue
            tree = self.tree(rel)
            if tree is None:
                return f"{rel} does not parse"
            imported: set[str] = set()
            for n in ast.walk(tree):
                why = self._use(h, rel, tree, n, module, imported)
                if why:
                    return why
        return ""

    def _use(self, h: Helper, rel: str, tree, n, module: str, imported: set[str]) -> str:
        """One node of ``rel``: a use of ``h`` recorded in ``h.refs``, or why it forbids it."""
        at = f"{rel}:{getattr(n, 'lineno', 0)}"
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and h.name in n.value:
            if _is_docstring(tree, n):
                return ""
            return f"named in a string at {at} (getattr, mock.patch, __all__): a rename bypasses it"
        elif isinstance(n, ast.ImportFrom) and any(a.name == h.name for a in n.names):
            src = absolute_module(n.level, n.module, package_name(rel, self.prefix))
            if h.owner or src != module:
                return f"imported at {at} from {src}, not its defining module"
            imported |= {a.asname or a.name for a in n.names if a.name == h.name}
        elif isinstance(n, ast.Attribute) and n.attr == h.name:
            if not isinstance(n.ctx, ast.Load):
                return f"assigned at {at}: the rename would bypass it"
        elif isinstance(n, ast.Name) and n.id == h.name:
            if not isinstance(n.ctx, ast.Load):
                return f"assigned at {at}: the rename would bypass it"
            if not ((rel == h.path and not h.owner) or h.name in imported):
                return f"used at {at} without importing it from {module}"
        elif isinstance(n, ast.arg) and n.arg == h.name:
            return f"a parameter at {at} shadows it"
        else:
            return ""
        h.refs.setdefault(rel, []).append((n.lineno, n.col_offset, n.end_lineno))
        return ""

    def _body(self, h: Helper) -> str:
        """Why the body stays CUDA ("" = it becomes neutral)."""
        text = self.files[h.path]
        try:
            new = self._rewrite(h.path, text, only={h.name}, checking=True)
        except _Untranslatable as e:
            return f"its body stays CUDA-specific: {e} has no neutral spelling here"
        except (cst.ParserSyntaxError, SyntaxError, ValueError) as e:
            return f"cannot rewrite: {type(e).__name__}"
        hits = self._hits
        found, errs = self.audit.rescan(new, h.path)
        if errs:
            return f"the rewritten file does not scan: {errs[0].reason}"
        tree = ast.parse(new)
        span = next(((n.lineno, n.end_lineno) for n, _ in _defs(tree) if n.name == h.new), None)
        if span is None:
            return "cannot find the renamed definition"
        left = [f for f in found if span[0] <= f.line <= span[1]]
        if left:
            f = left[0]
            return f"its body stays CUDA-specific: {f.rule} ({f.name}) `{f.source}`" + (
                f" and {len(left) - 1} more" if len(left) > 1 else ""
            )
        if not hits:
            return (
                "its body asks no CUDA runtime query a neutral API answers: the name says CUDA "
                "for what the helper is about (a toolchain, a library, a file kind)"
            )
        return ""

    # -- per file ----------------------------------------------------------------------------
    def renamed(self) -> list[Helper]:
        return [h for h in self.helpers.values() if h.renamed]

    def renamed_names(self) -> frozenset[str]:
        """The old names of the helpers renamed: no CUDA once the unit is applied."""
        return frozenset(h.name for h in self.renamed())

    def touches(self) -> list[str]:
        """Every file the unit changes: the defining files first, then the callers."""
        if self._touches is None:
            out = [h.path for h in self.renamed()]
            out += sorted({r for h in self.renamed() for r in h.refs} - set(out))
            self._touches = list(dict.fromkeys(out))
        return self._touches

    def message(self, sites, tree: str, series: str, devices: str) -> tuple[str, str]:
        """The unit patch's subject and body."""
        hs = self.renamed()
        names = ", ".join(h.name for h in hs[:2]) + (" ..." if len(hs) > 2 else "")
        news = ", ".join(h.new for h in hs[:2]) + (" ..." if len(hs) > 2 else "")
        subject = f"[hw-neutral] Rename {names} to {news}"
        why = (
            "The helper's body now asks the current accelerator (torch.accelerator, "
            "torch.get_device_module()) instead of torch.cuda, so its name no longer says CUDA. "
            "Its callers in the tree are renamed with it; "
            + (
                "a test module's helper keeps no alias (nothing outside the tree calls it)."
                if all(is_test_file(h.path) for h in hs)
                else "the old name stays as a deprecated alias for callers outside the tree "
                "(review fix: the body now runs on every accelerator)."
            )
        )
        lines = [f"Rename {names} to {news} and make its body device-neutral.", ""]
        lines += [textwrap.fill(why, 72), ""]
        lines += [f"Rule: {RULE} (cuda-private-member): the call sites of the helper", ""]
        for h in hs:
            lines.append(f"Helper: {h.describe()} -> {h.new}")
        lines += ["", "Call sites:"]
        shown = list(dict.fromkeys(f"  {f.path}:{f.line}: {f.source}" for f in sites))
        lines += shown[:25] + ([f"  ... and {len(shown) - 25} more"] if len(shown) > 25 else [])
        lines += [
            "",
            "Test Plan:",
            f"python -m patches.validate --tree {tree} --series {series} --devices {devices}",
        ]
        return subject, "\n".join(lines) + "\n"

    def apply(self, path: str, text: str, strict: bool = False) -> str:
        """``text`` (any version of ``path`` in the series) with the unit applied. ``strict``:
        ``ValueError`` where the unit cannot be applied to it (else ``text`` comes back)."""
        names = {h.name for h in self.renamed() if h.path == path or path in h.refs}
        if not names:
            return text
        try:
            return self._rewrite(path, text, only=names)
        except (_Untranslatable, cst.ParserSyntaxError, SyntaxError, ValueError) as e:
            if strict:
                raise ValueError(f"the helper rename does not apply to this step: {e}") from None
            return text

    def _rewrite(self, path: str, text: str, only: set[str], checking: bool = False) -> str:
        helpers = [self.helpers[n] for n in sorted(only)]
        module = cst.parse_module(text)
        defining = [h for h in helpers if h.path == path]
        alias = _alias_style(self, path, text)
        t = _Rename(helpers, defining, alias, path)
        new = module.visit(t).code
        self._hits = t.hits
        if defining and alias == "deprecated" and t.wrote_alias:
            new = fix_imports(new, path, [("typing_extensions", "deprecated")], set())
        compiles(new, path)
        return new

    def start(self, path: str, text: str) -> str:
        """``path``'s text after the unit's patch (in PyTorch's style): where the file's later
        patches start."""
        key = (path, hash(text))
        if key not in self._starts:
            new = self.apply(path, text)
            style = project_style.style_for(self.root, self.prefix, path, text)
            done = text if new == text else pytorch_style.conform(path, text, new, style)
            self._starts[key] = done
        return self._starts[key]

    def sites(self, path: str, findings) -> set[tuple[str, int, int]]:
        """(rule, line, col) of ``findings`` (of the original ``path``) the unit fixes: every
        finding in a renamed definition, the audit's finding at each renamed use."""
        out = set()
        for h in self.renamed():
            spans = h.refs.get(path, [])
            for f in findings:
                if h.path == path and h.line <= f.line <= h.end_line:
                    out.add((f.rule, f.line, f.col))
                elif f.rule == RULE and any(
                    s[0] <= f.line <= s[2] and h.name in f.source for s in spans
                ):
                    out.add((f.rule, f.line, f.col))
        return out

    def reason_for(self, path: str, finding) -> str:
        """For a finding at a use of an own helper left as it is: why it is not renamed."""
        for h in self.helpers.values() if finding.rule == RULE else ():
            if not h.renamed and h.name in finding.source:
                return f"own helper {h.describe()} not renamed: {h.reason}"
        return ""

    def describe(self, h: Helper) -> str:
        old = "dropped (a test module's)" if is_test_file(h.path) else "kept as a deprecated alias"
        return (
            f"private helper rename: {h.describe()} -> `{h.new}`, its body made neutral, the old "
            f"name {old}, every caller of the tree renamed"
        )

    def helper_at(self, path: str, finding) -> Helper | None:
        for h in self.renamed():
            if h.path == path and h.line <= finding.line <= h.end_line:
                return h
            if finding.rule == RULE and h.name in finding.source and path in h.refs:
                return h
        return None


_CACHE: dict[tuple, HelperRenames] = {}


def of(run) -> HelperRenames | None:
    """The run's unit, read once (``Run.helpers``): with ``--unsafe-fixes`` and the call sites'
    rule selected; else None. Runs on an unchanged tree share one analysis (``--explain`` asks
    once per site)."""
    if run.helpers is None:
        active = run.settings.unsafe_fixes and RULE in run.audit.selected
        run.helpers = _cached(run) if active else False
    return run.helpers or None


def _cached(run) -> HelperRenames:
    root = Path(run.settings.root)
    stamp = [(e.relpath, e.size, e.mtime_ns, e.inode) for e in python_files(root)]
    key = (str(root.resolve()), run.audit.prefix, tuple(sorted(run.audit.rules)), tuple(stamp))
    if key not in _CACHE:
        if len(_CACHE) >= 4:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = HelperRenames(root, run.audit, run.audit.prefix)
    return _CACHE[key]


def _alias_style(renames: HelperRenames, path: str, text: str) -> str:
    """``none`` in a test module (its callers are the tree's, all renamed: round 38's
    unsloth-zoo skip-gate helper); ``deprecated`` where the project already uses
    typing_extensions and the file binds no other ``deprecated``; else ``plain``."""
    if is_test_file(path):
        return "none"
    tree = renames.tree(path) if path in renames.files else None
    tree = tree or ast.parse(text)
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == "deprecated":
            return "plain"
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                if (a.asname or a.name) == "deprecated" and getattr(
                    n, "module", ""
                ) != "typing_extensions":
                    return "plain"
    if "typing_extensions" in text or any("typing_extensions" in t for t in renames.files.values()):
        return "deprecated"
    return "plain"


def _defs(tree: ast.Module):
    """(function definition, owner class name or "") at module level or in a class body."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, ""
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield sub, node.name


def _is_docstring(tree: ast.Module, const: ast.Constant) -> bool:
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = n.body
            if body and isinstance(body[0], ast.Expr) and body[0].value is const:
                return True
    return False
