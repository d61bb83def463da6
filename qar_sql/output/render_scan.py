"""Render ``qar scan`` (:class:`~qar_sql.results.ScanReport`): the text summary and the JUnit XML
of a CI gate (its JSON is :meth:`~qar_sql.results.ScanReport.to_dict`, its Markdown that JSON's).
No database code here: the scans are run by :mod:`qar_sql.compliance.scans`."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from qar_sql.engines.secrets import scrub
from qar_sql.output.readable_numbers import dash
from qar_sql.output.registry import renders
from qar_sql.results import ScanOutcome, ScanReport
from qar_sql.user_text import one_line, xml_attribute, xml_text


def target(o: ScanOutcome) -> str:
    """What a scan read: its table, else its source (a CSV or Parquet file takes no table)."""
    return o.table or o.source


def summary_text(report: ScanReport) -> str:
    head = ("scan", "table", "risk", "warn above", "fail above", "status")
    # A name from qar.toml may hold a line break or a bidi control: one row, as written.
    rows = [
        (one_line(o.name), one_line(target(o)), dash(o.risk), dash(o.warn_above), dash(o.fail_above), o.status.upper())
        for o in report.outcomes
    ]
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*head).rstrip(), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r).rstrip() for r in rows]
    lines += [
        "",
        f"{_scans(len(report.outcomes))}: {report.count('ok')} ok, {report.count('warn')} warn, "
        f"{report.count('fail')} fail, {report.count('error')} error ({report.seconds:.2f} s)"
        + (f"; recorded in {one_line(report.store)}" if report.store else ""),
    ]
    if report.notes:
        lines += ["", "Thresholds from outside the scan file:"] + [f"  {n}" for n in report.notes]
    errors = [o for o in report.outcomes if o.error]
    if errors:
        lines += ["", "Errors:"] + [f"  {one_line(o.name)}: {one_line(o.error or '')}" for o in errors]
    if report.not_run:
        not_run = ", ".join(one_line(n) for n in report.not_run)
        lines += ["", f"Interrupted: {len(report.not_run)} scan(s) not run: {not_run}"]
    return "\n".join(lines) + "\n"


def _scans(n: int) -> str:
    return f"{n} scan" + ("" if n == 1 else "s")


def _xml_text(text: str) -> str:
    """``text`` for the JUnit XML's element: masked by the one masker (:func:`qar_sql.engines.secrets.scrub`,
    which leaves masked text as it is), then as :func:`qar_sql.user_text.xml_text` writes it."""
    return xml_text(scrub(text))


def _xml_attribute(text: str) -> str:
    """``text`` for an attribute of the JUnit XML: masked, on one line (:func:`qar_sql.user_text.xml_attribute`)."""
    return xml_attribute(scrub(text))


def junit_xml(report: ScanReport) -> str:
    """JUnit XML: one ``testcase`` per scan; a breached ``fail_above`` is a failure, a scan
    that produced no risk is an error, a warning passes with a note."""
    suite_attrs = {
        "name": "qar scan",
        "tests": str(len(report.outcomes)),
        "failures": str(report.count("fail")),
        "errors": str(report.count("error")),
        "skipped": "0",
        "time": f"{report.seconds:.3f}",
        "timestamp": report.started_at.isoformat(timespec="seconds"),
    }
    root = ET.Element("testsuites", {k: suite_attrs[k] for k in ("name", "tests", "failures", "errors", "time")})
    suite = ET.SubElement(root, "testsuite", suite_attrs)
    for o in report.outcomes:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                # The config's name of the source, never its path or URL: JUnit readers split a
                # classname at its dots into packages.
                "classname": _xml_attribute("qar." + (o.source_name or "source").replace(".", "_")),
                "name": _xml_attribute(o.name),
                "time": f"{o.seconds:.3f}",
            },
        )
        props = ET.SubElement(case, "properties")
        for key, value in (
            ("table", o.table or "—"),  # (a CSV or Parquet file has none: no empty value)
            ("source", o.source),
            ("risk", dash(o.risk)),
            ("p", str(o.p)),
            ("alpha", f"{o.alpha:g}"),
            ("warn_above", dash(o.warn_above)),
            ("fail_above", dash(o.fail_above)),
        ):
            ET.SubElement(props, "property", {"name": key, "value": _xml_attribute(value)})
        if o.status == "fail":
            msg = f"risk {o.risk:.6g} is above fail_above {o.fail_above:g} for {'table ' + o.table if o.table else o.source}"
            ET.SubElement(case, "failure", {"message": _xml_attribute(msg), "type": "threshold"}).text = _xml_text(msg)
        elif o.status == "error":
            ET.SubElement(
                case, "error", {"message": _xml_attribute(o.error or "error"), "type": "scan"}
            ).text = _xml_text(o.error or "")
        elif o.status == "warn":
            ET.SubElement(case, "system-out").text = f"warning: risk {o.risk:.6g} is above warn_above {o.warn_above:g}"
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


@renders(ScanReport, "text", "html")
def render_scan(report: ScanReport, fmt: str) -> str:
    """``report`` in text (also for ``html``, whose pages are in ``--report-dir``: stdout has the
    text summary)."""
    return summary_text(report)


def stderr_lines(report: ScanReport, fmt: str) -> list[str]:
    """What goes to stderr beside ``report`` in ``fmt``: the notes (after JSON) and each scan's
    error, which the text summary lists itself (and so does the html's, on stdout)."""
    if fmt in ("text", "html"):
        return []
    lines = [f"Note: {note}" for note in report.notes] if fmt == "json" else []
    return lines + [f"Error: scan {o.name!r}: {o.error}" for o in report.outcomes if o.error]
