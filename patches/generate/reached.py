"""Whether a definition of a tree file keeps CUDA work after this run, for ``cuda-reached`` (a
test module's gate stays while the project code its tests reach keeps such work): the file's own
steps, as this run makes them (``plan.file_steps``), then its rescan; ``[reached] work`` names
the rules whose findings are CUDA work that fails without CUDA. Asked on demand, once per file
and run (the tree index's memo); ``generate`` and ``--explain`` share it through
``plan.tree_index``."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from audits import vocabulary
from patches.generate.codemods.context import FileContext
from patches.generate.intent.data import data as intent_data
from patches.generate.intent.data import kernel_decorators, reached_refusals, reached_work
from patches.generate.intent.kinds.check import kernels
from patches.generate.intent.libraries import library_uses
from patches.generate.intent.nodes import off_cuda
from patches.generate.intent.reach import def_node
from patches.generate.state import Run


def install(run: Run, file_steps) -> None:
    """Let the run's tree index answer ``kept_cuda(rel, name)`` (``intent/kinds/reached.py``);
    ``file_steps``: ``plan.file_steps``, the run's own steps for a file."""
    run.tree.kept_cuda = lambda rel, name, refusals=False, library=False: kept_cuda(
        run, rel, name, file_steps, refusals, library
    )


def kept_cuda(
    run: Run, rel: str, name: str, file_steps, refusals: bool = False, library: bool = False
) -> str:
    """``"<file>:<line> <code>"`` of the first CUDA work the top-level definition ``name`` of
    ``rel`` keeps after this run (``file_steps`` makes the file's steps), else ``""``; with
    ``refusals``, a kept assertion that refuses other devices counts too (a test's gate); with
    ``library``, only a call through a CUDA-only library counts. A GPU-kernel module's raise for
    tensors off CUDA (``_kernel_refusals``) counts under its own device test too."""
    memo = run.tree.memo.setdefault("kept-cuda", {})
    if rel not in memo:
        memo[rel] = None  # asked again while being decided (a cycle of imports): none
        memo[rel] = _kept(run, rel, file_steps)
    if memo[rel] is None:
        return ""
    tree, work = memo[rel]
    node = def_node(run.tree, rel, name, tree)
    if node is None:
        return ""
    first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    skip = frozenset() if refusals else reached_refusals()
    hit = next(
        (
            f
            for f in work
            if first <= f.line <= node.end_lineno
            and f.rule not in skip
            and (not library or f.rule == "library")
            and (
                f.rule == REFUSAL
                or not _device_guarded(
                    node, f.line, f.col - 1, _OPTIONAL if library else _DEVICE_WORDS
                )
            )
        ),
        None,
    )
    return f"{rel}:{hit.line} {hit.source.strip()[:50]}" if hit else ""


# a test that asks about the device, its build or its backend (``if x.is_cuda:``, ``if
# torch.version.cuda is not None``, ``if dist.is_nccl_available()``): the code it guards is the
# library's own dispatch, which another accelerator does not take
_DEVICE_WORDS = re.compile(
    "|".join([*vocabulary.marker_patterns(), "device|available|version|backend|capability"]),
    re.IGNORECASE,
)


# (and, for a library's call, a test of the library's presence or of a value's type: MONAI's
# ``elif has_cp and isinstance(data, cp_ndarray): data = cp.asnumpy(data)`` serves CuPy arrays
# when it is given them, an optional path beside the others)
_OPTIONAL = re.compile(_DEVICE_WORDS.pattern + r"|(^|[^a-z])has_|isinstance", re.IGNORECASE)


def _device_guarded(node: ast.AST, line: int, col: int, words: re.Pattern = _DEVICE_WORDS) -> bool:
    """The code at (``line``, ``col``) of the definition ``node`` runs only after a test about
    the device: in an arm of an ``if``/``while``/conditional expression whose test asks one, in
    a loop over the devices (none off CUDA: torch's ``CudaMemoryLeakCheck``), or after such an
    operand of a boolean chain (``torch.version.cuda is None or
    torch.cuda.nccl.version() < (2, 10)`` short-circuits off CUDA)."""
    at = (line, col)
    for n in ast.walk(node):
        if isinstance(n, (ast.If, ast.While, ast.IfExp)):
            arms = [n.body, n.orelse] if isinstance(n, ast.IfExp) else [*n.body, *n.orelse]
            if any(_holds(a, at) for a in arms) and words.search(ast.unparse(n.test)):
                return True
        elif isinstance(n, ast.For) and any(_holds(a, at) for a in n.body):
            if words.search(ast.unparse(n.iter)):  # `for i in range(device_count())`
                return True
        elif isinstance(n, ast.BoolOp):
            for i, v in enumerate(n.values):
                if _holds(v, at):
                    before = " ".join(ast.unparse(x) for x in n.values[:i])
                    if words.search(before):
                        return True
    return False


def _holds(node, at: tuple[int, int]) -> bool:
    if not isinstance(node, ast.AST) or not hasattr(node, "end_lineno"):
        return False
    return (node.lineno, node.col_offset) <= at <= (node.end_lineno, node.end_col_offset)


def _kept(run: Run, rel: str, file_steps):
    """(the file's tree after this run, its findings there that are CUDA work), or None."""
    data = run.tree.files().get(rel, b"")
    if b"cuda" not in data.lower() and not _names_library(run, data):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    found, errs = run.audit.rescan(text, rel)
    work = reached_work() | reached_refusals()
    uses = _library_work(run, text, rel) if not errs else []
    refuses = b"raise" in data and any(k.encode() in data for k in kernel_decorators())
    if errs or not (uses or refuses or any(f.rule in work for f in found)):
        return None
    rules = sorted({f.rule for f in found if f.rule in run.specs})
    final = text
    if rules:
        try:
            steps = file_steps(run, text, rel, found, rules)
        except Exception:  # a fault of the codemod's own in that file: no evidence from it
            return None  # (the file's own step reports the fault)
        for rule in rules:
            res = steps.get(rule, (None, []))[0]
            if res is not None and not res.error and res.changed:
                final = res.after
        found = run.audit.rescan(final, rel)[0]
    try:
        tree = ast.parse(final)
    except SyntaxError:
        return None
    lines, notes = final.splitlines(), _annotations(tree)
    kept = [f for f in found if f.rule in work and not _no_work(lines, f)]
    kept += _library_work(run, final, rel, tree) if uses else []
    kept += _kernel_refusals(run, final, rel, tree) if refuses else []
    kept.sort(key=lambda f: (f.line, f.col))
    return tree, [f for f in kept if not any(_holds(a, (f.line, f.col - 1)) for a in notes)]


def _names_library(run: Run, data: bytes) -> bool:
    """The text names a CUDA-only library or one of the tree's CUDA extensions (MegaBlocks'
    ``import megablocks_ops as ops``, in a file that never says "cuda")."""
    names = {m.split(".")[0] for m in intent_data()["libraries"]["modules"]}
    names |= set(run.tree.cuda_extensions())
    return b"import" in data and any(n.encode() in data for n in names)


REFUSAL = "refusal"  # a kernel entry point's raise for tensors off CUDA (``_kernel_refusals``)


@dataclass(frozen=True)
class _Use:
    """A call through a CUDA-only library's name (``intent/libraries.py``) as kept work."""

    line: int
    col: int
    source: str
    rule: str = "library"


def _library_work(run: Run, text: str, rel: str, tree: ast.Module | None = None) -> list[_Use]:
    """The calls of ``text`` through a name bound to a CUDA-only library (cupy, Transformer
    Engine, the tree's own ``CUDAExtension``): work no accelerator but CUDA runs
    (FlashAttention's interface calls ``flash_attn_gpu.varlen_fwd``, round 38)."""
    if b"import" not in text.encode("utf-8", "replace"):
        return []
    try:
        tree = tree or ast.parse(text)
        ctx = FileContext(text, tree, rel, run.tree.prefix)
    except (SyntaxError, RecursionError, ValueError):
        return []
    ctx.tree_index = run.tree
    lines = text.splitlines()
    calls = _called_spans(tree)
    out = []
    for sp, what in library_uses(ctx):
        if sp not in calls or not what.endswith("no accelerator but CUDA)"):
            continue  # an import, a flag read (`HAVE_TE and ...`): no work
        (line, col), _ = sp
        out.append(_Use(line, col + 1, lines[line - 1] if line <= len(lines) else what))
    return out


def _kernel_refusals(run: Run, text: str, rel: str, tree: ast.Module) -> list[_Use]:
    """In a file that defines GPU kernels (``cuda-check``'s ``kernels``: ``@triton.jit``), each
    ``if`` that raises for a tensor not on CUDA (``if not x.is_cuda: raise ValueError(...)``) and
    stays so after this run: the kernels' entry point refuses other devices, so a check that
    picks the path into it is CUDA's (OLMo-core's router takes ``document_pool_keep_mask`` ``if
    scores.is_cuda``)."""
    if not kernels(FileContext(text, tree, rel, run.tree.prefix)):
        return []
    lines = text.splitlines()
    return [
        _Use(n.lineno, n.col_offset + 1, lines[n.lineno - 1], REFUSAL)
        for n in ast.walk(tree)
        if isinstance(n, ast.If) and isinstance(n.body[0], ast.Raise) and off_cuda(n.test)
    ]


def _called_spans(tree: ast.Module) -> set:
    """The spans of the names a call goes through (``lib.f(...)``: ``lib``; ``f(...)``: ``f``)."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            f = n.func
            while isinstance(f, ast.Attribute):
                f = f.value
            if isinstance(f, ast.Name):
                out.add(((f.lineno, f.col_offset), (f.end_lineno, f.end_col_offset)))
    return out


def _annotations(tree: ast.Module) -> list[ast.AST]:
    """The type annotations of ``tree``: they run nothing (torch's ``device_props:
    _CudaDeviceProperties``)."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.arg) and n.annotation is not None:
            out.append(n.annotation)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns is not None:
            out.append(n.returns)
        elif isinstance(n, ast.AnnAssign):
            out.append(n.annotation)
    return out


def _no_work(lines: list[str], f) -> bool:
    """The finding runs nothing on CUDA: a question that answers without it
    (``c10d.is_nccl_available()``), or a device type named as a keyword's value
    (``super().__init__(dep, reason, device_type="cuda")``: a skip decorator's)."""
    line = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
    end = f.end_col - 1 if f.end_line == f.line else len(line)
    name = line[f.col - 1 : end].rsplit(".", 1)[-1]
    return name.startswith("is_") or bool(_TYPE_KEYWORD.search(line[: f.col - 1]))


_TYPE_KEYWORD = re.compile(r"\b\w*type\s*=\s*$")
