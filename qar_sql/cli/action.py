"""The GitHub Action's helpers (``action.yml``), run as ``python $GITHUB_ACTION_PATH/qar_sql/cli/action.py``
with the standard library only, so they work whatever qar-sql version the action installed.

``args``: the ``args`` input ($QAR_ACTION_ARGS) split as a shell reads quotes — with no glob,
variable or command expansion — written NUL-separated for bash's ``mapfile -d ''``.

``results``: the action's outputs (the largest T̂, the counts per status, the files) appended to
$GITHUB_OUTPUT from qar scan's JSON, a line per scan, and a workflow annotation (``::error`` /
``::warning``, on the config file when there is one) per scan above a threshold or in error.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import sys
from collections.abc import Mapping

#: Options the action gives qar scan itself: its outputs are read from the JSON it asks for.
OWN = ("-f", "--format")
#: Options the action gives qar scan from an input (and --markdown, where the runner has a step
#: summary): one in args as well replaced it silently (click keeps the last), so the input's file
#: was never written though the outputs named it and the artifact looked for it.
FROM_INPUTS = {"--junit": "from the junit input", "--report-dir": "from the report-dir input"}


#: qar scan's options that take a value, long and short (a test checks them against click's): the
#: word after one is its value whatever it looks like (--select -h), and a short one takes the
#: rest of a bundle (-qfjson). --store's value may be left out: a word starting with - is no value.
VALUED = frozenset(
    {
        "--dbt-manifest", "--url", "--dbt-project", "--profile", "--target", "--profiles-dir", "--select",
        "--fail-above", "--warn-above", "--min-exceedances", "--junit", "--markdown", "--report-dir",
        "--format", "-f", "--jobs", "-j", "--log-level",
    }
)  # fmt: skip
OPTIONAL_VALUE = frozenset({"--store"})


def given_options(args: list[str]) -> list[str]:
    """The options ``args`` gives qar scan, as click reads them: each value skipped, each short
    option of a bundle named (``-qh`` is -q and -h: only an exact -h was refused, and the help ran
    no scan, exit 0; ``-qfmarkdown`` replaced the action's --format json)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        word, i = args[i], i + 1
        if word == "--":
            break
        if word.startswith("--"):
            name, eq, _ = word.partition("=")
            out.append(name)
            if not eq and name in VALUED:
                i += 1
            elif not eq and name in OPTIONAL_VALUE and i < len(args) and not args[i].startswith("-"):
                i += 1
        elif word.startswith("-") and len(word) > 1:
            for k, char in enumerate(word[1:], start=1):
                out.append("-" + char)
                if "-" + char in VALUED:
                    i += k == len(word) - 1  # (its value is the next word, else the rest of this one)
                    break
    return out


def split_args(text: str, summary: str = "") -> list[str]:
    """``text`` split as a shell reads quotes; refused (exit with a workflow error) when it gives an
    option the action gives qar scan itself (``summary``: the runner's $GITHUB_STEP_SUMMARY)."""
    try:
        args = shlex.split(text)
    except ValueError as exc:
        raise SystemExit(f"::error title=qar scan::the args input cannot be split ({exc}); close its quotes") from exc
    options = given_options(args)
    own = [a for a in options if a in OWN]
    if own:
        raise SystemExit(
            f"::error title=qar scan::the args input gives {_data(own[0])}, but the action runs qar scan with "
            "--format json to read its outputs; leave it out (the HTML reports are in the report-dir input's folder)"
        )
    if helps := [a for a in options if a in ("-h", "--help")]:
        raise SystemExit(
            f"::error title=qar scan::the args input gives {helps[0]}, which prints the help and runs no scan, "
            "so the job would pass unscanned; leave it out"
        )
    taken = FROM_INPUTS | ({"--markdown": "to the job's step summary"} if summary else {})
    for option in options:
        if option in taken:
            raise SystemExit(
                f"::error title=qar scan::the args input gives {_data(option)}, which the action sets itself "
                f"({taken[option]}); leave it out of args"
                + (f" and set {taken[option].removeprefix('from ')}" if option in FROM_INPUTS else "")
            )
    return args


#: Bidirectional controls, shown by their code point (as the Markdown and JUnit outputs show them):
#: in a log line they reorder what follows. qar_sql.user_text.BIDI_CONTROLS, copied: this file runs
#: on the standard library alone (a test checks that the two agree).
BIDI = dict.fromkeys((0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)))


#: Control characters and line or paragraph separators (Unicode's Cc, Zl, Zp) and lone surrogates,
#: written as their Python escape (``\x1b``): the log viewer runs ANSI escape sequences and its
#: lines break at more than ``\n``. qar_sql.user_text.control_or_separator, copied (a test checks
#: that they agree).
CONTROLS = frozenset((*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, *range(0xD800, 0xE000)))


def _shown(c: str) -> str:
    if ord(c) in BIDI:
        return f"⟦U+{ord(c):04X}⟧"
    if ord(c) in CONTROLS:
        return c.encode("unicode_escape", "backslashreplace").decode("ascii")
    return c


def _data(text: str) -> str:
    """A workflow command's message: one line (the runner's escapes for %, CR and LF), every
    other control character and every bidirectional control shown."""
    text = str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return "".join(_shown(c) for c in text)


def _line(text: str) -> str:
    """A line of the log that is no workflow command whatever a scan's name holds: the runner
    reads ``::`` at the start of a line (after blanks) and its legacy ``##[`` anywhere in it."""
    line = _data(text).replace("##[", "##%5B")
    return "%3A" + line.lstrip()[1:] if line.lstrip().startswith("::") else line


def _prop(text: str) -> str:
    """A workflow command's property value (file=, title=)."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(scan: Mapping, config: str) -> str | None:
    """The ``::error``/``::warning`` line of one scan of qar scan's JSON, or None when it passed."""
    status, risk = scan.get("status"), scan.get("risk")
    where = f"file={_prop(config)}," if config else ""
    head = f"{where}title={_prop('qar scan ' + str(scan.get('name')))}"
    if status == "fail":
        return f"::error {head}::risk {_num(risk)} is above fail_above {_num(scan.get('fail_above'))}"
    if status == "warn":
        return f"::warning {head}::risk {_num(risk)} is above warn_above {_num(scan.get('warn_above'))}"
    if status == "error":
        return f"::error {head}::{_data(scan.get('error') or 'no risk')}"
    return None


def _num(value: object) -> str:
    """A number of the JSON as the log shows it; anything else (a JSON from another qar version,
    a hand-edited file) as written, so one odd field cannot stop the outputs of every scan."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        with contextlib.suppress(OverflowError):  # (an integer of 400 digits has no float)
            return f"{value:.6g}"
    return _data(str(value))


def outputs(scans: list[Mapping], env: Mapping[str, str]) -> dict[str, str]:
    """The step's outputs. The JUnit file and the report folder are named only when qar scan
    wrote them in this run (its JSON lists scans, and they are there): a scan refused before it
    ran named a JUnit file that a later step then failed to find (or found from an earlier run)."""
    risks = [s["risk"] for s in scans if isinstance(s.get("risk"), int | float)]
    junit, pages = env.get("QAR_ACTION_JUNIT", ""), env.get("QAR_ACTION_REPORT_DIR", "")
    out = {
        "risk": _num(max(risks)) if risks else "",
        "scans": str(len(scans)),
        **{status: str(sum(s.get("status") == status for s in scans)) for status in ("ok", "warn", "fail", "error")},
        "junit": junit if scans and os.path.isfile(junit) else "",
        "json": env.get("QAR_ACTION_JSON", ""),
        "report-dir": pages if scans and os.path.isfile(os.path.join(pages, "index.html")) else "",
    }
    return {k: v.replace("\n", " ") for k, v in out.items()}


def results(env: Mapping[str, str]) -> None:
    try:
        with open(env["QAR_ACTION_JSON"], encoding="utf-8") as fh:
            scans = json.load(fh)["scans"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        scans = []  # qar scan stopped before its results (a bad config: its message is in the log)
    scans = [s for s in scans if isinstance(s, dict)] if isinstance(scans, list) else []
    for scan in scans:
        risk = scan.get("risk")
        # (one line per scan, whatever its name holds: a line starting "::" is a workflow command)
        shown = f"{scan.get('name')}: {scan.get('status')}" + (f" (T̂ = {_num(risk)})" if risk is not None else "")
        print(_line(shown))
        # ('false' in any case turns them off, as the input says; GitHub compares without case)
        wanted = env.get("QAR_ACTION_ANNOTATIONS", "true").strip().lower() != "false"
        if wanted and (line := annotation(scan, env.get("QAR_ACTION_CONFIG", ""))):
            print(line)
    with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as fh:
        fh.writelines(f"{k}={v}\n" for k, v in outputs(scans, env).items())


def check_json(target: str, env: Mapping[str, str]) -> int:
    """2 with an annotation where the ``json`` input cannot become a file (empty, a folder, in a
    missing folder) or names a file qar scan writes (the JUnit XML, a report page), else 0: run
    before the scan, so a bad input costs no scan, and again when the JSON is moved there."""
    if not target.strip():
        print("::error title=qar scan::the json input is empty; give it a file name (the outputs are read from it)")
        return 2
    real = os.path.realpath(target)
    junit, pages = env.get("QAR_ACTION_JUNIT", ""), env.get("QAR_ACTION_REPORT_DIR", "")
    if (junit and os.path.realpath(junit) == real) or (
        pages and real.endswith(".html") and real.startswith(os.path.realpath(pages) + os.sep)
    ):  # (the move would replace the JUnit XML or a report page)
        what = "the junit input" if junit and os.path.realpath(junit) == real else "a page of the report-dir input"
        print(
            f"::error title=qar scan::{_data(f'the json input names {what}, which qar scan writes; give json another file name')}"
        )
        return 2
    if os.path.isdir(target):  # (a move into it left the outputs empty: risk=, scans=0)
        print(f"::error title=qar scan::{_data(f'the json input, {target}, is a folder; name a file in it')}")
        return 2
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        print(
            f"::error title=qar scan::{_data(f'the folder of the json input, {folder}, does not exist; create it or write elsewhere')}"
        )
        return 2
    return 0


def keep_json(scratch: str, env: Mapping[str, str]) -> int:
    """Move qar scan's JSON from ``scratch`` to the ``json`` input, unless that names a file the
    scan read (the config, a file source, the store) or sits in a missing folder: a shell
    redirect there would have destroyed the input, or failed as exit 1 (read as a risk)."""
    target = env.get("QAR_ACTION_JSON", "")
    try:
        with open(scratch, encoding="utf-8") as fh:
            report = json.load(fh)
    except (OSError, ValueError, RecursionError):  # (standard library only: qar_sql.user_files is not here)
        report = {}
    report = report if isinstance(report, dict) else {}
    listed = report.get("scans")
    scans: list = listed if isinstance(listed, list) else []
    reads = [("the config input", env.get("QAR_ACTION_CONFIG", "")), ("the results store", report.get("store"))]
    reads += [(f"the source of scan {s.get('name')!r}", s.get("source")) for s in scans if isinstance(s, dict)]
    real = os.path.realpath(target)
    for what, path in reads:
        if isinstance(path, str) and path and os.path.isfile(path) and os.path.realpath(path) == real:
            print(
                f"::error title=qar scan::{_data(f'the json input names {what}, which qar scan reads; give json another file name')}"
            )
            return 2
    if check_json(target, env):
        return 2
    try:
        shutil.move(scratch, target)
    except OSError as exc:
        print(f"::error title=qar scan::{_data(f'cannot write the json input, {target}: {exc.strerror}')}")
        return 2
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "check-json":
        return check_json(argv[1], os.environ)
    if len(argv) == 2 and argv[0] == "keep-json":
        return keep_json(argv[1], os.environ)
    if argv == ["args"]:
        args = split_args(os.environ.get("QAR_ACTION_ARGS", ""), os.environ.get("GITHUB_STEP_SUMMARY", ""))
        sys.stdout.write("".join(a + "\0" for a in args))
        return 0
    if argv == ["results"]:
        results(os.environ)
        return 0
    print("usage: action.py args|results|check-json TARGET|keep-json SCRATCH", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
