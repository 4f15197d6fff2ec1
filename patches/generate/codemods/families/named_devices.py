"""An indexed device that code only builds as a value (``torch.device("cuda", i)``,
``f"cuda:{rank}"``), with nothing checking for an accelerator first: without CUDA the original
named a device and raised nothing, the accelerator's type raises (``current_accelerator()`` is
None), so ``idioms_device`` leaves it (round 38). Where the original failed without CUDA too
(torch places with it at once, its index asks CUDA, an earlier statement needs CUDA) or only an
accelerator reaches it, the site is rewritten."""

from __future__ import annotations

import ast
import re

import libcst as cst

from patches.generate.codemods.families.base import is_test_file
from patches.generate.codemods.families.device_places import PLACING_METHODS, placed_by_torch
from patches.generate.codemods.families.idioms_common import after_availability
from patches.generate.codemods.families.idioms_memory import after_cuda_needed, checked_here
from patches.generate.codemods.families.script_device import is_script
from patches.generate.intent.nodes import called, last_name, main_blocks

NAMES_ONLY = (
    "unguarded: an indexed device built as a value, with no accelerator check: the "
    "accelerator's type raises without one (current_accelerator() is None) where the CUDA name "
    "did not"
)
_CTOR = "torch.device"
_ASKS_CUDA = re.compile(r"\bcuda\s*\.|\.\s*cuda\b")  # torch.cuda.current_device(), x.cuda()


def names_only(eng, node) -> bool:
    """``node``, an indexed device, only names one: in a library module (not a test, not a
    script, not its ``__main__`` block) or an ungated test (``ungated_test``), with no
    availability check around it and no statement before it that needs CUDA, and neither torch
    places with it at once nor its index asks CUDA (transformer-lens' ``find_embedding_device``,
    a fallback its CPU tests reach; f5-tts' ``f"cuda:{rank}"`` used behind a flag)."""
    ctx, line = eng.ctx, eng.line(node)
    if is_script(ctx) or (is_test_file(ctx.path) and not ungated_test(ctx.tree, line)):
        return False
    if checked_here(eng, node) or after_availability(eng, node):
        return False
    if line in after_cuda_needed(ctx) or any(
        b.lineno <= line <= b.end_lineno for b in main_blocks(ctx.tree)
    ):
        return False
    top, parent = node, eng.parent(node)
    if isinstance(parent, cst.Arg):
        call = eng.parent(parent)
        if isinstance(call, cst.Call) and eng.qualnames(call.func) == {_CTOR}:
            top, parent = call, eng.parent(call)
    if isinstance(parent, cst.Arg) and placed_by_torch(eng, parent):
        return False
    while isinstance(parent, cst.IfExp):  # `default if ... else torch.device("cuda", rank)`
        parent = eng.parent(parent)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        target = parent.targets[0].target
        if isinstance(target, cst.Name) and _placed_later(ctx, line, target.value):
            return False
    return _ASKS_CUDA.search(cst.Module([]).code_for_node(top)) is None


def _placed_later(ctx, line: int, name: str) -> bool:
    """The function holding ``line`` hands ``name`` to torch, which places with it at once
    (``x.to(device)``, ``torch.zeros(2, device=device)``), on every path from ``line``: without
    CUDA the original failed there too. A placement under a test that does not hold ``line``
    (f5-tts' ``if use_gpu: model = model.cuda(device)``) is not on every path."""
    fn = ctx.scope_at(line).node
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for n in _unconditional(fn, line):
        if not isinstance(n, ast.Call) or n.lineno < line:
            continue
        args = [*n.args, *(k.value for k in n.keywords)]
        if not any(isinstance(a, ast.Name) and a.id == name for a in args):
            continue
        if isinstance(n.func, ast.Attribute) and n.func.attr in PLACING_METHODS:
            return True
        if (called(ctx, n) or "").startswith("torch."):
            return True
    return False


_SETUPS = frozenset({"setUp", "setUpClass", "setup", "setup_method", "setup_class"})
# pytest's own fixtures (and pytest-mock's ``mocker``): none of them skips a test
_PLAIN_FIXTURES = frozenset(
    {
        "monkeypatch",
        "tmp_path",
        "tmp_path_factory",
        "tmpdir",
        "tmpdir_factory",
        "capsys",
        "capsysbinary",
        "capfd",
        "capfdbinary",
        "caplog",
        "recwarn",
        "request",
        "pytestconfig",
        "record_property",
        "mocker",
    }
)
_SKIPS = frozenset({"skip", "skipTest", "importorskip", "skipif", "skipIf", "skipUnless"})


def ungated_test(tree: ast.Module, line: int) -> bool:
    """``line`` is in the body of a test (``test*``, at module level or in a module-level
    class) that nothing can skip: no decorator but ``parametrize`` and unittest.mock's
    ``patch`` on it or its class, no parameter but ``self``, the parametrized ones, the mocks
    the patches hand it and pytest's own fixtures (another fixture may skip), no set-up method in its class, no skip call in it, and no ``pytestmark`` or
    autouse fixture that may skip in the module
    (transformer-lens' index arithmetic on ``torch.device("cuda", 2)``, run on CPU-only CI)."""
    if any(_marks_module(s) for s in tree.body):
        return False
    for top in tree.body:
        if not top.lineno <= line <= top.end_lineno:
            continue
        owner, fn = None, top
        if isinstance(top, ast.ClassDef):
            owner = top
            fn = next((f for f in top.body if f.lineno <= line <= f.end_lineno), None)
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        return fn.name.startswith("test") and _plain(fn, owner) and fn.body[0].lineno <= line
    return False


def _plain(fn, owner: ast.ClassDef | None) -> bool:
    if owner is not None and (
        owner.decorator_list
        or any(isinstance(f, ast.FunctionDef) and f.name in _SETUPS for f in owner.body)
    ):
        return False
    named, mocks = {"self", "cls"} | _PLAIN_FIXTURES, 0
    for dec in fn.decorator_list:
        call = dec if isinstance(dec, ast.Call) else None
        if call is not None and _patches(call):
            mocks += len(call.args) < (3 if last_name(call.func) == "object" else 2)
            continue  # a mock's patch: it hands the test its stand-in, it skips nothing
        if call is None or last_name(call.func) != "parametrize" or not call.args:
            return False
        first = call.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            named |= {n.strip() for n in first.value.split(",")}
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    if len([p for p in params if p not in named]) > mocks or fn.args.vararg or fn.args.kwarg:
        return False
    return not _skips(fn)


def _patches(call: ast.Call) -> bool:
    """``@patch(...)``, ``@mock.patch.object(...)``, ``@patch.dict(...)``: unittest.mock's."""
    names = []
    func = call.func
    while isinstance(func, ast.Attribute):
        names.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        names.append(func.id)
    return "patch" in names and not any(k.arg == "new" for k in call.keywords)


def _marks_module(stmt: ast.stmt) -> bool:
    """``pytestmark = ...``, or an autouse fixture that may skip (it calls a skip, or takes
    another fixture), at module level."""
    if isinstance(stmt, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets)
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if not any("autouse" in ast.unparse(d) for d in stmt.decorator_list):
            return False
        params = {a.arg for a in stmt.args.posonlyargs + stmt.args.args + stmt.args.kwonlyargs}
        return bool(params - _PLAIN_FIXTURES) or _skips(stmt)
    return False


def _skips(fn) -> bool:
    return any(isinstance(n, ast.Call) and last_name(n.func) in _SKIPS for n in ast.walk(fn))


_BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.BoolOp)


def _unconditional(fn: ast.AST, line: int):
    """The nodes of ``fn`` that run whenever ``line`` does: not under a branch, a loop or a
    ``try`` that does not itself hold ``line``, nor in a nested definition."""
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, _BRANCHES) and not (n.lineno <= line <= (n.end_lineno or n.lineno)):
            continue
        yield n
        todo += ast.iter_child_nodes(n)
