"""Import bookkeeping for a rewritten file, done on the whole text after the regions are spliced.

- An import a rewrite made unused is removed (only imports binding a name a rewrite replaced, and
  only when the name is used nowhere else in the file nor listed in ``__all__``); package
  ``__init__.py`` files keep their module-level imports (they may be re-exports).
  ``from m import OLD`` whose replacement is ``from m import NEW`` is renamed in place.
- A needed import is added only when missing: into an existing ``from m import ...``, else as a
  new statement after the file's leading import block (after the docstring and
  ``__future__`` imports when there is none).
Statements are edited through libcst one at a time, so their comments and layout survive.
"""

from __future__ import annotations

import ast
import re
import sys

import libcst as cst

from patches.generate.codemods.regions import Piece, Region


def split_lines(text: str) -> list[str]:
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _local(alias: ast.alias) -> str:
    return alias.asname or alias.name.split(".")[0]


def _used_names(tree: ast.Module) -> set[str]:
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for node in tree.body:  # names exported by string in __all__ count as used
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value:
                used |= {
                    c.value
                    for c in ast.walk(node.value)
                    if isinstance(c, ast.Constant) and isinstance(c.value, str)
                }
    return used


def _parents(tree: ast.Module) -> dict[int, list]:
    """id(statement) -> the body list holding it."""
    out: dict[int, list] = {}
    for node in ast.walk(tree):
        for fld in ("body", "orelse", "finalbody", "handlers"):
            seq = getattr(node, fld, None)
            if isinstance(seq, list):
                for s in seq:
                    out[id(s)] = seq
    return out


def _owns(lines: list[str], node: ast.stmt) -> bool:
    first = lines[node.lineno - 1]
    lead = len(first) - len(first.lstrip(" \t"))
    rest = (
        lines[node.end_lineno - 1]
        .encode()[node.end_col_offset :]
        .decode("utf-8", "replace")
        .strip()
    )
    return len(first[:lead].encode()) == node.col_offset and (not rest or rest.startswith("#"))


def _edit_stmt(
    lines: list[str], node: ast.stmt, drop: set[str], rename: dict[str, str], append: list[str]
) -> str | None:
    """The statement's new text: aliases in ``drop`` removed, ``rename``d, ``append`` added."""
    piece = Piece(lines, Region(node.lineno, node.end_lineno), whole_file=False)
    try:
        module = cst.parse_module(piece.text)
    except cst.ParserSyntaxError:
        return None

    class Edit(cst.CSTTransformer):
        def leave_ImportFrom(self, orig, upd):
            return self._names(upd)

        def leave_Import(self, orig, upd):
            return self._names(upd)

        def _names(self, upd):
            if isinstance(upd.names, cst.ImportStar):
                return upd
            names = []
            for a in upd.names:
                dotted = cst.helpers.get_full_name_for_node(a.name) or ""
                local = a.asname.name.value if a.asname else dotted.split(".")[0]
                if local in drop and local not in rename:
                    continue
                if local in rename and not a.asname:
                    a = a.with_changes(name=cst.Name(rename[local]))
                names.append(a)
            names += [cst.ImportAlias(cst.Name(n)) for n in append]
            if not names:
                return cst.RemovalSentinel.REMOVE
            fixed = [
                n.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                if isinstance(n.comma, cst.MaybeSentinel)
                else n
                for n in names[:-1]
            ]
            last = upd.names[-1].comma if upd.names else cst.MaybeSentinel.DEFAULT
            return upd.with_changes(names=fixed + [names[-1].with_changes(comma=last)])

    new = module.visit(Edit())
    code = new.code
    if not new.body or (
        len(new.body) == 1 and isinstance(new.body[0], cst.If) and not new.body[0].body.body
    ):
        return ""
    return piece.restore(code)


def fix_imports(
    text: str,
    path: str,
    adds: list[tuple[str, str | None]],
    removes: set[str],
    importer=None,
    kept: list | None = None,
    first_party=frozenset(),
) -> str:
    """``text`` with ``adds`` ((module, name) or (module, None)) present and the imports of
    ``removes`` (local names a rewrite replaced) gone where nothing uses them any more;
    ``first_party``: the tree's own top-level modules (isort's first-party section).
    ``importer(name)``: another file that imports ``name`` from this module (a re-export), whose
    import then stays; ``kept`` receives (name, that file)."""
    dead: set[str] = set()
    renames: dict[str, dict[str, str]] = {}
    if removes:
        tree = ast.parse(text)
        dead = removes - _used_names(tree)
        for name in sorted(dead) if importer else ():
            by = importer(name)
            if by:
                dead.discard(name)
                if kept is not None:
                    kept.append((name, by))
        init = path.endswith("__init__.py")
        left = [(m, n) for m, n in adds if n]
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and not node.level and not init:
                for a in node.names:
                    new = next((n for m, n in left if m == node.module), None)
                    if (
                        a.asname is None
                        and a.name in dead
                        and new
                        and a.name not in renames.get(node.module, {})
                    ):
                        renames.setdefault(node.module, {})[a.name] = new
                        left.remove((node.module, new))
    done = {(m, n) for m, r in renames.items() for n in r.values()}
    # Add first, while the imports to remove still anchor the leading import block, so a
    # replaced import's successor lands where it was.
    text = _add(text, [x for x in adds if x not in done], first_party)
    return _remove(text, path, dead, renames) if dead else text


def _remove(text: str, path: str, dead: set[str], renames: dict[str, dict[str, str]]) -> str:
    tree = ast.parse(text)
    lines = split_lines(text)
    parents = _parents(tree)
    top = {id(s) for s in tree.body}
    init = path.endswith("__init__.py")
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or (init and id(node) in top):
            continue
        drop = {_local(a) for a in node.names if _local(a) in dead}
        if not drop or not _owns(lines, node):
            continue
        rename = {}
        if isinstance(node, ast.ImportFrom) and not node.level and id(node) in top:
            rename = {k: v for k, v in renames.get(node.module, {}).items() if k in drop}
        new = _edit_stmt(lines, node, drop, rename, [])
        if new is None:
            continue
        if new == "":
            siblings = parents.get(id(node), [])
            if len(siblings) == 1:  # the block's only statement: keep the block valid
                first = lines[node.lineno - 1]
                new = first[: len(first) - len(first.lstrip(" \t"))] + "pass\n"
        edits.append((node.lineno, node.end_lineno, new))
    for start, end, new in sorted(edits, reverse=True):
        lines[start - 1 : end] = [new] if new else []
    return "".join(lines)


def _existing(tree: ast.Module, lines: list[str]):
    """(modules imported plainly, (module, name) imported from, the ``from`` statement of each
    module that new names can join) among the file's top-level imports."""
    have_mod = set()
    have_from: dict[str, ast.ImportFrom] = {}
    have_names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname is None:
                    have_mod.add(a.name.split(".")[0])
                    have_mod.add(a.name)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            have_names |= {(node.module, a.name) for a in node.names if a.asname is None}
            if (
                node.module not in have_from
                and not any(a.name == "*" for a in node.names)
                and _owns(lines, node)
            ):
                have_from[node.module] = node
    return have_mod, have_names, have_from


def _add(text: str, adds: list[tuple[str, str | None]], first_party=frozenset()) -> str:
    if not adds:
        return text
    tree = ast.parse(text)
    lines = split_lines(text)
    have_mod, have_names, have_from = _existing(tree, lines)
    plain = sorted({m for m, n in adds if n is None and m not in have_mod})
    froms: dict[str, list[str]] = {}
    for m, n in adds:
        if n and (m, n) not in have_names and n not in froms.setdefault(m, []):
            froms[m].append(n)
    edits: list[tuple[int, int, str]] = []
    placed = _sorted_places(tree, lines, plain)
    for at in sorted(set(placed.values())):
        edits.append((at + 1, at, "".join(f"import {m}\n" for m in plain if placed.get(m) == at)))
    ahead = {m: a for m in plain if m not in placed and (a := _ahead(tree, lines, m, first_party))}
    for at, blank in sorted(set(ahead.values())):
        new = "".join(f"import {m}\n" for m in plain if ahead.get(m) == (at, blank))
        edits.append((at + 1, at, new + ("\n" if blank else "")))
    new_stmts = [f"import {m}\n" for m in plain if m not in placed and m not in ahead]
    for m in sorted(froms):
        if not froms[m]:
            continue
        node = have_from.get(m)
        new = _edit_stmt(lines, node, set(), {}, froms[m]) if node is not None else None
        if new:
            edits.append((node.lineno, node.end_lineno, new))
        else:
            new_stmts.append(f"from {m} import {', '.join(froms[m])}\n")
    if new_stmts:
        at = _insert_line(tree)
        # never between a statement and the comment lines attached to it (a rerun would then
        # read that comment as the import's): go above them, below a shebang/coding line
        at = _above_comments(lines, at)
        if at > 0 and at <= len(lines) and not lines[at - 1].endswith("\n"):
            lines[at - 1] += "\n"
        edits.append((at + 1, at, "".join(new_stmts)))
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        lines[start - 1 : end] = [new]
    return "".join(lines)


def _section(module: str) -> str:
    """isort's section of a module, as far as the placement needs: the standard library's or
    not."""
    return "stdlib" if module.split(".")[0] in sys.stdlib_module_names else "other"


_ORDER = {"stdlib": 0, "other": 1, "first": 2}


def _ahead(tree: ast.Module, lines: list[str], m: str, first_party) -> tuple[int, bool] | None:
    """(the line after which ``import m`` goes, whether a blank line follows it) where its
    section has no plain ``import x`` to sort among in the leading imports: above the first
    ``from`` import of its own section (isort puts plain imports first), else above the first
    import of a later section, the project's own (``first_party``, or relative), with a blank
    line between (llmcompressor's examples: ``import torch`` above ``from llmcompressor import
    ...``, round 37). None where neither is there (it goes after the last import)."""
    own = "first" if m.split(".")[0] in first_party else _section(m)
    for node in tree.body:
        if isinstance(node, ast.Expr) and node is tree.body[0]:
            continue
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            return None
        name = (node.module or "") if isinstance(node, ast.ImportFrom) else node.names[0].name
        if name == "__future__":
            continue
        top = name.split(".")[0]
        section = "first" if top in first_party or getattr(node, "level", 0) else _section(name)
        later = _ORDER[section] > _ORDER[own]
        if later or (section == own and isinstance(node, ast.ImportFrom)):
            return _above_comments(lines, node.lineno - 1), later
    return None


def _sorted_places(tree: ast.Module, lines: list[str], plain: list[str]) -> dict[str, int]:
    """module -> the line after which its new ``import m`` goes: among the plain ``import x``
    lines of its section in the file's leading imports, at its sorted place (isort's, as
    PyTorch's lint and most projects keep them). A module with no such line of its section is
    not placed here (it goes after the last import)."""
    runs: dict[str, list[ast.Import]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) or (
            isinstance(node, ast.Expr) and node is tree.body[0]
        ):
            continue
        if not isinstance(node, ast.Import):
            break
        if len(node.names) == 1:
            runs.setdefault(_section(node.names[0].name), []).append(node)
    out: dict[str, int] = {}
    for m in plain:
        run = runs.get(_section(m), [])
        if not run:
            continue
        after = next((n for n in run if n.names[0].name.lower() > m.lower()), None)
        if after is None:
            out[m] = run[-1].end_lineno
            continue
        at = _above_comments(lines, after.lineno - 1)
        top = 0  # the file's opening comment block (a licence, a header) stays first
        while top < len(lines) and lines[top].lstrip().startswith("#"):
            top += 1
        out[m] = after.lineno - 1 if at < top else at
    return out


def _above_comments(lines: list[str], at: int) -> int:
    """``at`` (the line after which to insert) moved above the comment lines attached to the
    statement below it, and below a shebang or coding line."""
    while at > 0 and lines[at - 1].lstrip().startswith("#") and not _header(lines, at):
        at -= 1
    return at


def _header(lines: list[str], lineno: int) -> bool:
    """Line ``lineno`` (1-based) is a shebang or an encoding declaration."""
    text = lines[lineno - 1]
    return lineno <= 2 and (text.startswith("#!") or bool(re.match(r"#.*coding[:=]", text)))


def _insert_line(tree: ast.Module) -> int:
    """The line after which new imports go (0: before everything)."""
    body = tree.body
    i, after = 0, 0
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        after, i = body[0].end_lineno, 1
    while i < len(body) and isinstance(body[i], ast.ImportFrom) and body[i].module == "__future__":
        after, i = body[i].end_lineno, i + 1
    while i < len(body) and isinstance(body[i], (ast.Import, ast.ImportFrom)):
        after, i = body[i].end_lineno, i + 1
    if after == 0 and body:
        from patches.generate.codemods.context import stmt_start

        return stmt_start(body[0]) - 1
    return after
