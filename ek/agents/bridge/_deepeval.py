"""DeepEval test cases -> ``(Episode, TaskSpec)``, duck-typed (``deepeval`` is never imported).

:func:`from_deepeval_test_case` reads an ``LLMTestCase`` (or anything with its attributes), a
``ConversationalTestCase`` (anything with ``turns``), or the span tree DeepEval attaches to a test
case for ``requires_trace`` metrics (``test_case._trace_dict``), and returns the episode and its
gold as a :class:`~ek.agents.base.TaskSpec` (``gold`` = the expected output, ``gold_calls`` = the
expected tools), which every ek agent metric accepts as gold.

DeepEval has no field for a step error, a final state, a success verdict, cache or reasoning
tokens, so they travel in the test case's ``metadata`` under these keys (all optional; the
reverse converter ``ek.adapters.deepeval.to_deepeval_test_case`` writes them):

=====================  =====================================================================
``task_id``            the task (else the test case ``name``, else a digest of the input)
``raw_tool_calls``     the model's calls as it wrote them, one entry per call, **instead of**
                       ``tools_called`` (whose ``ToolCall`` refuses arguments that are not a
                       mapping): any accepted call shape, arguments as JSON text allowed, or
                       the call's JSON text; a malformed one is scored as a wrong call
                       (:mod:`ek.agents.bridge._model_calls`)
``step_errors``        one ``str | None`` per call (of ``raw_tool_calls`` when given, else of
                       ``tools_called``; DeepEval's ``ToolCall`` drops an ``error=`` field)
``step_ids``           one call id (or ``None``) per call, likewise
``cost``               a :class:`~ek.agents.base.Cost` dict, or a list of them (all token kinds,
                       model, role). Without it, ``input_token_count`` / ``output_token_count`` /
                       ``token_cost`` give one agent ``Cost`` (DeepEval's input count is read as
                       uncached input) with ``metadata["model"]`` as its model
``final_state``        the world state the episode left behind
``success``            a verdict recorded by the harness (a bool)
``error``              why the agent failed to produce an episode
``trial``              which trial of the task (0-based)
``run``                a :class:`~ek.agents.base.RunProvenance` dict
``input`` / ``output`` the original values when they are not strings (DeepEval requires
                       ``input`` and ``actual_output`` to be ``str``)
``gold``               the gold answer or goal state (else ``expected_output``)
``tools``              a list of :class:`~ek.agents.base.ToolSpec` dicts (the task's cost
                       grammar: tool weights, argument importances). Without it a tool-call
                       or trajectory metric built without a grammar weighs every tool and
                       argument 1 (the adapter's reason says so)
``expected_tools``     conversational cases only (they have no such field): the expected calls,
                       in any accepted call shape (``{"name", "arguments"}``, DeepEval's
                       ``{"name", "input_parameters"}``, ...: :mod:`ek.agents.toolcalls._parse`)
``episode_metadata``   the episode's own metadata; other unknown keys are merged into it too
=====================  =====================================================================

In a conversational case, each turn's ``metadata`` may carry ``raw_tool_calls``,
``step_errors``, ``step_ids`` and ``cost`` for that turn's calls.

Example:
    >>> from types import SimpleNamespace as NS
    >>> call = NS(name="lookup", input_parameters={"id": "A1"}, output={"status": "paid"})
    >>> tc = NS(input="refund A1", actual_output="done", expected_output="done",
    ...         tools_called=[call], expected_tools=[call], input_token_count=120,
    ...         output_token_count=30, token_cost=None, completion_time=1.5, name=None,
    ...         metadata={"task_id": "t1", "step_errors": [None]})
    >>> ep, gold = from_deepeval_test_case(tc)
    >>> ep.task_id, ep.trajectory.tools, ep.agent_cost.total_tokens, ep.duration
    ('t1', ('lookup',), 150, 1.5)
    >>> gold.gold, gold.gold_calls.tools
    ('done', ('lookup',))
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ek._validate import short_repr
from ek.agents._episode import Cost, Episode, RunProvenance, Step, Trajectory
from ek.agents._spec import TaskSpec, ToolSpec
from ek.agents.bridge._duck import cost_list
from ek.agents.bridge._model_calls import MODEL_CALLS_KEY, model_calls, read_model_call
from ek.agents.toolcalls._parse import MALFORMED_TOOL, normalize_calls

__all__ = ["RESERVED_METADATA_KEYS", "from_deepeval_test_case", "from_deepeval_trace"]

#: The ``metadata`` keys this bridge reads (see the module docstring); others go to
#: ``Episode.metadata``.
RESERVED_METADATA_KEYS = frozenset(
    {
        "task_id",
        "step_errors",
        "step_ids",
        "cost",
        "model",
        "final_state",
        "success",
        "error",
        "trial",
        "duration",
        "run",
        "input",
        "output",
        "gold",
        "tools",
        "expected_tools",
        "episode_metadata",
        MODEL_CALLS_KEY,
    }
)


def _get(obj: Any, *names: str, default: Any = None) -> Any:
    """The first present attribute (or mapping key) of ``names``."""
    for n in names:
        if isinstance(obj, Mapping):
            if n in obj:
                return obj[n]
        elif hasattr(obj, n):
            return getattr(obj, n)
    return default


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=repr, ensure_ascii=False)
    return "deepeval-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def _aligned(owner: str, values: Any, n: int) -> list[Any]:
    """``values`` as a list of length ``n`` (``None`` -> all ``None``)."""
    if values is None:
        return [None] * n
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(
            f"metadata[{short_repr(owner)}] must be a list, got {type(values).__name__}"
        )
    if len(values) != n:
        raise ValueError(
            f"metadata[{short_repr(owner)}] must have one entry per tool call ({n}), got {len(values)}"
        )
    return list(values)


def _step(call: Any, error: Any = None, call_id: Any = None) -> Step:
    """A called tool as a Step, read by the one call-shape normaliser (model output: a
    malformed call becomes a :data:`~ek.agents.toolcalls.MALFORMED_TOOL` step saying why)."""
    read = read_model_call(call)
    why = read.error if read.tool == MALFORMED_TOOL else None
    return Step(
        tool=read.tool,
        args=read.args,
        observation=_get(call, "output", "observation"),
        error=why if error is None else str(error) if why is None else f"{why}; {error}",
        id=None if call_id is None else str(call_id),
    )


def _steps(calls: Any, md: Mapping[str, Any]) -> list[Step]:
    """The calls (the model's own, ``metadata["raw_tool_calls"]``, when given) as Steps."""
    raw = model_calls(md.get(MODEL_CALLS_KEY), f"metadata[{MODEL_CALLS_KEY!r}]")
    calls = raw if raw is not None else list(calls or [])
    errors = _aligned("step_errors", md.get("step_errors"), len(calls))
    ids = _aligned("step_ids", md.get("step_ids"), len(calls))
    return [_step(c, e, i) for c, e, i in zip(calls, errors, ids)]


def _count_cost(tc: Any, md: Mapping[str, Any]) -> list[Cost]:
    i = _get(tc, "input_token_count")
    o = _get(tc, "output_token_count")
    d = _get(tc, "token_cost")
    if i is None and o is None and d is None:
        return []
    return [Cost(input_tokens=i or 0, output_tokens=o or 0, model=md.get("model"), dollars=d)]


def _metadata(md: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(md.get("episode_metadata") or {})
    out.update({k: v for k, v in md.items() if k not in RESERVED_METADATA_KEYS})
    return out


def _episode_fields(md: Mapping[str, Any]) -> dict[str, Any]:
    run = md.get("run")
    return {
        "final_state": md.get("final_state"),
        "success": md.get("success"),
        "error": md.get("error"),
        "trial": md.get("trial") or 0,
        "run": RunProvenance.from_dict(run) if isinstance(run, Mapping) else run,
        "metadata": _metadata(md),
    }


def _gold_calls(calls: Any) -> Trajectory | None:
    """The expected calls, in any accepted call shape (gold: a malformed one raises)."""
    if calls is None:
        return None
    return Trajectory(normalize_calls(calls, strict=True))


def _task(
    task_id: str, inp: Any, gold: Any, calls: Any, md: Mapping[str, Any], tags: Any = None
) -> TaskSpec:
    tools = [t if isinstance(t, ToolSpec) else ToolSpec.from_dict(t) for t in md.get("tools") or []]
    return TaskSpec(
        task_id,
        input=inp,
        gold=gold,
        tools=tuple(tools),
        gold_calls=_gold_calls(calls),
        tags=tuple(tags or ()),
    )


def _walk(span: Mapping[str, Any]) -> Any:
    yield span
    for child in span.get("children") or []:
        yield from _walk(child)


def _tool_span_step(span: Mapping[str, Any]) -> Step:
    """A tool span as a step: its input the arguments (a non-mapping one as ``input``), its
    output the observation, its error the step's."""
    inp = span.get("input")
    args = inp if isinstance(inp, Mapping) else ({} if inp is None else {"input": inp})
    err = span.get("error")
    return Step(
        tool=str(span.get("name") or "tool"),
        args=args,
        observation=span.get("output"),
        error=None if err is None else str(err),
    )


def _llm_span_cost(span: Mapping[str, Any]) -> list[Cost]:
    """An LLM span's agent cost (none when it counted no tokens)."""
    i, o = span.get("input_token_count"), span.get("output_token_count")
    if i is None and o is None:
        return []
    return [Cost(input_tokens=i or 0, output_tokens=o or 0, model=span.get("model"))]


def from_deepeval_trace(
    trace: Mapping[str, Any], *, task_id: str, metadata: Mapping[str, Any] | None = None
) -> Episode:
    """An :class:`Episode` from DeepEval's span tree (``test_case._trace_dict``).

    Tool spans (``type == "tool"``, depth-first in call order) become steps, with the span's
    ``error`` as the step error; LLM spans contribute one agent :class:`Cost` each (their
    ``input_token_count`` / ``output_token_count`` / ``model``). The root span's input and
    output are the episode's. When no tool span exists, the spans' auto-filled
    ``tools_called`` lists are used instead.

    Example:
        >>> tree = {"name": "agent", "type": "agent", "input": "q", "output": "a", "children": [
        ...     {"name": "think", "type": "llm", "model": "m", "input_token_count": 50,
        ...      "output_token_count": 5, "children": []},
        ...     {"name": "search", "type": "tool", "input": {"q": "x"}, "error": "boom",
        ...      "children": []}]}
        >>> ep = from_deepeval_trace(tree, task_id="t")
        >>> ep.trajectory[0].error, ep.agent_cost.total_tokens, ep.output
        ('boom', 55, 'a')
    """
    if not isinstance(trace, Mapping):
        raise TypeError(f"a DeepEval trace must be a dict span tree, got {type(trace).__name__}")
    md = dict(metadata or {})
    steps: list[Step] = []
    costs: list[Cost] = []
    listed: list[Step] = []
    for span in _walk(trace):
        kind = span.get("type")
        if kind == "tool":
            steps.append(_tool_span_step(span))
        elif kind == "llm":
            costs.extend(_llm_span_cost(span))
        listed.extend(_step(c) for c in span.get("tools_called") or [])
    if "cost" in md:
        costs = cost_list(md["cost"])
    return Episode(
        task_id=task_id,
        trajectory=Trajectory(steps or listed),
        output=md["output"] if "output" in md else trace.get("output"),
        input=md["input"] if "input" in md else trace.get("input"),
        cost=tuple(costs),
        duration=md.get("duration"),
        **_episode_fields(md),
    )


def _from_conversational(tc: Any, task_id: str | None) -> tuple[Episode, TaskSpec]:
    md = dict(_get(tc, "metadata") or {})
    turns = list(_get(tc, "turns") or [])
    steps: list[Step] = []
    costs: list[Cost] = []
    first_user: Any = None
    last_assistant: Any = None
    for turn in turns:
        role = _get(turn, "role")
        tmd = dict(_get(turn, "metadata") or {})
        if role == "user" and first_user is None:
            first_user = _get(turn, "content")
        if role == "assistant":
            last_assistant = _get(turn, "content")
        steps.extend(_steps(_get(turn, "tools_called"), tmd))
        costs.extend(cost_list(tmd.get("cost")))
    inp = md.get("input", first_user)
    tid = (
        task_id
        or md.get("task_id")
        or _get(tc, "name")
        or _digest([[_get(t, "role"), _get(t, "content")] for t in turns])
    )
    if "cost" in md:
        costs = cost_list(md["cost"])
    ep = Episode(
        task_id=tid,
        trajectory=Trajectory(steps),
        output=md.get("output", last_assistant),
        input=inp,
        cost=tuple(costs),
        duration=md.get("duration"),
        **_episode_fields(md),
    )
    gold = md["gold"] if "gold" in md else _get(tc, "expected_outcome")
    return ep, _task(tid, inp, gold, md.get("expected_tools"), md, _get(tc, "tags"))


def from_deepeval_test_case(
    test_case: Any, *, task_id: str | None = None, use_trace: bool | None = None
) -> tuple[Episode, TaskSpec]:
    """Convert a DeepEval test case to an ``(Episode, gold)`` pair (duck-typed).

    Args:
        test_case: An ``LLMTestCase``, a ``ConversationalTestCase`` (recognised by its
            ``turns``), or any object / mapping with their attributes.
        task_id: Overrides the task id (else ``metadata["task_id"]``, the test case ``name``,
            or a digest of the input).
        use_trace: ``True`` reads the steps from ``test_case._trace_dict`` (raises if absent);
            ``False`` ignores it; ``None`` (default) uses it when present.

    Returns:
        The episode and a :class:`~ek.agents.base.TaskSpec` whose ``gold`` is
        ``metadata["gold"]`` or the expected output (outcome), and whose ``gold_calls`` are
        the expected tools (``None`` when the test case has none).

    Raises:
        ValueError: ``use_trace=True`` without a trace, or ``step_errors`` / ``step_ids``
            whose length differs from ``tools_called``.
    """
    if _get(test_case, "turns") is not None:
        return _from_conversational(test_case, task_id)
    md = dict(_get(test_case, "metadata") or {})
    inp = md["input"] if "input" in md else _get(test_case, "input")
    tid = task_id or md.get("task_id") or _get(test_case, "name") or _digest(inp)
    trace = _trace_of(test_case, use_trace)
    ep_md = dict(md)
    if "duration" not in ep_md and _get(test_case, "completion_time") is not None:
        ep_md["duration"] = _get(test_case, "completion_time")
    if trace is not None:
        ep = from_deepeval_trace(trace, task_id=tid, metadata=ep_md)
    else:
        ep = _case_episode(test_case, tid, inp, md, ep_md.get("duration"))
    gold = md["gold"] if "gold" in md else _get(test_case, "expected_output")
    calls = _get(test_case, "expected_tools")
    return ep, _task(tid, inp, gold, calls, md, _get(test_case, "tags"))


def _trace_of(test_case: Any, use_trace: bool | None) -> Mapping[str, Any] | None:
    """The test case's DeepEval trace when it is to be read (``use_trace=True`` needs one)."""
    trace = None if use_trace is False else getattr(test_case, "_trace_dict", None)
    if use_trace and trace is None:
        raise ValueError(
            "use_trace=True needs a DeepEval trace (test_case._trace_dict), got a test case "
            "without one; run the agent under @observe or pass use_trace=None"
        )
    return trace


def _case_episode(
    test_case: Any, tid: str, inp: Any, md: Mapping[str, Any], duration: Any
) -> Episode:
    """An LLMTestCase without a trace as an Episode: its listed tool calls are the steps."""
    costs = cost_list(md["cost"]) if "cost" in md else _count_cost(test_case, md)
    return Episode(
        task_id=tid,
        trajectory=Trajectory(_steps(_get(test_case, "tools_called"), md)),
        output=md["output"] if "output" in md else _get(test_case, "actual_output"),
        input=inp,
        cost=tuple(costs),
        duration=duration,
        **_episode_fields(md),
    )
