"""The README's quickstart is a doctest: what a new user copies must work."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_examples_run() -> None:
    # only the fenced ```python blocks, each ended by a blank line so fences are not output
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    text = "\n\n".join(blocks)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, "README.md", str(README), 0)
    assert test.examples, "the README lost its runnable quickstart"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0, (
        f"{runner.failures} README example(s) failed; run with -s to see them"
    )


def test_quickstart_example_runs() -> None:
    # examples/quickstart.py: three trials of one refund task judged on the final state.
    # Trials 0 and 2 leave the goal database, trial 1 claims success in text but refunded the
    # wrong order: success rate 2/3. Dollars: 3000*2.5e-6 + 9000*1.25e-6 + 400*1e-5 = 0.02275;
    # 2000*0.15e-6 + 150*0.6e-6 = 0.00039; 2500*0.15e-6 + 300*0.6e-6 = 0.000555;
    # Cost-of-Pass = 0.023695 / 2 = 0.0118475.
    import subprocess
    import sys

    script = README.parent / "examples" / "quickstart.py"
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True
    ).stdout
    assert "success rate      0.667" in out
    assert "Cost-of-Pass      $0.011848 per successful task" in out
    assert "dollars = None" in out and "small-model" in out
