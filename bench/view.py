"""Size and first paint of ``ek-agents view`` against trials.

Builds trial stores of 10^3, 10^4 and 10^5 trials from the demo's own records (the candidate's
run, k = 3: 30 tasks with their steps, observations, final states and every metric's Score),
cloned onto ``trials / 10`` synthetic tasks of k = 10 trials, writes the page of each, and
opens it in headless Chromium (the operating system's package, through Playwright) from
``file://``. Printed per size: the store's and the page's size, the CPU seconds and the peak
memory (resident set) of a fresh process whose only work is ``write_view`` (importing ek
included; the CPU of any process it waited for, such as a store's parallel readers, counted),
and the browser's first contentful paint and load event after navigation (median
of three fresh pages).

Run: ``.venv/bin/python bench/view.py [--sizes 1000,10000,100000]``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

K = 10
SIZES = (1_000, 10_000, 100_000)


def _templates(folder: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The demo candidate's store (k = 3): its header and its records."""
    from ek.agents.demo import run_demo

    run_demo(folder, k=3, inspect=False, plots=False, stream=io.StringIO(), progress=False)
    with open(os.path.join(folder, "candidate.trials.jsonl"), encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh if line.strip()]
    return lines[0], lines[1:]


def _records(templates: Sequence[Mapping[str, Any]], n_tasks: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(39)
    for i in range(n_tasks):
        p = rng.random()
        for t in range(K):
            rec = dict(templates[(i * K + t) % len(templates)])
            ok = rng.random() < p
            task = f"task-{i:06d}"
            rec["task_id"], rec["trial"], rec["success"] = task, t, ok
            rec["episode"] = {**rec["episode"], "task_id": task, "trial": t, "success": ok}
            yield rec


def build_store(path: str, n_trials: int, templates: Any) -> None:
    """``n_trials`` trials (``n_trials / K`` tasks) in the store format, header first."""
    header, recs = templates
    n_tasks = max(1, n_trials // K)
    h = dict(header)
    h["k"] = K
    h["suite"] = {"fingerprint": f"synthetic-{n_tasks}", "n_tasks": n_tasks}
    h["tasks"] = {f"task-{i:06d}": ["synthetic"] for i in range(n_tasks)}
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(h) + "\n")
        for rec in _records(recs, n_tasks):
            fh.write(json.dumps(rec) + "\n")


#: A fresh process that writes the page and prints its CPU seconds (with any reader processes
#: it waited for) and its peak RSS (KB).
_WRITE = """
import resource, sys, time
from ek.agents.view import write_view
write_view(sys.argv[1], sys.argv[2])
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.process_time() + kids.ru_utime + kids.ru_stime,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _write(store: str, out: str) -> tuple[float, float]:
    """``write_view(store, out)`` in a fresh process: its (CPU seconds, peak RSS in MB)."""
    done = subprocess.run(
        [sys.executable, "-c", _WRITE, store, out], capture_output=True, text=True, check=True
    )
    cpu, kb = done.stdout.split()
    return float(cpu), int(kb) / 1024


_FCP = """new Promise(done => new PerformanceObserver(list => {
  for (const e of list.getEntries()) { if (e.name === "first-contentful-paint") done(e.startTime); }
}).observe({type: "paint", buffered: true}))"""


def _paint(browser: Any, path: str) -> tuple[float, float]:
    """(first contentful paint, load event) in seconds after navigation, from a fresh page."""
    page = browser.new_page()
    try:
        page.goto("file://" + os.path.abspath(path), wait_until="load", timeout=600_000)
        fcp = page.evaluate(_FCP)
        load = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventStart")
        return fcp / 1000, load / 1000
    finally:
        page.close()


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    exe = os.environ.get("EK_CHROMIUM") or shutil.which("chromium")
    if exe is None:
        print("Chromium not found (apt-get install chromium, or set EK_CHROMIUM)", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        templates = _templates(os.path.join(tmp, "demo"))
        pages = []
        for n in (int(x) for x in args.sizes.split(",")):
            store, out = os.path.join(tmp, f"run-{n}.jsonl"), os.path.join(tmp, f"view-{n}.html")
            build_store(store, n, templates)
            pages.append((n, store, out, *_write(store, out)))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
            for n, store, out, took, mb in pages:
                paints = [_paint(browser, out) for _ in range(3)]
                fcp = statistics.median(x for x, _ in paints)
                load = statistics.median(y for _, y in paints)
                rows.append((n, os.path.getsize(store), os.path.getsize(out), took, mb, fcp, load))
            browser.close()
    print(
        f"{'trials':>8} {'store MB':>9} {'page MB':>8} {'KB/trial':>9} {'write s':>8} "
        f"{'write peak MB':>14} {'first paint s':>14} {'load s':>7}"
    )
    for n, st, pg, took, mb, fcp, load in rows:
        print(
            f"{n:>8} {st / 1e6:>9.1f} {pg / 1e6:>8.2f} {pg / n / 1e3:>9.2f} {took:>8.1f} "
            f"{mb:>14.0f} {fcp:>14.2f} {load:>7.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
