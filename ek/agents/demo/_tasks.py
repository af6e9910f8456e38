"""The demo suite: 30 retail tasks with gold final states and gold tool calls.

The tasks live in ``tasks.json`` beside this module. Each has a request text (``input``), the
structured intent the scripted agents read (``metadata["intent"]``), its gold tool calls, and
its gold final state, written as changes to the initial database (``gold_changes``) and
expanded here into the full database that :func:`~ek.agents.metrics.final_state_match`
compares (``TaskSpec.gold``). Success is a database comparison, never text.

Slices: ``TaskSpec.slice`` is ``"refund"`` (refunds and cancellations: destructive) or
``"lookup"`` (find the right order, change its address); ``TaskSpec.tags`` is ``("easy",)`` (the
order id is given) or ``("hard",)`` (the customer gives an e-mail; the agent must find the right
order among theirs).

Example:
    >>> tasks = load_tasks()
    >>> len(tasks), sorted({t.slice for t in tasks}), tasks[0].slices
    (30, ['lookup', 'refund'], ('refund', 'easy'))
    >>> tasks[0].gold["orders"]["O1002"]["status"], tasks[0].gold_calls.tools
    ('refunded', ('get_order', 'refund_order'))
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

from ek.agents._episode import Trajectory
from ek.agents._spec import TaskSpec

from ._world import TOOLS, Db, initial_db

__all__ = ["SUITE_NAME", "SUITE_VERSION", "apply_changes", "load_tasks", "suite_info"]

SUITE_NAME = "ek-demo-retail"
SUITE_VERSION = "ek-demo-retail/1"


def suite_info() -> dict[str, Any]:
    """The raw ``tasks.json`` document (suite name, version, description, task records).

    Example:
        >>> suite_info()["suite"]
        'ek-demo-retail'
    """
    text = resources.files("ek.agents.demo").joinpath("tasks.json").read_text("utf-8")
    doc = json.loads(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), list):
        raise ValueError(f"tasks.json: expected an object with a 'tasks' list, got {doc!r:.200}")
    return doc


def apply_changes(db: Db, changes: Iterable[Mapping[str, Any]]) -> Db:
    """A copy of ``db`` with each ``{"path": [...], "value": v}`` change set (``db`` untouched).

    Example:
        >>> apply_changes({"a": {"b": 1}}, [{"path": ["a", "b"], "value": 2}])
        {'a': {'b': 2}}
    """
    new = copy.deepcopy(db)
    for ch in changes:
        path = ch.get("path")
        if not isinstance(path, list) or not path:
            raise ValueError(f"a gold change needs a non-empty 'path' list, got {ch!r:.200}")
        node = new
        for key in path[:-1]:
            if not isinstance(node, dict) or key not in node:
                raise ValueError(f"gold change path {path} does not exist in the database")
            node = node[key]
        node[path[-1]] = copy.deepcopy(ch["value"])
    return new


def load_tasks(slice: str | None = None) -> list[TaskSpec]:
    """The suite's tasks (all of them, or those whose slice or a tag equals ``slice``).

    Args:
        slice: ``"refund"``, ``"lookup"``, ``"easy"``, ``"hard"`` or ``None`` (all 30).

    Example:
        >>> len(load_tasks("refund")), len(load_tasks("hard"))
        (16, 14)
    """
    base = initial_db()
    out = []
    for rec in suite_info()["tasks"]:
        t = TaskSpec(
            task_id=rec["task_id"],
            input=rec["input"],
            gold=apply_changes(base, rec["gold_changes"]),
            tools=TOOLS,
            gold_calls=Trajectory(rec["gold_calls"]),
            slice=rec["slice"],
            tags=tuple(rec["tags"]),
            metadata={"intent": rec["intent"], "gold_changes": rec["gold_changes"]},
        )
        if slice is None or slice in t.slices:
            out.append(t)
    if not out:
        raise ValueError(
            f"no demo task in slice {slice!r}; slices are 'refund', 'lookup', 'easy', 'hard'"
        )
    return out
