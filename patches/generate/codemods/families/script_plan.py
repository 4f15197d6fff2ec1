"""Which places of a script get the script's one ``device`` line (``script_device``).

A program with no ``device`` of its own names its GPU in several places: ``x.cuda()``,
``torch.randn(..., device="cuda")``, ``x.to("cuda")``, ``torch.load(..., map_location="cuda")``,
``torch.autocast("cuda")``, ``torch.cuda.amp.GradScaler()``, ``device_map="cuda"``,
``with torch.device("cuda"):``, a seeded ``torch.Generator("cuda")``. A person porting it writes one line after the imports::

    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

and ``device`` in each place (a device type string, so it also fits where a device *type* is
asked for). ``plan(ctx)`` finds those places with ``ast``; the families write ``device`` there,
and ``script_device`` writes the line in the first step of the series that uses it.

No plan where the file binds ``device`` itself, is no script (``is_script``), or hands a plain
``"cuda"`` to a call anywhere else (an argparse ``default="cuda"``, ``torch.cuda.device("cuda")``):
a rerun would find that site beside a bound ``device`` and rewrite it, so the line could not be
written idempotently. An indexed device object (``.cuda(i)``, ``torch.device("cuda", i)``,
``torch.device("cuda:N")``) is a place that keeps its index: ``torch.device(device, i)``. An
indexed string (``"cuda:0"``) keeps its own value in place (a checkpoint's ``map_location`` must
be ``"cpu"`` on the CPU, not ``"cpu:0"``). A legacy CUDA tensor type called with positional
arguments (``torch.cuda.FloatTensor(3)``) or given to ``x.type(...)`` is a place too
(``script_legacy_calls``).
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

from patches.generate.codemods.families.base import is_test_file
from patches.generate.codemods.families.idioms_common import TYPE_OR_CPU
from patches.generate.codemods.families.literals import (
    DEVICE_CALLS,
    DEVICE_KEYWORDS,
    DEVICE_TYPE_CALLS,
    DEVICE_TYPE_KEYWORD,
)
from patches.generate.intent.nodes import main_blocks, plain_cuda_device
from patches.generate.project_style import PYTORCH_PACKAGES
from patches.generate.torch_floor import forbids

NAME = "device"
# where a script picks its device with no name for it (idioms_device's script defaults)
DEFAULT_DEVICE_CALLS = frozenset({"torch.set_default_device"})
SCRIPT_DEFAULT_KEYWORDS = frozenset({"device_map"})  # Hugging Face's from_pretrained
# CUDA's AMP entry points, which the neutral API asks a device type of (``script_amp``)
AUTOCAST = ("torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast")
SCALER = ("torch.cuda.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler")
# the legacy tensor types and the dtype each stands for (the CPU type of the same name exists)
LEGACY_DTYPES = {
    "FloatTensor": "float32",
    "DoubleTensor": "float64",
    "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16",
    "ByteTensor": "uint8",
    "CharTensor": "int8",
    "ShortTensor": "int16",
    "IntTensor": "int32",
    "LongTensor": "int64",
    "BoolTensor": "bool",
}


@dataclass(frozen=True)
class Plan:
    anchor: int  # first line of the top-level statement the line is written before
    anchor_end: int
    uses: frozenset[int]  # lines of the places that get ``device``
    head: int = 0  # first line of the comments heading the anchor (its region starts there)


def plan(ctx) -> Plan | None:
    """The script's device line and its places, or None (module docstring); once per file."""
    if "_script_plan" not in ctx.__dict__:
        ctx._script_plan = _plan(ctx)
    return ctx._script_plan


def holds(ctx, line: int) -> bool:
    """``device`` is the script's own line's at ``line``."""
    p = plan(ctx)
    return p is not None and line in p.uses


def is_plain_cuda(node: ast.AST) -> bool:
    """``x.cuda()`` / ``x.cuda(non_blocking=...)``: no device argument."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "cuda"
        and not node.args
        and all(k.arg == "non_blocking" for k in node.keywords)
    )


def _cuda(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == "cuda"


def indexed_cuda(node: ast.AST) -> bool:
    """A device of an index the script names: ``x.cuda(i[, non_blocking=b])``,
    ``torch.device("cuda", i)``, ``torch.device("cuda:N")``. A place of the line anywhere:
    ``torch.device(device, i)`` keeps the index and is the CPU's (any index) on a CPU-only
    machine."""
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        return False
    args = node.args
    if isinstance(node.func, ast.Attribute) and node.func.attr == "cuda":
        return len(args) == 1 and all(k.arg == "non_blocking" for k in node.keywords)
    if node.keywords or ast.unparse(node.func) != "torch.device":
        return False
    if len(args) == 2:
        return _cuda(args[0])
    return (
        len(args) == 1
        and isinstance(args[0], ast.Constant)
        and isinstance(args[0].value, str)
        and re.fullmatch(r"cuda:\d+", args[0].value) is not None
    )


def legacy_type(ctx, node: ast.AST) -> str | None:
    """``torch.cuda.FloatTensor`` (or that name imported) -> ``FloatTensor`` (``LEGACY_DTYPES``)."""
    if not isinstance(node, (ast.Attribute, ast.Name)):
        return None
    q = ctx.qualify(node.lineno, ast.unparse(node)) or ""
    kind = q.removeprefix("torch.cuda.")
    return kind if kind != q and kind in LEGACY_DTYPES else None


def legacy_place(ctx, call: ast.Call) -> ast.expr | None:
    """The legacy CUDA type of ``torch.cuda.<T>(...)`` (positional arguments, none unpacked) or
    of ``x.type(torch.cuda.<T>)`` (its one argument): a place of the device line."""
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if legacy_type(ctx, call.func):
        return call.func
    func, args = call.func, call.args
    if isinstance(func, ast.Attribute) and func.attr == "type" and len(args) == 1:
        return args[0] if legacy_type(ctx, args[0]) else None
    return None


def _plan(ctx) -> Plan | None:
    if not is_script(ctx) or binds_device(ctx.tree):
        return None
    if forbids(ctx, TYPE_OR_CPU):
        return None  # the line needs a newer torch than the project's: no ``.to(device)`` either
    uses, taken = _uses(ctx)
    if not uses or _stray(ctx, taken):
        return None
    top = after_imports(ctx)
    if top is None or top.lineno > min(uses):
        return None
    start = first_line(top)
    return Plan(start, top.end_lineno, frozenset(uses), _comments_above(ctx, start))


def _comments_above(ctx, line: int) -> int:
    """The first line of the comment lines right above ``line`` (``line`` when none): they head
    the statement, so the region that writes the device line before it starts there."""
    lines = ctx.source.splitlines()
    while line > 1 and lines[line - 2].lstrip().startswith("#"):
        line -= 1
    return line


def _uses(ctx) -> tuple[set[int], set[int]]:
    """The places' lines, and the ``id()`` of the ``"cuda"`` constants they hold."""
    uses: set[int] = set()
    taken: set[int] = set()  # id() of the "cuda" constants the places hold
    for node in ctx.nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Attribute, ast.Name)):
            if ctx.qualify(node.lineno, ast.unparse(node.value)) in AUTOCAST:
                uses.add(node.value.lineno)  # timm's `amp_autocast = torch.cuda.amp.autocast`
        if isinstance(node, ast.With):
            for item in node.items:
                if plain_cuda_device(item.context_expr):
                    uses.add(item.context_expr.lineno)
                    taken.add(id(item.context_expr.args[0]))
        if not isinstance(node, ast.Call):
            continue
        legacy = legacy_place(ctx, node)
        if legacy is not None:
            uses.add(legacy.lineno)  # the finding's line (the type's)
            continue
        if is_plain_cuda(node) or indexed_cuda(node):
            uses.update({node.lineno, node.func.end_lineno})
            if node.args and _cuda(node.args[0]):
                taken.add(id(node.args[0]))  # torch.device("cuda", i)
            continue
        name = ctx.qualify(node.lineno, ast.unparse(node.func)) or ""
        if name in AUTOCAST + SCALER:
            uses.add(node.lineno)
        for value in _places(node, name):
            inner = value.args[0] if plain_cuda_device(value) else value
            if _cuda(inner):
                uses.add(value.lineno)
                taken.add(id(inner))
    return uses, taken


def _places(call: ast.Call, name: str) -> list[ast.expr]:
    """The arguments of ``call`` that are device places of a script."""
    out = [k.value for k in call.keywords if k.arg in DEVICE_KEYWORDS | SCRIPT_DEFAULT_KEYWORDS]
    out += [k.value for k in call.keywords if k.arg == DEVICE_TYPE_KEYWORD]
    first = call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else None
    method = call.func.attr if isinstance(call.func, ast.Attribute) else None
    if first is not None and (
        method == "to" or name in DEVICE_TYPE_CALLS | DEFAULT_DEVICE_CALLS | DEVICE_CALLS
    ):
        out.append(first)
    return out


def _stray(ctx, taken: set[int]) -> bool:
    """A plain ``"cuda"`` handed to a call outside the places (module docstring)."""
    for node in ctx.nodes:
        if isinstance(node, ast.Call):
            for a in [*node.args, *(k.value for k in node.keywords)]:
                if _cuda(a) and id(a) not in taken:
                    return True
    return False


def binds_device(tree: ast.Module) -> bool:
    """The file binds ``device`` (a method of that name, Hugging Face's ``model.device``
    property, binds a class attribute that no function sees: not counted)."""
    return binds(tree, NAME, methods=False)


@functools.lru_cache(maxsize=64)
def binds(tree: ast.Module, name: str, methods: bool = True) -> bool:
    """``name`` is bound anywhere in the module (assigned, a parameter, imported, defined; a
    method of a class only with ``methods``)."""
    skip = set()
    if not methods:
        skip = {
            id(f)
            for c in ast.walk(tree)
            if isinstance(c, ast.ClassDef)
            for f in c.body
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
    for n in ast.walk(tree):
        if id(n) in skip:
            continue
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            return True
        if isinstance(n, ast.arg) and n.arg == name:
            return True
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == name for a in n.names):
                return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name:
            return True
    return False


def _sets_torch_state(stmt: ast.stmt) -> bool:
    """``torch.set_float32_matmul_precision("high")``, ``torch.backends.x.y(...)``,
    ``torch.use_deterministic_algorithms(True)``: a call that stands for a setting. Other families
    write such a call for a module-level assignment (``torch.backends.cuda.matmul.allow_tf32 =
    True``), which is no top-level code; counting the call would make a library module a script
    on the second run (not idempotent)."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    name = ast.unparse(stmt.value.func)
    last = name.rsplit(".", 1)[-1]
    return name.startswith("torch.backends.") or (
        name.count(".") == 1 and name.startswith("torch.") and last.startswith(("set_", "use_"))
    )


_HOUSEKEEPING = ("warnings.", "logging.", "sys.path.", "os.environ.")


def _configures(stmt: ast.stmt) -> bool:
    """``warnings.filterwarnings(...)``, ``logging.basicConfig(...)``, ``sys.path.append(...)``:
    a library module's set-up at import (lmms-eval's model wrappers filter warnings), no
    program."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    return ast.unparse(stmt.value.func).startswith(_HOUSEKEEPING)


def is_script(ctx) -> bool:
    """A program, not a library module: not a test or a package ``__init__``, it runs code at
    the top level (``if __name__ == "__main__":``, or calls outside any function other than
    torch settings, see ``_sets_torch_state``, and set-up, ``_configures``), and no other file of the tree imports it
    (``torch/sparse/_triton_ops_meta.py`` has a ``__main__`` block and is a library module). A
    module of PyTorch's own packages is one only with a ``__main__`` block: its other top-level
    calls register ops and hooks, and a replay's tree of a few files cannot show who imports it."""
    if is_test_file(ctx.path) or ctx.path.endswith("__init__.py"):
        return False
    if not _runs_code(ctx.tree):
        return False
    if pytorch_module(ctx) and not main_blocks(ctx.tree):
        return False  # PyTorch's module-level calls register (a partial tree hides importers)
    index = getattr(ctx, "tree_index", None)
    return index is None or not index.imported(ctx.path)


def pytorch_module(ctx) -> bool:
    """A module of PyTorch's own packages (``torch``, ``torchgen``, ``functorch``), whose
    maintainers' forms the replays measure; other trees are users' projects."""
    module = getattr(ctx, "module_name", "") or ctx.path.replace("/", ".")
    return module.split(".")[0] in PYTORCH_PACKAGES


def _runs_code(tree: ast.Module) -> bool:
    if main_blocks(tree):
        return True
    for stmt in tree.body:
        if _sets_torch_state(stmt) or _configures(stmt):
            continue
        if isinstance(stmt, (ast.Expr, ast.For, ast.While, ast.With)) and any(
            isinstance(n, ast.Call) for n in ast.walk(stmt)
        ):
            return True
    return False


def first_line(stmt: ast.stmt) -> int:
    """A statement's first line: its first decorator's, where it has any."""
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])


def _imports_only(stmts: list[ast.stmt]) -> bool:
    """Imports, and what an optional import's fallback does (``pass``, a plain assignment, a
    ``raise``, a warning): an import block's part."""
    simple = (ast.Import, ast.ImportFrom, ast.Pass, ast.Raise)
    return all(
        isinstance(s, simple)
        or isinstance(s, ast.Assign)
        and isinstance(s.value, (ast.Constant, ast.Name))
        or isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        for s in stmts
    )


def _import_block(stmt: ast.stmt) -> bool:
    """``try: import x`` / ``except ImportError: x = None``, or ``if TYPE_CHECKING: import x``:
    part of the file's imports (the anchor comes after it, not inside the import section)."""
    if isinstance(stmt, ast.Try):
        handlers = [h.body for h in stmt.handlers]
        has_import = any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in stmt.body)
        return has_import and all(_imports_only(b) for b in [stmt.body, *handlers, stmt.orelse])
    if isinstance(stmt, ast.If):
        has_import = any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in stmt.body)
        return has_import and _imports_only(stmt.body) and _imports_only(stmt.orelse)
    return False


def after_imports(ctx) -> ast.stmt | None:
    """The first top-level statement after the docstring, the imports (an optional import's
    ``try`` block too) and ``__future__``; None where the module binds ``torch`` (which the line
    written there reads) only under a ``try``/``if`` or after that statement."""
    top = None
    for i, stmt in enumerate(ctx.tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or _import_block(stmt):
            continue
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        top = stmt
        break
    binder = next((s for s in ctx.tree.body if _binds_torch(s)), None)
    if binder is None:
        return top
    ok = top is not None and isinstance(binder, ast.Import) and binder.lineno < top.lineno
    return top if ok else None


def _binds_torch(stmt: ast.stmt) -> bool:
    """``stmt`` (or a statement under it, not in a function or class) imports ``torch``."""
    todo = [stmt]
    while todo:
        s = todo.pop()
        if isinstance(s, ast.Import) and any(
            (a.asname or a.name.partition(".")[0]) == "torch" for a in s.names
        ):
            return True
        if isinstance(s, (ast.Try, ast.If, ast.With)):
            todo += [*s.body, *getattr(s, "orelse", ()), *getattr(s, "finalbody", ())]
            todo += [x for h in getattr(s, "handlers", ()) for x in h.body]
    return False
