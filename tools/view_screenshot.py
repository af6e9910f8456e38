"""Regenerate the README's screenshots of the demo's view (``make view-screenshots``).

Runs the demo (k = 5, no Inspect part, no plots) in a temporary folder, writes the candidate's
page compared with the baseline (what ``ek-agents demo`` writes as ``view.html``), opens it in
headless Chromium (the operating system's package, through Playwright) and saves two PNGs:
``docs/view-summary.png`` (the headline) and ``docs/view-trial.png`` (a failed trial of the
first hard refund task that failed, expanded: its steps, alignment and tool-call rows, down to its scores).
"""

from __future__ import annotations

import io
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    from playwright.sync_api import sync_playwright

    from ek.agents.demo import run_demo
    from ek.agents.view import write_view

    exe = os.environ.get("EK_CHROMIUM") or shutil.which("chromium")
    if exe is None:
        print("Chromium not found (apt-get install chromium, or set EK_CHROMIUM)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        run_demo(tmp, k=5, inspect=False, plots=False, stream=io.StringIO(), progress=False)
        page_path = write_view(
            os.path.join(tmp, "candidate.trials.jsonl"),
            os.path.join(tmp, "view.html"),
            compare=os.path.join(tmp, "baseline.json"),
        )
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto("file://" + os.path.abspath(page_path))
            page.locator("#headline").screenshot(
                path=os.path.join(ROOT, "docs", "view-summary.png")
            )
            page.fill("#task-search", "refund-hard")
            page.check("#only-failed")
            group = page.locator("#tasks > tbody:not([hidden])").first
            group.locator("button.open").click()
            failed = group.locator("details.trial[data-ok=false]")
            with_steps = failed.filter(has_not_text=" 0 steps")
            trial = (with_steps if with_steps.count() else failed).first
            trial.locator("summary").click()
            # the trial from its summary down to its scores (its input, output and final
            # state below are cut)
            box = "e => { const r = e.getBoundingClientRect(); return [r.left, r.top + scrollY, r.width]; }"
            x, y, width = trial.evaluate(box)
            end = trial.locator("h3:has-text('Scores')").evaluate(box)[1]
            clip = {"x": x, "y": y, "width": width, "height": end - y}
            page.screenshot(
                path=os.path.join(ROOT, "docs", "view-trial.png"), full_page=True, clip=clip
            )
            browser.close()
    print("wrote docs/view-summary.png and docs/view-trial.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
