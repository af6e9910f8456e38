"""`ek-agents view` without a browser: the page from every run source the report reads, valid
HTML (html5lib, strict), untrusted text escaped, the comparison's decision the gate's own, and
a clear error for a file that is not a run. The browser tests are in test_view_browser.py."""

from __future__ import annotations

import base64
import gzip
import html
import io
import json
import os
import re
import shutil

import pytest

from ek.agents.base import Episode, RunProvenance, Step, TaskSpec, Trajectory
from ek.agents.cli import main
from ek.agents.demo import run_demo
from ek.agents.harness import (
    GateRefusedError,
    agent_regression_gate,
    load_run,
    run_suite,
    save_agent_baseline,
)
from ek.agents.view import render_view, task_changes, write_view

html5lib = pytest.importorskip("html5lib")

TRACES = os.path.join(os.path.dirname(__file__), "data", "traces", "pydantic_ai_otlp.jsonl")
#: How that trace file names its tasks, trials and verdicts (as tests/test_traces_instrumented.py).
TRACE_OPTIONS = {
    "task_attribute": "ek.task_id",
    "trial_attribute": "ek.trial",
    "success_attribute": "ek.success",
}

#: Untrusted text that would run if it reached the page as markup.
HOSTILE = (
    "</script><script>window.__pwned = 1</script>",
    '<img src=x onerror="window.__pwned = 2">',
    "javascript:window.__pwned = 3",
)


def strict_parse(text: str) -> None:
    """html5lib's strict parser raises on any parse error (unclosed or misnested tags,
    stray end tags, a bad doctype)."""
    html5lib.HTMLParser(strict=True).parse(text)


def trial_blobs(text: str) -> list[list[dict]]:
    """Every task's embedded trials, decoded as the page's script decodes them."""
    blobs = re.findall(r'<script type="application/octet-stream" id="[^"]+">([^<]*)</script>', text)
    return [json.loads(gzip.decompress(base64.b64decode(b))) for b in blobs]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ek-demo-view")
    res = run_demo(folder, k=3, inspect=None, plots=False, stream=io.StringIO(), progress=False)
    return res, folder


def hostile_store(folder, big: int = 10 * 1024 * 1024) -> str:
    """A real run_suite store whose task id, agent name, arguments, observation (``big``
    characters) and output hold the hostile strings."""

    def agent(task: TaskSpec) -> Episode:
        steps = (
            Step(
                "lookup", {"q": HOSTILE[2], "html": HOSTILE[1]}, observation=HOSTILE[0] + "x" * big
            ),
            Step(HOSTILE[1], {}, error=HOSTILE[0]),
        )
        return Episode(task.task_id, trajectory=Trajectory(steps), output=HOSTILE[1])

    tasks = [TaskSpec(HOSTILE[0], gold="never"), TaskSpec("plain-task", gold="never")]
    path = os.path.join(folder, "hostile.trials.jsonl")
    run_suite(
        agent,
        tasks,
        k=2,
        check=lambda ep, gold: ep.output == gold,
        run=RunProvenance(agent=HOSTILE[1], model=HOSTILE[2]),
        store=path,
    )
    return path


def test_cli_writes_a_valid_page_with_comparison(demo, tmp_path) -> None:
    _res, folder = demo
    out = tmp_path / "view.html"
    rc = main(
        [
            "view",
            str(folder / "candidate.trials.jsonl"),
            "--compare",
            str(folder / "baseline.json"),
            "-o",
            str(out),
        ]
    )
    assert rc == 0
    text = out.read_text(encoding="utf-8")
    strict_parse(text)
    assert "Content-Security-Policy" in text and "default-src &#x27;none&#x27;" in text
    # no address the page could load: every src/href is one of the page's own anchors
    links = re.findall(r"""\b(?:src|href)\s*=\s*["']?([^"'\s>]*)""", text)
    assert links and all(u.startswith("#") for u in links), links
    # every trial of the run is embedded: 30 tasks x k=3
    assert sum(len(b) for b in trial_blobs(text)) == 90  # 30 tasks x 3 trials
    # the default output name: the run's path with .html
    shutil.copy(folder / "baseline.trials.jsonl", tmp_path / "b.trials.jsonl")
    assert main(["view", str(tmp_path / "b.trials.jsonl")]) == 0
    assert (tmp_path / "b.trials.html").is_file()


@pytest.mark.parametrize("source", ["store", "baseline", "inspect", "traces"])
def test_every_run_source(demo, tmp_path, source) -> None:
    _res, folder = demo
    if source == "inspect":
        logs = sorted((folder / "inspect").glob("*.eval")) if (folder / "inspect").is_dir() else []
        if not logs:
            pytest.skip("inspect-ai is not installed: the demo wrote no Inspect log")
        path = str(logs[0])
    else:
        path = {
            "store": str(folder / "candidate.trials.jsonl"),
            "baseline": str(folder / "baseline.json"),
            "traces": TRACES,
        }[source]
    opts = TRACE_OPTIONS if source == "traces" else None
    s = load_run(path, episodes=False, trace_options=opts)
    text = render_view(path, trace_options=opts)
    strict_parse(text)
    # the task table has one row per task the report counts, and the headline its totals
    assert text.count('<tr data-task="') == len(
        [t for t, (n, _) in s.counts.items() if n] or s.counts
    )
    assert f"{s.n_successes}/{s.n_trials} trials" in text
    episodes = load_run(path, trace_options=opts).episodes
    assert sum(len(b) for b in trial_blobs(text)) == len(episodes or ())


def test_untrusted_text_is_escaped(tmp_path) -> None:
    store = hostile_store(tmp_path, big=2000)
    text = render_view(store)
    strict_parse(text)
    for h in HOSTILE[:2]:
        assert h not in text  # never as markup in the HTML
    assert "&lt;/script&gt;&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in text  # task id
    assert "agent:&lt;img src=x onerror=&quot;window.__pwned = 2&quot;&gt;" in text  # signature
    # the trials keep the text exactly, as data
    trials = [t for b in trial_blobs(text) for t in b]
    assert trials[0]["steps"][0]["obs"].startswith(HOSTILE[0])
    assert json.loads(trials[0]["steps"][0]["args"]) == {"q": HOSTILE[2], "html": HOSTILE[1]}
    # only the page's own script runs: one executable script element
    assert len(re.findall(r"<script>", text)) == 1


def test_a_huge_observation_is_embedded_up_to_the_cap(tmp_path) -> None:
    from ek.agents.view import MAX_EMBED

    store = hostile_store(tmp_path, big=3 * MAX_EMBED)
    text = render_view(store)
    obs = trial_blobs(text)[0][0]["steps"][0]["obs"]
    rest = len(HOSTILE[0]) + 3 * MAX_EMBED - MAX_EMBED
    assert obs.endswith(f"({rest:,} more characters not embedded in the page)")
    assert len(text) < MAX_EMBED  # 4 observations of 3 MB each compress to almost nothing


def test_the_comparison_is_the_gate(demo) -> None:
    _res, folder = demo
    cur, base = str(folder / "candidate.trials.jsonl"), str(folder / "baseline.json")
    text = render_view(cur, compare=base)
    res = agent_regression_gate(load_run(cur), load_run(base))
    word = "pass" if res.passed else "regression" if res.regressions else "fail"
    assert f'data-decision="{word}"' in text
    assert f'<p id="gate-reason">{html.escape(res.reason)}</p>' in text
    rows = task_changes(load_run(cur), load_run(base))
    diffs = [d for *_, d in rows]
    # regressions first (ascending), then improvements (descending), then the unchanged
    worse = [d for d in diffs if d < 0]
    better = [d for d in diffs if d > 0]
    assert diffs[: len(worse)] == sorted(worse)
    assert diffs[len(worse) : len(worse) + len(better)] == sorted(better, reverse=True)


def test_a_refused_comparison_shows_the_reason(demo, tmp_path) -> None:
    _res, folder = demo
    cur = str(folder / "candidate.trials.jsonl")
    other = hostile_store(tmp_path, big=10)  # other tasks: the gate refuses
    with pytest.raises(GateRefusedError) as e:
        agent_regression_gate(load_run(cur), load_run(other))
    text = render_view(cur, compare=other)
    strict_parse(text)
    assert 'data-decision="refused"' in text
    assert str(e.value).split(":")[0].replace("'", "&#x27;") in text


def test_not_a_run_is_a_clear_error(tmp_path, capsys) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello", encoding="utf-8")
    assert main(["view", str(bad), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "not an ek trial store" in err and not (tmp_path / "x.html").exists()
    assert main(["view", str(tmp_path / "missing.jsonl")]) == 2
    with pytest.raises(ValueError, match="does not exist"):
        write_view(str(bad.with_name("never")), str(tmp_path / "no" / "dir.html"))


def test_baseline_without_episodes_has_no_trials(tmp_path) -> None:
    from ek.agents.harness import RunSummary

    p = tmp_path / "b.json"
    save_agent_baseline(RunSummary(RunProvenance(agent="a"), 2, {"t": (2, 1)}), p)
    text = render_view(p)
    strict_parse(text)
    assert trial_blobs(text) == [] and 'data-flaky="1"' in text


def test_a_policys_violations_are_a_table_of_the_trial(tmp_path) -> None:
    from ek.agents.policy import Forbid, PolicyMetric

    def agent(task: TaskSpec) -> Episode:
        return Episode(task.task_id, trajectory=Trajectory((Step("lookup", {"q": 1}),)), output="x")

    store = str(tmp_path / "policy.trials.jsonl")
    run_suite(
        agent,
        [TaskSpec("t1", gold="x")],
        k=1,
        metrics=[PolicyMetric([Forbid("lookup")])],
        store=store,
    )
    trial = trial_blobs(render_view(store))[0][0]
    # the metric's own violation record, one row: the forbidden call at step 0
    assert trial["tables"] == [
        {
            "title": "policy: violations",
            "head": ["rule", "step", "reason", "severity"],
            "rows": [["no lookup", "0", "lookup at step 0: forbidden (lookup)", "1.0"]],
        }
    ]


def test_the_demo_writes_its_view(demo) -> None:
    res, folder = demo
    assert res.files["view"] == os.path.join(str(folder), "view.html")
    text = (folder / "view.html").read_text(encoding="utf-8")
    strict_parse(text)
    # the candidate's 30 tasks x k=3 trials, and the comparison with the frozen baseline
    assert sum(len(b) for b in trial_blobs(text)) == 90  # 30 tasks x 3 trials
    assert 'id="gate-decision"' in text and "view: " in res.report


def test_a_fault_run_names_its_fault_and_each_trials_injected_faults(demo) -> None:
    _res, folder = demo
    store = next(folder.glob("candidate.trials.fault-*.jsonl"))
    text = render_view(store)
    strict_parse(text)
    assert "fault injected" in text and "error:get_order" in text  # the store header's fault
    trials = [t for b in trial_blobs(text) for t in b]
    faulted = [t for t in trials if t["faults"]]
    # every injected fault is a step whose error says so (the demo's get_order fails at rate 0.5)
    assert faulted and all("injected fault" in f for t in faulted for f in t["faults"])
    assert all(
        s["fault"] == ("injected fault" in (s["error"] or "")) for t in trials for s in t["steps"]
    )
