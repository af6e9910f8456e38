"""The checker that decided a run's success, as the run records it, and whether two runs'
checkers were different judges.

A run's success rate is what its checker said. :func:`checker_identity` describes the checker
(:func:`ek.agents._fingerprint.callable_config`: its name, type, settings and fingerprint; for a
:class:`~ek.agents.judge.JudgeMetric` the judge callable and what it closes over, the criteria,
scale and threshold) and adds ``judge``: whether it is an LLM judge (:func:`ek.quality.is_judge`:
an ``is_judge = True`` attribute, as ``JudgeMetric`` declares; set it on a plain
``(episode, gold) -> bool`` function that asks a model). A trial store's header records it
(``checker``), :func:`~ek.agents.harness.run_suite`'s result and its
:class:`~ek.agents.harness.RunSummary` carry it, and a baseline saves it; a store or a baseline
written before it was recorded (or another source, such as an Inspect log) gives ``None``:
unknown.

The gate (:func:`~ek.agents.harness.agent_regression_gate`) refuses two runs whose success
different judges decided (:func:`judge_change`; a judge's errors are its own, so the change in
the judged rate mixes the agents' change with the judges'), unless each run has its own labels
(the rates corrected for each judge's errors are compared) or the caller allows it; and it
warns when one run does not record its checker while the other was judged
(:func:`unrecorded_judge`).

Example:
    >>> from ek.agents.judge import JudgeMetric
    >>> def lenient(output, criteria, gold):
    ...     return 1.0
    >>> a = checker_identity(JudgeMetric(lenient, "did it finish?", threshold=0.5))
    >>> b = checker_identity(JudgeMetric(lenient, "was it right?", threshold=0.5))
    >>> a["judge"], checker_identity("output")["judge"]
    (True, False)
    >>> judge_change(a, a) is None, judge_change(a, checker_identity(None)) is None
    (True, False)
    >>> print(judge_change(a, b))  # doctest: +ELLIPSIS
    baseline judged by 'JudgeMetric' (..., fingerprint ...), current judged by 'JudgeMetric' (...): settings.settings.criteria: 'did it finish?' -> 'was it right?'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ek.quality import is_judge

from ._fingerprint import callable_config, config_diff, same_config
from .metrics import check_name, resolve_checker

__all__ = ["checker_identity", "checker_label", "judge_change", "unrecorded_judge"]


def checker_identity(check: Any) -> dict[str, Any]:
    """The identity of a run's checker: a registered checker's name (``None`` is ``"output"``)
    or an ``(episode, gold)`` callable, described as :func:`~ek.agents._fingerprint.callable_config`
    does, with ``judge`` (is it an LLM judge).

    Example:
        >>> c = checker_identity("final_state")
        >>> c["name"], c["judge"], len(c["fingerprint"])
        ('final_state', False, 64)
    """
    name = "output" if check is None else check
    fn = resolve_checker(name) if isinstance(name, str) else name
    out = callable_config(fn, check_name(name))
    out["judge"] = is_judge(fn)
    return out


def _is_judge(config: Mapping[str, Any]) -> bool:
    return config.get("judge") is True


def _callable_in(description: Any, depth: int = 0) -> str | None:
    """The first function a description names (a judge's model call, a partial's function)."""
    if isinstance(description, Mapping):
        if isinstance(description.get("callable"), str):
            return str(description["callable"])
        values: Any = description.values()
    elif isinstance(description, list):
        values = description
    else:
        return None
    found = (_callable_in(v, depth + 1) for v in values) if depth < 6 else iter(())
    return next((f for f in found if f is not None), None)


def checker_label(config: Mapping[str, Any]) -> str:
    """A recorded checker in a message: its name, its type or function (and the function an
    object calls: a judge's model call), and the start of its fingerprint.

    Example:
        >>> checker_label(checker_identity("output"))  # doctest: +ELLIPSIS
        "checked by 'output' (ek.agents.metrics.output_match, fingerprint ...)"
        >>> from ek.agents.judge import JudgeMetric
        >>> def ask_model(output, criteria, gold):
        ...     return 1.0
        >>> checker_label(checker_identity(JudgeMetric(ask_model, "done?")))  # doctest: +ELLIPSIS
        "judged by 'JudgeMetric' (ek.agents.judge.JudgeMetric calling ....ask_model, fingerprint ...)"
    """
    verb = "judged by" if _is_judge(config) else "checked by"
    settings = config.get("settings")
    settings = settings if isinstance(settings, Mapping) else {}
    what = str(settings.get("type") or config.get("type"))  # an object by its class
    calls = _callable_in(settings)
    if isinstance(settings.get("callable"), str):  # a function by its name
        what = settings["callable"]
    elif calls is not None:
        what = f"{what} calling {calls}"
    fingerprint = str(config.get("fingerprint") or "none recorded")[:12]
    return f"{verb} {str(config.get('name'))!r:.100} ({what:.200}, fingerprint {fingerprint})"


def judge_change(
    baseline: Mapping[str, Any] | None, current: Mapping[str, Any] | None
) -> str | None:
    """How two runs' checkers differ, when both are recorded, they differ, and either is a judge
    (``None`` otherwise: the same checker, an unrecorded one, or two plain checkers)."""
    if baseline is None or current is None or same_config(baseline, current):
        return None
    if not (_is_judge(baseline) or _is_judge(current)):
        return None
    diff = "; ".join(config_diff(baseline, current, limit=3)) or "another configuration"
    return f"baseline {checker_label(baseline)}, current {checker_label(current)}: {diff}"


def unrecorded_judge(
    baseline: Mapping[str, Any] | None, current: Mapping[str, Any] | None
) -> str | None:
    """A warning when one run does not record its checker while the other was judged (a run
    saved or stored before ek recorded it, or read from another source); ``None`` otherwise."""
    known, missing = (current, "baseline") if baseline is None else (baseline, "current run")
    if (baseline is None) == (current is None) or known is None or not _is_judge(known):
        return None
    other = "current run" if missing == "baseline" else "baseline"
    return (
        f"the {missing} does not record which checker decided its success (written before "
        f"ek recorded it, or read from another source); the {other} was {checker_label(known)}: "
        "if another judge decided the other run, the change in the rate mixes the agents' "
        "change with the judges' errors (label a sample of each run's trials to compare the "
        "corrected rates)"
    )
