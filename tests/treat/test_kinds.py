"""The treatment kinds are a registry, one module per kind (issue 25; as soda-core registers its
check types): a kind is one file in ``qar_sql/treat/kinds/`` and its line in ``KINDS``, and the
modules that read and bind a treatments file never dispatch on a kind's name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qar_sql.treat import treatments
from qar_sql.treat.kinds import KINDS
from qar_sql.treat.kinds.base import Kind

KINDS_DIR = Path(treatments.__file__).parent / "kinds"
#: The modules of kinds/ that hold no kind: the registry and what kinds share.
NOT_KINDS = {"__init__", "base"}


def test_every_kind_module_declares_one_registered_kind():
    modules = {p.stem for p in KINDS_DIR.glob("*.py")} - NOT_KINDS
    registered = {kind.step.__module__.rsplit(".", 1)[1] for kind in KINDS.values()}
    assert registered == modules
    assert all(isinstance(k, Kind) and KINDS[k.name] is k for k in KINDS.values())


def test_the_kind_names_and_their_order_are_unchanged():
    """Messages list the kinds in this order ("Use one of bands, map, …")."""
    assert treatments.KINDS == (
        "bands", "map", "hierarchy", "top", "bottom", "suppress", "suppress_records",
        "pram", "noise", "microaggregation", "swap", "shuffle",
    )  # fmt: skip
    assert treatments.PERTURBATIVE == ("pram", "noise", "microaggregation", "swap", "shuffle")


@pytest.mark.parametrize("module", ["treatments.py", "perturb.py"])
def test_no_dispatch_on_a_kind_name(module):
    """``t.kind == "bands"`` or ``kind in ("noise", …)`` in the binder would bring back the dispatch
    chains: a kind's behaviour is its module's (only messages may name kinds)."""
    code = (Path(treatments.__file__).parent / module).read_text(encoding="utf-8")
    code = re.sub(r"'[^'\n]*kind = [^'\n]*'", "", code)  # a message's advice such as 'kind = "map"'
    named = [k for k in KINDS if re.search(rf"[\"']{k}[\"']", code)]
    assert not named, f"{module} names the kinds {named}; move the behaviour into qar_sql/treat/kinds/"


def test_a_kind_from_the_registry_runs_like_the_rest():
    """A treatments file is read through the registry: the shape check of each kind rejects with
    its own message (here: bands' and swap's)."""
    with pytest.raises(treatments.TreatmentError, match=r"treatments\.x needs exactly one of width"):
        treatments.parse('[treatments.x]\ncolumn = "a"\nkind = "bands"\n')
    with pytest.raises(treatments.TreatmentError, match=r"treatments\.x\.p = 0 must be a percentage"):
        treatments.parse('seed = 1\n[treatments.x]\ncolumn = "a"\nkind = "swap"\np = 0\n')
