"""The author's own words: identifiers a file chooses for itself, which say nothing about what the
code does. A parameter named ``cuda_init_mode``, the enum ``CUDAInitMode`` the file defines and
its members (``CUDAInitMode.CUDA_BEFORE``; not the ``CUDA`` member of a device-type table), a command-line flag read from an ``argparse``
namespace (``args.cuda``): the code around them is judged by what it calls, not by how its
author spelled a choice. CUDA's API (``torch.cuda.*``, ``x.is_cuda``, ``"cuda"``, an imported
name) is never a word."""

from __future__ import annotations

import ast


def _local_classes(nodes) -> set[str]:
    """Classes defined in the file, when no other binding of the name exists (an import or an
    assignment of the same name makes the spelling someone else's)."""
    defined, other = set(), set()
    for node in nodes:
        if isinstance(node, ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            other |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            other.add(node.id)
    return defined - other


def _device_enums(nodes) -> set[str]:
    """Classes whose body names both ``CPU`` and ``CUDA`` members (thunder's ``DeviceType``):
    a table of device types, whose ``CUDA`` member is CUDA's device type, not a word."""
    out = set()
    for node in nodes:
        if isinstance(node, ast.ClassDef):
            members = {
                t.id.upper()
                for s in node.body
                if isinstance(s, (ast.Assign, ast.AnnAssign))
                for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
                if isinstance(t, ast.Name)
            }
            if {"CPU", "CUDA"} <= members:
                out.add(node.name)
    return out


def _namespaces(nodes) -> set[str]:
    """Names bound to an ``argparse`` result (``args = parser.parse_args()``) and otherwise only
    as parameters (``def train(args, ...)``, handed the namespace): their attributes are the
    user's flags."""
    bound: dict[str, list[bool | None]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign):
            parsed = (
                isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr in ("parse_args", "parse_known_args")
            )
            for t in node.targets:
                for n in ast.walk(t):
                    # a name the statement binds (``args``, ``a, b``), not the receiver of an
                    # attribute or item it sets (``args.device = ...`` keeps ``args`` the namespace)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        bound.setdefault(n.id, []).append(parsed and t is n)
        elif isinstance(node, ast.arg):
            bound.setdefault(node.arg, []).append(None)
    return {name for name, ok in bound.items() if True in ok and False not in ok}


def words(nodes: list[ast.AST]) -> set[ast.AST]:
    """The token nodes among ``nodes`` (a file's, ``FileContext.nodes``) that are the author's
    words: parameter names, the names of classes the file defines and the attributes read from
    them, the attributes of an ``argparse`` namespace and the option strings that declare them,
    the attribute of ``self`` an assignment sets (its value is judged by what it calls, as a
    plain assigned name is)."""
    classes, spaces = _local_classes(nodes), _namespaces(nodes)
    devices = _device_enums(nodes) & classes
    out: set[ast.AST] = set()
    for node in nodes:
        if isinstance(node, ast.arg):
            out.add(node)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):  # the option strings of a flag (``"--no_cuda"``): the user's spelling of a choice
            out |= {a for a in node.args if isinstance(a, ast.Constant)}
        elif isinstance(node, ast.Name) and node.id in classes:
            out.add(node)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in devices and node.attr.upper() == "CUDA":
                pass  # CUDA's device type in a table of device types
            elif node.value.id in classes or node.value.id in spaces:
                out.add(node)
            elif node.value.id == "self" and isinstance(node.ctx, ast.Store):
                out.add(node)  # the attribute an assignment sets: ``self._num_cuda_retries = ``
    return out
