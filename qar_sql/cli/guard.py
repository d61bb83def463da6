"""The CLI's guard of outputs, :func:`qar_sql.command.guard_outputs` (the hand-written commands
import it from here)."""

from qar_sql.command import guard_outputs

__all__ = ["guard_outputs"]
