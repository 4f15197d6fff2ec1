"""A function's local variable named for CUDA whose every statement the series made neutral is
renamed with them (``cuda`` -> ``accelerator``), in the step that makes its last statement neutral::

    if torch.cuda.is_available():                      if torch.accelerator.is_available():
        cuda_rng_state = torch.cuda.get_rng_state() ->      accelerator_rng_state = torch.get_device_module().get_rng_state()
    ...                                                ...
        torch.cuda.set_rng_state(cuda_rng_state)            torch.get_device_module().set_rng_state(accelerator_rng_state)

Upstream renames such locals when it neutralises their code: between torch 2.4.1 and 2.14.1 each
neutralised assignment to a local named for CUDA got a new name (``freeze_rng_state``'s
``cuda_rng_state`` -> ``accelerator_rng_state``, ``compile_fx``'s ``has_cuda`` -> ``has_gpu``,
``ShardedTensor.cuda``'s ``cuda_tensor`` -> ``new_tensor``); a patch that leaves the old name asks
the reviewer to make it. A local is renamed only when all of these hold, else nothing changes:

- its name has ``cuda`` as one of its ``_``-separated parts (``cuda_x``, ``has_cuda``; not
  ``cudnn_x``, ``cudagraph``, ``CUDA_HOME``'s constant at module level: only function locals);
- in the original it was assigned CUDA code's value (or another such local's): the name
  describes the value. One only read by CUDA code keeps its name (upstream widened
  ``cuda_supported_configs if "cuda" in str(device)`` to more GPUs in seven optimizers of
  ``common_optimizers`` and kept the name each time);
- every statement of the function that names it (a compound statement: its header) holds no CUDA
  token after the step (``[markers]``, other such locals counted as CUDA until they qualify);
- it is bound only by plain assignments in that function (``x = ...``, ``x: T = ...``, ``x +=
  ...``): not a parameter, ``global``/``nonlocal``, loop, ``with``, ``except``, import, walrus or
  comprehension target, and no nested scope binds it (closures that read it are renamed with it);
- nothing reads it by name at run time: no ``locals()``/``vars()``/``eval``/``exec`` in the
  function, no self-documenting f-string ``{x=}`` (its text is output);
- the new name is no builtin, names nothing in the module's scope or the function's (nested
  ones included) and is no other renamed local of an enclosing or nested function.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from dataclasses import dataclass
from types import SimpleNamespace

from patches.generate import helper_rename_body
from patches.generate.codemods.families.script_device import is_script
from patches.generate.codemods.families.script_units import bindings_of, identifiers
from patches.generate.intent.data import is_cuda_word

# a line assigning a name with a `cuda` part (`cuda_x = `, `has_cuda: bool = `, `n_cuda += `)
_ASSIGNS_NAMED = re.compile(
    r"^[ \t]*(?:\w*_)?(?:cuda|CUDA|Cuda)(?:_\w*)?[ \t]*(?::[^=\n]*)?[-+*/|&]?=(?!=)", re.M
)
_DYNAMIC = frozenset({"locals", "vars", "eval", "exec"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_FUNCS, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
           ast.GeneratorExp)  # fmt: skip
_HEADERS = {
    ast.If: ("test",),
    ast.While: ("test",),
    ast.For: ("target", "iter"),
    ast.AsyncFor: ("target", "iter"),
    ast.With: ("items",),
    ast.AsyncWith: ("items",),
    ast.Try: (),
    ast.FunctionDef: ("decorator_list", "args", "returns"),
    ast.AsyncFunctionDef: ("decorator_list", "args", "returns"),
    ast.ClassDef: ("decorator_list", "bases", "keywords"),
}


@dataclass(frozen=True)
class Renamed:
    function: str  # the qualified name of the function (``checkpoint_params``, ``C.f.<locals>.g``)
    old: str
    new: str


def new_name(name: str) -> str | None:
    """``cuda`` -> ``accelerator`` in each part of ``name``, as the helper rename spells it
    (case kept); None when no part is ``cuda``."""
    new = helper_rename_body.new_name(name)
    return new if new != name else None


def rename(original: str, text: str, path: str = "module.py") -> tuple[str, list[Renamed]]:
    """``text`` (a step's result for the file ``path`` whose source is ``original``) with its
    qualifying locals renamed, and what was renamed. Text that does not parse is returned as is;
    so is a script's (``script_plan.is_script``): the script family renames its names, in
    pytorch/examples' spelling (``use_accel``)."""
    lines = [text.count("\n", 0, m.start()) + 1 for m in _ASSIGNS_NAMED.finditer(text)]
    if not lines:
        return text, []  # no assignment to a name with a `cuda` part: nothing to parse for
    old_funcs = _original(original, path)
    if all(segment in text for _, segment in old_funcs.values()):
        return text, []  # no function with a local that took a CUDA value changed yet
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return text, []
    module = identifiers(_own_nodes(tree)) | set(dir(builtins))
    edits: list[tuple[int, int, int, str]] = []  # (line, byte col, byte end col, new)
    done: list[Renamed] = []
    claimed: list[tuple[str, ast.AST]] = []  # a new name and the function it is a local of
    for qual, fn in _functions(tree):
        was, _ = old_funcs.get(qual, ((), ""))
        if not was or not any(fn.lineno <= ln <= fn.end_lineno for ln in lines):
            continue  # no line of the function assigns a name with a `cuda` part
        for name in sorted(_qualifying(fn, was)):
            new = new_name(name)
            if new is None or new in module or new in identifiers(ast.walk(fn)):
                continue
            if any(n == new and _overlap(f, fn) for n, f in claimed):
                continue  # an enclosing or nested function's local takes it
            claimed.append((new, fn))
            done.append(Renamed(qual, name, new))
            edits += [(n.lineno, n.col_offset, n.end_col_offset, new) for n in _uses(fn, name)]
    if not edits:
        return text, []
    out = _apply(text, edits)
    return (out, done) if _only_renamed(tree, out, edits) else (text, [])


@functools.lru_cache(maxsize=4)
def _original(original: str, path: str) -> dict[str, tuple[set[str], str]]:
    """qualified name -> (the function's locals that took a CUDA value, its source lines) of the
    original file, for the functions that have such locals; read once for all the file's steps.
    Empty for a file that does not parse, for one without such an assignment, for a script."""
    if not _ASSIGNS_NAMED.search(original):
        return {}
    try:
        before = ast.parse(original)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    if is_script(SimpleNamespace(path=path, tree=before)):
        return {}
    lines = original.splitlines(keepends=True)
    funcs = ((q, fn, _was_cuda(fn)) for q, fn in _functions(before))
    return {q: (was, "".join(lines[fn.lineno - 1 : fn.end_lineno])) for q, fn, was in funcs if was}


def _only_renamed(tree: ast.Module, out: str, edits) -> bool:
    """``out`` parses to ``tree`` with exactly the edited names renamed: the byte splice
    changed nothing else (checked, not assumed; a failure keeps the step's text)."""
    at = {(line, col): new for line, col, _, new in edits}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and (n.lineno, n.col_offset) in at:
            n.id = at[n.lineno, n.col_offset]
    try:
        return ast.dump(ast.parse(out)) == ast.dump(tree)
    except (SyntaxError, ValueError, RecursionError):
        return False


def _functions(tree: ast.Module):
    """(qualified name, node) of every function. Definitions sit only in statement lists, so
    only those are walked (expressions are most of a file's nodes)."""
    stack = [(tree, "")]
    while stack:
        node, prefix = stack.pop()
        for child in _statements(node):
            if isinstance(child, (*_FUNCS, ast.ClassDef)):
                qual = f"{prefix}{child.name}"
                if isinstance(child, _FUNCS):
                    yield qual, child
                    stack.append((child, f"{qual}.<locals>."))
                else:
                    stack.append((child, f"{qual}."))
            else:
                stack.append((child, prefix))


def _statements(node: ast.AST) -> list[ast.stmt]:
    """The statements directly in ``node``'s blocks (bodies, else, finally, handlers, cases)."""
    out: list[ast.stmt] = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if isinstance(block, list):
            out += [s for s in block if isinstance(s, ast.stmt)]
    for sub in getattr(node, "handlers", None) or getattr(node, "cases", None) or ():
        out += sub.body
    return out


def _qualifying(fn, was: set[str]) -> set[str]:
    """The locals of ``fn`` named for CUDA that may be renamed (module docstring), given those
    of the same function in the original that took a CUDA value (``was``)."""
    assigned = _assignments(fn)
    names = set(assigned) & was
    if not names or _dynamic(fn):
        return set()
    targets = {id(t) for pairs in assigned.values() for t, _ in pairs}
    names = {n for n in names if _plainly_bound(fn, n, targets) and not _debug_printed(fn, n)}
    changed = True
    while changed:  # a statement that names a local which does not qualify stays CUDA for others
        keep = {n for n in names if _neutral(fn, n, names)}
        changed, names = keep != names, keep
    return names


def _was_cuda(old_fn) -> set[str]:
    """The locals of the original function named for CUDA that were assigned CUDA code's value
    (``torch.cuda.get_rng_state()``, ``x.is_cuda``) or another such local's (``has_cuda =
    cuda_x is not None``): the name describes the value. A name whose value never touched CUDA
    keeps it, even where CUDA code read it (``cuda_supported_configs = [...]`` added ``if "cuda"
    in str(device)``: upstream widened the test and kept the name)."""
    named = {n: [v for _, v in pairs if v] for n, pairs in _assignments(old_fn).items()}
    out: set[str] = set()
    grew = True
    while grew:
        rest = set(named) - out
        more = {n for n in rest if any(_cuda_token(x, rest) for v in named[n] for x in ast.walk(v))}
        grew, out = bool(more), out | more
    return out


def _assignments(fn) -> dict[str, list[tuple[ast.Name, ast.AST | None]]]:
    """name -> (target, value) of each plain assignment (``x = ``, ``x: T = ``, ``x += ``) in
    ``fn``'s own scope to a name with a ``cuda`` part."""
    out: dict[str, list[tuple[ast.Name, ast.AST | None]]] = {}
    for node in _own_nodes(fn):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name) and new_name(t.id):
                    out.setdefault(t.id, []).append((t, node.value))
    return out


def _own_nodes(fn):
    """The nodes of ``fn``'s own scope (not inside nested functions, classes, comprehensions)."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def _plainly_bound(fn, name: str, targets: set[int]) -> bool:
    """Every binding of ``name`` in ``fn`` (nested scopes included: ``bindings_of``) is a plain
    assignment of ``fn``'s own scope (``targets``: their targets' ids); so it is no parameter,
    import, definition or ``global``/``nonlocal``, and no ``except ... as`` binds it."""
    if any(isinstance(n, ast.ExceptHandler) and n.name == name for n in ast.walk(fn)):
        return False
    return all(
        isinstance(b, ast.Name) and id(b) in targets for b in bindings_of(fn, name) if b is not fn
    )


def _dynamic(fn) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _DYNAMIC
        for n in ast.walk(fn)
    )


def _debug_printed(fn, name: str) -> bool:
    """``f"{name=}"``: the name is part of the output."""
    pat = re.compile(rf"(^|\W){re.escape(name)}\s*=\s*$")
    for node in ast.walk(fn):
        if isinstance(node, ast.JoinedStr):
            for a, b in zip(node.values, node.values[1:]):
                if isinstance(a, ast.Constant) and isinstance(b, ast.FormattedValue):
                    if isinstance(a.value, str) and pat.search(a.value):
                        return True
    return False


def _uses(fn, name: str) -> list[ast.Name]:
    return [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name]


def _neutral(fn, name: str, exempt: set[str]) -> bool:
    """Every statement of ``fn`` naming ``name`` (a compound one: its header) holds no CUDA
    token but the names in ``exempt``."""
    for use in _uses(fn, name):
        for node in _statement_parts(fn, use):
            for sub in ast.walk(node):
                if _cuda_token(sub, exempt):
                    return False
    return True


def _statement_parts(fn, use: ast.Name) -> list[ast.AST]:
    """The innermost statement holding ``use``; for a compound statement, its header."""
    best = None
    for node in ast.walk(fn):
        if isinstance(node, ast.stmt) and node is not fn and _holds(node, use):
            if best is None or _holds(best, node):
                best = node
    if best is None:
        return [use]
    fields = _HEADERS.get(type(best))
    if fields is None:
        return [best]
    parts: list[ast.AST] = []
    for f in fields:
        value = getattr(best, f, None)
        parts += value if isinstance(value, list) else [value] if value is not None else []
    return parts


def _holds(outer: ast.AST, inner: ast.AST) -> bool:
    return any(n is inner for n in ast.walk(outer))


def _cuda_token(node: ast.AST, exempt: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id not in exempt and is_cuda_word(node.id)
    if isinstance(node, ast.Attribute):
        return is_cuda_word(node.attr)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return " " not in node.value and is_cuda_word(node.value)
    return False


def _overlap(a: ast.AST, b: ast.AST) -> bool:
    return a.lineno <= b.end_lineno and b.lineno <= a.end_lineno


def _apply(text: str, edits: list[tuple[int, int, int, str]]) -> str:
    """Replace each (line, byte col, byte end col) span; ``ast`` columns count UTF-8 bytes."""
    lines = text.splitlines(keepends=True)
    for line, col, end, new in sorted(edits, reverse=True):
        raw = lines[line - 1].encode("utf-8")
        lines[line - 1] = (raw[:col] + new.encode("utf-8") + raw[end:]).decode("utf-8")
    return "".join(lines)
