"""Device defaults and indexed devices (HN502 ``"cuda"``, HN503 ``torch.device("cuda")``) where a
training script picks its device, rewritten to the current accelerator.

* a default, i.e. the whole value of an assignment to a device-named target or an argparse-style
  ``default=`` (``device = "cuda"``, ``add_argument("--device", default="cuda")``,
  ``dev = torch.device("cuda")``), and in a script ``with torch.device("cuda"):``,
  ``torch.set_default_device("cuda")`` and ``device_map="cuda"``: the accelerator's type, CPU
  when there is none; the value stays overridable exactly as before (same type: a string stays
  a string);
* an indexed device anywhere but a comparison: ``f"cuda:{rank}"``, ``"cuda:%d" % i``,
  ``"cuda:{}".format(i)`` keep their string form with the accelerator's type in place of
  "cuda"; ``torch.device("cuda", i)`` / ``torch.device("cuda:1")`` become
  ``torch.device(<accelerator type>, i)``.

On CUDA every rewrite evaluates to the value it replaces. Device arguments
(``x.to("cuda")``) are ``literals.DeviceLiteral``'s; comparisons and parameter defaults stay.
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families import autocast_types, operands
from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.device_flag_units import NEW
from patches.generate.codemods.families.device_places import (
    STR,
    compared,
    converted_store,
    cpu_other_side,
    help_default,
    in_device_map,
    index_or_cpu,
    is_default,
    or_cpu,
    placed_by_torch,
)
from patches.generate.codemods.families.idioms_common import (
    CUDA_DEVICE_STR,
    CURRENT,
    accel_type,
    expr,
    specs_at,
    specs_here,
    string_value,
    type_or_cpu,
    with_value,
)
from patches.generate.codemods.families.idioms_memory import checked_here
from patches.generate.codemods.families.literals import (
    device_type_arg,
    module_held,
    type_source,
)
from patches.generate.codemods.families.module_device import NAME
from patches.generate.codemods.families.named_devices import NAMES_ONLY, names_only

LITERAL_FAMILY = "device-literal"  # HN502/HN503's specs (catalogue style `literal`)
_CTOR = "torch.device"
_MAP_WHY = (
    "a device map (map_location): its keys name where the data was saved, not this host, "
    "and a value alone would no longer match its key"
)


def _module_written(eng, held: str | None) -> str | None:
    """``held``, the test module's ``DEVICE_TYPE``, where this run writes it (a plain ``"cuda"``
    it replaces passes the gate), else None."""
    name, places = getattr(eng.ctx, "module_device_sites", (None, ()))
    ok = held is not None and held == name and any(eng.fixes("HN502", ln) for ln in places)
    return held if ok else None


class DeviceDefaults(Family):
    name = "device-defaults"

    def _specs(self, eng, node, names):
        """HN502/HN503's specs (DeviceLiteral's family) and the rules naming this family
        (HN509, a device string anywhere else) at ``node``'s line."""
        return specs_at(eng, node, LITERAL_FAMILY, names) + specs_at(eng, node, self.name, names)

    # -- "cuda" / "cuda:N" ------------------------------------------------------------------
    def on_literal(self, eng, original, updated):
        new = self._literal(eng, original, updated)
        if new is None and string_value(original) is not None:
            mine = specs_here(eng, original, specs_at(eng, original, self.name, (STR,)))
            if mine and CUDA_DEVICE_STR.fullmatch(string_value(original)):
                # HN509's own sites this family does not rewrite: say why
                eng.fail(mine[0], original, "not a default or a built string: decide by hand")
        return new

    def _literal(self, eng, original, updated):
        parent = eng.parent(original)
        in_pick = isinstance(parent, cst.IfExp) and (
            parent.body is original
            or (parent.orelse is original and cpu_other_side(parent, original))
        )
        # `torch.device("cuda" if flag else "cpu")` is HN503's site
        specs = self._specs(eng, original, (STR, _CTOR) if in_pick else (STR,))
        if not in_pick:  # `torch.device("cuda" if ...)`: HN503's finding starts at the call
            specs = specs_here(eng, original, specs)
        value = string_value(original)
        if not specs or value is None:
            return None
        m = CUDA_DEVICE_STR.fullmatch(value)
        if m is None:
            return None
        spec = specs[0]
        if not is_default(eng, original):
            parent = eng.parent(original)
            if in_pick and converted_store(eng, parent):
                why = f"the device-flag family's `self.{NEW}` (a converted switch): kept"
                eng.fail(spec, original, why)
                return None
            if in_pick:
                return self._pick(eng, spec, original, parent, m.group(1))
            if not isinstance(parent, cst.Arg) or parent.star:
                return None
            if m.group(1) is None:
                return self._device_type(eng, spec, original, parent)
            # "cuda:N" passed as a device (the scan reports device positions only): the string
            # of that index of the accelerator; where torch does not place with it at once
            # (a project's function, a ``dict.get`` default), the CPU without one, since the
            # string was harmless there and ``current_accelerator()`` is None
            eng.done(spec, original)
            if not placed_by_torch(eng, parent) and not checked_here(eng, original):
                return index_or_cpu(eng, spec, original, m.group(1))
            return expr(
                eng,
                spec,
                original,
                f'f"{{{CURRENT}.type}}:{m.group(1)}"',
                f'f"{{accelerator_api.device_type()}}:{m.group(1)}"',
            )
        eng.done(spec, original)
        if checked_here(eng, original):
            # reached only with an accelerator (`if not torch.cuda.is_available(): return` above
            # it, a skip decorator): no CPU side to write (issue 24: no redundant inner guard)
            return self._indexed(eng, spec, original, m.group(1))
        if m.group(1) is None:
            return type_or_cpu(eng, spec, original)
        # "cuda:N" as a default: that index of the accelerator, CPU when there is none.
        return index_or_cpu(eng, spec, original, m.group(1))

    def _pick(self, eng, spec, original, pick: cst.IfExp, index: str | None):
        """``"cuda" if flag else "cpu"`` / ``"cuda:0" if opt.cuda else "cpu"`` (the DCGAN
        example; ignite's writes the CPU first: ``"cpu" if (not avail or args.no_cuda) else
        "cuda:0"``): the user asked for the accelerator, so its type (that index of it); left where
        the other side is not the CPU (a fallback)."""
        if not cpu_other_side(pick, original):
            # `"cuda" if not avail else avail.pop()`, `"cuda" if not use_device else
            # use_device`: "cuda" is the fallback when nothing else is known, also on
            # a CPU-only host, where the accelerator's type does not exist
            eng.fail(
                spec,
                original,
                'a fallback whose other side is not "cpu": no accelerator may exist '
                "there (current_accelerator() is None)",
            )
            return None
        # an is_available() pick is the availability family's, dispatched before this one
        eng.done(spec, original)
        return self._indexed(eng, spec, original, index)

    @staticmethod
    def _indexed(eng, spec, original, index: str | None):
        """The accelerator's type, or that index of it (``f"{<type>}:0"``), where there is one."""
        if index is None:
            return accel_type(eng, spec, original)
        return expr(
            eng,
            spec,
            original,
            f'f"{{{CURRENT}.type}}:{index}"',
            f'f"{{accelerator_api.device_type()}}:{index}"',
        )

    def _device_type(self, eng, spec, original, arg: cst.Arg):
        """``autocast("cuda")`` / ``autocast(device_type="cuda")`` / ``GradScaler("cuda")``: the
        ``device_type`` bound before the site, else ``torch.device(device).type`` for a bound
        ``device``, else ``torch.device(<the device the function holds>).type``
        (``literals.held_device``: ignite's ``config.device``, handed to its batches as
        ``device=``), else the test module's ``DEVICE_TYPE`` where the function's one device is a
        ``"cuda"`` that ``module_device`` moves to it (``literals.module_held``); a disabled
        autocast around work on a tensor parameter ``x`` takes ``x.device.type``
        (``operands.with_operand``); with none, the site is left (DeviceLiteral says why)."""
        if not device_type_arg(eng, arg):
            return None
        line = eng.line(original)
        held = type_source(eng.ctx, line) or _module_written(eng, module_held(eng.ctx, line))
        param = None
        if held is None:
            param = autocast_types.disabled(eng, arg) and operands.with_operand(eng.ctx, line)
            if not param:
                return None
        why = autocast_types.too_old(eng, arg) or autocast_types.half_on_cpu(eng, arg)
        if why:
            eng.fail(spec, original, why)
            return None
        eng.done(spec, original)
        if held == "device_type" or held == NAME:
            return cst.Name(held)
        if param:
            return cst.parse_expression(f"{param}.device.type")
        eng.add_needed_import("torch", node=original)
        return cst.parse_expression(f"torch.device({held}).type")

    # -- torch.device("cuda"), torch.device("cuda", i), torch.device("cuda:N") ----------------
    def on_call(self, eng, original, updated):
        helped = help_default(original, updated)
        if helped is not None:
            return helped
        if eng.qualnames(original.func) != {_CTOR}:
            return self._format(eng, original, updated)
        specs = self._specs(eng, original, (_CTOR,))
        if not specs:
            return None
        args = original.args
        if not args or args[0].keyword is not None or any(a.star for a in args):
            return None
        value = string_value(args[0].value)
        m = CUDA_DEVICE_STR.fullmatch(value) if value is not None else None
        if m is None or compared(eng, original):
            return None
        spec = specs[0]
        if len(args) == 1 and m.group(1) is None:
            if not is_default(eng, original):
                return None  # a device argument: DeviceLiteral's (`device` in scope)
            eng.done(spec, original)
            return expr(
                eng,
                spec,
                original,
                f'{CURRENT[:-1]}check_available=True) or torch.device("cpu")',
                "torch.device(accelerator_api.device_type())",
            )
        if len(args) == 2 and m.group(1) is None and args[1].keyword in (None,):
            index = updated.args[1].value  # keeps a rewrite inside it (current_device())
        elif len(args) == 1 and m.group(1) is not None:
            index = cst.Integer(m.group(1))
        else:
            return None
        if names_only(eng, original):
            eng.fail(spec, original, NAMES_ONLY)
            return None
        eng.done(spec, original)
        eng.add_needed_import("torch", node=original)
        return updated.with_changes(
            args=(
                cst.Arg(
                    accel_type(eng, spec, original),
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                ),
                cst.Arg(index),
            )
        )

    # -- f"cuda:{i}", "cuda:%d" % i, "cuda:{}".format(i) ----------------------------------------
    def on_node(self, eng, original, updated):
        if isinstance(original, cst.FormattedString):
            return self._fstring(eng, original, updated)
        if isinstance(original, cst.BinaryOperation):
            return self._percent(eng, original, updated)
        return None

    def _spec(self, eng, node):
        specs = self._specs(eng, node, (STR, _CTOR))
        if not specs or compared(eng, node):
            return None
        if in_device_map(eng, node):
            eng.fail(specs[0], node, _MAP_WHY)
            return None
        return specs[0]

    @staticmethod
    def _left(eng, spec, original) -> bool:
        """An indexed device string that only names a device (``names_only``): left, said."""
        if names_only(eng, original):
            eng.fail(spec, original, NAMES_ONLY)
            return True
        return False

    def _fstring(self, eng, original, updated):
        parts = updated.parts
        if not parts or not isinstance(parts[0], cst.FormattedStringText):
            return None
        if not parts[0].value.startswith("cuda:") or len(parts) < 2:
            return None
        spec = self._spec(eng, original)
        if spec is None or self._left(eng, spec, original):
            return None
        eng.done(spec, original)
        head = cst.FormattedStringExpression(accel_type(eng, spec, original))
        rest = parts[0].with_changes(value=parts[0].value[len("cuda") :])
        return or_cpu(eng, original, updated.with_changes(parts=(head, rest, *parts[1:])))

    def _percent(self, eng, original, updated):
        left = original.left
        value = string_value(left)
        if not isinstance(original.operator, cst.Modulo) or value is None:
            return None
        if not value.startswith("cuda:%") or value.count("%") != 1:
            return None
        spec = self._spec(eng, original)
        if spec is None or self._left(eng, spec, original):
            return None
        right = updated.right
        acc = cst.Element(
            accel_type(eng, spec, original),
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
        )
        if isinstance(right, cst.Tuple):
            new_right = right.with_changes(elements=(acc, *right.elements))
        else:
            new_right = cst.Tuple([acc, cst.Element(right)])
        eng.done(spec, original)
        new = updated.with_changes(left=with_value(left, "cuda", "%s"), right=new_right)
        return or_cpu(eng, original, new)

    def _format(self, eng, original, updated):
        """``"cuda:{}".format(i)`` -> ``"{}:{}".format(<accelerator type>, i)`` (auto-numbered
        fields only: a ``{0}`` would shift)."""
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "format"):
            return None
        value = string_value(func.value)
        if value is None or not value.startswith("cuda:{}") or "{" in value[len("cuda:{}") :]:
            return None
        if any(a.keyword is not None or a.star for a in original.args):
            return None
        spec = self._spec(eng, original)
        if spec is None or self._left(eng, spec, original):
            return None
        eng.done(spec, original)
        acc = cst.Arg(
            accel_type(eng, spec, original),
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
        )
        new = updated.with_changes(
            func=updated.func.with_changes(value=with_value(func.value, "cuda", "{}")),
            args=(acc, *updated.args),
        )
        return or_cpu(eng, original, new)
