"""A task's trials as the page embeds them: plain JSON data, gzip-compressed and base64-encoded
(only ``A-Z a-z 0-9 + / =`` reach the HTML, so nothing a trial holds can end its block), read
and rendered on demand by the page's script with ``textContent`` (never as markup).

A long value is kept up to :data:`MAX_EMBED` characters (the page shows its first 2,000 with
"show all"); what is cut is said in the text."""

from __future__ import annotations

import base64
import gzip
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ek.base import Score

from ._html import dollars
from ._model import Trial

__all__ = ["ALIGNMENT_LEGEND", "MAX_EMBED", "encode_trials", "trial_payload"]

#: At most this many characters of one value (an observation, an output, a state) are embedded.
MAX_EMBED = 1_000_000

#: The trajectory alignment's operations, as :class:`~ek.agents.trajectory.TrajectoryMetric`
#: explains them (actual relative to expected).
ALIGNMENT_LEGEND = (
    ("match", "the actual step is the expected step (cost 0)"),
    ("substitute", "same tool, some arguments differ: costs their importance"),
    ("insert", "an actual step not expected (extra): costs its mass (free under in_order)"),
    ("delete", "an expected step the agent did not take (missing): costs its mass"),
)


def text(value: Any) -> str:
    """A value as the page holds it: strings as they are, anything else as compact JSON (the
    page indents it when shown; compact, it is written by json's C encoder)."""
    if value is None:
        return ""
    if isinstance(value, str):
        s = value
    else:
        try:
            s = json.dumps(value, ensure_ascii=False, default=repr, allow_nan=True)
        except (ValueError, TypeError, RecursionError):
            s = repr(value)
    if len(s) > MAX_EMBED:
        return f"{s[:MAX_EMBED]}\n... ({len(s) - MAX_EMBED:,} more characters not embedded in the page)"
    return s


def _steps(trial: Trial) -> list[dict[str, Any]]:
    return [
        {
            "i": i,
            "tool": text(s.tool),
            "args": text(dict(s.args)),
            "obs": text(s.observation),
            "error": text(s.error) or None,
            "fault": bool(s.error and "injected fault" in s.error),
        }
        for i, s in enumerate(trial.episode.trajectory)
    ]


def _arg_diffs(args: Any) -> str:
    if not isinstance(args, Sequence) or isinstance(args, str):
        return ""
    return "; ".join(
        f"{a.get('arg')}: {a.get('verdict')}, got {a.get('predicted')!r}, expected "
        f"{a.get('expected')!r} (cost {a.get('importance')})"
        for a in args
        if isinstance(a, Mapping)
    )


def _alignment(name: str, sc: Score) -> dict[str, Any] | None:
    rows = sc.detail.get("alignment")
    if not isinstance(rows, Sequence) or isinstance(rows, str):
        return None
    return {
        "metric": name,
        "reason": text(sc.detail.get("reason")),
        "legend": [list(x) for x in ALIGNMENT_LEGEND],
        "rows": [
            {
                "op": text(r.get("op")),
                "expected": text(r.get("expected")),
                "actual": text(r.get("actual")),
                "tool": text(r.get("tool")),
                "cost": text(r.get("cost")),
                "args": _arg_diffs(r.get("args")),
            }
            for r in rows
            if isinstance(r, Mapping)
        ],
    }


_CALL_ROWS = ("matched", "wrong_args", "missing", "extra")


def _call_row(kind: str, r: Mapping[str, Any]) -> dict[str, Any]:
    if kind == "wrong_args":
        detail = (
            f"{r.get('arg')}: {r.get('verdict')}, got {r.get('predicted')!r}, expected "
            f"{r.get('expected')!r} ({r.get('reason')}), cost {r.get('importance')}"
        )
    elif kind == "matched":
        detail = "exact" if r.get("exact") else "matched with argument errors (below)"
    else:
        detail = f"args {text(r.get('args'))}, cost {r.get('cost')}"
    return {
        "kind": kind,
        "gold": text(r.get("gold")),
        "pred": text(r.get("pred")),
        "tool": text(r.get("tool")),
        "detail": detail,
    }


def _calls(name: str, sc: Score) -> dict[str, Any] | None:
    det = sc.detail
    if not any(isinstance(det.get(k), Sequence) for k in _CALL_ROWS):
        return None
    rows = [
        _call_row(kind, r)
        for kind in _CALL_ROWS
        for r in (det.get(kind) or ())
        if isinstance(r, Mapping)
    ]
    return {"metric": name, "reason": text(det.get("reason")), "rows": rows}


def _row_lists(name: str, sc: Score) -> list[dict[str, Any]]:
    """Every other list of records a Score's detail holds (a policy's violations, a
    simulator's attribution, a judge's verdicts): one table each, a column per key."""
    out = []
    for key, rows in sc.detail.items():
        if key in ("alignment", *_CALL_ROWS) or isinstance(rows, (str, bytes)):
            continue
        if not isinstance(rows, Sequence) or not rows:
            continue
        records = [r for r in rows if isinstance(r, Mapping)]
        if not records:
            continue
        head = list(dict.fromkeys(str(k) for r in records for k in r))
        out.append(
            {
                "title": f"{name}: {key}",
                "head": head,
                "rows": [[text(r.get(h)) for h in head] for r in records],
            }
        )
    return out


def _score_row(name: str, sc: Score) -> dict[str, Any]:
    v = sc.value
    return {
        "name": name,
        "value": "n/a" if not math.isfinite(v) else f"{v:.6g}",
        "passed": text(sc.detail.get("passed")),
        "reason": text(sc.detail.get("reason")),
    }


def _verdict(trial: Trial) -> tuple[str, str]:
    ep = trial.episode
    if trial.ok is None:
        return "unscored", "nothing decided this trial's success"
    word = "passed" if trial.ok else "failed"
    checker = ""
    for sc in trial.scores.values():
        if "checker" in sc.detail:
            checker = f" by the checker {sc.detail['checker']}"
            break
    why = f"{word}{checker}" + (f"; the agent's error: {ep.error}" if ep.error else "")
    return word, why


def trial_payload(trial: Trial, price: Any) -> dict[str, Any]:
    """What the page shows of one trial (every string as plain text)."""
    from ek.agents.cost import episode_dollars

    ep = trial.episode
    word, why = _verdict(trial)
    scores = sorted(trial.scores.items())
    return {
        "trial": ep.trial,  # an int (Episode checks it); every other value below is text
        "ok": trial.ok,
        "verdict": word,
        "verdict_reason": why,
        "error": text(ep.error) or None,
        "cost": dollars(episode_dollars(ep, price)) if ep.cost else "cost not recorded",
        "steps": _steps(trial),
        "faults": [s.error for s in ep.trajectory if s.error and "injected fault" in s.error],
        "alignments": [a for n, sc in scores if (a := _alignment(n, sc)) is not None],
        "calls": [c for n, sc in scores if (c := _calls(n, sc)) is not None],
        "scores": [_score_row(n, sc) for n, sc in scores],
        "tables": [t for n, sc in scores for t in _row_lists(n, sc)],
        "input": text(ep.input),
        "output": text(ep.output),
        "final_state": text(ep.final_state),
        "metadata": text(dict(ep.metadata)) if ep.metadata else "",
    }


def encode_trials(payloads: Sequence[Mapping[str, Any]]) -> str:
    """The trials as base64 of gzip of JSON (deterministic: no timestamp in the gzip header).

    Example:
        >>> import base64, gzip, json
        >>> blob = encode_trials([{"tool": "</script><script>alert(1)</script>"}])
        >>> "<" in blob, json.loads(gzip.decompress(base64.b64decode(blob)))[0]["tool"][:9]
        (False, '</script>')
    """
    raw = json.dumps(list(payloads), ensure_ascii=False, allow_nan=False, default=str)
    return base64.b64encode(gzip.compress(raw.encode("utf-8"), mtime=0)).decode("ascii")
