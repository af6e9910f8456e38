"""One span, convention-neutral: :class:`Span`, :class:`SpanEvent`, and :class:`TraceFormatError`.

A :class:`Span` is what every reader produces and what :func:`~ek.agents.traces.episodes_from_spans`
consumes: ids as lowercase hex, times in nanoseconds since the epoch, attributes flattened to
plain Python values (str, bool, int, float, tuples for arrays, read-only dicts for key-value
lists), the status as ``"UNSET"``, ``"OK"`` or ``"ERROR"``. It is built three ways:

* directly (the constructor is plain: a host adapter converts its own span objects);
* :meth:`Span.from_dict` from what OpenTelemetry SDK's ``ReadableSpan.to_json()`` gives
  (``json.loads`` of it), which has ISO-8601 times with microsecond precision;
* :func:`span_from_otel` from a live SDK ``ReadableSpan`` (duck-typed; nanosecond times);
* :func:`~ek.agents.traces.read_spans` from OTLP JSON (the Collector's file exporter).

Example:
    >>> s = Span("0xAB12", "cd34", None, "execute_tool lookup", 10, 25,
    ...          {"gen_ai.tool.name": "lookup"}, status="ERROR", status_message="not found")
    >>> s.trace_id[-6:], s.span_id, s.duration_ns, s.failed, s.attributes["gen_ai.tool.name"]
    ('00ab12', '000000000000cd34', 15, True, 'lookup')
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ek.base import ReadOnlyDict

__all__ = ["STATUSES", "Span", "SpanEvent", "TraceFormatError", "freeze_value", "span_from_otel"]

#: The span status codes, as OpenTelemetry names them.
STATUSES = ("UNSET", "OK", "ERROR")

#: Deepest nesting of an attribute value (arrays and key-value lists inside each other).
MAX_VALUE_DEPTH = 64

_HEX = re.compile(r"[0-9a-f]+")
_STATUS_ALIASES = {
    "UNSET": "UNSET",
    "OK": "OK",
    "ERROR": "ERROR",
    "STATUS_CODE_UNSET": "UNSET",
    "STATUS_CODE_OK": "OK",
    "STATUS_CODE_ERROR": "ERROR",
    "STATUSCODE.UNSET": "UNSET",
    "STATUSCODE.OK": "OK",
    "STATUSCODE.ERROR": "ERROR",
    "0": "UNSET",
    "1": "OK",
    "2": "ERROR",
}


class TraceFormatError(ValueError):
    """A trace file or span record that is not what the reader expects.

    The message names the file and line (or the item) and says what was expected and what was
    given. It is a ``ValueError``, so code that catches bad input keeps working.
    """


def freeze_value(value: Any, depth: int = 0) -> Any:
    """An attribute value as an immutable plain value (lists -> tuples, mappings -> ReadOnlyDict).

    Raises:
        TraceFormatError: nesting deeper than :data:`MAX_VALUE_DEPTH`, or a value that is not
            JSON-like (str, bool, int, float, None, bytes, a list or a str-keyed mapping).

    Example:
        >>> freeze_value([1, {"a": [2]}])
        (1, {'a': (2,)})
    """
    if value is None or isinstance(value, (str, bool, int, float, bytes)):
        return value
    if depth >= MAX_VALUE_DEPTH:
        raise TraceFormatError(
            f"attribute value nested deeper than {MAX_VALUE_DEPTH} levels; refusing it"
        )
    if isinstance(value, (list, tuple)):
        return tuple(freeze_value(v, depth + 1) for v in value)
    if isinstance(value, Mapping):
        return ReadOnlyDict({str(k): freeze_value(v, depth + 1) for k, v in value.items()})
    raise TraceFormatError(
        f"attribute value must be JSON-like (str, number, bool, list, mapping), got "
        f"{type(value).__name__}: {value!r:.100}"
    )


def _attrs(owner: str, value: Any) -> ReadOnlyDict:
    if value is None:
        return ReadOnlyDict()
    if isinstance(value, ReadOnlyDict) and all(type(k) is str for k in value):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"{owner} must be a mapping, got {type(value).__name__}: {value!r:.100}")
    out: dict[str, Any] = {}
    for k, v in value.items():
        if not isinstance(k, str):
            raise TypeError(f"{owner} keys must be str, got {k!r:.80}")
        out[k] = freeze_value(v)
    return ReadOnlyDict(out)


def _hex_id(owner: str, value: Any, width: int, *, optional: bool = False) -> str | None:
    """Lowercase hex, zero-padded to ``width`` digits (OpenTelemetry's canonical form)."""
    if value is None and optional:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{owner} must be a hex string or an int >= 0, got {value}")
        return None if optional and value == 0 else format(value, f"0{width}x")
    if not isinstance(value, str):
        raise TypeError(f"{owner} must be a hex string, got {type(value).__name__}: {value!r:.80}")
    text = value.strip().lower()
    if text.startswith("0x"):
        text = text[2:]
    if not text:
        if optional:
            return None
        raise ValueError(f"{owner} must be a non-empty hex string, got {value!r}")
    if not _HEX.fullmatch(text):
        raise ValueError(f"{owner} must be a hex string, got {value!r:.80}")
    if optional and not text.strip("0"):  # an all-zero parent id means "no parent"
        return None
    return text.rjust(width, "0")


def _ns(owner: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{owner} must be an int (ns since the epoch), got {value!r:.80}")
    if isinstance(value, float) and (not math.isfinite(value) or value != int(value)):
        raise ValueError(f"{owner} must be a whole number of ns, got {value!r}")
    if value < 0:
        raise ValueError(f"{owner} must be >= 0, got {value}")
    return int(value)


def _status(value: Any) -> str:
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise TypeError(f"Span.status must be one of {STATUSES}, got {value!r:.80}")
    got = _STATUS_ALIASES.get(str(value).strip().upper())
    if got is None:
        raise ValueError(f"Span.status must be one of {STATUSES}, got {value!r:.80}")
    return got


@dataclass(frozen=True)
class SpanEvent:
    """One span event (e.g. ``exception`` with ``exception.message``).

    Example:
        >>> SpanEvent("exception", 5, {"exception.message": "boom"}).attributes["exception.message"]
        'boom'
    """

    name: str
    time_ns: int = 0
    attributes: Mapping[str, Any] = field(default_factory=ReadOnlyDict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"SpanEvent.name must be a str, got {self.name!r:.80}")
        object.__setattr__(self, "time_ns", _ns("SpanEvent.time_ns", self.time_ns))
        object.__setattr__(self, "attributes", _attrs("SpanEvent.attributes", self.attributes))


def _event(x: Any, i: int) -> SpanEvent:
    if isinstance(x, SpanEvent):
        return x
    if isinstance(x, Mapping):
        t = x.get("time_ns", x.get("timestamp", 0))
        return SpanEvent(
            str(x.get("name", "")),
            _time_ns(t) if isinstance(t, str) else t,
            x.get("attributes") or ReadOnlyDict(),
        )
    if isinstance(x, (tuple, list)) and len(x) == 3:
        return SpanEvent(*x)
    raise TypeError(
        f"Span.events[{i}] must be a SpanEvent, a mapping or a (name, time_ns, attributes) "
        f"tuple, got {type(x).__name__}: {x!r:.80}"
    )


@dataclass(frozen=True)
class Span:
    """One span, convention-neutral (the reader's output, :func:`episodes_from_spans`' input).

    Args:
        trace_id: The trace id (hex; a ``0x`` prefix and upper case are accepted, an int too);
            kept as 32 lowercase hex digits (zero-padded).
        span_id: The span id (hex; kept as 16 lowercase hex digits).
        parent_id: The parent span's id, or ``None`` for a root ("" and all zeros mean none).
        name: The span name.
        start_ns: Start time, ns since the epoch.
        end_ns: End time, ns since the epoch (not before ``start_ns``).
        attributes: The span attributes, flattened to plain values (copied, read-only).
        status: ``"UNSET"``, ``"OK"`` or ``"ERROR"`` (OTLP's ``STATUS_CODE_*`` names and codes
            0/1/2 are accepted).
        status_message: The status description (why it failed).
        events: :class:`SpanEvent` s (or mappings, or ``(name, time_ns, attributes)`` tuples).
        resource: The resource attributes (``service.name``, ...).

    Raises:
        TypeError, ValueError: a field of the wrong type or value (the message names it).
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any] = field(default_factory=ReadOnlyDict)
    status: str = "UNSET"
    status_message: str = ""
    events: tuple[SpanEvent, ...] = ()
    resource: Mapping[str, Any] = field(default_factory=ReadOnlyDict)

    def __post_init__(self) -> None:
        _set = object.__setattr__
        _set(self, "trace_id", _hex_id("Span.trace_id", self.trace_id, 32))
        _set(self, "span_id", _hex_id("Span.span_id", self.span_id, 16))
        _set(self, "parent_id", _hex_id("Span.parent_id", self.parent_id, 16, optional=True))
        if not isinstance(self.name, str):
            raise TypeError(f"Span.name must be a str, got {type(self.name).__name__}")
        start, end = _ns("Span.start_ns", self.start_ns), _ns("Span.end_ns", self.end_ns)
        if end < start:
            end = start  # a clock step: keep the span, with zero length
        _set(self, "start_ns", start)
        _set(self, "end_ns", end)
        _set(self, "attributes", _attrs("Span.attributes", self.attributes))
        _set(self, "resource", _attrs("Span.resource", self.resource))
        _set(self, "status", _status(self.status))
        if self.status_message is None:
            _set(self, "status_message", "")
        elif not isinstance(self.status_message, str):
            raise TypeError(f"Span.status_message must be a str, got {self.status_message!r:.80}")
        evs = self.events
        if evs is None:
            evs = ()
        if isinstance(evs, (str, bytes, Mapping)) or not isinstance(evs, Iterable):
            raise TypeError(f"Span.events must be a sequence of events, got {evs!r:.80}")
        _set(self, "events", tuple(_event(e, i) for i, e in enumerate(evs)))

    @property
    def duration_ns(self) -> int:
        """``end_ns - start_ns``."""
        return self.end_ns - self.start_ns

    @property
    def failed(self) -> bool:
        """True when the span's status is ``ERROR``."""
        return self.status == "ERROR"

    def error_message(self) -> str | None:
        """Why the span failed (status message, else its ``exception`` event), or ``None``.

        Example:
            >>> Span("a", "b", None, "t", 0, 0, status="ERROR",
            ...      events=[("exception", 0, {"exception.message": "boom"})]).error_message()
            'boom'
        """
        if not self.failed:
            return None
        if self.status_message:
            return self.status_message
        for ev in self.events:
            if ev.name == "exception":
                msg = ev.attributes.get("exception.message")
                typ = ev.attributes.get("exception.type")
                if msg or typ:
                    return str(msg or typ)
        return "error"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Span:
        """A span from the dict OpenTelemetry SDK's ``ReadableSpan.to_json()`` gives.

        ``{"name", "context": {"trace_id": "0x..", "span_id": "0x.."}, "parent_id",
        "start_time", "end_time" (ISO-8601), "status": {"status_code", "description"},
        "attributes", "events": [{"name", "timestamp", "attributes"}], "resource":
        {"attributes"}}``. ISO times carry microseconds: spans that start in the same
        microsecond keep the order they are given in.

        Raises:
            TypeError, ValueError: not that shape (the message names the field).

        Example:
            >>> s = Span.from_dict({"name": "chat gpt-4o",
            ...     "context": {"trace_id": "0x01", "span_id": "0x02"}, "parent_id": None,
            ...     "start_time": "2025-01-01T00:00:00.000001Z",
            ...     "end_time": "2025-01-01T00:00:00.000002Z",
            ...     "status": {"status_code": "OK"}, "attributes": {"gen_ai.operation.name": "chat"}})
            >>> s.duration_ns, s.status
            (1000, 'OK')
        """
        if not isinstance(d, Mapping):
            raise TypeError(f"Span.from_dict expects a mapping, got {type(d).__name__}: {d!r:.100}")
        ctx = d.get("context")
        if not isinstance(ctx, Mapping):
            raise ValueError(
                f"a to_json() span needs a 'context' object with trace_id and span_id, got {ctx!r:.100}"
            )
        status = d.get("status") or {}
        if not isinstance(status, Mapping):
            raise TypeError(f"span 'status' must be an object, got {status!r:.100}")
        resource = d.get("resource") or {}
        if not isinstance(resource, Mapping):
            raise TypeError(f"span 'resource' must be an object, got {resource!r:.100}")
        events = d.get("events") or ()
        if not isinstance(events, (list, tuple)):
            raise TypeError(f"span 'events' must be a list, got {events!r:.100}")
        trace_id: Any = ctx.get("trace_id")
        span_id: Any = ctx.get("span_id")
        return cls(
            trace_id=trace_id,
            span_id=span_id,
            parent_id=d.get("parent_id"),
            name=d.get("name", ""),
            start_ns=_time_ns(d.get("start_time")),
            end_ns=_time_ns(d.get("end_time", d.get("start_time"))),
            attributes=d.get("attributes") or {},
            status=status.get("status_code", "UNSET"),
            status_message=status.get("description") or "",
            events=tuple(_event(e, i) for i, e in enumerate(events)),
            resource=resource.get("attributes") or {},
        )


def _time_ns(value: Any) -> int:
    """ISO-8601 text (``to_json()``'s times) or a number of ns, as ns since the epoch."""
    if value is None:
        return 0
    if not isinstance(value, str):
        return _ns("span time", value)
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"span time must be ISO-8601 or ns, got {value!r:.80}") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    delta = t - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


def _status_name(code: Any) -> str:
    name = getattr(code, "name", code)
    return str(name) if name is not None else "UNSET"


def span_from_otel(span: Any) -> Span:
    """A :class:`Span` from a live OpenTelemetry SDK ``ReadableSpan`` (duck-typed; ns times).

    Reads ``span.context.trace_id`` / ``span_id`` (ints), ``span.parent``, ``span.name``,
    ``span.start_time`` / ``end_time``, ``span.attributes``, ``span.status``, ``span.events``
    and ``span.resource.attributes``. ek does not import OpenTelemetry for this.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> sdk = NS(context=NS(trace_id=1, span_id=2), parent=None, name="chat", start_time=5,
        ...          end_time=9, attributes={}, status=NS(status_code=NS(name="OK"), description=None),
        ...          events=(), resource=NS(attributes={"service.name": "bot"}))
        >>> span_from_otel(sdk).resource["service.name"]
        'bot'
    """
    ctx = getattr(span, "context", None)
    if ctx is None or not hasattr(ctx, "trace_id"):
        raise TypeError(
            f"span_from_otel expects an OpenTelemetry ReadableSpan (with .context.trace_id), "
            f"got {type(span).__name__}"
        )
    parent = getattr(span, "parent", None)
    status = getattr(span, "status", None)
    resource = getattr(span, "resource", None)
    events = tuple(
        SpanEvent(str(e.name), int(getattr(e, "timestamp", 0) or 0), dict(e.attributes or {}))
        for e in (getattr(span, "events", None) or ())
    )
    return Span(
        trace_id=ctx.trace_id,
        span_id=ctx.span_id,
        parent_id=None if parent is None else parent.span_id,
        name=str(span.name),
        start_ns=int(span.start_time or 0),
        end_ns=int(span.end_time or span.start_time or 0),
        attributes=dict(span.attributes or {}),
        status=_status_name(getattr(status, "status_code", None)),
        status_message=getattr(status, "description", None) or "",
        events=events,
        resource=dict(getattr(resource, "attributes", None) or {}),
    )
