"""The pre-commit hook (``.pre-commit-hooks.yaml``, id ``qar-scan``): ``qar scan`` on each changed
``qar.toml``. pre-commit passes the hook's ``args`` and then the changed files in one call, and
``qar scan`` takes one config, so this runs it once per file with the same arguments and exits
with the worst code in the order :attr:`qar_sql.results.ScanReport.exit_code` ranks a scan's
(130 interrupted, 2 a bad config, table or column, 3 the database, 1 a risk above its
fail_above, 0). ``--junit`` and ``--markdown`` get every file's scans: one testsuite per file
in one JUnit XML, one section per file in one Markdown summary (also when ``$QAR_JUNIT`` or
``$QAR_MARKDOWN`` names them); ``--report-dir`` gets a folder per file and an index.html linking them. A ``qar.toml`` with no ``[[scan]]`` (defaults and sources only, for
configs that include it) has nothing to scan: it passes, with a note, when ``qar config --check``
finds it valid. Ctrl-C stops the hook (130), not only the current file's scan. Its own lines
(``qar scan PATH``, the notes) go to stderr, so stdout holds what ``qar scan`` prints; with
``--format json`` that is one JSON document for every config (:func:`_json`), not one per config.

Run as ``python -m qar_sql.cli.hook [qar scan options] FILE...``.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import quote

import click

from qar_sql import config_file, user_files
from qar_sql.cli.action import given_options
from qar_sql.cli.main import cli
from qar_sql.compliance.scans import load_config
from qar_sql.errors import ExitCode, QarError
from qar_sql.guard import check_not_input
from qar_sql.output.render import to_json
from qar_sql.user_text import html_text, markdown_inline, one_line, terminal, xml_attribute

#: Worst first: the order of ScanReport.exit_code; any other code ranks after these.
RANK = (ExitCode.INTERRUPTED, ExitCode.USAGE, ExitCode.RUNTIME, ExitCode.RISK_ABOVE_THRESHOLD)
COMBINED = ("--junit", "--markdown")
#: Each config's HTML pages go to a folder of their own in it, and its index.html links them.
REPORT = "--report-dir"


def worst(codes: list[int]) -> int:
    """The code the hook exits with: the first of :data:`RANK` among ``codes``, else the
    largest other non-zero code, else 0."""
    for code in RANK:
        if int(code) in codes:
            return int(code)
    return max([c for c in codes if c], default=0)


def _takes_value() -> frozenset[str]:
    """qar scan's option names that take a value (``--report-dir DIR``, ``-f json``): the word
    after one is its value, not a config, even when it ends in ``.toml``."""
    return frozenset(
        name
        for param in cli.commands["scan"].params
        if isinstance(param, click.Option) and not param.is_flag and not param.count
        for name in param.opts
    )


def _parse(argv: list[str]) -> tuple[list[str], list[str], dict[str, str]]:
    """The configs to scan (every ``.toml`` that is not an option's value), qar scan's other
    arguments, and the hook's own ``--junit``/``--markdown``/``--report-dir`` (``--junit X`` or
    ``--junit=X``)."""
    takes_value = _takes_value()
    files, rest, taken = [], [], {}
    args = iter(argv)
    for arg in args:
        name, eq, value = arg.partition("=")
        if name in (*COMBINED, REPORT) and eq:
            taken[name] = value
        elif arg in takes_value:  # its value follows, whatever it ends with (--report-dir x.toml)
            following = next(args, None)
            if arg in (*COMBINED, REPORT) and following is not None:
                taken[arg] = following
            else:
                rest += [arg] if following is None else [arg, following]
        elif not arg.startswith("-") and arg.lower().endswith(".toml"):
            # The files pre-commit passes come last; every .toml is a config to scan — also one a
            # project's own `files:` pattern passes (qar.prod.toml), or one that is missing:
            # ignored as an option, it let the commit pass unscanned.
            files.append(arg)
        else:
            rest.append(arg)
    return files, rest, taken


def _format(options: list[str]) -> str:
    """The --format qar scan will use with ``options`` (also from $QAR_FORMAT); click's own reading."""
    ctx = cli.commands["scan"].make_context("scan", list(options), resilient_parsing=True)
    return str(ctx.params.get("fmt") or "text")


def _json(parts: list[tuple[str, int, str]], code: int) -> str:
    """``--format json``: one document, ``{"exit_code": the hook's, "configs": [{"config": path,
    "exit_code": its scan's, "scan": qar scan's JSON document or null}]}`` (null: qar scan stopped
    before writing one, or the file has no ``[[scan]]``). One document per config, back to back,
    was not JSON."""
    configs = []
    for name, config_code, out in parts:
        try:
            scan = json.loads(out) if out.strip() else None
        except ValueError:
            scan = None
        configs.append({"config": name, "exit_code": config_code, "scan": scan})
    return to_json({"exit_code": code, "configs": configs}) + "\n"


def _nothing_to_scan(path: Path) -> bool:
    try:
        data = user_files.read_toml(path, "scan config")
    except QarError:
        return False  # qar scan says what is wrong with it
    return not data.get("scan")


def _junit(parts: list[tuple[str, Path | int]]) -> str:
    """One testsuite per config: qar scan's own, or (a config it stopped on before any scan, an
    int: its exit code) one erroring testcase, so a JUnit reader never shows that file as passed."""
    root = ET.Element("testsuites", {"name": "qar scan"})
    totals = dict.fromkeys(("tests", "failures", "errors"), 0)
    seconds = 0.0
    for name, path in parts:
        suites = ET.parse(path).getroot().iter("testsuite") if isinstance(path, Path) else [_stopped(name, path)]
        for suite in suites:
            suite.set("name", xml_attribute(f"qar scan {name}"))
            for key in totals:
                totals[key] += int(suite.get(key, "0"))
            seconds += float(suite.get("time", "0"))
            root.append(suite)
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _stopped(name: str, code: int) -> ET.Element:
    suite = ET.Element("testsuite", {"tests": "1", "failures": "0", "errors": "1", "skipped": "0", "time": "0"})
    case = ET.SubElement(suite, "testcase", {"classname": "qar scan", "name": xml_attribute(name)})
    ET.SubElement(case, "error", {"message": f"qar scan exited with {code} before any scan; see its message above"})
    return suite


def _markdown(parts: list[tuple[str, str]]) -> str:
    lines = ["## QaR compliance scan", "", f"{len(parts)} scan config(s):"]
    for name, text in parts:  # each config's summary under its name, its title a line of text
        # (and its own headings one level down: its "### scans" read as a sibling of the config)
        body = re.sub(r"(?m)^(#{1,5}) ", r"#\1 ", text.removeprefix("## ").strip())
        lines += ["", f"### {markdown_inline(name)}", "", body]
    return "\n".join(lines) + "\n"


def _folder(name: str, taken: dict[str, str]) -> str:
    """The folder of a config's pages in ``--report-dir``: its path as one name (sub/qar.toml:
    sub_qar.toml), made unique."""
    base = re.sub(r"[^\w.-]+", "_", name).strip("._") or "qar.toml"
    folder, n = base, 1
    while folder in taken.values():
        n += 1
        folder = f"{base}-{n}"
    return folder


def _index(folders: dict[str, str], report: Path) -> str:
    items = "".join(
        f'<li><a href="{html.escape(quote(folder))}/index.html">{html_text(name)}</a></li>\n'
        for name, folder in folders.items()
        if (report / folder / "index.html").is_file()
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>QaR compliance scan</title></head>\n'
        f"<body><h1>QaR compliance scan</h1>\n<p>One report per scan config:</p>\n<ul>\n{items}</ul></body></html>\n"
    )


def _write(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(terminal(f"Error: cannot write {path!r}: {exc.strerror}; check the folder exists"), file=sys.stderr)
        raise SystemExit(int(ExitCode.USAGE)) from exc


def _guard(files: list[str], options: list[str], combined: dict[str, str]) -> None:
    """The combined ``--junit``/``--markdown`` files are written here, not by ``qar scan``: refuse,
    before any scan, one that is a file some config reads (the config, a scan's source, the store),
    as ``qar scan`` does for its own."""
    writes = list(combined.items())
    reads: list[tuple[str, str | None]] = []
    for name in files:
        reads.append(("a scan config", name))
        try:
            cfg = load_config(name)
        except QarError:
            continue  # qar scan says what is wrong with it
        reads += [(f"the source of scan {s.name!r}", s.source) for s in cfg.scans]
        reads.append(("the results store", cfg.store))
    stores = [options[i + 1] for i, a in enumerate(options[:-1]) if a == "--store"]
    reads += [("the results store", v.split("=", 1)[1]) for v in options if v.startswith("--store=")]
    reads += [("the results store", v) for v in stores]
    try:
        check_not_input(writes, reads)
        for option, path in writes:  # (a missing folder found after every scan ran wastes them)
            user_files.check_writable(path, option)
    except QarError as exc:
        print(terminal(f"Error: {exc}"), file=sys.stderr)
        raise SystemExit(int(exc.exit_code)) from exc


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    files, options, combined = _parse(argv)
    if helps := [o for o in given_options(options) if o in ("-h", "--help")]:
        # (qar scan --help prints the help and exits 0: the commit passed, nothing scanned)
        print(
            f"Error: the hook's args give {helps[0]}, which prints qar scan's help and scans nothing, so the commit "
            "would pass unscanned; leave it out (qar scan --help shows the options)",
            file=sys.stderr,
        )
        return int(ExitCode.USAGE)
    as_json = _format(options) == "json"
    report = combined.pop(REPORT, None) or os.environ.get("QAR_REPORT_DIR") or None
    if report:
        try:  # (a file, '-', a folder that cannot be made: before any scan, as qar scan's own)
            user_files.check_folder(report, REPORT)
        except QarError as exc:
            print(terminal(f"Error: {exc}"), file=sys.stderr)
            return int(exc.exit_code)
    folders: dict[str, str] = {}
    for option in COMBINED:  # $QAR_JUNIT/$QAR_MARKDOWN: each config's scan wrote over the last one's
        if option not in combined and (value := os.environ.get("QAR_" + option[2:].upper())):
            combined[option] = value
    _guard(files, options, combined)
    codes: list[int] = []
    junit: list[tuple[str, Path | int]] = []
    markdown: list[tuple[str, str]] = []
    outputs: list[tuple[str, int, str]] = []  # with --format json: each config's stdout
    with tempfile.TemporaryDirectory(prefix="qar-hook-") as tmp:
        for i, name in enumerate(files):
            print(one_line(f"qar scan {name}"), file=sys.stderr, flush=True)
            if _nothing_to_scan(Path(name)):
                try:  # (its [defaults] and [sources] are still checked, as qar config --check does)
                    config_file.check_file(name)
                except QarError as exc:
                    print(terminal(f"Error: {exc}"), file=sys.stderr, flush=True)
                    codes.append(int(exc.exit_code))
                    junit.append((name, int(exc.exit_code)))
                    markdown.append((name, f"No `[[scan]]` in it, and it is not valid: exit {int(exc.exit_code)}."))
                    outputs.append((name, int(exc.exit_code), ""))
                    continue
                print(one_line(f"{name}: no [[scan]] in it; nothing to scan (ok)"), file=sys.stderr, flush=True)
                markdown.append((name, "No `[[scan]]` in it: nothing to scan."))
                outputs.append((name, 0, ""))
                continue
            mine = {opt: str(Path(tmp) / f"{i}{opt.replace('--', '.')}") for opt in combined}
            extra = [a for opt, path in mine.items() for a in (opt, path)]
            if report:  # (one folder for all: each config's index.html replaced the last one's)
                folders[name] = _folder(name, folders)
                extra += [REPORT, str(Path(report) / folders[name])]
            out = io.StringIO()
            with contextlib.redirect_stdout(out) if as_json else contextlib.nullcontext():
                try:
                    cli.main(["scan", name, *options, *extra], prog_name="qar", auto_envvar_prefix="QAR")
                    code = 0
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
            codes.append(code)
            outputs.append((name, code, out.getvalue()))
            if "--junit" in mine and Path(mine["--junit"]).is_file():
                junit.append((name, Path(mine["--junit"])))
            elif "--junit" in mine and code:
                junit.append((name, code))
            if "--markdown" in mine and Path(mine["--markdown"]).is_file():
                markdown.append((name, Path(mine["--markdown"]).read_text(encoding="utf-8")))
            elif "--markdown" in mine:
                markdown.append((name, f"qar scan exited with {code} before writing a summary."))
            if code == ExitCode.INTERRUPTED:  # Ctrl-C stops the hook, not only this file's scan
                if files[i + 1 :]:
                    not_run = ", ".join(files[i + 1 :])
                    print(one_line(f"Interrupted: not scanned: {not_run}"), file=sys.stderr, flush=True)
                break
        if "--junit" in combined:
            _write(combined["--junit"], _junit(junit))
        if "--markdown" in combined:
            _write(combined["--markdown"], _markdown(markdown))
        if report and folders and Path(report).is_dir():
            _write(str(Path(report) / "index.html"), _index(folders, Path(report)))
    if as_json:
        sys.stdout.write(_json(outputs, worst(codes)))
        sys.stdout.flush()
    return worst(codes)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
