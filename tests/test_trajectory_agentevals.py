"""Agreement with agentevals 0.0.9 trajectory-match verdicts (tests/data/agentevals).

Mapping (actual relative to expected): strict -> ``exact``, unordered -> ``any_order``,
superset -> ``superset``, subset -> ``superset`` with the two trajectories swapped (A within E is
the same statement as E containing A). agentevals compares arguments with ``==``, so ek runs with
the ``raw`` canonicalizer. Every vector where the verdicts differ must be listed, with its reason,
in ``excluded.json``: they are the places where agentevals' mode and ek's scheme do not mean the
same thing (message roles/structure in strict, argument-ignoring and partial-argument modes), plus
agentevals' greedy first-fit false negatives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ek.agents.trajectory import align_trajectory

DATA = Path(__file__).parent / "data" / "agentevals"
VECTORS = json.loads((DATA / "agentevals_trajectory_match_vectors.json").read_text())["vectors"]
EXCLUDED = json.loads((DATA / "excluded.json").read_text())
SCHEME = {"strict": "exact", "unordered": "any_order", "superset": "superset", "subset": "superset"}


def _steps(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        for tc in m.get("tool_calls") or []:
            f = tc["function"]
            out.append({"tool": f["name"], "args": json.loads(f["arguments"] or "{}")})
    return out


def _ek_verdict(v: dict[str, Any]) -> bool:
    actual, expected = _steps(v["outputs"]), _steps(v["reference_outputs"])
    mode = v["trajectory_match_mode"]
    if mode == "subset":
        actual, expected = expected, actual
    return align_trajectory(actual, expected, scheme=SCHEME[mode], canonicalizer="raw").passed  # type: ignore[arg-type]


def _key(v: dict[str, Any]) -> tuple[str, str, str]:
    return (v["case"], v["trajectory_match_mode"], v["tool_args_match_mode"])


def test_vector_file_is_complete() -> None:
    assert len(VECTORS) == 240
    assert all(isinstance(v["score"], bool) for v in VECTORS)


@pytest.mark.parametrize("v", VECTORS, ids=["-".join(_key(v)) for v in VECTORS])
def test_agreement_or_listed_exclusion(v: dict[str, Any]) -> None:
    excluded = {_key(e): e for e in EXCLUDED["excluded"]}
    ours = _ek_verdict(v)
    if _key(v) in excluded:
        e = excluded[_key(v)]
        assert e["reason_code"] in EXCLUDED["reasons"]
        assert (e["agentevals"], e["ek"]) == (v["score"], ours)  # the listed difference is real
        assert ours != v["score"]
    else:
        assert ours == v["score"]


def test_exact_argument_mode_differs_only_on_strict_message_structure() -> None:
    # Where the argument semantics coincide (agentevals "exact"), the only differences are the
    # message-level parts of strict mode that ek does not model.
    diff = [
        _key(v)
        for v in VECTORS
        if v["tool_args_match_mode"] == "exact" and _ek_verdict(v) != v["score"]
    ]
    assert {k[1] for k in diff} == {"strict"}
    assert len(diff) == 5
    agree = sum(_ek_verdict(v) == v["score"] for v in VECTORS)
    assert agree == 240 - len(EXCLUDED["excluded"]) == 199
