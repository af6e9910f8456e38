"""Every stack's real spans read right: each episode against the scripted truth (issue 29).

The files under tests/data/traces/stacks/ were written by the real instrumentations (OpenAI
Agents SDK under OpenInference and OpenLLMetry, LangGraph under both, smolagents under
OpenInference, the official openai-v2 instrumentation with util-genai, pydantic-ai's own) through
OpenTelemetry's OTLP JSON file exporter, around one scripted world; each ``<stack>.truth.json``
says what happened, from the script (schema in tests/data/traces/README.md). The frameworks are
not installed here: the test reads the committed files.

For every run of every stack: the input, the calls (names, arguments, results, errors, call ids) of the
run's agent (``scope="top"``) and of each sub-agent (``scope="all"``, by the agent each step's
metadata names), the output, the agent's name, the sub-agent structure (name, kind, the call
that started it), tokens by kind and model, task / trial grouping and the verdict; what the
truth says a stack does not record must be named in the episode's metadata (where the run has
it: a tool error's text only in a run with a failing call) and in ``ek-agents report``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from ek.agents.base import Episode
from ek.agents.cli import main
from ek.agents.traces import read_traces
from ek.agents.traces._assemble import NOT_RECORDED
from ek.agents.traces._attrs import maybe_json

STACKS = Path(__file__).parent / "data" / "traces" / "stacks"
TRUTHS = sorted(STACKS.glob("*.truth.json"))


def _truth(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def _read(truth: Mapping[str, Any], scope: str) -> dict[tuple[str, int], Episode]:
    h = truth["harness"]
    reading = read_traces(
        STACKS / truth["spans"],
        task_attribute=h["task_attribute"],
        trial_attribute=h["trial_attribute"],
        success_attribute=h["success_attribute"],
        scope=scope,
    )
    assert reading.problems == (), [str(p) for p in reading.problems]
    return {(ep.task_id, ep.trial): ep for ep in reading.episodes}


def _subs(agents: list[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    for a in agents:
        yield a
        yield from _subs(a.get("sub_agents", []))


def _applies(key: str, run: Mapping[str, Any]) -> bool:
    """Whether what a stack does not record shows in this run (a tool error's text only where a
    call failed, cached tokens only where the script cached some, ...)."""
    kinds = [s["kind"] for s in _subs(run["sub_agents"])]
    tokens = run["tokens"].values()
    return {
        "tool_error_text": any(
            c["error"] for a in [run, *_subs(run["sub_agents"])] for c in a["calls"]
        ),
        "sub_agent_structure": "sub_agent" in kinds,
        "handoff_target": "handoff" in kinds,
        "cached_tokens": any(t["cache_read"] for t in tokens),
        "reasoning_tokens": any(t["reasoning"] for t in tokens),
    }.get(key, True)


def _expected_tokens(truth: Mapping[str, Any], run: Mapping[str, Any]) -> dict[str, Any]:
    """The truth's tokens as a stack can show them: with cached tokens not recorded every input
    token reads as uncached (input + cache_read); with reasoning not recorded none reads as
    reasoning (output is whole either way)."""
    out = {}
    for model, t in run["tokens"].items():
        t = dict(t)
        if "cached_tokens" in truth["not_recorded"]:
            t["input"], t["cache_read"] = t["input"] + t["cache_read"], 0
        if "reasoning_tokens" in truth["not_recorded"]:
            t["reasoning"] = 0
        out[model] = t
    return out


def _check_calls(
    truth: Mapping[str, Any], got: list[Any], want: list[Mapping[str, Any]], where: str
) -> None:
    assert [(s.tool, dict(s.args)) for s in got] == [(c["name"], c["arguments"]) for c in want], (
        where
    )
    for step, call in zip(got, want):
        label = f"{where} {call['name']}"
        assert (step.error is None) == (call["error"] is None), (label, step.error)
        if call["error"] is None:
            # the same result: a tool's JSON text and the object it encodes are one result
            assert maybe_json(step.observation) == maybe_json(call["result"]), label
        elif "tool_error_text" not in truth["not_recorded"]:
            assert call["error"] in step.error, (label, step.error)
        if "call_ids" not in truth["not_recorded"]:
            assert step.id == call["call_id"], label


@pytest.mark.parametrize("path", TRUTHS, ids=[p.name.split(".")[0] for p in TRUTHS])
def test_every_run_reads_as_the_truth(path: Path) -> None:
    truth = _truth(path)
    top, every = _read(truth, "top"), _read(truth, "all")
    runs = {(r["task_id"], r["trial"]): r for r in truth["runs"]}
    assert sorted(top) == sorted(runs)  # task / trial grouping: every run once, nothing more
    for key, run in runs.items():
        ep, meta = top[key], top[key].metadata["trace"]
        where = f"{truth['stack']} {key} {run['scenario']}"
        assert ep.success is run["success"] and ep.input == run["input"], where
        assert ep.run.agent == run["agent"] and meta["agent"] == run["agent"], where
        _check_calls(truth, list(ep.trajectory), run["calls"], where)
        if "output" in truth["not_recorded"]:
            assert ep.output is None or ep.output == run["output"], where
        else:
            assert ep.output == run["output"], where
        tokens = {
            c.model: {
                "input": c.input_tokens,
                "cache_read": c.cache_read_tokens,
                "cache_write": c.cache_write_tokens,
                "output": c.output_tokens,
                "reasoning": c.reasoning_tokens,
            }
            for c in ep.cost
        }
        assert tokens == _expected_tokens(truth, run), where
        # the sub-agents: who they are, how they came in, which call started them
        subs = [a for a in meta["agents"] if a["depth"] > 1]
        want = list(_subs(run["sub_agents"]))
        assert [(a["name"], a["kind"]) for a in subs] == [(s["name"], s["kind"]) for s in want]
        for a, s in zip(subs, want):
            started = a["started_by"]
            assert started is not None and started["name"] == s["started_by"]["name"], where
            if "call_ids" not in truth["not_recorded"]:
                assert started["call_id"] == s["started_by"]["call_id"], where
        # every agent's own calls, from the whole run (scope="all")
        whole = every[key]
        by_agent: dict[str, list[Any]] = {}
        for step, info in zip(whole.trajectory, whole.metadata["trace"]["steps"], strict=True):
            by_agent.setdefault(info["agent"], []).append(step)
        _check_calls(truth, by_agent.pop(run["agent"], []), run["calls"], where)
        for s in want:
            _check_calls(truth, by_agent.pop(s["name"], []), s["calls"], f"{where} {s['name']}")
        assert by_agent == {}, where
        # what the stack does not record is named, where the run has it
        for k in truth["not_recorded"]:
            if _applies(k, run):
                assert k in meta["not_recorded"], (where, k, meta["not_recorded"])


@pytest.mark.parametrize("path", TRUTHS, ids=[p.name.split(".")[0] for p in TRUTHS])
def test_report_reads_each_stack_and_names_what_is_not_recorded(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truth = _truth(path)
    h = truth["harness"]
    args = [
        "report",
        str(STACKS / truth["spans"]),
        "--task-attribute",
        h["task_attribute"],
        "--trial-attribute",
        h["trial_attribute"],
        "--success-attribute",
        h["success_attribute"],
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    n_ok = sum(r["success"] for r in truth["runs"])
    assert f"({n_ok}/{len(truth['runs'])}, Wilson" in out
    assert "not read:" not in out and "UNSCORED" not in out
    for k in truth["not_recorded"]:
        if any(_applies(k, r) for r in truth["runs"]):
            assert f"{NOT_RECORDED[k][0]} not recorded" in out, (k, out)
    if "cached_tokens" in truth["not_recorded"]:
        assert "dollars are an upper bound" in out
