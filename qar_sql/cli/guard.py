"""The CLI's side of :func:`qar_sql.guard.check_not_input`: :func:`~qar_sql.guard.guard_outputs`,
which adds the qar.toml or pyproject.toml whose defaults apply (found or named by --config) to
the files a command reads; it lives beside the check so that a command's hooks call it too."""

from qar_sql.guard import guard_outputs

__all__ = ["guard_outputs"]
