"""Streams and events, and the timing units built from them (HN201, HN202, HN203):

* ``torch.cuda.Stream(...)`` -> ``torch.Stream(...)`` (``priority`` by keyword),
  ``torch.cuda.Event(True)`` -> ``torch.Event(enable_timing=True)`` (keywords: ``torch.Event``'s
  first parameter is the device);
* annotations: ``Optional[torch.cuda.Event]`` -> ``Optional[torch.Event]``,
  ``stream: torch.cuda.Stream`` -> ``stream: torch.Stream``;
* ``synchronize = torch.cuda.synchronize`` (a timer's sync function) ->
  ``torch.accelerator.synchronize`` where no call of it passes a keyword;
* ``with torch.cuda.stream(s):`` -> ``with s:`` where the file only ever makes ``s`` a stream
  (``torch.cuda.stream(None)`` is a no-op, ``with None:`` raises).

No availability guard: CUDA's constructors raise without CUDA, so the code around them only
runs where a device exists; the neutral ones return a CPU stream (or an event whose ``record``
raises) instead, which breaks nothing that worked. The exception is a probe, a constructor in
a ``try`` that catches the error to learn whether there is a device: left; so is an event
asked to block its waiter or to be shared between processes (``blocking``, ``interprocess``:
``torch.Event`` takes them and ignores them, as its docstring warns): vLLM's host waits on a
``torch.cuda.Event(blocking=True)`` so as not to spin, its KV connector sends an
``interprocess=True`` event's ``ipc_handle()``, which ``torch.Event`` does not implement (round
41). With the
synchronize (HN105) and ``current_stream`` (HN204) beside them, the intent gate converts a
timing unit whole or not at all (``cuda-timeline``). Upstream's form: DDP's mixed-precision
stream, FSDP's event queue, the comm hooks' streams (torch 2.4 -> 2.13).
"""

from __future__ import annotations

import inspect

import libcst as cst

from patches.generate.codemods.families import CallRename
from patches.generate.codemods.families.values import calls_positional, is_stream, probed
from patches.generate.codemods.signatures import Unsupported, remap, signature_of

STREAM_NAMES = ("torch.cuda.Stream", "torch.cuda.streams.Stream")
EVENT_NAMES = ("torch.cuda.Event", "torch.cuda.streams.Event")
STREAM_CONTEXT = "torch.cuda.stream"
SYNC, NEW_SYNC = "torch.cuda.synchronize", "torch.accelerator.synchronize"
_P = inspect.Parameter
# torch.Event's parameters it takes and ignores ("Both blocking and interprocess are not supported
# right now and are noops": tests/patches/test_timing.py reads the installed torch's docstring),
# with their positions in torch.cuda.Event(enable_timing, blocking, interprocess)
EVENT_IGNORED = {"blocking": 1, "interprocess": 2}
# torch.Stream documents itself as "Stream(device, *, priority)" without the defaults it has
# (``torch.Stream()`` is the current accelerator's stream; tests/patches/test_timing.py checks).
STREAM_SIGNATURE = inspect.Signature(
    [
        _P("device", _P.POSITIONAL_OR_KEYWORD, default=None),
        _P("priority", _P.KEYWORD_ONLY, default=0),
    ]
)


def _ignored(call: cst.Call) -> str | None:
    """The first of ``EVENT_IGNORED`` the event call passes, by keyword or position, with a value
    other than a literal False, else None."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for name, at in EVENT_IGNORED.items():
        arg = next((a for a in call.args if a.keyword and a.keyword.value == name), None)
        if arg is None and len(positional) > at:
            arg = positional[at]
        if arg is not None and not (isinstance(arg.value, cst.Name) and arg.value.value == "False"):
            return name
    return None


def _in_annotation(eng, node) -> bool:
    parent = eng.parent(node)
    while parent is not None and not isinstance(parent, (cst.BaseStatement, cst.Param)):
        if isinstance(parent, cst.Annotation):
            return True
        if not isinstance(
            parent,
            (cst.Subscript, cst.SubscriptElement, cst.Index, cst.BinaryOperation, cst.Tuple),
        ):
            return False
        parent = eng.parent(parent)
    return False


class Timing(CallRename):
    name = "timing"
    claims = STREAM_NAMES + EVENT_NAMES

    def on_call(self, eng, original, updated):
        specs = eng.specs_for(self.name, original)
        if not specs:
            return None
        names = eng.qualnames(original.func)
        if STREAM_CONTEXT in names:
            return self._stream_context(eng, specs, original, updated)
        if not names & set(self.claims):
            return None
        if probed(eng.ctx, eng.line(original)):
            spec = next((s for s in specs if names & set(s.names)), specs[0])
            eng.fail(spec, original, "a probe: the constructor's error is caught to detect CUDA")
            return updated
        if not names & set(STREAM_NAMES):
            ignored = _ignored(original)
            if ignored:
                spec = next((s for s in specs if names & set(s.names)), specs[0])
                eng.fail(
                    spec, original, f"torch.Event ignores {ignored}=, which CUDA's event keeps"
                )
                return updated
            return super().on_call(eng, original, updated)
        old = sorted(names & set(STREAM_NAMES))[0]
        spec = next((s for s in specs if old in s.names), None)
        if spec is None:  # the stream's own finding is not asked of this pass (the gate left it)
            return None
        try:
            args = remap(updated.args, signature_of(old), STREAM_SIGNATURE)
        except Unsupported as e:
            eng.fail(spec, original, str(e))
            return updated
        eng.done(spec, original)
        return updated.with_changes(
            func=eng.reference(original.func, old, spec.new_for(old)), args=args
        )

    def _stream_context(self, eng, specs, original, updated):
        spec = next((s for s in specs if STREAM_CONTEXT in s.names), None)
        if spec is None:
            return None
        parent = eng.parent(original)
        args = updated.args
        if not (isinstance(parent, cst.WithItem) and parent.item is original and not parent.asname):
            eng.fail(spec, original, "torch.cuda.stream outside a with statement")
            return updated
        if len(args) != 1 or args[0].keyword is not None or args[0].star:
            eng.fail(spec, original, "not a single stream argument")
            return updated
        code = cst.Module([]).code_for_node(original.args[0].value)
        if not is_stream(eng.ctx, code, eng.line(original.args[0].value)):
            eng.fail(spec, original, "the stream may be None (torch.cuda.stream(None) is a no-op)")
            return updated
        eng.done(spec, original)
        eng.remove_unused_import_by_node(original.func)
        return args[0].value

    def _sync_ref(self, eng, original, parent):
        """``synchronize = torch.cuda.synchronize`` (a timer's sync function) ->
        ``torch.accelerator.synchronize`` where every call of the name passes at most a device
        positionally (the neutral one's ``device`` is positional-only)."""
        line = eng.line(original)  # HN105's spec, whichever family rewrites its calls
        spec = next((s for s, ls in eng.gated if SYNC in s.names and line in ls), None)
        if spec is None:
            return None
        if not (isinstance(parent, cst.Assign) and parent.value is original):
            return None
        targets = [t.target for t in parent.targets]
        if len(targets) != 1 or not isinstance(targets[0], (cst.Name, cst.Attribute)):
            return None
        if not calls_positional(eng.ctx, cst.Module([]).code_for_node(targets[0])):
            eng.fail(spec, original, "a call of it passes a keyword (device is positional-only)")
            return None
        eng.done(spec, original)
        return eng.reference(original, SYNC, NEW_SYNC)

    def on_ref(self, eng, original, updated):
        if not isinstance(original, (cst.Attribute, cst.Name)):
            return None
        parent = eng.parent(original)
        if isinstance(parent, cst.Call) and parent.func is original:
            return None  # the constructor: on_call
        if isinstance(parent, cst.Attribute) and parent.value is original:
            return None  # a prefix of a longer name
        if SYNC in eng.qualnames(original):
            return self._sync_ref(eng, original, parent)
        specs = eng.specs_for(self.name, original)
        names = eng.qualnames(original) & set(self.claims)
        if not specs or not names:
            return None
        old = sorted(names)[0]
        spec = next((s for s in specs if old in s.names), None)
        if spec is None:
            return None
        if not _in_annotation(eng, original):
            eng.fail(spec, original, "a type test: torch.Stream/torch.Event would match any device")
            return None
        eng.done(spec, original)
        return eng.reference(original, old, spec.new_for(old))
