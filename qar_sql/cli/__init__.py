"""The ``qar`` command: one module per command group, each a thin layer over the Python API."""

from qar_sql.cli.main import cli, main

__all__ = ["cli", "main"]
