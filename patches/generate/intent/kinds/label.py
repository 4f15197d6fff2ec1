"""``cuda-label``: the site's value is shown under a short text that calls it CUDA's: the string
argument before it in the call that reports it (MONAI's ``_dict_append(output, "Has CUDA", lambda:
bool(torch.cuda.is_available()))``, ``print("CUDA devices:", torch.cuda.device_count())``), its
key in a dict display (``{"CUDA version": ...}``: a report's table), or the text right before an
f-string's only value (lm_eval's ``eval_logger.info(f"Cuda Available? {...}")``, round 27).
Rewritten, the value would answer for another accelerator while the text still says CUDA: "Has
CUDA: True" on a machine with none. Also a label a report printed right before an ``if`` on the
site whose arms only report the answer (flashinfer's ``CUDA runtime available:`` then ``Yes`` or
``No``, round 39). A text that names another device too ("CUDA/XPU devices") is
about devices, not CUDA's; the reason of a skip is not a label. Nor is the text of an f-string
with other values: a script's ``print(f"Is cuda available: {...}, number of devices:
{world_size}")`` is prose around its values, and kept it would keep the device count beside it
CUDA's (``cuda-flow``: opacus' FSDP example lost its world size to it)."""

from __future__ import annotations

import ast
import re

from patches.generate.intent.data import is_cuda_word
from patches.generate.intent.index import OTHER_DEVICE
from patches.generate.intent.nodes import last_name
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-label"
SUMMARY = "the text it is shown under calls it CUDA's"


def detect(p: Probe) -> list[Evidence]:
    for child, n in p.climb():
        if n is None or isinstance(n, ast.stmt):
            break
        for text in _labels(n, child):
            if _names_cuda(text):
                return [Evidence(KIND, p.f.line, repr(text.strip()[:60]))]
    text = _heading(p)
    return [Evidence(KIND, p.f.line, repr(text.strip()[:60]))] if text else []


def _names_cuda(text: str) -> bool:
    """A label of words, or one that spells the CUDA call it shows (MinkowskiEngine's
    diagnostics: ``f"torch.cuda.is_available(): {...}"``, round 42); a device string such as
    ``"cuda:0"`` is neither."""
    words = " " in text.strip() or bool(_SPELLED.match(text.strip()))
    return words and is_cuda_word(text) and not OTHER_DEVICE.search(text)


_SPELLED = re.compile(r"torch\.cuda\.\w+(\(\))?\s*[:=]?$")


def _heading(p: Probe) -> str:
    """The label a report printed right before an ``if`` on the site whose arms only report
    (flashinfer's ``click.secho("CUDA runtime available:", nl=False)`` then ``if
    torch.cuda.is_available(): click.secho(" Yes") else: click.secho(" No")``)."""
    stmt = p.stmt
    if not (isinstance(stmt, ast.If) and any(x is p.node for x in ast.walk(stmt.test))):
        return ""
    if not all(_reports(s) for s in [*stmt.body, *stmt.orelse]):
        return ""
    block = p.index.block_of(stmt) or []
    i = block.index(stmt) if stmt in block else 0
    prev = block[i - 1] if i else None
    if not _reports(prev):
        return ""
    texts = [_text(a) for a in prev.value.args if _text(a)]
    text = texts[-1] if texts else ""
    return text if text.rstrip().endswith(":") and len(text) <= _SHORT and _names_cuda(text) else ""


def _reports(stmt) -> bool:
    """A call statement that shows text (``print``, ``click.echo``/``secho``, a logger's)."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    name = last_name(stmt.value.func).lower()
    return name in ("print", "echo", "secho", "write", "info", "debug", "warning", "log")


def _labels(n: ast.AST, child: ast.AST) -> list[str]:
    """The label ``n`` shows ``child`` under: the nearest string argument before it in a call, its
    key in a dict display. A label is short: a message's sentence before a value ("please call
    `torch.cuda.set_device()` ...") is advice."""
    if isinstance(n, ast.Call) and child is not n.func and not _gate(n):
        values = [*n.args, *(k.value for k in n.keywords)]
        before = values[: values.index(child)] if child in values else []
        texts = [_text(v) for v in before if _text(v)]
        return texts[-1:] if texts and len(texts[-1]) <= _SHORT else []
    if isinstance(n, ast.JoinedStr) and child in n.values:
        return _field_label(n, child)
    if isinstance(n, ast.Dict) and child in n.values:
        key = n.keys[n.values.index(child)]
        return [_text(key)] if key is not None and _text(key) else []
    return []


_SHORT = 50


def _field_label(n: ast.JoinedStr, child: ast.AST) -> list[str]:
    """The text right before an f-string's only value (``f"Cuda Available? {...}"``: lm_eval's
    log line). With more values it is prose around them (opacus' ``f"Is cuda available: {...},
    number of devices: {world_size}"``), and kept it would keep the count beside it CUDA's."""
    fields = [v for v in n.values if isinstance(v, ast.FormattedValue)]
    i = n.values.index(child)
    if fields != [child] or i == 0:
        return []
    text = _text(n.values[i - 1])
    return [text] if text and len(text) <= _SHORT else []


def _gate(call: ast.Call) -> bool:
    """A skip or expected failure (``skipUnless(torch.cuda.is_available(), "Requires CUDA")``):
    its text is the reason of a test of the value, judged as such (``cuda-guarded``)."""
    name = last_name(call.func).lower()
    return "skip" in name or "xfail" in name


def _text(node) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
