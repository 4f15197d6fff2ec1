"""A file's words: what the wrapper pass searches for a wrapper's name instead of the file.

``words(data)`` keeps each maximal run of name bytes (ASCII letters, digits, ``_`` and every
non-ASCII byte) once, newline-separated. A name occurs in ``data`` exactly when it occurs in
``words(data)``: an occurrence of a name lies inside one run, and no run holds a newline. On the
installed torch the words are a sixth of the bytes and cost a C-speed translate, split and set.
"""

from __future__ import annotations

_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_TABLE = bytes(b if b in _NAME_BYTES or b >= 0x80 else 0x20 for b in range(256))


def words(data: bytes) -> bytes:
    """The distinct runs of name bytes of ``data``, joined by newlines."""
    return b"\n".join(set(data.translate(_TABLE).split()))
