"""``attribute``: an attribute name for its generic one on any receiver."""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.base import Family


class AttributeRename(Family):
    """An attribute name for its generic one on any receiver: ``s.cuda_stream`` -> ``s.native_handle``."""

    name = "attribute"

    def on_ref(self, eng, original, updated):
        if not isinstance(original, cst.Attribute):
            return None
        for spec in eng.specs_for(self.name, original):
            if original.attr.value in spec.names:
                eng.done(spec, original)
                new_attr = spec.new_for(original.attr.value).rsplit(".", 1)[-1]
                return updated.with_changes(attr=cst.Name(new_attr))
        return None
