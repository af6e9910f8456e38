"""The verdict: :class:`HiddenTestVerdict` and the ordered rules that decide it.

The trusted runner (:mod:`ek.agents.verifier._runner`) streams one JSON record per event through
a private pipe, each line signed: ``<hex HMAC-SHA256> <json>``, the JSON carrying a sequence
number (:func:`sign` makes such a line). :class:`Evidence` holds what a run produced (those
lines, the key, the exit status, the expected tests, the canary ids); a line with a bad
signature or out of sequence ends the report there and makes the run ``tampering``.
:data:`RULES` is an ordered list of small functions; each looks at the evidence and either
returns a :class:`Ruling` or passes (``None``) to the next. :func:`decide` returns the first
ruling. The exit status alone never makes a run pass.

Example:
    >>> [rule.__name__ for rule in RULES][:3]
    ['report_overflowed', 'malformed_record', 'workspace_tampered']
    >>> decide(Evidence((), exit_code=0, expected=(), canary_pass="c::p",
    ...                 canary_fail="c::f")).status
    'tampering'
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from ek.base import ReadOnlyDict

__all__ = [
    "RULES",
    "VERDICT_STATUSES",
    "Evidence",
    "HiddenTestVerdict",
    "Rule",
    "Ruling",
    "decide",
    "decide_lines",
    "sign",
]

#: Every status a :class:`HiddenTestVerdict` can carry; only ``"passed"`` is a success.
VERDICT_STATUSES = ("passed", "failed", "timeout", "tampering", "collection_error", "error")

_ABORTED = {2: "interrupted", 3: "internal error", 4: "usage error"}


@dataclass(frozen=True)
class HiddenTestVerdict:
    """The outcome of one hidden-test run; truthy exactly when it passed.

    A checker must return a bool for ``TaskSuccessMetric``; this object *is* one for ``if`` and
    ``bool()`` (``__bool__`` is :attr:`passed`) while keeping the reason.

    Args:
        passed: True only when every expected hidden test ran and passed and the canaries
            behaved.
        status: One of :data:`VERDICT_STATUSES`.
        reason: A human-readable explanation.
        failed_tests: Node ids (relative to the tests root) that failed, errored, were skipped
            or did not run.
        duration: Wall-clock seconds of the whole check.
        output: The bounded tail of pytest's output (for a human; never parsed).
        detail: A machine-readable breakdown (per-test outcomes, missing tests, collection
            errors, exit code, skipped workspace paths).

    Example:
        >>> v = HiddenTestVerdict(True, "passed", "all 2 hidden tests passed")
        >>> bool(v), v.to_dict()["status"]
        (True, 'passed')
    """

    passed: bool
    status: str
    reason: str
    failed_tests: tuple[str, ...] = ()
    duration: float = 0.0
    output: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.passed, bool):
            raise TypeError(f"passed must be a bool, got {self.passed!r:.100}")
        if self.status not in VERDICT_STATUSES:
            raise ValueError(f"status must be one of {VERDICT_STATUSES}, got {self.status!r}")
        if self.passed != (self.status == "passed"):
            raise ValueError(
                f"passed={self.passed} contradicts status={self.status!r}; "
                "passed must be True exactly when status is 'passed'"
            )
        if not isinstance(self.reason, str) or not self.reason:
            raise ValueError(f"reason must be a non-empty str, got {self.reason!r:.100}")
        object.__setattr__(self, "failed_tests", tuple(self.failed_tests))
        object.__setattr__(self, "detail", ReadOnlyDict(self.detail))

    def __bool__(self) -> bool:
        return self.passed

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (what a harness stores in a score's detail)."""
        return {
            "passed": self.passed,
            "status": self.status,
            "reason": self.reason,
            "failed_tests": list(self.failed_tests),
            "duration": self.duration,
            "detail": json.loads(json.dumps(dict(self.detail), default=str)),
        }


@dataclass(frozen=True)
class Ruling:
    """A decision before it becomes a :class:`HiddenTestVerdict` (no duration, no output yet).

    Example:
        >>> Ruling("failed", "no hidden test ran").as_tuple()
        ('failed', 'no hidden test ran', (), {})
    """

    status: str
    reason: str
    failed_tests: tuple[str, ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)

    def as_tuple(self) -> tuple[str, str, tuple[str, ...], dict[str, Any]]:
        """``(status, reason, failed_tests, detail)`` with a fresh, mutable detail dict."""
        return self.status, self.reason, self.failed_tests, dict(self.detail)


# --------------------------------------------------------------------------- the evidence
def sign(key: bytes, rec: Mapping[str, Any], seq: int) -> bytes:
    """One report line as the runner writes it: ``<hex HMAC-SHA256> <json with "seq">``.

    Example:
        >>> line = sign(b"k", {"event": "start"}, 0)
        >>> line.split(b" ", 1)[1]
        b'{"event": "start", "seq": 0}'
    """
    body = json.dumps({**rec, "seq": seq}).encode("utf-8")
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode() + b" " + body


def _verify(raw: bytes, key: bytes, seq: int) -> tuple[Any, str | None]:
    """The record of one signed line, or why it is not one."""
    mac, _, body = raw.partition(b" ")
    want = hmac.new(key, body, hashlib.sha256).hexdigest().encode()
    if not hmac.compare_digest(mac, want):
        return (
            None,
            f"report line {raw[:80]!r} has a bad signature: something else wrote to the report",
        )
    try:
        rec = json.loads(body)
    except ValueError:
        return None, f"malformed report record {raw[:80]!r}"
    if not isinstance(rec, dict) or not isinstance(rec.get("event"), str):
        return None, f"malformed report record {raw[:80]!r}"
    if rec.get("seq") != seq:
        return None, f"report record {seq} is out of sequence (replayed or dropped records)"
    return rec, None


def _parse(lines: Iterable[bytes], key: bytes) -> tuple[tuple[dict[str, Any], ...], str | None]:
    """The records up to the first bad line, and why that line is bad (or None)."""
    records: list[dict[str, Any]] = []
    for raw in lines:
        rec, problem = _verify(raw, key, len(records))
        if problem is not None:
            return tuple(records), problem
        records.append(rec)
    return tuple(records), None


def _combine(phases: Mapping[str, str], xfail: bool) -> str:
    """One test's outcome from its setup / call / teardown outcomes."""
    if "failed" in phases.values():
        return "failed"
    if phases.get("setup") == "skipped" or phases.get("call") == "skipped":
        return "xfailed" if xfail else "skipped"
    if phases.get("call") == "passed":
        return "passed"
    return "incomplete"


def _base_key(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


@dataclass(frozen=True)
class _Tally:
    """The test and collection records of one session, grouped by node id."""

    phases: Mapping[str, Mapping[str, str]]
    xfail: frozenset[str]
    longrepr: Mapping[str, str]
    collect_errors: Mapping[str, str]
    collect_skips: tuple[str, ...]
    duplicate: str | None  # the first phase reported twice, as a reason


def _tally(records: Iterable[Mapping[str, Any]]) -> _Tally:
    phases: dict[str, dict[str, str]] = {}
    xfail: set[str] = set()
    longrepr: dict[str, str] = {}
    collect_errors: dict[str, str] = {}
    collect_skips: list[str] = []
    duplicate = None
    for r in records:
        if r["event"] == "test":
            nid, when = str(r.get("nodeid")), str(r.get("when"))
            if when in phases.setdefault(nid, {}):
                duplicate = duplicate or f"duplicate report for {nid!r} ({when})"
                continue
            phases[nid][when] = str(r.get("outcome"))
            if r.get("xfail"):
                xfail.add(nid)
            if "longrepr" in r:
                longrepr.setdefault(nid, str(r["longrepr"]))
        elif r["event"] == "collect_error":
            collect_errors[str(r.get("nodeid"))] = str(r.get("longrepr", ""))
        elif r["event"] == "collect_skip":
            collect_skips.append(str(r.get("nodeid")))
    return _Tally(
        phases, frozenset(xfail), longrepr, collect_errors, tuple(collect_skips), duplicate
    )


@dataclass(frozen=True)
class Evidence:
    """What one hidden-test run produced: the reporter's records and what they must show.

    The derived views (``records``, ``events``, ``outcomes`` ...) are computed on first use. A
    rule may rely on every earlier rule having passed: e.g. ``outcomes`` is meaningful only once
    the report is known to be well formed, complete and in order.

    Args:
        lines: The report, one JSON record a line (blank lines removed).
        exit_code: The test process's exit status (``None`` when it was killed).
        expected: Node ids (parameters stripped) that must be present and pass.
        canary_pass: Node id of the canary test that must pass.
        canary_fail: Node id of the canary test that must fail.
        overflow: True when the report exceeded its size limit.
        key: The run's HMAC key (every line must be signed with it).

    Example:
        >>> ev = Evidence((sign(b"k", {"event": "start"}, 0), b"00 {not signed"), exit_code=1,
        ...               expected=(), canary_pass="c::p", canary_fail="c::f", key=b"k")
        >>> ev.events, ev.malformed is not None
        (('start',), True)
    """

    lines: tuple[bytes, ...]
    exit_code: int | None
    expected: tuple[str, ...]
    canary_pass: str
    canary_fail: str
    overflow: bool = False
    key: bytes = b""

    @cached_property
    def _parsed(self) -> tuple[tuple[dict[str, Any], ...], str | None]:
        return _parse(self.lines, self.key)

    @property
    def records(self) -> tuple[dict[str, Any], ...]:
        """The well-formed records before the first malformed line."""
        return self._parsed[0]

    @property
    def malformed(self) -> str | None:
        """Why the first malformed line is malformed, or None when every line is a record."""
        return self._parsed[1]

    @cached_property
    def events(self) -> tuple[str, ...]:
        """The event name of every record, in order."""
        return tuple(r["event"] for r in self.records)

    @cached_property
    def tally(self) -> _Tally:
        """The test and collection records grouped by node id."""
        return _tally(self.records)

    @cached_property
    def outcomes(self) -> dict[str, str]:
        """Each reported test's combined outcome (``passed``, ``failed``, ``skipped`` ...)."""
        t = self.tally
        return {nid: _combine(ph, nid in t.xfail) for nid, ph in t.phases.items()}

    @property
    def sandbox(self) -> Any:
        """What the workspace process reported about its sandbox (None: it never started)."""
        return next((r.get("status") for r in self.records if r["event"] == "sandbox"), None)

    @property
    def loaded(self) -> tuple[str, ...]:
        """The module files the trusted test process loaded (from its ``exit`` record)."""
        files = next((r.get("loaded") for r in self.records if r["event"] == "exit"), None)
        return tuple(f for f in files if isinstance(f, str)) if isinstance(files, list) else ()

    @property
    def exit_status(self) -> Any:
        """pytest's exit status as the session-finish record reports it (None without one)."""
        return next((r.get("exitstatus") for r in self.records if r["event"] == "finish"), None)

    @property
    def canaries(self) -> dict[str, str | None]:
        """The canaries' outcomes (``None``: did not run), as the verdict's detail shows them."""
        return {
            "must_pass": self.outcomes.get(self.canary_pass),
            "must_fail": self.outcomes.get(self.canary_fail),
        }

    @cached_property
    def hidden(self) -> dict[str, str]:
        """The outcomes of every reported test that is not a canary."""
        skip = (self.canary_pass, self.canary_fail)
        return {nid: o for nid, o in self.outcomes.items() if nid not in skip}

    @cached_property
    def missing(self) -> list[str]:
        """Expected tests with no report (a parametrised id counts for its base name)."""
        present = {_base_key(n) for n in self.hidden}
        return [k for k in self.expected if _base_key(k) not in present]

    @cached_property
    def failed(self) -> list[str]:
        """Reported hidden tests that did not pass, sorted."""
        return sorted(n for n, o in self.hidden.items() if o != "passed")

    @property
    def not_passed(self) -> tuple[str, ...]:
        """Failed then missing tests: the verdict's ``failed_tests``."""
        return tuple(self.failed + self.missing)

    def breakdown(self) -> dict[str, Any]:
        """The full machine-readable detail of a session that ran to its end."""
        t = self.tally
        return {
            "canaries": self.canaries,
            "outcomes": dict(sorted(self.hidden.items())),
            "missing": self.missing,
            "collection_errors": sorted(t.collect_errors),
            "collection_skipped": sorted(t.collect_skips),
            "longrepr": {k: t.longrepr[k] for k in self.failed if k in t.longrepr},
        }


# --------------------------------------------------------------------------- the rules
Rule = Callable[[Evidence], Ruling | None]


def report_overflowed(ev: Evidence) -> Ruling | None:
    """The report exceeded its size limit: ``error``."""
    if ev.overflow:
        return Ruling("error", "the test report exceeded its size limit")
    return None


def malformed_record(ev: Evidence) -> Ruling | None:
    """A line of the report is not a record of the reporter: ``tampering``."""
    if ev.malformed is not None:
        return Ruling("tampering", ev.malformed)
    return None


def workspace_tampered(ev: Evidence) -> Ruling | None:
    """The runner saw the workspace process do what no honest program does: ``tampering``.

    (A malformed message on its pipe, or status 0 in the middle of a request: ``os._exit``.)
    """
    tamper = [r for r in ev.records if r["event"] == "tamper"]
    if tamper:
        return Ruling("tampering", f"the workspace process misbehaved: {tamper[0].get('reason')}")
    return None


def workspace_over_limit(ev: Evidence) -> Ruling | None:
    """The workspace process sent more than the trusted process accepts: ``error``."""
    over = [r for r in ev.records if r["event"] == "limit"]
    if over:
        return Ruling("error", f"stopped the workspace process: {over[0].get('reason')}")
    return None


def boot_failed(ev: Evidence) -> Ruling | None:
    """The runner could not start (pytest missing: ``error``; tests changed: ``tampering``)."""
    boot = [r for r in ev.records if r["event"] == "boot_error"]
    if boot and boot[0].get("tampered") is True:
        return Ruling("tampering", str(boot[0].get("error")))
    if boot:
        return Ruling("error", f"the test interpreter cannot run pytest: {boot[0].get('error')}")
    return None


def session_repeated(ev: Evidence) -> Ruling | None:
    """More than one session start, finish or exit (forged or re-executed): ``tampering``."""
    if any(ev.events.count(e) > 1 for e in ("start", "finish", "exit")):
        return Ruling(
            "tampering",
            "the report holds more than one session start/finish (forged records or a re-executed process)",
        )
    return None


def session_incomplete(ev: Evidence) -> Ruling | None:
    """The process left before the session started or finished.

    With exit status 0 that is ``tampering`` (``os._exit(0)`` from the code under test),
    otherwise ``error``.
    """
    if "start" in ev.events and "finish" in ev.events:
        return None
    when = "started" if "start" not in ev.events else "finished"
    if ev.exit_code == 0:
        return Ruling(
            "tampering",
            f"the test process exited with status 0 before the test session {when} "
            "(os._exit / sys.exit from the code under test?)",
        )
    return Ruling(
        "error",
        f"the test process died before the test session {when} (exit code {ev.exit_code})",
    )


def records_out_of_order(ev: Evidence) -> Ruling | None:
    """Anything but ``start ... finish [exit]``: ``tampering``."""
    events, n_exit = ev.events, ev.events.count("exit")
    if (
        events[0] != "start"
        or events.index("finish") < len(events) - 1 - n_exit
        or (n_exit and events[-1] != "exit")
    ):
        return Ruling(
            "tampering", "report records out of order (records after the session finished?)"
        )
    return None


def phase_duplicated(ev: Evidence) -> Ruling | None:
    """A test phase reported twice: ``tampering``."""
    if ev.tally.duplicate is not None:
        return Ruling("tampering", ev.tally.duplicate)
    return None


def must_fail_canary_passed(ev: Evidence) -> Ruling | None:
    """The canary that must fail ran and did not fail in its call: ``tampering``."""
    cf = ev.canaries["must_fail"]
    if cf is not None and (
        cf != "failed" or ev.tally.phases[ev.canary_fail].get("call") != "failed"
    ):
        return Ruling(
            "tampering",
            f"the canary test that must fail was reported {cf!r}: test outcomes are being rewritten",
            detail={"canaries": ev.canaries},
        )
    return None


def must_pass_canary_failed(ev: Evidence) -> Ruling | None:
    """The canary that must pass ran and did not pass: ``tampering``."""
    cp = ev.canaries["must_pass"]
    if cp is not None and cp != "passed":
        return Ruling(
            "tampering",
            f"the canary test that must pass was reported {cp!r}: the test session was manipulated",
            detail={"canaries": ev.canaries},
        )
    return None


def session_aborted(ev: Evidence) -> Ruling | None:
    """pytest aborted the session (interrupted, internal or usage error): ``error``."""
    code = ev.exit_status
    if code in _ABORTED:
        return Ruling(
            "error",
            f"pytest aborted the session ({_ABORTED[code]}, exit status {code})",
            detail={"canaries": ev.canaries, "collection_errors": sorted(ev.tally.collect_errors)},
        )
    return None


def canary_missing(ev: Evidence) -> Ruling | None:
    """A canary did not run (deselected): ``tampering``."""
    if None in ev.canaries.values():
        return Ruling(
            "tampering",
            "a canary test did not run: tests were deselected or the run was manipulated",
            detail={"canaries": ev.canaries},
        )
    return None


def canary_module_uncollected(ev: Evidence) -> Ruling | None:
    """The canary module reported a collection error: ``tampering``."""
    if ev.canary_pass.split("::", 1)[0] in ev.tally.collect_errors:
        return Ruling(
            "tampering",
            "the canary module failed to collect",
            detail={"canaries": ev.canaries},
        )
    return None


def collection_failed(ev: Evidence) -> Ruling | None:
    """A hidden test module failed to collect: ``collection_error``."""
    errors = ev.tally.collect_errors
    if not errors:
        return None
    first = min(errors)
    msg = errors[first].strip().splitlines()
    bad = ev.not_passed
    return Ruling(
        "collection_error",
        f"{len(errors)} hidden test module(s) failed to collect ({first}: "
        f"{msg[-1] if msg else 'error'}); {len(bad)} expected test(s) did not pass",
        bad,
        ev.breakdown(),
    )


def tests_failed(ev: Evidence) -> Ruling | None:
    """An expected test failed, was skipped or xfailed, or did not run: ``failed``."""
    bad = ev.not_passed
    if not bad:
        return None
    counts: dict[str, int] = {}
    for n in ev.failed:
        counts[ev.hidden[n]] = counts.get(ev.hidden[n], 0) + 1
    parts = [f"{v} {k}" for k, v in sorted(counts.items())]
    if ev.missing:
        parts.append(f"{len(ev.missing)} not run")
    return Ruling(
        "failed",
        f"{len(bad)} hidden test(s) did not pass ({', '.join(parts)}): {', '.join(bad[:5])}",
        bad,
        ev.breakdown(),
    )


def no_test_ran(ev: Evidence) -> Ruling | None:
    """No hidden test was reported at all: ``failed``."""
    if not ev.hidden:
        return Ruling("failed", "no hidden test ran", detail=ev.breakdown())
    return None


def all_passed(ev: Evidence) -> Ruling:
    """None of the above: ``passed``. The last rule; it always decides."""
    return Ruling("passed", f"all {len(ev.hidden)} hidden test(s) passed", detail=ev.breakdown())


#: The verdict rules, in the order they are asked (``docs/verifier_isolation.md`` has the table).
RULES: tuple[Rule, ...] = (
    report_overflowed,
    malformed_record,
    workspace_tampered,
    workspace_over_limit,
    boot_failed,
    session_repeated,
    session_incomplete,
    records_out_of_order,
    phase_duplicated,
    must_fail_canary_passed,
    must_pass_canary_failed,
    session_aborted,
    canary_missing,
    canary_module_uncollected,
    collection_failed,
    tests_failed,
    no_test_ran,
    all_passed,
)


def decide(evidence: Evidence) -> Ruling:
    """The ruling of the first rule in :data:`RULES` that decides; its detail leads with the exit code.

    Never looks at the exit code for success.

    Example:
        >>> ev = Evidence((sign(b"k", {"event": "boot_error", "error": "No module named pytest"}, 0),),
        ...               exit_code=3, expected=("t.py::test_a",), canary_pass="c::p",
        ...               canary_fail="c::f", key=b"k")
        >>> r = decide(ev)
        >>> r.status, r.reason, dict(r.detail)
        ('error', 'the test interpreter cannot run pytest: No module named pytest', {'exit_code': 3})
    """
    for rule in RULES:
        ruling = rule(evidence)
        if ruling is not None:
            return replace(ruling, detail={"exit_code": evidence.exit_code, **ruling.detail})
    raise RuntimeError(f"no verdict rule decided; the last rule, {RULES[-1].__name__}, must")


def decide_lines(
    lines: Iterable[bytes],
    *,
    exit_code: int | None,
    expected: Iterable[str],
    canary_pass: str,
    canary_fail: str,
    overflow: bool = False,
    key: bytes = b"",
) -> tuple[str, str, tuple[str, ...], dict[str, Any]]:
    """Decide a verdict from the reporter's signed lines: :func:`decide` on the :class:`Evidence`.

    Returns ``(status, reason, failed_tests, detail)``.

    Example:
        >>> decide_lines([], exit_code=0, expected=(), canary_pass="c::p", canary_fail="c::f",
        ...              overflow=True)
        ('error', 'the test report exceeded its size limit', (), {'exit_code': 0})
    """
    evidence = Evidence(
        tuple(lines), exit_code, tuple(expected), canary_pass, canary_fail, overflow, key
    )
    return decide(evidence).as_tuple()
