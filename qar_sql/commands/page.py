"""The report page of one command's result (``qar whatif``, ``compare``, ``uniqueness``, ``risk``,
``anonymize --format html``), and what every report page shares: the command line as typed
and the SQL a command ran, secrets masked. Below the commands, so that a command whose
``--format html`` is a section of ``qar report`` need not import the report, which runs it."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from qar_sql.engines.secrets import mask_source, scrub, secret_values
from qar_sql.output.html import ReportInputs
from qar_sql.results import AuditResult


def sql_text(title: str, statements: Sequence[str]) -> str | None:
    """The statements a command rendered while it ran (:func:`~qar_sql.engines.render.recording`),
    each once, in order, under a comment naming the command; None when it rendered none."""
    unique = list(dict.fromkeys(s.strip() for s in statements if s.strip()))
    if not unique:
        return None
    return f"-- {title}: {len(unique)} statement(s) as rendered while it ran\n" + ";\n\n".join(unique) + ";\n"


def masked_command(argv: Sequence[str], extra_secrets: Sequence[str] = ()) -> str:
    """The command line as typed, with every secret in it masked."""
    import shlex

    known = [v for a in argv for v in secret_values(a)] + [s for s in extra_secrets if s]
    return scrub(" ".join(shlex.quote(a) for a in argv), known)


#: The command whose result each :class:`ReportInputs` field of :func:`result_inputs` holds.
_COMMANDS = {
    "whatif": "qar whatif",
    "compare": "qar compare",
    "uniqueness": "qar uniqueness",
    "classic": "qar risk",
    "anonymize": "qar anonymize",
}


def result_inputs(
    parameters: Mapping[str, Any], *, command: str | None = None, sql: Sequence[str] = (), **results: Any
) -> ReportInputs:
    """The report of one command's result alone, without an audit (``qar whatif``, ``compare``,
    ``uniqueness``, ``risk --format html``): ``results`` are :class:`ReportInputs` fields
    (``whatif=``, ``compare=``, ``uniqueness=``, ``classic=``); ``sql`` the statements the command
    rendered while it ran (:func:`~qar_sql.engines.render.recording`). Secrets in any parameter
    that is a source (a URL's password, ``password=`` pairs) are masked there, in the SQL and in
    ``command``."""
    secrets = [v for value in parameters.values() if isinstance(value, str) for v in secret_values(value)]
    shown = {k: mask_source(v) if isinstance(v, str) and secret_values(v) else v for k, v in parameters.items()}
    text = sql_text(" and ".join(_COMMANDS.get(name, name) for name in results), sql)
    return inputs(None, shown, sql=text, command=command, secrets=secrets, **results)


def html(parameters: Mapping[str, Any], sql: Sequence[str] = (), **results: Any) -> str:
    """``--format html`` of a command other than audit and records: the report of its result
    alone (:func:`result_inputs`), with the command line as typed (its secrets masked)."""
    return result_inputs(parameters, command=command_line(), sql=sql, **results).to_html()


def command_line(extra_secrets: Sequence[str] = ()) -> str:
    """The running ``qar`` command as typed (:func:`masked_command` of ``sys.argv``)."""
    return masked_command(["qar", *sys.argv[1:]], extra_secrets)


def inputs(
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
