"""Tool-call scoring cost in machine instructions (callgrind): ek vs Ragas, deterministic.

CPU time on a shared machine swings by up to 2x between runs; instruction counts do not. This
script runs itself under ``valgrind --tool=callgrind`` once per tool, with the garbage collector
off and ``PYTHONHASHSEED=0``, and counts only what runs inside the scoring loops: each case kind
is scored by one ``list(itertools.starmap(...))``, callgrind collects only inside
``starmap_next`` (``--collect-atstart=no --toggle-collect=starmap_next``) and writes one profile
part when each loop's ``starmap`` object is freed (``--dump-after=starmap_dealloc``). Imports,
case generation and input building are not counted. Same cases as ``bench/toolcalls.py``.

Run: ``.venv/bin/python bench/toolcalls_instructions.py [n_episodes_per_kind]`` (needs
``valgrind``; a few minutes). Prints thousands of instructions per episode per case kind (ek
reading the Score's value, ek reading its reason too, ek reading the value of the
MatchResult that the Score is built from, the two Ragas metrics) and the ratio of ek to
the fastest Ragas metric.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from toolcalls import KINDS, _drive, make_cases, ragas_inputs  # type: ignore[import-not-found]


def _ek_inputs(cases: list[Any]) -> list[tuple[Any, Any]]:
    """Each case as ek's ``(prediction, gold)``."""
    return [(p, g) for _, p, g in cases]


def _inner(tool: str, n: int) -> None:
    os.environ["RAGAS_DO_NOT_TRACK"] = "true"
    import gc
    from itertools import starmap

    from ek.agents.toolcalls import ToolCallMetric

    everything = make_cases(n * 9)
    groups = [everything[:n]] + [[c for c in everything if c[0] == k][:n] for k in KINDS]
    m = ToolCallMetric()
    for _, p, g in make_cases(50, seed=5):  # warm the canonicaliser memo and look-ups
        m(p, g)
    if tool == "ek":
        build = _ek_inputs

        def fn(p: Any, g: Any) -> float:
            return m(p, g).value

    elif tool == "ek_match":  # the same path's MatchResult, its value alone
        build = _ek_inputs

        def fn(p: Any, g: Any) -> float:
            return m.match(p, g).value

    elif tool == "ek_detail":  # the reason read too (since issue 17 it is built with the value)
        build = _ek_inputs

        def fn(p: Any, g: Any) -> float:
            s = m(p, g)
            s.detail["reason"]
            return s.value

    else:
        from ragas.metrics.collections import ToolCallAccuracy, ToolCallF1

        met = ToolCallAccuracy() if tool == "acc" else ToolCallF1()
        build = ragas_inputs

        for u, r in build(make_cases(50, seed=5)):
            _drive(met.ascore(user_input=u, reference_tool_calls=r))

        def fn(u: Any, r: Any) -> float:
            return float(_drive(met.ascore(user_input=u, reference_tool_calls=r)).value)

    inputs = [build(cases) for cases in groups]
    gc.disable()
    for args in inputs:
        out = list(starmap(fn, args))  # one profile part per loop (dumped when starmap is freed)
        print(f"EPISODES {len(out)}", flush=True)


def _measure(tool: str, n: int) -> list[float]:
    """Instructions per episode of ``tool`` for the bench mix and each kind, in order."""
    with tempfile.TemporaryDirectory() as d:
        proc = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--collect-atstart=no",
                "--toggle-collect=starmap_next",
                "--dump-after=starmap_dealloc",
                f"--callgrind-out-file={d}/cg.out",
                sys.executable,
                os.path.abspath(__file__),
                "--inner",
                tool,
                str(n),
            ],
            env={**os.environ, "PYTHONHASHSEED": "0"},
            capture_output=True,
            text=True,
            check=True,
        )
        episodes = [int(x) for x in re.findall(r"EPISODES (\d+)", proc.stdout)]
        totals = []
        parts = [f for f in os.listdir(d) if re.fullmatch(r"cg\.out\.\d+", f)]
        for name in sorted(parts, key=lambda f: int(f.rsplit(".", 1)[-1])):
            with open(os.path.join(d, name)) as f:
                found = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M)
            if found is not None and int(found.group(1)) > 0:
                totals.append(int(found.group(1)))
    if len(totals) != len(episodes) or len(episodes) != len(KINDS) + 1:
        raise RuntimeError(
            f"expected {len(KINDS) + 1} scoring loops with instructions, got {len(totals)} "
            f"profile parts for {len(episodes)} loops:\n{proc.stderr[-2000:]}"
        )
    return [t / e for t, e in zip(totals, episodes)]


def main(n: int = 300) -> None:
    if shutil.which("valgrind") is None:
        print("valgrind not found: this benchmark counts instructions with callgrind")
        return
    tools = ("ek", "ek_detail", "ek_match", "f1", "acc")
    ek, ekd, ekm, f1, acc = (_measure(tool, n) for tool in tools)
    print(f"{n} episodes per row; thousands of instructions per episode (callgrind)\n")
    print(
        "| cases | ek Score | ek Score, reason read | ek MatchResult value | Ragas ToolCallF1 "
        "| Ragas ToolCallAccuracy | ek Score / fastest Ragas |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, e, d, mv, f, a in zip(("bench mix", *KINDS), ek, ekd, ekm, f1, acc):
        print(
            f"| {label} | {e / 1e3:.1f}k | {d / 1e3:.1f}k | {mv / 1e3:.1f}k | {f / 1e3:.1f}k "
            f"| {a / 1e3:.1f}k | {e / min(f, a):.2f} |"
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--inner":
        _inner(sys.argv[2], int(sys.argv[3]))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
