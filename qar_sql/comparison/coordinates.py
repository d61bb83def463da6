"""Each record of ``qar compare``'s tables in the projections (all compared columns, the
attacker's, all but the target), its link to the record made from it, and the inference attack:
the numpy side of the comparison, on what :mod:`qar_sql.comparison.projection` fitted."""

from __future__ import annotations

import numpy as np

from qar_sql.comparison import metrics
from qar_sql.comparison.projection import ProjectionFit, category_tokens, factorize
from qar_sql.errors import DataError
from qar_sql.results import Inference

#: Points per table drawn in the components figure.
FIGURE_POINTS = 20_000


def sub_fit(names, numeric, categorical, components, what: str, impute: str = "none") -> ProjectionFit:
    """The projection of a subset of the compared columns (capped at the axes they allow)."""
    return ProjectionFit(
        [c for c in names if c in numeric], [c for c in names if c in categorical], components, cap=True, what=what,
        impute=impute,
    )  # fmt: skip


def coordinates(
    batches, main, att, inf, target, keyed, *, both=False
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Coordinates in each projection, target and key of every row of ``batches``. With
    ``both`` a batch holds treated values and the original's ("o:NAME"): (original, treated)."""
    sides = [Collect(main, att, inf, target, keyed)]
    if both:
        sides.append(Collect(main, att, inf, target, False))
    for batch in batches:
        if both:
            sides[0].add({k[2:]: v for k, v in batch.items() if k.startswith("o:")})
            sides[1].add({k: v for k, v in batch.items() if not k.startswith("o:")})
        else:
            sides[0].add(batch)
    out = [c.arrays() for c in sides]
    return (out[0], out[1]) if both else (out[0], {})


class Collect:
    def __init__(self, main, att, inf, target, keyed):
        self.main, self.att, self.inf, self.target, self.keyed = main, att, inf, target, keyed
        self.parts: dict[str, list[np.ndarray]] = {"main": [], "att": [], "inf": [], "target": [], "key": []}

    def add(self, batch: dict[str, np.ndarray]) -> None:
        self.parts["main"].append(self.main.transform(batch))
        if self.att is not None:
            self.parts["att"].append(self.att.transform(batch))
        if self.inf is not None:
            self.parts["inf"].append(self.inf.transform(batch))
            self.parts["target"].append(batch[self.target])
        if self.keyed:
            self.parts["key"].append(batch["key:"])

    def arrays(self) -> dict[str, np.ndarray]:
        out = {name: np.concatenate(arrays) for name, arrays in self.parts.items() if arrays}
        out.setdefault("main", np.empty((0, self.main.components)))
        return out


def own_by_key(key_o: np.ndarray, key_t: np.ndarray, link: str) -> np.ndarray:
    """Row of the treated record sharing each original's key (the keys are unique on both
    sides, checked in SQL; here they must also be the same set)."""
    import pandas as pd

    # keys as canonical values, so that 7 (integer) and 7.0 (float) are one key
    own = pd.Index(category_tokens(key_t)).get_indexer(category_tokens(key_o))
    missing = np.flatnonzero(own < 0)
    if len(missing):
        key = key_o[missing[0]]
        key = key.item() if isinstance(key, np.generic) else key  # (2000, not np.int64(2000))
        raise DataError(
            f"link column {link!r}: the original's key {key!r} is not in the treated table "
            f"({len(missing)} original key(s) have no treated record); link tables holding the same records"
        )
    if len(key_t) != len(key_o):
        raise DataError(
            f"link column {link!r}: the treated table has {len(key_t)} records but the original {len(key_o)}; "
            "link tables holding the same records"
        )
    return own.astype(np.int64)


def inference(o, t, target, numeric_target, components) -> Inference:
    if numeric_target:
        err = metrics.infer_numeric(o["inf"], t["inf"], o["target"], t["target"])
        value = float(np.nanmean(err)) if np.isfinite(err).any() else None
        return Inference(target, "mae", value, components)
    both = np.concatenate([np.asarray(o["target"], dtype=object), np.asarray(t["target"], dtype=object)])
    codes, _ = factorize(both)
    n = len(o["target"])
    share = metrics.infer_categorical(o["inf"], t["inf"], codes[:n], codes[n:])
    return Inference(target, "accuracy", float(share.mean()) if len(share) else None, components)


def sample_xy(coords: np.ndarray) -> np.ndarray:
    xy = coords[:, :2] if coords.shape[1] >= 2 else np.column_stack([coords[:, 0], np.zeros(len(coords))])
    if len(xy) > FIGURE_POINTS:
        xy = xy[np.random.default_rng(0).choice(len(xy), FIGURE_POINTS, replace=False)]
    return np.array(xy)
