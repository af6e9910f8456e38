"""Reading (and writing) OTLP JSON: :func:`read_spans`, :func:`spans_from_document`,
:func:`write_otlp_json`.

**What is read.** OTLP JSON as the OpenTelemetry Collector's file exporter writes it: one
``{"resourceSpans": [...]}`` object per line (JSON lines), or one such document in a file (pretty
printed or not). Each ``resourceSpans`` entry holds a ``resource`` and ``scopeSpans`` (older
writers: ``instrumentationLibrarySpans``) whose ``spans`` carry ``traceId``, ``spanId``,
``parentSpanId``, ``name``, ``startTimeUnixNano``, ``endTimeUnixNano``, ``attributes`` (a list of
``{"key", "value": AnyValue}``), ``events`` and ``status`` (``code`` as a number or a
``STATUS_CODE_*`` name, ``message``). Ids are hex, as the OTLP JSON spec says; base64 ids (what a
generic protobuf JSON printer gives) are accepted too. ``AnyValue`` is flattened:
``stringValue``, ``boolValue``, ``intValue`` (number or decimal text), ``doubleValue``,
``bytesValue`` (base64 -> bytes), ``arrayValue`` -> tuple, ``kvlistValue`` -> read-only dict.

A line or document may also be a span as ``ReadableSpan.to_json()`` gives it (``json.loads`` of
it; see :meth:`~ek.agents.traces.Span.from_dict`), or a JSON list of documents or spans. A file of
JSON values written back to back (what the SDK's ``ConsoleSpanExporter`` prints: pretty
``to_json()`` spans one after another) is read too.

**Streaming.** A JSON-lines file is read one line at a time: memory holds one line, never the
whole file. A single-document file is read whole (it is one JSON value). The format is decided
by the first non-blank line: if it is a complete JSON value the file is JSON lines.

**Bounds.** A line (or a single document) longer than ``max_line_bytes`` (default 256 MiB),
JSON nested past Python's recursion limit, or an attribute value nested deeper than 64 levels is
refused with :class:`~ek.agents.traces.TraceFormatError` naming the file and line.

Example:
    >>> doc = {"resourceSpans": [{"resource": {"attributes": [
    ...     {"key": "service.name", "value": {"stringValue": "shop"}}]},
    ...   "scopeSpans": [{"spans": [{"traceId": "5b8efff798038103d269b633813fc60c",
    ...     "spanId": "eee19b7ec3c1b174", "name": "execute_tool lookup",
    ...     "startTimeUnixNano": "1000", "endTimeUnixNano": "2000",
    ...     "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}},
    ...                    {"key": "n", "value": {"intValue": "3"}}],
    ...     "status": {"code": "STATUS_CODE_ERROR", "message": "no such order"}}]}]}]}
    >>> [s] = read_spans([doc])
    >>> s.name, s.attributes["n"], s.status, s.resource["service.name"]
    ('execute_tool lookup', 3, 'ERROR', 'shop')
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO, Any

from ek.base import ReadOnlyDict

from ._span import MAX_VALUE_DEPTH, Span, SpanEvent, TraceFormatError

__all__ = [
    "MAX_LINE_BYTES",
    "is_trace_document",
    "read_spans",
    "spans_from_document",
    "spans_to_otlp",
    "write_otlp_json",
]

#: The longest line (or single-document file) the reader accepts, in bytes.
MAX_LINE_BYTES = 1 << 28

#: What :func:`read_spans` calls with each malformed line it skips.
OnError = Callable[[TraceFormatError], None]

_SCOPE_KEYS = ("scopeSpans", "instrumentationLibrarySpans")


def is_trace_document(obj: Any) -> bool:
    """True when ``obj`` (one parsed JSON value) looks like OTLP JSON or a ``to_json()`` span.

    Example:
        >>> is_trace_document({"resourceSpans": []}), is_trace_document({"ek_store": 1})
        (True, False)
    """
    if isinstance(obj, list):
        return bool(obj) and is_trace_document(obj[0])
    if not isinstance(obj, Mapping):
        return False
    if "resourceSpans" in obj:
        return True
    ctx = obj.get("context")
    return isinstance(ctx, Mapping) and "span_id" in ctx and "name" in obj


# ----------------------------------------------------------------------------- decoding


def _any_value(v: Any, depth: int = 0) -> Any:
    """One OTLP ``AnyValue`` as a plain Python value."""
    if type(v) is dict and "stringValue" in v:  # the common case first
        return v["stringValue"]
    if not isinstance(v, Mapping):
        raise TraceFormatError(f"an AnyValue must be an object, got {type(v).__name__}: {v!r:.80}")
    if depth >= MAX_VALUE_DEPTH:
        raise TraceFormatError(f"attribute value nested deeper than {MAX_VALUE_DEPTH} levels")
    for key, decode in _SCALARS:
        if key in v:
            return decode(v[key])
    if "arrayValue" in v:
        vals = (v["arrayValue"] or {}).get("values") or ()
        return tuple(_any_value(x, depth + 1) for x in vals)
    if "kvlistValue" in v:
        return _kvlist((v["kvlistValue"] or {}).get("values") or (), depth + 1)
    if "bytesValue" in v:
        return _b64(v["bytesValue"], "bytesValue")
    return None  # an empty AnyValue


def _int(x: Any, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, str)):
        raise TraceFormatError(f"{what} must be an integer or its decimal text, got {x!r:.80}")
    try:
        return int(x)
    except ValueError:
        raise TraceFormatError(
            f"{what} must be an integer or its decimal text, got {x!r:.80}"
        ) from None


def _double(x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, str)):
        raise TraceFormatError(f"doubleValue must be a number, got {x!r:.80}")
    try:
        return float(x)  # protobuf JSON writes NaN and Infinity as text
    except ValueError:
        raise TraceFormatError(f"doubleValue must be a number, got {x!r:.80}") from None


def _b64(x: Any, what: str) -> bytes:
    if not isinstance(x, str):
        raise TraceFormatError(f"{what} must be base64 text, got {x!r:.80}")
    try:
        return base64.b64decode(x, validate=True)
    except (binascii.Error, ValueError):
        raise TraceFormatError(f"{what} must be base64 text, got {x!r:.80}") from None


#: The scalar AnyValue kinds, in the order a value is read as one, and their decoders.
_SCALARS: tuple[tuple[str, Callable[[Any], Any]], ...] = (
    ("stringValue", lambda x: x),
    ("boolValue", bool),
    ("intValue", lambda x: _int(x, "intValue")),
    ("doubleValue", _double),
)


def _kvlist(items: Any, depth: int = 0) -> ReadOnlyDict:
    if not isinstance(items, (list, tuple)):
        raise TraceFormatError(f"attributes must be a list of {{key, value}}, got {items!r:.80}")
    out: dict[str, Any] = {}
    for kv in items:
        if (type(kv) is not dict and not isinstance(kv, Mapping)) or type(kv.get("key")) is not str:
            raise TraceFormatError(
                f"an attribute must be {{'key': str, 'value': ...}}, got {kv!r:.80}"
            )
        out[kv["key"]] = _any_value(kv.get("value") or {}, depth)
    return ReadOnlyDict(out)


def _id(x: Any, what: str, size: int) -> str | None:
    """An OTLP id as hex: hex text (the OTLP JSON rule) or base64 (protobuf's JSON)."""
    if x is None or x == "":
        return None
    if not isinstance(x, str):
        raise TraceFormatError(f"{what} must be hex text, got {x!r:.80}")
    if len(x) == 2 * size:
        try:
            bytes.fromhex(x)
            return x.lower()
        except ValueError:
            pass
    try:
        raw = _b64(x, what)
    except TraceFormatError:
        raw = b""
    if len(raw) == size:
        return raw.hex()
    if len(x) <= 2 * size and all(c in "0123456789abcdefABCDEF" for c in x):
        return x.lower()  # short hex (zero-padded by Span)
    raise TraceFormatError(f"{what} must be {size} bytes as hex text, got {x!r:.80}")


def _status(st: Any) -> tuple[str, str]:
    if st is None:
        return "UNSET", ""
    if not isinstance(st, Mapping):
        raise TraceFormatError(f"span status must be an object, got {st!r:.80}")
    code = st.get("code", 0)
    msg = st.get("message") or ""
    return str(code if code is not None else 0), str(msg)


def _event(e: Any) -> SpanEvent:
    if not isinstance(e, Mapping):
        raise TraceFormatError(f"a span event must be an object, got {e!r:.80}")
    t = e.get("timeUnixNano")
    return SpanEvent(
        str(e.get("name") or ""),
        _int(t, "timeUnixNano") if t is not None else 0,
        _kvlist(e.get("attributes") or ()),
    )


def _otlp_span(s: Any, resource: ReadOnlyDict) -> Span:
    if not isinstance(s, Mapping):
        raise TraceFormatError(f"a span must be an object, got {type(s).__name__}")
    trace_id = _id(s.get("traceId"), "traceId", 16)
    span_id = _id(s.get("spanId"), "spanId", 8)
    if trace_id is None or span_id is None:
        raise TraceFormatError(
            f"a span needs traceId and spanId, got {s.get('traceId')!r:.40}, "
            f"{s.get('spanId')!r:.40}"
        )
    start = _int(s.get("startTimeUnixNano", 0), "startTimeUnixNano")
    end = s.get("endTimeUnixNano")
    code, msg = _status(s.get("status"))
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=_id(s.get("parentSpanId"), "parentSpanId", 8),
        name=str(s.get("name") or ""),
        start_ns=start,
        end_ns=start if end is None else _int(end, "endTimeUnixNano"),
        attributes=_kvlist(s.get("attributes") or ()),
        status=code,
        status_message=msg,
        events=tuple(_event(e) for e in (s.get("events") or ())),
        resource=resource,
    )


def _resource_spans(rs: Any) -> Iterator[Span]:
    if not isinstance(rs, Mapping):
        raise TraceFormatError(f"a resourceSpans entry must be an object, got {rs!r:.80}")
    res = rs.get("resource") or {}
    resource = _kvlist(res.get("attributes") or ()) if isinstance(res, Mapping) else None
    if resource is None:
        raise TraceFormatError(f"resource must be an object, got {res!r:.80}")
    for key in _SCOPE_KEYS:
        for ss in rs.get(key) or ():
            if not isinstance(ss, Mapping):
                raise TraceFormatError(f"a {key} entry must be an object, got {ss!r:.80}")
            for s in ss.get("spans") or ():
                yield _otlp_span(s, resource)


def spans_from_document(doc: Any) -> Iterator[Span]:
    """The spans of one parsed JSON value: an OTLP document, a ``to_json()`` span, a bare OTLP
    span, or a list of these.

    Raises:
        TraceFormatError: none of these shapes (the message says what was expected).
    """
    if isinstance(doc, (list, tuple)):
        for item in doc:
            yield from spans_from_document(item)
        return
    if not isinstance(doc, Mapping):
        raise TraceFormatError(_expected(doc))
    if "resourceSpans" in doc:
        entries = doc["resourceSpans"] or ()
        if not isinstance(entries, (list, tuple)):
            raise TraceFormatError(f"resourceSpans must be a list, got {entries!r:.80}")
        for rs in entries:
            yield from _resource_spans(rs)
    elif isinstance(doc.get("context"), Mapping):
        try:
            yield Span.from_dict(doc)
        except (TypeError, ValueError) as e:
            raise TraceFormatError(f"not a readable to_json() span: {e}") from None
    elif "traceId" in doc and "spanId" in doc:
        yield _otlp_span(doc, ReadOnlyDict())
    else:
        raise TraceFormatError(_expected(doc))


def _expected(doc: Any) -> str:
    what = (
        f"an object with keys {sorted(doc)[:8]}" if isinstance(doc, Mapping) else type(doc).__name__
    )
    return (
        "expected OTLP JSON ({'resourceSpans': [...]}), a ReadableSpan.to_json() span "
        f"({{'name', 'context': {{'trace_id', 'span_id'}}, ...}}) or a list of them; got {what}"
    )


# ----------------------------------------------------------------------------- reading


def _reject_constant(name: str) -> Any:
    raise ValueError(f"JSON constant {name} is not allowed")


def _loads(raw: bytes) -> Any:
    return json.loads(raw, parse_constant=_reject_constant)


def _read_line(fh: IO[bytes], limit: int, where: str) -> bytes:
    line = fh.readline(limit + 1)
    if len(line) > limit:
        raise TraceFormatError(
            f"{where}: line longer than {limit} bytes; split the export into smaller batches"
        )
    return line


def _decode(raw: bytes, where: str) -> Any:
    try:
        return _loads(raw)
    except RecursionError:
        raise TraceFormatError(f"{where}: JSON nested too deeply; refusing it") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise TraceFormatError(f"{where}: not JSON ({str(e)[:200]})") from None


def _spans_at(doc: Any, where: str) -> Iterator[Span]:
    try:
        yield from spans_from_document(doc)
    except TraceFormatError as e:
        raise TraceFormatError(f"{where}: {e}") from None
    except (TypeError, ValueError, RecursionError) as e:
        raise TraceFormatError(f"{where}: {type(e).__name__}: {str(e)[:300]}") from None


def _skip_rest_of_line(fh: IO[bytes]) -> None:
    """Consume what is left of an over-long line (bounded reads, nothing kept)."""
    while True:
        chunk = fh.readline(1 << 20)
        if not chunk or chunk.endswith(b"\n"):
            return


def _line_spans(
    fh: IO[bytes], limit: int, where: str, on_error: OnError | None
) -> list[Span] | None:
    """The spans of the next line (``[]`` for a blank one), ``None`` at the end of the file.

    A malformed line raises, or with ``on_error`` is handed to it and read as no spans: a line
    is parsed whole before any of its spans is kept, so a bad line contributes nothing.
    """
    try:
        line = _read_line(fh, limit, where)
    except TraceFormatError as e:
        if on_error is None:
            raise
        _skip_rest_of_line(fh)
        on_error(e)
        return []
    if not line:
        return None
    if not line.strip():
        return []
    try:
        return list(_spans_at(_decode(line, where), where))
    except TraceFormatError as e:
        if on_error is None:
            raise
        on_error(e)
        return []


def _read_path(path: str, limit: int, on_error: OnError | None) -> Iterator[Span]:
    with open(path, "rb") as fh:
        no, first = 0, b""
        while True:  # the first non-blank line decides the format
            no += 1
            first = _read_line(fh, limit, f"{path}:{no}")
            if not first or first.strip():
                break
        if not first:
            return
        first = first.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark
        try:
            doc = _loads(first)
        except (ValueError, UnicodeDecodeError, RecursionError):
            doc = _whole(fh, first, path, limit)
            yield from _spans_at(doc, path)
            return
        try:
            yield from list(_spans_at(doc, f"{path}:{no}"))
        except TraceFormatError as e:
            if on_error is None:
                raise
            on_error(e)
        while True:
            no += 1
            spans = _line_spans(fh, limit, f"{path}:{no}", on_error)
            if spans is None:
                return
            yield from spans


def _whole(fh: IO[bytes], head: bytes, path: str, limit: int) -> Any:
    """The rest of a single-document file, parsed (bounded by ``limit`` bytes)."""
    if not head.lstrip().startswith((b"{", b"[")):
        raise TraceFormatError(
            f"{path}:1: not JSON: expected OTLP JSON (one {{'resourceSpans': [...]}} per line or "
            f"one document), got {head[:60]!r}"
        )
    rest = fh.read(limit + 1 - len(head))
    data = head + rest
    if len(data) > limit:
        raise TraceFormatError(
            f"{path}: a single JSON document longer than {limit} bytes; write JSON lines instead"
        )
    try:
        return _decode(data, path)
    except TraceFormatError:
        return _concatenated(data, path)  # e.g. ConsoleSpanExporter: pretty spans back to back


def _concatenated(data: bytes, path: str) -> list[Any]:
    """JSON values written one after another (not one per line), or the first error."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TraceFormatError(f"{path}: not UTF-8 JSON ({e})") from None
    dec = json.JSONDecoder(parse_constant=_reject_constant)
    docs: list[Any] = []
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return docs
        try:
            doc, i = dec.raw_decode(text, i)
        except RecursionError:
            raise TraceFormatError(f"{path}: JSON nested too deeply; refusing it") from None
        except ValueError as e:
            line = text.count("\n", 0, i) + 1
            raise TraceFormatError(f"{path}:{line}: not JSON ({str(e)[:200]})") from None
        docs.append(doc)


def _check_limit(limit: Any) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"max_line_bytes must be an int >= 1, got {limit!r}")
    return limit


def read_spans(
    source: str | os.PathLike[str] | Iterable[Any],
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
    on_error: OnError | None = None,
) -> Iterator[Span]:
    """Stream the spans of a trace file or of given documents, in the order they appear.

    Args:
        source: A path to OTLP JSON (JSON lines or one document; see the module docstring), or
            an iterable of OTLP documents, ``to_json()`` span dicts, or :class:`Span` objects.
        max_line_bytes: The longest line (or single document) accepted.
        on_error: Called with the :class:`TraceFormatError` of each malformed line of a JSON
            lines file (or malformed item of an iterable), which is then skipped, so one bad
            line never costs the file; ``None`` (default): the first one is raised. A file that
            is not OTLP JSON at all still raises.

    Returns:
        An iterator of :class:`~ek.agents.traces.Span`; nothing is read until it is iterated.

    Raises:
        TypeError: ``source`` is neither a path nor an iterable (raised at once).
        TraceFormatError: (while iterating) a malformed line or document; the message names the
            file and line (or the item number).
        OSError: the file cannot be read.

    Example:
        >>> s = Span("01", "02", None, "invoke_agent bot", 0, 5)
        >>> [x.name for x in read_spans([s])]
        ['invoke_agent bot']
    """
    limit = _check_limit(max_line_bytes)
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.isfile(path):
            if not os.path.exists(path):
                raise FileNotFoundError(f"{path}: no such file")
            raise TraceFormatError(f"{path}: expected a regular file of OTLP JSON")
        return _read_path(path, limit, on_error)
    if isinstance(source, (bytes, Mapping)) or not isinstance(source, Iterable):
        raise TypeError(
            "read_spans expects a path, or an iterable of OTLP documents, to_json() span dicts "
            f"or Span objects; got {type(source).__name__}: {source!r:.100}"
        )
    return _read_items(source, on_error)


def _read_items(items: Iterable[Any], on_error: OnError | None) -> Iterator[Span]:
    for i, item in enumerate(items):
        if isinstance(item, Span):
            yield item
        elif isinstance(item, (Mapping, list, tuple)):
            try:
                yield from list(_spans_at(item, f"item {i}"))
            except TraceFormatError as e:
                if on_error is None:
                    raise
                on_error(e)
        else:
            raise TypeError(
                f"item {i}: expected a Span, an OTLP document or a to_json() span dict, got "
                f"{type(item).__name__}: {item!r:.100}"
            )


# ----------------------------------------------------------------------------- writing


def _encode_value(v: Any) -> dict[str, Any]:
    if v is None:
        return {}
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        if math.isfinite(v):
            return {"doubleValue": v}
        return {"doubleValue": "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")}
    if isinstance(v, str):
        return {"stringValue": v}
    if isinstance(v, bytes):
        return {"bytesValue": base64.b64encode(v).decode("ascii")}
    if isinstance(v, Mapping):
        return {"kvlistValue": {"values": _encode_attrs(v)}}
    if isinstance(v, (list, tuple)):
        return {"arrayValue": {"values": [_encode_value(x) for x in v]}}
    return {"stringValue": str(v)}


def _encode_attrs(attrs: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _encode_value(v)} for k, v in attrs.items()]


_STATUS_CODES = {"UNSET": "STATUS_CODE_UNSET", "OK": "STATUS_CODE_OK", "ERROR": "STATUS_CODE_ERROR"}


def _encode_span(s: Span) -> dict[str, Any]:
    d: dict[str, Any] = {
        "traceId": s.trace_id,
        "spanId": s.span_id,
        "name": s.name,
        "startTimeUnixNano": str(s.start_ns),
        "endTimeUnixNano": str(s.end_ns),
        "attributes": _encode_attrs(s.attributes),
        "status": {"code": _STATUS_CODES[s.status]},
    }
    if s.parent_id is not None:
        d["parentSpanId"] = s.parent_id
    if s.status_message:
        d["status"]["message"] = s.status_message
    if s.events:
        d["events"] = [
            {
                "timeUnixNano": str(e.time_ns),
                "name": e.name,
                "attributes": _encode_attrs(e.attributes),
            }
            for e in s.events
        ]
    return d


def spans_to_otlp(spans: Iterable[Span]) -> dict[str, Any]:
    """One OTLP JSON document (``{"resourceSpans": [...]}``) holding ``spans``, grouped by resource.

    Example:
        >>> doc = spans_to_otlp([Span("01", "02", None, "chat m", 1, 2, {"k": [1, 2]})])
        >>> [s.attributes["k"] for s in read_spans([doc])]
        [(1, 2)]
    """
    groups: dict[str, tuple[Mapping[str, Any], list[dict[str, Any]]]] = {}
    for s in spans:
        if not isinstance(s, Span):
            raise TypeError(f"spans_to_otlp expects Span objects, got {type(s).__name__}")
        key = json.dumps(_encode_attrs(s.resource), sort_keys=True)
        groups.setdefault(key, (s.resource, []))[1].append(_encode_span(s))
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _encode_attrs(res)},
                "scopeSpans": [{"scope": {"name": "ek.agents.traces"}, "spans": items}],
            }
            for res, items in groups.values()
        ]
    }


def write_otlp_json(
    path: str | os.PathLike[str], spans: Iterable[Span], *, append: bool = False
) -> int:
    """Write spans as OTLP JSON lines, one trace per line (what :func:`read_spans` reads).

    Returns:
        How many spans were written.

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "t.jsonl")
        >>> write_otlp_json(p, [Span("01", "02", None, "a", 1, 2), Span("03", "04", None, "b", 1, 2)])
        2
        >>> [s.trace_id[-2:] for s in read_spans(p)]
        ['01', '03']
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"write_otlp_json needs a path, got {type(path).__name__}")
    by_trace: dict[str, list[Span]] = {}
    for s in spans:
        if not isinstance(s, Span):
            raise TypeError(f"write_otlp_json expects Span objects, got {type(s).__name__}")
        by_trace.setdefault(s.trace_id, []).append(s)
    n = 0
    with open(path, "a" if append else "w", encoding="utf-8") as fh:
        for group in by_trace.values():
            fh.write(json.dumps(spans_to_otlp(group), ensure_ascii=False, separators=(",", ":")))
            fh.write("\n")
            n += len(group)
    return n
