"""Set attributes and remember how to undo them (tests and `uninstall()` restore torch exactly)."""

from __future__ import annotations

_MISSING = object()


class Patcher:
    def __init__(self) -> None:
        self._undo: list[tuple[object, str, object]] = []

    def set(self, obj: object, name: str, value: object) -> None:
        # Only what the object itself holds is restored: an inherited attribute is deleted again.
        own = (
            obj.__dict__.get(name, _MISSING)
            if hasattr(obj, "__dict__")
            else getattr(obj, name, _MISSING)
        )
        self._undo.append((obj, name, own))
        setattr(obj, name, value)

    def undo(self) -> None:
        while self._undo:
            obj, name, own = self._undo.pop()
            if own is _MISSING:
                delattr(obj, name)
            else:
                setattr(obj, name, own)
