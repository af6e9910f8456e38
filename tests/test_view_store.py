"""`ek-agents view` of a trial store reads the trials back from the store, one task at a time.

The page of a store embeds the same trials, cost cells and figures as reading the whole run into
memory did (and as the other run sources still do), holds no trial in memory (a task's trials
are offsets into the store until the page embeds them), shows a run that is still being written
by another process, and refuses, with a clear error, a store that was replaced while it was
being viewed.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import textwrap
import time

import pytest

from ek.agents._run.stored import StoreChangedError, StoredTrials
from ek.agents.demo import run_demo
from ek.agents.harness import load_run
from ek.agents.view import read_view, render_view, write_view
from ek.agents.view._model import _trials_by_task, task_dollars, trial_price
from ek.agents.view._page import write_page
from ek.agents.view._trials import trial_payload

html5lib = pytest.importorskip("html5lib")


def page(view, title: str) -> str:
    """The page of ``view`` as write_page writes it."""
    out = io.StringIO()
    write_page(view, title, out)
    return out.getvalue()


BLOB = re.compile(r'<script type="application/octet-stream" id="ek-trials-(\d+)">([^<]*)</script>')


def blobs(text: str) -> dict[int, list[dict]]:
    """Each task's embedded trials by its row, decoded as the page's script decodes them."""
    import base64
    import gzip

    return {int(i): json.loads(gzip.decompress(base64.b64decode(b))) for i, b in BLOB.findall(text)}


def cost_cells(text: str) -> dict[str, str]:
    """Each task row's cost cell (the ninth), by task id."""
    rows = re.findall(r'<tr data-task="([^"]*)"[^>]*>(.*?)</tr>', text)
    return {t: re.findall(r"<td[^>]*>(.*?)</td>", cells)[8] for t, cells in rows}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ek-demo-view-store")
    run_demo(folder, k=3, inspect=None, plots=False, stream=io.StringIO(), progress=False)
    return folder


@pytest.mark.parametrize(
    "store",
    [
        "candidate.trials.jsonl",
        "candidate.trials.fault-error_get_order.jsonl",
        "conversations.llm.trials.jsonl",  # holds an infrastructure error: not a trial
    ],
)
def test_a_stores_page_embeds_the_runs_own_trials(demo, store) -> None:
    path = str(demo / store)
    text = render_view(path)
    html5lib.HTMLParser(strict=True).parse(text)
    # what the page embedded before it read stores by offset (and embeds for other sources):
    # the run read whole, with its episodes, grouped by task
    whole = load_run(path, episodes=True)
    price = trial_price(whole)
    by_task = _trials_by_task(whole)
    view = read_view(path)
    want = {
        i: json.loads(
            json.dumps([trial_payload(x, price) for x in by_task[t.task_id]], default=str)
        )
        for i, t in enumerate(view.tasks)
        if t.task_id in by_task
    }
    assert blobs(text) == want
    for t in view.tasks:  # a task's trials are its counted trials, in trial order
        assert len(t.trials) == t.n
        assert [x.episode.trial for x in t.trials] == sorted(x.episode.trial for x in t.trials)
    from ek.agents.view._html import dollars

    assert cost_cells(text) == {
        t: dollars(task_dollars(by_task.get(t, []), price))
        for t in (row.task_id for row in view.tasks)
    }


def test_a_store_is_read_once_without_holding_its_trials(demo) -> None:
    view = read_view(str(demo / "candidate.trials.jsonl"))
    s = view.summary
    # one read, with the trials: every episode and Score is read back by offset when used
    assert isinstance(s.episodes, StoredTrials)
    assert all(isinstance(ss, StoredTrials) for m in s.metrics.values() for ss in m.scores.values())
    assert all(isinstance(t.trials, StoredTrials) for t in view.tasks if t.n)
    # its figures are the report's: the same tally
    report = load_run(str(demo / "candidate.trials.jsonl"), episodes=False)
    assert s.counts == report.counts and s.cost == report.cost and s.slices == report.slices
    assert {n: m.value for n, m in s.metrics.items()} == {
        n: m.value for n, m in report.metrics.items()
    }


def test_a_repeated_record_shows_its_first_trial(demo, tmp_path) -> None:
    path = str(tmp_path / "run.trials.jsonl")
    with open(demo / "candidate.trials.jsonl", encoding="utf-8") as src:
        lines = src.readlines()
    first = json.loads(lines[-1])
    again = {**first, "episode": {**first["episode"], "output": "a later copy of this trial"}}
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(lines)
        out.write(json.dumps(again) + "\n")  # a trial recorded twice (same verdict): first wins
    view = read_view(path)
    row = next(t for t in view.tasks if t.task_id == first["task_id"])
    trial = next(x for x in row.trials if x.episode.trial == first["trial"])
    assert trial.episode.output == first["episode"]["output"]
    assert len(row.trials) == row.n


RUNNER = textwrap.dedent(
    """
    import sys, time
    from ek.agents.base import Episode, TaskSpec
    from ek.agents.harness import run_suite

    def agent(task):
        time.sleep(0.02)
        return Episode(task.task_id, output=task.gold)

    tasks = [TaskSpec(f"t{i}", gold=i % 3) for i in range(12)]
    run_suite(agent, tasks, k=4, store=sys.argv[1], concurrency=1)
    """
)


def test_a_store_still_being_written_by_another_process(tmp_path) -> None:
    path = str(tmp_path / "live.trials.jsonl")
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, path])
    pages = 0
    try:
        while not os.path.exists(path) and proc.poll() is None:
            time.sleep(0.01)
        while proc.poll() is None:
            try:
                view = read_view(path)
            except ValueError:  # the header is not all written yet
                continue
            time.sleep(0.05)  # the writer appends meanwhile
            text = page(view, "live")  # the trials read back from the growing store
            html5lib.HTMLParser(strict=True).parse(text)
            shown = sum(len(b) for b in blobs(text).values())
            assert shown == view.summary.n_trials
            pages += 1
    finally:
        assert proc.wait(timeout=120) == 0
    assert pages >= 1, pages
    out = write_view(path, str(tmp_path / "live.html"))
    with open(out, encoding="utf-8") as fh:
        final = blobs(fh.read())
    assert sum(len(b) for b in final.values()) == 48 == load_run(path).n_trials


def test_a_store_replaced_while_viewed_is_a_clear_error(demo, tmp_path) -> None:
    path = str(tmp_path / "run.trials.jsonl")
    with open(demo / "candidate.trials.jsonl", "rb") as src:
        data = src.read()
    with open(path, "wb") as out:
        out.write(data)
    view = read_view(path)
    with open(path, "ab") as out:  # a trial appended (a copy of the last: the first one counts)
        out.write(data.rstrip(b"\n").rsplit(b"\n", 1)[1] + b"\n")
    assert blobs(page(view, "appended")) == blobs(
        page(read_view(str(demo / "candidate.trials.jsonl")), "x")
    )
    tmp = path + ".new"
    with open(tmp, "wb") as out:
        out.write(data)
    os.replace(tmp, path)  # another file put in its place
    with pytest.raises(StoreChangedError, match=r"changed after it was read \(another file"):
        page(view, "replaced")


def test_write_view_streams_the_page_render_view_gives(demo, tmp_path) -> None:
    run = str(demo / "candidate.trials.jsonl")
    out = tmp_path / "page.html"
    write_view(run, str(out))
    assert out.read_text(encoding="utf-8") == render_view(run)
    with pytest.raises(ValueError):  # not a run: nothing written, no temporary file left behind
        write_view(str(out), str(tmp_path / "again.html"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]
