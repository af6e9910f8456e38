"""The plugin's command-line options, read and checked once per session.

A bad value is a :class:`pytest.UsageError` (pytest prints ``ERROR: ...`` and exits with 4), never
a traceback. Standard library, pytest and ek's core validators only (pytest loads this for
every session).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from ek._validate import MAX_TRIALS

__all__ = ["PROVENANCE_KEYS", "Options", "add_options", "read_options"]

#: The run-provenance fields ``--ek-provenance KEY=VALUE`` may set (the gate refuses runs whose
#: simulator, suite_version or scaffold differ).
PROVENANCE_KEYS = ("agent", "model", "scaffold", "simulator", "suite_version")


@dataclass(frozen=True)
class Options:
    """The session's ek options (see ``pytest --help``, group ``ek``)."""

    trials: int | None = None
    seed: int = 0
    store: str | None = None
    baseline: str | None = None
    save_baseline: str | None = None
    tolerance: float = 0.0
    allow_undefined: tuple[str, ...] = ()
    provenance: Mapping[str, str] = field(default_factory=dict)

    @property
    def persists(self) -> bool:
        """True when the session must write its trials (a store, a gate or a baseline)."""
        return bool(self.store or self.baseline or self.save_baseline)


def add_options(parser: pytest.Parser) -> None:
    """Register the ``--ek-*`` options."""
    g = parser.getgroup("ek", "ek-agents: k trials per ek test, pass^k, intervals, a CI gate")
    g.addoption(
        "--ek-trials",
        type=int,
        metavar="N",
        help="trials of every ek test (@pytest.mark.ek or the ek_episode fixture); overrides "
        "the marker's trials",
    )
    g.addoption("--ek-seed", type=int, default=0, metavar="N", help="run seed of the trials (0)")
    g.addoption(
        "--ek-store",
        metavar="PATH",
        help="write the trials as a run store (read by ek-agents report and ek-agents gate)",
    )
    g.addoption(
        "--ek-baseline",
        metavar="PATH",
        help="gate the session against a baseline (a baseline, a store or an Inspect log), as "
        "ek-agents gate does: exit 1 only on a statistically supported regression",
    )
    g.addoption("--ek-save-baseline", metavar="PATH", help="save the session as a baseline")
    g.addoption(
        "--ek-tolerance",
        type=float,
        default=0.0,
        metavar="T",
        help="the gate's allowed worsening (0)",
    )
    g.addoption(
        "--ek-allow-undefined",
        action="append",
        default=[],
        metavar="CHECK",
        help="let this gate check's change be undefined (e.g. an unknown cost) without failing",
    )
    g.addoption(
        "--ek-provenance",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"the run's provenance ({', '.join(PROVENANCE_KEYS)}); the gate refuses runs "
        "whose simulator, suite_version or scaffold differ",
    )


def _provenance(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in PROVENANCE_KEYS or not value:
            raise pytest.UsageError(
                f"--ek-provenance expects KEY=VALUE with KEY one of {list(PROVENANCE_KEYS)} and "
                f"a non-empty VALUE, got {item!r}"
            )
        out[key] = value
    return out


def read_options(config: pytest.Config) -> Options:
    """The session's :class:`Options`.

    Raises:
        pytest.UsageError: ``--ek-trials`` below 1 or above ``MAX_TRIALS``, a negative or
            non-finite tolerance, or a malformed ``--ek-provenance``.
    """
    get: Any = config.getoption
    trials = get("ek_trials")
    if trials is not None and trials < 1:
        raise pytest.UsageError(f"--ek-trials must be an int >= 1, got {trials}")
    if trials is not None and trials > MAX_TRIALS:  # each trial is an item: checked before any
        raise pytest.UsageError(
            f"--ek-trials must be at most {MAX_TRIALS} (ek's limit of trials per test), got {trials}"
        )
    tol = float(get("ek_tolerance"))
    if not tol >= 0 or math.isinf(tol):
        raise pytest.UsageError(f"--ek-tolerance must be a finite number >= 0, got {tol}")
    return Options(
        trials=trials,
        seed=int(get("ek_seed")),
        store=get("ek_store"),
        baseline=get("ek_baseline"),
        save_baseline=get("ek_save_baseline"),
        tolerance=tol,
        allow_undefined=tuple(get("ek_allow_undefined") or ()),
        provenance=_provenance(list(get("ek_provenance") or ())),
    )
