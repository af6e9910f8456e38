"""Tool-call scoring cost in machine instructions (callgrind): ek vs Ragas, deterministic.

CPU time on a shared machine swings by up to 2x between runs; instruction counts do not. This
script runs itself under ``valgrind --tool=callgrind`` once per (tool, case kind), with the
garbage collector off and ``PYTHONHASHSEED=0``, and counts only what runs inside the scoring loop:
the loop is driven by ``itertools.starmap`` and callgrind collects only inside ``starmap_next``
(``--collect-atstart=no --toggle-collect=starmap_next``), so imports, case generation and input
building are not counted. Same cases as ``bench/toolcalls.py``.

Run: ``.venv/bin/python bench/toolcalls_instructions.py [n_episodes_per_kind]`` (needs
``valgrind``; about a minute per row). Prints thousands of instructions per episode per kind and
the ratio to ek.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

KINDS_ALL = "all"


def _inner(tool: str, kind: str, n: int) -> None:
    os.environ["RAGAS_DO_NOT_TRACK"] = "true"
    import gc
    from itertools import starmap

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from toolcalls import _drive, make_cases  # type: ignore[import-not-found]

    from ek.agents.toolcalls import ToolCallMetric

    cases = make_cases(n) if kind == KINDS_ALL else [c for c in make_cases(n * 9) if c[0] == kind]
    m = ToolCallMetric()
    for _, p, g in make_cases(50, seed=5):  # warm the canonicaliser memo and look-ups
        m(p, g)
    if tool == "ek":
        args = [(p, g) for _, p, g in cases]

        def fn(p: object, g: object) -> float:
            return m(p, g).value

    else:
        from ragas.messages import AIMessage, HumanMessage
        from ragas.messages import ToolCall as RToolCall
        from ragas.metrics.collections import ToolCallAccuracy, ToolCallF1

        met = ToolCallAccuracy() if tool == "acc" else ToolCallF1()
        args = [
            (
                [
                    HumanMessage(content="q"),
                    AIMessage(
                        content="",
                        tool_calls=[RToolCall(name=s.tool, args=dict(s.args)) for s in p],
                    ),
                ],
                [RToolCall(name=s.tool, args=dict(s.args)) for s in g],
            )
            for _, p, g in cases
        ]
        for u, r in args[:20]:
            _drive(met.ascore(user_input=u, reference_tool_calls=r))

        def fn(u: object, r: object) -> float:
            return float(_drive(met.ascore(user_input=u, reference_tool_calls=r)).value)

    gc.disable()
    out = list(starmap(fn, args))
    print(f"EPISODES {len(out)}")


def _measure(tool: str, kind: str, n: int) -> float:
    with tempfile.TemporaryDirectory() as d:
        proc = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--collect-atstart=no",
                "--toggle-collect=starmap_next",
                f"--callgrind-out-file={d}/cg.out",
                sys.executable,
                os.path.abspath(__file__),
                "--inner",
                tool,
                kind,
                str(n),
            ],
            env={**os.environ, "PYTHONHASHSEED": "0"},
            capture_output=True,
            text=True,
            check=True,
        )
    text = proc.stdout + proc.stderr
    episodes = re.search(r"EPISODES (\d+)", text)
    collected = re.search(r"Collected : (\d+)", text)
    if episodes is None or collected is None:
        raise RuntimeError(f"could not read callgrind's output:\n{text[-2000:]}")
    return int(collected.group(1)) / int(episodes.group(1))


def main(n: int = 150) -> None:
    if shutil.which("valgrind") is None:
        print("valgrind not found: this benchmark counts instructions with callgrind")
        return
    kinds = [
        KINDS_ALL,
        "identical",
        "reordered",
        "duplicate_gold",
        "wrong_arg",
        "reordered_wrong_arg",
        "extra_call",
        "repeated_call",
        "missing_call",
        "extra_arg",
    ]
    print(f"{n} episodes per row; thousands of instructions per episode (callgrind)\n")
    print("| cases | ek | Ragas ToolCallF1 | Ragas ToolCallAccuracy | ek / fastest |")
    print("|---|---:|---:|---:|---:|")
    for kind in kinds:
        ek = _measure("ek", kind, n)
        f1 = _measure("f1", kind, n)
        acc = _measure("acc", kind, n)
        label = "bench mix" if kind == KINDS_ALL else kind
        print(
            f"| {label} | {ek / 1e3:.1f}k | {f1 / 1e3:.1f}k | {acc / 1e3:.1f}k | "
            f"{ek / min(f1, acc):.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--inner":
        _inner(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 150)
