"""The demo's judged variant (``ek-agents demo --judged``): success decided by a judge with
known errors, corrected with a sample of human labels.

The same retail suite and the same two agents, but a judge decides success instead of the state
check: :class:`DemoJudge`, an offline scripted judge with known error rates. It passes a truly
successful trial 90 % of the time (sensitivity 0.90) and fails a truly failed one 85 % of the
time when the reply came from ``demo-large`` but only 40 % of the time when it came from
``demo-small``, whose terse, confident replies it believes (a judge that errs differently on
the two agents' outputs). People then label a simple random sample of each run's trials (in
the demo the state check stands in for them: a label is ``replayed_state_match``).

The judged rates are biased, differently for the two agents, so the gate on them compares the
judge's leniency as much as the agents. :func:`ek.agents.judge.judged_run` corrects each run
with its own labels and :func:`~ek.agents.harness.agent_regression_gate` with ``labels=`` and
``baseline_labels=`` compares the corrected rates, paired by task. The printout gives, per
agent, the true rate (the state check on every trial: known only in a demo), the judged rate,
the corrected rate with its interval, and the gate's decision on each.

Example:
    >>> import io, tempfile
    >>> out = io.StringIO()
    >>> res = run_judged_demo(tempfile.mkdtemp(), k=2, n_labels=40, stream=out)
    >>> res.raw_gate.checks[0].name, res.corrected_gate.checks[0].detail["estimand"]
    ('success_rate', "success rate corrected for the judge's errors")
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

from ek.agents.base import Episode, RunProvenance

from ._agents import baseline_agent, candidate_agent
from ._tasks import SUITE_VERSION, load_tasks
from ._world import replayed_state_match

__all__ = ["DemoJudge", "JudgedDemoResult", "run_judged_demo"]

_Key = tuple[str, int]


@dataclass(frozen=True)
class DemoJudge:
    """An offline scripted judge with known error rates: the truth (the state check) flipped
    at fixed rates, by a draw fixed for each (task, trial, model).

    Attributes:
        sensitivity: P(judge passes | the trial truly succeeded).
        specificity: ``model -> P(judge fails | the trial truly failed)`` for replies of that
            model; ``default_specificity`` for any other.

    Example:
        >>> from ek.agents.demo import baseline_agent, load_tasks
        >>> task = load_tasks("lookup")[0]
        >>> DemoJudge()(baseline_agent()(task), task)
        True
    """

    sensitivity: float = 0.90
    specificity: Mapping[str, float] | None = None
    default_specificity: float = 0.85

    def spec_for(self, model: str | None) -> float:
        """The judge's specificity on replies from ``model``."""
        table = {"demo-large": 0.85, "demo-small": 0.40} if self.specificity is None else self.specificity  # fmt: skip
        return float(table.get(model or "", self.default_specificity))

    def __call__(self, episode: Episode, gold: Any) -> bool:
        truth = replayed_state_match(episode, gold)
        model = episode.cost[0].model if episode.cost else None
        digest = hashlib.sha256(f"judge|{episode.task_id}|{episode.trial}|{model}".encode())
        u = int.from_bytes(digest.digest()[:8], "big") / 2**64  # uniform in [0, 1)
        if truth:
            return u < self.sensitivity
        return u >= self.spec_for(model)


@dataclass(frozen=True)
class JudgedDemoResult:
    """What :func:`run_judged_demo` measured (the runs, labels, corrected rates and gates)."""

    baseline: Any
    candidate: Any
    truth: Mapping[str, float]
    labels: Mapping[str, Mapping[_Key, bool]]
    corrected: Mapping[str, Any]
    raw_gate: Any
    corrected_gate: Any


def _labels(run: Any, tasks: Mapping[str, Any], n: int, seed: int) -> dict[_Key, bool]:
    """People's labels on ``n`` random trials of ``run`` (here: the state check's verdict)."""
    episodes = {(ep.task_id, ep.trial): ep for ep in run.episodes}
    keys = random.Random(seed).sample(sorted(episodes), min(n, len(episodes)))
    return {key: replayed_state_match(episodes[key], tasks[key[0]]) for key in keys}


def _truth(run: Any, tasks: Mapping[str, Any]) -> float:
    hits = [replayed_state_match(ep, tasks[ep.task_id]) for ep in run.episodes]
    return sum(hits) / len(hits)


def run_judged_demo(
    folder: str | os.PathLike[str] = "ek-demo-run",
    *,
    k: int = 5,
    seed: int = 0,
    n_labels: int = 60,
    judge: DemoJudge | None = None,
    stream: IO[str] | None = None,
) -> JudgedDemoResult:
    """Run both demo agents with :class:`DemoJudge` as the checker, label ``n_labels`` random
    trials of each, and print raw vs corrected success and the gate's decision on each.

    The trial stores are ``judged-baseline.trials.jsonl`` and ``judged-candidate.trials.jsonl``
    in ``folder`` (replaced on each run).
    """
    from ek.agents.harness import agent_regression_gate, run_suite
    from ek.agents.judge import judged_run

    out = sys.stdout if stream is None else stream
    judge = DemoJudge() if judge is None else judge
    root = os.path.abspath(os.fspath(folder))
    os.makedirs(root, exist_ok=True)
    tasks = load_tasks()
    by_id = {t.task_id: t for t in tasks}
    runs = {}
    for name, agent in (("baseline", baseline_agent(seed)), ("candidate", candidate_agent(seed))):
        store = os.path.join(root, f"judged-{name}.trials.jsonl")
        if os.path.exists(store):
            os.remove(store)
        prov = RunProvenance(agent=name, suite_version=SUITE_VERSION, seed=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs[name] = run_suite(agent, tasks, k=k, check=judge, store=store, run=prov)
    labels = {
        name: _labels(run, by_id, n_labels, seed + i) for i, (name, run) in enumerate(runs.items())
    }
    corrected = {name: judged_run(run, labels[name]) for name, run in runs.items()}
    truth = {name: _truth(run, by_id) for name, run in runs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw_gate = agent_regression_gate(runs["candidate"], runs["baseline"], metrics=False)
        corrected_gate = agent_regression_gate(
            runs["candidate"],
            runs["baseline"],
            metrics=False,
            labels=labels["candidate"],
            baseline_labels=labels["baseline"],
        )
    res = JudgedDemoResult(
        runs["baseline"], runs["candidate"], truth, labels, corrected, raw_gate, corrected_gate
    )
    out.write(format_judged(res, judge))
    return res


def format_judged(res: JudgedDemoResult, judge: DemoJudge) -> str:
    """The judged variant's printout."""
    lines = [
        "",
        "== Judged variant: a scripted judge decides success, people label a sample ==",
        f"judge: sensitivity {judge.sensitivity:.2f}; specificity "
        f"{judge.spec_for('demo-large'):.2f} on demo-large's replies, "
        f"{judge.spec_for('demo-small'):.2f} on demo-small's (it believes the small model)",
        f"{'agent':<10} {'trials':>6} {'labels':>6}  {'true':>6}  {'judged':>6}  corrected (ppi++)",
    ]
    for name in ("baseline", "candidate"):
        s = res.corrected[name].success
        iv = s.interval
        lines.append(
            f"{name:<10} {s.n_trials:>6} {s.n_labelled:>6}  {res.truth[name]:>6.3f}  "
            f"{s.judged_rate:>6.3f}  {s.value:.3f} [{iv.low:.3f}, {iv.high:.3f}]"
        )
    true_change = res.truth["candidate"] - res.truth["baseline"]
    lines.append(f"true change (state check on every trial): {true_change:+.3f}")
    for label, gate in (("raw judged rates", res.raw_gate), ("corrected rates", res.corrected_gate)):  # fmt: skip
        c = gate.checks[0]
        iv = c.interval
        verdict = "PASS" if gate.passed else "REGRESSION" if gate.regressions else "FAIL"
        lines.append(
            f"gate on the {label:<17} change {iv.point:+.3f} [{iv.low:+.3f}, {iv.high:+.3f}]"
            f"  {c.verdict:<16} -> {verdict}"
        )
    return "\n".join(lines) + "\n"
