"""Keep secrets out of everything qar shows or stores.

A source can carry a secret in several places: the password of a URL (``user:pw@host``, also
with an unencoded ``@`` in it), a URL query parameter (``?password=…``, ``&token=…``), or a
libpq/ODBC keyword string (``host=db password=… dbname=x``, ``PWD=…;``). :func:`mask_source`
masks every form for display; :func:`secret_values` lists the values so that :func:`scrub` can
remove them from any text (an error message, a driver's echo of the URL). Where a URL's
password ends is the engine's to say (``Engine.url_reading``): SQLAlchemy's reading, or a
native adapter's own. The engines, the audit, the store and the CLI all use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote

from qar_sql.engines.dialects import engine_of

MASK = "***"

#: A key whose lowercase name contains one of these holds a secret (password, passwd, pwd,
#: sslpassword, token, access_token, secret, client_secret, key, api_key, private_key,
#: credentials, auth…). Masking a harmless value (sslkey's path) costs nothing; missing one leaks.
_SECRET_WORDS = ("pass", "pwd", "token", "secret", "key", "credential", "auth", "signature")
#: A key is a whole run of name characters (the lookbehind): a match tried inside a long word
#: would rescan the rest of it at each position, quadratic in a 100,000-character --title.
_KEY = r"(?<![\w.-])[\w.-]+"
#: key=value pairs: in a URL's query (separated by & or ;) or a keyword string (by spaces).
_PAIR = re.compile(rf"(?P<key>{_KEY})(?P<eq>\s*=\s*)(?P<value>'(?:[^'\\]|\\.)*'|\"[^\"]*\"|[^\s&;'\"]*)")
_URL = re.compile(r"(?P<scheme>(?<![\w+.-])[\w+.-]+://)(?P<rest>[^\s'\"<>]*)")


#: Keys that contain a secret word but never hold a secret (qar's own CSV null tokens), so a
#: message quoting them stays readable.
_NOT_SECRET = ("null_token", "null_tokens")


def _is_secret_key(key: str) -> bool:
    k = key.lower()
    return k not in _NOT_SECRET and any(w in k for w in _SECRET_WORDS)


#: SQLAlchemy's own reading of what follows ``scheme://`` (``sqlalchemy.engine.url._parse_url``,
#: 2.x), which is what the driver is given: the password runs to the FIRST ``@`` after the user's
#: ``:`` (so it may hold ``?``, ``/``, ``:``), the host then runs to ``/``, ``:`` or ``?``.
#: tests/test_secrets.py checks it against make_url, so a change in SQLAlchemy is noticed.
_SA_URL = re.compile(
    r"(?:(?P<user>[^:/]*)(?::(?P<password>[^@]*))?@)?"
    r"(?P<host>\[[^/?]+\]|[^/:?]+)?(?::(?P<port>[^/?]*))?"
    r"(?:/(?P<database>[^?]*))?(?:\?(?P<query>.*))?",
    re.S,
)
#: A host[:port] (also empty: a Unix socket) that ends where the path, the query or ;-parameters start.
_AUTHORITY = re.compile(r"[^\s@/?#;]*(?=[/?#;]|\Z)")


def _sa_clean(m: re.Match[str] | None) -> bool:
    """SQLAlchemy's reading is the one a person meant: no ``@`` left in the host, port or
    database (an unencoded ``@`` in the password), a numeric port, and no query part holding an
    ``@`` before its ``=`` (an unencoded ``?`` then ``@`` in the password)."""
    if m is None:
        return False
    if any("@" in (m.group(g) or "") for g in ("host", "port", "database")):
        return False
    if m.group("port") and not m.group("port").isdigit():
        return False
    return all("=" in part.partition("@")[0] for part in (m.group("query") or "").split("&") if "@" in part)


def _userinfo_end(scheme: str, after: str) -> tuple[int, bool]:
    """(index of the ``@`` that ends the userinfo or -1, whether SQLAlchemy reads it the same way)."""
    if after.startswith("/"):  # an empty authority (duckdb:///path, sqlite:///path): no userinfo
        return -1, True
    engine = engine_of(scheme + "://")
    if engine is not None and engine.url_reading == "plain":  # the authority ends at the first / ? #
        cut = re.search(r"[/?#]", after)
        return after.rfind("@", 0, cut.start() if cut else len(after)), True
    m = _SA_URL.match(after)
    if _sa_clean(m):
        assert m is not None
        if m.group("password") is not None:
            return m.end("password"), True
        return (m.end("user") if m.group("user") is not None else -1), True
    # Otherwise the userinfo ends at the LAST @ that a host[:port] follows, so that every @, ?,
    # / or : in the password stays inside it (more is masked rather than any of it shown).
    ats = [i for i, c in enumerate(after) if c == "@" and _AUTHORITY.match(after, i + 1)]
    return (ats[-1] if ats else -1), False


def _split_url(url: str) -> tuple[str, str | None, str | None, str]:
    """(scheme://, user, password, rest after the userinfo): the password is masked whatever it
    holds (an unencoded ``?``, ``@``, ``/`` or ``:``)."""
    scheme, _, after = url.partition("://")
    at, _ = _userinfo_end(scheme, after)
    if at < 0:
        return scheme + "://", None, None, after
    userinfo, rest = after[:at], after[at + 1 :]
    user, colon, password = userinfo.partition(":")
    return scheme + "://", user, (password if colon else None), rest


def _password_pieces(url: str, password: str) -> list[str]:
    """The parts of a password a driver may see apart: where SQLAlchemy reads the URL otherwise
    than qar (an unencoded ``@`` ends its password early), the rest lands in its host, port or
    database and a driver's error ("failed to resolve host 'Secret@…'") would carry it."""
    scheme, _, after = url.partition("://")
    _, same = _userinfo_end(scheme, after)
    if same:
        return [password]
    # What follows each @ is what SQLAlchemy may read as the host (to its first / : ?): scrubbed
    # as one run, since its pieces between # or @ may each be too short to scrub ("y#z").
    tails = [password[i + 1 :] for i, c in enumerate(password) if c == "@"]
    hosts = [re.split(r"[/:?]", tail)[0] for tail in tails]
    return [password, *tails, *hosts, *re.split(r"[@:/?#&=;]", password)]


def _mask_pairs(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        if not _is_secret_key(m.group("key")) or not m.group("value"):
            return m.group(0)
        return f"{m.group('key')}{m.group('eq')}{MASK}"

    return _PAIR.sub(one, text)


def mask_source(source: str) -> str:
    """``source`` safe to print or store: passwords and secret parameters replaced by ``***``.

    A file path comes back unchanged; a URL keeps everything but its secrets (so the same
    source always masks to the same text, which the store groups runs by)."""
    if "://" in source:
        scheme, user, password, rest = _split_url(source)
        userinfo = "" if user is None else user + ("" if password is None else ":" + MASK) + "@"
        path, sep, query = rest.partition("?")
        # Parameters may also follow the path after ';' (Spark Connect: sc://host/;token=…).
        path, semi, params = path.partition(";")
        path += semi + (_mask_pairs(params) if semi else "")
        return scheme + userinfo + path + sep + (_mask_pairs(query) if sep else "")
    if "=" in source:  # a keyword connection string
        return _mask_pairs(source)
    return source


def secret_values(source: str | None) -> list[str]:
    """Every secret value in ``source``, as written and URL-decoded."""
    if not source:
        return []
    found: list[str] = []
    if "://" in source:
        _, _, password, rest = _split_url(source)
        if password:
            found += [p for p in _password_pieces(source, password) if p]
        path, _, query = rest.partition("?")
        text = path.partition(";")[2] + "&" + query  # ;-parameters (Spark Connect) and the query
    else:
        text = source if "=" in source else ""
    for m in _PAIR.finditer(text):
        value = m.group("value").strip("'\"")
        if _is_secret_key(m.group("key")) and value:
            found.append(value)
    return sorted({v for s in found for v in (s, unquote(s))}, key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every URL's secrets, every ``password=…``-style pair and every known secret
    value replaced by ``***``. Values under three characters are matched only in those forms
    (replacing them everywhere would garble the message)."""
    text = _URL.sub(lambda m: mask_source(m.group(0)), text)
    text = _mask_pairs(text)
    for s in sorted({s for s in secrets if s and len(s) >= 3}, key=len, reverse=True):
        text = text.replace(s, MASK)
    return text
