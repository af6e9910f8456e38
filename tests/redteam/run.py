"""Run every red-team attack against a naive checker and against ``hidden_tests``; print a table.

Usage (from the repository root)::

    .venv/bin/python tests/redteam/run.py

The naive checker is what many harnesses do: copy the hidden tests into ``<workspace>/tests``,
run ``python -m pytest -q`` in the workspace with the inherited environment, and call exit
status 0 a success.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ek.agents.base import Episode
from ek.agents.verifier import HiddenTestVerdict, hidden_tests
from ek.agents.verifier import _process as process
from redteam.attacks import ATTACKS, HIDDEN_TESTS, WRONG, Attack, materialise

__all__ = [
    "Row",
    "format_table",
    "landlock_off",
    "naive_check",
    "run_all",
    "run_attack",
    "throwaway_python",
    "write_hidden",
]

# Heavy plugins installed in the project's venv that a naive run would otherwise import too.
_HEAVY = (
    "deepeval", "langsmith_plugin", "rerunfailures", "repeat", "hypothesispytest", "xdist",
    "xdist.looponfail", "anyio", "asyncio", "platformdirs",
)  # fmt: skip


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    attack: str
    summary: str
    naive_fooled: bool
    naive_exit: int | None
    verdict: HiddenTestVerdict
    earlier: tuple[HiddenTestVerdict, ...] = ()
    naive_ran: bool = True


def write_hidden(folder: Path, tests: Mapping[str, str] = HIDDEN_TESTS) -> Path:
    """Write the hidden tests into ``folder`` (created) and return it."""
    folder.mkdir(parents=True)
    for rel, text in tests.items():
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def throwaway_python(folder: Path) -> Path:
    """A throwaway virtual environment whose site-packages also sees this one's (for pytest).

    Attacks that write into the test interpreter's site-packages get this one, never the
    project's environment.
    """
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)],
        check=True, stdin=subprocess.DEVNULL, capture_output=True,
    )  # fmt: skip
    (site_dir,) = folder.glob("lib/python*/site-packages")
    here = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (site_dir / "ek_redteam_parent.pth").write_text("\n".join(here) + "\n", encoding="utf-8")
    return folder / "bin" / "python"


def naive_check(
    hidden: Path, ws: Path, env: Mapping[str, str], timeout: float = 60.0
) -> int | None:
    """The naive checker: returns pytest's exit status (0 = "success"), ``None`` on timeout."""
    tests = ws / "tests"
    tests.mkdir(exist_ok=True)
    for f in sorted(hidden.iterdir()):
        if f.is_file():
            (tests / f.name).write_bytes(f.read_bytes())
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    for p in _HEAVY:
        cmd += ["-p", f"no:{p}"]
    try:
        r = subprocess.run(
            cmd, cwd=ws, env={**base, **env}, timeout=timeout,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    return r.returncode


@contextlib.contextmanager
def landlock_off() -> Iterator[None]:
    """Run the workspace process as on a kernel without Landlock (its source text, edited),
    to show what holds without it."""
    original = process.source_of

    def without(module: str) -> str:
        src = original(module)
        if module == "_child":
            src = src.replace('status["landlock"] = _landlock(libc, cfg)', 'status["landlock"] = 0')
        return src

    process.source_of = without  # type: ignore[assignment]
    try:
        yield
    finally:
        process.source_of = original  # type: ignore[assignment]


@contextlib.contextmanager
def _leaked_env(env: Mapping[str, str]) -> Iterator[None]:
    """Put the agent's variables into this (the harness's) process environment for a while."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _ek_check(attack: Attack, scratch: Path, timeout: float) -> list[HiddenTestVerdict]:
    """``hidden_tests`` on the attack, once per trial (fresh workspace each time)."""
    hidden = write_hidden(scratch / "hidden", attack.hidden_tests)
    python = throwaway_python(scratch / "venv") if attack.throwaway_python else None
    verdicts = []
    for trial in range(attack.trials):
        ws = scratch / f"trial{trial}" / "ws"
        # the later trials are a plain wrong solution: only what trial 1 left behind attacks them
        env = materialise(
            attack if trial == 0 else replace(attack, files={"solution.py": WRONG}), ws, hidden
        )
        with _leaked_env(env) if env else contextlib.nullcontext():
            if attack.via_episode:  # the harness relies on the checker's default workspace
                check = hidden_tests(hidden, timeout=timeout, python=python)
                episode = Episode("t", final_state={"workspace": str(ws.parent / "correct")})
                try:
                    verdicts.append(check(episode, None))
                except ValueError as e:  # refused: the workspace must be named by the caller
                    verdicts.append(HiddenTestVerdict(False, "error", f"refused: {e}"))
            else:
                check = hidden_tests(hidden, workspace=ws, timeout=timeout, python=python)
                verdicts.append(check(Episode("t"), None))
    return verdicts


def run_attack(attack: Attack, scratch: Path, timeout: float = 60.0) -> Row:
    """Run one attack: the naive checker and ``hidden_tests`` each on a fresh copy."""
    rc: int | None = -1
    if attack.naive:
        hidden_n = write_hidden(scratch / "naive" / "hidden", attack.hidden_tests)
        env_n = materialise(attack, scratch / "naive" / "ws", hidden_n)
        rc = naive_check(hidden_n, scratch / "naive" / "ws", env_n, timeout)
    verdicts = _ek_check(attack, scratch / "ek", timeout)
    return Row(
        attack.name, attack.summary, rc == 0, rc, verdicts[-1], tuple(verdicts[:-1]), attack.naive
    )


def run_all(attacks: Sequence[Attack] = ATTACKS, workers: int = 2) -> list[Row]:
    """Run ``attacks`` in parallel; those that leak environment variables or span several
    checks (a daemon of one check could reach another attack's check) run alone."""
    root = Path(tempfile.mkdtemp(prefix="redteam-"))
    try:
        plain = [a for a in attacks if not a.env and a.trials == 1]
        leaky = [a for a in attacks if a.env or a.trials > 1]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            rows = dict(
                zip(
                    [a.name for a in plain], pool.map(lambda a: run_attack(a, root / a.name), plain)
                )
            )
        for a in leaky:
            rows[a.name] = run_attack(a, root / a.name)
        return [rows[a.name] for a in attacks]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def format_table(rows: Sequence[Row]) -> str:
    """A Markdown table: attack, naive checker fooled?, ek checker verdict."""
    out = [
        "| # | attack | what it tries | naive checker fooled? | ek `hidden_tests` verdict |",
        "|---|---|---|---|---|",
    ]
    for i, r in enumerate(rows, 1):
        naive = f"**yes** (exit {r.naive_exit})" if r.naive_fooled else f"no (exit {r.naive_exit})"
        if not r.naive_ran:
            naive = "n/a"
        reason = r.verdict.reason.replace("|", "/")
        if len(reason) > 90:
            reason = reason[:87] + "..."
        out.append(
            f"| {i} | `{r.attack}` | {r.summary} | {naive} | `{r.verdict.status}`: {reason} |"
        )
    fooled = sum(r.naive_fooled for r in rows)
    beaten = sum(r.verdict.passed for r in rows)
    out.append("")
    out.append(
        f"{len(rows)} attacks; the naive checker was fooled by {fooled}; "
        f"ek's hidden_tests was fooled by {beaten}."
    )
    return "\n".join(out)


if __name__ == "__main__":
    print(format_table(run_all()))
