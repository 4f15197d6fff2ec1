"""Where a CUDA device string stands, for ``idioms_device`` (``device-defaults``): a default or
a script's pick, a side of a CPU pick, a comparison, a device map's key or value, an argument
torch places with at once; and the CPU fallbacks of an indexed device string written there."""

from __future__ import annotations

import ast
import re

import libcst as cst

from patches.generate.codemods.families.device_flag_units import NEW, converted_attr
from patches.generate.codemods.families.idioms_common import CURRENT, expr, quoted, string_value
from patches.generate.codemods.families.script_device import is_script
from patches.generate.codemods.families.script_plan import (
    DEFAULT_DEVICE_CALLS,
    SCRIPT_DEFAULT_KEYWORDS,
)
from patches.generate.codemods.families.sync_guard import device_test, runs_on_cpu

STR = "cuda"
DEFAULT_KEYWORDS = frozenset({"default"})


# "Default: cuda" in an option's help (torchvision's `device (Use cuda or cpu Default: cuda)`)
_HELP_DEFAULT = re.compile(r"(?i)(\bdefault\b\s*(?:is\s+|:\s*|=\s*)?)(['`]?)cuda\2(?![:\w])")


def help_default(original: cst.Call, updated: cst.Call) -> cst.Call | None:
    """An ``add_argument(..., default="cuda", help="... Default: cuda")`` whose default was
    rewritten: the help names the new default (its other words, the choices the user may pass,
    stay). None where nothing changes."""
    func = original.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"):
        return None
    was = {a.keyword.value: a.value for a in original.args if a.keyword}
    now = {a.keyword.value: a.value for a in updated.args if a.keyword}
    if string_value(was.get("default")) != STR or isinstance(now.get("default"), cst.SimpleString):
        return None
    text = now.get("help")
    if not isinstance(text, cst.SimpleString) or not _HELP_DEFAULT.search(text.value):
        return None
    new = _HELP_DEFAULT.sub(r"\1the accelerator, else cpu", text.value)
    args = [
        a.with_changes(value=text.with_changes(value=new))
        if a.keyword and a.keyword.value == "help"
        else a
        for a in updated.args
    ]
    return updated.with_changes(args=args)


def is_default(eng, node) -> bool:
    """``node`` is the whole assigned value (``device = node``) or a ``default=node``, or in a
    script one of the other places a program picks its device (``_script_default``)."""
    parent = eng.parent(node)
    if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is node:
        return True
    if (
        isinstance(parent, cst.Arg)
        and parent.keyword is not None
        and parent.keyword.value in DEFAULT_KEYWORDS
    ):
        return True
    return _script_default(eng, node, parent)


def _script_default(eng, node, parent) -> bool:
    """In a script (``script_plan.is_script``): ``with torch.device("cuda"):``,
    ``torch.set_default_device("cuda")``, ``from_pretrained(..., device_map="cuda")``: the
    device the program picks, with no name to bind it to. A library module's stay."""
    if isinstance(parent, cst.WithItem):
        ok = parent.item is node
    elif isinstance(parent, cst.Arg) and not parent.star:
        call = eng.parent(parent)
        if parent.keyword is not None:
            ok = parent.keyword.value in SCRIPT_DEFAULT_KEYWORDS
        else:
            ok = (
                isinstance(call, cst.Call)
                and call.args[0] is parent
                and bool(eng.qualnames(call.func) & DEFAULT_DEVICE_CALLS)
            )
    else:
        ok = False
    return ok and is_script(eng.ctx)


def cpu_other_side(pick: cst.IfExp, side: cst.BaseExpression) -> bool:
    """``"cuda" if flag else "cpu"`` (or ``torch.device("cpu")``), or the other way round
    (``"cpu" if args.no_cuda else "cuda:0"``): a pick between the accelerator (``side``) and the
    CPU, which the user's flag makes."""
    other = pick.orelse if pick.body is side else pick.body
    if isinstance(other, cst.Call) and len(other.args) == 1:
        other = other.args[0].value
    return string_value(other) == "cpu"


def compared(eng, node) -> bool:
    parent = eng.parent(node)
    return isinstance(parent, (cst.Comparison, cst.ComparisonTarget))


def _device_string(node) -> bool:
    """A CUDA device string, plain or built (``"cuda:0"``, ``"cuda:%d" % i``, ``f"cuda:{i}"``,
    ``"cuda:{}".format(i)``)."""
    if isinstance(node, cst.BinaryOperation):
        node = node.left
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        node = node.func.value
    if isinstance(node, cst.FormattedString):
        head = node.parts[0] if node.parts else None
        return isinstance(head, cst.FormattedStringText) and head.value.startswith("cuda")
    value = string_value(node)
    return value is not None and value.startswith("cuda")


def in_device_map(eng, node) -> bool:
    """``node`` is a key or a value of a dict display that maps devices to devices
    (``torch.load(f, map_location={"cuda:%d" % 0: "cuda:%d" % rank})``, an RPC device map):
    a key names the device the data was saved on or sent from, which the code cannot know is
    this host's accelerator, and a value alone would no longer match its key."""
    parent = eng.parent(node)
    if not isinstance(parent, cst.DictElement):
        return False
    return _device_string(parent.key)


def picked(eng, node) -> bool:
    """``node`` is a side of a pick whose test is about the device
    (``f"cuda:{r}" if torch.cuda.is_available() else "cpu"``): the pick decides already."""
    child, parent = node, eng.parent(node)
    while parent is not None and not isinstance(parent, cst.BaseStatement):
        if isinstance(parent, cst.IfExp) and parent.test is not child:
            code = cst.Module([]).code_for_node(parent.test)
            if device_test(ast.parse(f"({code})", mode="eval")):
                return True
        child, parent = parent, eng.parent(parent)
    return False


_BARE = (cst.Arg, cst.Assign, cst.AnnAssign, cst.Return, cst.Element, cst.DictElement)


def or_cpu(eng, node, new: cst.BaseExpression) -> cst.BaseExpression:
    """``new``, the accelerator's indexed device string written for ``node`` (``f"cuda:{rank}"``
    -> ``f"{<accelerator type>}:{rank}"``); in a script that runs on the CPU once ported
    (``sync_guard.runs_on_cpu``: a DDP script's ``device = f"cuda:{local_rank}"`` is such a
    path), ``new if torch.accelerator.is_available() else "cpu"`` unless a pick around it
    decides. The CPU with no index: ``torch.load(map_location="cpu:0")`` raises, and
    ``torch.device("cpu:1")`` is the CPU anyway."""
    if not runs_on_cpu(eng.ctx, eng.line(node)) or picked(eng, node):
        return new
    eng.add_needed_import("torch", node=node)
    pick = cst.IfExp(
        test=cst.parse_expression("torch.accelerator.is_available()"),
        body=new,
        orelse=cst.parse_expression(quoted(eng, node, "cpu")),
    )
    if isinstance(eng.parent(node), _BARE):
        return pick
    return pick.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def converted_store(eng, pick: cst.IfExp) -> bool:
    """``self.device_type = "cuda" if v else "cpu"``, the device-flag family's store of a
    converted switch (``converted_attr``): its ``== "cuda"`` test is kept, so is this."""
    stmt = eng.parent(pick)
    if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1):
        return False
    t = stmt.targets[0].target
    if not (isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name)):
        return False
    mine = t.value.value == "self" and t.attr.value == NEW
    return mine and converted_attr(eng.ctx.tree, eng.line(pick))


def index_or_cpu(eng, spec, original, index: str):
    """``f"{<type>}:N"`` where there is an accelerator, else ``"cpu"``."""
    return expr(
        eng,
        spec,
        original,
        f'f"{{{CURRENT}.type}}:{index}" if torch.accelerator.is_available() else "cpu"',
        f'f"{{accelerator_api.device_type()}}:{index}"',
    )


PLACING_METHODS = frozenset({"to", "cuda", "to_empty", "pin_memory"})


def placed_by_torch(eng, arg: cst.Arg) -> bool:
    """``arg`` goes to torch itself, which places with it at once (``x.to(...)``, a torch
    factory's ``device=``, ``torch.load``'s ``map_location``): without CUDA the original failed
    there too."""
    call = eng.parent(arg)
    if not isinstance(call, cst.Call):
        return False
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in PLACING_METHODS:
        return True
    return any(q == "torch" or q.startswith("torch.") for q in eng.qualnames(call.func))
