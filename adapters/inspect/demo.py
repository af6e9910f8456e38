"""The demo suite as an Inspect AI task: mockllm plays the baseline agent, ek scorers grade it.

Part of the Inspect adapter (``pip install ek-agents[inspect]``), so that the core package never
imports ``inspect_ai``: ``ek-agents demo`` (:func:`ek.agents.demo.run_demo`) imports this module
only when ``inspect-ai`` is installed and otherwise skips its Inspect part. Each Inspect
sample is one demo task (:func:`ek.adapters.inspect.to_inspect_sample`); the shop's database
lives in the sample's store and the seven tools are Inspect ``@tool`` s over it (a refused call
raises ``ToolError``, which Inspect records as the tool message's error). The model is
``mockllm/demo-large`` with a **stateless** ``custom_outputs`` callable (safe under concurrent
samples): a system message names the task and the trial, and the callable replays the baseline
agent's planned call for the step the conversation has reached, with that call's token usage
(explicit usage: mockllm would otherwise download a tokenizer). Epoch ``e`` replays trial
``e - 1`` with the harness's per-trial seed, so the Inspect log reproduces the own-harness
baseline run trial for trial.

Scoring is :func:`ek.adapters.inspect.ek_scorer` with the replaying state checker, the
tool-call and trajectory metrics and the demo's illustrative prices; epochs are reduced with
ek's pass^k reducer. :func:`run_inspect_demo` runs it, reads the log back through
:func:`ek.agents.harness.load_run` and reports.
"""

from __future__ import annotations

import functools
import json
import os
import re
import warnings
from collections.abc import Mapping
from typing import Any

from inspect_ai import Epochs, Task, eval
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageTool,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.scorer import mean_score
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver, use_tools
from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import store

from ek._validate import short_repr
from ek.agents.base import Cost, RunProvenance
from ek.agents.demo import (
    DEMO_PRICES,
    ScriptedAgent,
    baseline_agent,
    call_tool,
    initial_db,
    load_tasks,
)
from ek.agents.demo._world import CHECKER_NAME, Db
from ek.agents.harness import TrialContext

from . import ek_scorer, pass_hat, to_inspect_sample

__all__ = ["CHECKER_NAME", "demo_inspect_task", "run_inspect_demo"]


_TABLES = ("customers", "orders", "stock")
_MARK = re.compile(r"\[ek-demo task=(\S+) trial=(\d+) seed=(\d+)\]")
_Ret = str


def _db() -> Db:
    return {k: store().get(k) for k in _TABLES}


def _run_tool(name: str, args: Mapping[str, Any]) -> str:
    old = _db()
    db, step = call_tool(old, name, args)
    if step.error is not None:
        raise ToolError(step.error)
    for k in _TABLES:
        if db[k] is not old[k]:  # tools share unchanged tables: write back only what changed
            store().set(k, db[k])
    return json.dumps(step.observation)


@tool
def find_customer() -> Tool:
    async def execute(email: str) -> _Ret:
        """Find a customer by e-mail address (read-only).

        Args:
            email: The customer's e-mail address.
        """
        return _run_tool("find_customer", {"email": email})

    return execute


@tool
def get_customer() -> Tool:
    async def execute(customer_id: str) -> _Ret:
        """A customer's profile and order ids (read-only).

        Args:
            customer_id: A customer id such as 'C01'.
        """
        return _run_tool("get_customer", {"customer_id": customer_id})

    return execute


@tool
def get_order() -> Tool:
    async def execute(order_id: str) -> _Ret:
        """An order: status, date, items, total, refunds (read-only).

        Args:
            order_id: An order id such as 'O1002'.
        """
        return _run_tool("get_order", {"order_id": order_id})

    return execute


@tool
def check_stock() -> Tool:
    async def execute(sku: str) -> _Ret:
        """Stock level and unit price of a product (read-only).

        Args:
            sku: A product code such as 'MUG-01'.
        """
        return _run_tool("check_stock", {"sku": sku})

    return execute


@tool
def update_address() -> Tool:
    async def execute(order_id: str, address: str) -> _Ret:
        """Change the shipping address of a pending order.

        Args:
            order_id: The pending order.
            address: The new shipping address.
        """
        return _run_tool("update_address", {"order_id": order_id, "address": address})

    return execute


@tool
def cancel_order() -> Tool:
    async def execute(order_id: str, reason: str) -> _Ret:
        """Cancel a pending order and put its items back in stock (destructive).

        Args:
            order_id: The pending order to cancel.
            reason: Why: no_longer_needed or ordered_by_mistake.
        """
        return _run_tool("cancel_order", {"order_id": order_id, "reason": reason})

    return execute


@tool
def refund_order() -> Tool:
    async def execute(order_id: str, amount: float, reason: str) -> _Ret:
        """Refund money on a delivered order (destructive; at most what is left to refund).

        Args:
            order_id: The delivered order.
            amount: Dollars to refund.
            reason: Why: damaged, not_as_described or changed_mind.
        """
        return _run_tool("refund_order", {"order_id": order_id, "amount": amount, "reason": reason})

    return execute


def _tools() -> list[Tool]:
    return [
        find_customer(),
        get_customer(),
        get_order(),
        check_stock(),
        update_address(),
        cancel_order(),
        refund_order(),
    ]


@solver
def shop_setup(seed: int = 0) -> Solver:
    """Put a fresh database in the sample's store and tell the mock model which trial this is."""
    from ek.agents.harness import trial_seed

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for k, v in initial_db().items():
            store().set(k, v)
        trial = state.epoch - 1
        tid = str(state.sample_id)
        mark = f"[ek-demo task={tid} trial={trial} seed={trial_seed(seed, tid, trial)}]"
        state.messages.insert(
            0, ChatMessageSystem(content=f"You are a retail support agent. {mark}")
        )
        return state

    return solve


def _usage(c: Cost) -> ModelUsage:
    return ModelUsage(
        input_tokens=c.input_tokens,
        output_tokens=c.output_tokens,
        total_tokens=c.total_tokens,
        input_tokens_cache_read=c.cache_read_tokens,
        reasoning_tokens=c.reasoning_tokens,
    )


def _scripted_model(agent: ScriptedAgent, model_name: str) -> Any:
    """A stateless mockllm ``custom_outputs`` callable replaying ``agent``'s planned calls."""

    tasks = {t.task_id: t for t in load_tasks()}

    @functools.lru_cache(maxsize=4096)
    def plan(task_id: str, trial: int, seed: int) -> tuple[Any, tuple[Cost, ...]]:
        ctx = TrialContext(task_id, trial, seed, RunProvenance(seed=seed), k=trial + 1)
        return agent.plan(tasks[task_id], ctx)

    def outputs(input: list[Any], tools: Any, tool_choice: Any, config: GenerateConfig) -> Any:
        mark = next(
            (
                m
                for msg in input
                if isinstance(msg, ChatMessageSystem) and (m := _MARK.search(msg.text))
            ),
            None,
        )
        if mark is None:
            raise ValueError("the demo's mock model needs the ek-demo system message mark")
        ep, calls = plan(mark.group(1), int(mark.group(2)), int(mark.group(3)))
        i = sum(isinstance(m, ChatMessageTool) for m in input)
        if i < len(ep.trajectory):
            step = ep.trajectory[i]
            out = ModelOutput.for_tool_call(
                model_name, step.tool, dict(step.args), tool_call_id=f"call_{i}", content=""
            )
        else:
            out = ModelOutput.from_content(model_name, str(ep.output))
        out.usage = _usage(calls[min(i, len(calls) - 1)])
        return out

    return outputs


def demo_inspect_task(k: int = 5, seed: int = 0, agent: ScriptedAgent | None = None) -> Task:
    """The demo suite as an Inspect ``Task`` (k epochs, ek scorer, ek pass^k reducer).

    Args:
        k: Epochs (epoch ``e`` replays the baseline's trial ``e - 1``).
        seed: The run seed (the same as the own-harness run's, so the trials coincide).
        agent: The scripted agent the mock model replays (default: the baseline agent).

    Example:
        >>> task = demo_inspect_task(k=2)
        >>> len(task.dataset), task.epochs
        (30, 2)
    """
    agent = baseline_agent() if agent is None else agent
    samples = [to_inspect_sample(t) for t in load_tasks()]
    prices = {m: p.to_dict() for m, p in DEMO_PRICES.items()}
    return Task(
        dataset=MemoryDataset(samples, name="ek-demo-retail"),
        solver=[shop_setup(seed), use_tools(_tools()), generate()],
        scorer=ek_scorer("tool_calls", "trajectory", check=CHECKER_NAME, prices=prices),
        epochs=Epochs(k, [mean_score(), pass_hat(k)]),
        name="ek_demo_retail",
    )


def run_inspect_demo(
    log_dir: str,
    *,
    k: int = 5,
    seed: int = 0,
    reference: Any = None,
    agent: ScriptedAgent | None = None,
) -> dict[str, Any]:
    """Run :func:`demo_inspect_task` offline into ``log_dir`` and report on its log.

    Args:
        log_dir: Where Inspect writes its log.
        k: Epochs.
        seed: The run seed (the same as the own-harness run's, so the trials coincide).
        reference: The own-harness ``SuiteResult`` of the same agent to compare the log with.
        agent: The scripted agent the mock model replays (default: the baseline agent).

    Returns:
        ``{"log": path, "success": rate, "pass_hat_k": value, "report": text, ...}``.
    """
    from ek.agents.harness import load_run

    agent = baseline_agent() if agent is None else agent
    os.makedirs(log_dir, exist_ok=True)
    log = _eval_log(log_dir, k=k, seed=seed, agent=agent)
    path = log.location
    summary = load_run(path)
    scores = list(log.results.scores if log.results else [])
    lines = [
        f"== Inspect AI: the same suite as an Inspect task (mockllm/{agent.tokens.model} replays "
        f"the {agent.name}; {k} epochs; ek scorers)",
        f"   log {path}",
    ]
    for s in scores:
        if not s.metrics:
            continue
        vals = " · ".join(f"{n.removeprefix('ek/')} {m.value:.4g}" for n, m in s.metrics.items())
        lines.append(f"   {s.name:<14} {'[' + (s.reducer or 'mean') + ']':<16} {vals}")
    n, c = summary.n_trials, summary.n_successes
    lines.append(
        f"   read back with load_run: {summary.n_tasks} tasks, {c}/{n} successful epochs "
        f"({c / n:.3f})" + (f", cost ${summary.cost['agent_dollars']:.3f}" if summary.cost else "")
    )
    agree = None
    if reference is not None:
        agree = _first_trials_counts(reference, k) == dict(summary.counts)
        lines.append(
            f"   agrees with the own-harness {agent.name}'s first {k} trials, task by task: "
            + ("yes" if agree else "NO (the Inspect replay and run_suite differ)")
        )
    return {
        "log": path,
        "n_trials": n,
        "successes": c,
        "success": c / n if n else float("nan"),
        "agrees_with_harness": agree,
        "scores": [
            {"name": s.name, "reducer": s.reducer, **{m: v.value for m, v in s.metrics.items()}}
            for s in scores
        ],
        "report": "\n".join(lines),
    }


def _eval_log(log_dir: str, *, k: int, seed: int, agent: ScriptedAgent) -> Any:
    """Run the demo task through Inspect's ``eval`` with the mock model replaying ``agent``;
    the log of a successful run (a run that ended otherwise raises ``RuntimeError``)."""
    model_name = f"mockllm/{agent.tokens.model}"
    # INSPECT_TELEMETRY names a hook *function* ("module.function"); Inspect sends no telemetry
    # without it. A value such as "false" is not a hook and makes every model call fail, so
    # such a value is set aside while the demo runs.
    hook = os.environ.get("INSPECT_TELEMETRY")
    if hook is not None and "." not in hook:
        del os.environ["INSPECT_TELEMETRY"]
    try:
        model = get_model(model_name, custom_outputs=_scripted_model(agent, model_name))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (log,) = eval(
                demo_inspect_task(k, seed, agent),
                model=model,
                log_dir=log_dir,
                display="none",
                max_samples=8,
            )
    finally:
        if hook is not None:
            os.environ["INSPECT_TELEMETRY"] = hook
    if log.status != "success":
        why = log.error.message if log.error is not None else "no error recorded"
        raise RuntimeError(
            f"the demo's Inspect run ended with status {short_repr(log.status)}: {why}"
        )
    return log


def _first_trials_counts(reference: Any, k: int) -> dict[str, tuple[int, int]]:
    """``{task_id: (trials, successes)}`` over the reference run's first ``k`` trials (epoch
    ``e`` replays trial ``e - 1``)."""
    ref: dict[str, list[int]] = {}
    for ep, ok in zip(reference.episodes, reference.verdicts):
        if ep.trial < k:
            nc = ref.setdefault(ep.task_id, [0, 0])
            nc[0] += 1
            nc[1] += int(ok)
    return {t: (v[0], v[1]) for t, v in ref.items()}
