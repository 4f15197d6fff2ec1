"""Signatures of the old and new APIs, and the argument reshaping between them.

The traps in mapping.md (positional-only replacements, renamed parameters, ``torch.Event``'s
positional shift, keyword-only ``priority``) all reduce to one question: given a call bound
against the old signature, how must each argument be passed to the new one? We answer it from
the real installed objects (``inspect.signature``, or the first docstring line for builtin types
such as ``torch.Event``), never from a hand-written table.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

P = inspect.Parameter


class Unsupported(Exception):
    """The call's shape cannot be mapped safely; the finding stays in the report."""


def resolve(qualname: str):
    """Import the object named by a dotted path (``torch.cuda.synchronize``)."""
    parts = qualname.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(qualname)


@functools.lru_cache(maxsize=None)
def signature_of(qualname: str) -> inspect.Signature | None:
    try:
        obj = resolve(qualname)
    except (ImportError, AttributeError):
        return None
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return _doc_signature(obj)


def _doc_signature(obj) -> inspect.Signature | None:
    # Builtin types document themselves as "Event(device=None, *, enable_timing=False, ...)".
    doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    name = getattr(obj, "__name__", "")
    if not doc or not doc[0].startswith(name + "("):
        return None
    head = doc[0][len(name) :].split("->")[0].strip()
    try:
        fn = ast.parse(f"def _f{head}: pass").body[0]
        ns: dict = {}
        exec(compile(ast.Module([fn], []), "<sig>", "exec"), ns)  # defaults are literals only
        return inspect.signature(ns["_f"])
    except (SyntaxError, NameError, TypeError, ValueError):
        return None


@dataclass
class _Bound:
    name: str
    arg: cst.Arg
    index: int  # position of the parameter in the old signature


def _bind(args: tuple[cst.Arg, ...], sig: inspect.Signature) -> list[_Bound]:
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    by_name = {
        p.name: i
        for i, p in enumerate(params)
        if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)
    }
    out, seen = [], set()
    for pos, arg in enumerate(args):
        if arg.star:
            raise Unsupported("*args/**kwargs at the call site")
        if arg.keyword is None:
            if pos >= len(positional):
                raise Unsupported("more positional arguments than the old API takes")
            p = positional[pos]
            out.append(_Bound(p.name, arg, params.index(p)))
        else:
            name = arg.keyword.value
            if name not in by_name:
                raise Unsupported(f"unknown keyword {name!r} for the old API")
            out.append(_Bound(name, arg, by_name[name]))
        if out[-1].name in seen:
            raise Unsupported("argument given twice")
        seen.add(out[-1].name)
    return out


def _positional(arg: cst.Arg) -> cst.Arg:
    return arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)


def _keyword(arg: cst.Arg, name: str) -> cst.Arg:
    return arg.with_changes(
        keyword=cst.Name(name),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )


def remap(
    args: tuple[cst.Arg, ...],
    old: inspect.Signature | None,
    new: inspect.Signature | None,
    lead: tuple[cst.Arg, ...] = (),
    keywords_always: bool = False,
    drop: tuple[str, ...] = (),
    extra: dict[str, cst.BaseExpression] | None = None,
) -> list[cst.Arg]:
    """Arguments of an old-API call reshaped for the new API.

    ``lead`` are extra leading positional arguments for the new API (``torch.amp.autocast``'s
    ``device_type``); the old call's arguments then map onto the new parameters after them.
    A parameter keeps its name where the new API has it (passed by keyword unless it stays at the
    same position); a renamed parameter maps by position and is passed positionally
    (``device`` -> ``device_index``, which is positional-only). Anything else raises Unsupported.
    ``keywords_always`` (catalogue ``fix.args``) passes every parameter that can be a keyword by
    keyword; ``drop`` lists old parameters the new API must not receive; ``extra`` supplies
    keyword arguments the new API needs and the old call cannot have (``device_type=``).
    Every required parameter of the new API must end up supplied, or Unsupported is raised.
    """
    if old is None or new is None:
        if not args and not extra:
            return list(lead)
        raise Unsupported("signature not introspectable")
    new_params = list(new.parameters.values())
    new_pos = {p.name: i for i, p in enumerate(new_params)}
    old_names = set(old.parameters)
    positional: dict[int, cst.Arg] = {i: a for i, a in enumerate(lead)}
    keywords: list[cst.Arg] = []
    for b in _bind(args, old):
        if b.name in drop:
            continue
        target = new.parameters.get(b.name)
        if target is None:
            i = b.index + len(lead)
            if (
                i < len(new_params)
                and new_params[i].kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)
                and new_params[i].name not in old_names
            ):
                positional[i] = _positional(b.arg)
                continue
            raise Unsupported(f"the new API has no parameter for {b.name!r}")
        i = new_pos[b.name]
        if target.kind == P.POSITIONAL_ONLY:
            positional[i] = _positional(b.arg)
        elif target.kind == P.KEYWORD_ONLY or b.arg.keyword is not None or keywords_always:
            keywords.append(_keyword(b.arg, b.name))
        elif target.kind == P.POSITIONAL_OR_KEYWORD and b.index + len(lead) == i:
            positional[i] = b.arg
        else:
            keywords.append(_keyword(b.arg, b.name))
    for name, expr in (extra or {}).items():
        keywords.append(_keyword(cst.Arg(expr), name))
    _check_supplied(new_params, positional, keywords)
    out = [positional[i] for i in sorted(positional)] + keywords
    return _fix_commas(out, args) if out else []


def _check_supplied(new_params, positional: dict[int, cst.Arg], keywords: list[cst.Arg]) -> None:
    """Unsupported unless every required parameter of the new API is supplied, positionally
    without a gap."""
    given = {new_params[i].name for i in positional} | {a.keyword.value for a in keywords}
    missing = [
        p.name
        for p in new_params
        if p.default is P.empty
        and p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)
        and p.name not in given
    ]
    if missing:
        raise Unsupported(f"the new API needs {', '.join(missing)}")
    if positional and sorted(positional) != list(range(max(positional) + 1)):
        # A gap would need a placeholder value we do not know; keep the call for a human.
        raise Unsupported("positional arguments would leave a gap")


def _fix_commas(out: list[cst.Arg], original: tuple[cst.Arg, ...]) -> list[cst.Arg]:
    # Keep the original's comma style: every argument but the last gets the comma of the
    # original argument at that slot (or ", "), the last keeps the original trailing comma.
    default = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    fixed = []
    for i, arg in enumerate(out):
        if i < len(out) - 1:
            comma = (
                original[i].comma
                if i < len(original) - 1 and isinstance(original[i].comma, cst.Comma)
                else default
            )
        else:  # no original argument (a device type threaded into an empty call): none
            comma = original[-1].comma if original else cst.MaybeSentinel.DEFAULT
        fixed.append(arg.with_changes(comma=comma))
    return fixed


@functools.lru_cache(maxsize=None)
def defining_file(qualname: str) -> str | None:
    """Where the real object named ``qualname`` is defined, as a path from the folder holding its
    top-level package (``torch.manual_seed`` -> ``torch/random.py``); None when unknown."""
    try:
        obj = inspect.unwrap(resolve(qualname))
        path = inspect.getsourcefile(obj)
    except (ImportError, AttributeError, TypeError):
        return None
    top = importlib.import_module(qualname.split(".")[0])
    base = Path(top.__file__).resolve().parent.parent if getattr(top, "__file__", None) else None
    if not path or base is None:
        return None
    try:
        return Path(path).resolve().relative_to(base).as_posix()
    except ValueError:
        return None


def replacement_files(spec) -> dict[str, str]:
    """{file defining one of ``spec``'s replacements: that replacement}: a site in such a file is
    the replacement's own implementation, where the rewrite would call back into its caller."""
    out = {}
    for name in spec.names:
        new = spec.new_for(name)
        if "." in new and "(" not in new:
            where = defining_file(new)
            if where:
                out[where] = new
    return out
