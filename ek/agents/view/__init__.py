"""``ek-agents view``: one self-contained HTML file of a run, its trials and a comparison.

The file needs no server and loads nothing: its style sheet and its script are inline and a
Content-Security-Policy allows only them (by hash), so it opens from ``file://`` offline. The
summary (provenance and warnings, the headline with pass^k against k as an inline SVG, spend by
role and token kind, the task table) is plain HTML and reads with JavaScript off; the script
only sorts and filters the task table and opens a task's trials. Each task's trials are
embedded as gzip-compressed JSON (base64 text) and rendered on demand with ``textContent``:
what an agent, a tool or a trace wrote stays text (docs: ``docs/view.md``).

Example:
    >>> import os, tempfile
    >>> from ek.agents.base import Episode, RunProvenance
    >>> from ek.agents.harness import RunSummary, save_agent_baseline
    >>> d = tempfile.mkdtemp()
    >>> p = os.path.join(d, "base.json")
    >>> _ = save_agent_baseline(RunSummary(RunProvenance(agent="a<b>"), 1, {"t": (1, 1)}), p)
    >>> out = write_view(p, os.path.join(d, "view.html"))
    >>> text = open(out, encoding="utf-8").read()
    >>> "agent:a&lt;b&gt;" in text and "a<b>" not in text
    True
"""

from __future__ import annotations

import argparse
import functools
import io
import os
import sys
from collections.abc import Mapping
from typing import IO, Any

from ek.agents.harness import load_run

from ._compare import compare_section, gate_decision, task_changes
from ._model import RunView, TaskRow, Trial, read_view
from ._page import write_page
from ._trials import MAX_EMBED

__all__ = [
    "MAX_EMBED",
    "RunView",
    "TaskRow",
    "Trial",
    "add_view_arguments",
    "gate_decision",
    "read_view",
    "render_view",
    "task_changes",
    "view_command",
    "write_view",
]


def render_view(
    run: str | os.PathLike[str],
    *,
    compare: str | os.PathLike[str] | None = None,
    success_scorer: str | None = None,
    trace_options: Mapping[str, Any] | None = None,
) -> str:
    """The HTML page of ``run`` (any file ``ek-agents report`` reads), compared with
    ``compare`` (the baseline) when given. ``success_scorer`` (an Inspect log's deciding
    scorer) and ``trace_options`` (a trace file's attributes) are
    :func:`~ek.agents.harness.load_run`'s, for both runs.

    Raises:
        FileNotFoundError: a file is missing.
        ValueError: a file is not a run ek can read.
    """
    buf = io.StringIO()
    _write(run, buf, compare, success_scorer, trace_options)
    return buf.getvalue()


def _write(
    run: str | os.PathLike[str],
    out: IO[str],
    compare: str | os.PathLike[str] | None,
    success_scorer: str | None,
    trace_options: Mapping[str, Any] | None,
) -> None:
    v = read_view(run, success_scorer=success_scorer, trace_options=trace_options)
    title = f"ek-agents view: {v.summary.run.agent or os.path.basename(os.fspath(run))}"
    section = ""
    if compare is not None:
        # both runs as ``ek-agents gate`` reads them: their summaries alone
        gated = functools.partial(
            load_run, success_scorer=success_scorer, trace_options=trace_options, episodes=False
        )
        section = compare_section(gated(run), gated(compare), os.fspath(compare))
    write_page(v, title, out, section)


def write_view(
    run: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    compare: str | os.PathLike[str] | None = None,
    success_scorer: str | None = None,
    trace_options: Mapping[str, Any] | None = None,
) -> str:
    """Write the page of ``run`` to ``out`` (default: the run's path with ``.html``) and
    return the path written (see :func:`render_view`). The page is written as it is built
    (a task's trials at a time) to a temporary file beside ``out``, which replaces ``out``
    once whole."""
    path = os.fspath(out) if out is not None else os.path.splitext(os.fspath(run))[0] + ".html"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"view: the folder of {path!r} does not exist")
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            _write(run, fh, compare, success_scorer, trace_options)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


def add_view_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The arguments of ``ek-agents view``."""
    p.add_argument(
        "run", metavar="RUN", help="a trial store, a baseline, an Inspect log or a trace file"
    )
    p.add_argument("--compare", metavar="RUN2", help="compare with this run (the baseline)")
    p.add_argument("-o", "--output", metavar="FILE.html", help="where to write (default: RUN.html)")
    p.add_argument(
        "--success-scorer",
        metavar="NAME",
        help="for an Inspect log: the scorer that decides success",
    )
    return p


def view_command(args: argparse.Namespace, trace_options: Mapping[str, Any] | None = None) -> int:
    """Run ``ek-agents view``: 0 when written, 2 when a run cannot be read."""
    try:
        path = write_view(
            args.run,
            args.output,
            compare=args.compare,
            success_scorer=args.success_scorer,
            trace_options=trace_options,
        )
    except (OSError, ValueError, TypeError) as e:
        print(f"ek-agents: error: {e}", file=sys.stderr)
        return 2
    print(
        f"view written to {path} (open it in a browser: file://{os.path.abspath(path)})",
        file=sys.stderr,
    )
    return 0
