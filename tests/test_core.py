"""The core substrate: Score, registry, grammar, fields, canonicalizers, evaluate()."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import json
import math
import pickle
import pkgutil
import re
import sys
import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ek
from ek.base import ReadOnlyDict, Score, is_episode
from ek.canon import bfcl_standardize, canonicalize_text, resolve_canonicalizer
from ek.evaluate import evaluate
from ek.fields import FieldCounts, compare_fields, f1_score, micro_f1
from ek.grammar import FieldSpec, GraphGrammar, NodeType
from ek.registry import UnknownNameError, register, registered, resolve, unregister


def test_every_module_all_is_strings() -> None:
    # The jiwer anti-pattern (objects in __all__) breaks `from m import *`.
    for info in pkgutil.walk_packages(ek.__path__, "ek."):
        if info.name.startswith("ek.adapters."):
            continue  # adapters need their extras; they are checked in their own tests
        mod = importlib.import_module(info.name)
        names = getattr(mod, "__all__", None)
        assert names is not None, f"{info.name} has no __all__"
        assert all(isinstance(n, str) for n in names), info.name
        for n in names:
            assert hasattr(mod, n), f"{info.name}.__all__ names missing {n!r}"


class TestScore:
    def test_detail_is_read_only_copy(self) -> None:
        d = {"tp": 1.0}
        s = Score(1.0, d)
        d["tp"] = 5.0
        assert s.detail["tp"] == 1.0
        with pytest.raises(TypeError):
            s.detail["tp"] = 2.0  # type: ignore[index]

    def test_frozen(self) -> None:
        s = Score(0.5)
        with pytest.raises(AttributeError):
            s.value = 1.0  # type: ignore[misc]

    @pytest.mark.parametrize("bad", ["1", None, True, [1]])
    def test_value_type_checked(self, bad: object) -> None:
        with pytest.raises(TypeError, match="Score.value must be a float"):
            Score(bad)  # type: ignore[arg-type]

    def test_nan_is_allowed_and_flagged(self) -> None:
        assert Score(math.nan, {"reason": "undefined"}).is_nan

    def test_passed_and_reason(self) -> None:
        assert Score(1.0, {"passed": True, "reason": "ok"}).passed is True
        assert Score(1.0).passed is None and Score(1.0).reason == ""

    def test_pickles_with_a_plain_copy_of_the_detail(self) -> None:
        s = Score(0.5, {"tp": 1.0, "rows": [1, 2]})
        back = pickle.loads(pickle.dumps(s))
        assert back == s and type(back.detail) is ReadOnlyDict


class TestPlainScore:
    """Issue 17: Score is a plain frozen dataclass; its detail a dict that refuses changes."""

    def test_no_hooks_in_the_class_or_the_package(self) -> None:
        assert "__getattr__" not in vars(Score) and "__reduce__" not in vars(Score)
        assert not hasattr(ek, "deferred_score") and "deferred_score" not in ek.__all__
        from ek import base, canon

        assert not hasattr(base, "deferred_score") and not hasattr(canon, "text_function")
        assert [f.name for f in dataclasses.fields(Score)] == ["value", "detail"]

    def test_importing_ek_registers_no_reducer(self) -> None:
        # (a copyreg entry for MappingProxyType was a process-wide side effect of importing ek)
        import copyreg
        from types import MappingProxyType

        assert MappingProxyType not in copyreg.dispatch_table
        with pytest.raises(TypeError):
            copy.deepcopy(MappingProxyType({"a": 1}))

    @pytest.mark.parametrize(
        "change",
        [
            lambda d: d.__setitem__("tp", 2.0),
            lambda d: d.__delitem__("tp"),
            lambda d: d.update(tp=2.0),
            lambda d: d.setdefault("x", 1),
            lambda d: d.pop("tp"),
            lambda d: d.popitem(),
            lambda d: d.clear(),
            lambda d: d.__ior__({"x": 1}),
        ],
    )
    def test_detail_refuses_every_change(self, change: Any) -> None:
        s = Score(0.5, {"tp": 1.0})
        with pytest.raises(TypeError, match="read-only"):
            change(s.detail)
        assert dict(s.detail) == {"tp": 1.0}

    def test_detail_reads_as_a_dict_and_copies_to_plain_dicts(self) -> None:
        s = Score(0.5, {"tp": 1.0, "rows": [1]})
        assert isinstance(s.detail, dict) and s.detail == {"tp": 1.0, "rows": [1]}
        assert type(s.detail.copy()) is dict and type(dict(s.detail)) is dict
        assert type(s.detail | {"x": 1}) is dict
        assert json.dumps(s.detail) == '{"tp": 1.0, "rows": [1]}'
        assert type(copy.deepcopy(s.detail)) is ReadOnlyDict
        assert type(pickle.loads(pickle.dumps(s.detail))) is ReadOnlyDict

    def test_a_read_only_detail_is_kept_as_given(self) -> None:
        d = ReadOnlyDict({"tp": 1.0})
        assert Score(1.0, d).detail is d
        assert dataclasses.replace(Score(1.0, d), value=0.5) == Score(0.5, {"tp": 1.0})

    def test_int_value_becomes_a_float(self) -> None:
        s = Score(1, {})  # type: ignore[arg-type]
        assert type(s.value) is float and s == Score(1.0)


@pytest.fixture(scope="module")
def makers() -> list[tuple[str, Any]]:
    """(label, make) pairs: ``make()`` scores one demo episode afresh through a real metric.

    Every registered metric, the tool-call metric and its MatchResult route, the trajectory metric in every scheme, and Cost-of-Pass priced and
    unpriced (unpriced: the value is NaN). Both demo agents, so details hold missing and extra
    calls as well as perfect runs.
    """
    from ek.agents.demo import DEMO_PRICES, baseline_agent, candidate_agent, load_tasks
    from ek.agents.metrics import CostPerSuccessMetric
    from ek.agents.toolcalls import ToolCallMetric, match_calls, tool_call_score
    from ek.agents.trajectory import TrajectoryMetric
    from ek.registry import registered as names

    metrics = {n: resolve("metrics", n) for n in names("metrics")}
    metrics["ToolCallMetric()"] = ToolCallMetric()
    for scheme in ("exact", "in_order", "any_order", "superset"):
        metrics[f"TrajectoryMetric({scheme!r})"] = TrajectoryMetric(scheme)
    metrics["CostPerSuccessMetric(prices)"] = CostPerSuccessMetric(prices=DEMO_PRICES)
    out: list[tuple[str, Any]] = []
    for agent in (baseline_agent(), candidate_agent()):
        for task in load_tasks()[::3]:
            ep = agent(task)
            for name, m in metrics.items():
                out.append(
                    (f"{name} {agent.name} {task.task_id}", lambda m=m, e=ep, t=task: m(e, t))
                )
            out.append(
                (
                    f"tool_call_score {agent.name} {task.task_id}",
                    lambda e=ep, t=task: tool_call_score(match_calls(e.trajectory, t.gold_calls)),
                )
            )
    return out


class TestScoreCopies:
    """Issue 16 item 12: ``dataclasses.asdict(score)`` raised TypeError for every Score (its
    read-only detail did not deep-copy); copies, pickles and equality must hold for every Score a
    real metric returns, read or not yet read."""

    def test_the_scores_cover_nan_values_and_row_lists(self, makers: list[tuple[str, Any]]) -> None:
        scores = [make() for _, make in makers]
        assert {"cost_per_success", "task_success", "tool_calls", "trajectory"} <= {
            label.split()[0] for label, _ in makers
        }
        assert any(s.is_nan for s in scores)  # unpriced Cost-of-Pass
        assert any(s.detail.get("missing") for s in scores)  # a tool call the candidate missed

    @pytest.mark.parametrize(
        "copy_of",
        [
            pytest.param(lambda s: Score(**dataclasses.asdict(s)), id="asdict"),
            pytest.param(copy.deepcopy, id="deepcopy"),
            pytest.param(copy.copy, id="copy"),
            pytest.param(lambda s: pickle.loads(pickle.dumps(s)), id="pickle"),
            pytest.param(lambda s: dataclasses.replace(s), id="replace"),
            pytest.param(lambda s: s, id="itself"),
        ],
    )
    def test_every_score_copies_to_an_equal_score(
        self, makers: list[tuple[str, Any]], copy_of: Any
    ) -> None:
        for label, make in makers:
            reference = make()
            back = copy_of(make())  # a fresh, unread Score
            assert type(back) is Score and type(back.detail) is ReadOnlyDict, label
            assert back == reference and reference == back, label
            assert (back != reference) is False, label

    def test_asdict_gives_the_value_and_every_detail_key(
        self, makers: list[tuple[str, Any]]
    ) -> None:
        for label, make in makers:
            s = make()
            d = dataclasses.asdict(s)
            assert list(d) == ["value", "detail"], label
            assert list(d["detail"]) == list(s.detail), label
            assert d["value"] == s.value or (math.isnan(d["value"]) and s.is_nan), label

    def test_a_deep_copy_shares_no_row_list(self, makers: list[tuple[str, Any]]) -> None:
        s = next(s for s in (make() for _, make in makers) if s.detail.get("missing"))
        c = copy.deepcopy(s)
        assert c.detail["missing"] == s.detail["missing"]
        assert c.detail["missing"] is not s.detail["missing"]

    def test_nan_equals_nan_and_nothing_else(self) -> None:
        nan = float("nan")
        a = Score(nan, {"reason": "no price", "dollars": None, "rows": [nan, {"x": nan}]})
        assert a == Score(nan, {"reason": "no price", "dollars": None, "rows": [nan, {"x": nan}]})
        assert a != Score(nan, {"reason": "no price", "dollars": None, "rows": [nan, {"x": 1.0}]})
        assert a != Score(nan, {"reason": "other"}) and Score(nan) != Score(0.0)
        assert Score(1.0, {"rows": [1]}) != Score(1.0, {"rows": (1,)})
        assert Score(1.0) != 1.0 and Score(1.0) != {"value": 1.0, "detail": {}}


def test_is_episode_duck_typed() -> None:
    from ek.agents.base import Episode

    assert is_episode(Episode("t"))
    assert not is_episode({"task_id": "t"})


class TestRegistry:
    def test_register_resolve_unregister(self) -> None:
        obj = object()
        register("test-ns", "thing", obj)
        assert resolve("test-ns", "thing") is obj
        assert registered("test-ns") == ["thing"]
        unregister("test-ns", "thing")
        assert registered("test-ns") == []

    def test_unknown_name_lists_known(self) -> None:
        import ek.agents  # noqa: F401  (registers the default checkers)

        with pytest.raises(
            UnknownNameError,
            match=r"unknown checkers name 'nope'; expected one of \[.*'final_state'.*'output'",
        ):
            resolve("checkers", "nope")

    def test_unknown_name_is_lookup_and_value_error(self) -> None:
        with pytest.raises(LookupError):
            resolve("empty-ns", "x")
        with pytest.raises(ValueError, match="nothing is registered"):
            resolve("empty-ns", "x")

    def test_bad_key(self) -> None:
        with pytest.raises(TypeError, match="non-empty str"):
            register("", "x", 1)


class TestGrammar:
    def test_lookups_and_defaults(self) -> None:
        g = GraphGrammar(
            [NodeType("refund", (FieldSpec("amount", "number", importance=5.0),), weight=10.0)],
            default_weight=2.0,
        )
        assert g.weight("refund") == 10.0
        assert g.weight("other") == 2.0
        assert g.importance("refund", "amount") == 5.0
        assert g.importance("refund", "memo") == 1.0
        assert "refund" in g and len(g) == 1

    def test_merge_conflict(self) -> None:
        a = GraphGrammar([NodeType("t", weight=1.0)])
        b = GraphGrammar([NodeType("t", weight=2.0)])
        with pytest.raises(ValueError, match="declared differently"):
            a.merge(b)
        assert a.merge(GraphGrammar([NodeType("u")])).node("u") is not None

    @pytest.mark.parametrize(
        ("kwargs", "exc", "msg"),
        [
            ({"name": ""}, TypeError, "non-empty str"),
            ({"name": "x", "type": "float"}, ValueError, "type must be one of"),
            ({"name": "x", "importance": -1}, ValueError, ">= 0"),
            ({"name": "x", "importance": math.nan}, ValueError, "finite"),
            ({"name": "x", "importance": "high"}, TypeError, "must be a number"),
            ({"name": "x", "required": "yes"}, TypeError, "required must be a bool"),
        ],
    )
    def test_fieldspec_validation(self, kwargs: dict, exc: type, msg: str) -> None:
        with pytest.raises(exc, match=msg):
            FieldSpec(**kwargs)

    def test_duplicate_fields_and_nodes(self) -> None:
        with pytest.raises(ValueError, match="duplicate field"):
            NodeType("t", (FieldSpec("a"), FieldSpec("a")))
        with pytest.raises(ValueError, match="duplicate node type"):
            GraphGrammar([NodeType("t"), NodeType("t")])

    def test_fieldspec_round_trip(self) -> None:
        f = FieldSpec(
            "q",
            ("string", "null"),
            required=False,
            importance=2.5,
            description="query",
            schema={"type": "string"},
        )
        assert FieldSpec.from_dict(f.to_dict()) == f
        with pytest.raises(ValueError, match="unknown field"):
            FieldSpec.from_dict({"name": "q", "weight": 1})


class TestFields:
    def test_hand_derived_counts(self) -> None:
        # gold {a:1, b:2 (importance 3)}, pred {a:1, b:9, c:0}:
        # a match -> tp 1; b wrong -> fp 3 + fn 3; c extra -> fp 1.  F1 = 2/(2+4+3) = 2/9
        c = compare_fields({"a": 1, "b": 9, "c": 0}, {"a": 1, "b": 2}, importance={"b": 3.0})
        assert c.counts == FieldCounts(tp=1.0, fp=4.0, fn=3.0)
        assert c.counts.f1 == pytest.approx(2 / 9)
        assert not c.exact

    def test_optional_missing_is_free(self) -> None:
        c = compare_fields({"a": 1}, {"a": 1, "unit": "cm"}, optional={"unit"})
        assert c.exact and c.counts == FieldCounts(1.0, 0.0, 0.0)

    def test_micro_is_ratio_of_sums_not_mean(self) -> None:
        # item 1: tp=1 -> F1 1.0; item 2: tp=0, fp=3, fn=3 -> F1 0.  mean of F1s = 0.5,
        # micro = 2*1 / (2*1 + 3 + 3) = 0.25
        items = [FieldCounts(1, 0, 0), FieldCounts(0, 3, 3)]
        assert micro_f1(items) == pytest.approx(0.25)

    def test_degenerate_f1(self) -> None:
        assert f1_score(0, 0, 0) == 1.0
        with pytest.raises(ValueError, match="fp must be a finite number >= 0"):
            f1_score(1, -1, 0)

    @given(
        st.lists(st.tuples(st.floats(0, 100), st.floats(0, 100), st.floats(0, 100)), max_size=20)
    )
    def test_micro_f1_bounded(self, items: list[tuple[float, float, float]]) -> None:
        v = micro_f1(FieldCounts(*t) for t in items)
        assert 0.0 <= v <= 1.0


class TestCanon:
    def test_default(self) -> None:
        assert canonicalize_text("  Hello\u00a0  WORLD\n") == "hello world"
        assert canonicalize_text("e\u0301") == "\u00e9"  # NFC composes
        assert canonicalize_text("STRASSE") == canonicalize_text("straße")  # casefold

    @given(st.text(st.characters(codec="utf-8"), max_size=30))
    def test_default_folds_whitespace_like_the_regex(self, s: str) -> None:
        # The written definition: NFC, casefold, runs of \s to one space, ends stripped.
        want = re.sub(r"\s+", " ", unicodedata.normalize("NFC", s).casefold()).strip()
        assert canonicalize_text(s) == want

    def test_every_unicode_space_is_folded(self) -> None:
        spaces = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
        assert canonicalize_text(f"a{spaces}b{spaces}") == "a b"
        assert all(re.fullmatch(r"\s", c) for c in spaces)

    def test_bfcl_exact_character_class(self) -> None:
        # BFCL removes exactly ` ,./-_*^`, lowercases and turns ' into ".
        assert bfcl_standardize("A b,c.d/e-f_g*h^i") == "abcdefghi"
        assert bfcl_standardize("What?!:;()$%") == "what?!:;()$%"
        assert bfcl_standardize("It's") == 'it"s'

    @given(st.text(st.characters(codec="utf-8"), max_size=30))
    def test_bfcl_drops_what_its_regex_drops(self, s: str) -> None:
        want = re.sub(r"[ \,\.\/\-\_\*\^]", "", s).lower().replace("'", '"')
        assert bfcl_standardize(s) == want

    def test_deep_and_resolution(self) -> None:
        c = resolve_canonicalizer("default")
        assert c({"k": ["A ", ("B",)], "n": 3}) == {"k": ["a", ("b",)], "n": 3}
        assert resolve_canonicalizer("raw")("A ") == "A "
        assert resolve_canonicalizer(None) is resolve_canonicalizer("default")
        with pytest.raises(TypeError, match="registered name or a callable"):
            resolve_canonicalizer(3)  # type: ignore[arg-type]


class _Exact:
    name, higher_is_better = "exact", True

    def __call__(self, pred: object, gold: object) -> Score:
        return Score(float(pred == gold), {"hits": int(pred == gold)})

    def aggregate(self, scores: list[Score]) -> float:
        return sum(s.detail["hits"] for s in scores) / len(scores)


def test_evaluate_uses_metric_aggregate() -> None:
    r = evaluate(_Exact(), [1, 2, 3], [1, 0, 3])
    assert r.value == pytest.approx(2 / 3) and r.n == 3 and r.values == [1.0, 0.0, 1.0]
    assert r.to_dict()["metric"] == "exact"


def test_evaluate_validates() -> None:
    with pytest.raises(ValueError, match="one gold per prediction, got 2 preds and 1 golds"):
        evaluate(_Exact(), [1, 2], [1])
    with pytest.raises(TypeError, match="lacks"):
        evaluate(object(), [], [])
