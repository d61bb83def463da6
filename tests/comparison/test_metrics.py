"""The release metrics against brute force: the full distance matrix, ties included.

No database here: the projection and the metrics are pure. The brute force computes every
distance with numpy broadcasting and applies the definitions of qar_sql.comparison.metrics
literally (min, count at the min, strictly-closer count), so the kd-tree code is checked
against an independent computation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import pdist

from qar_sql.comparison import metrics
from qar_sql.comparison.metrics import below_radius, tie_radius
from qar_sql.comparison.projection import category_tokens, fit_projection, value_token
from qar_sql.errors import DataError, ParameterError


def full_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2))


def brute_closest(original, treated):
    D = np.sort(full_distances(treated, original), axis=1)
    d1, d2 = D[:, 0], D[:, 1]
    nndr = np.array([1.0 if b == 0 else a / b for a, b in zip(d1, d2)])
    return d1, nndr


def brute_link(original, treated, own):
    D = full_distances(original, treated)
    right, cloak = [], []
    for i in range(len(original)):
        dmin = D[i].min()
        tied = D[i] <= tie_radius(dmin)
        right.append(1.0 / tied.sum() if tied[own[i]] else 0.0)
        cloak.append(int((D[i] <= below_radius(D[i, own[i]])).sum()))
    return np.array(right), np.array(cloak)


def brute_ties(original, treated, own):
    """The Avatar paper's local cloaking (octopize/avatar-paper,
    metrics/privacy_metrics/local_cloaking.py): the other treated records at a distance up to
    and equal to the own one's."""
    D = full_distances(original, treated)
    return np.array([int((D[i] <= tie_radius(D[i, own[i]])).sum()) - 1 for i in range(len(original))])


def brute_infer(original, treated, y_orig, y_treated, categorical):
    D = full_distances(original, treated)
    out = []
    for i in range(len(original)):
        tied = D[i] <= tie_radius(D[i].min())
        if categorical:
            out.append(np.mean(y_treated[tied] == y_orig[i]))
        else:
            vals = y_treated[tied][~np.isnan(y_treated[tied])]
            out.append(abs(vals.mean() - y_orig[i]) if len(vals) and not np.isnan(y_orig[i]) else np.nan)
    return np.array(out)


def grid_pair(seed: int, n: int = 60, dims: int = 3):
    """Integer coordinates in a small grid: many exact ties and duplicate records."""
    rng = np.random.default_rng(seed)
    original = rng.integers(0, 3, size=(n, dims)).astype(float)
    treated = original + rng.integers(-1, 2, size=(n, dims))
    perm = rng.permutation(n)  # the treated rows in another order: own[i] = where o_i's went
    own = np.empty(n, dtype=np.int64)
    own[perm] = np.arange(n)
    return original, treated[perm], own


@pytest.mark.parametrize("seed", range(6))
def test_closest_against_brute_force(seed):
    original, treated, _ = grid_pair(seed)
    got = metrics.closest_originals(original, treated)
    d1, nndr = brute_closest(original, treated)
    np.testing.assert_allclose(got.dcr, d1, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.nndr, nndr, rtol=0, atol=1e-12)
    assert got.dtc == pytest.approx(np.median(d1), abs=1e-12)
    assert got.cdr == pytest.approx(np.median(nndr), abs=1e-12)
    assert (got.d2 == 0).any() or seed > 0  # the grid puts originals on treated records


@pytest.mark.parametrize("seed", range(6))
def test_link_against_brute_force(seed):
    original, treated, own = grid_pair(seed)
    got = metrics.link(original, treated, own, exact_share=1.0)
    right, cloak = brute_link(original, treated, own)
    np.testing.assert_allclose(got.right, right, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(got.local_cloaking, cloak)
    assert got.hidden_rate == pytest.approx(1 - right.mean(), abs=1e-15)
    assert got.median_local_cloaking == np.median(cloak)
    # Ties are exercised: some originals see several treated records at the minimum.
    assert (got.tied > 1).any()
    assert 0 < got.right[got.right > 0].min() < 1


@pytest.mark.parametrize("seed", range(4))
def test_link_on_continuous_coordinates(seed):
    rng = np.random.default_rng(100 + seed)
    original = rng.normal(size=(200, 4))
    treated = original + rng.normal(scale=0.7, size=original.shape)
    own = np.arange(200)
    got = metrics.link(original, treated, own, exact_share=1.0)
    right, cloak = brute_link(original, treated, own)
    np.testing.assert_allclose(got.right, right, atol=1e-15)
    np.testing.assert_array_equal(got.local_cloaking, cloak)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("exact_share", [0.5, 0.95, 1.0])
def test_local_cloaking_by_growing_k_against_brute_force(monkeypatch, seed, exact_share):
    """Counts read from k nearest distances, k grown round by round (from 2 here, each next k
    estimated from 16 sampled undecided points, so several rounds run, some on a low estimate):
    the sorted counts equal brute force up to the asked quantile, the rest are lower bounds (k:
    at least every exact count) — so the median (and the 95th percentile the figure clips at) is
    exact. Grid coordinates: ties on the radius are counted as the brute force counts them."""
    monkeypatch.setattr(metrics, "CLOAKING_FIRST_K", 2)
    monkeypatch.setattr(metrics, "_SAMPLE_POINTS", 16)
    for original, treated, own in (grid_pair(seed, n=150), continuous_pair(seed)):
        _, cloak = brute_link(original, treated, own)
        got = metrics.link(original, treated, own, exact_share=exact_share).local_cloaking
        n = len(cloak)
        exact = got == cloak
        assert (got <= cloak).all() and (got[~exact] >= got[exact].max(initial=-1)).all()
        keep = min(n, int(np.ceil(exact_share * n)) + 1)
        np.testing.assert_array_equal(np.sort(got)[:keep], np.sort(cloak)[:keep])
        assert np.median(got) == np.median(cloak)
        if exact_share >= 0.95:
            assert np.percentile(got, 95) == np.percentile(cloak, 95)
        if exact_share == 1.0:
            np.testing.assert_array_equal(got, cloak)
        # The count with ties, from the same neighbour distances: exact up to the same quantile.
        ties = brute_ties(original, treated, own)
        got_ties = metrics.link(original, treated, own, exact_share=exact_share).local_cloaking_ties
        assert (got_ties <= ties).all()
        np.testing.assert_array_equal(np.sort(got_ties)[:keep], np.sort(ties)[:keep])
        assert np.median(got_ties) == np.median(ties)
        assert (ties >= cloak).all()


def continuous_pair(seed: int, n: int = 300):
    """Records far from their own treated record (large counts: several rounds of k)."""
    rng = np.random.default_rng(200 + seed)
    original = rng.normal(size=(n, 3))
    return original, original + rng.normal(scale=1.5, size=original.shape), np.arange(n)


@pytest.mark.parametrize("seed", range(5))
def test_inference_against_brute_force(seed):
    original, treated, own = grid_pair(seed, n=80)
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=len(original))
    y_treated = np.where(rng.random(len(y)) < 0.7, y, rng.integers(0, 3, size=len(y)))[np.argsort(own)]
    got = metrics.infer_categorical(original, treated, y, y_treated)
    np.testing.assert_allclose(got, brute_infer(original, treated, y, y_treated, True), atol=1e-12)

    yn = rng.normal(size=len(original))
    yn[::7] = np.nan
    yn_treated = (yn + rng.normal(scale=0.3, size=len(yn)))[np.argsort(own)]
    yn_treated[::5] = np.nan
    got = metrics.infer_numeric(original, treated, yn, yn_treated)
    want = brute_infer(original, treated, yn, yn_treated, False)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], atol=1e-12)


# --- through the projection ----------------------------------------------------------------


def table(n: int, seed: int = 0, nulls: bool = True) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n).astype(float)
    income = rng.lognormal(10, 0.5, n)
    sex = rng.choice(np.array(["F", "M"], dtype=object), n)
    zone = rng.integers(1, 6, n)
    if nulls:
        age[::11] = np.nan
        sex[::13] = None
    return {"age": age, "income": income, "sex": sex, "zone": zone}


NUMERIC, CATEGORICAL = ("age", "income"), ("sex", "zone")


def batches_of(data: dict[str, np.ndarray], size: int = 37):
    n = len(next(iter(data.values())))

    def gen():
        for s in range(0, n, size):
            yield {k: v[s : s + size] for k, v in data.items()}

    return gen


def coords(projection, data):
    return np.concatenate([projection.transform(b) for b in batches_of(data)()])


def saiph_frame(data, projection):
    """The table as saiph's whole-table fit reads it: numeric NULLs at the projection's mean."""
    cols = {}
    for j, c in enumerate(projection.numeric):
        cols[c] = np.where(np.isnan(data[c]), projection.mean[j], data[c])
    for c in projection.categorical:
        cols[c] = category_tokens(data[c])
    return pd.DataFrame(cols)


@pytest.mark.parametrize(
    "numeric,categorical",
    [(NUMERIC, CATEGORICAL), (NUMERIC, ()), ((), CATEGORICAL)],
    ids=["famd", "pca", "mca"],
)
def test_projection_equals_saiph_exact_fit(numeric, categorical):
    """Without NULLs the streaming fit + our transform equal saiph.fit(nf=None) (full SVD) +
    saiph.transform, up to each axis' sign."""
    import saiph

    data = table(300, nulls=False)
    proj = fit_projection(batches_of(data), numeric, categorical, "all")
    assert proj.method == {2: "famd"}.get(len(numeric) and len(categorical) and 2, "pca" if numeric else "mca")
    got = coords(proj, data)
    frame = saiph_frame(data, proj)
    model = saiph.fit(frame, nf=None)
    want = saiph.transform(frame, model).to_numpy()[:, : proj.components]
    # Distances are what the metrics use; they do not depend on how an axis of a repeated
    # singular value is chosen (an MCA of two variables has such axes).
    np.testing.assert_allclose(pdist(got), pdist(want), atol=1e-10)
    s = np.asarray(model.s)[: proj.components]
    distinct = np.ones(len(s), dtype=bool)
    distinct[1:] &= np.diff(s) < -1e-9 * s[0]
    distinct[:-1] &= np.diff(s) < -1e-9 * s[0]
    sign = np.sign((want * got).sum(axis=0))
    np.testing.assert_allclose((want * sign)[:, distinct], got[:, distinct], atol=1e-10)
    assert distinct.sum() >= 2


def test_projection_is_reproducible_and_batch_independent():
    data = table(400, seed=3)
    a = fit_projection(batches_of(data, 50), NUMERIC, CATEGORICAL, 3)
    b = fit_projection(batches_of(data, 50), NUMERIC, CATEGORICAL, 3)
    ca, cb = coords(a, data), coords(b, data)
    np.testing.assert_array_equal(ca, cb)  # bit for bit: no randomized SVD
    # Different batch sizes give the same axes (TSQR is exact) up to rounding.
    c = fit_projection(batches_of(data, 400), NUMERIC, CATEGORICAL, 3)
    np.testing.assert_allclose(coords(c, data), ca, atol=1e-9)
    # The first 3 axes of 'all' are the 3 axes.
    full = fit_projection(batches_of(data, 50), NUMERIC, CATEGORICAL, "all")
    np.testing.assert_allclose(coords(full, data)[:, :3], ca, atol=1e-9)


def test_null_numeric_sits_at_the_mean_and_null_category_is_its_own():
    """A NULL age scales to 0; a NULL sex is a modality of its own (reference: the scaled
    matrix built by hand, with saiph's FAMD scaling, times the fitted axes)."""
    data = table(200, seed=5)
    proj = fit_projection(batches_of(data), NUMERIC, CATEGORICAL, "all")
    age = data["age"]
    assert proj.mean[0] == pytest.approx(np.nanmean(age))
    assert proj.scale[0] == pytest.approx(np.nanstd(age))
    assert set(proj.levels["sex"]) == {"=F", "=M", "NULL"}
    # Reference coordinates from the explicit scaled matrix.
    cols = [np.where(np.isnan(age), 0.0, (age - np.nanmean(age)) / np.nanstd(age))]
    inc = data["income"]
    cols.append((inc - inc.mean()) / inc.std())
    axes = [proj.numeric_axes[0], proj.numeric_axes[1]]
    want = np.outer(cols[0], axes[0]) + np.outer(cols[1], axes[1])
    for c in CATEGORICAL:
        tokens = category_tokens(data[c])
        for tok, row in proj.levels[c].items():
            p = np.mean(tokens == tok)
            ind = (tokens == tok).astype(float)
            # The table row is V[:, m]/√p; the axis column itself is table·√p.
            v = proj.tables[c][row] * np.sqrt(p)
            want += np.outer((ind - p) / np.sqrt(p), v)
    np.testing.assert_allclose(coords(proj, data), want, atol=1e-10)


def test_value_tokens_are_canonical():
    assert value_token(2) == value_token(2.0) == value_token(np.int64(2)) == "=2"
    assert value_token(None) == value_token(float("nan")) == "NULL"
    assert value_token("NULL") == "=NULL"  # a real text 'NULL' is not a NULL
    assert value_token(True) == "=true"
    assert value_token(2.5) == "=2.5"
    from decimal import Decimal

    assert value_token(Decimal("2.00")) == "=2"


def test_unseen_treated_category_scales_like_saiph():
    import saiph

    data = table(150, nulls=False)
    proj = fit_projection(batches_of(data), NUMERIC, CATEGORICAL, "all")
    treated = {k: v.copy() for k, v in data.items()}
    treated["zone"] = treated["zone"].copy()
    treated["zone"][:10] = 99  # never in the original
    frame = saiph_frame(data, proj)
    model = saiph.fit(frame, nf=None)
    want = saiph.transform(saiph_frame(treated, proj), model).to_numpy()[:, : proj.components]
    got = coords(proj, treated)
    sign = np.sign((coords(proj, data) * saiph.transform(frame, model).to_numpy()[:, : proj.components]).sum(0))
    np.testing.assert_allclose(want * sign, got, atol=1e-10)


def test_identical_tables_of_distinct_records():
    data = table(300, seed=7)
    proj = fit_projection(batches_of(data), NUMERIC, CATEGORICAL, 5)
    o = coords(proj, data)
    assert len(np.unique(o, axis=0)) == len(o)  # distinct records
    t = np.concatenate([proj.transform(b) for b in batches_of(data, 91)()])  # other batches
    closest = metrics.closest_originals(o, t)
    linkage = metrics.link(o, t, np.arange(len(o)))
    assert closest.dtc == 0.0
    assert linkage.hidden_rate == 0.0
    assert linkage.median_local_cloaking == 0.0
    assert (linkage.local_cloaking == 0).all()


def test_duplicates_follow_the_fair_tie_rule():
    """Each record three times, released unchanged: the attacker finds 3 records at distance 0
    and is right with probability 1/3, so the hidden rate is 2/3 (brute force agrees)."""
    base = table(50, seed=8, nulls=False)
    data = {k: np.concatenate([v, v, v]) for k, v in base.items()}
    proj = fit_projection(batches_of(data), NUMERIC, CATEGORICAL, 4)
    o = coords(proj, data)
    linkage = metrics.link(o, o.copy(), np.arange(len(o)))
    assert linkage.hidden_rate == pytest.approx(2 / 3, abs=1e-12)
    right, cloak = brute_link(o, o, np.arange(len(o)))
    np.testing.assert_allclose(linkage.right, right, atol=1e-15)
    np.testing.assert_array_equal(linkage.local_cloaking, cloak)
    assert (linkage.local_cloaking == 0).all()  # tied records are not strictly closer


def test_independently_shuffled_columns_hide_almost_everyone():
    n = 1500
    data = table(n, seed=9, nulls=False)
    data["height"] = np.random.default_rng(1).normal(170, 10, n)
    numeric = (*NUMERIC, "height")
    rng = np.random.default_rng(2)
    treated = {k: v[rng.permutation(n)] for k, v in data.items()}  # each column on its own
    proj = fit_projection(batches_of(data), numeric, CATEGORICAL, 5)
    linkage = metrics.link(coords(proj, data), coords(proj, treated), np.arange(n))
    # P(right) ≈ 1/n per record: the number of right links is about Poisson(1).
    assert 1 - 5 / n <= linkage.hidden_rate <= 1.0
    assert linkage.median_local_cloaking > n / 10


def test_components_larger_than_possible():
    data = table(100, nulls=False)
    # 2 numeric + (2 + 5) modalities − 2 complete categorical columns = 7 axes at most.
    with pytest.raises(ParameterError, match="--components 8 is more than the 7 axes"):
        fit_projection(batches_of(data), NUMERIC, CATEGORICAL, 8)
    assert fit_projection(batches_of(data), NUMERIC, CATEGORICAL, 8, cap=True).components == 7
    with pytest.raises(ParameterError, match="at least 1"):
        fit_projection(batches_of(data), NUMERIC, CATEGORICAL, 0)
    with pytest.raises(ParameterError, match="not a number"):
        fit_projection(batches_of(data), NUMERIC, CATEGORICAL, "five")
    one = {k: v[:1] for k, v in data.items()}
    with pytest.raises(DataError, match="no axis"):
        fit_projection(batches_of(one), NUMERIC, CATEGORICAL, 2)


# --- the real original/avatar pair ---------------------------------------------------------


@pytest.mark.shared_data
def test_real_avatar_pair_against_brute_force(shared_data):
    """Wisconsin breast cancer and its avatar release (row i made from row i): every metric
    from the kd-tree code equals the brute force over the full 683 × 683 distance matrix."""
    folder = shared_data / "octopize"
    original = pd.read_csv(folder / "breast_cancer_wisconsin.csv").drop(columns="Sample_code_number")
    avatar = pd.read_csv(folder / "breast_cancer_wisconsin_avatarized_k20.csv")
    numeric = [c for c in original.columns if c != "Class"]

    def as_batches(df):
        return lambda: iter([{c: df[c].to_numpy() for c in df.columns}])

    proj = fit_projection(as_batches(original), numeric, ["Class"], 5)
    o = proj.transform({c: original[c].to_numpy() for c in original.columns})
    t = proj.transform({c: avatar[c].to_numpy() for c in avatar.columns})
    own = np.arange(len(o))
    closest = metrics.closest_originals(o, t)
    d1, nndr = brute_closest(o, t)
    assert closest.dtc == pytest.approx(np.median(d1), abs=1e-12)
    assert closest.cdr == pytest.approx(np.median(nndr), abs=1e-12)
    linkage = metrics.link(o, t, own, exact_share=1.0)
    right, cloak = brute_link(o, t, own)
    np.testing.assert_allclose(linkage.right, right, atol=1e-15)
    np.testing.assert_array_equal(linkage.local_cloaking, cloak)
    assert metrics.link(o, t, own).median_local_cloaking == np.median(cloak)  # as compare() counts
    # The figures quoted in docs/compare.md (exact decomposition, 5 components, fair ties).
    assert linkage.hidden_rate == pytest.approx(0.93379, abs=1e-5)
    assert linkage.median_local_cloaking == 18
    assert closest.dtc == 0.0  # most avatars of benign cases land on an original record
    assert closest.cdr == pytest.approx(0.99904, abs=1e-5)


@pytest.mark.parametrize(
    "numeric,categorical",
    [(NUMERIC, CATEGORICAL), (NUMERIC, ()), ((), CATEGORICAL), (("age",), ("sex", "zone"))],
    ids=["famd", "pca", "mca", "famd-1"],
)
@pytest.mark.parametrize("components", [2, "all"])
def test_gram_pass_equals_saiph_qr_pass(numeric, categorical, components):
    """The Gram-matrix pass 2 gives saiph's DecompositionAccumulator (TSQR) axes: the same
    distances, and the same coordinates wherever an axis is determined (distinct singular
    values), NULLs included."""
    from qar_sql.comparison.projection import ProjectionFit, fit_projections

    data = table(400, seed=2)
    gram, qr = fit_projections(
        batches_of(data),
        [
            ProjectionFit(numeric, categorical, components),
            ProjectionFit(numeric, categorical, components, decomposition="qr"),
        ],
    )
    a, b = coords(gram, data), coords(qr, data)
    np.testing.assert_allclose(pdist(a), pdist(b), atol=1e-10)
    np.testing.assert_allclose(gram.explained_variance_ratio, qr.explained_variance_ratio, atol=1e-12)
    if components == 2:
        np.testing.assert_allclose(a, b, atol=1e-10)
