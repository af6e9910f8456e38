"""tau-bench conversations read as ek episodes, so their failures can be attributed and scored
without re-running them.

tau-bench writes a run's results as one JSON list: per trial ``{"task_id", "trial", "reward",
"info", "traj"}``, ``traj`` the chat messages (OpenAI shape: ``system``, ``user`` (the
simulated user), ``assistant`` with ``tool_calls``, ``tool`` results), ``info`` the task
(``instruction``, gold ``actions``) and, when recorded, the simulator's dollars
(``user_cost``). :func:`read_taubench` turns each into an :class:`~ek.agents.base.Episode`
recording the conversation as :func:`~ek.agents.simulate.converse` does (``metadata
["messages"]``), the tool calls (paired with their results) as the trajectory, the verdict
(``reward`` of 1, tau-bench's own success) and the simulator's cost under the ``simulator``
role. :func:`scenario_from_taubench` builds a :class:`~ek.agents.simulate.Scenario` from a
task's instruction (the ids, emails and zip codes it gives the user, with
:data:`RETAIL_PATTERNS`), for :func:`~ek.agents.simulate.attribute`.

Example:
    >>> rows = [{"task_id": 3, "trial": 0, "reward": 0.0,
    ...          "info": {"task": {"instruction": "Your order is #W1234567."}, "user_cost": 0.002},
    ...          "traj": [{"role": "system", "content": "policy"},
    ...                   {"role": "user", "content": "Cancel #W7654321 please"},
    ...                   {"role": "assistant", "content": "Done."},
    ...                   {"role": "user", "content": "###STOP###"}]}]
    >>> ep, = read_taubench(rows)
    >>> ep.task_id, ep.success, [c.role for c in ep.cost]
    ('3', False, ['simulator'])
    >>> sc = scenario_from_taubench(rows[0]["info"]["task"])
    >>> sc.facts
    {'order_id': '#W1234567'}
    >>> [f.kind for f in check_simulator(conversation_of(ep), sc)]
    ['contradicted']
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ek._validate import short_repr
from ek.agents.base import Cost, Episode
from ek.agents.bridge import trajectory_from_messages

from ._attribution import check_simulator, conversation_of  # noqa: F401 (the doctest's names)
from ._scenario import STOP, Scenario

__all__ = ["RETAIL_PATTERNS", "read_taubench", "scenario_from_taubench"]

#: What a value of each kind of fact looks like in tau-bench's retail and airline tasks.
RETAIL_PATTERNS = {
    "order_id": r"#W\d{7}",
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    "zip": r"(?<!\d)\d{5}(?!\d)",
}

#: tau-bench's success: a reward within this distance of 1.
_REWARD_TOLERANCE = 1e-6


def _rows(source: Any) -> list[Any]:
    if isinstance(source, (str, os.PathLike)):
        with open(source, encoding="utf-8") as fh:
            try:
                source = json.load(fh)
            except json.JSONDecodeError as e:
                raise ValueError(
                    f"{os.fspath(source)}: not a tau-bench results file (not JSON: {e})"
                ) from None
    if isinstance(source, (str, bytes)) or not isinstance(source, Sequence):
        raise TypeError(
            f"read_taubench expects a results path or a list of results, got {short_repr(source)}"
        )
    return list(source)


def _message(m: Any, i: int, where: str) -> Mapping[str, Any]:
    if not isinstance(m, Mapping):
        raise ValueError(f"{where}: traj[{i}] must be a message mapping, got {short_repr(m)}")
    return m


def _conversation(traj: Sequence[Any], where: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, raw in enumerate(traj):
        m = _message(raw, i, where)
        role, text = m.get("role"), m.get("content")
        msg: dict[str, Any] = {"role": role, "content": text if isinstance(text, str) else ""}
        if role == "user" and STOP in msg["content"]:
            msg["stop"] = True
        elif role == "assistant" and m.get("tool_calls"):
            msg["tool_calls"] = m["tool_calls"]
        if role in ("user", "assistant"):
            out.append(msg)
    return out


def _number(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _verdict(row: Mapping[str, Any]) -> bool:
    reward = _number(row.get("reward"))
    return reward is not None and abs(reward - 1.0) <= _REWARD_TOLERANCE


def _costs(info: Mapping[str, Any]) -> tuple[Cost, ...]:
    spent = _number(info.get("user_cost"))
    return (Cost(role="simulator", dollars=spent),) if spent is not None and spent >= 0 else ()


def _episode(row: Any, where: str) -> Episode:
    if not isinstance(row, Mapping) or "task_id" not in row or "traj" not in row:
        raise ValueError(
            f"{where}: a tau-bench result needs 'task_id' and 'traj', got {short_repr(row)}"
        )
    traj = row["traj"]
    if not isinstance(traj, list):
        raise ValueError(f"{where}: 'traj' must be a list of messages, got {short_repr(traj)}")
    info = row.get("info")
    info = info if isinstance(info, Mapping) else {}
    conversation = _conversation(traj, where)
    last = next((m["content"] for m in reversed(conversation) if m["role"] == "assistant"), None)
    err = info.get("error")
    trial = row.get("trial", 0)
    return Episode(
        str(row["task_id"]),
        trajectory=trajectory_from_messages([_message(m, i, where) for i, m in enumerate(traj)]),
        output=last,
        cost=_costs(info),
        success=_verdict(row),
        trial=trial if isinstance(trial, int) and not isinstance(trial, bool) else 0,
        error=f"environment: {err}" if isinstance(err, str) else None,
        metadata={
            "messages": conversation,
            "conversation": {"ended": "imported", "source": "tau-bench"},
        },
    )


def read_taubench(source: Any) -> list[Episode]:
    """The episodes of a tau-bench results file (a path, or its parsed list).

    Raises:
        ValueError: a file that is not JSON, or a result without ``task_id`` / ``traj`` (its
            index named).
        TypeError: ``source`` neither a path nor a list.
    """
    rows = _rows(source)
    return [_episode(row, f"result {i}") for i, row in enumerate(rows)]


def _found(instruction: str, patterns: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    for kind, pattern in patterns.items():
        seen: list[str] = []
        for m in re.finditer(pattern, instruction):
            if m.group(0) not in seen:
                seen.append(m.group(0))
        for n, value in enumerate(seen):
            yield (kind if n == 0 else f"{kind}_{n + 1}"), value


def scenario_from_taubench(
    task: Mapping[str, Any], patterns: Mapping[str, str] | None = None
) -> Scenario:
    """A :class:`~ek.agents.simulate.Scenario` from a tau-bench task (``info["task"]``): its
    ``instruction`` as the instructions, and every value of a kind in ``patterns`` (default
    :data:`RETAIL_PATTERNS`) it gives the user as a fact (the second order id of a task is
    ``order_id_2``, ...). No goal items: tau-bench does not list them (give them yourself to
    check ``stopped_early``).

    Raises:
        ValueError: a task without an ``instruction`` text.
    """
    instruction = task.get("instruction") if isinstance(task, Mapping) else None
    if not isinstance(instruction, str):
        raise ValueError(f"a tau-bench task needs an 'instruction' text, got {short_repr(task)}")
    pats = dict(RETAIL_PATTERNS if patterns is None else patterns)
    return Scenario(instructions=instruction, facts=dict(_found(instruction, pats)), patterns=pats)
