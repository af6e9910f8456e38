"""The ek pytest plugin: k trials per marked test, one outcome from pass^k or a Wilson bound.

Agent tests are flaky: the same test passes four times and fails the fifth. Mark the test and it
runs k times (a fresh function-scoped fixture setup each trial, as pytest-repeat does), and
pytest reports **one** outcome for it, from a reliability criterion::

    import pytest

    @pytest.mark.ek(trials=5, pass_hat_k=3, at_least=0.6)
    def test_refund_agent(ek_episode):
        ep = run_my_agent("refund order A1", seed=ek_episode.seed)
        ek_episode.record(ep, gold=TASK)          # optional: tool-call, trajectory, cost
        assert ep.final_state["A1"]["status"] == "refunded"

The criterion (:mod:`ek.agents.pytest_plugin._spec`): every trial passes (the default), pass^k at least
a threshold (tau-bench's estimator), or the lower end of the Wilson interval of the success rate
at least a threshold. A failing test shows a short table (trials, successes, the interval,
pass^k, each failed trial's first line with its ek reasons under it, the first failure in
full); the session ends with a
table of every ek test (success [95% CI], pass^k, $/success, the recorded metrics).

Options (``pytest --help``, group ``ek``): ``--ek-trials N`` (overrides the marker's trials),
``--ek-seed N``, ``--ek-store PATH`` (a run store that ``ek-agents report`` and ``ek-agents
gate`` read), ``--ek-baseline PATH`` (gate the session exactly as ``ek-agents gate BASELINE
STORE`` does, with its exit codes: 1 only on a statistically supported regression, 2 when the
gate refuses runs that are not comparable),
``--ek-save-baseline PATH``, ``--ek-tolerance T``, ``--ek-allow-undefined CHECK``,
``--ek-provenance KEY=VALUE``.

* **pytest-xdist** (``-n 4``): trials may run on different workers; each trial's report carries
  what it did, and the controller judges each test once, so the result equals a run without
  xdist.
* **async tests** work as they do without the plugin (pytest-asyncio, anyio): each trial is an
  ordinary test item.
* **Inert** for a suite that uses none of the marker, the ``ek_episode`` fixture or the options:
  no item, report or line of output changes, and nothing runs: loading the plugin imports the
  ``ek.agents`` package (its default checkers and metrics), never the harness, a store or a host
  framework.
* Registered through the ``pytest11`` entry point ``ek.agents.pytest_plugin`` (named as the module, as
  ``xdist.looponfail`` is, so ``-p ek.agents.pytest_plugin`` loads it where plugin autoloading is off
  and is harmless where it is on); ``-p no:ek.agents.pytest_plugin`` turns it off. The hidden-test
  verifier (:mod:`ek.agents.verifier`) disables autoloading, so this plugin never runs there.

Bad input (``trials=0``, a threshold outside [0, 1], ``pass_hat_k`` above the trials, an unknown
marker argument) is reported by pytest as a collection error naming the test; a bad option, an
unreadable ``--ek-baseline`` or an ``--ek-store`` no file can be written to is a usage error
(exit 4). Neither is a traceback. ``--ek-store`` is written under the store's lock at the end of
the session: a store another writer holds (a ``run_suite`` writing it), or a store ``run_suite``
wrote, is left as it is, and the session says so in one line and exits 4.

Not combined: ``unittest.TestCase`` methods (pytest does not parametrize them) and
pytest-xdist's ``-x`` (xdist counts the trials' reports, which the plugin neutralises; the
test's outcome arrives in the controller only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from ._options import Options, add_options, read_options
from ._spec import TrialSpec, base_test_id, spec_from_marker, trial_id

__all__ = ["EpisodeRecorder", "TrialSpec"]

#: The (hidden) parameter that makes one test k items.
TRIAL_ARG = "_ek_trial"

_OPTIONS = pytest.StashKey[Options]()
_MARKER_HELP = (
    "ek(trials=1, pass_hat_k=None, at_least=None, confidence=0.95): run the test `trials` times "
    "and report one outcome: every trial passes; or pass^k >= at_least (with pass_hat_k); or the "
    "lower end of the Wilson interval of the success rate >= at_least (ek-agents)"
)


def __getattr__(name: str) -> Any:
    if name == "EpisodeRecorder":  # imports the harness: only when asked for
        from ._recorder import EpisodeRecorder

        return EpisodeRecorder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class _Param:
    """The value of the hidden trial parameter."""

    index: int
    spec: TrialSpec


@dataclass
class _Trial:
    """One trial item's state on the process that runs it."""

    test_id: str
    index: int
    spec: TrialSpec
    order: int
    expected: int
    outcome: str = "passed"
    failure: str | None = None
    failure_text: str | None = None
    skip: tuple[str, int, str] | None = None
    sections: list[tuple[str, str]] = field(default_factory=list)
    duration: float = 0.0

    def payload(self, record: dict[str, Any] | None) -> dict[str, Any]:
        """Plain JSON for the teardown report (what the controller judges)."""
        return {
            "index": self.index,
            "spec": self.spec.to_dict(),
            "order": self.order,
            "outcome": self.outcome,
            "failure": self.failure,
            "failure_text": self.failure_text,
            "skip": list(self.skip) if self.skip else None,
            "sections": [list(s) for s in self.sections] if self.outcome == "failed" else [],
            "duration": self.duration,
            "record": record,
        }


_STATE = pytest.StashKey[_Trial]()
_RECORDER = pytest.StashKey[Any]()


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


# ---------------------------------------------------------------------- configuration


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--ek-*`` options (:mod:`ek.agents.pytest_plugin._options`)."""
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker, check the options, and (not on an xdist worker) the controller."""
    config.addinivalue_line("markers", _MARKER_HELP)
    opts = read_options(config)
    config.stash[_OPTIONS] = opts
    if _is_worker(config):
        return
    from ._session import EkController, check_baseline, check_store

    if opts.store:
        check_store(opts.store)
    if opts.baseline:
        check_baseline(opts.baseline)
    config.pluginmanager.register(EkController(config, opts), "ek-controller")


# ---------------------------------------------------------------------- collection


@pytest.hookimpl(trylast=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Make an ek test (marked, or using ``ek_episode``) k items: one per trial."""
    marker = metafunc.definition.get_closest_marker("ek")
    if marker is None and "ek_episode" not in metafunc.fixturenames:
        return
    try:
        spec = spec_from_marker(
            marker.kwargs if marker is not None else None,
            args=tuple(marker.args) if marker is not None else (),
            cli_trials=metafunc.config.stash[_OPTIONS].trials,
        )
    except ValueError as e:
        raise pytest.Collector.CollectError(f"{metafunc.definition.nodeid}: {e}") from None
    metafunc.fixturenames.append(TRIAL_ARG)
    metafunc.parametrize(
        TRIAL_ARG,
        [_Param(i, spec) for i in range(spec.trials)],
        ids=[trial_id(i, spec.trials) for i in range(spec.trials)],
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    """Give each trial item its state: its test, its trial, and how many trials will run."""
    found: list[tuple[pytest.Item, _Param, str]] = []
    for item in session.items:
        p = getattr(getattr(item, "callspec", None), "params", {}).get(TRIAL_ARG)
        if isinstance(p, _Param):
            found.append((item, p, base_test_id(item.nodeid, p.index, p.spec.trials)))
    if not found:
        return
    expected: dict[str, int] = {}
    for _, _, test_id in found:
        expected[test_id] = expected.get(test_id, 0) + 1
    order = {id(item): i for i, item in enumerate(session.items)}
    for item, p, test_id in found:
        item.stash[_STATE] = _Trial(test_id, p.index, p.spec, order[id(item)], expected[test_id])


# ---------------------------------------------------------------------- one trial


def _first_line(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = str(crash.message if crash is not None else report.longrepr or "").strip()
    line = text.splitlines()[0] if text else "failed"
    return line if report.when == "call" else f"error in {report.when}: {line}"


def _fail(state: _Trial, report: Any) -> None:
    """Record a failure; the report no longer fails the session (the test's outcome will)."""
    if state.outcome != "failed":
        state.outcome = "failed"
        state.failure = _first_line(report)
        state.failure_text = str(report.longrepr) if report.longrepr is not None else None
    if report.outcome != "failed":  # an xfail: already not a failure for pytest
        return
    if report.when == "setup":  # "skipped", so pytest does not run the call phase
        path, line, _ = report.location
        report.outcome = "skipped"
        report.longrepr = (str(path), (line or 0) + 1, f"ek: {state.failure}")
    else:
        report.outcome = "passed"
        report.longrepr = None


def _absorb(state: _Trial, item: pytest.Item, report: Any) -> None:
    # the trial's facts travel as extra report attributes (pytest-xdist serialises them)
    report.ek_test = state.test_id
    report.ek_expected = state.expected
    original = report.outcome
    state.duration += report.duration
    if original == "failed" or (original == "skipped" and hasattr(report, "wasxfail")):
        _fail(state, report)
    elif original == "skipped" and state.outcome == "passed":
        state.outcome = "skipped"
        lr = report.longrepr
        state.skip = (str(lr[0]), int(lr[1]), str(lr[2])) if isinstance(lr, tuple) else None
    if report.when == "call" or (report.when == "setup" and original != "passed"):
        report.ek_decisive = True
        report.ek_result = state.outcome
    if report.when == "teardown":
        payload = _recorded(state, item)
        if state.outcome == "failed":
            state.sections = list(report.sections)
        report.ek_trial = state.payload(payload)


def _recorded(state: _Trial, item: pytest.Item) -> dict[str, Any] | None:
    """What the trial's ``ek_episode`` recorded; junk written into it fails the trial."""
    rec = item.stash.get(_RECORDER, None)
    if rec is None:
        return None
    from ._recorder import trial_payload  # imported already: the fixture made ``rec``

    payload, junk = trial_payload(rec)
    if junk is not None and state.outcome != "failed":
        state.outcome, state.failure, state.failure_text = "failed", junk, junk
    return payload


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A trial's reports: its outcome is kept for the test's verdict, and the reports
    themselves neither fail nor print (the test's one outcome does)."""
    report = yield
    state = item.stash.get(_STATE, None)
    if state is not None:
        _absorb(state, item, report)
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report: Any, config: pytest.Config) -> Any:
    """A trial prints nothing (with ``-v``, one line a trial); the test's outcome prints."""
    if getattr(report, "ek_test", None) is None:
        return None
    word = getattr(report, "ek_word", None)
    return ("", "", tuple(word)) if word else ("", "", "")


@pytest.fixture
def ek_episode(request: pytest.FixtureRequest) -> Any:
    """This trial's :class:`~ek.agents.pytest_plugin.EpisodeRecorder`: ``trial``, ``seed``,
    ``rng`` and ``record(episode, gold=..., prices=...)``. Using it makes the test an ek test."""
    from ek.agents.harness import trial_seed

    from ._recorder import EpisodeRecorder

    state = request.node.stash.get(_STATE, None)
    test_id = state.test_id if state is not None else request.node.nodeid
    index = state.index if state is not None else 0
    seed = trial_seed(request.config.stash[_OPTIONS].seed, test_id, index)
    rec = EpisodeRecorder(
        test_id, trial=index, trials=state.spec.trials if state is not None else 1, seed=seed
    )
    request.node.stash[_RECORDER] = rec
    return rec
