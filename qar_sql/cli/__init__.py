"""The ``qar`` command: one module per command group, each a thin layer over the Python API."""

import sys

try:
    from qar_sql.cli.main import cli, main
except KeyboardInterrupt:
    # Ctrl-C while the command line is imported (click and every command's options, a second or
    # more on a cold disk): the documented "Interrupted." and exit 130 (ExitCode.INTERRUPTED),
    # not Python's traceback of an import. Only the ``qar`` entry point imports this package.
    sys.stderr.write("Interrupted.\n")
    raise SystemExit(130) from None

__all__ = ["cli", "main"]
