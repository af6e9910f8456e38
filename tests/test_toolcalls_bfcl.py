"""Verdict agreement of ``ek.agents.toolcalls`` with BFCL's own AST checker.

Reference: the 11,689 synthetic (prediction, verdict) pairs in ``tests/data/bfcl`` (verdicts from the
unmodified upstream checker, ShishirPatil/gorilla @ 6ea5797). ek must agree on >= 99.5 % of them and
every disagreement must be listed, with its reason, in ``tests/data/bfcl/disagreements.json``.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ek.agents.toolcalls import BfclCase, ToolCallMetric, from_bfcl, match_calls

BFCL = Path(__file__).parent / "data" / "bfcl"
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="module")
def bfcl() -> dict[str, Any]:
    questions: dict[str, Any] = {}
    answers: dict[str, Any] = {}
    for c in CATEGORIES:
        questions.update({e["id"]: e for e in _jsonl(BFCL / f"BFCL_v4_{c}.json.gz")})
        answers.update(
            {e["id"]: e for e in _jsonl(BFCL / "possible_answer" / f"BFCL_v4_{c}.json.gz")}
        )
    pairs = _jsonl(BFCL / "bfcl_v4_ast_synthetic_pairs.jsonl.gz")
    return {"q": questions, "a": answers, "pairs": pairs}


def test_data_is_complete(bfcl: dict[str, Any]) -> None:
    # Sizes from the data README: 1,000 entries, 11,689 pairs, 3,927 valid.
    assert len(bfcl["q"]) == len(bfcl["a"]) == 1000
    assert len(bfcl["pairs"]) == 11689
    assert sum(r["valid"] for r in bfcl["pairs"]) == 3927


def test_verdict_agreement_with_bfcl_checker(bfcl: dict[str, Any]) -> None:
    metric = ToolCallMetric(canonicalizer="bfcl")
    cases: dict[tuple[str, bool], BfclCase] = {}
    disagree = []
    per_cat: Counter[str] = Counter()
    per_cat_ok: Counter[str] = Counter()
    for r in bfcl["pairs"]:
        key = (r["id"], r["underscore_to_dot"])
        case = cases.get(key)
        if case is None:
            case = cases[key] = from_bfcl(
                bfcl["q"][r["id"]], bfcl["a"][r["id"]], underscore_to_dot=r["underscore_to_dot"]
            )
        ours = metric.match(r["prediction"], case).valid
        per_cat[r["category"]] += 1
        if ours == r["valid"]:
            per_cat_ok[r["category"]] += 1
        else:
            disagree.append((r["id"], r["kind"], r["underscore_to_dot"], r["valid"], ours))
    n = len(bfcl["pairs"])
    assert 1 - len(disagree) / n >= 0.995
    for c in CATEGORIES:  # every category on its own, too
        assert per_cat_ok[c] / per_cat[c] >= 0.995, c
    listed = json.loads((BFCL / "disagreements.json").read_text())["disagreements"]
    expected = {
        (d["id"], d["kind"], d["underscore_to_dot"], d["bfcl_valid"], d["ek_valid"]) for d in listed
    }
    assert all(d["reason"] for d in listed)
    assert set(disagree) == expected


def test_greedy_false_negative_case_directly(bfcl: dict[str, Any]) -> None:
    # parallel_178 reversed: BFCL says invalid (greedy first-fit), a perfect matching exists.
    row = next(
        r for r in bfcl["pairs"] if r["id"] == "parallel_178" and r["kind"] == "calls_reversed"
    )
    case = from_bfcl(bfcl["q"]["parallel_178"], bfcl["a"]["parallel_178"])
    res = match_calls(row["prediction"], case, canonicalizer="bfcl")
    assert row["valid"] is False and res.valid is True
    assert all(m.exact for m in res.matched) and len(res.matched) == 4


def test_from_bfcl_shapes(bfcl: dict[str, Any]) -> None:
    case = from_bfcl(bfcl["q"]["simple_python_0"], bfcl["a"]["simple_python_0"])
    assert case.category == "simple_python"
    assert [t.name for t in case.tools] == ["calculate_triangle_area"]
    g = case.grammar()
    assert g.node("calculate_triangle_area").required == ("base", "height")
    # underscore_to_dot renames both the tools and the gold calls
    pm = from_bfcl(
        bfcl["q"]["parallel_multiple_0"], bfcl["a"]["parallel_multiple_0"], underscore_to_dot=True
    )
    assert {c.tool for c in pm.gold_calls} <= {t.name for t in pm.tools}
    assert all("." not in c.tool for c in pm.gold_calls)


def test_from_bfcl_rejects_mismatched_entries(bfcl: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="does not match"):
        from_bfcl(bfcl["q"]["simple_python_0"], bfcl["a"]["simple_python_1"])
    with pytest.raises(ValueError, match="ground_truth"):
        from_bfcl(bfcl["q"]["simple_python_0"], {"id": "simple_python_0"})
