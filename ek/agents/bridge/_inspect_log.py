"""Inspect AI samples, transcripts and logs -> :class:`~ek.agents.base.Episode`.

Duck-typed like every bridge: an Inspect ``EvalSample`` or ``TaskState`` object and its log
dict read the same, and ``inspect_ai`` is imported only to open a log file.

- :func:`cost_from_inspect_events` sums the ``usage`` of an Inspect transcript's model events
  into one :class:`~ek.agents.base.Cost` per (model, role). Model calls made inside a
  scorer's span are the ``"judge"`` role, so a grader never inflates the agent's Cost-of-Pass.
- :func:`from_inspect_sample` converts an Inspect ``EvalSample`` (object or log dict) or a live
  ``TaskState`` into an :class:`~ek.agents.base.Episode`; :func:`success_from_inspect_scores`
  and :func:`inspect_verdict` decide its success from the sample's scores.
- :func:`provenance_from_inspect_header` reads a log header as a
  :class:`~ek.agents.base.RunProvenance`.
- :func:`read_inspect_log` streams an ``.eval`` or ``.json`` log into records (the episode, the
  ek metric scores the ek scorers recorded (:func:`ek_scores_from_inspect_scores`), and why a
  sample is unscored); :func:`episodes_from_inspect_log` gives just the episodes. Reading a log
  is the one thing here that imports ``inspect_ai`` (lazily).

Example:
    >>> s = {"id": "t1", "epoch": 1, "messages": [], "scores": {"match": {"value": "C"}}}
    >>> ep = from_inspect_sample(s, success_from="match")
    >>> ep.task_id, ep.trial, ep.success
    ('t1', 0, True)
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ek._validate import short_repr
from ek.agents._episode import Cost, Episode, RunProvenance
from ek.agents.bridge._duck import content_text, field_of, token_count
from ek.agents.bridge._messages import cost_from_usage, trajectory_from_messages
from ek.base import ReadOnlyDict, Score
from ek.jsonio import from_json_safe, readable_file

__all__ = [
    "DEFAULT_ROLES",
    "EK_METADATA_KEY",
    "INSPECT_EXTRA_HINT",
    "AmbiguousSuccessError",
    "InspectSampleRecord",
    "cost_from_inspect_events",
    "ek_scores_from_inspect_scores",
    "episodes_from_inspect_log",
    "from_inspect_sample",
    "inspect_sample_record",
    "inspect_verdict",
    "provenance_from_inspect_header",
    "read_inspect_log",
    "success_from_inspect_scores",
]

#: Where the ek Inspect scorers put their verdicts in ``Score.metadata`` (read back here).
EK_METADATA_KEY = "ek"

#: The message of the ImportError raised when ``inspect_ai`` is needed and missing.
INSPECT_EXTRA_HINT = "reading Inspect AI logs needs inspect_ai: pip install ek-agents[inspect]"

#: Inspect model role (``ModelEvent.role``; ``None`` = the task's main model) -> ek ``Cost.role``.
#: Roles not listed keep their own name. Calls inside a scorer span are ``"judge"`` regardless.
DEFAULT_ROLES: Mapping[str | None, str] = {
    None: "agent",
    "agent": "agent",
    "grader": "judge",
    "judge": "judge",
    "scorer": "judge",
    "user": "simulator",
    "simulator": "simulator",
}

_SCORING_SPANS = frozenset({"scorers", "scorer"})


def cost_from_inspect_events(
    events: Iterable[Any], *, roles: Mapping[str | None, str] | None = None
) -> tuple[Cost, ...]:
    """Sum the usage of the model events of an Inspect transcript, per (model, role).

    Works on a live transcript (``inspect_ai.log.transcript().events``) and on a logged sample's
    ``events``, so it also holds when re-scoring, where ``TaskState.token_usage`` is 0. Model
    calls inside a ``scorers``/``scorer`` span are counted as ``"judge"``; others map their
    ``ModelEvent.role`` through ``roles`` (default :data:`DEFAULT_ROLES`).

    Example:
        >>> evs = [{"event": "model", "model": "m", "role": None, "span_id": "a",
        ...         "output": {"usage": {"input_tokens": 10, "output_tokens": 2}}},
        ...        {"event": "span_begin", "id": "s", "type": "scorers", "parent_id": None},
        ...        {"event": "model", "model": "g", "role": None, "span_id": "s",
        ...         "output": {"usage": {"input_tokens": 5, "output_tokens": 1}}},
        ...        {"event": "model", "model": "m", "span_id": "a",
        ...         "output": {"usage": {"input_tokens": 10, "output_tokens": 2}}}]
        >>> [(c.model, c.role, c.total_tokens) for c in cost_from_inspect_events(evs)]
        [('m', 'agent', 24), ('g', 'judge', 6)]

    Raises:
        TypeError: ``events`` is not an iterable of events (a string, bytes or a mapping is
            refused at once, not walked character by character), or ``roles`` is not a
            mapping.
    """
    if isinstance(events, (str, bytes, bytearray, Mapping)) or not isinstance(events, Iterable):
        raise TypeError(
            "cost_from_inspect_events expects an iterable of Inspect events (a transcript's "
            f"or a sample's events), got {type(events).__name__}: {short_repr(events, 80)}"
        )
    if roles is not None and not isinstance(roles, Mapping):
        raise TypeError(f"roles must be a mapping or None, got {type(roles).__name__}")
    table = DEFAULT_ROLES if roles is None else roles
    scoring: set[str] = set()
    sums: dict[tuple[str | None, str], Cost] = {}
    for e in events:
        kind = field_of(e, "event")
        if kind == "span_begin":
            sid = field_of(e, "id")
            if field_of(e, "type") in _SCORING_SPANS or field_of(e, "parent_id") in scoring:
                scoring.add(sid)
            continue
        if kind != "model":
            continue
        usage = field_of(field_of(e, "output"), "usage")
        if usage is None:
            continue
        model = field_of(e, "model")
        r = field_of(e, "role")
        role = "judge" if field_of(e, "span_id") in scoring else table.get(r, r or "agent")
        c = cost_from_usage(usage, model, role)
        key = (c.model, c.role)
        sums[key] = sums[key] + c if key in sums else c
    return tuple(sums.values())


# ----------------------------------------------------------------------------- Inspect samples


def _float(v: Any) -> float:
    """Inspect's value_to_float: C/I/P/N and yes/no/true/false strings, numbers, bools."""
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip().lower()
        table = {
            "c": 1.0,
            "i": 0.0,
            "p": 0.5,
            "n": 0.0,
            "yes": 1.0,
            "no": 0.0,
            "true": 1.0,
            "false": 0.0,
        }
        if s in table:
            return table[s]
        try:
            return float(s)
        except ValueError:
            return math.nan
    return math.nan


def success_from_inspect_scores(
    scores: Any, success_from: str | None = None, *, threshold: float = 1.0
) -> bool | None:
    """The success verdict of a logged sample's ``scores`` (``{scorer_name: Score}``).

    With ``success_from`` (a scorer name, or ``"scorer:key"`` for a dict value), that scorer's
    value decides: ``value >= threshold`` after Inspect's value-to-float mapping (``"C"`` = 1);
    a dict value uses its ``"success"`` key. Without it, the ek scorer that decides success
    decides (the one given a checker: it records a verdict, ``metadata["ek"]["success"]``; an ek
    scorer that decides no success records ``None``); several that disagree raise
    :class:`AmbiguousSuccessError` naming them. ``None`` when nothing decides (or the value is
    NaN: unscored); :func:`inspect_verdict` also says why.

    Example:
        >>> success_from_inspect_scores({"match": {"value": "C"}}, "match")
        True
        >>> success_from_inspect_scores({"t": {"value": {}, "metadata": {"ek": {"success": False}}}})
        False
        >>> success_from_inspect_scores({"match": {"value": "C"}}) is None
        True
    """
    return inspect_verdict(scores, success_from, threshold=threshold)[0]


def _named_verdict(
    scores: Mapping[str, Any], success_from: str, threshold: float
) -> tuple[bool | None, str | None]:
    name, _, key = success_from.partition(":")
    if name not in scores:
        return None, f"scorer {short_repr(name)} did not score it (its scores: {sorted(scores)})"
    s = scores[name]
    value = field_of(s, "value")
    if isinstance(value, Mapping):
        if (key or "success") not in value:
            return (
                None,
                f"scorer {short_repr(name)} has no key {short_repr(key or 'success')} in its value",
            )
        value = value[key or "success"]
    f = _float(value)
    if math.isnan(f):
        why = field_of(s, "explanation") or field_of(s, "reason")
        return None, f"scorer {short_repr(name)} left it unscored" + (f" ({why})" if why else "")
    return f >= threshold, None


def inspect_verdict(
    scores: Any, success_from: str | None = None, *, threshold: float = 1.0
) -> tuple[bool | None, str | None]:
    """The success verdict of a logged sample's ``scores`` and, when there is none, why.

    See :func:`success_from_inspect_scores` for how the verdict is decided.

    Example:
        >>> inspect_verdict({"match": {"value": "I"}}, "match")
        (False, None)
        >>> inspect_verdict({"match": {"value": "C"}}, "includes")
        (None, "scorer 'includes' did not score it (its scores: ['match'])")
    """
    if not scores or not isinstance(scores, Mapping):
        return None, "the sample has no score"
    if success_from is not None:
        if not isinstance(success_from, str) or not success_from:
            raise ValueError(
                f"success_from must be a scorer name ('name' or 'name:key'), got {short_repr(success_from)}"
            )
        return _named_verdict(scores, success_from, threshold)
    return _ek_verdict(scores)


class AmbiguousSuccessError(ValueError):
    """Several ek scorers decide a sample's success and disagree: name the one that decides
    (``success_from=``, ``ek-agents report/gate --success-scorer NAME``)."""


def _ek_verdict(scores: Mapping[str, Any]) -> tuple[bool | None, str | None]:
    """The verdict of the ek scorer(s) that decide success (those recording a bool)."""
    verdicts: dict[str, bool] = {}
    failed = None
    for name, s in scores.items():
        ek = field_of(field_of(s, "metadata", {}), EK_METADATA_KEY)
        if not isinstance(ek, Mapping):
            continue
        if isinstance(ek.get("success"), bool):
            verdicts[str(name)] = bool(ek["success"])
        elif ek.get("error") and failed is None:
            failed = f"ek scoring failed: {ek['error']}"
    if len(set(verdicts.values())) > 1:
        said = ", ".join(f"{n} says {'pass' if v else 'fail'}" for n, v in sorted(verdicts.items()))
        raise AmbiguousSuccessError(
            f"the ek scorers {sorted(verdicts)} all decide success and disagree ({said}); name "
            "the one that decides: success_from='NAME' (ek-agents --success-scorer NAME)"
        )
    if verdicts:
        return next(iter(verdicts.values())), None
    return None, failed or (
        f"no ek scorer recorded a verdict (its scores: {sorted(scores)}); give one of them a "
        "check=..., or name the scorer that decides success (success_from=..., ek-agents "
        "--success-scorer NAME)"
    )


def _with_recorded_dollars(costs: tuple[Cost, ...], scores: Any) -> tuple[Cost, ...]:
    """Stamp the dollars an ek scorer priced onto the single unpriced agent cost, if any.

    Only when exactly one agent :class:`Cost` exists and it carries no dollars of its own (a
    split over several models would be a guess).
    """
    agent = [i for i, c in enumerate(costs) if c.role == "agent"]
    if len(agent) != 1 or costs[agent[0]].dollars is not None or not scores:
        return costs
    for s in scores.values():
        ek = field_of(field_of(s, "metadata", {}), EK_METADATA_KEY)
        d = ek.get("dollars") if isinstance(ek, Mapping) else None
        if isinstance(d, (int, float)) and not isinstance(d, bool) and math.isfinite(d) and d >= 0:
            i = agent[0]
            c = costs[i]
            stamped = Cost(
                **{
                    k: getattr(c, k)
                    for k in (
                        "input_tokens",
                        "output_tokens",
                        "cache_read_tokens",
                        "cache_write_tokens",
                        "reasoning_tokens",
                        "model",
                        "role",
                    )
                },
                dollars=float(d),
            )
            return (*costs[:i], stamped, *costs[i + 1 :])
    return costs


def _store(obj: Any) -> Any:
    s = field_of(obj, "store")
    if s is None:
        return None
    items = s.items() if hasattr(s, "items") else ()
    d = {str(k): v for k, v in items}
    return d or None


def _events_of(obj: Any) -> Any:
    ev = field_of(obj, "events")
    if ev is not None:
        return ev
    # A live TaskState has no events: read the current transcript if inspect_ai is loaded
    # (it must be, for a TaskState to exist). Looked up, never imported, from the core.
    mod = sys.modules.get("inspect_ai.log")
    if mod is not None and hasattr(mod, "transcript"):
        try:
            return mod.transcript().events
        except Exception:  # outside a sample: no transcript
            return ()
    return ()


def _limit_error(obj: Any, events: Iterable[Any]) -> str | None:
    lim = field_of(obj, "limit")
    if lim is not None:
        return f"{field_of(lim, 'type', 'sample')} limit reached ({field_of(lim, 'limit')})"
    for e in events:
        if field_of(e, "event") == "sample_limit":
            return str(field_of(e, "message") or f"{field_of(e, 'type', 'sample')} limit reached")
    return None


def _input_text(obj: Any) -> Any:
    t = field_of(obj, "input_text")
    if isinstance(t, str):
        return t
    inp = field_of(obj, "input")
    if inp is None or isinstance(inp, str):
        return inp
    if isinstance(inp, (list, tuple)):
        return "\n".join(str(content_text(field_of(m, "content")) or "") for m in inp)
    return str(inp)


def _target(obj: Any) -> Any:
    t = field_of(obj, "target")
    if t is None or isinstance(t, str):
        return t
    inner = field_of(t, "target")
    if isinstance(inner, (list, tuple)):
        return list(inner) if len(inner) != 1 else inner[0]
    if isinstance(t, (list, tuple)):
        return list(t) if len(t) != 1 else t[0]
    return str(t)


def _plain(v: Any) -> Any:
    """Make ``v`` JSON-like (pydantic models and other objects become dicts or text)."""
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    dump = getattr(v, "model_dump", None)
    if callable(dump):
        try:
            return _plain(dump())
        except Exception:
            return repr(v)
    return repr(v)


def _sample_costs(
    obj: Any, evs: Sequence[Any], roles: Mapping[str | None, str] | None
) -> tuple[Cost, ...]:
    """The sample's costs from its model events; logged without events, its ``model_usage``
    (the agent's)."""
    costs = cost_from_inspect_events(evs, roles=roles)
    if costs:
        return costs
    mu = field_of(obj, "model_usage") or {}
    if not isinstance(mu, Mapping):
        raise TypeError(
            f"an Inspect sample's model_usage must map model names to usage, got "
            f"{type(mu).__name__}: {short_repr(mu, 80)}"
        )
    return tuple(cost_from_usage(u, m) for m, u in mu.items())


def _sample_error(obj: Any) -> str | None:
    """The sample's error message (``None`` without one)."""
    err = field_of(obj, "error")
    if err is None or isinstance(err, str):
        return err
    return str(field_of(err, "message", err))


def from_inspect_sample(
    sample_or_state: Any,
    *,
    events: Iterable[Any] | None = None,
    run: RunProvenance | None = None,
    success: bool | None = None,
    success_from: str | None = None,
    roles: Mapping[str | None, str] | None = None,
    limit_is_error: bool = True,
) -> Episode:
    """An Inspect ``EvalSample`` (object or log dict) or a live ``TaskState`` as an :class:`Episode`.

    ============  ===========================================================================
    ``task_id``   the sample id, as a str
    ``trial``     ``epoch - 1`` (Inspect's epochs are 1-based)
    trajectory    :func:`trajectory_from_messages` of the sample's messages
    ``output``    ``output.completion``
    final state   the sample's store (``None`` when empty)
    ``cost``      :func:`cost_from_inspect_events` over the sample's (or live transcript's) model
                  events; a sample logged without events falls back to ``model_usage`` (agent)
    ``success``   ``success`` if given, else :func:`success_from_inspect_scores`
    ``error``     the sample's error; with ``limit_is_error``, a hit limit (message, token,
                  time...) too, so a transcript that merely contains the answer is not credited
    ``metadata``  ``{"inspect": {"epoch", "target", "sample_metadata", "uuid"}}``
    ============  ===========================================================================

    Args:
        sample_or_state: The sample or state (duck-typed: attributes or mapping keys).
        events: The transcript events (default: the sample's ``events``, or the live
            transcript for a ``TaskState``).
        run: The provenance to stamp on the episode.
        success: A verdict to record (wins over the scores).
        success_from: Which scorer decides success (see :func:`success_from_inspect_scores`).
        roles: Inspect model role -> ek cost role (default :data:`DEFAULT_ROLES`).
        limit_is_error: Record a hit sample limit as the episode's error.

    Example:
        >>> s = {"id": 7, "epoch": 2, "messages": [], "output": {"completion": "france"},
        ...      "store": {"db": {"A1": "refunded"}}, "events": [
        ...          {"event": "model", "model": "m", "output": {"usage": {"input_tokens": 9}}}]}
        >>> ep = from_inspect_sample(s)
        >>> ep.task_id, ep.trial, ep.output, ep.final_state, ep.agent_cost.input_tokens
        ('7', 1, 'france', {'db': {'A1': 'refunded'}}, 9)
    """
    obj = sample_or_state
    sid = field_of(obj, "id", field_of(obj, "sample_id"))
    if sid is None:
        raise ValueError(
            f"from_inspect_sample expects an Inspect EvalSample or TaskState (with an id), got {type(obj).__name__}"
        )
    if isinstance(sid, bool) or not isinstance(sid, (str, int)):  # Inspect ids are int | str
        raise TypeError(f"an Inspect sample id must be a str or an int, got {type(sid).__name__}")
    epoch = token_count(field_of(obj, "epoch", 1))
    evs = list(events) if events is not None else list(_events_of(obj))
    if success is None:
        success = success_from_inspect_scores(field_of(obj, "scores"), success_from)
    costs = _with_recorded_dollars(_sample_costs(obj, evs, roles), field_of(obj, "scores"))
    error = _sample_error(obj)
    if error is None and limit_is_error:
        error = _limit_error(obj, evs)
    meta: dict[str, Any] = {"epoch": epoch}
    for k, v in (
        ("target", _target(obj)),
        ("sample_metadata", _plain(field_of(obj, "metadata")) or None),
        ("uuid", field_of(obj, "uuid")),
    ):
        if v is not None:
            meta[k] = v
    duration = field_of(obj, "total_time")
    return Episode(
        task_id=str(sid),
        trajectory=trajectory_from_messages(field_of(obj, "messages", [])),
        output=field_of(field_of(obj, "output"), "completion"),
        final_state=_plain(_store(obj)),
        cost=costs,
        success=success,
        run=run,
        trial=max(epoch - 1, 0),
        input=_input_text(obj),
        error=error,
        duration=float(duration) if isinstance(duration, (int, float)) and duration >= 0 else None,
        metadata={"inspect": meta},
    )


# ----------------------------------------------------------------------------- Inspect logs


def _solver_name(header: Any) -> str | None:
    ev = field_of(header, "eval")
    s = field_of(ev, "solver")
    if s:
        return str(s)
    steps = field_of(field_of(header, "plan"), "steps") or []
    names = [str(field_of(st, "solver")) for st in steps if field_of(st, "solver")]
    return "+".join(names) or None


def provenance_from_inspect_header(header: Any, *, location: str | None = None) -> RunProvenance:
    """A :class:`RunProvenance` from an Inspect log header (``EvalLog`` object or dict).

    ``agent`` = the solver (``eval.solver``, else the plan's steps joined by ``+``, else the
    task name); ``model`` = ``eval.model``; ``scaffold`` = ``"inspect_ai"`` (the harness);
    ``suite_version`` = ``"<task>@<task_version>"``, so two runs of the same task version are
    comparable whatever the agent or model. ``extra`` keeps the Inspect version, eval and run
    ids, task file, status and the log location.

    Example:
        >>> h = {"eval": {"task": "refunds", "task_version": 2, "model": "openai/gpt-4o",
        ...               "packages": {"inspect_ai": "0.3.285"}}, "plan": {"steps": [{"solver": "react"}]}}
        >>> p = provenance_from_inspect_header(h)
        >>> p.agent, p.model, p.scaffold, p.suite_version
        ('react', 'openai/gpt-4o', 'inspect_ai', 'refunds@2')
    """
    ev = field_of(header, "eval")
    task = str(field_of(ev, "task", "task"))
    version = field_of(ev, "task_version", 0)
    extra: dict[str, Any] = {}
    pk = field_of(ev, "packages") or {}
    for k, v in (
        ("inspect_version", pk.get("inspect_ai") if isinstance(pk, Mapping) else None),
        ("eval_id", field_of(ev, "eval_id")),
        ("run_id", field_of(ev, "run_id")),
        ("task_file", field_of(ev, "task_file")),
        ("status", field_of(header, "status")),
        ("log", location),
    ):
        if v is not None:
            extra[k] = str(v)
    seed = field_of(field_of(ev, "config"), "seed")
    return RunProvenance(
        agent=_solver_name(header) or task,
        model=str(field_of(ev, "model")) if field_of(ev, "model") else None,
        scaffold="inspect_ai",
        suite_version=f"{task}@{version}",
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        extra=extra,
    )


def _require_inspect() -> Any:
    try:
        import inspect_ai.log as ilog  # host framework: only this function needs it
    except ImportError as e:  # pragma: no cover - exercised with inspect_ai absent
        raise ImportError(INSPECT_EXTRA_HINT) from e
    return ilog


def _ek_score(d: Any) -> Score | None:
    if not isinstance(d, Mapping):
        return None
    v = from_json_safe(d.get("value"))  # the one codec for non-finite floats
    value = math.nan if v is None or isinstance(v, bool) or not isinstance(v, (int, float)) else v
    detail = from_json_safe(d.get("detail"))
    return Score(float(value), detail if isinstance(detail, Mapping) else {})


def ek_scores_from_inspect_scores(
    scores: Any, *, with_success: bool = True
) -> tuple[dict[tuple[str, str], Score], list[str]]:
    """The ek metric scores an ek Inspect scorer recorded in ``metadata["ek"]["scores"]``.

    Args:
        scores: A logged sample's ``scores`` (``{scorer_name: Score}``, objects or dicts).
        with_success: Keep the ``task_success`` scores (drop them when they are the run's
            success verdict, which a report and a gate count separately).

    Returns:
        ``{(scorer, ek metric): Score}`` (the values and details the scorer computed, NaN
        restored) and the reasons of the ek scorers that failed on this sample.

    Example:
        >>> rec = {"ek": {"success": True, "scores": {
        ...     "task_success": {"value": 1.0, "detail": {"successes": 1, "n": 1}},
        ...     "tool_calls": {"value": "NaN", "detail": {"tp": 0.0, "fp": 0.0, "fn": 0.0}}}}}
        >>> got, failed = ek_scores_from_inspect_scores({"ek_scorer": {"metadata": rec}},
        ...                                             with_success=False)
        >>> list(got), got["ek_scorer", "tool_calls"].value, failed
        ([('ek_scorer', 'tool_calls')], nan, [])
    """
    out: dict[tuple[str, str], Score] = {}
    failed: list[str] = []
    items = scores.items() if isinstance(scores, Mapping) else ()
    for scorer, s in items:
        ek = field_of(field_of(s, "metadata", {}), EK_METADATA_KEY)
        if not isinstance(ek, Mapping):
            continue
        if ek.get("error"):
            failed.append(f"ek scorer {short_repr(scorer)} failed: {ek['error']}")
            continue
        recorded = ek.get("scores")
        if not isinstance(recorded, Mapping):
            continue
        for metric, d in recorded.items():
            if metric == "task_success" and not with_success:
                continue
            score = _ek_score(d)
            if score is not None:
                out[(str(scorer), str(metric))] = score
    return out, failed


@dataclass(frozen=True)
class InspectSampleRecord:
    """One logged sample (one epoch) as a report and a gate read it.

    Attributes:
        episode: The sample as an :class:`Episode` (``success`` is ``None`` when undecided).
        scores: The ek metric scores the ek scorers recorded, by ``(scorer, metric)``.
        unscored: Why this sample is not (fully) scored: no success verdict, or an ek scorer
            that failed on it; ``None`` when it is fully scored.
    """

    episode: Episode
    scores: Mapping[tuple[str, str], Score]
    unscored: str | None = None


def inspect_sample_record(
    sample: Any,
    *,
    success_from: str | None = None,
    run: RunProvenance | None = None,
    roles: Mapping[str | None, str] | None = None,
    limit_is_error: bool = True,
) -> InspectSampleRecord:
    """A logged Inspect sample as an :class:`InspectSampleRecord` (episode, ek scores, why unscored).

    The ``task_success`` scores are kept only when ``success_from`` names the deciding scorer
    (otherwise they are the verdict itself).

    Example:
        >>> r = inspect_sample_record({"id": 1, "scores": {"match": {"value": "C"}}})
        >>> r.episode.success, r.unscored[:35]
        (None, 'no ek scorer recorded a verdict (it')
        >>> inspect_sample_record({"id": 1, "scores": {"match": {"value": "C"}}},
        ...                       success_from="match").episode.success
        True
    """
    scores = field_of(sample, "scores")
    verdict, why = inspect_verdict(scores, success_from)
    ep = from_inspect_sample(
        sample,
        run=run,
        success=verdict,
        success_from=success_from,
        roles=roles,
        limit_is_error=limit_is_error,
    )
    ek, failed = ek_scores_from_inspect_scores(scores, with_success=success_from is not None)
    if verdict is None:
        err = field_of(sample, "error")
        if err is not None and not scores:
            why = f"sample error: {field_of(err, 'message', err)}"
    else:
        why = failed[0] if failed else None
    return InspectSampleRecord(ep, ReadOnlyDict(ek), why)


def _raw_eval_samples(path: str) -> Iterator[Mapping[str, Any]] | None:
    """The samples of an ``.eval`` zip as plain dicts (no pydantic), or None if not readable.

    Inspect writes ``samples/<id>_epoch_<n>.json`` members (zstd-compressed; importing
    ``inspect_ai.log`` teaches :mod:`zipfile` that codec). A member that cannot be read raises
    a ``ValueError`` naming the file and the member.
    """
    import zipfile

    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile):
        return None
    names = [n for n in zf.namelist() if n.startswith("samples/") and n.endswith(".json")]

    def gen() -> Iterator[Mapping[str, Any]]:
        with zf:
            for n in names:
                try:
                    data = zf.read(n)
                    yield json.loads(data)
                except (OSError, EOFError, zipfile.BadZipFile, ValueError, RecursionError) as e:
                    raise ValueError(
                        f"{path}: cannot read sample {short_repr(n)} of the Inspect log "
                        f"({type(e).__name__}: {e}); is the file truncated or still being written?"
                    ) from None

    return gen()


def _json_log_samples(p: str) -> list[Any]:
    """The samples of a ``.json`` log, read by the standard library first: a file nested too
    deeply (which Inspect's own reader would exhaust memory on) or not a JSON object is refused.
    """
    try:
        with open(p, encoding="utf-8") as fh:
            data = json.load(fh)
    except (ValueError, RecursionError) as e:
        raise ValueError(
            f"{p}: not a readable Inspect log ({type(e).__name__}: {str(e)[:200]})"
        ) from None
    if not isinstance(data, dict):
        raise ValueError(f"{p}: not a readable Inspect log (a JSON {type(data).__name__})")
    samples = data.get("samples") or []
    if not isinstance(samples, list):
        raise ValueError(f"{p}: the Inspect log's samples are a {type(samples).__name__}")
    return samples


def _header(ilog: Any, p: str) -> Any:
    try:
        return ilog.read_eval_log(p, header_only=True)
    except (OSError, ValueError, KeyError, EOFError, RecursionError) as e:
        # e.g. a truncated .eval: Inspect says only "EOCD not found" (no end of the zip)
        raise ValueError(
            f"{p}: not a readable Inspect log ({type(e).__name__}: {e}); is the file truncated "
            "or still being written?"
        ) from None


def read_inspect_log(
    path: str | os.PathLike[str],
    *,
    success_from: str | None = None,
    roles: Mapping[str | None, str] | None = None,
    run: RunProvenance | None = None,
    limit_is_error: bool = True,
) -> Iterator[InspectSampleRecord]:
    """Stream the samples of an Inspect log (``.eval`` or ``.json``) as :class:`InspectSampleRecord` s.

    Each epoch of each sample is one record (its episode's ``trial = epoch - 1``). The header
    gives the :class:`~ek.agents.base.RunProvenance` (see :func:`provenance_from_inspect_header`);
    every sample goes through :func:`inspect_sample_record`. ``.eval`` samples are read one at a
    time straight from the zip as JSON (no pydantic validation, O(1) memory); other layouts go
    through Inspect's own ``read_eval_log_samples``.

    Args:
        path: The log file.
        success_from: The scorer whose value is the success verdict (``"name"`` or
            ``"name:key"``, e.g. Inspect's ``"match"``); default: the ek scorer's verdict.
        roles: Inspect model role -> ek cost role.
        run: Provenance to use instead of the header's.
        limit_is_error: Record a hit sample limit as the episode's error.

    Raises:
        ImportError: ``inspect_ai`` is not installed (``pip install ek-agents[inspect]``).
        FileNotFoundError: no such file.
        AmbiguousSuccessError: (a ``ValueError``) without ``success_from``, several ek scorers
            decide a sample's success and disagree; the message names them, the file and the
            sample.
        ValueError: the file is not a readable Inspect log (truncated, not a log); the message
            names the file.
    """
    p = readable_file(
        "read_inspect_log", path, "Inspect log"
    )  # a FIFO or a directory is refused, not read
    ilog = _require_inspect()
    json_samples = _json_log_samples(p) if p.endswith(".json") else None
    header = _header(ilog, p)
    prov = run if run is not None else provenance_from_inspect_header(header, location=p)
    samples: Iterable[Any] | None = json_samples
    if p.endswith(".eval") and field_of(header, "version") == 2:
        samples = _raw_eval_samples(p)
    if samples is None:
        samples = ilog.read_eval_log_samples(p, all_samples_required=False)
    for s in samples:
        try:
            rec = inspect_sample_record(
                s, success_from=success_from, run=prov, roles=roles, limit_is_error=limit_is_error
            )
        except AmbiguousSuccessError as e:
            where = f"sample {short_repr(field_of(s, 'id'))} epoch {field_of(s, 'epoch', 1)}"
            raise AmbiguousSuccessError(f"{p}: {where}: {e}") from None
        yield rec


def episodes_from_inspect_log(
    path: str | os.PathLike[str],
    *,
    success_from: str | None = None,
    roles: Mapping[str | None, str] | None = None,
    run: RunProvenance | None = None,
    limit_is_error: bool = True,
) -> Iterator[Episode]:
    """Stream the samples of an Inspect log (``.eval`` or ``.json``) as :class:`Episode` s.

    The episodes of :func:`read_inspect_log` (same arguments): each epoch of each sample is one
    episode (``trial = epoch - 1``), so pass^k and Cost-of-Pass over epochs work on the result;
    an episode whose success nothing decided has ``success=None``.

    Raises:
        ImportError: ``inspect_ai`` is not installed (``pip install ek-agents[inspect]``).
        FileNotFoundError: no such file.
        ValueError: the file is not a readable Inspect log.
    """
    for rec in read_inspect_log(
        path, success_from=success_from, roles=roles, run=run, limit_is_error=limit_is_error
    ):
        yield rec.episode
