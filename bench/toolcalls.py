"""Tool-call scoring speed and correctness: ek's ToolCallMetric vs Ragas and DeepEval, one process.

Scores the same 10,000 generated episodes (duplicates, reorderings, wrong arguments, extra and
missing calls, value-equal duplicate gold calls) with

* ek ``ToolCallMetric()`` (its one path: the full Score with reason and breakdown), with the
  gold as a list of calls and as a ``TaskSpec`` (the gold is prepared on every call either way),
  and the same path's :class:`~ek.agents.toolcalls.MatchResult` (``metric.match(pred, gold)``,
  what the Score is built from) with only its value read,
* Ragas 0.4.3 ``ToolCallF1`` and ``ToolCallAccuracy`` (collections API; ``ascore`` driven
  directly: the coroutine awaits nothing, so ``send(None)`` returns its result without an event
  loop; the public sync ``score()`` is timed on a subset as well),
* DeepEval 4.3.1 ``ToolCorrectnessMetric`` (``evaluation_params=[INPUT_PARAMETERS]``,
  ``async_mode=False``, a stub model that is never called; ``measure()`` called directly),

each outside its framework's ``evaluate()`` loop, with every tool's inputs built beforehand
(only scoring is timed). It prints microseconds per episode, the ratio to ek, and how many cases
each tool scores wrongly by ek's semantics: every case has a label from its construction
(reordering only -> a perfect prediction; anything else -> not perfect), and a tool is wrong on
a case when it says "perfect" (score 1.0) for a broken prediction, anything else for a perfect
one, or a score outside [0, 1]. Last, the two speed ceilings of issue 31: ek's Score at most 3x
Ragas ``ToolCallF1`` and at least 5x faster than DeepEval's ``ToolCorrectnessMetric``.

Run: ``.venv/bin/python bench/toolcalls.py [n_episodes]``.
"""

from __future__ import annotations

import os

for _k, _v in {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
    "DEEPEVAL_FILE_SYSTEM": "READ_ONLY",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "RAGAS_DO_NOT_TRACK": "true",
}.items():
    os.environ[_k] = _v

import random
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

from ek.agents.base import Step, TaskSpec
from ek.agents.toolcalls import ToolCallMetric

warnings.filterwarnings("ignore")

TOOLS = {
    "search": ("q", "limit", "lang"),
    "lookup_order": ("order_id", "fields"),
    "refund": ("order_id", "amount", "reason"),
    "send_email": ("to", "subject", "body"),
    "weather": ("city", "unit"),
}
KINDS = (
    "identical",
    "reordered",
    "duplicate_gold",
    "wrong_arg",
    "reordered_wrong_arg",
    "extra_call",
    "repeated_call",
    "missing_call",
    "extra_arg",
)
PERFECT = {"identical", "reordered", "duplicate_gold"}


def _value(rnd: random.Random, arg: str) -> Any:
    if arg in ("limit", "amount"):
        return rnd.randint(1, 500)
    if arg == "fields":
        return rnd.sample(["status", "total", "items", "address"], 2)
    return f"{arg}-{rnd.randint(0, 60)}"


def _call(rnd: random.Random) -> Step:
    tool = rnd.choice(list(TOOLS))
    names = TOOLS[tool]
    k = rnd.randint(1, len(names))
    return Step(tool, {a: _value(rnd, a) for a in names[:k]})


def make_cases(n: int, seed: int = 0) -> list[tuple[str, list[Step], list[Step]]]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        gold = [_call(rnd) for _ in range(rnd.randint(2, 5))]
        if kind == "duplicate_gold":
            gold.append(gold[0])
        pred = list(gold)
        if kind in ("reordered", "reordered_wrong_arg", "duplicate_gold"):
            while len(pred) > 1 and pred == gold:
                rnd.shuffle(pred)
        if kind in ("wrong_arg", "reordered_wrong_arg"):
            j = rnd.randrange(len(pred))
            a = rnd.choice(list(pred[j].args))
            v = pred[j].args[a]
            new = v + 1 if isinstance(v, int) else ([*v, "x"] if isinstance(v, list) else v + "-x")
            pred[j] = Step(pred[j].tool, {**pred[j].args, a: new})
        elif kind == "extra_call":
            pred.insert(rnd.randrange(len(pred) + 1), _call(rnd))
        elif kind == "repeated_call":
            j = rnd.randrange(len(pred))
            pred.insert(j, pred[j])
        elif kind == "missing_call":
            pred.pop(rnd.randrange(len(pred)))
        elif kind == "extra_arg":
            j = rnd.randrange(len(pred))
            pred[j] = Step(pred[j].tool, {**pred[j].args, "debug": True})
        out.append((kind, pred, gold))
    return out


def _timed(fn: Callable[[], list[float]], repeat: int = 3) -> tuple[float, list[float]]:
    best = float("inf")
    vals: list[float] = []
    for _ in range(repeat):
        t = time.process_time()
        vals = fn()
        best = min(best, time.process_time() - t)
    return best, vals


def _interleaved(
    runs: list[tuple[str, Callable[[], list[float]]]], rounds: int = 3
) -> list[tuple[str, float, list[float]]]:
    """CPU time of each run, best of ``rounds``, measured round-robin (so load drift on a shared
    machine hits every tool alike)."""
    best = {name: float("inf") for name, _ in runs}
    vals: dict[str, list[float]] = {}
    for _ in range(rounds):
        for name, fn in runs:
            t = time.process_time()
            vals[name] = fn()
            best[name] = min(best[name], time.process_time() - t)
    return [(name, best[name], vals[name]) for name, _ in runs]


def _read_all(score: Any) -> float:
    d = score.detail
    d["reason"]
    return float(score.value)


def _drive(coro: Any) -> Any:
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("coroutine awaited something; cannot drive it synchronously")


def ragas_inputs(cases: list[tuple[str, list[Step], list[Step]]]) -> list[tuple[Any, Any]]:
    """Each case as Ragas' ``(user_input, reference_tool_calls)``: the predicted calls in one
    AIMessage after a HumanMessage, the gold calls as ToolCalls."""
    from ragas.messages import AIMessage, HumanMessage
    from ragas.messages import ToolCall as RToolCall

    return [
        (
            [
                HumanMessage(content="q"),
                AIMessage(
                    content="", tool_calls=[RToolCall(name=s.tool, args=dict(s.args)) for s in p]
                ),
            ],
            [RToolCall(name=s.tool, args=dict(s.args)) for s in g],
        )
        for _, p, g in cases
    ]


def main(n: int = 10_000) -> None:
    cases = make_cases(n)
    runs: list[tuple[str, Callable[[], list[float]]]] = []

    ek = ToolCallMetric()
    passed_ek = [ek(p, g).passed for _, p, g in cases]
    runs.append(("ek ToolCallMetric (F1 + valid)", lambda: [ek(p, g).value for _, p, g in cases]))
    # A Score is built whole (value, counts, verdict, reason and rows at once): this row reads
    # the written reason too, and costs what the first one does.
    runs.append(
        (
            "ek ToolCallMetric, every detail read (reason and rows)",
            lambda: [_read_all(ek(p, g)) for _, p, g in cases],
        )
    )
    # The gold as a TaskSpec, as run_suite passes it: prepared on every call, as a list is.
    tasks = [TaskSpec(f"t{i}", gold_calls=g) for i, (_, _, g) in enumerate(cases)]
    runs.append(
        (
            "ek ToolCallMetric, gold a TaskSpec",
            lambda: [ek(p, t).value for (_, p, _), t in zip(cases, tasks)],
        )
    )
    # The value alone, on the same path: ek.match() is the MatchResult that ek() turns into
    # its Score; its reason is written only when read.
    runs.append(
        (
            "ek ToolCallMetric.match (MatchResult; value read)",
            lambda: [ek.match(p, g).value for _, p, g in cases],
        )
    )

    from ragas.metrics.collections import ToolCallAccuracy, ToolCallF1

    r_in = ragas_inputs(cases)
    f1 = ToolCallF1()
    acc = ToolCallAccuracy()
    runs.append(
        (
            "Ragas ToolCallF1 (ascore, driven)",
            lambda: [
                float(_drive(f1.ascore(user_input=u, reference_tool_calls=r)).value)
                for u, r in r_in
            ],
        )
    )
    runs.append(
        (
            "Ragas ToolCallAccuracy (ascore, driven)",
            lambda: [
                float(_drive(acc.ascore(user_input=u, reference_tool_calls=r)).value)
                for u, r in r_in
            ],
        )
    )
    sub = r_in[: min(500, n)]
    t_sync, _ = _timed(
        lambda: [float(f1.score(user_input=u, reference_tool_calls=r).value) for u, r in sub], 1
    )

    from deepeval.metrics import ToolCorrectnessMetric
    from deepeval.models import DeepEvalBaseLLM
    from deepeval.test_case import LLMTestCase, ToolCall, ToolCallParams

    class NoLLM(DeepEvalBaseLLM):
        def __init__(self) -> None:
            super().__init__(model="none")

        def load_model(self, *a: Any, **k: Any) -> Any:
            return None

        def generate(self, *a: Any, **k: Any) -> str:
            raise RuntimeError("the deterministic path must not call a model")

        async def a_generate(self, *a: Any, **k: Any) -> str:
            raise RuntimeError("the deterministic path must not call a model")

        def get_model_name(self, *a: Any, **k: Any) -> str:
            return "none"

    d_in = [
        LLMTestCase(
            input="q",
            actual_output="",
            tools_called=[ToolCall(name=s.tool, input_parameters=dict(s.args)) for s in p],
            expected_tools=[ToolCall(name=s.tool, input_parameters=dict(s.args)) for s in g],
        )
        for _, p, g in cases
    ]
    tc = ToolCorrectnessMetric(
        model=NoLLM(),
        evaluation_params=[ToolCallParams.INPUT_PARAMETERS],
        async_mode=False,
        verbose_mode=False,
    )

    def deepeval_run() -> list[float]:
        out = []
        for c in d_in:
            tc.measure(c, _show_indicator=False)
            out.append(float(tc.score))
        return out

    runs.append(("DeepEval ToolCorrectness (INPUT_PARAMETERS)", deepeval_run))
    rows = _interleaved(runs)
    t_ek = rows[0][1]
    times = {name: t for name, t, _ in rows}

    labels = [k for k, _, _ in cases]
    print(
        f"{n} episodes ({', '.join(KINDS)}; {n // len(KINDS)} of each); "
        "CPU time (process_time), best of 3 interleaved rounds\n"
    )
    print("| tool | us / episode | ratio to ek | cases scored wrongly (by ek semantics) |")
    print("|---|---:|---:|---:|")
    for name, t, vals in rows:
        wrong = Counter(
            k
            for k, x in zip(labels, vals)
            if not (0.0 <= x <= 1.0) or ((x == 1.0) != (k in PERFECT))
        )
        detail = ", ".join(f"{k} {c}" for k, c in sorted(wrong.items())) or "-"
        print(f"| {name} | {t / n * 1e6:.1f} | {t / t_ek:.2f} | {sum(wrong.values())} ({detail}) |")
    bad_valid = sum(p != (k in PERFECT) for k, p in zip(labels, passed_ek))
    print(f"\nek's binary `valid` verdict wrong on {bad_valid} of {n} cases.")
    print(
        f"Ragas ToolCallF1 through its public sync score(): {t_sync / len(sub) * 1e6:.1f} us / "
        f"episode ({len(sub)} episodes; the event-loop round trip dominates), "
        f"{t_sync / len(sub) / (t_ek / n):.1f}x ek."
    )
    f1_ratio = t_ek / times["Ragas ToolCallF1 (ascore, driven)"]
    de_ratio = times["DeepEval ToolCorrectness (INPUT_PARAMETERS)"] / t_ek
    print(
        f"\nCeilings (issue 31): ek's Score / Ragas ToolCallF1 = {f1_ratio:.2f} (at most 3: "
        f"{'met' if f1_ratio <= 3 else 'MISSED'}); DeepEval ToolCorrectness / ek's Score = "
        f"{de_ratio:.1f} (at least 5: {'met' if de_ratio >= 5 else 'MISSED'})."
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
