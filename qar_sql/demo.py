"""Synthetic population for ``qar demo``.

:func:`generate_population` draws a seeded, realistic-looking population of people: an age
pyramid, a few hundred postcodes with Zipf-like sizes nested in regions, and attributes that
depend on each other the way census variables do (children are never married and hold no
degree, occupation follows education, income follows occupation, and so on). Nothing in it is
real: the postcodes are made-up outward codes and every row is drawn at random.

:func:`write_population` writes that population into a DuckDB table. The geography (which
postcodes exist, their sizes and regions) is fixed; the seed only changes who lives there, so
two seeds give two samples of the same country.

Generation is vectorised numpy; 200 000 rows take a fraction of a second.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from qar_sql.engines.source import DUCKDB_SUFFIXES
from qar_sql.errors import DatabaseError, UsageError, require_whole
from qar_sql.user_files import check_writable, foreign_file
from qar_sql.user_text import one_line

__all__ = ["DEMO_COLUMNS", "DEMO_TABLE", "generate_population", "write_demo", "write_population"]

#: Quasi-identifier columns the demo audits by default (``person_id`` is the direct identifier
#: and is not one of them).
DEMO_COLUMNS: tuple[str, ...] = tuple(
    "age sex postcode region marital_status education employment_status occupation income_band household_size "
    "number_of_children country_of_birth ethnicity".split()
)

_ID_COLUMN = "person_id"
#: The table ``qar demo`` writes the population to.
DEMO_TABLE = "population"


#: The label sets, regions and probability tables, kept as data in ``demo_tables.toml`` beside this
#: module; the index names below (``_NEVER``, ``_ED_BACH``, …) follow its label sets' order.
_DATA = tomllib.loads(resources.files("qar_sql").joinpath("demo_tables.toml").read_text(encoding="utf-8"))


def _labels(name: str) -> np.ndarray:
    return np.array(_DATA[f"{name}_labels"], dtype=object)


def _numbers(name: str) -> np.ndarray:
    return np.array(_DATA[name], dtype=float)


_SEX, _MARITAL, _EDUCATION, _EMPLOYMENT, _OCCUPATION, _INCOME, _ETHNICITY = map(
    _labels, ("sex", "marital", "education", "employment", "occupation", "income", "ethnicity")
)
_NEVER, _MARRIED, _CIVIL, _DIVORCED, _SEPARATED, _WIDOWED = range(6)
_ED_NONE, _ED_PRIMARY, _ED_LOWER, _ED_UPPER, _ED_VOC, _ED_BACH, _ED_MAST, _ED_DOC = range(8)
_EM_CHILD, _EM_STUDENT, _EM_EMP, _EM_SELF, _EM_UNEMP, _EM_RETIRED, _EM_HOME, _EM_SICK = range(8)
# Ten ISCO-like major groups, then the labels used for people not in work.
_OC_MANAGER, _OC_PROF, _OC_TECH, _OC_CLERK, _OC_SERVICE, _OC_AGRI = range(6)
_OC_CRAFT, _OC_MACHINE, _OC_ELEM, _OC_ARMED = range(6, 10)
_OC_CHILD, _OC_STUDENT, _OC_RETIRED, _OC_NOTWORK = range(10, 14)
_INCOME_EDGES = _numbers("income_edges")

# Countries of birth: the domestic one, then the foreign ones, most common first.
_FOREIGN = _DATA["foreign_countries"]
_COUNTRY = np.array(["United Kingdom", *_FOREIGN], dtype=object)
# The ethnicity most people born in a country report: White where a country is not listed.
_ETHNICITY_OF = {country: label for label, countries in _DATA["born_ethnicity"].items() for country in countries}
_COUNTRY_ETHNICITY = np.array([list(_ETHNICITY).index(_ETHNICITY_OF.get(c, "White")) for c in _COUNTRY])

# --------------------------------------------------------------------------------------------
# Geography: regions (name, population in millions, share born abroad, postcode areas) and
# outward-code areas.
# --------------------------------------------------------------------------------------------

_REGIONS: list[list[Any]] = _DATA["regions"]
_REGION = np.array([r[0] for r in _REGIONS], dtype=object)
_REGION_FOREIGN = np.array([r[2] for r in _REGIONS])
_LONDON = 6

_N_POSTCODES = 420
_ZIPF_EXPONENT = 1.1  # sizes ∝ (rank + _ZIPF_OFFSET) ** -_ZIPF_EXPONENT (Zipf-Mandelbrot)
_ZIPF_OFFSET = 25.0
_GEOGRAPHY_SEED = 8_675_309  # fixed: the seed of generate_population changes people, not places


def _build_geography() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Postcode labels, their region index, their population weight and how urban they are."""
    rng = np.random.default_rng(_GEOGRAPHY_SEED)
    pop = np.array([r[1] for r in _REGIONS])
    region_of = rng.choice(len(_REGIONS), size=_N_POSTCODES, p=pop / pop.sum())
    # Zipf-like sizes, handed out to postcodes in random order; then nudged so that regional
    # totals roughly follow the regions' real populations (the rank structure is kept).
    rank = rng.permutation(_N_POSTCODES) + 1
    weight = (rank + _ZIPF_OFFSET) ** -_ZIPF_EXPONENT
    totals = np.bincount(region_of, weights=weight, minlength=len(_REGIONS))
    weight *= ((pop / pop.sum()) / (totals / totals.sum()))[region_of]
    weight /= weight.sum()
    # Outward-code-like labels: an area of the region plus a district number.
    labels = np.empty(_N_POSTCODES, dtype=object)
    next_district: dict[str, int] = {}
    area_pick = rng.random(_N_POSTCODES)
    for i in range(_N_POSTCODES):  # 420 iterations, once per import: geography, not people
        areas = _REGIONS[region_of[i]][3]
        area = areas[int(area_pick[i] * len(areas))]
        next_district[area] = next_district.get(area, 0) + 1
        labels[i] = f"{area}{next_district[area]}"
    # Urbanicity in [0, 1]: big postcodes and London are urban.
    urban = np.clip((np.log(weight) - np.log(weight).min()) / np.ptp(np.log(weight)), 0.0, 1.0)
    urban = np.where(region_of == _LONDON, np.maximum(urban, 0.8), urban)
    return labels, region_of, weight, urban


_POSTCODE, _POSTCODE_REGION, _POSTCODE_WEIGHT, _POSTCODE_URBAN = _build_geography()

# --------------------------------------------------------------------------------------------
# Age pyramids (ages 0..99), one for urban and one for rural places.
# --------------------------------------------------------------------------------------------

_AGES = np.arange(100)


def _pyramid(urban: bool) -> np.ndarray:
    a = _AGES.astype(float)
    survival = 1.0 / (1.0 + np.exp((a - 83.0) / 5.5))
    w = survival * (1.0 + 0.22 * np.exp(-(((a - 58.0) / 8.0) ** 2)))  # baby-boom bulge
    w *= np.where(a < 16, 0.93, 1.0)  # falling birth rate
    if urban:
        w *= 1.0 + 0.65 * np.exp(-(((a - 30.0) / 8.0) ** 2))
        w *= np.where(a >= 65, 0.75, 1.0)
    else:
        w *= 1.0 + 0.30 * np.exp(-(((a - 62.0) / 10.0) ** 2))
        w *= 1.0 - 0.30 * np.exp(-(((a - 24.0) / 5.0) ** 2))
    return np.cumsum(w / w.sum())


_PYRAMID_URBAN = _pyramid(urban=True)
_PYRAMID_RURAL = _pyramid(urban=False)


# --------------------------------------------------------------------------------------------
# Conditional probability tables by age band (rows need not sum to 1; they are normalised),
# and the incomes (demo_tables.toml says what each is).
# --------------------------------------------------------------------------------------------

_MARITAL_BANDS, _EDUCATION_BANDS, _EMPLOYMENT_BANDS = (
    np.array(_DATA[f"{name}_bands"]) for name in ("marital", "education", "employment")
)
_MARITAL_P, _EDUCATION_P, _EMPLOYMENT_P, _OCCUPATION_BY_EDUCATION, _FAMILY_SIZE_P = map(
    _numbers, ("marital", "education", "employment", "occupation_by_education", "family_size")
)
_SELF_EMPLOYED_OCC, _OCC_MEDIAN_INCOME, _EDU_INCOME_LOG, _OTHER_MEDIAN_INCOME, _NO_INCOME = map(
    _numbers,
    (
        "self_employed_occupation",
        "occupation_median_income",
        "education_income_log",
        "other_median_income",
        "no_income",
    ),
)


def _band(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Index of the band (``edges`` are the lower bounds) each value falls in."""
    return np.searchsorted(edges, values, side="right") - 1


def _pick(rng: np.random.Generator, weights: np.ndarray) -> np.ndarray:
    """One categorical draw per row of ``weights`` (n × k, non-negative, rows not all zero)."""
    cum = np.cumsum(weights, axis=1)
    u = rng.random(weights.shape[0]) * cum[:, -1]
    idx = (cum <= u[:, None]).sum(axis=1)
    return np.minimum(idx, weights.shape[1] - 1)


def _text(codes: np.ndarray, labels: np.ndarray, missing: np.ndarray | None = None) -> np.ndarray:
    """Category codes as their labels, ``None`` where ``missing``."""
    decoded = labels[codes]
    if missing is not None:
        decoded[missing] = None
    return decoded


def generate_population(n: int = 100_000, seed: int = 20261122) -> dict[str, np.ndarray]:
    """Draw ``n`` synthetic people; the same ``seed`` always gives the same rows.

    Returns one numpy array per column, ``person_id`` first and then :data:`DEMO_COLUMNS`.
    ``person_id`` (1..n), ``age``, ``household_size`` and ``number_of_children`` are integer
    arrays; every other column is an object array of strings in which ``None`` marks a missing
    value (some ``occupation``, ``income_band`` and ``ethnicity`` answers are missing, as in
    real surveys).
    """
    require_whole(n, 1, f"the demo population size must be a positive integer, got {n!r}")
    require_whole(seed, 0, f"the demo seed must be a non-negative integer, got {seed!r}")
    n, rng = int(n), np.random.default_rng(int(seed))

    # Where people live. Region is a function of postcode.
    pc = rng.choice(_N_POSTCODES, size=n, p=_POSTCODE_WEIGHT)
    region = _POSTCODE_REGION[pc]
    urban = _POSTCODE_URBAN[pc]

    # Age: a mix of the urban and the rural pyramid, by how urban the postcode is.
    u = rng.random(n)
    age = np.where(
        rng.random(n) < urban,
        np.searchsorted(_PYRAMID_URBAN, u, side="right"),
        np.searchsorted(_PYRAMID_RURAL, u, side="right"),
    )
    age = np.minimum(age, 99)

    # Sex: 51% boys at birth, women outlive men.
    p_male = np.where(age < 55, 0.512, 0.512 - 0.0045 * (age - 55))
    male = rng.random(n) < p_male

    # Country of birth: mostly domestic; more migrants in London and among working ages.
    age_factor = np.select([age < 16, age < 20, age < 50, age < 65], [0.35, 0.8, 1.5, 1.0], 0.6)
    foreign = rng.random(n) < np.minimum(_REGION_FOREIGN[region] * age_factor, 0.95)
    n_foreign = len(_FOREIGN)
    zipf = np.arange(1, n_foreign + 1, dtype=float) ** -1.5
    country = np.zeros(n, dtype=np.int64)
    country[foreign] = 1 + rng.choice(n_foreign, size=int(foreign.sum()), p=zipf / zipf.sum())

    # Ethnicity: mostly the group of the country of birth; UK-born people are more diverse
    # when young and in London (second generations).
    ethnicity = _COUNTRY_ETHNICITY[country].copy()
    second_gen = ~foreign & (rng.random(n) < np.where(region == _LONDON, 0.30, 0.08) * np.where(age < 40, 1.4, 0.6))
    mix = np.array([0.0, 0.30, 0.16, 0.14, 0.07, 0.05, 0.05, 0.10, 0.09, 0.02, 0.02])
    ethnicity[second_gen] = rng.choice(len(_ETHNICITY), size=int(second_gen.sum()), p=mix / mix.sum())
    drift = rng.random(n) < 0.03  # anyone may report another group
    ethnicity[drift] = rng.choice(len(_ETHNICITY), size=int(drift.sum()))

    # Marital status depends on age (and, for widowhood, on sex).
    wm = _MARITAL_P[_band(age, _MARITAL_BANDS)].copy()
    wm[:, _WIDOWED] *= np.where(male, 0.5, 1.6)
    marital = _pick(rng, wm)
    partnered = (marital == _MARRIED) | (marital == _CIVIL)

    # Highest qualification depends on age; people born abroad are a little more polarised.
    we = _EDUCATION_P[_band(age, _EDUCATION_BANDS)].copy()
    adult = age >= 21
    polar = (foreign & adult)[:, None]
    we = np.where(polar, we * np.array([1.3, 1.2, 0.9, 0.8, 0.8, 1.25, 1.3, 1.3]), we)
    education = _pick(rng, we)
    degree = education >= _ED_BACH
    low_ed = education <= _ED_PRIMARY

    # Employment status depends on age, education and sex.
    ws = _EMPLOYMENT_P[_band(age, _EMPLOYMENT_BANDS)].copy()
    ws[:, _EM_STUDENT] *= np.where((age >= 18) & (education < _ED_UPPER), 0.3, 1.0)
    ws[:, _EM_EMP] *= np.where(degree, 1.15, np.where(low_ed & (age >= 18), 0.8, 1.0))
    ws[:, _EM_UNEMP] *= np.where(degree, 0.6, np.where(low_ed, 1.8, 1.0))
    ws[:, _EM_SICK] *= np.where(degree, 0.5, np.where(low_ed, 1.8, 1.0))
    ws[:, _EM_HOME] *= np.where(male, 0.3, 2.5)
    employment = _pick(rng, ws)
    working = (employment == _EM_EMP) | (employment == _EM_SELF)

    # Occupation: by education for people in work, a status label for everyone else.
    wo = _OCCUPATION_BY_EDUCATION[education].copy()
    wo = np.where((employment == _EM_SELF)[:, None], wo * _SELF_EMPLOYED_OCC, wo)
    young = age < 25
    wo[:, _OC_MANAGER] *= np.where(young, 0.2, 1.0)
    wo[:, _OC_SERVICE] *= np.where(young, 1.6, 1.0)
    wo[:, _OC_ELEM] *= np.where(young, 1.5, 1.0)
    wo[:, _OC_AGRI] *= np.where(urban > 0.5, 0.3, 2.0)
    wo[:, _OC_ARMED] *= np.where(age > 55, 0.1, 1.0)
    occupation = np.select(
        [employment == _EM_CHILD, employment == _EM_STUDENT, employment == _EM_RETIRED, working],
        [_OC_CHILD, _OC_STUDENT, _OC_RETIRED, _pick(rng, wo)],
        _OC_NOTWORK,
    )

    # Number of children ever had: a completed family size (most people two, the never married
    # mostly none, a long rare tail up to 12), of which a share rising with age has been born
    # yet; women start earlier than men. Nobody under 16 has children.
    family = _pick(rng, _FAMILY_SIZE_P[np.select([partnered, marital == _NEVER], [0, 2], 1)])
    onset = np.where(male, 30.0, 27.5)
    born = 1.0 / (1.0 + np.exp(-(age - onset) / 3.5))
    kids = np.where(age < 16, 0, rng.binomial(family, born))

    # Household size: children live with one or two parents and siblings; adults with a
    # partner, the children still at home, sometimes their own parents or lodgers.
    child_hh = 1 + np.where(rng.random(n) < 0.76, 2, 1) + rng.poisson(0.9, n)
    child_hh += rng.random(n) < 0.04  # a grandparent
    p_home = np.select([age < 45, age < 55, age < 65], [0.95, 0.6, 0.2], 0.03)
    kids_home = rng.binomial(kids, p_home)
    p_parents = np.clip(0.55 - 0.04 * (age - 18), 0.0, 0.55)
    with_parents = (marital == _NEVER) & (rng.random(n) < p_parents)
    cohabiting = (partnered & (rng.random(n) < 0.96)) | (
        (marital == _NEVER) & (age >= 22) & (age < 50) & (rng.random(n) < 0.22)
    )
    adult_hh = 1 + cohabiting + kids_home + np.where(with_parents, 1 + rng.poisson(1.2, n), 0)
    adult_hh += rng.poisson(np.where(urban > 0.6, 0.25, 0.1))  # sharers, lodgers
    household = np.minimum(np.where(age < 18, child_hh, adult_hh), 15)

    # Personal income: log-normal around a median set by occupation, education, age and sex
    # for workers; benefits, pensions or nothing for everyone else.
    occ_major = np.minimum(occupation, _OC_ARMED)
    experience = np.maximum(-0.00045 * (age - 50.0) ** 2, -0.5)
    log_med = np.log(_OCC_MEDIAN_INCOME[occ_major]) + _EDU_INCOME_LOG[education] + experience
    log_med += np.where(male, 0.0, np.log(0.88))
    sigma = np.where(employment == _EM_SELF, 0.8, 0.45)
    log_med += np.where(employment == _EM_SELF, np.log(0.9), 0.0)
    other_med = _OTHER_MEDIAN_INCOME[employment] * np.where((employment == _EM_RETIRED) & degree, 1.6, 1.0)
    log_med = np.where(working, log_med, np.log(other_med))
    sigma = np.where(working, sigma, np.where(employment == _EM_RETIRED, 0.6, 0.5))
    income = np.exp(log_med + sigma * rng.standard_normal(n))
    p_none = _NO_INCOME[employment]
    no_income = rng.random(n) < p_none
    income_band = np.where(no_income, 0, 1 + np.searchsorted(_INCOME_EDGES, income, side="right"))

    # Item non-response, as in real surveys: adults only, more often for the self-employed
    # and high earners (income), for hard-to-code jobs (occupation) and at random (ethnicity).
    p_miss_income = 0.025 * np.where(employment == _EM_SELF, 2.0, 1.0)
    p_miss_income *= np.where(income_band >= 6, 1.6, 1.0)
    miss_income = (age >= 16) & (rng.random(n) < p_miss_income)
    miss_occupation = (age >= 16) & (rng.random(n) < np.where(working, 0.025, 0.005))
    miss_ethnicity = rng.random(n) < 0.01

    return {
        _ID_COLUMN: np.arange(1, n + 1, dtype=np.int64),
        "age": age.astype(np.int32),
        "sex": _text(male.astype(np.int8), _SEX),
        "postcode": _text(pc, _POSTCODE),
        "region": _text(region, _REGION),
        "marital_status": _text(marital, _MARITAL),
        "education": _text(education, _EDUCATION),
        "employment_status": _text(employment, _EMPLOYMENT),
        "occupation": _text(occupation, _OCCUPATION, miss_occupation),
        "income_band": _text(income_band, _INCOME, miss_income),
        "household_size": household.astype(np.int32),
        "number_of_children": kids.astype(np.int32),
        "country_of_birth": _text(country, _COUNTRY),
        "ethnicity": _text(ethnicity, _ETHNICITY, miss_ethnicity),
    }


def write_population(con: Any, table: str = "population", n: int = 100_000, seed: int = 20261122) -> None:
    """Create (or replace) ``table`` in the DuckDB connection ``con`` with the demo population.

    ``table`` is one identifier, quoted safely, so any name works (``we"ird; name`` included).
    """
    if not isinstance(table, str) or not table or "\x00" in table:
        raise UsageError(f"the demo table name must be a non-empty string, got {table!r}")
    import duckdb

    # A dict of numpy arrays is read by DuckDB directly (no pandas/pyarrow needed); text columns
    # are object arrays with None for NULL, as generate_population returns them.
    from qar_sql.engines.session import temp_name

    view = temp_name("demo")
    quoted = '"' + table.replace('"', '""') + '"'  # one identifier, whatever it holds
    try:
        con.register(view, generate_population(n, seed))
        try:
            # (fetchall drains the statement's result so the connection is free again)
            con.execute(f'create or replace table {quoted} as select * from "{view}"').fetchall()
        finally:
            con.unregister(view)
    except duckdb.Error as exc:
        raise DatabaseError(f"could not write the demo table {table!r}: {exc}") from exc


#: The comment qar demo puts on its table: a file holding only such a table is its own, and
#: running the demo again replaces it without asking.
DEMO_COMMENT = "qar demo population (synthetic)"


def _check_target(con: Any, path: str) -> None:
    """Refuse to write into a DuckDB file that holds anything but an earlier demo population."""
    rows = con.execute(
        "select table_name, coalesce(comment, '') from duckdb_tables() where database_name = current_database() "
        "union all select view_name, coalesce(comment, '') from duckdb_views() "
        "where database_name = current_database() and not internal"
    ).fetchall()
    foreign = [name for name, comment in rows if not (name == "population" and comment == DEMO_COMMENT)]
    if foreign:
        what = (
            "a table 'population'"
            if "population" in foreign
            else f"tables of its own ({', '.join(sorted(foreign)[:5])})"
        )
        raise UsageError(
            f"{path!r} already exists and holds {what}, which qar demo did not write; pass --overwrite "
            "to write the demo population (table 'population') into it anyway, or choose another --path"
        )


def write_demo(path: str, *, rows: int, seed: int, overwrite: bool = False) -> None:
    """Write the population to the DuckDB file ``path`` (table ``population``, :data:`DEMO_TABLE`).
    An existing file is written only if it holds nothing but an earlier demo population, or with
    ``overwrite`` (which replaces its table ``population`` and leaves the rest)."""
    import duckdb

    if path.strip() and Path(path).is_dir():
        raise UsageError(f"--path {path!r} is a folder; name a DuckDB file such as qar_demo.duckdb")
    # Before the file is opened: DuckDB opens a CSV or Parquet file as a database of views (it
    # was said to hold "tables of its own"), made a file '-', and a missing folder or a symlink
    # loop was exit 3.
    check_writable(path, "--path", DUCKDB_SUFFIXES)
    if foreign_file(path):  # (DuckDB would say exit 3, or write its tables into a SQLite file)
        raise UsageError(
            f"--path {path!r} is not a DuckDB database file; name a new file or a DuckDB file such as qar_demo.duckdb"
        )
    existed = Path(path).exists()
    try:
        con = duckdb.connect(path)
    except duckdb.Error as exc:
        raise DatabaseError(f"cannot write the demo database {path!r}: {one_line(str(exc))}") from exc
    try:
        if existed and not overwrite:
            _check_target(con, path)
        write_population(con, DEMO_TABLE, n=rows, seed=seed)
        con.execute(f"comment on table {DEMO_TABLE} is '{DEMO_COMMENT}'")
    finally:
        con.close()
