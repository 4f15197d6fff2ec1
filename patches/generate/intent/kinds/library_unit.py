"""``cuda-library-unit``: the site sits in a function that uses a CUDA-only library
(``[libraries]``: CuPy, numba's CUDA, PyCUDA, ...; ``libraries.py``) outside the site itself.
The function's work runs on CUDA alone, so the device, stream or placement it names is the one
that library needs: OpenNMT's ``load_sru_mod`` compiles its SRU kernels with NVRTC, loads them
with ``cupy.cuda.function`` and sets ``device = torch.device("cuda")`` and ``SRU_STREAM`` from
``torch.cuda.current_stream()`` for them (round 34). A neutral device there would hand another
accelerator's memory to a library that reads CUDA pointers. The function is the innermost one
holding the site; a module's top level is no unit (the library may serve other functions)."""

from __future__ import annotations

from patches.generate.intent.nodes import inside, span_of
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-library-unit"
SUMMARY = "it is in a function whose work is a CUDA-only library's"


def detect(p: Probe) -> list[Evidence]:
    if not p.functions:
        return []
    for sp, what in p.index.libraries_used_in(span_of(p.functions[0])):
        if not inside(sp, p.own):
            return [Evidence(KIND, sp[0][0], f"the function uses {what} (line {sp[0][0]})")]
    return []
