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
itself (the first, or the first after the function in ``partial``).
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import specs_at, string_value, type_or_cpu

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
        eng.done(specs[0], original)
        return type_or_cpu(eng, specs[0], original)
