"""The one-line port: run an unmodified CUDA-only app on the current accelerator (or CPU).

    import accelerator_api.autoport            # first line of the app
    python -m accelerator_api.autoport [--report FILE.json] [--quiet] app.py args...
    HN_AUTOPORT=1 (checked when anything imports accelerator_api)

At exit a report lists every redirected call site (file:line, API, what it became, count) on
stderr, and as JSON when HN_AUTOPORT_REPORT or --report names a file. On CUDA nothing changes.
Guarantees and limits: docs/accelerator_api.md.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import runpy
import sys

from ._port import RECORDER, install, installed, uninstall

__all__ = ["install", "installed", "uninstall", "RECORDER", "main"]

if __name__ != "__main__":
    install()  # the import form; the module runner installs after its --import plugins load


class _Parser(argparse.ArgumentParser):
    """One-line usage errors (exit 2), like every command of the toolkit."""

    def error(self, message: str):
        message = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message.strip())
        self.exit(2, f"{self.prog}: error: {message}; see --help\n")


def _check(ap: argparse.ArgumentParser, ns: argparse.Namespace) -> None:
    """Refuse bad values before anything is imported, patched or run."""
    if not ns.module and not ns.script:
        ap.error("give a script to run, or -m MODULE")
    # -m: only the top-level package is looked up (finding a submodule would import its
    # parents before autoport is installed); --import modules are imported first anyway.
    wanted = [("--import", m, m) for m in ns.imports]
    if ns.module:
        wanted.append(("-m", ns.module, ns.module.partition(".")[0]))
    for flag, mod, look_up in wanted:
        try:
            found = importlib.util.find_spec(look_up) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            ap.error(f"{flag} {mod}: no module named {look_up!r} on sys.path")
    if not ns.module:
        if os.path.isdir(ns.script):
            ap.error(f"{ns.script} is a directory; give a Python script (or -m MODULE)")
        if not os.path.isfile(ns.script):
            ap.error(f"no such script: {ns.script}")
    if ns.report:
        parent = os.path.dirname(os.path.abspath(ns.report))
        if os.path.isdir(ns.report):
            ap.error(f"--report {ns.report} is a directory; give a file path")
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
            ap.error(f"--report {ns.report}: cannot write in {parent}")


def main(argv: list[str] | None = None) -> int:
    ap = _Parser(
        prog="python -m accelerator_api.autoport",
        description="Run a CUDA-only script on the current accelerator.",
    )
    ap.add_argument(
        "--report", metavar="FILE.json", help="also write the redirection report as JSON"
    )
    ap.add_argument("--quiet", action="store_true", help="no report on stderr")
    ap.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first (e.g. a device plugin that registers the accelerator)",
    )
    ap.add_argument("-m", dest="module", help="run a module instead of a script")
    ap.add_argument("script", nargs="?", help="the app's script")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="the app's arguments")
    ns = ap.parse_args(argv)
    _check(ap, ns)
    for mod in ns.imports:
        try:
            importlib.import_module(mod)
        except Exception as err:  # the plugin's own failure, reported as such and not as the app's
            print(f"autoport: --import {mod} failed: {type(err).__name__}: {err}", file=sys.stderr)
            return 3
    install(report_json=ns.report, quiet=ns.quiet or None)
    if ns.module:
        sys.argv = [ns.module] + ([ns.script] if ns.script else []) + ns.args
        runpy.run_module(ns.module, run_name="__main__", alter_sys=True)
        return 0
    sys.argv = [ns.script] + ns.args
    sys.path.insert(0, os.path.dirname(os.path.abspath(ns.script)))
    runpy.run_path(ns.script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
