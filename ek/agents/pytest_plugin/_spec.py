"""The ``ek`` marker: how many trials a test gets and the criterion that decides its outcome.

``@pytest.mark.ek(trials=5, pass_hat_k=3, at_least=0.6)`` reads "run it 5 times; it passes when
pass^3 (the chance that 3 trials drawn from the 5 all succeed) is at least 0.6". Three criteria:

=================================  ==================================================
marker                             the test passes when
=================================  ==================================================
``ek()`` / ``ek(trials=5)``        every trial passes (pass^n = 1)
``ek(pass_hat_k=3, at_least=0.6)`` pass^3 >= 0.6 (tau-bench estimator; ``at_least`` 1 by default)
``ek(at_least=0.7)``               the lower end of the Wilson interval of the success rate
                                   (at ``confidence``, 0.95 by default) >= 0.7
=================================  ==================================================

``--ek-trials N`` sets the trials of every ek test, overriding the marker's ``trials`` (a nightly
job runs more trials than a quick local run); without either a test gets one trial.

``trials`` is at most :data:`ek._validate.MAX_TRIALS` (10,000): each trial is a pytest item,
and ``trials=10**9`` would exhaust memory before the first one ran.

This module is the standard library and ek's core validators only (pytest loads it for every
session).

Example:
    >>> s = spec_from_marker({"trials": 5, "pass_hat_k": 3, "at_least": 0.6})
    >>> s.kind, s.k, s.describe()
    ('pass^k', 3, 'pass^3 >= 0.6')
    >>> spec_from_marker({"at_least": 0.7}, cli_trials=20).describe()
    'success >= 0.7 (95% Wilson lower bound)'
    >>> spec_from_marker({"trials": 0})
    Traceback (most recent call last):
    ...
    ValueError: @pytest.mark.ek: trials must be an int >= 1, got 0
    >>> trial_id(0, 5), base_test_id("t.py::test_a[x-ek-trial-1-of-5]", 0, 5)
    ('ek-trial-1-of-5', 't.py::test_a[x]')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ek._validate import MAX_TRIALS, short_repr

__all__ = [
    "DEFAULT_CONFIDENCE",
    "MARKER_KEYS",
    "TrialSpec",
    "base_test_id",
    "spec_from_marker",
    "trial_id",
]

#: The coverage of the Wilson interval when the marker names none.
DEFAULT_CONFIDENCE = 0.95

#: The keyword arguments the ``ek`` marker accepts.
MARKER_KEYS = ("trials", "pass_hat_k", "at_least", "confidence")


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"@pytest.mark.ek: {name} must be an int >= 1, got {short_repr(value)}")
    if value > MAX_TRIALS:  # every trial is a pytest item: 10**9 of them exhaust memory
        raise ValueError(
            f"@pytest.mark.ek: {name} must be at most {MAX_TRIALS} (ek's limit of trials per "
            f"test), got {short_repr(value)}"
        )
    return value


def _unit(name: str, value: Any, *, open_interval: bool = False) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok:
        x = float(value)
        ok = not math.isnan(x) and (0.0 < x < 1.0 if open_interval else 0.0 <= x <= 1.0)
    if not ok:
        where = "(0, 1)" if open_interval else "[0, 1]"
        raise ValueError(f"@pytest.mark.ek: {name} must be a number in {where}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class TrialSpec:
    """The trials of one test and its reliability criterion (see the module docstring).

    Attributes:
        trials: Trials of the test (>= 1).
        pass_hat_k: The k of the pass^k criterion, or ``None``.
        at_least: The threshold of the criterion, or ``None`` (every trial must pass, or
            pass^k must be 1 when ``pass_hat_k`` is given).
        confidence: Coverage of the Wilson interval shown (and used by the Wilson criterion).
    """

    trials: int
    pass_hat_k: int | None = None
    at_least: float | None = None
    confidence: float = DEFAULT_CONFIDENCE

    def __post_init__(self) -> None:
        _count("trials", self.trials)
        if self.pass_hat_k is not None:
            _count("pass_hat_k", self.pass_hat_k)
            if self.pass_hat_k > self.trials:
                raise ValueError(
                    f"@pytest.mark.ek: pass_hat_k must be <= trials, got pass_hat_k="
                    f"{self.pass_hat_k} with trials={self.trials} (pass^k needs k trials)"
                )
        if self.at_least is not None:
            object.__setattr__(self, "at_least", _unit("at_least", self.at_least))
        object.__setattr__(
            self, "confidence", _unit("confidence", self.confidence, open_interval=True)
        )

    @property
    def kind(self) -> str:
        """``"pass^k"``, ``"wilson"`` (a lower confidence bound) or ``"all"`` (every trial)."""
        if self.pass_hat_k is not None:
            return "pass^k"
        return "all" if self.at_least is None else "wilson"

    @property
    def k(self) -> int:
        """The k of the pass^k shown for this test: ``pass_hat_k``, else ``trials``."""
        return self.trials if self.pass_hat_k is None else self.pass_hat_k

    @property
    def threshold(self) -> float:
        """The value the criterion must reach (1.0 when ``at_least`` is not given)."""
        return 1.0 if self.at_least is None else self.at_least

    def describe(self) -> str:
        """The criterion in words.

        Example:
            >>> TrialSpec(3).describe()
            'every trial passes'
        """
        if self.kind == "all":
            return "every trial passes"
        if self.kind == "pass^k":
            return f"pass^{self.k} >= {self.threshold:g}"
        return f"success >= {self.threshold:g} ({self.confidence * 100:g}% Wilson lower bound)"

    def to_dict(self) -> dict[str, Any]:
        """Plain data (what a worker sends to the controller)."""
        return {
            "trials": self.trials,
            "pass_hat_k": self.pass_hat_k,
            "at_least": self.at_least,
            "confidence": self.confidence,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrialSpec:
        """Inverse of :meth:`to_dict`."""
        return cls(
            int(data["trials"]),
            data.get("pass_hat_k"),
            data.get("at_least"),
            float(data.get("confidence", DEFAULT_CONFIDENCE)),
        )


def spec_from_marker(
    kwargs: Mapping[str, Any] | None, *, args: tuple[Any, ...] = (), cli_trials: int | None = None
) -> TrialSpec:
    """The :class:`TrialSpec` of a test from its marker's arguments and ``--ek-trials``.

    Args:
        kwargs: The marker's keyword arguments (``None`` when the test has no marker but uses
            the ``ek_episode`` fixture).
        args: The marker's positional arguments (refused: every argument is named).
        cli_trials: ``--ek-trials``, which overrides the marker's ``trials``.

    Raises:
        ValueError: an unknown or positional argument, or a value out of range (the message
            names the argument, what was expected and what was given).
    """
    if args:
        raise ValueError(
            f"@pytest.mark.ek takes keyword arguments only ({', '.join(MARKER_KEYS)}), "
            f"got positional {args!r:.100}"
        )
    kw = dict(kwargs or {})
    unknown = sorted(set(kw) - set(MARKER_KEYS))
    if unknown:
        raise ValueError(
            f"@pytest.mark.ek got unknown argument(s) {unknown}; expected some of {list(MARKER_KEYS)}"
        )
    trials = kw.get("trials", 1)
    if cli_trials is not None:
        trials = cli_trials
        k = kw.get("pass_hat_k")
        if isinstance(k, int) and not isinstance(k, bool) and k > cli_trials:
            raise ValueError(
                f"--ek-trials {cli_trials} is fewer than this test's pass_hat_k={k} "
                "(pass^k needs at least k trials)"
            )
    return TrialSpec(
        trials,
        kw.get("pass_hat_k"),
        kw.get("at_least"),
        kw.get("confidence", DEFAULT_CONFIDENCE),
    )


def trial_id(index: int, trials: int) -> str:
    """The parametrization id of trial ``index`` (0-based) of ``trials``: ``ek-trial-1-of-5``."""
    return f"ek-trial-{index + 1}-of-{trials}"


def base_test_id(nodeid: str, index: int, trials: int) -> str:
    """The test's own node id: ``nodeid`` without the trial's parametrization id.

    Example:
        >>> base_test_id("t.py::test_a[ek-trial-2-of-3]", 1, 3)
        't.py::test_a'
    """
    part = trial_id(index, trials)
    if nodeid.endswith(f"[{part}]"):
        return nodeid[: -len(part) - 2]
    if nodeid.endswith(f"-{part}]"):
        return nodeid[: -len(part) - 2] + "]"
    return nodeid
