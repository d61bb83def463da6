"""Each command's parameters: one frozen keyword-only dataclass per command, the only place its
defaults and the rules between its options live. Light on purpose (no numpy, scipy or database
code at import): the click options take their defaults from here when ``qar --help`` loads, the
libraries take the dataclass as their input, and ``qar_sql.commands`` builds them."""

from typing import TYPE_CHECKING

from qar_sql.lazy import submodules

if not TYPE_CHECKING:  # to mypy, a module __getattr__ would make every name valid, typos too
    __getattr__ = submodules(__name__)  # qar_sql.<package>.<module> after a plain import qar_sql
