"""Krippendorff's alpha and Cohen's kappa: hand values, reference vectors, oracles, properties."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ek.iaa import (
    Agreement,
    UndefinedAgreementWarning,
    cohen_kappa,
    cohen_kappa_result,
    krippendorff_alpha,
    krippendorff_alpha_result,
)

STATS = json.loads((Path(__file__).parent / "data" / "vectors" / "stats_reference_vectors.json").read_text())  # fmt: skip
TOL = 1e-9


def _nan_to_none(rows: list[list[float]]) -> list[list[float | None]]:
    return [[None if isinstance(v, float) and math.isnan(v) else v for v in r] for r in rows]


# ----------------------------------------------------------------------------- hand-derived


def test_alpha_nominal_hand_value() -> None:
    # units (1,1) (2,2) (3,3) (3,4): n = 8 pairable values, marginals 1:2 2:2 3:3 4:1.
    # D_o = o(3,4) + o(4,3) = 2; D_e = (n² - Σ n_c²)/(n-1) = (64 - 18)/7 = 46/7
    # alpha = 1 - 2 / (46/7) = 1 - 14/46 = 16/23
    assert krippendorff_alpha([[1, 2, 3, 3], [1, 2, 3, 4]], "nominal") == pytest.approx(
        16 / 23, abs=1e-15
    )


def test_alpha_interval_hand_value() -> None:
    # units (0,0) (1,2): n = 4 values {0,0,1,2}; D_o = 2 * (1-2)² / (2-1) = 2
    # D_e = Σ_c Σ_k n_c n_k (c-k)² / (n-1) = 2*(2*1*1 + 2*1*4 + 1*1*1)/3 = 22/3
    # alpha = 1 - 2/(22/3) = 1 - 6/22 = 8/11
    assert krippendorff_alpha([[0, 1], [0, 2]], "interval") == pytest.approx(8 / 11, abs=1e-15)


def test_alpha_missing_values_and_unpairable_units() -> None:
    # the third unit has a single rating (unpairable) and contributes nothing
    full = krippendorff_alpha([[1, 2, 3, 3], [1, 2, 3, 4]])
    assert krippendorff_alpha([[1, 2, 3, 3, 5], [1, 2, 3, 4, None]]) == pytest.approx(full)
    assert krippendorff_alpha([[1, 2, 3, 3, float("nan")], [1, 2, 3, 4, 5]]) == pytest.approx(full)


def test_alpha_string_values_and_value_domain() -> None:
    a = [["lo", "mid", "hi", "hi"], ["lo", "mid", "hi", "mid"]]
    nominal = krippendorff_alpha(a, "nominal")
    as_numbers = [[0, 1, 2, 2], [0, 1, 2, 1]]
    assert nominal == pytest.approx(krippendorff_alpha(as_numbers, "nominal"))
    domain = ["lo", "mid", "hi"]
    for level in ("ordinal", "interval"):
        assert krippendorff_alpha(a, level, value_domain=domain) == pytest.approx(
            krippendorff_alpha(as_numbers, level)
        )
    with pytest.raises(TypeError, match="must be a number"):
        krippendorff_alpha(a, "interval")
    with pytest.raises(ValueError, match="not in value_domain"):
        krippendorff_alpha(a, "ordinal", value_domain=["lo", "hi"])


@pytest.mark.parametrize(
    "data, why",
    [
        ([[1, 2, 3]], "at least 2 coders"),
        ([], "at least 2 coders"),
        ([[1, None], [None, 2]], "no unit was rated"),
        ([[3, 3, 3], [3, 3, None]], "only one value"),
    ],
)
def test_alpha_undefined_is_nan_with_reason(data, why) -> None:
    with pytest.warns(UndefinedAgreementWarning, match=why):
        assert math.isnan(krippendorff_alpha(data))
    res = krippendorff_alpha_result(data)
    assert math.isnan(res.value) and why in res.reason and res.detail["defined"] is False


def test_alpha_validates() -> None:
    with pytest.raises(ValueError, match="level must be one of"):
        krippendorff_alpha([[1], [1]], "cardinal")
    with pytest.raises(ValueError, match="same units"):
        krippendorff_alpha([[1, 2], [1]])
    with pytest.raises(TypeError, match="coder rows"):
        krippendorff_alpha("12")
    with pytest.raises(ValueError, match="finite"):
        krippendorff_alpha([[1, float("inf")], [1, 2]], "interval")


def test_kappa_hand_values() -> None:
    # a = [a a b b], b = [a b b b]: observed agreement 3/4; marginals a:(2,1) b:(2,3);
    # expected agreement (2*1 + 2*3)/16 = 1/2 -> kappa = (3/4 - 1/2)/(1 - 1/2) = 1/2
    assert cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"]) == pytest.approx(0.5)
    # linear weights, labels 1..3: a=[1,2,3], b=[1,3,3]: observed Σw·C = |2-3| = 1;
    # expected Σ w r_i c_j / 3 with r=(1,1,1), c=(1,0,2): (|1-1|*1 + |1-3|*2 + |2-1| + |2-3|*2
    # + |3-1|*1 + 0)/3 = (0+4+1+2+2+0)/3 = 3 -> kappa = 1 - 1/3 = 2/3
    assert cohen_kappa([1, 2, 3], [1, 3, 3], weights="linear") == pytest.approx(2 / 3)
    r = cohen_kappa_result([1, 2, 3], [1, 3, 3], "linear")
    assert isinstance(r, Agreement) and r.detail["labels"] == [1, 2, 3]


def test_kappa_undefined_and_validation() -> None:
    with pytest.warns(UndefinedAgreementWarning, match="kappa undefined"):
        assert math.isnan(cohen_kappa([1, 1], [1, 1]))
    with pytest.warns(UndefinedAgreementWarning, match="no items"):
        assert math.isnan(cohen_kappa([], []))
    with pytest.raises(ValueError, match="same items"):
        cohen_kappa([1, 2], [1])
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa([1], [1], weights="cubic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="missing"):
        cohen_kappa([1, None], [1, 2])
    with pytest.raises(TypeError, match="labels="):
        cohen_kappa([1, "a"], ["a", 1])
    assert cohen_kappa([1, "a"], ["a", 1], labels=[1, "a"]) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="not in labels"):
        cohen_kappa([1, 2], [1, 2], labels=[1])


# ----------------------------------------------------------------------------- reference vectors


def test_krippendorff_vectors() -> None:
    rows = STATS["krippendorff_alpha"]
    assert len(rows) == 32
    for v in rows:
        got = krippendorff_alpha(v["reliability_data"], v["level_of_measurement"])
        assert abs(got - v["alpha"]) <= TOL, (v["dataset"], v["level_of_measurement"])
        # None as the missing marker gives the same number
        got2 = krippendorff_alpha(_nan_to_none(v["reliability_data"]), v["level_of_measurement"])
        assert abs(got2 - v["alpha"]) <= TOL


def test_published_alpha_examples() -> None:
    want = {
        "wikipedia_example": (0.691358, 0.806721, 0.810845, 0.808944),
        "krippendorff_2011_example": (0.743421, 0.815388, 0.849107, 0.797403),
    }
    for v in STATS["krippendorff_alpha"]:
        if v["dataset"] in want:
            i = ("nominal", "ordinal", "interval", "ratio").index(v["level_of_measurement"])
            got = krippendorff_alpha(v["reliability_data"], v["level_of_measurement"])
            assert round(got, 6) == want[v["dataset"]][i]


def test_cohen_kappa_vectors() -> None:
    rows = STATS["cohen_kappa"]
    assert len(rows) == 18
    for v in rows:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedAgreementWarning)
            got = cohen_kappa(v["y1"], v["y2"], v["weights"])
        if v["kappa"] is None:
            assert math.isnan(got), v["case"]
        else:
            assert abs(got - v["kappa"]) <= TOL, (v["case"], v["weights"])


# ----------------------------------------------------------------------------- oracles (dev extra)

ratings = st.integers(2, 4).flatmap(
    lambda coders: st.integers(2, 15).flatmap(
        lambda units: st.lists(
            st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=units, max_size=units),
            min_size=coders,
            max_size=coders,
        )
    )
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ratings, st.sampled_from(["nominal", "ordinal", "interval", "ratio"]))
def test_alpha_matches_krippendorff_package(data, level) -> None:
    np = pytest.importorskip("numpy")
    kd = pytest.importorskip("krippendorff")  # GPL: a test oracle only, never imported by ek
    arr = np.array([[np.nan if v is None else v for v in row] for row in data], dtype=float)
    res = krippendorff_alpha_result(data, level)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            want = kd.alpha(reliability_data=arr, level_of_measurement=level)
        except (ValueError, ZeroDivisionError):
            want = None  # the package raises where ek returns NaN with a reason
    if want is None or not math.isfinite(want):
        assert math.isnan(res.value)
    else:
        assert abs(res.value - want) <= TOL


labels = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=40)


@settings(max_examples=25, deadline=None)
@given(labels, st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_matches_sklearn(pairs, weights) -> None:
    skm = pytest.importorskip("sklearn.metrics")
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = skm.cohen_kappa_score(a, b, weights=weights)
        got = cohen_kappa(a, b, weights)
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert abs(got - want) <= TOL


# ----------------------------------------------------------------------------- properties


@given(st.lists(st.integers(0, 6), min_size=2, max_size=30))
def test_prop_perfect_agreement_is_one(xs) -> None:
    if len(set(xs)) < 2:
        return
    for level in ("nominal", "ordinal", "interval"):
        assert krippendorff_alpha([xs, xs, xs], level) == pytest.approx(1.0)
    assert cohen_kappa(xs, xs) == pytest.approx(1.0)


@given(ratings)
def test_prop_alpha_invariant_to_coder_and_unit_order(data) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = krippendorff_alpha(data, "interval")
        b = krippendorff_alpha(data[::-1], "interval")
        c = krippendorff_alpha([row[::-1] for row in data], "interval")
    if math.isnan(a):
        assert math.isnan(b) and math.isnan(c)
    else:
        assert a == pytest.approx(b, abs=1e-12) == pytest.approx(c, abs=1e-12)
        assert a <= 1.0 + 1e-12


@given(labels)
def test_prop_kappa_symmetric(pairs) -> None:
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k1, k2 = cohen_kappa(a, b, "quadratic"), cohen_kappa(b, a, "quadratic")
    assert (math.isnan(k1) and math.isnan(k2)) or k1 == pytest.approx(k2, abs=1e-12)
