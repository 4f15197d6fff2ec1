"""The current CUDA device handed on as a device or shown (HN103 ``torch.cuda.current_device()``
as a ``device=`` / ``map_location=`` / ``output_device=`` argument or ``.to(...)``'s first) in a
script that runs on the CPU once ported (``sync_guard.runs_on_cpu``)::

    x = torch.randn(3, device=torch.cuda.current_device())
->  x = torch.randn(3, device=torch.accelerator.current_device_index() if torch.accelerator.is_available() else "cpu")

``torch.accelerator.current_device_index()`` raises without an accelerator; where the index is
only handed on as a device, the CPU stands in for it there (the script's tensors are on the CPU
then). On CUDA the same index. So where the index is only shown (a positional argument of
``print``, or a plain value of an f-string that is one): ``current: cpu`` on a CPU-only
machine. Anywhere else (an index read as a number: a rank, arithmetic, ``:d``; a library; a call
under a check) the ``call`` family's plain rename. The ``accelerator_api`` target writes
``accelerator_api.device()`` at a device place (the current device, or the CPU), and keeps its
plain rename where the index is shown (its ``current_device_index()`` is 0 on the CPU).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import quoted
from patches.generate.codemods.families.idioms_memory import checked_here
from patches.generate.codemods.families.literals import DEVICE_KEYWORDS
from patches.generate.codemods.families.script_device import to_arg
from patches.generate.codemods.families.script_plan import binds
from patches.generate.codemods.families.sync_guard import runs_on_cpu

INDEX = "torch.cuda.current_device"
NEW = "torch.accelerator.current_device_index()"


def _device_place(eng, call: cst.Call) -> bool:
    """``call`` is a device argument: a device keyword's value or ``.to(...)``'s first."""
    arg = eng.parent(call)
    if not isinstance(arg, cst.Arg) or arg.value is not call or arg.star:
        return False
    return arg.keyword.value in DEVICE_KEYWORDS if arg.keyword is not None else to_arg(eng, call)


def _printed(eng, call: cst.Call) -> bool:
    """``call`` is only shown: a positional argument of ``print(...)``, or a value of an
    f-string that is one (``print(f"device {torch.cuda.current_device()}")``)."""
    node = call
    parent = eng.parent(node)
    if isinstance(parent, cst.FormattedStringExpression) and parent.expression is node:
        if parent.format_spec or parent.conversion:
            return False  # `:d` reads it as a number
        node = eng.parent(parent)
        parent = eng.parent(node)
    if not isinstance(parent, cst.Arg) or parent.value is not node or parent.keyword or parent.star:
        return False
    user = eng.parent(parent)
    return m.matches(user, m.Call(func=m.Name("print"))) and not binds(eng.ctx.tree, "print")


class ScriptIndex(Family):
    name = "script-index"

    def on_call(self, eng, original, updated):
        if original.args or INDEX not in eng.qualnames(original.func):
            return None
        spec = next((s for s in eng.specs_for("call", original) if INDEX in s.names), None)
        place = spec is not None and _device_place(eng, original)
        if not (place or spec is not None and _printed(eng, original)):
            return None
        api = spec.new_for(INDEX).startswith("accelerator_api.")
        if api and not place:
            return None  # its current_device_index() is 0 on the CPU: the plain rename shows it
        if not runs_on_cpu(eng.ctx, eng.line(original)) or checked_here(eng, original):
            return None
        eng.remove_unused_import_by_node(original.func)
        eng.add_needed_import("accelerator_api" if api else "torch", node=original)
        eng.done(spec, original)
        if api:  # the current device itself: `type:index`, or the CPU (`.to(0)` needs a device)
            return cst.parse_expression("accelerator_api.device()")
        cpu = quoted(eng, original, "cpu")
        return cst.parse_expression(f"{NEW} if torch.accelerator.is_available() else {cpu}")
