"""The page of one run: provenance and warnings, the headline, the task table (each task's
trials one click down), and a comparison when one was asked for. Every value is escaped."""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from collections.abc import Mapping
from typing import IO, Any

from ._assets import CSS, SCRIPT, content_security_policy
from ._html import dollars, esc, num, table, td
from ._model import RunView, TaskRow, task_dollars, trial_price
from ._svg import pass_k_svg
from ._trials import encode_trials, trial_payload

__all__ = ["sortable_head", "write_page"]


def _iv(iv: Any) -> str:
    return f"{num(iv.point)} [{num(iv.low)}, {num(iv.high)}]"


def _identity(entry: Any) -> str:
    if not isinstance(entry, Mapping):
        return str(entry)
    fp = str(entry.get("fingerprint") or "")[:12]
    kind = entry.get("type") or entry.get("name") or ""
    return f"{kind} (fingerprint {fp})" if fp else str(kind)


def _compact(value: Any) -> str:
    """A value on one line: text as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=repr, separators=(", ", ": "))


def _header_rows(h: Mapping[str, Any]) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    suite = h.get("suite")
    if isinstance(suite, Mapping):
        rows.append(
            ("suite fingerprint", f"{suite.get('fingerprint')} ({suite.get('n_tasks')} tasks)")
        )
    rows.append(("checker", f"{h.get('check')}: {_identity(h.get('checker'))}"))
    rows.append(("agent configuration", _identity(h.get("agent"))))
    if h.get("fault"):
        rows.append(("fault injected", h["fault"]))
    return rows


def _provenance(v: RunView) -> str:
    s = v.summary
    rows: list[tuple[str, Any]] = [("source", s.source or "(in memory)")]
    rows += [(k, val) for k, val in s.run.to_dict().items() if val not in (None, {}, "")]
    rows.append(("signature", s.run.signature()))
    if v.header is not None:
        rows += _header_rows(v.header)
    out = table(None, [(k, _compact(val)) for k, val in rows], cls="kv")
    configs = s.metric_configs or {}
    if configs:
        out += "<h3>Metrics, checker and judges as recorded</h3>" + table(
            ["metric", "type and fingerprint", "settings"],
            [(n, _identity(c), _compact(c.get("settings"))) for n, c in configs.items()],
        )
    return out + _prices(s.pricing)


def _prices(pricing: Any) -> str:
    if not isinstance(pricing, Mapping):
        return ""
    cat = pricing.get("prices") or ({"*": pricing["price"]} if pricing.get("price") else {})
    if not isinstance(cat, Mapping) or not cat:
        return ""
    rows = []
    for model, p in cat.items():
        p = p if isinstance(p, Mapping) else {}
        per_m = [
            num(p[k] * 1e6) if isinstance(p.get(k), (int, float)) else ""
            for k in ("input", "output", "cache_read")
        ]
        rows.append((model, *per_m, p.get("source") or ""))
    return "<h3>Price table ($ per million tokens)</h3>" + table(
        ["model", "input", "output", "cache read", "source"], rows, numeric=(1, 2, 3)
    )


def _warnings(v: RunView) -> list[str]:
    s = v.summary
    out = list(v.reliability.warnings if v.reliability else ())
    out += list(s.notes)
    if s.unscored is not None:
        out.append(f"UNSCORED: {s.unscored} (left out of every number)")
    if s.agent_failures:
        out.append(f"{s.agent_failures} trial(s) ended with an agent error (counted as failures)")
    if s.infra:
        out.append(
            f"{s.n_infra_errors} infrastructure error(s), {s.infra_share:.1%} of trials "
            "attempted (not counted as trials)"
        )
    for limit, n in (s.budget_hits or {}).items():
        out.append(f"{n} trial(s) stopped by the {limit} budget")
    if s.is_empty:
        out.append("the run has no trial")
    return out


def _run_section(v: RunView) -> str:
    warns = _warnings(v)
    items = "".join(f"<li>{esc(w)}</li>" for w in warns)
    block = f'<ul class="warnings">{items}</ul>' if warns else '<p class="ok">no warnings</p>'
    return f'<section id="run"><h2>The run</h2>{_provenance(v)}<h3>Warnings</h3>{block}</section>'


def _card(label: str, value: str, note: str = "") -> str:
    extra = f'<div class="mute">{esc(note)}</div>' if note else ""
    return (
        f'<div class="card"><div class="label">{esc(label)}</div>'
        f'<div class="big">{esc(value)}</div>{extra}</div>'
    )


def _usage_rows(groups: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    rows = []
    for name, u in groups.items():
        tok = u.get("tokens") or {}
        unpriced = ", ".join(u.get("unpriced") or [])
        rows.append((name, dollars(u.get("dollars")), *(tok.get(k, 0) for k in _KINDS), unpriced))
    return rows


def _spend(cost: Mapping[str, Any] | None) -> str:
    if not cost:
        return "<p>no cost recorded</p>"
    kinds = [k.replace("_tokens", "") for k in _KINDS]
    numeric = tuple(range(1, len(_KINDS) + 2))
    return (
        "<h3>Spend by role (agent, judge, simulator apart), tokens by kind</h3>"
        + table(
            ["role", "dollars", *kinds, "unpriced"],
            _usage_rows(cost.get("by_role") or {}),
            numeric=numeric,
        )
        + "<h3>Spend by model</h3>"
        + table(
            ["model", "dollars", *kinds, "unpriced"],
            _usage_rows(cost.get("by_model") or {}),
            numeric=numeric,
        )
    )


_KINDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


def _headline(v: RunView) -> str:
    s, r = v.summary, v.reliability
    cards = []
    if r is not None:
        cards.append(
            _card(
                "success",
                _iv(r.success_rate),
                f"{s.n_successes}/{s.n_trials} trials, Wilson {r.confidence:.0%}",
            )
        )
        top = r.pass_hat_k.get(r.k)
        if top is not None:
            cards.append(_card(f"pass^{r.k}", _iv(top), f"{r.interval} interval over tasks"))
    cost = s.cost or {}
    cards.append(
        _card("Cost-of-Pass", dollars(cost.get("cost_of_pass")), str(cost.get("reason") or ""))
    )
    chart, curve = "", ""
    if r is not None:
        chart = pass_k_svg(r.pass_hat_k, r.pass_at_k)
        curve = table(
            ["k", "pass@k", "pass^k"],
            [(k, _iv(r.pass_at_k[k]), _iv(r.pass_hat_k[k])) for k in sorted(r.pass_hat_k)],
            numeric=(0,),
        )
    metrics = table(
        ["metric", "value", "better"],
        [
            (n, num(m.value), "higher" if m.higher_is_better else "lower")
            for n, m in s.metrics.items()
        ],
        numeric=(1,),
    )
    return (
        f'<section id="headline"><h2>Headline</h2><div class="cards">{"".join(cards)}</div>'
        f'<div class="cards"><div>{chart}</div><div>{curve}</div></div>'
        f"{_spend(s.cost)}<h3>Metrics</h3>{metrics}</section>"
    )


def _task_cells(t: TaskRow, i: int, spent: float | None) -> str:
    ph = t.pass_hat
    flags = ("flaky" if t.flaky else "") + (" failed" if t.failed else "")
    button = (
        f'<button class="open" type="button" data-trials="ek-trials-{i}" aria-expanded="false">'
        f"trials</button>"
        if t.trials
        else ""
    )
    return (
        f'<tr data-task="{esc(t.task_id)}" data-failed="{int(t.failed)}" data-flaky="{int(t.flaky)}">'
        f"<td>{button}</td>"
        + td(t.task_id, "task")
        + td(", ".join(t.slices))
        + td(t.n, "num", t.n)
        + td(t.c, "num", t.c)
        + td(num(t.c / t.n if t.n else math.nan, 3), "num", t.c / t.n if t.n else math.nan)
        + td(num(ph, 3), "num", ph)
        + td(flags.strip() or "consistent", None, flags.strip())
        + td(dollars(spent), "num", -1.0 if spent is None else spent)
        + td(t.infra_errors, "num", t.infra_errors)
        + td(t.retries, "num", t.retries)
        + "</tr>"
    )


_TASK_HEAD = (
    ("", None),
    ("task", "text"),
    ("slices", "text"),
    ("trials", "num"),
    ("successes", "num"),
    ("success rate", "num"),
    ("pass^k", "num"),
    ("flags", "text"),
    ("cost", "num"),
    ("infra errors", "num"),
    ("retries", "num"),
)


def sortable_head(cols: tuple[tuple[str, str | None], ...]) -> str:
    """A header row whose columns sort on click (with the page's script)."""
    cells = "".join(
        f'<th><button class="sort" type="button" data-type="{kind}">{esc(name)}</button></th>'
        if kind
        else f"<th>{esc(name)}</th>"
        for name, kind in cols
    )
    return f"<thead><tr>{cells}</tr></thead>"


def _tasks(v: RunView, blobs: IO[str]) -> str:
    """The task table; each task's trials go to ``blobs`` as they are read, one task at a time
    (they come last in the page, after the table and the comparison, so it paints first)."""
    price = trial_price(v.summary)
    groups = []
    for i, t in enumerate(v.tasks):
        trials = list(t.trials)  # read once (from the store, for a store), one task at a time
        groups.append(
            f"<tbody>{_task_cells(t, i, task_dollars(trials, price))}"
            f'<tr class="detail" hidden><td colspan="{len(_TASK_HEAD)}"></td></tr></tbody>'
        )
        if trials:
            blob = encode_trials([trial_payload(x, price) for x in trials])
            blobs.write(
                f'<script type="application/octet-stream" id="ek-trials-{i}">{blob}</script>'
            )
    controls = (
        '<div class="controls" id="task-controls" hidden>'
        '<input type="search" id="task-search" placeholder="search task id" aria-label="search task id">'
        '<label><input type="checkbox" id="only-failed"> only failed</label>'
        '<label><input type="checkbox" id="only-flaky"> only flaky</label>'
        '<span id="task-count" class="mute"></span></div>'
        '<noscript><p class="mute">Sorting, filtering and the trials of each task need '
        "JavaScript; the table below is complete without it.</p></noscript>"
    )
    k = v.summary.k
    return (
        f'<section id="tasks-section"><h2>Tasks</h2><p class="mute">pass^k at k={k}; a task is '
        "flaky when some of its trials passed and some failed. Open a task's trials, then a "
        f'trial, to see its steps.</p>{controls}<table id="tasks" class="sortable">'
        f"{sortable_head(_TASK_HEAD)}{''.join(groups)}</table></section>"
    )


def write_page(v: RunView, title: str, out: IO[str], compare: str = "") -> None:
    """Write the whole HTML document to ``out``, each task's trials as they are read: they
    wait in a temporary file until the table and the comparison are written, so memory holds
    one task's trials at a time, not the page."""
    nav = '<a href="#run">run</a> · <a href="#headline">headline</a> · <a href="#tasks-section">tasks</a>'
    if compare:
        nav += ' · <a href="#compare">comparison</a>'
    with tempfile.TemporaryFile("w+", encoding="utf-8") as blobs:
        tasks = _tasks(v, blobs)
        out.write(
            "<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{esc(content_security_policy())}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{esc(title)}</h1><p class='mute'>{nav}</p>"
            f"{_run_section(v)}{_headline(v)}{tasks}{compare}"
        )
        blobs.seek(0)
        shutil.copyfileobj(blobs, out)
    out.write(f"<script>{SCRIPT}</script></body></html>\n")
