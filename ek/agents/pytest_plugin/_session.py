"""The controller: trials in, one outcome per test out; the session table, store, gate, baseline.

It runs where pytest reports (the pytest process, or the pytest-xdist controller; never on a
worker). Each trial's teardown report carries what the trial did (plain JSON, so it crosses an
xdist channel); when a test's last trial is in, the controller judges it
(:func:`~ek.agents.pytest_plugin._verdict.decide`) and reports **one** outcome for the test, under the
test's own node id. At the end of the session it writes the run store
(:mod:`ek.agents._run.store`), gates it with ``ek-agents gate`` itself (:func:`ek.agents.cli.main`:
the same rules, refusals and exit codes), saves the baseline, and prints the table.

Progress stays exact: of a test's k trials, the first k - 1 to finish count as one progress
step each and the test's outcome counts as the k-th (pytest collected k items for it).

Standard library and pytest at import; ``ek.agents`` is imported when the first ek trial
reports, so a session without ek tests never imports it.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from ._options import Options
from ._spec import TrialSpec, base_test_id

if TYPE_CHECKING:
    from ek.agents._episode import RunProvenance

    from ._verdict import TestVerdict, TrialResult

__all__ = ["EkController", "check_baseline", "check_store"]

_WORDS = {
    "passed": ("trial passed", {"green": True}),
    "failed": ("trial failed", {"yellow": True}),
    "skipped": ("trial skipped", {"yellow": True}),
}


def check_baseline(path: str) -> None:
    """Read ``--ek-baseline`` now, so an unreadable file is a usage error before any test runs.

    Raises:
        pytest.UsageError: the file is missing, unreadable, or not a run ek can read.
    """
    from ek.agents._run.load import load_run

    try:
        load_run(path)
    except (OSError, ValueError, TypeError, ImportError) as e:
        raise pytest.UsageError(f"--ek-baseline {path}: {e}") from None


def check_store(path: str) -> None:
    """Check ``--ek-store`` now, so a path no store can be written to is a usage error before
    any test runs: a regular file or none yet, in a folder that is (or can be made) writable.

    Raises:
        pytest.UsageError: a directory, a FIFO or a device; a folder under a file; a folder
            that cannot be written.
    """
    from ek.jsonio import path_text, writable_file

    try:
        p = os.path.abspath(path_text("--ek-store", path))
        folder = os.path.dirname(p)
        if os.path.isdir(folder):
            writable_file("--ek-store", path)  # no directory, FIFO or device at the path
    except (TypeError, ValueError) as e:
        raise pytest.UsageError(str(e)) from None
    while not os.path.lexists(folder):  # the folders still to be made: the first that exists
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK | os.X_OK):
        raise pytest.UsageError(
            f"--ek-store {path}: cannot write a store there ({folder} is not a writable folder)"
        )


@dataclass
class _TestState:
    """What the controller knows of one test while its trials come in."""

    test_id: str
    expected: int
    decided: int = 0
    payloads: dict[int, dict[str, Any]] = field(default_factory=dict)
    location: tuple[str, int | None, str] | None = None
    keywords: dict[str, Any] = field(default_factory=dict)
    order: int = 0
    first_index: int = -1
    done: bool = False


@dataclass(frozen=True)
class _Judged:
    """A judged test: its verdict and its trials (the store's records)."""

    verdict: TestVerdict
    trials: tuple[TrialResult, ...]
    order: int


class EkController:
    """The controller plugin (registered by the plugin's ``pytest_configure``)."""

    def __init__(self, config: pytest.Config, options: Options) -> None:
        self.config = config
        self.options = options
        self.tests: dict[str, _TestState] = {}
        self.judged: dict[str, _Judged] = {}
        self.notes: list[str] = []
        self.gate_text: str | None = None
        self._run: RunProvenance | None = None

    # ------------------------------------------------------------------ trials in

    @property
    def run(self) -> RunProvenance:
        """The session's run provenance (``--ek-provenance``, ``--ek-seed``)."""
        if self._run is None:
            from ek.agents._episode import RunProvenance

            fields: dict[str, Any] = dict(self.options.provenance)
            self._run = RunProvenance(seed=self.options.seed, **fields)
        return self._run

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: Any) -> None:
        """Count a trial's report; after a test's last trial, report the test's outcome."""
        test_id = getattr(report, "ek_test", None)
        if test_id is None:
            return
        st = self.tests.get(test_id)
        if st is None:
            st = self.tests[test_id] = _TestState(test_id, int(report.ek_expected))
        if getattr(report, "ek_decisive", False):
            st.decided += 1
            if st.decided < st.expected:
                report.ek_word = _WORDS.get(report.ek_result, _WORDS["failed"])
        data = getattr(report, "ek_trial", None)
        if report.when == "teardown" and isinstance(data, dict):
            self._add(st, report, data)
            if len(st.payloads) >= st.expected:
                self._finish(st)

    def _add(self, st: _TestState, report: pytest.TestReport, data: dict[str, Any]) -> None:
        index = int(data["index"])
        st.payloads[index] = data
        if st.first_index < 0 or index < st.first_index:
            st.first_index = index
            path, line, domain = report.location
            st.location = (path, line, base_test_id(domain, index, int(data["spec"]["trials"])))
            st.keywords = {k: v for k, v in dict(report.keywords).items() if "ek-trial-" not in k}
        st.order = min(int(p.get("order", 0)) for p in st.payloads.values())

    def _finish(self, st: _TestState) -> pytest.TestReport | None:
        if st.done or not st.payloads:
            return None
        from ._verdict import decide, with_cost

        st.done = True
        first = st.payloads[min(st.payloads)]
        spec = TrialSpec.from_dict(first["spec"])
        trials = [_trial(st.test_id, st.payloads[i], self.run) for i in sorted(st.payloads)]
        trials = with_cost(trials, st.test_id, self.run)
        verdict = decide(st.test_id, spec, trials)
        self.judged[st.test_id] = _Judged(verdict, tuple(trials), st.order)
        rep = _outcome_report(st, verdict, trials)
        self.config.hook.pytest_runtest_logreport(report=rep)
        return rep

    # ------------------------------------------------------------------ session end

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Judge the tests whose trials did not all finish; then store, gate and save."""
        for st in list(self.tests.values()):
            rep = self._finish(st)
            if rep is not None and rep.failed and session.exitstatus == 0:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if not self.options.persists:
            return
        code = self._persist()
        if code and session.exitstatus == 0:
            session.exitstatus = code

    def _ordered(self) -> list[_Judged]:
        return sorted(self.judged.values(), key=lambda j: (j.order, j.verdict.test_id))

    def _persist(self) -> int:
        """Write the store, run the gate, save the baseline; the exit code they call for.

        A store that cannot be written (held by another writer, not this plugin's to replace,
        an unwritable folder) is one line among the notes and exit code 4; the gate and the
        baseline then read the session's trials from a temporary store."""
        o = self.options
        tmp = tempfile.mkdtemp(prefix="ek-pytest-")
        try:
            path, code = os.path.join(tmp, "trials.jsonl"), 0
            if o.store:
                code = self._write_store(o.store)
                path = o.store if code == 0 else path
            if path != o.store and (o.baseline or o.save_baseline):
                write_store(path, self.run, self._ordered())
            gate = self._gate(path) if o.baseline else 0
            return code or self._save(path) or gate
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _write_store(self, path: str) -> int:
        """Write ``--ek-store``; 0, or the usage-error exit code with a note saying why not."""
        try:
            write_store(path, self.run, self._ordered())
        except (OSError, ValueError, TypeError) as e:  # a StoreError is a ValueError
            self.notes.append(f"trials NOT written to {path}: {e}")
            return int(pytest.ExitCode.USAGE_ERROR)
        self.notes.append(f"trials written to {path} (ek-agents report {path})")
        return 0

    def _gate(self, store: str) -> int:
        from ek.agents.cli import EXIT_OK, EXIT_REFUSED, EXIT_REGRESSION, main

        o = self.options
        argv = ["gate", str(o.baseline), store, "--tolerance", repr(o.tolerance)]
        for name in o.allow_undefined:
            argv += ["--allow-undefined", name]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        self.gate_text = (out.getvalue() + err.getvalue()).rstrip("\n")
        if code == EXIT_OK:
            return 0
        if code == EXIT_REGRESSION:
            self.notes.append(f"gate against {o.baseline}: FAILED (exit 1)")
            return EXIT_REGRESSION
        # the one rule: the session exits as ek-agents gate does (2: refused, runs not comparable)
        self.notes.append(f"gate against {o.baseline}: REFUSED (exit {EXIT_REFUSED})")
        return EXIT_REFUSED

    def _save(self, store: str) -> int:
        if not self.options.save_baseline:
            return 0
        from ek.agents._run.load import load_run
        from ek.agents.harness import save_agent_baseline

        target = self.options.save_baseline
        try:
            save_agent_baseline(load_run(store), target)
        except (OSError, ValueError, TypeError) as e:
            self.notes.append(f"baseline NOT saved to {target}: {e}")
            return int(pytest.ExitCode.USAGE_ERROR)
        self.notes.append(f"baseline saved to {target}")
        return 0

    # ------------------------------------------------------------------ the table

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The per-test table, the store and baseline notes, and the gate's verdict."""
        tr = terminalreporter
        if not self.judged and not self.notes and self.gate_text is None:
            return
        if self.judged:
            tr.write_sep("=", "ek: one outcome per test from its trials")
            for line in summary_lines([j.verdict for j in self._ordered()]):
                tr.write_line(line)
        if self.gate_text is not None:
            tr.write_sep("-", f"ek gate: {self.options.baseline} -> this session")
            for line in self.gate_text.splitlines():
                tr.write_line(line)
        for note in self.notes:
            tr.write_line(f"ek: {note}")


def _trial(test_id: str, data: dict[str, Any], run: RunProvenance) -> TrialResult:
    """The trial a report carried; a report the controller cannot read is a failed trial
    saying why (never an error in pytest's hooks)."""
    from ._verdict import TrialResult, trial_from_payload

    try:
        return trial_from_payload(test_id, data, run)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        why = f"ek: this trial's report is unreadable ({type(e).__name__}: {str(e)[:200]})"
        index = data.get("index")
        return TrialResult(index if type(index) is int else 0, "failed", why, why)


# ---------------------------------------------------------------------- the outcome report


def _outcome_report(
    st: _TestState, verdict: TestVerdict, trials: Sequence[TrialResult]
) -> pytest.TestReport:
    """The test's one report (``when="call"``), under the test's own node id."""
    loc = st.location or (st.test_id.split("::")[0], None, st.test_id)
    failed = [t for t in trials if t.outcome == "failed"]
    longrepr: Any = None
    sections: tuple[tuple[str, str], ...] = ()
    if verdict.outcome == "failed":
        longrepr = verdict.longrepr(failed[0].failure_text if failed else None)
        sections = failed[0].sections if failed else ()
    elif verdict.outcome == "skipped":
        skip = next((t.skip for t in trials if t.skip is not None), None)
        longrepr = skip or (loc[0], (loc[1] or 0) + 1, "every trial skipped")
    rep: Any = pytest.TestReport(
        st.test_id,
        loc,
        st.keywords,
        verdict.outcome,  # type: ignore[arg-type]
        longrepr,
        "call",
        sections,
        math.fsum(t.duration for t in trials),
        user_properties=[
            ("ek_trials", verdict.n),
            ("ek_successes", verdict.successes),
            (f"ek_pass^{verdict.spec.k}", _fmt(verdict.pass_hat)),
            ("ek_criterion", verdict.spec.describe()),
        ],
    )
    rep.ek_outcome_of = verdict.test_id
    return rep


# ---------------------------------------------------------------------- store


def write_store(path: str, run: RunProvenance, judged: Sequence[_Judged]) -> None:
    """Write the session's trials as a run store (:func:`ek.agents._run.store.replace_store`: a
    temporary file renamed over ``path`` under the store's lock; a store another writer holds,
    or one that ``run_suite`` wrote, is refused and left as it is).

    One record a trial that ran (a skipped trial is left out): ``task_id`` is the test's node id,
    ``success`` its verdict, ``episode`` the recorded episode (or a bare one), ``scores`` the
    recorded metrics and Cost-of-Pass.

    Raises:
        ek.agents._run.store.StoreError: the store is held by another writer, or is not this
            plugin's to replace.
        OSError: the folder cannot be written.
    """
    from ek import __version__
    from ek.agents._run.store import replace_store
    from ek.agents._spec import TaskSpec
    from ek.agents.harness import suite_fingerprint

    ran = [j for j in judged if j.verdict.n]
    pricings = [t.pricing for j in ran for t in j.trials if t.pricing is not None]
    common = pricings[0] if pricings and all(p == pricings[0] for p in pricings) else None
    header = {
        "run": run.to_dict(),
        "suite": {
            "fingerprint": suite_fingerprint(TaskSpec(j.verdict.test_id) for j in ran),
            "n_tasks": len(ran),
        },
        "k": max((j.verdict.spec.trials for j in ran), default=1),
        "seed": int(run.seed or 0),
        "ek_version": __version__,
        "check": "pytest",
        "tasks": {j.verdict.test_id: [] for j in ran},
        "pricing": common,
        "source": "ek pytest plugin",
    }
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    # under the store's lock: a store another writer holds, or one run_suite wrote, is refused
    replace_store(path, header, _records(ran))


def _records(ran: Sequence[_Judged]) -> Iterator[dict[str, Any]]:
    """One store record a trial that ran (a skipped trial is left out)."""
    from ek.agents._episode import Episode

    for j in ran:
        for t in j.trials:
            if t.outcome == "skipped":
                continue
            ep = t.episode or Episode(j.verdict.test_id, trial=t.index, success=t.passed)
            if ep.duration is None:
                ep = ep.replace(duration=t.duration)
            d = ep.to_dict()
            d.pop("run", None)
            yield {
                "task_id": j.verdict.test_id,
                "trial": t.index,
                "success": t.passed,
                "agent_error": False,
                "episode": d,
                "scores": {
                    n: {"value": s.value, "detail": dict(s.detail)} for n, s in t.scores.items()
                },
                "failure": t.failure,
            }


# ---------------------------------------------------------------------- the session table


def _fmt(x: float | None) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x:.3f}"


def _money(x: float | None) -> str:
    if x is None:
        return "-"
    if math.isnan(x):
        return "unknown"
    return "inf" if math.isinf(x) else f"${x:.4g}"


def _row(v: TestVerdict, metric_names: Sequence[str], with_cost: bool) -> list[str]:
    iv = v.interval
    row = [
        v.test_id,
        str(v.n),
        str(v.successes),
        f"{_fmt(iv.point)} [{_fmt(iv.low)}, {_fmt(iv.high)}]",
        f"pass^{v.spec.k} {_fmt(v.pass_hat)}",
    ]
    if with_cost:
        row.append(_money(v.cost_of_pass))
    row += [_fmt(v.metrics.get(m)) for m in metric_names]
    row += [v.spec.describe(), v.outcome]
    return row


def summary_lines(verdicts: Sequence[TestVerdict]) -> list[str]:
    """The session table: per test trials, successes, success [CI], pass^k, $/success, metrics,
    criterion and outcome; then the pooled success rate.

    Example:
        >>> from ek.agents.pytest_plugin._verdict import TrialResult, decide
        >>> v = decide("t.py::test_a", TrialSpec(4), [TrialResult(i, "passed") for i in range(4)])
        >>> for line in summary_lines([v]):
        ...     print(line)
        test          trials  ok  success [95% CI]      pass^k        criterion           outcome
        t.py::test_a       4   4  1.000 [0.510, 1.000]  pass^4 1.000  every trial passes  passed
        1 ek test(s) (1 passed); 4 trials, 4 passed: success 1.000 [0.510, 1.000] (95% Wilson)
    """
    metric_names = sorted({m for v in verdicts for m in v.metrics})
    with_cost = any(v.cost_of_pass is not None for v in verdicts)
    confs = {v.spec.confidence for v in verdicts}
    ci = f"{next(iter(confs)) * 100:g}% CI" if len(confs) == 1 else "CI"
    head = ["test", "trials", "ok", f"success [{ci}]", "pass^k"]
    head += ["$/success"] if with_cost else []
    head += [*metric_names, "criterion", "outcome"]
    rows = [head, *(_row(v, metric_names, with_cost) for v in verdicts)]
    return [*_aligned(rows, right={1, 2}), _pooled_line(verdicts)]


def _aligned(rows: Sequence[Sequence[str]], right: set[int]) -> list[str]:
    """The rows as text columns, each as wide as its widest cell (``right``: right-aligned)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))
        ).rstrip()
        for r in rows
    ]


def _pooled_line(verdicts: Sequence[TestVerdict]) -> str:
    """The session's last line: the tests by outcome and the pooled success rate (Wilson)."""
    from ek.stats import wilson_interval

    n = sum(v.n for v in verdicts)
    c = sum(v.successes for v in verdicts)
    outcomes = [v.outcome for v in verdicts]
    iv = wilson_interval(c, n)
    counts = ", ".join(
        f"{outcomes.count(o)} {o}" for o in ("passed", "failed", "skipped") if o in outcomes
    )
    return (
        f"{len(verdicts)} ek test(s) ({counts}); {n} trials, {c} passed: success "
        f"{_fmt(iv.point)} [{_fmt(iv.low)}, {_fmt(iv.high)}] (95% Wilson)"
    )
