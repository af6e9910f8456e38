"""The registry holds what its namespaces promise (issue 16 item 10).

Every module of ``ek`` (adapters included) that registers something is imported; then every
registered object in every namespace is *used* the way its namespace promises:

* ``metrics``: a metric instance (``resolve("metrics", name)(episode, gold)`` scores): its
  ``name`` is the registered name, it scores an (Episode, TaskSpec) pair as ``run_suite`` hands
  it one, stamps ``higher_is_better`` and a bool verdict, and aggregates its scores to a float.
* ``checkers``: an ``(episode, gold) -> bool``-like oracle, called as ``run_suite`` calls it
  (with ``task.gold``), also accepted by :class:`~ek.agents.metrics.TaskSuccessMetric`.
* ``checker_factories``: builds a checker from its configuration (a documented example below).
* ``canonicalizers``: a value -> canonical value function, idempotent, accepted by
  :func:`~ek.canon.resolve_canonicalizer` and by the tool-call metric.

A namespace without a contract here fails the test: a new namespace needs one.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import math
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ek.agents.base import Episode, Step
from ek.agents.demo import baseline_agent, load_tasks
from ek.agents.metrics import TaskSuccessMetric
from ek.agents.toolcalls import ToolCallMetric
from ek.base import Score
from ek.canon import resolve_canonicalizer
from ek.registry import namespaces, registered, resolve


def _module_names(pkg: str = "ek", paths: list[str] | None = None) -> Iterator[str]:
    """Every module under ``pkg``, found on disk without importing the modules themselves."""
    if paths is None:
        spec = importlib.util.find_spec(pkg)
        assert spec is not None and spec.submodule_search_locations is not None
        paths = list(spec.submodule_search_locations)
    for info in pkgutil.iter_modules(paths, pkg + "."):
        yield info.name
        if info.ispkg:
            sub = importlib.util.find_spec(info.name)
            if sub is not None and sub.submodule_search_locations is not None:
                yield from _module_names(info.name, list(sub.submodule_search_locations))


def _import_registering_modules() -> list[str]:
    """Import every ek module whose source calls ``register(``; skip absent optional extras."""
    done = []
    for name in sorted(set(_module_names())):
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        if "register(" not in Path(spec.origin).read_text(encoding="utf-8"):
            continue
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:  # an optional host framework is not installed
            if e.name is not None and e.name.split(".")[0] == "ek":
                raise
            continue
        done.append(name)
    return done


IMPORTED = _import_registering_modules()
ENTRIES = [(ns, name) for ns in namespaces() for name in registered(ns)]

_PENDING: dict[tuple[str, str], str] = {}


def _params() -> list[Any]:
    out = []
    for ns, name in ENTRIES:
        marks = []
        if (ns, name) in _PENDING:
            marks.append(pytest.mark.xfail(reason=_PENDING[ns, name], strict=True))
        out.append(pytest.param(ns, name, id=f"{ns}/{name}", marks=marks))
    return out


# ----------------------------------------------------------------------------- material


def _case() -> tuple[Episode, Any]:
    """A real demo trial: an episode with calls, a final state, a cost and a recorded verdict,
    and its TaskSpec (gold final state, gold calls, tools)."""
    task = load_tasks("refund")[0]
    ep = baseline_agent()(task)
    assert isinstance(ep, Episode)
    return ep.replace(success=True), task


def _verdict(v: Any) -> bool:
    if inspect.isawaitable(v):
        v = asyncio.run(_await(v))
    return bool(v)


async def _await(v: Any) -> Any:
    return await v


# ----------------------------------------------------------------------------- the contracts


def _metric_contract(name: str, m: Any) -> None:
    assert not isinstance(m, type), f"metrics/{name} is a class; register an instance"
    assert m.name == name, f"metrics/{name} calls itself {m.name!r}"
    assert isinstance(m.higher_is_better, bool)
    ep, task = _case()
    s = m(ep, task)
    assert isinstance(s, Score), f"metrics/{name} returned {type(s).__name__}"
    assert isinstance(s.value, float)
    assert s.detail["higher_is_better"] is m.higher_is_better
    assert isinstance(s.detail.get("passed", False), bool)
    agg = m.aggregate([s, m(ep.replace(trajectory=[]), task)])
    assert isinstance(agg, float)
    assert isinstance(m.aggregate([]), float)  # NaN for nothing, never a crash


def _checker_contract(name: str, c: Any) -> None:
    assert callable(c) and not isinstance(c, type), f"checkers/{name} is not a checker"
    ep, task = _case()
    inspect.signature(c).bind(ep, task.gold)  # takes (episode, gold)
    _verdict(c(ep, task.gold))  # as run_suite calls it
    s = TaskSuccessMetric(name)(ep, task)  # as a metric calls it (with the TaskSpec)
    assert s.detail["checker"] == name and isinstance(s.detail["passed"], bool)
    failed = ep.replace(error="boom")  # an agent failure is a failure whatever the checker
    assert TaskSuccessMetric(name)(failed, task).value == 0.0


_FACTORY_EXAMPLES: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "hidden_tests": (({"test_a.py": "def test_one():\n    assert True\n"},), {}),
}


def _factory_contract(name: str, f: Any) -> None:
    assert callable(f), f"checker_factories/{name} is not callable"
    assert name in _FACTORY_EXAMPLES, f"add a configuration example for factory {name!r}"
    args, kwargs = _FACTORY_EXAMPLES[name]
    checker = f(*args, **kwargs)
    assert callable(checker)
    ep, task = _case()
    inspect.signature(checker).bind(ep, task.gold)  # the product is a checker


def _canonicalizer_contract(name: str, c: Any) -> None:
    assert callable(c) and resolve_canonicalizer(name) is c
    for v in ("  Caf\u0065\u0301  AU\tLait ", ["A  b", 1], {"k": "V"}, 3, 2.5, None, True):
        once = c(v)
        assert c(once) == once, f"canonicalizers/{name} is not idempotent on {v!r}"
    m = ToolCallMetric(canonicalizer=name)
    assert m([Step("f", {"x": "Paris"})], [Step("f", {"x": "Paris"})]).value == 1.0


def _policy_contract(name: str, fn: Any) -> None:
    # a function of a policy Record returning its violations, usable as a Custom rule
    from ek.agents.policy import Custom, Record, Violation

    assert callable(fn) and not isinstance(fn, type), f"policies/{name} is not a function"
    ep, _ = _case()
    found = Custom(name).check(Record.from_episode(ep))  # as PolicyMetric calls it
    assert all(isinstance(v, Violation) and v.rule == name for v in found)


CONTRACTS = {
    "metrics": _metric_contract,
    "policies": _policy_contract,
    "checkers": _checker_contract,
    "checker_factories": _factory_contract,
    "canonicalizers": _canonicalizer_contract,
}


# ----------------------------------------------------------------------------- the walk


def test_the_walk_sees_the_built_in_registrations() -> None:
    for mod in ("ek.canon", "ek.agents.metrics", "ek.agents.toolcalls", "ek.agents.trajectory"):
        assert mod in IMPORTED
    for ns, name in [
        ("metrics", "task_success"),
        ("metrics", "cost_per_success"),
        ("metrics", "tool_calls"),
        ("metrics", "trajectory"),
        ("checkers", "output"),
        ("checkers", "final_state"),
        ("checkers", "recorded"),
        ("canonicalizers", "default"),
    ]:
        assert (ns, name) in ENTRIES


def test_every_namespace_has_a_contract() -> None:
    assert sorted(set(namespaces()) - set(CONTRACTS)) == []


@pytest.mark.parametrize(("namespace", "name"), _params())
def test_registered_object_keeps_its_namespace_promise(namespace: str, name: str) -> None:
    obj = resolve(namespace, name)
    CONTRACTS[namespace](name, obj)


def test_registered_metrics_score_like_their_class() -> None:
    # A registered default instance gives what a freshly built default metric gives.
    ep, task = _case()
    for name in registered("metrics"):
        m = resolve("metrics", name)
        try:
            fresh = type(m)()
        except TypeError:  # a class that needs configuration: nothing to compare with
            continue
        a, b = m(ep, task).value, fresh(ep, task).value
        assert a == b or (math.isnan(a) and math.isnan(b)), name
