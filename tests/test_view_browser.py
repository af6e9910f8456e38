"""`ek-agents view` in a real browser: headless Chromium from the operating system's package
(Debian ``chromium``; no browser download) driven by Playwright with ``executable_path``.

The page opens from ``file://`` with no network request (every request is recorded and any
but the page's own is aborted), the summary reads with JavaScript off, the task table sorts and
filters, a failed trial's alignment is the one :class:`~ek.agents.trajectory.TrajectoryMetric`
computes, the comparison's decision is the gate's, and hostile text never runs.

Without Chromium these tests skip with the reason; with ``EK_REQUIRE_BROWSER=1`` (set by
``.ci/run``) they fail instead, so CI cannot pass them silently. Without Playwright (a dev
extra: the core-only venv of ``make test-core``) they skip. ``EK_CHROMIUM`` names
another Chromium binary."""

from __future__ import annotations

import io
import os
import shutil

import pytest
from test_view import HOSTILE, hostile_store

from ek.agents.demo import load_tasks, run_demo
from ek.agents.harness import agent_regression_gate, load_run
from ek.agents.trajectory import TrajectoryMetric
from ek.agents.view import write_view


def _chromium() -> str | None:
    """EK_CHROMIUM, else ``chromium`` on the PATH: an executable file, or None."""
    named = os.environ.get("EK_CHROMIUM")
    if named:
        return named if os.path.isfile(named) and os.access(named, os.X_OK) else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _unavailable(why: str) -> None:
    if os.environ.get("EK_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{why} (EK_REQUIRE_BROWSER=1: the browser tests must run)")
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser(demo_view, hostile_view):
    # the runs are made first: Playwright's sync API keeps an event loop running in this
    # thread, where run_suite refuses to run
    # Playwright is a dev extra: a venv without it (make test-core) skips; the browser is
    # the operating system's, and CI requires it (EK_REQUIRE_BROWSER=1)
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    exe = _chromium()
    if exe is None:
        _unavailable("Chromium not found (apt-get install chromium, or set EK_CHROMIUM)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def demo_view(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ek-demo-browser")
    run_demo(folder, k=3, inspect=False, plots=False, stream=io.StringIO(), progress=False)
    cur, base = folder / "candidate.trials.jsonl", folder / "baseline.json"
    out = write_view(cur, folder / "view.html", compare=base)
    return folder, out


@pytest.fixture(scope="module")
def hostile_view(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ek-hostile-browser")
    store = hostile_store(folder)  # a 10 MB observation in every trial
    return write_view(store, folder / "hostile.html")


class Page:
    """A page opened from file:// with every request recorded and any other than the file
    itself aborted; dialogs, console errors and page errors recorded."""

    def __init__(self, browser, path, *, javascript: bool = True) -> None:
        self.ctx = browser.new_context(java_script_enabled=javascript)
        self.page = self.ctx.new_page()
        self.url = "file://" + os.path.abspath(path)
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.ctx.route("**/*", self._route)
        self.page.on("dialog", lambda d: (self.errors.append("dialog " + d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror {e}"))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.goto(self.url)

    def _route(self, route) -> None:
        self.requests.append(route.request.url)
        if route.request.url == self.url:
            route.continue_()
        else:
            route.abort()

    def close(self) -> None:
        self.ctx.close()


@pytest.fixture
def page(browser, demo_view):
    pg = Page(browser, demo_view[1])
    yield pg
    pg.close()


def test_opens_offline_with_no_request(page) -> None:
    p = page.page
    assert p.locator("#tasks > tbody").count() == 30
    page.page.locator("#tasks button.open").first.click()
    p.wait_for_selector("details.trial")
    assert page.requests == [page.url]  # the file itself, nothing else
    assert page.errors == []
    assert p.locator("svg circle").count() > 0  # the pass^k chart drew


def test_summary_and_tables_with_javascript_off(browser, demo_view) -> None:
    pg = Page(browser, demo_view[1], javascript=False)
    try:
        p = pg.page
        assert p.locator("#headline").is_visible()
        assert p.locator("#tasks > tbody").count() == 30
        assert p.locator("#tasks > tbody tr[data-task]").first.is_visible()
        assert p.locator("#gate-decision").is_visible()
        assert p.locator("#task-controls").is_hidden()  # controls appear only with the script
        assert pg.requests == [pg.url]
    finally:
        pg.close()


def _column(p, col: int) -> list[str]:
    return p.eval_on_selector_all(
        "#tasks > tbody:not([hidden]) > tr[data-task]",
        f"rows => rows.map(r => r.cells[{col}].dataset.v ?? r.cells[{col}].textContent)",
    )


def test_sort_and_filter_the_task_table(page, demo_view) -> None:
    p = page.page
    s = load_run(demo_view[0] / "candidate.trials.jsonl")
    p.click("#tasks th:nth-child(5) button.sort")  # successes, ascending
    asc = [int(v) for v in _column(p, 4)]
    assert asc == sorted(c for _, c in s.counts.values())
    p.click("#tasks th:nth-child(5) button.sort")  # descending
    assert [int(v) for v in _column(p, 4)] == sorted(asc, reverse=True)
    p.click("#tasks th:nth-child(2) button.sort")  # task id, ascending
    assert _column(p, 1) == sorted(s.counts)

    p.check("#only-failed")
    failed = sorted(t for t, (n, c) in s.counts.items() if c < n)
    assert sorted(_column(p, 1)) == failed
    p.check("#only-flaky")
    flaky = sorted(t for t, (n, c) in s.counts.items() if 0 < c < n)
    assert sorted(_column(p, 1)) == flaky
    p.uncheck("#only-failed")
    p.uncheck("#only-flaky")
    p.fill("#task-search", "lookup-hard")
    assert sorted(_column(p, 1)) == sorted(t for t in s.counts if "lookup-hard" in t)
    assert p.text_content("#task-count") == f"{len(_column(p, 1))} of 30 tasks shown"


def test_a_failed_trial_shows_the_metrics_alignment(page, demo_view) -> None:
    p = page.page
    s = load_run(demo_view[0] / "candidate.trials.jsonl")
    tasks = {t.task_id: t for t in load_tasks()}
    ep = next(e for e, ok in zip(s.episodes, s.verdicts) if not ok and e.trajectory)
    group = p.locator(f'#tasks > tbody:has(tr[data-task="{ep.task_id}"])')
    group.locator("button.open").click()
    trial = group.locator(f'details.trial[data-trial="{ep.trial}"]')
    trial.locator("summary").click()
    assert trial.locator("summary .bad").text_content() == "failed"
    table = trial.locator("h3:has-text('Trajectory alignment') ~ table").first
    shown = table.locator("tr").evaluate_all(
        "rows => rows.slice(1).map(r => [...r.cells].slice(0, 5).map(c => c.textContent))"
    )
    score = TrajectoryMetric()(ep, tasks[ep.task_id])  # the metric called directly
    want = [
        [
            r["op"],
            "" if r["expected"] is None else str(r["expected"]),
            "" if r["actual"] is None else str(r["actual"]),
            r["tool"],
            str(float(r["cost"])),
        ]
        for r in score.detail["alignment"]
    ]
    assert shown == want
    reason = trial.locator("h3:has-text('Trajectory alignment') + p").text_content()
    assert reason == score.detail["reason"]
    # every step is listed
    steps = trial.locator("h3:has-text('Steps') + table tr")
    assert steps.count() == len(ep.trajectory) + 1


def test_the_comparison_is_the_gates_decision(page, demo_view) -> None:
    folder = demo_view[0]
    res = agent_regression_gate(
        load_run(folder / "candidate.trials.jsonl"), load_run(folder / "baseline.json")
    )
    word = "PASS" if res.passed else "REGRESSION" if res.regressions else "FAIL"
    p = page.page
    assert p.text_content("#gate-decision") == word
    assert p.text_content("#gate-reason") == res.reason
    changes = p.eval_on_selector_all(
        "#task-changes > tbody > tr", "rows => rows.map(r => +r.cells[3].dataset.v)"
    )
    worse = [d for d in changes if d < 0]
    assert changes[: len(worse)] == sorted(worse)  # regressions first, the worst first


def test_hostile_text_never_runs_and_the_page_stays_usable(browser, hostile_view) -> None:
    pg = Page(browser, hostile_view)
    try:
        p = pg.page
        group = p.locator("#tasks > tbody").first
        assert group.locator("td.task").text_content() == HOSTILE[0]  # shown as text
        group.locator("button.open").click()
        trial = group.locator("details.trial").first
        trial.locator("summary").click()
        cell = trial.locator("h3:has-text('Steps') + table tr").nth(1)
        assert cell.locator("td").nth(2).text_content().find(HOSTILE[2]) >= 0
        cell.locator("button.more").click()  # show all: the whole embedded observation
        shown = cell.locator("td").nth(3).locator("pre").text_content()
        assert shown.startswith(HOSTILE[0]) and len(shown) > 1_000_000
        assert p.evaluate("window.__pwned") is None
        assert p.locator("img").count() == 0 and p.locator("a[href^='javascript']").count() == 0
        assert pg.requests == [pg.url] and pg.errors == []
        p.fill("#task-search", "plain")  # still usable after all that
        assert p.text_content("#task-count") == "1 of 2 tasks shown"
    finally:
        pg.close()
