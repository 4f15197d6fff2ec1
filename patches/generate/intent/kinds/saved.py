"""``cuda-saved``: an availability check that picks ``None`` for a checkpoint's ``map_location``
where CUDA is there (MONAI's ``map_location = None if torch.cuda.is_available() else
torch.device("cpu")``): ``None`` restores each tensor where it was saved, on CUDA, and the
check asks whether that device exists. Neutral, a machine with another accelerator would pick
``None`` and fail to restore CUDA tensors that it loaded on the CPU before. Likewise a key of a
``map_location`` mapping: it names the device the tensors were saved on. And a check whose branch
loads a checkpoint with no ``map_location`` (restored where it was saved) while the other branch
maps it (mmagic's DeblurGAN-v2 weights: ``torch.load(path)`` where CUDA is there, else
``torch.load(path, map_location='cpu')``, round 33). And CUDA's absence beside an object off the
CPU (``not torch.cuda.is_available() and metric.device.type != "cpu"``): the object's device is
CUDA's, where it was saved, and the test asks that it cannot be used here (chemprop rebuilds a
checkpoint's metrics then; neutral, a Mac loading a CUDA run would keep them on CUDA, round 42)."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import is_call
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-saved"
SUMMARY = "it picks the places a checkpoint was saved to (CUDA's) where CUDA is there"
_NAME = "map_location"


def detect(p: Probe) -> list[Evidence]:
    picked = p.picked()
    if picked and _none(picked[1]) and _for_map_location(p, picked[0]):
        return [Evidence(KIND, p.f.line, f"{_NAME} = None where CUDA is there")]
    if _saved_key(p):
        return [Evidence(KIND, p.f.line, f"a {_NAME} key: the device a tensor was saved on")]
    held = _absent_beside(p)
    if held:
        return [Evidence(KIND, p.f.line, f"no CUDA here while {held} is off the CPU")]
    selected, other = p.arms
    load = _load(p, selected, mapped=False)
    if load is not None and _load(p, other, mapped=True) is not None:
        return [Evidence(KIND, load.lineno, f"loads with no {_NAME} where CUDA is there")]
    return []


def _load(p: Probe, arm: list[ast.AST], mapped: bool) -> ast.Call | None:
    """A ``torch.load`` call in ``arm`` that passes a ``map_location`` (``mapped``) or none."""
    for stmt in arm:
        for n in ast.walk(stmt):
            if is_call(p.index.ctx, n, "torch.load"):
                given = len(n.args) > 1 or any(k.arg == _NAME for k in n.keywords)
                if given == mapped:
                    return n
    return None


def _saved_key(p: Probe) -> bool:
    """The site is (in) a key stored into a ``map_location`` mapping (``map_location[f"cuda:{i}"]
    = str(device)``): a key names the device a checkpoint's tensors were saved on, CUDA's, not
    the machine's (avalanche's loader, which built the keys at import and, neutral, raised on a
    CPU-only machine). A dict display of devices is the families' (``device map``: left whole)."""
    n = p.node
    while isinstance(parent := p.index.parents.get(n), (ast.JoinedStr, ast.FormattedValue)):
        n = parent
    return (
        isinstance(parent, ast.Subscript)
        and parent.slice is n
        and isinstance(parent.ctx, ast.Store)
        and _NAME in _name(parent.value)
    )


def _absent_beside(p: Probe) -> str:
    """The object whose device is tested off the CPU beside ``not <CUDA availability>`` in an
    ``and`` (``x.device.type != "cpu"``, ``x.device.type == "cuda"``, ``x.is_cuda``), else ""."""
    chain = list(p.climb())
    for (n, parent), (_, grand) in zip(chain, chain[1:]):
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            if isinstance(grand, ast.BoolOp) and isinstance(grand.op, ast.And):
                for v in grand.values:
                    held = _off_cpu(v)
                    if v is not parent and held:
                        return held
            return ""
        if not isinstance(parent, ast.Call) or parent.func is not n:
            return ""
    return ""


def _off_cpu(test) -> str:
    if isinstance(test, ast.Attribute) and test.attr == "is_cuda":
        return ast.unparse(test.value)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return ""
    left, op, right = test.left, test.ops[0], test.comparators[0]
    value = getattr(right, "value", None)
    wanted = (isinstance(op, ast.NotEq) and value == "cpu") or (
        isinstance(op, ast.Eq) and value == "cuda"
    )
    if wanted and isinstance(left, ast.Attribute) and left.attr == "type":
        return ast.unparse(left.value)
    return ""


def _name(node) -> str:
    return node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")


def _none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _for_map_location(p: Probe, pick: ast.IfExp) -> bool:
    """The pick is a ``map_location=`` argument, or assigned to a name saying so."""
    parent = p.index.parents.get(pick)
    if isinstance(parent, ast.keyword):
        return parent.arg == _NAME
    if isinstance(parent, ast.Assign) and parent.value is pick:
        return any(
            _NAME in (t.id if isinstance(t, ast.Name) else getattr(t, "attr", ""))
            for t in parent.targets
        )
    return False
