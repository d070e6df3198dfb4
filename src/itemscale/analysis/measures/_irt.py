"""A two-parameter logistic item response model over (model, configuration) respondents.

Why: a budget sweep answers the same items with many (model, configuration) pairs, exactly the
response matrix an item response model needs; each configuration gets an ability and each item
a difficulty and a discrimination, which `anchors` uses to pick a small predicting subset. The
fit (joint MAP with weak normal priors by L-BFGS-B, standard errors from the curvature) is
docs/anchors.md's.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from typing import TYPE_CHECKING, Final, Self

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ...core.errors import ItemscaleError, validation_message
from ...core.files import loads_json

if TYPE_CHECKING:
    import pandas as pd

#: Version of the fit record `itemscale irt --json` writes; bump on any change of its fields.
#: 2: `fit_digest`, the sha256 of the record's other fields, checked when the file is read
#: (version 1 files, without it, are still read).
IRT_SCHEMA_VERSION: Final[int] = 2
#: The versions `IrtFit.from_json` reads.
IRT_READABLE_VERSIONS: Final[frozenset[int]] = frozenset({1, 2})
IRT_METHOD: Final[str] = "2PL, joint MAP (priors theta~N(0,1), a~N(1,1), b~N(0,9)), L-BFGS-B"
#: Prior standard deviations of ability, discrimination (centred at 1) and difficulty.
PRIOR_SD: Final[tuple[float, float, float]] = (1.0, 1.0, 3.0)
#: The ability grid on which the test information is reported.
THETA_GRID: Final[tuple[float, ...]] = tuple(round(-4.0 + 0.5 * i, 1) for i in range(17))

#: Every fitted number is finite: a NaN or an infinity typed into a fit file is refused by key.
_FROZEN = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class IrtError(ItemscaleError, ValueError):
    """A response table no item response model fits (the message names what is missing)."""


class Respondent(BaseModel):
    """One (model, series, configuration) of the table: its ability on the fitted scale."""

    model_config = _FROZEN
    key: str = Field(description="model/series/config_id, the respondent's unique name")
    model: str
    series: str
    config_id: str
    config_label: str
    frames: int
    theta: float
    theta_se: float = Field(ge=0)
    accuracy: float = Field(ge=0, le=1, description="observed share right over its items")
    answered: int = Field(ge=0)


class ItemParameters(BaseModel):
    """One item: its difficulty b and discrimination a with standard errors."""

    model_config = _FROZEN
    item_id: str
    difficulty: float
    difficulty_se: float = Field(ge=0)
    discrimination: float
    discrimination_se: float = Field(ge=0)
    accuracy: float = Field(ge=0, le=1, description="observed share right over the respondents")


class IrtFit(BaseModel):
    """The fitted 2PL: what `itemscale irt --json` writes and `anchors`/`analyze --irt` read."""

    model_config = _FROZEN
    schema_version: int = IRT_SCHEMA_VERSION
    method: str = IRT_METHOD
    prior_sd: tuple[float, float, float] = PRIOR_SD
    data_digest: str = Field(description="sha256 of the respondent keys, item ids and outcomes")
    converged: bool
    iterations: int
    log_posterior: float
    seconds: float
    respondents: tuple[Respondent, ...] = Field(min_length=1)
    items: tuple[ItemParameters, ...] = Field(min_length=1)
    fit_digest: str | None = Field(
        default=None,
        description="sha256 of every other field (`fitted_digest`): an edited fit is refused",
    )

    @model_validator(mode="after")
    def _one_of_each(self) -> Self:
        """Item ids and respondent keys are unique (a repeated one would be two parameters for
        one name), and some item discriminates (with every discrimination 0 the fit says
        nothing about ability)."""
        for what, names in (
            ("items", [it.item_id for it in self.items]),
            ("respondents", [r.key for r in self.respondents]),
        ):
            repeated = sorted(n for n, c in Counter(names).items() if c > 1)
            if repeated:
                shown = ", ".join(repr(n) for n in repeated[:5])
                raise ValueError(f"{what}: {len(repeated)} repeated ({shown})")
        if all(it.discrimination == 0 for it in self.items):
            raise ValueError(
                "items: every discrimination is 0, so the fit places no item on the ability "
                "scale; refit with `itemscale irt RUN --json FILE`"
            )
        return self

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(discrimination, difficulty) in item order."""
        a = np.array([it.discrimination for it in self.items], dtype=float)
        b = np.array([it.difficulty for it in self.items], dtype=float)
        return a, b

    def item_ids(self) -> list[str]:
        return [it.item_id for it in self.items]

    def to_json(self) -> str:
        return self.model_dump_json(indent=1)

    def with_digest(self) -> IrtFit:
        """This fit with its `fit_digest` set (what `fit_irt` returns and `irt --json` writes)."""
        return self.model_copy(update={"fit_digest": fitted_digest(self)})

    @classmethod
    def from_json(cls, text: str, where: str = "fit") -> IrtFit:
        """Read a fit record. A schema version this itemscale does not read, a value that is
        not finite or out of range, a repeated item or respondent, no respondents or items,
        and (version 2) fitted numbers that no longer match the file's `fit_digest` are each
        refused naming the file and the key."""
        try:
            raw = loads_json(text)
        except json.JSONDecodeError as exc:
            raise IrtError(f"{where}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        version = raw.get("schema_version") if isinstance(raw, dict) else None
        if isinstance(version, bool) or version not in IRT_READABLE_VERSIONS:
            raise IrtError(
                f"{where}: item response fit schema_version {version!r}; this itemscale reads "
                f"{', '.join(map(str, sorted(IRT_READABLE_VERSIONS)))} (refit with "
                "`itemscale irt RUN --json FILE`)"
            )
        try:
            fit = cls.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                str(e["ctx"]["error"])  # a whole-record check (`_one_of_each`) says it all
                if e["type"] == "value_error" and not e["loc"]
                else validation_message([e], show_input=True, model=cls)
                for e in exc.errors()
            )
            raise IrtError(f"{where}: not a fit itemscale can use: {problems}") from None
        if version >= 2 and fit.fit_digest != fitted_digest(fit):
            raise IrtError(
                f"{where}: fit_digest does not match the fitted values: the file was changed "
                "after `itemscale irt` wrote it; refit with `itemscale irt RUN --json FILE`"
            )
        return fit

    def caveats(self) -> list[str]:
        """What limits this fit, in words, from the record itself: it did not converge, or
        outcomes all alike left abilities or difficulties to the priors (printed by `irt`,
        `anchors` and `analyze --anchors`, and written into the prediction's `warnings`)."""
        out = []
        if not self.converged:
            out.append(
                f"the fit did not converge (the optimiser stopped after {self.iterations} "
                "iterations): its abilities and difficulties may be off"
            )
        item_acc = np.array([it.accuracy for it in self.items])
        resp_acc = np.array([r.accuracy for r in self.respondents])
        n_items, n_resp = len(item_acc), len(resp_acc)
        if (item_acc == 1).all() or (item_acc == 0).all():
            word = "right" if (item_acc == 1).all() else "wrong"
            out.append(
                f"every outcome is {word} (all {n_items} items, all {n_resp} respondents): the "
                "data place nothing on the ability scale, so every ability and difficulty is "
                "the priors' (cannot tell); sweep items that some configurations miss"
            )
            return out
        for values, n, noun, meaning in (
            (item_acc, n_items, "items", "their difficulty is the prior's, not measured"),
            (resp_acc, n_resp, "respondents", "their ability is the prior's, not measured"),
        ):
            right, wrong = int((values == 1).sum()), int((values == 0).sum())
            if right or wrong:
                out.append(
                    f"{right + wrong} of {n} {noun} have outcomes all alike ({right} all right, "
                    f"{wrong} all wrong): {meaning}"
                )
        return out


def fitted_digest(fit: IrtFit) -> str:
    """sha256 of the fit record's canonical JSON without `fit_digest`: every fitted number, so
    a value edited in the file (or a respondent removed) is found when the file is read."""
    record = fit.model_dump(mode="json", exclude={"fit_digest"})
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * z)))


def probability(theta: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(right) of every respondent (rows) on every item (columns)."""
    return _sigmoid(a[None, :] * (np.asarray(theta, dtype=float)[:, None] - b[None, :]))


def information(theta: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Fisher information of every item at every theta: a^2 P (1 - P)."""
    p = probability(theta, a, b)
    return np.asarray(a[None, :] ** 2 * p * (1.0 - p))


#: L-BFGS-B's stopping rule (`fit_matrix`): the projected gradient and the relative change of
#: the log posterior, tight enough that the optimum does not depend on the machine's BLAS.
FIT_GTOL: Final[float] = 1e-9
FIT_FTOL: Final[float] = 1e-15


def fit_matrix(
    y: np.ndarray, mask: np.ndarray | None = None, *, max_iter: int = 2000
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, float]]:
    """(theta, a, b, info) of the 2PL fitted to `y` (respondents x items, values in [0, 1]; a
    share of repeats counts as a fractional outcome); `mask` marks the observed cells."""
    from scipy.optimize import minimize

    y = np.asarray(y, dtype=float)
    w = np.ones_like(y) if mask is None else np.asarray(mask, dtype=float)
    y = np.where(w > 0, y, 0.0)
    n_r, n_i = y.shape
    s_t, s_a, s_b = PRIOR_SD

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        th, a, b = x[:n_r], x[n_r : n_r + n_i], x[n_r + n_i :]
        d = th[:, None] - b[None, :]
        z = a[None, :] * d
        # log P = -softplus(-z), log (1 - P) = -softplus(z)
        ll = -(w * (y * np.logaddexp(0.0, -z) + (1.0 - y) * np.logaddexp(0.0, z))).sum()
        prior = (th**2).sum() / s_t**2 + ((a - 1.0) ** 2).sum() / s_a**2 + (b**2).sum() / s_b**2
        g = w * (y - _sigmoid(z))
        g_th = (g * a[None, :]).sum(axis=1) - th / s_t**2
        g_a = (g * d).sum(axis=0) - (a - 1.0) / s_a**2
        g_b = -(g * a[None, :]).sum(axis=0) - b / s_b**2
        return -(ll - 0.5 * prior), -np.concatenate([g_th, g_a, g_b])

    x0 = np.concatenate([np.zeros(n_r), np.ones(n_i), np.zeros(n_i)])
    # Converged to the optimum, not to the first flat stretch: with scipy's default relative
    # tolerance (2.2e-9 of the log posterior) the fit stopped 1e-3 from it, at a point that
    # depends on the BLAS kernels the machine picks (183 iterations on one CPU, 255 on
    # another, and other anchors drawn from the two fits); at these tolerances the kernels
    # agree to about 1e-6 and the anchors and the predictions printed are the same.
    res = minimize(
        objective,
        x0,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "gtol": FIT_GTOL, "ftol": FIT_FTOL},
    )
    th, a, b = res.x[:n_r], res.x[n_r : n_r + n_i], res.x[n_r + n_i :]
    info = {"converged": float(res.success), "iterations": float(res.nit), "logpost": -res.fun}
    return th, a, b, info


def standard_errors(
    theta: np.ndarray, a: np.ndarray, b: np.ndarray, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(se theta, se a, se b): the inverse curvature of the log posterior of each respondent's
    theta and of each item's (a, b) pair (a 2x2 block, so a and b's correlation counts), the
    other parameters held at their estimates."""
    s_t, s_a, s_b = PRIOR_SD
    p = probability(theta, a, b)
    w = np.ones_like(p) if mask is None else np.asarray(mask, dtype=float)
    v = w * p * (1.0 - p)
    d = theta[:, None] - b[None, :]
    se_t = 1.0 / np.sqrt((v * a[None, :] ** 2).sum(axis=1) + 1.0 / s_t**2)
    h_aa = (v * d**2).sum(axis=0) + 1.0 / s_a**2
    h_bb = (v * a[None, :] ** 2).sum(axis=0) + 1.0 / s_b**2
    h_ab = -(v * a[None, :] * d).sum(axis=0)
    det = h_aa * h_bb - h_ab**2
    return se_t, np.sqrt(h_bb / det), np.sqrt(h_aa / det)


def theta_for(
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    prior: tuple[float, float] = (0.0, 1.0),
) -> tuple[np.ndarray, np.ndarray]:
    """(theta, se) of new respondents (rows of `y`) given fixed item parameters: the posterior
    mode under a normal `prior` (mean, sd; the fit's N(0, 1) by default) on a fine grid (robust
    for all-right or all-wrong rows), refined by Newton steps."""
    y = np.atleast_2d(np.asarray(y, dtype=float))
    w = np.ones_like(y) if mask is None else np.atleast_2d(np.asarray(mask, dtype=float))
    mu, sd = prior
    grid = np.linspace(-8.0, 8.0, 641)
    z = a[None, :] * (grid[:, None] - b[None, :])
    log_p, log_q = -np.logaddexp(0.0, -z), -np.logaddexp(0.0, z)
    post = (y * w) @ log_p.T + ((1.0 - y) * w) @ log_q.T - 0.5 * ((grid[None, :] - mu) / sd) ** 2
    th = grid[np.argmax(post, axis=1)]
    for _ in range(4):
        p = probability(th, a, b)
        grad = (w * (y - p) * a[None, :]).sum(axis=1) - (th - mu) / sd**2
        hess = (w * p * (1.0 - p) * a[None, :] ** 2).sum(axis=1) + 1.0 / sd**2
        th = np.clip(th + grad / hess, -8.0, 8.0)
    p = probability(th, a, b)
    se = 1.0 / np.sqrt((w * p * (1.0 - p) * a[None, :] ** 2).sum(axis=1) + 1.0 / sd**2)
    return th, se


def binary_matrix(
    df: pd.DataFrame,
) -> tuple[pd.DataFrame, list[str], np.ndarray, np.ndarray]:
    """(respondents, item ids, outcomes, observed) of a response table's answered binary rows:
    one respondent per (model, series, config_id), the outcome the share right over repeats."""
    from ...core.responses import ANSWERED_STATUSES

    rows = df[df["status"].isin(list(ANSWERED_STATUSES)) & df["correct"].notna()]
    if rows.empty:
        raise IrtError("no answered multiple-choice rows (a `correct` value) to fit")
    keys = rows["model"].astype(str) + "/" + rows["series"].astype(str) + "/"
    keys = keys + rows["config_id"].astype(str)
    rows = rows.assign(_key=keys.to_numpy())
    table = rows.pivot_table(index="_key", columns="item_id", values="correct", aggfunc="mean")
    meta = (
        rows.groupby("_key", sort=True)[["model", "series", "config_id", "config_label", "frames"]]
        .first()
        .reindex(table.index)
    )
    values = table.to_numpy(dtype=float)
    observed = ~np.isnan(values)
    return meta, [str(c) for c in table.columns], np.nan_to_num(values), observed


def data_digest(keys: list[str], items: list[str], y: np.ndarray, observed: np.ndarray) -> str:
    """sha256 of what was fitted, so an anchor file and a fit can be checked to belong."""
    h = hashlib.sha256()
    h.update("\n".join(keys).encode())
    h.update(b"\0")
    h.update("\n".join(items).encode())
    h.update(np.round(np.where(observed, y, -1.0), 6).astype("<f8").tobytes())
    return h.hexdigest()


def fit_irt(df: pd.DataFrame, *, min_respondents: int = 3, min_items: int = 10) -> IrtFit:
    """Fit the 2PL to a response table (see the module docstring); the typed record."""
    meta, items, y, observed = binary_matrix(df)
    if len(meta) < min_respondents or len(items) < min_items:
        raise IrtError(
            f"an item response model needs at least {min_respondents} (model, configuration) "
            f"respondents and {min_items} items; the table has {len(meta)} and {len(items)}"
        )
    start = time.perf_counter()
    th, a, b, info = fit_matrix(y, observed)
    se_t, se_a, se_b = standard_errors(th, a, b, observed)
    seconds = time.perf_counter() - start
    answered = observed.sum(axis=1)
    acc_r = (y * observed).sum(axis=1) / np.maximum(answered, 1)
    acc_i = (y * observed).sum(axis=0) / np.maximum(observed.sum(axis=0), 1)
    respondents = tuple(
        Respondent(
            key=str(key),
            model=str(row.model),
            series=str(row.series),
            config_id=str(row.config_id),
            config_label=str(row.config_label),
            frames=int(row.frames),
            theta=float(th[k]),
            theta_se=float(se_t[k]),
            accuracy=float(acc_r[k]),
            answered=int(answered[k]),
        )
        for k, (key, row) in enumerate(meta.iterrows())
    )
    params = tuple(
        ItemParameters(
            item_id=item,
            difficulty=float(b[j]),
            difficulty_se=float(se_b[j]),
            discrimination=float(a[j]),
            discrimination_se=float(se_a[j]),
            accuracy=float(acc_i[j]),
        )
        for j, item in enumerate(items)
    )
    fit = IrtFit(
        data_digest=data_digest([str(k) for k in meta.index], items, y, observed),
        converged=bool(info["converged"]),
        iterations=int(info["iterations"]),
        log_posterior=float(info["logpost"]),
        seconds=round(seconds, 3),
        respondents=respondents,
        items=params,
    )
    return fit.with_digest()


def simulate_2pl(
    n_respondents: int, n_items: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(y, theta, a, b) drawn from a known 2PL with the release's spread (theta ~ N(0, 2^2),
    b ~ N(0, 2^2), log a ~ N(0.3, 0.3^2); the V1-short fit's abilities and difficulties have
    standard deviations 1.7 and 2.0): the parameter-recovery check's data."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 2.0, n_respondents)
    b = rng.normal(0.0, 2.0, n_items)
    a = np.exp(rng.normal(0.3, 0.3, n_items))
    y = (rng.random((n_respondents, n_items)) < probability(theta, a, b)).astype(float)
    return y, theta, a, b
