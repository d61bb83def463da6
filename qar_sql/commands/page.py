"""The HTML page of a command's result alone (``--format html`` of ``qar whatif``, ``compare``,
``uniqueness``, ``risk``, ``anonymize``: :func:`html`) and what every report page is made of:
the command line as typed and the statements a command ran, their secrets masked
(:func:`report_inputs`). Below :mod:`qar_sql.commands.report`, which runs those commands, so
that a command's own page does not import it back."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from qar_sql.engines.secrets import mask_source, scrub, secret_values
from qar_sql.output.html import ReportInputs

if TYPE_CHECKING:
    from qar_sql.results import AuditResult


def sql_text(title: str, statements: Sequence[str]) -> str | None:
    """The statements a command rendered while it ran (:meth:`~qar_sql.engines.session.Session.logging_sql`),
    each once, in order, under a comment naming the command; None when it rendered none."""
    unique = list(dict.fromkeys(s.strip() for s in statements if s.strip()))
    if not unique:
        return None
    return f"-- {title}: {len(unique)} statement(s) as rendered while it ran\n" + ";\n\n".join(unique) + ";\n"


def result_inputs(
    parameters: Mapping[str, Any], *, command: str | None = None, sql: Sequence[str] = (), **results: Any
) -> ReportInputs:
    """The report of one command's result alone, without an audit (``qar whatif``, ``compare``,
    ``uniqueness``, ``risk --format html``): ``results`` are :class:`ReportInputs` fields
    (``whatif=``, ``compare=``, ``uniqueness=``, ``classic=``); ``sql`` the statements the command
    rendered while it ran (:meth:`~qar_sql.engines.session.Session.logging_sql`). Secrets in any parameter
    that is a source (a URL's password, ``password=`` pairs) are masked there, in the SQL and in
    ``command``."""
    secrets = [v for value in parameters.values() if isinstance(value, str) for v in secret_values(value)]
    shown = {k: mask_source(v) if isinstance(v, str) and secret_values(v) else v for k, v in parameters.items()}
    # (each field is its command's name but the classic measures', qar risk's)
    text = sql_text(" and ".join(f"qar {'risk' if name == 'classic' else name}" for name in results), sql)
    return report_inputs(None, shown, sql=text, command=command, secrets=secrets, **results)


def given(where: Mapping[str, Any], params: Any, names: str) -> dict[str, Any]:
    """Each of ``names`` (space-separated) as the user gave it, for a page's parameters: the source
    option of ``where``, else the field of ``params``."""
    return {k: where[k] if k in where else getattr(params, k) for k in names.split()}


def html(parameters: Mapping[str, Any], sql: Sequence[str] = (), **results: Any) -> str:
    """``--format html`` of a command other than audit and records: the report of its result
    alone (:func:`result_inputs`), with the command line as typed (its secrets masked)."""
    return result_inputs(parameters, command=command_line(), sql=sql, **results).to_html()


def command_line(extra_secrets: Sequence[str] = ()) -> str:
    """The running ``qar`` command as typed, with every secret in it masked."""
    argv = ["qar", *sys.argv[1:]]
    known = [v for a in argv for v in secret_values(a)] + [s for s in extra_secrets if s]
    return scrub(" ".join(shlex.quote(a) for a in argv), known)


def report_inputs(
    audit: AuditResult | None,
    parameters: Mapping[str, Any],
    *,
    sql: str | None,
    command: str | None,
    secrets: Sequence[str] = (),
    **sections: Any,
) -> ReportInputs:
    """The :class:`ReportInputs` of every kind of report: ``secrets`` masked in the SQL and the
    command line, the time it was made; ``sections`` are the other fields (None: absent)."""
    return ReportInputs(
        audit=audit,
        parameters=parameters,
        sql=scrub(sql, secrets) if sql else None,
        command=scrub(command, secrets) if command else None,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        **sections,
    )
