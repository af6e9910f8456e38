"""Layer B (Episode, Step, Trajectory, Cost, RunProvenance) and Layer A (ToolSpec, TaskSpec)."""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ek.agents.base import (
    DESTRUCTIVE_WEIGHT,
    Cost,
    Episode,
    RunProvenance,
    Step,
    TaskSpec,
    ToolSpec,
    Trajectory,
    read_episodes,
    suite_grammar,
    write_episodes,
)
from ek.grammar import FieldSpec


def _full_episode() -> Episode:
    return Episode(
        task_id="t-1",
        trajectory=[
            Step(
                "lookup",
                {"order_id": "A1"},
                observation={"status": "paid", "items": [1, 2]},
                id="c1",
            ),
            Step(
                "refund_order",
                {"order_id": "A1", "amount": 12.5},
                error="insufficient funds",
                id="c2",
            ),
        ],
        output="refund failed",
        final_state={"orders": {"A1": "paid"}},
        cost=[
            Cost(
                input_tokens=1200,
                output_tokens=300,
                reasoning_tokens=100,
                cache_read_tokens=800,
                model="gpt-4o",
            ),
            Cost(input_tokens=50, output_tokens=20, model="sim-model", role="simulator"),
        ],
        success=False,
        run=RunProvenance(
            agent="bot",
            model="gpt-4o",
            scaffold="react",
            simulator="sim-1",
            suite_version="v2",
            seed=7,
            extra={"note": "x"},
        ),
        trial=3,
        input={"question": "refund A1"},
        error=None,
        duration=1.25,
        metadata={"slice": "refund"},
    )


class TestRoundTrip:
    def test_episode_dict_json_pickle(self) -> None:
        ep = _full_episode()
        assert Episode.from_dict(ep.to_dict()) == ep
        assert Episode.from_json(ep.to_json()) == ep
        assert pickle.loads(pickle.dumps(ep)) == ep
        # to_dict is plain JSON
        json.dumps(ep.to_dict())

    def test_minimal_episode(self) -> None:
        assert Episode("t").to_dict() == {"task_id": "t"}
        assert Episode.from_dict({"task_id": "t"}) == Episode("t")

    def test_jsonl(self, tmp_path: Path) -> None:
        p = tmp_path / "e.jsonl"
        eps = [_full_episode(), Episode("b", trial=1)]
        assert write_episodes(p, eps) == 2
        write_episodes(p, [Episode("c")], append=True)
        assert [e.task_id for e in read_episodes(p)] == ["t-1", "b", "c"]
        assert next(iter(read_episodes(p))) == eps[0]

    def test_jsonl_bad_line_names_line(self, tmp_path: Path) -> None:
        p = tmp_path / "e.jsonl"
        p.write_text('{"task_id": "a"}\n{"task_id": 5}\n')
        with pytest.raises(TypeError, match=r"e\.jsonl:2: Episode.task_id must be a non-empty str"):
            list(read_episodes(p))

    def test_toolspec_taskspec_round_trip(self) -> None:
        t = ToolSpec(
            "refund",
            [FieldSpec("amount", "number", importance=5.0)],
            destructive=True,
            description="money back",
        )
        task = TaskSpec(
            "t",
            input="hi",
            gold={"db": 1},
            tools=[t, ToolSpec("look")],
            gold_calls=[Step("refund", {"amount": 3})],
            slice="refund",
            tags=("hard",),
        )
        again = TaskSpec.from_dict(json.loads(json.dumps(task.to_dict())))
        assert again == task
        assert again.slices == ("refund", "hard")

    def test_provenance_signature(self) -> None:
        r = RunProvenance(agent="a", suite_version="v1", seed=3)
        assert r.signature().startswith("agent:a|suite_version:v1|seed:3|ek_version:")


class TestCost:
    def test_additive(self) -> None:
        a = Cost(input_tokens=10, output_tokens=4, reasoning_tokens=2, model="m", dollars=0.5)
        b = Cost(input_tokens=1, cache_write_tokens=3, output_tokens=1, model="m", dollars=0.25)
        c = a + b
        assert c.tokens() == {
            "input_tokens": 11,
            "output_tokens": 5,
            "cache_read_tokens": 0,
            "cache_write_tokens": 3,
            "reasoning_tokens": 2,
        }
        assert c.dollars == 0.75 and c.model == "m" and c.role == "agent"
        # unknown bill on one side with tokens spent: the sum is unknown, not the known part
        assert (a + Cost(input_tokens=1, model="m")).dollars is None
        # a zero cost adds nothing
        assert (a + Cost()).dollars == 0.5
        assert (a + Cost(model="other", role="judge")).model is None

    def test_reasoning_is_subset_of_output(self) -> None:
        with pytest.raises(
            ValueError, match=r"reasoning_tokens \(5\) must be <= output_tokens \(2\)"
        ):
            Cost(output_tokens=2, reasoning_tokens=5)

    @pytest.mark.parametrize(
        ("kw", "exc", "msg"),
        [
            ({"input_tokens": -1}, ValueError, "Cost.input_tokens must be an int >= 0, got -1"),
            ({"input_tokens": 1.5}, ValueError, "Cost.input_tokens must be an int >= 0, got 1.5"),
            ({"input_tokens": math.nan}, ValueError, "Cost.input_tokens"),
            ({"output_tokens": "3"}, TypeError, "Cost.output_tokens must be an int >= 0, got str"),
            ({"output_tokens": True}, TypeError, "Cost.output_tokens"),
            ({"role": ""}, ValueError, "Cost.role must be a non-empty str"),
            ({"dollars": -0.1}, ValueError, "Cost.dollars must be >= 0.0"),
            ({"dollars": math.inf}, ValueError, "Cost.dollars must be finite"),
        ],
    )
    def test_bad_cost(self, kw: dict, exc: type, msg: str) -> None:
        with pytest.raises(exc, match=msg.replace("(", r"\(").replace(")", r"\)")):
            Cost(**kw)

    def test_integral_float_accepted(self) -> None:
        assert Cost(input_tokens=12.0).input_tokens == 12  # type: ignore[arg-type]


class TestBadInput:
    @pytest.mark.parametrize(
        ("data", "exc", "msg"),
        [
            ({}, ValueError, r"Episode: missing required field\(s\) \['task_id'\]"),
            ({"task_id": ""}, ValueError, "Episode.task_id must be a non-empty str, got ''"),
            (
                {"task_id": "t", "colour": 1},
                ValueError,
                r"Episode: unknown field\(s\) \['colour'\]",
            ),
            (
                {"task_id": "t", "trial": -1},
                ValueError,
                "Episode.trial must be an int >= 0, got -1",
            ),
            (
                {"task_id": "t", "success": "yes"},
                TypeError,
                "Episode.success must be a bool or None",
            ),
            (
                {"task_id": "t", "trajectory": "abc"},
                TypeError,
                "trajectory must be a list of steps",
            ),
            (
                {"task_id": "t", "trajectory": [{"args": {}}]},
                ValueError,
                r"Step: missing required field\(s\) \['tool'\]",
            ),
            (
                {"task_id": "t", "trajectory": [{"tool": "x", "args": [1]}]},
                TypeError,
                r"Step\('x'\).args must be a mapping",
            ),
            (
                {"task_id": "t", "cost": [{"input_tokens": -5}]},
                ValueError,
                "Cost.input_tokens must be an int >= 0, got -5",
            ),
            ({"task_id": "t", "cost": 3}, TypeError, "Episode.cost must be a Cost"),
            (
                {"task_id": "t", "run": {"seed": "x"}},
                TypeError,
                "RunProvenance.seed must be an int",
            ),
            ({"task_id": "t", "duration": math.nan}, ValueError, "Episode.duration must be finite"),
            (
                {"task_id": "t", "output": math.nan},
                ValueError,
                "Episode.output must not contain NaN",
            ),
            ([1, 2], TypeError, "Episode.from_dict expects a mapping, got list"),
        ],
    )
    def test_errors_name_field_expected_and_given(self, data: Any, exc: type, msg: str) -> None:
        with pytest.raises(exc, match=msg):
            Episode.from_dict(data)

    def test_from_json_rejects_nan_constant(self) -> None:
        with pytest.raises(ValueError, match="NaN/Infinity"):
            Episode.from_json('{"task_id": "t", "output": NaN}')
        with pytest.raises(ValueError, match="not valid JSON"):
            Episode.from_json("{")


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=5),
    lambda ch: st.lists(ch, max_size=3) | st.dictionaries(st.text(max_size=5), ch, max_size=3),
    max_leaves=12,
)
_keys = st.sampled_from(
    [
        "task_id",
        "trajectory",
        "output",
        "final_state",
        "cost",
        "success",
        "run",
        "trial",
        "input",
        "error",
        "duration",
        "metadata",
        "bogus",
    ]
)
_almost_episode = st.dictionaries(_keys, _json, max_size=8) | st.fixed_dictionaries(
    {"task_id": st.text(max_size=4)},
    optional={
        "trajectory": st.lists(
            st.dictionaries(
                st.sampled_from(["tool", "args", "observation", "error", "id", "x"]),
                _json,
                max_size=4,
            ),
            max_size=3,
        ),
        "cost": st.lists(
            st.dictionaries(
                st.sampled_from(
                    [
                        "input_tokens",
                        "output_tokens",
                        "reasoning_tokens",
                        "model",
                        "role",
                        "dollars",
                    ]
                ),
                _json,
                max_size=4,
            ),
            max_size=2,
        ),
        "run": st.dictionaries(
            st.sampled_from(["agent", "seed", "extra", "suite_version"]), _json, max_size=3
        ),
        "trial": _json,
        "success": _json,
        "duration": _json,
    },
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_json | _almost_episode)
def test_from_dict_accepts_only_valid_episodes(data: Any) -> None:
    try:
        ep = Episode.from_dict(data)
    except (ValueError, TypeError) as e:
        assert str(e), "errors must never have an empty message"
        return
    assert isinstance(ep, Episode)
    # whatever was accepted survives a JSON round trip unchanged
    assert Episode.from_json(ep.to_json()) == ep


class TestLayerA:
    def test_destructive_default_weight(self) -> None:
        assert ToolSpec("rm", destructive=True).weight == DESTRUCTIVE_WEIGHT == 10.0
        assert ToolSpec("rm", destructive=True, weight=3).weight == 3.0
        assert ToolSpec("ls").weight == 1.0

    def test_from_json_schema_and_openai(self) -> None:
        spec = {
            "type": "function",
            "function": {
                "name": "refund_order",
                "description": "refund",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "order_id": {"type": "string", "x-importance": 8},
                        "amount": {"type": "number"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["order_id", "amount"],
                },
            },
        }
        t = ToolSpec.from_openai(spec, destructive=True)
        nt = t.to_node_type()
        assert nt.weight == 10.0 and nt.metadata["destructive"] is True
        assert [(f.name, f.type, f.required, f.importance) for f in t.args] == [
            ("order_id", "string", True, 8.0),
            ("amount", "number", True, 1.0),
            ("tags", "array", False, 1.0),
        ]

    def test_bfcl_python_type_names(self) -> None:
        t = ToolSpec(
            "f",
            parameters={
                "type": "dict",
                "properties": {"a": {"type": "float"}, "b": {"type": "dict"}, "c": {"type": "any"}},
            },
        )
        assert [f.type for f in t.args] == ["number", "object", None]

    def test_errors(self) -> None:
        with pytest.raises(ValueError, match="either args or parameters"):
            ToolSpec("f", [FieldSpec("a")], parameters={"properties": {}})
        with pytest.raises(
            ValueError, match=r"importance given for unknown argument\(s\) \['zz'\]"
        ):
            ToolSpec("f", parameters={"properties": {"a": {}}}, importance={"zz": 2})
        with pytest.raises(ValueError, match=r"duplicate tool names \['a'\]"):
            TaskSpec("t", tools=[ToolSpec("a"), ToolSpec("a")])
        with pytest.raises(TypeError, match="tags must be a list of str"):
            TaskSpec("t", tags="hard")  # type: ignore[arg-type]

    def test_suite_grammar_merges_tools(self) -> None:
        refund = ToolSpec("refund", [FieldSpec("amount", importance=5)], destructive=True)
        g = suite_grammar(
            [TaskSpec("a", tools=[refund]), TaskSpec("b", tools=[refund, ToolSpec("look")])]
        )
        assert (
            g.weight("refund") == 10.0
            and g.importance("refund", "amount") == 5.0
            and g.weight("look") == 1.0
        )
        with pytest.raises(ValueError, match="declared differently"):
            suite_grammar(
                [TaskSpec("a", tools=[refund]), TaskSpec("b", tools=[ToolSpec("refund")])]
            )

    def test_trajectory_sequence(self) -> None:
        t = Trajectory([Step("a"), Step("b", error="boom")])
        assert t[0].tool == "a" and isinstance(t[1:], Trajectory) and t.errors == (t[1],)
        with pytest.raises(TypeError, match="iterable of steps"):
            Trajectory("ab")  # type: ignore[arg-type]

    def test_provenance_incompatibilities(self) -> None:
        a = RunProvenance(simulator="s1", suite_version="v1", scaffold="react")
        b = RunProvenance(simulator="s2", suite_version="v1", scaffold="plan")
        assert a.incompatibilities(b) == [("simulator", "s1", "s2"), ("scaffold", "react", "plan")]
        assert a.comparability_key() == ("s1", "v1", "react")


# --------------------------------------------------------------------------- the facade

# The spec's import path: every name ek.agents.base exported before the split (issue 17).
_BASE_NAMES = {
    "COMPARABILITY_KEYS": "episode",
    "TOKEN_KINDS": "episode",
    "Cost": "episode",
    "Episode": "episode",
    "RunProvenance": "episode",
    "Step": "episode",
    "Trajectory": "episode",
    "read_episodes": "episode",
    "write_episodes": "episode",
    "DESTRUCTIVE_WEIGHT": "spec",
    "TaskSpec": "spec",
    "ToolSpec": "spec",
    "suite_grammar": "spec",
}


def test_base_is_the_face_of_episode_and_spec() -> None:
    import importlib

    import ek.agents
    import ek.agents.base as base

    assert sorted(base.__all__) == sorted(_BASE_NAMES)
    for name, concept in _BASE_NAMES.items():
        home = importlib.import_module(f"ek.agents._{concept}")
        assert name in home.__all__, (name, concept)
        assert getattr(base, name) is getattr(home, name), name
        assert not hasattr(ek.agents, name), name  # one import path: the face, not the root
    # the face defines nothing of its own
    own = [
        n
        for n, v in vars(base).items()
        if not n.startswith("_") and getattr(v, "__module__", None) == "ek.agents.base"
    ]
    assert own == []
    # classes report their concept module (pickles and reprs name where the code lives)
    assert Episode.__module__ == "ek.agents._episode" and TaskSpec.__module__ == "ek.agents._spec"
