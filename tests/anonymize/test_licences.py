"""Pastore et al.'s Table 1 (Valle d'Aosta driver licences, QID year of birth, sex, municipality,
rows with an empty QID value dropped) as nodes of ``qar anonymize``'s lattice, with the
hierarchies of ``examples/anonymize/``: each row's distinct combinations and singletons are the
paper's (and ``qar whatif``'s, docs/treatments.md)."""

from __future__ import annotations

import pytest

import qar_sql
from qar_sql.anonymization.choose import _without_nulls
from qar_sql.anonymization.evaluate import evaluator
from qar_sql.anonymization.hierarchy import read_hierarchy, read_interval_toml
from qar_sql.anonymization.models import NoSingletons
from tests.conftest import REPO

QI = ["anno_nascita", "sesso", "comune_residenza"]
#: node (year, sex, municipality) → (classes, singletons): Pastore's Table 1 for Valle d'Aosta.
TABLE_1 = {
    (0, 0, 0): (9174, 1684),  # original
    (0, 1, 0): (5166, 621),  # S
    (0, 0, 1): (167, 4),  # M
    (1, 0, 0): (2750, 211),  # Y_ran
    (0, 1, 1): (85, 1),  # S + M
    (1, 1, 0): (1453, 75),  # S + Y_ran
    (1, 0, 1): (43, 1),  # M + Y
    (1, 1, 1): (22, 1),  # S + M + Y
}


def test_table_1_rows_are_nodes(shared_data):
    path = shared_data / "driver_license" / "driverLicense_ValleAosta.csv"
    if not path.is_file():
        pytest.skip("the driver licences are not in ../shared/data")
    ex = REPO / "examples" / "anonymize"
    hierarchies = {
        **read_interval_toml(ex / "licences_anno_nascita.toml"),
        "sesso": read_hierarchy(ex / "licences_hierarchy_sesso.csv", "sesso"),
        "comune_residenza": read_hierarchy(ex / "licences_hierarchy_comune_residenza.csv", "comune_residenza"),
    }
    with qar_sql.connect(str(path)) as session:
        with evaluator(_without_nulls(session, QI), hierarchies, [NoSingletons()], qi=QI) as ev:
            assert ev.rows == 87_464
            for e in ev.evaluate(list(TABLE_1)):
                c = e.classes
                assert (int(c.classes.sum()), int(c.classes[c.sizes == 1].sum())) == TABLE_1[e.levels], e.levels
