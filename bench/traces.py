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

**Scale in one trace** (issue 29): the spans of one trace holding 2,000 / 4,000 / 8,000 agent
runs (each an ``invoke_agent`` span over one ``execute_tool`` span, under a ``step`` span), in
three shapes, grouped into Episodes (``episodes_from_spans`` on the spans in memory, with a task
attribute on the root):

* ``flat``: every run's step under one root (8,000 episodes);
* ``chain``: each run's step under the previous run's step (a trace 3 x runs deep; 8,000
  episodes): the shape whose run look-ups walked every ancestor (4,000 runs took 25 s, 8,000
  took 104 s, before the reader's tree resolved attributes in one pass down the tree);
* ``nested``: each agent under the previous agent's tool call (one episode whose sub-agents are
  8,000 deep), read with ``scope="all"``.

A chain should read in about the time of a flat trace of as many runs, and twice the runs in
about twice the time.

Measured when the reader learnt the stacks (issue 29, this 2-core machine, shared): the rows
above, flat / chain / nested, 2,000 runs 0.41 / 0.37 / 0.15 s, 8,000 runs 1.47 / 1.52 / 0.89 s
(chain / flat 0.9 to 1.3); the grouping row of the many-small-traces file costs about 1.5x what
it did before (10 MB: 0.39-0.48 s -> 0.62-0.69 s, best of 3, old and new run one after the
other): requests merged with executions, results the model was told, answer tools, three
parent repairs, each linear.

Run: ``.venv/bin/python bench/traces.py [MB]`` (default 100); ``bench/traces.py scale`` for the
scale rows alone.
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

from ek.agents.traces import Span, episodes_from_spans, read_spans


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


def one_trace(shape: str, runs: int) -> list[Span]:
    """One trace of ``runs`` agent runs in a shape of the module docstring."""
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    root = Span(trace, "f000000000", None, "root", 0, 10**12, {"ek.task_id": "t"})
    spans, parent, end = [root], root.span_id, 10**12
    for i in range(runs):
        step, run, call = (f"{3 * i + j + 1:x}" for j in range(3))
        start, end = 10 * i, end - 1
        spans.append(Span(trace, step, parent, "step", start, end))
        tool_end = end - 1 if shape == "nested" else start + 3
        spans.append(
            Span(
                trace,
                run,
                step,
                "invoke_agent",
                start + 1,
                end - 1 if shape == "nested" else start + 5,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": f"a{i}"},
            )
        )
        spans.append(
            Span(
                trace,
                call,
                run,
                "execute_tool f",
                start + 2,
                tool_end,
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "f",
                    "gen_ai.tool.call.arguments": json.dumps({"i": i}),
                },
            )
        )
        parent = {"flat": root.span_id, "chain": step, "nested": call}[shape]
    return spans


def scale_rows() -> None:
    """Episodes from one trace of 2,000 / 4,000 / 8,000 runs, flat, chain and nested."""
    print(f"{'shape':<7} {'runs':>6} {'spans':>7} {'episodes':>8} {'CPU s':>7} {'us/run':>7}")
    per_run: dict[tuple[str, int], float] = {}
    for runs in (2000, 4000, 8000):
        for shape in ("flat", "chain", "nested"):
            spans = one_trace(shape, runs)
            scope = "all" if shape == "nested" else "top"
            t = time.process_time()
            eps = episodes_from_spans(spans, task_attribute="ek.task_id", scope=scope)
            secs = time.process_time() - t
            per_run[(shape, runs)] = secs / runs
            print(
                f"{shape:<7} {runs:>6} {len(spans):>7} {len(eps):>8} {secs:>7.2f} "
                f"{1e6 * secs / runs:>7.0f}"
            )
    for runs in (2000, 4000, 8000):
        ratio = per_run[("chain", runs)] / per_run[("flat", runs)]
        print(f"chain / flat at {runs} runs: {ratio:.2f}")


def main() -> None:
    if sys.argv[1:] == ["scale"]:
        scale_rows()
        return
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
    print()
    scale_rows()


if __name__ == "__main__":
    main()
