"""Trace reading: spans read per second and peak memory for a ~100 MB OTLP JSON-lines file.

A file of generated agent traces (one ``{"resourceSpans": [...]}`` document per trace per line,
as the OpenTelemetry Collector's file exporter writes; each trace an ``invoke_agent`` span, 3
``chat`` spans with usage and output messages, 3 ``execute_tool`` spans with arguments and
results) is written to a temporary folder, then read:

* ``ek read_spans`` (streamed, one line at a time; ``ek.agents.traces.read_spans``),
* the stdlib floor: ``json.loads`` of each line, nothing more (no span objects): what any
  Python reader of OTLP JSON pays before doing anything,
* ``ek episodes_from_spans`` (read, group by trace, one Episode per run): grouping needs every
  span of a trace, so it holds the spans in memory (not streamed).

opentelemetry-sdk has **no OTLP JSON decoder** to compare with: its only JSON path is the
encoder ``ReadableSpan.to_json()``; decoding OTLP JSON would need ``opentelemetry-proto`` with
protobuf's ``json_format`` (not a dependency here), which reads ids as base64 rather than
OTLP JSON's hex. So the comparison made is against the stdlib parse floor.

Time is CPU time (``process_time``); peak memory is measured in a second pass with
``tracemalloc`` (Python allocations; it slows the run, so it is not used for the timings), at
10 MB and at ~100 MB to show that streaming keeps it flat.

Run: ``.venv/bin/python bench/traces.py [MB]`` (default 100).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from ek.agents.traces import episodes_from_spans, read_spans


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        v: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        v = {"intValue": str(value)}
    else:
        v = {"stringValue": str(value)}
    return {"key": key, "value": v}


def _span(
    trace: str, sid: int, parent: int | None, name: str, t: int, attrs: dict[str, Any]
) -> dict[str, Any]:
    d = {
        "traceId": trace,
        "spanId": f"{sid:016x}",
        "name": name,
        "startTimeUnixNano": str(t),
        "endTimeUnixNano": str(t + 1000),
        "attributes": [_kv(k, v) for k, v in attrs.items()],
        "status": {"code": 0},
    }
    if parent is not None:
        d["parentSpanId"] = f"{parent:016x}"
    return d


def trace_line(i: int) -> str:
    trace = f"{i:032x}"
    base = 1_700_000_000_000_000_000 + i * 10**9
    root = i * 16 + 1
    spans = [
        _span(
            trace,
            root,
            None,
            "invoke_agent support",
            base,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "support",
                "final_result": f"refunded order {i}",
                "ek.task_id": f"task-{i % 50}",
            },
        )
    ]
    for j in range(3):
        msgs = json.dumps(
            [
                {
                    "role": "assistant",
                    "parts": [
                        {
                            "type": "tool_call",
                            "id": f"c{j}",
                            "name": "lookup_order",
                            "arguments": {"order_id": f"A{i}-{j}"},
                        }
                    ],
                }
            ]
        )
        spans.append(
            _span(
                trace,
                root + 1 + 2 * j,
                root,
                "chat gpt-4o",
                base + 10 + 100 * j,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.usage.input_tokens": 1200 + j,
                    "gen_ai.usage.output_tokens": 80,
                    "gen_ai.usage.cache_read.input_tokens": 1000,
                    "gen_ai.output.messages": msgs,
                    "gen_ai.input.messages": json.dumps(
                        [
                            {
                                "role": "user",
                                "parts": [
                                    {
                                        "type": "text",
                                        "content": "please refund my order " + "x" * 300,
                                    }
                                ],
                            }
                        ]
                    ),
                },
            )
        )
        spans.append(
            _span(
                trace,
                root + 2 + 2 * j,
                root,
                "execute_tool lookup_order",
                base + 60 + 100 * j,
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "lookup_order",
                    "gen_ai.tool.call.id": f"c{j}",
                    "gen_ai.tool.call.arguments": json.dumps({"order_id": f"A{i}-{j}"}),
                    "gen_ai.tool.call.result": json.dumps(
                        {"status": "paid", "items": ["a", "b"], "total": 12.5}
                    ),
                },
            )
        )
    doc = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_kv("service.name", "shop")]},
                "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}],
            }
        ]
    }
    return json.dumps(doc, separators=(",", ":")) + "\n"


def write_file(path: str, megabytes: float) -> tuple[int, int]:
    target = int(megabytes * 1_000_000)
    n = size = 0
    with open(path, "w", encoding="utf-8") as fh:
        while size < target:
            line = trace_line(n)
            fh.write(line)
            size += len(line)
            n += 1
    return n, size


def stdlib_floor(path: str) -> int:
    n = 0
    with open(path, "rb") as fh:
        for line in fh:
            doc = json.loads(line)
            for rs in doc["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    n += len(ss["spans"])
    return n


def ek_stream(path: str) -> int:
    n = 0
    for _ in read_spans(path):
        n += 1
    return n


def ek_episodes(path: str) -> int:
    return len(episodes_from_spans(path, task_attribute="ek.task_id"))


def cpu(fn: Callable[[str], int], path: str) -> tuple[float, int]:
    t = time.process_time()
    n = fn(path)
    return time.process_time() - t, n


def peak_mb(fn: Callable[[str], int], path: str) -> float:
    tracemalloc.start()
    fn(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6


def main() -> None:
    big = float(sys.argv[1]) if len(sys.argv) > 1 else 100.0
    with tempfile.TemporaryDirectory() as d:
        rows = []
        for mb in (10.0, big):
            path = os.path.join(d, f"traces_{int(mb)}.jsonl")
            n_traces, size = write_file(path, mb)
            n_spans = n_traces * 7
            for label, fn in (
                ("stdlib json.loads per line (floor)", stdlib_floor),
                ("ek read_spans (streamed)", ek_stream),
                ("ek episodes_from_spans (grouped)", ek_episodes),
            ):
                secs, _ = cpu(fn, path)
                rows.append((f"{size / 1e6:.0f} MB", label, n_spans, secs, peak_mb(fn, path)))
        print(
            f"{'file':>7}  {'reader':<36} {'spans':>8} {'CPU s':>7} {'spans/s':>10} {'peak MB':>8}"
        )
        for size_s, label, n, secs, peak in rows:
            print(f"{size_s:>7}  {label:<36} {n:>8} {secs:>7.2f} {n / secs:>10,.0f} {peak:>8.1f}")


if __name__ == "__main__":
    main()
