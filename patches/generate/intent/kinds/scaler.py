"""``cuda-scaler``: the device type of an autocast (``torch.autocast("cuda", ...)``) whose function
reads a loss scaler that stays CUDA's (a name or attribute the file binds to
``torch.cuda.amp.GradScaler()`` or ``torch.amp.GradScaler("cuda")``, left: MONAI's
``SupervisedTrainer`` keeps ``self.scaler = torch.cuda.amp.GradScaler()`` and its iteration reads
``engine.scaler``). Autocast and the scaler of its loss are one unit: a neutral autocast on
another accelerator runs float16 with a CUDA scaler that disables itself there, so small
gradients underflow where the code trained in float32 before."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import called, span_of
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-scaler"
SUMMARY = "the loss scaler its autocast pairs with stays CUDA-specific"
AUTOCAST = frozenset(
    {
        "torch.autocast",
        "torch.amp.autocast",
        "torch.amp.autocast_mode.autocast",
        "torch.cuda.amp.autocast",
    }
)
SCALERS = frozenset(
    {
        "torch.cuda.amp.GradScaler",
        "torch.cuda.amp.grad_scaler.GradScaler",
        "torch.amp.GradScaler",
        "torch.amp.grad_scaler.GradScaler",
    }
)


def detect(p: Probe) -> list[Evidence]:
    call = _autocast(p)
    fn = p.functions[0] if p.functions else None
    if call is None or fn is None:
        return []
    cls = next((d for d in p.defs if isinstance(d, ast.ClassDef)), None)
    own = {id(n) for n in ast.walk(cls)} if cls is not None else set()
    read = {_key(n) for n in ast.walk(fn) if isinstance(getattr(n, "ctx", None), ast.Load)}
    for node in p.ctx.nodes:
        if not isinstance(node, ast.Assign):
            continue
        # `self.scaler` of the site's own class, or a name / another object's attribute
        names = {k for t in node.targets for k in _matches(_key(t, id(t) in own))} & read
        if not names:
            continue
        for c in ast.walk(node.value):
            if isinstance(c, ast.Call) and called(p.ctx, c) in SCALERS:
                hits = p.remaining(span_of(c), p.own)
                if hits:
                    what = sorted(names)[0][1]
                    return [
                        Evidence(KIND, node.lineno, f"{what} = {hits[0][1]} (line {node.lineno})")
                    ]
    return []


def _matches(key: tuple[str, str] | None) -> list[tuple[str, str]]:
    """The reads a stored ``key`` answers: a name its name; ``self.x`` of the site's class
    ``self.x`` there; any object's ``.x`` (``engine.scaler``) an attribute stored anywhere."""
    if key is None:
        return []
    if key[0] == "name":
        return [key]
    return [("attr", key[1])] + ([key] if key[0] == "self" else [])


def _key(n: ast.AST, mine: bool = True) -> tuple[str, str] | None:
    """How a name or attribute is matched: ``self.x`` of one class apart from any other ``.x``."""
    if isinstance(n, ast.Name):
        return ("name", n.id)
    if isinstance(n, ast.Attribute):
        on_self = isinstance(n.value, ast.Name) and n.value.id == "self"
        return ("self" if on_self and mine else "other" if on_self else "attr", n.attr)
    return None


def _autocast(p: Probe) -> ast.Call | None:
    """The autocast call whose arguments hold the site."""
    for n, parent in p.climb():
        if isinstance(parent, ast.Call) and n is not parent.func:
            if called(p.ctx, parent) in AUTOCAST:
                return parent
    return None
