"""Run a gt4py.next script unchanged on stencilkit: ``python -m stencilkit.gt4py_run script.py``.

Installs the ``gt4py`` alias (``stencilkit.compat.install_gt4py_alias``), then runs the script
(or, with ``-m``, a module) as ``__main__`` with the remaining arguments in ``sys.argv``.

    python -m stencilkit.gt4py_run [--force] script.py [args ...]
    python -m stencilkit.gt4py_run [--force] -m package.module [args ...]

``--force`` serves stencilkit even where a real gt4py is installed.
"""

from __future__ import annotations

import runpy
import sys

from .compat import GT4PyAliasError, install_gt4py_alias

USAGE = "usage: python -m stencilkit.gt4py_run [--force] (script.py | -m module) [args ...]"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    force = False
    while args and args[0] in ("--force", "-h", "--help"):
        if args[0] != "--force":
            print(__doc__)
            return 0
        force = True
        args.pop(0)
    if not args or (args[0] == "-m" and len(args) < 2):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        install_gt4py_alias(force=force)
    except GT4PyAliasError as err:
        print(f"stencilkit.gt4py_run: {err}", file=sys.stderr)
        return 2
    if args[0] == "-m":
        sys.argv = args[1:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        sys.path.insert(0, _script_dir(args[0]))
        runpy.run_path(args[0], run_name="__main__")
    return 0


def _script_dir(script: str) -> str:
    import os

    return os.path.dirname(os.path.abspath(script))


if __name__ == "__main__":
    sys.exit(main())
