"""Inter-annotator agreement: Krippendorff's alpha and Cohen's kappa.

Both are chance-corrected: 1 is perfect agreement, 0 is what chance alone gives, negative is
systematic disagreement. Undefined cases (one coder, no unit rated twice, a single category in
the whole data) return NaN, issue an :class:`UndefinedAgreementWarning` carrying the reason,
and the ``*_result`` variants return the reason in an :class:`Agreement`.

Example:
    >>> round(krippendorff_alpha([[1, 2, 3, 3], [1, 2, 3, 4]], level="nominal"), 4)
    0.6957
    >>> round(cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"]), 4)
    0.5
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ek._validate import short_repr
from ek.base import ReadOnlyDict

__all__ = [
    "LEVELS",
    "Agreement",
    "UndefinedAgreementWarning",
    "cohen_kappa",
    "cohen_kappa_result",
    "interval_alpha_pairs",
    "krippendorff_alpha",
    "krippendorff_alpha_result",
]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
_NAN = float("nan")


class UndefinedAgreementWarning(UserWarning):
    """An agreement coefficient is undefined for this data (the value is NaN)."""


@dataclass(frozen=True)
class Agreement:
    """An agreement coefficient with its reason and breakdown.

    Attributes:
        value: The coefficient (NaN when undefined).
        reason: Why it is undefined, or a one-line summary.
        detail: Machine-readable breakdown (observed/expected disagreement, counts, level).
    """

    value: float
    reason: str
    detail: Mapping[str, Any] = field(default_factory=ReadOnlyDict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", float(self.value))
        object.__setattr__(self, "detail", ReadOnlyDict(self.detail))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN becomes ``None``)."""
        return {
            "value": None if math.isnan(self.value) else self.value,
            "reason": self.reason,
            "detail": dict(self.detail),
        }


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _check_level(level: Any) -> str:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {list(LEVELS)}, got {short_repr(level)}")
    return str(level)


def _number(where: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(
            f"{where} must be a number for this level, got {type(v).__name__}: {short_repr(v, 100)}"
        )
    f = float(v)
    if not math.isfinite(f):
        raise ValueError(f"{where} must be finite (or None/NaN for missing), got {short_repr(v)}")
    return f


def _undefined(reason: str, detail: Mapping[str, Any]) -> Agreement:
    return Agreement(_NAN, reason, {**detail, "defined": False})


# --------------------------------------------------------------------------------------------
# Krippendorff's alpha
# --------------------------------------------------------------------------------------------


def krippendorff_alpha_result(
    data: Sequence[Sequence[Any]],
    level: Level | str = "nominal",
    *,
    value_domain: Sequence[Hashable] | None = None,
) -> Agreement:
    """Krippendorff's alpha with its reason and breakdown (see :func:`krippendorff_alpha`).

    Example:
        >>> r = krippendorff_alpha_result([[1, 1], [1, 1]])
        >>> r.value != r.value, r.reason
        (True, 'only one value in the data: expected disagreement is 0, alpha undefined')
    """
    level = _check_level(level)
    rows = _coder_rows(data)
    n_units = len(rows[0]) if rows else 0
    base: dict[str, Any] = {"level": level, "n_coders": len(rows), "n_units": n_units}
    if len(rows) < 2:
        return _undefined(f"alpha needs at least 2 coders, got {len(rows)}", base)
    units = _pairable_units(rows, n_units, numeric=level != "nominal" and value_domain is None)
    base["n_pairable_units"] = len(units)
    if not units:
        return _undefined("no unit was rated by at least 2 coders: alpha undefined", base)
    o, marg = _coincidences(units)
    n = math.fsum(marg.values())
    values = list(marg)
    base["n_pairable_values"] = n
    if len(values) < 2:
        return _undefined(
            "only one value in the data: expected disagreement is 0, alpha undefined", base
        )

    dist = _distance(level, values, marg, value_domain)
    d_o = math.fsum(w * dist(a, b) for (a, b), w in o.items())
    d_e = math.fsum(marg[a] * marg[b] * dist(a, b) for a in values for b in values) / (n - 1)
    base.update({"observed_disagreement": d_o / n, "expected_disagreement": d_e / n})
    if d_e == 0.0:
        return _undefined("expected disagreement is 0: alpha undefined", base)
    alpha = 1.0 - d_o / d_e
    return Agreement(
        alpha, f"Krippendorff's alpha ({level}) = {alpha:.4f}", {**base, "defined": True}
    )


def _coder_rows(data: Any) -> list[list[Any]]:
    """The coder rows as lists, checked to be sequences that rate the same units."""
    if isinstance(data, (str, bytes)) or not isinstance(data, Sequence):
        raise TypeError(f"data must be a sequence of coder rows, got {type(data).__name__}")
    rows = []
    for i, row in enumerate(data):
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence):
            raise TypeError(f"data[{i}] must be a sequence of ratings, got {type(row).__name__}")
        rows.append(list(row))
    n_units = len(rows[0]) if rows else 0
    for i, row in enumerate(rows):
        if len(row) != n_units:
            raise ValueError(
                f"every coder row must rate the same units: data[0] has {n_units}, "
                f"data[{i}] has {len(row)}"
            )
    return rows


def _pairable_units(rows: list[list[Any]], n_units: int, *, numeric: bool) -> list[list[Any]]:
    """The values in each unit, missing ones dropped; only units rated at least twice."""
    units: list[list[Any]] = []
    for u in range(n_units):
        vals = []
        for c, row in enumerate(rows):
            v = row[u]
            if _missing(v):
                continue
            if numeric:
                v = _number(f"data[{c}][{u}]", v)
            elif not isinstance(v, Hashable):
                raise TypeError(f"data[{c}][{u}] must be hashable, got {type(v).__name__}")
            vals.append(v)
        if len(vals) >= 2:
            units.append(vals)
    return units


def _coincidences(
    units: list[list[Any]],
) -> tuple[dict[tuple[Any, Any], float], dict[Any, float]]:
    """The coincidence matrix ``o[(c, k)]`` and its marginals ``n_c``."""
    o: dict[tuple[Any, Any], float] = {}
    for vals in units:
        cnt = Counter(vals)
        m = len(vals)
        for a, na in cnt.items():
            for b, nb in cnt.items():
                pairs = na * (nb - 1) if a == b else na * nb
                if pairs:
                    o[(a, b)] = o.get((a, b), 0.0) + pairs / (m - 1)
    marg: dict[Any, float] = {}
    for (a, _b), w in o.items():
        marg[a] = marg.get(a, 0.0) + w
    return o, marg


def _positions(values: list[Any], value_domain: Sequence[Hashable] | None) -> dict[Any, float]:
    """Each value's place on the scale: its rank in ``value_domain``, else the value itself."""
    if value_domain is None:
        return {v: float(v) for v in values}
    rank = {v: i for i, v in enumerate(value_domain)}
    unknown = [v for v in values if v not in rank]
    if unknown:
        raise ValueError(
            f"values {short_repr(unknown[:5])} are not in value_domain {short_repr(value_domain)}"
        )
    return {v: float(rank[v]) for v in values}


def _ordinal(values: list[Any], pos: Mapping[Any, float], marg: Mapping[Any, float]) -> Any:
    """The ordinal distance: (sum of n_g for g between the two ranks, minus half the two end
    counts)^2."""
    order = sorted(values, key=lambda v: pos[v])
    idx = {v: i for i, v in enumerate(order)}
    cum = [0.0]
    for v in order:
        cum.append(cum[-1] + marg[v])

    def ordinal(a: Any, b: Any) -> float:
        i, j = sorted((idx[a], idx[b]))
        s = cum[j + 1] - cum[i] - (marg[order[i]] + marg[order[j]]) / 2.0
        return s * s

    return ordinal


def _distance(
    level: str,
    values: list[Any],
    marg: Mapping[Any, float],
    value_domain: Sequence[Hashable] | None,
) -> Any:
    if level == "nominal":
        return lambda a, b: 0.0 if a == b else 1.0
    pos = _positions(values, value_domain)
    if level == "interval":
        return lambda a, b: (pos[a] - pos[b]) ** 2
    if level == "ratio":
        if any(p < 0 for p in pos.values()):
            raise ValueError("ratio level needs non-negative values")

        def ratio(a: Any, b: Any) -> float:
            s = pos[a] + pos[b]
            return 0.0 if s == 0.0 else ((pos[a] - pos[b]) / s) ** 2

        return ratio
    return _ordinal(values, pos, marg)


def krippendorff_alpha(
    data: Sequence[Sequence[Any]],
    level: Level | str = "nominal",
    *,
    value_domain: Sequence[Hashable] | None = None,
) -> float:
    """Krippendorff's alpha for any number of coders, with missing ratings.

    ``alpha = 1 - D_o / D_e`` from the coincidence matrix of pairable values (units rated by at
    least two coders); distances: nominal ``a != b``; ordinal by rank with the marginal counts
    between them; interval ``(a - b)^2``; ratio ``((a - b)/(a + b))^2``. Krippendorff (2011),
    "Computing Krippendorff's Alpha-Reliability", Annenberg School for Communication,
    University of Pennsylvania; Krippendorff (2004), "Content Analysis", 2nd ed., ch. 11.
    Agrees with the ``krippendorff`` package 0.9.0 (used as a test oracle only).

    Args:
        data: Coders x units; ``None`` or NaN marks a missing rating.
        level: ``"nominal"`` (default), ``"ordinal"``, ``"interval"`` or ``"ratio"``.
        value_domain: Ordered values; needed for ordinal/interval/ratio data that are not
            numbers (e.g. ``["low", "mid", "high"]``), ranks are then the positions.

    Returns:
        alpha in [-1, 1] (roughly), or NaN when undefined (fewer than 2 coders, no unit rated
        twice, only one value in the data), with an :class:`UndefinedAgreementWarning`.

    Example:
        >>> data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None],
        ...         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5],
        ...         [None, 3, 3, 3, 2, 3, 4, 2, 2, 5]]
        >>> round(krippendorff_alpha(data, "nominal"), 4), round(krippendorff_alpha(data, "interval"), 4)
        (0.6753, 0.8621)
    """
    res = krippendorff_alpha_result(data, level, value_domain=value_domain)
    if math.isnan(res.value):
        warnings.warn(res.reason, UndefinedAgreementWarning, stacklevel=2)
    return res.value


def interval_alpha_pairs(pairs: Sequence[tuple[float, float]]) -> float:
    """Interval Krippendorff's alpha for two coders with no missing values, in closed form.

    The same value as ``krippendorff_alpha([a_values, b_values], "interval")`` for complete
    pairs, without building the coincidence matrix (what a bootstrap over items needs).
    NaN for fewer than 2 pairs or no variance.

    Example:
        >>> pairs = [(1.0, 1.0), (2.0, 3.0), (3.0, 3.0), (4.0, 5.0)]
        >>> a, b = [p[0] for p in pairs], [p[1] for p in pairs]
        >>> round(interval_alpha_pairs(pairs), 10) == round(krippendorff_alpha([a, b], "interval"), 10)
        True
    """
    n = 2 * len(pairs)
    if n < 4:
        return _NAN
    mean = math.fsum(a + b for a, b in pairs) / n
    d_o = math.fsum(2.0 * (a - b) ** 2 for a, b in pairs)  # sum over ordered pairs, m_u - 1 = 1
    ss = math.fsum((a - mean) ** 2 + (b - mean) ** 2 for a, b in pairs)
    d_e = 2.0 * n * ss / (n - 1)
    return _NAN if d_e == 0.0 else 1.0 - d_o / d_e


def _check_pairs(a: Any, b: Any) -> None:
    """Two sequences of labels of one length with no missing label."""
    for name, seq in (("a", a), ("b", b)):
        if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence):
            raise TypeError(f"{name} must be a sequence of labels, got {type(seq).__name__}")
    if len(a) != len(b):
        raise ValueError(f"a and b must rate the same items, got {len(a)} and {len(b)} labels")
    for name, seq in (("a", a), ("b", b)):
        for i, v in enumerate(seq):
            if _missing(v):
                raise ValueError(f"{name}[{i}] is missing; cohen_kappa needs complete pairs")


def _label_order(
    a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable] | None
) -> list[Hashable]:
    """The labels in index order: sorted, or as given (every label used must be in it)."""
    if labels is None:
        try:
            return sorted(set(a) | set(b))  # type: ignore[type-var]
        except TypeError:
            raise TypeError(
                "labels of mixed, unorderable types need an explicit labels= order"
            ) from None
    order = list(labels)
    unknown = sorted({repr(v) for v in [*a, *b] if v not in set(order)})
    if unknown:
        raise ValueError(f"labels {unknown[:5]} are not in labels={short_repr(order)}")
    return order


# --------------------------------------------------------------------------------------------
# Cohen's kappa
# --------------------------------------------------------------------------------------------


def cohen_kappa_result(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    weights: Literal["linear", "quadratic"] | None = None,
    *,
    labels: Sequence[Hashable] | None = None,
) -> Agreement:
    """Cohen's kappa with its reason and breakdown (see :func:`cohen_kappa`).

    Example:
        >>> r = cohen_kappa_result([1, 1, 1], [1, 1, 1])
        >>> r.value != r.value, r.reason
        (True, 'expected disagreement is 0 (both raters use one and the same label): kappa undefined')
    """
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(
            f"weights must be None, 'linear' or 'quadratic', got {short_repr(weights)}"
        )
    _check_pairs(a, b)
    base: dict[str, Any] = {"n": len(a), "weights": weights}
    if not a:
        return _undefined("no items: kappa undefined", base)
    order = _label_order(a, b, labels)
    idx = {v: i for i, v in enumerate(order)}
    q = len(order)
    conf = [[0.0] * q for _ in range(q)]
    for x, y in zip(a, b):
        conf[idx[x]][idx[y]] += 1.0
    rows = [math.fsum(r) for r in conf]
    cols = [math.fsum(conf[i][j] for i in range(q)) for j in range(q)]
    total = math.fsum(rows)

    def w(i: int, j: int) -> float:
        if weights is None:
            return 0.0 if i == j else 1.0
        return float(abs(i - j)) if weights == "linear" else float((i - j) ** 2)

    obs = math.fsum(w(i, j) * conf[i][j] for i in range(q) for j in range(q))
    exp = math.fsum(w(i, j) * rows[i] * cols[j] / total for i in range(q) for j in range(q))
    base.update({"labels": list(order), "observed_disagreement": obs / total})
    base["expected_disagreement"] = exp / total
    if exp == 0.0:
        return _undefined(
            "expected disagreement is 0 (both raters use one and the same label): kappa undefined",
            base,
        )
    kappa = 1.0 - obs / exp
    return Agreement(kappa, f"Cohen's kappa = {kappa:.4f}", {**base, "defined": True})


def cohen_kappa(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    weights: Literal["linear", "quadratic"] | None = None,
    *,
    labels: Sequence[Hashable] | None = None,
) -> float:
    """Cohen's kappa for two raters, unweighted or with linear/quadratic weights.

    ``kappa = 1 - sum(w * observed) / sum(w * expected)`` over the confusion matrix, with
    ``expected`` from the raters' marginals and ``w`` = 0/1 (unweighted), ``|i - j|`` (linear)
    or ``(i - j)^2`` (quadratic) over the label *index order* (sorted labels, or ``labels``).
    Cohen (1960), "A coefficient of agreement for nominal scales", Educational and
    Psychological Measurement 20:37-46; Cohen (1968) for the weighted form. Agrees with
    scikit-learn's ``cohen_kappa_score`` (a test oracle only).

    Args:
        a: Labels from the first rater.
        b: Labels from the second rater, same items in the same order.
        weights: ``None``, ``"linear"`` or ``"quadratic"``.
        labels: Label order (defaults to the sorted union of the observed labels).

    Returns:
        kappa, or NaN when undefined (no items; both raters constant on the same label), with
        an :class:`UndefinedAgreementWarning`.

    Example:
        >>> round(cohen_kappa([0, 1, 1, 0, 1], [0, 1, 0, 0, 1]), 4)
        0.6154
        >>> round(cohen_kappa([1, 2, 3, 4], [1, 2, 4, 4], weights="quadratic"), 4)
        0.9167
    """
    res = cohen_kappa_result(a, b, weights, labels=labels)
    if math.isnan(res.value):
        warnings.warn(res.reason, UndefinedAgreementWarning, stacklevel=2)
    return res.value
