"""qar draws without touching pyplot (issue 31, item 6): ``matplotlib.use("Agg")`` in qar's
figures switched a notebook's backend, so after ``to_html()`` or ``eliminate.plot()`` the
user's ``plt.show()`` showed nothing. After every drawing call the backend and pyplot's open
figures are what they were — with a backend other than Agg chosen beforehand, so a switch shows."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pytest
from conftest import AGE_BANDS_TOML

import qar_sql
from qar_sql.demo import DEMO_COLUMNS, write_population

matplotlib = pytest.importorskip("matplotlib")
COLUMNS = list(DEMO_COLUMNS[:6])


@pytest.fixture
def user_pyplot():
    """A notebook user's pyplot: the SVG backend and one figure of their own, both restored after."""
    import matplotlib.pyplot as plt

    before = matplotlib.get_backend()
    matplotlib.use("svg")
    plt.figure()
    state = (matplotlib.get_backend(), plt.get_fignums())
    assert state[0] == "svg" and len(state[1]) == 1
    try:
        yield lambda: (matplotlib.get_backend(), plt.get_fignums())
        assert (matplotlib.get_backend(), plt.get_fignums()) == state
    finally:
        plt.close("all")
        matplotlib.use(before)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("pyplot")
    path = d / "demo.duckdb"
    con = duckdb.connect(str(path))
    write_population(con, "population", n=800, seed=3)
    kept = ", ".join("(age // 10) * 10 as age" if c == "age" else f'"{c}"' for c in COLUMNS)
    con.execute(f"create table population_treated as select person_id, {kept} from population")
    con.close()
    (d / "t.toml").write_text(AGE_BANDS_TOML)
    return path


def test_every_figure_leaves_the_users_backend_and_figures_alone(demo, user_pyplot, tmp_path):
    from qar_sql.compliance.store import recorded_audit
    from qar_sql.output.render_compare import plot_compare
    from qar_sql.output.render_history import plot_history
    from qar_sql.output.render_uniqueness import plot as plot_uniqueness
    from qar_sql.ranking.eliminate import plot as plot_elimination

    state = user_pyplot()
    where = {"table": "population", "columns": COLUMNS, "p": 2}
    store = str(tmp_path / "store.duckdb")
    for _ in range(2):  # two runs: the report's history section draws its curve
        recorded_audit(store, str(demo), **where)
    report = qar_sql.report(
        str(demo),
        **where,
        pi_u=0.2,
        key=["person_id"],
        treatments=str(demo.parent / "t.toml"),
        store=store,
        group_size=5,
        classic=True,
        compare=str(demo),
        treated_table="population_treated",
        link="person_id",
    )
    html = report.to_html()
    assert html.count("<svg") >= 5  # the report drew its figures
    assert user_pyplot() == state, "to_html()"

    elimination = qar_sql.eliminate(
        str(demo), key=["person_id"], by=("dt", "random"), step=50, max_removed=100, **where
    )
    plot_elimination(elimination, str(tmp_path / "eliminate.png"))
    assert user_pyplot() == state, "eliminate.plot()"

    uniqueness = qar_sql.uniqueness(str(demo), group_size=5, **where)
    plot_uniqueness(uniqueness, tmp_path / "uniqueness.svg")
    assert user_pyplot() == state, "uniqueness plot"

    compared = compare_demo(demo)
    plot_compare(compared, tmp_path / "compare.png")
    assert user_pyplot() == state, "plot_compare()"

    plot_history(qar_sql.history(store), tmp_path / "history.png")
    assert user_pyplot() == state, "history plot"
    for name in ("eliminate.png", "uniqueness.svg", "compare.png", "history.png"):
        assert (tmp_path / name).stat().st_size > 1000, name


def test_result_plot_draws_on_an_axes_and_leaves_pyplot_alone(demo, user_pyplot):
    """``result.plot(ax=None)`` (issue 28): each returns the Axes it drew on — the caller's, or
    that of a new figure pyplot does not know — and what it drew is checked against numbers
    computed here."""
    from matplotlib.axes import Axes
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    state = user_pyplot()
    where = {"table": "population", "columns": COLUMNS, "p": 2}

    audit = qar_sql.audit(str(demo), pi_u=0.2, **where)
    ax = audit.plot()
    assert isinstance(ax, Axes) and user_pyplot() == state, "AuditResult.plot()"
    # θ of every pair of columns, counted here by DuckDB: the bars are its density histogram.
    con = duckdb.connect(str(demo), read_only=True)
    rows = con.execute("select count(*) from population").fetchone()[0]
    theta = []
    for i, a in enumerate(COLUMNS):
        for b in COLUMNS[i + 1 :]:
            sql = f'select count(*) from (select distinct "{a}", "{b}" from population)'
            theta.append(con.execute(sql).fetchone()[0] / rows)
    con.close()
    bins = min(60, max(10, int(len(theta) ** 0.5)))
    expected, _ = np.histogram(theta, bins=bins, density=True)
    assert np.allclose([p.get_height() for p in ax.patches], expected)
    labels = [line.get_label() for line in ax.get_lines()]
    assert "fitted GPD tail" in labels and any(lab.startswith("threshold u") for lab in labels)
    mine = Figure()
    FigureCanvasAgg(mine)
    given = mine.subplots()
    assert audit.plot(ax=given) is given  # the caller's Axes, drawn on, returned

    elimination = qar_sql.eliminate(
        str(demo), key=["person_id"], by=("dt", "random"), step=50, max_removed=100, **where
    )
    ax = elimination.plot()
    assert isinstance(ax, Axes) and user_pyplot() == state, "Elimination.plot()"
    for name, points in elimination.curves.items():
        (line,) = [line for line in ax.get_lines() if line.get_label() == name]
        want = [0.0] + [np.nan if pt.reduction is None else 100 * pt.reduction for pt in points]
        assert np.allclose(line.get_ydata(), want, equal_nan=True)

    uniqueness = qar_sql.uniqueness(str(demo), group_size=5, **where)
    ax = uniqueness.plot(n_curves=2)
    assert isinstance(ax, Axes) and user_pyplot() == state, "UniquenessResult.plot()"
    assert len(ax.get_lines()) == 3 * 2 + 1  # exact, KL, uniform per QI, and the line at k
    # Every drawn π(k) is a probability, and the exact curve at k = 1 is 1 (one person is unique).
    exact = ax.get_lines()[0]
    assert exact.get_xdata()[0] == 1 and exact.get_ydata()[0] == pytest.approx(1.0)

    compared = compare_demo(demo)
    ax = compared.plot()
    assert isinstance(ax, Axes) and user_pyplot() == state, "CompareResult.plot()"
    # One count per treated record, and the dashed line at the DTC, the median DCR.
    assert sum(p.get_height() for p in ax.patches) == len(compared.distributions.dcr) == rows
    assert ax.get_lines()[0].get_xdata()[0] == pytest.approx(float(np.median(compared.distributions.dcr)))


def compare_demo(demo):
    """The demo population against its treated copy (figures on), as both plot tests draw it."""
    return qar_sql.compare(
        str(demo),
        str(demo),
        table="population",
        treated_table="population_treated",
        link="person_id",
        columns=COLUMNS,
        p=2,
        figures=True,
    )


def test_saved_plot_keeps_its_labels_titles_name_a_frame_and_a_title_can_be_set(tmp_path):
    """A bare Figure had no layout engine, so a saved plot cut off its x label; a frame's audit
    was titled "θ of <pandas.DataFrame>", and no title could be given."""
    pd = pytest.importorskip("pandas")
    from qar_sql.demo import generate_population

    people = pd.DataFrame(generate_population(120, seed=1))
    audit = qar_sql.audit(people, exclude=["person_id"], p=2)
    ax = audit.plot()
    fig = ax.figure
    fig.savefig(tmp_path / "theta.png")  # draws it, as a saved file is drawn
    renderer = fig.canvas.get_renderer()
    for text in (ax.xaxis.label, ax.yaxis.label, ax.title):
        box = text.get_window_extent(renderer)
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1, text.get_text()
    assert ax.get_title().startswith("θ of pandas DataFrame (120 rows) (p = 2, ")
    assert audit.plot(title="people, pairs").get_title() == "people, pairs"


def test_a_figure_is_a_notebook_cells_value_in_a_fresh_kernel(tmp_path, monkeypatch):
    """``ax.figure`` as a cell's last line showed only its text in a kernel where pyplot was
    never imported (no inline backend registered a display for a bare Figure)."""
    pytest.importorskip("pandas")
    from tests.docs.test_notebook_doc import _execute

    cell = (
        "import pandas as pd, qar_sql\n"
        "from qar_sql.demo import generate_population\n"
        "df = pd.DataFrame(generate_population(200, seed=1))\n"
        "qar_sql.audit(df, exclude=['person_id'], p=2).plot().figure"
    )
    done, probe = _execute([cell, "import sys; print('matplotlib.pyplot' in sys.modules)"], tmp_path, monkeypatch)
    (result,) = [out for out in done.outputs if out.output_type == "execute_result"]
    assert result.data["image/png"], result.data.keys()
    assert probe.outputs[0].text.strip() == "False"  # shown with no pyplot state involved


def test_names_with_dollars_are_drawn_as_written_and_long_ones_fit(tmp_path):
    """A column named ``$\\foo$`` was read by matplotlib as TeX: ``qar uniqueness --plot`` and
    ``qar report`` failed after all their work with "unexpected ValueError: ParseFatalException"
    (exit 3), and ``$x^2$`` was drawn as x². A 120-character name pushed the κ panel's tick labels
    out of the saved image."""
    pd = pytest.importorskip("pandas")
    from click.testing import CliRunner
    from matplotlib.text import Text

    from qar_sql.cli.main import cli
    from qar_sql.output.render_uniqueness import plot as plot_uniqueness

    rng = np.random.default_rng(1)
    names = ["$\\foo$", "$x^2$", "a_b$c", "x" * 120, "%d {} \\n", "plain"]
    frame = pd.DataFrame({name: rng.integers(0, 6 + 7 * i, 300) for i, name in enumerate(names)})
    frame.to_csv(tmp_path / "hostile.csv", index=False)

    def literal_texts(fig):
        texts = [t for t in fig.findobj(Text) if t.get_text()]
        assert texts
        return all(not t._preprocess_math(t.get_text())[1] for t in texts)  # no mathtext anywhere

    uniqueness = qar_sql.uniqueness(frame, p=2, group_size=20)
    ax = uniqueness.plot()
    ax.figure.savefig(tmp_path / "u.png")
    assert literal_texts(ax.figure)
    shown = [t.get_text().replace("\\$", "$") for t in ax.get_legend().get_texts()]
    for text, q in zip(shown, uniqueness.qis[:3], strict=True):  # the QI's names as written, cut at 40
        name = ", ".join(q.columns)
        assert text == f"{name if len(name) <= 40 else name[:39] + '…'} (κ = {q.kappa:.3f}, M = {q.domain:,})"

    duck = duckdb.connect(str(tmp_path / "t.duckdb"))
    duck.execute('create table "$\\t$" as select * from read_csv(?)', [str(tmp_path / "hostile.csv")])
    duck.close()
    audit = qar_sql.audit(str(tmp_path / "t.duckdb"), table="$\\t$", p=2)
    ax = audit.plot()
    ax.figure.savefig(tmp_path / "a.png")
    assert literal_texts(ax.figure) and ax.get_title().startswith("θ of \\$\\t\\$ (p = 2")

    path = plot_uniqueness(uniqueness, tmp_path / "u2.png")
    assert path.stat().st_size > 1000
    for args in (
        ["uniqueness", str(tmp_path / "hostile.csv"), "-p", "2", "-g", "20", "--plot", str(tmp_path / "u.svg")],
        ["report", str(tmp_path / "hostile.csv"), "-p", "2", "-o", str(tmp_path / "r.html")],
    ):
        r = CliRunner().invoke(cli, [*args, "-q"])
        assert r.exit_code == 0, r.output
    svg = (tmp_path / "u.svg").read_text(encoding="utf-8")
    assert "$\\foo$" in svg and "x^2" in svg  # drawn as written (the SVG keeps its text as text)
    assert "$\\foo$" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_long_tick_labels_stay_inside_the_saved_uniqueness_plot(tmp_path, monkeypatch):
    """The figure that ``qar uniqueness --plot`` saves (kept as it is saved) has every κ tick label
    inside the image: 120-character names had them cut off at the bottom."""
    pd = pytest.importorskip("pandas")
    import matplotlib.figure

    from qar_sql.output.render_uniqueness import plot as plot_uniqueness

    rng = np.random.default_rng(2)
    frame = pd.DataFrame({f"{'long' * 30}_{i}": rng.integers(0, 5 + 3 * i, 300) for i in range(5)})
    uniqueness = qar_sql.uniqueness(frame, p=2, group_size=20)
    saved = {}
    original = matplotlib.figure.Figure.savefig

    def keep(fig, *args, **kwargs):
        saved["fig"] = fig
        return original(fig, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", keep)  # the real savefig, which also keeps fig
    plot_uniqueness(uniqueness, tmp_path / "u.png")
    fig = saved["fig"]
    renderer = fig.canvas.get_renderer()
    assert fig.get_suptitle() == "pandas DataFrame (300 rows): groups of k = 20"  # was "<pandas.DataFrame>"
    right = fig.axes[1]
    labels = right.get_xticklabels()
    assert len(labels) == len(uniqueness.qis) and all(len(t.get_text()) <= 24 for t in labels)
    for text in [*labels, right.yaxis.label, right.title, *fig.axes[0].get_legend().get_texts()]:
        box = text.get_window_extent(renderer)
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1, text.get_text()


def test_the_anonymize_frontier_takes_a_title_and_keeps_its_layout(tmp_path):
    """``AnonymizeResult.plot(title="…")`` drew the default title (the text was read as True) and
    switched the figure to the tight layout with a UserWarning, the caller's figure too."""
    pd = pytest.importorskip("pandas")
    import warnings

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from qar_sql.demo import generate_population

    people = pd.DataFrame(generate_population(400, seed=4))
    (tmp_path / "age.toml").write_text("[hierarchies.age]\nwidths = [5, 10, 20]\n")
    result = qar_sql.anonymize(
        people, hierarchy=[f"age={tmp_path / 'age.toml'}"], k=2, risk_below=0.9, p=2, columns=COLUMNS
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert result.plot(title="Ages in bands").get_title() == "Ages in bands"
        ax = result.plot(title=True)
        assert ax.get_title() == "pandas DataFrame (400 rows): loss against T̂"
        assert ax.figure.get_layout_engine().__class__.__name__ == "ConstrainedLayoutEngine"
        assert result.plot().get_title() == ""
        mine = Figure()
        FigureCanvasAgg(mine)
        result.plot(mine.subplots(), title=True)
        assert mine.get_layout_engine() is None  # the caller's figure keeps its own layout
