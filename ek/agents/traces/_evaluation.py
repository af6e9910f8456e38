"""Evaluation results out: ek Scores as OpenTelemetry ``gen_ai.evaluation.result`` events.

Every ek :class:`~ek.base.Score` becomes one event of the OpenTelemetry GenAI semantic
conventions, attached to the trace and span it scored, so a trace backend (Logfire, Phoenix,
Langfuse, Jaeger, any OTLP store) shows ek's verdict beside the trace:

=====================================  ==================================================
event field / attribute                from
=====================================  ==================================================
event name (``eventName``)             ``gen_ai.evaluation.result``
``gen_ai.evaluation.name``             the metric's name (:attr:`EvaluationEvent.name`)
``gen_ai.evaluation.score.value``      ``Score.value`` (left out when it is NaN: undefined)
``gen_ai.evaluation.score.label``      ``Score.passed``: ``"pass"`` / ``"fail"`` (left out
                                       when the metric has no verdict)
``gen_ai.evaluation.explanation``      ``Score.reason`` (left out when empty)
``ek.higher_is_better``                ``Score.detail["higher_is_better"]``, when present
``traceId`` / ``spanId``               the scored trace and span (hex)
body                                   ``"evaluation: <name>=<value>"`` (a one-line summary)
=====================================  ==================================================

Two ways out, one record layout:

* :func:`write_evaluation_results` writes an **OTLP JSON logs** document
  (``{"resourceLogs": [...]}``, one document per line: what the OpenTelemetry Collector's file
  exporter writes and its ``otlpjsonfile`` receiver reads). Standard library only.
* :func:`emit_evaluation_results` emits the same events **live** through the user's
  OpenTelemetry logger provider (the global one by default). It needs ``opentelemetry-api``
  1.35 or newer (where a log record carries ``event_name`` and a ``context``):
  ``pip install ek-agents[otel]``.

Events come from :func:`evaluation_events` (an Episode and its scores; the trace and span ids
are read from the episode's metadata as the span reader records them) or are built directly as
:class:`EvaluationEvent`.

Example:
    >>> from ek.base import Score
    >>> ev = EvaluationEvent(
    ...     "tool_calls",
    ...     Score(0.75, {"passed": False, "reason": "1 argument wrong"}),
    ...     trace_id="0af7651916cd43dd8448eb211c80319c",
    ...     span_id="b7ad6b7169203331",
    ... )
    >>> ev.event_attributes()
    {'gen_ai.evaluation.name': 'tool_calls', 'gen_ai.evaluation.score.value': 0.75, 'gen_ai.evaluation.score.label': 'fail', 'gen_ai.evaluation.explanation': '1 argument wrong'}
    >>> ev.body
    'evaluation: tool_calls=0.75'
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ek._validate import check_mapping, count, nonempty_str, short_repr
from ek.base import Score

__all__ = [
    "EVALUATION_EVENT_NAME",
    "EvaluationEvent",
    "emit_evaluation_results",
    "evaluation_events",
    "otlp_logs_document",
    "write_evaluation_results",
]

#: The event name of the OpenTelemetry GenAI semantic conventions.
EVALUATION_EVENT_NAME = "gen_ai.evaluation.result"

_SCOPE = "ek-agents"
_INFO = 9  # SeverityNumber.INFO in the OpenTelemetry logs data model
_HEX = re.compile(r"[0-9a-f]+")
_NAME = "gen_ai.evaluation.name"
_VALUE = "gen_ai.evaluation.score.value"
_LABEL = "gen_ai.evaluation.score.label"
_EXPLANATION = "gen_ai.evaluation.explanation"


def _hex_id(owner: str, value: Any, width: int) -> str | None:
    """A trace or span id as ``width`` lowercase hex digits (zero-padded; an int is formatted)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 < value < 16**width:
            raise ValueError(f"{owner} must be an int in 1..16**{width}-1, got {short_repr(value)}")
        return format(value, f"0{width}x")
    if not isinstance(value, str):
        raise TypeError(
            f"{owner} must be a hex str of up to {width} digits, an int or None, "
            f"got {type(value).__name__}: {short_repr(value)}"
        )
    h = value.strip().lower().removeprefix("0x")
    if not _HEX.fullmatch(h) or len(h) > width or not h.strip("0"):
        raise ValueError(
            f"{owner} must be 1 to {width} hex digits, not all zero, got {short_repr(value)}"
        )
    return h.zfill(width)


def _attribute_value(owner: str, value: Any) -> str | bool | int | float:
    if isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise TypeError(
        f"{owner} must be a str, bool, int or finite float (an OpenTelemetry attribute value), "
        f"got {type(value).__name__}: {short_repr(value)}"
    )


def _format_value(value: float) -> str:
    return "undefined" if math.isnan(value) else format(value, "g")


@dataclass(frozen=True)
class EvaluationEvent:
    """One ek Score as a ``gen_ai.evaluation.result`` event on the trace and span it scored.

    Args:
        name: The evaluation's name (``gen_ai.evaluation.name``), usually the metric's name.
        score: The ek :class:`~ek.base.Score`.
        trace_id: The scored trace as hex (up to 32 digits, zero-padded to 32; ``0x`` allowed)
            or an int, or ``None`` (live emission then attaches the event to the current span;
            the file carries no trace id).
        span_id: The scored span as hex (up to 16 digits) or an int, or ``None``; needs
            ``trace_id``.
        time_ns: When the evaluation happened (Unix epoch nanoseconds); ``None``: when it is
            written or emitted.
        attributes: Extra attributes (str keys; str, bool, int or finite float values), e.g.
            ``{"ek.task_id": "t1"}``; the semantic-convention attributes win on a clash.

    Example:
        >>> EvaluationEvent("success", Score(1.0, {"passed": True})).event_attributes()
        {'gen_ai.evaluation.name': 'success', 'gen_ai.evaluation.score.value': 1.0, 'gen_ai.evaluation.score.label': 'pass'}
        >>> EvaluationEvent("x", Score(1.0), span_id="b7ad6b7169203331")
        Traceback (most recent call last):
        ...
        ValueError: EvaluationEvent.span_id needs a trace_id, got span_id='b7ad6b7169203331' and no trace_id
    """

    name: str
    score: Score
    trace_id: str | None = None
    span_id: str | None = None
    time_ns: int | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        nonempty_str("EvaluationEvent.name", self.name)
        if not isinstance(self.score, Score):
            raise TypeError(
                f"EvaluationEvent.score must be an ek Score, got {type(self.score).__name__}: "
                f"{short_repr(self.score)}"
            )
        tid = _hex_id("EvaluationEvent.trace_id", self.trace_id, 32)
        sid = _hex_id("EvaluationEvent.span_id", self.span_id, 16)
        if sid is not None and tid is None:
            raise ValueError(
                f"EvaluationEvent.span_id needs a trace_id, got span_id={sid!r} and no trace_id"
            )
        object.__setattr__(self, "trace_id", tid)
        object.__setattr__(self, "span_id", sid)
        if self.time_ns is not None:
            object.__setattr__(self, "time_ns", count("EvaluationEvent.time_ns", self.time_ns))
        attrs = check_mapping("EvaluationEvent.attributes", self.attributes)
        for k, v in attrs.items():
            nonempty_str("EvaluationEvent.attributes key", k)
            _attribute_value(f"EvaluationEvent.attributes[{k!r}]", v)
        object.__setattr__(self, "attributes", attrs)

    def event_attributes(self) -> dict[str, str | bool | int | float]:
        """The event's attributes: the extra ones, then the semantic-convention ones."""
        out: dict[str, str | bool | int | float] = dict(self.attributes)
        out[_NAME] = self.name
        score = self.score
        if not math.isnan(score.value) and math.isfinite(score.value):
            out[_VALUE] = score.value
        if score.passed is not None:
            out[_LABEL] = "pass" if score.passed else "fail"
        if score.reason:
            out[_EXPLANATION] = score.reason
        hib = score.detail.get("higher_is_better")
        if isinstance(hib, bool):
            out["ek.higher_is_better"] = hib
        return out

    @property
    def body(self) -> str:
        """A one-line summary for log views: ``"evaluation: <name>=<value>"``."""
        return f"evaluation: {self.name}={_format_value(self.score.value)}"


def evaluation_events(
    episode: Any,
    scores: Mapping[str, Score],
    *,
    trace_id: str | int | None = None,
    span_id: str | int | None = None,
    time_ns: int | None = None,
) -> list[EvaluationEvent]:
    """One :class:`EvaluationEvent` per named score of an episode.

    The trace and span come from the arguments, else from the episode's metadata (where the
    span reader records them for an episode read from a trace: ``metadata["trace"]["trace_id"]``
    and ``["span_id"]``, the top agent's span; plain ``metadata["trace_id"]`` / ``["span_id"]``
    are read too), else none. Each event carries ``ek.task_id`` and ``ek.trial`` so the verdicts of k
    trials of a task can be grouped in the backend.

    Args:
        episode: An :class:`~ek.agents.base.Episode` (or anything with ``task_id``,
            ``trial`` and ``metadata``).
        scores: ``{evaluation name: Score}``, e.g. ``{"tool_calls": metric(ep, gold)}``.
        trace_id: The scored trace (overrides the episode's metadata).
        span_id: The scored span (overrides the episode's metadata).
        time_ns: When the evaluation happened; ``None``: when written or emitted.

    Example:
        >>> from ek.agents.base import Episode
        >>> ep = Episode("t1", trial=2, metadata={"trace": {"trace_id": "0af7651916cd43dd8448eb211c80319c"}})
        >>> [ev] = evaluation_events(ep, {"success": Score(0.0, {"passed": False})})
        >>> ev.trace_id, ev.span_id, ev.attributes
        ('0af7651916cd43dd8448eb211c80319c', None, {'ek.task_id': 't1', 'ek.trial': 2})
    """
    if not isinstance(scores, Mapping):
        raise TypeError(
            f"scores must be a mapping of evaluation name to Score, got {type(scores).__name__}"
        )
    meta = getattr(episode, "metadata", None) or {}
    trace = meta.get("trace")
    where: Mapping[str, Any] = trace if isinstance(trace, Mapping) else meta
    tid: Any = trace_id if trace_id is not None else where.get("trace_id")
    sid: Any = span_id if span_id is not None else where.get("span_id")
    extra: dict[str, Any] = {"ek.task_id": episode.task_id}
    trial = getattr(episode, "trial", None)
    if isinstance(trial, int):
        extra["ek.trial"] = trial
    return [
        EvaluationEvent(name, s, trace_id=tid, span_id=sid, time_ns=time_ns, attributes=extra)
        for name, s in scores.items()
    ]


# -- OTLP JSON (standard library only) -------------------------------------------------------


def _any_value(value: Any) -> dict[str, Any]:
    """An OTLP/JSON ``AnyValue`` (64-bit ints are JSON strings, per the OTLP/JSON encoding)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def _key_values(attrs: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any_value(v)} for k, v in attrs.items()]


def _log_record(ev: EvaluationEvent, now: int) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "timeUnixNano": str(ev.time_ns if ev.time_ns is not None else now),
        "observedTimeUnixNano": str(now),
        "severityNumber": _INFO,
        "severityText": "INFO",
        "body": {"stringValue": ev.body},
        "attributes": _key_values(ev.event_attributes()),
        "eventName": EVALUATION_EVENT_NAME,
    }
    if ev.trace_id is not None:
        rec["traceId"] = ev.trace_id
        rec["flags"] = 1  # sampled: the scored span was recorded
        if ev.span_id is not None:
            rec["spanId"] = ev.span_id
    return rec


def _events(events: Iterable[EvaluationEvent]) -> list[EvaluationEvent]:
    if isinstance(events, EvaluationEvent) or not isinstance(events, Iterable):
        raise TypeError(
            f"events must be an iterable of EvaluationEvent, got {type(events).__name__}"
        )
    out = list(events)
    for i, ev in enumerate(out):
        if not isinstance(ev, EvaluationEvent):
            raise TypeError(
                f"events[{i}] must be an EvaluationEvent, got {type(ev).__name__}: {short_repr(ev)}"
            )
    return out


def _resource_attributes(resource: Mapping[str, Any] | None) -> dict[str, Any]:
    attrs = check_mapping("resource", resource or {})
    for k, v in attrs.items():
        _attribute_value(f"resource[{k!r}]", v)
    return attrs


def otlp_logs_document(
    events: Iterable[EvaluationEvent],
    *,
    resource: Mapping[str, Any] | None = None,
    now_ns: int | None = None,
) -> dict[str, Any]:
    """The events as one OTLP JSON logs document ``{"resourceLogs": [...]}``.

    Args:
        events: The :class:`EvaluationEvent` s.
        resource: Resource attributes (e.g. ``{"service.name": "my-agent"}``); none by default.
        now_ns: The observed time (Unix epoch ns) and the time of events without one;
            ``None``: now.

    Returns:
        A JSON-ready dict in the OTLP/JSON encoding (ids as hex, 64-bit ints as strings).

    Example:
        >>> doc = otlp_logs_document([EvaluationEvent("success", Score(1.0))], now_ns=5)
        >>> rec = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
        >>> rec["eventName"], rec["timeUnixNano"], rec["attributes"][1]
        ('gen_ai.evaluation.result', '5', {'key': 'gen_ai.evaluation.score.value', 'value': {'doubleValue': 1.0}})
    """
    from ek import __version__

    evs = _events(events)
    now = time.time_ns() if now_ns is None else count("now_ns", now_ns)
    res = _resource_attributes(resource)
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": _key_values(res)},
                "scopeLogs": [
                    {
                        "scope": {"name": _SCOPE, "version": __version__},
                        "logRecords": [_log_record(ev, now) for ev in evs],
                    }
                ],
            }
        ]
    }


def write_evaluation_results(
    path: str | os.PathLike[str],
    events: Iterable[EvaluationEvent],
    *,
    resource: Mapping[str, Any] | None = None,
    append: bool = False,
) -> int:
    """Write the events to ``path`` as OTLP JSON logs (one ``{"resourceLogs": ...}`` line).

    The file is what the OpenTelemetry Collector's file exporter writes, so its
    ``otlpjsonfile`` receiver (or any OTLP/JSON reader) forwards it to a backend. Standard
    library only.

    Args:
        path: The file to write.
        events: The :class:`EvaluationEvent` s (e.g. from :func:`evaluation_events`).
        resource: Resource attributes for the document (e.g. ``{"service.name": "my-agent"}``).
        append: Add a line to an existing file instead of replacing it.

    Returns:
        The number of events written.

    Example:
        >>> import json, os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "evals.jsonl")
        >>> write_evaluation_results(p, [EvaluationEvent("success", Score(1.0))])
        1
        >>> with open(p) as f:
        ...     rec = json.loads(f.readline())["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
        >>> rec["eventName"]
        'gen_ai.evaluation.result'
    """
    evs = _events(events)
    doc = otlp_logs_document(evs, resource=resource)
    line = json.dumps(doc, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    with open(path, "a" if append else "w", encoding="utf-8") as f:
        f.write(line + "\n")
    return len(evs)


# -- live, through opentelemetry-api --------------------------------------------------------


def _otel() -> Any:
    """The ``opentelemetry`` modules the live emission needs, or an ImportError saying how to get them."""
    try:
        from opentelemetry import _logs, trace
    except ImportError as e:
        raise ImportError(
            "emit_evaluation_results needs opentelemetry-api >= 1.35: "
            "pip install ek-agents[otel] (write_evaluation_results needs nothing)"
        ) from e
    import inspect

    if "event_name" not in inspect.signature(_logs.LogRecord.__init__).parameters:
        raise ImportError(
            "emit_evaluation_results needs opentelemetry-api >= 1.35 (log records with "
            "event_name), got an older one: pip install -U 'ek-agents[otel]'"
        )
    return _logs, trace


def _context(trace: Any, ev: EvaluationEvent) -> Any:
    """An OpenTelemetry context whose current span is the scored one (None: the current context)."""
    if ev.trace_id is None:
        return None
    span_ctx = trace.SpanContext(
        trace_id=int(ev.trace_id, 16),
        span_id=int(ev.span_id, 16) if ev.span_id is not None else 0,
        is_remote=True,
        trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
    )
    return trace.set_span_in_context(trace.NonRecordingSpan(span_ctx))


def emit_evaluation_results(
    events: Iterable[EvaluationEvent], *, logger_provider: Any = None
) -> int:
    """Emit the events live through OpenTelemetry's logs API (needs ``ek-agents[otel]``).

    Each event is one log record with ``event_name="gen_ai.evaluation.result"``, the attributes
    of :meth:`EvaluationEvent.event_attributes`, and the scored trace and span as its context,
    so the user's log processors and exporters (OTLP, Logfire, an in-memory exporter in tests)
    receive it beside the trace. An event with no trace id is attached to the current span.
    With no logger provider configured, OpenTelemetry drops the events (its no-op default).

    Args:
        events: The :class:`EvaluationEvent` s.
        logger_provider: An OpenTelemetry ``LoggerProvider``; ``None``: the global one.

    Returns:
        The number of events emitted.

    Raises:
        ImportError: ``opentelemetry-api`` (>= 1.35) is not installed.
    """
    from ek import __version__

    evs = _events(events)
    _logs, trace = _otel()
    if logger_provider is None:
        logger = _logs.get_logger(_SCOPE, __version__)
    else:
        logger = logger_provider.get_logger(_SCOPE, __version__)
    for ev in evs:
        logger.emit(
            _logs.LogRecord(
                timestamp=ev.time_ns if ev.time_ns is not None else time.time_ns(),
                context=_context(trace, ev),
                severity_number=_logs.SeverityNumber.INFO,
                severity_text="INFO",
                body=ev.body,
                attributes=ev.event_attributes(),
                event_name=EVALUATION_EVENT_NAME,
            )
        )
    return len(evs)
