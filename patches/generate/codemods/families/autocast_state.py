"""The autocast state of the device (HN509 ``"cuda"`` as the device type of torch's autocast
state API) -> the current accelerator's, CPU without one::

    torch.is_autocast_enabled("cuda")
        ->  torch.is_autocast_enabled(
                torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
            )

``torch.set_autocast_enabled``/``is_autocast_enabled``/``set_autocast_dtype``/
``get_autocast_dtype`` (and ``functools.partial(<one of them>, "cuda")``) take the device type
whose state they read or set: "cuda" means "the GPU's autocast", which on another accelerator is
that accelerator's (upstream: dynamo's global-state guard asks the current accelerator's type).
On a CUDA machine the same state; without an accelerator the CPU's, whose state those calls
read and set just as well (a state saved and restored twice). Only the device-type argument
itself (the first, or the first after the function in ``partial``). Where the function also
reads or sets the CPU's state by name (dynamo's global-state guard; thunder's ``no_autocast``:
``set_autocast_enabled("cpu", False)`` beside the CUDA one, each restored from its own saved
value), "cuda" is the GPU's alone and a CPU fallback would overwrite the CPU's state with CUDA's:
there the fallback is "cuda", as before (upstream's ``gpu_type``). Left where the function or
the one around it saves CUDA's state with a getter that takes no device type
(``prev = torch.is_autocast_enabled()``): the set restores that value, CUDA's.
"""

from __future__ import annotations

import ast

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import (
    API_TYPE,
    CURRENT,
    expr,
    specs_at,
    string_value,
    type_or_cpu,
)

STRING_FAMILY = "device-defaults"  # HN509's family
STATE = frozenset(
    {
        "torch.set_autocast_enabled",
        "torch.is_autocast_enabled",
        "torch.set_autocast_dtype",
        "torch.get_autocast_dtype",
    }
)
PARTIAL = "functools.partial"
# the CPU's state set apart: without an accelerator, CUDA's state as before (upstream's
# ``gpu_type``: ``acc.type if (acc := torch.accelerator.current_accelerator()) else "cuda"``)
TYPE_OR_CUDA = f'{CURRENT}.type if torch.accelerator.is_available() else "cuda"'
# getters that read CUDA's autocast state with no device type: a "cuda" set beside them restores
# what they saved, and must stay CUDA's with them
CUDA_GETTERS = frozenset({"torch.is_autocast_enabled", "torch.get_autocast_gpu_dtype"})
_PAIRED = (
    "restores CUDA's state that a getter with no device type saved (torch.is_autocast_enabled())"
)


def _device_type_argument(eng, literal) -> bool:
    """``literal`` is the device-type argument of an autocast state call (or of a ``partial``
    of one)."""
    arg = eng.parent(literal)
    if not isinstance(arg, cst.Arg) or arg.keyword is not None or arg.star:
        return False
    call = eng.parent(arg)
    if not isinstance(call, cst.Call):
        return False
    names = eng.qualnames(call.func)
    if names & STATE:
        return call.args[0] is arg
    if PARTIAL in names and len(call.args) >= 2 and call.args[1] is arg:
        first = call.args[0]
        return first.keyword is None and bool(eng.qualnames(first.value) & STATE)
    return False


class AutocastState(Family):
    name = "autocast-state"

    def on_literal(self, eng, original, updated):
        if string_value(original) != "cuda":
            return None
        specs = specs_at(eng, original, STRING_FAMILY)
        if not specs or not _device_type_argument(eng, original):
            return None
        if _cuda_getter(eng.ctx, eng.line(original)):
            eng.fail(specs[0], original, _PAIRED)
            return None
        eng.done(specs[0], original)
        if _cpu_apart(eng.ctx, eng.line(original)):
            return expr(eng, specs[0], original, TYPE_OR_CUDA, API_TYPE)
        return type_or_cpu(eng, specs[0], original)


def _cpu_apart(ctx, line: int) -> bool:
    """The function around ``line`` calls an autocast state function with ``"cpu"``."""
    return any(
        c.args
        and isinstance(c.args[0], ast.Constant)
        and c.args[0].value == "cpu"
        and ctx.qualify(c.lineno, ast.unparse(c.func)) in STATE
        for c in _calls(ctx, line, depth=1)
    )


def _cuda_getter(ctx, line: int) -> bool:
    """The function around ``line``, or the one around it, calls ``CUDA_GETTERS`` with no device
    type (``torch.is_autocast_enabled()``: CUDA's state)."""
    return any(
        not c.args
        and not c.keywords
        and (name := ast.unparse(c.func)).endswith(
            ("is_autocast_enabled", "get_autocast_gpu_dtype")
        )
        and ctx.qualify(c.lineno, name) in CUDA_GETTERS
        for c in _calls(ctx, line, depth=2)
    )


def _calls(ctx, line: int, depth: int):
    """The calls in the function around ``line`` and the ``depth - 1`` functions around it."""
    scope = ctx.scope_at(line)
    for _ in range(depth):
        if scope is None or not isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        yield from (n for n in ast.walk(scope.node) if isinstance(n, ast.Call))
        scope = scope.parent
